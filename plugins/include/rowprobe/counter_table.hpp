// Counter tables: every statistic rowprobe reports is one line of an X-macro table, and
// everything that shows a statistic is generated from those lines. One table per struct:
//
//   ROWPROBE_CACHE_COUNTERS   CacheStats   the flow table's (rowprobe/cache_counters.hpp)
//   ROWPROBE_INPUT_COUNTERS   InputStats   the input plugin's        (rowprobe/stats_counters.hpp)
//   ROWPROBE_WORKER_COUNTERS  WorkerStats  a queue's, holding the three above
//   ROWPROBE_EXPORT_COUNTERS  ExportStats  the export thread's
//   ROWPROBE_OUTPUT_COUNTERS  OutputStats  the output plugin's
//
// Generated from them: the structs' fields (rowprobe/stats.hpp), the merge of the queues into
// the total, the --stats-json objects, the Prometheus families and the stderr table's columns
// (core/counters.hpp, core/stats.cpp, core/metrics.cpp). Checked against them by
// tests/unit/core/counters_test.cpp: docs/statistics.md names exactly the tables' JSON keys,
// docs/operations.md exactly the metrics. Adding a counter is one line in a table, its row in
// docs/statistics.md and docs/operations.md, and the code that counts it.
//
//   X(src, member, json, merge, kind, metric, label, help, text, column)
//     src     COUNT      a std::uint64_t field
//             REASONS    an array of counters per EndReason (index = IPFIX flowEndReason)
//             ANOMALIES  an AnomalyCounters field (one counter per named Anomaly)
//             INPUT      an InputStats field: a nested table (JSON object, its own metrics)
//             CACHE      a CacheStats field: a nested table
//             DERIVED    no field: `member` is an expression on the struct (a member function,
//                        or a field shown a second way)
//     member  the field, or for DERIVED the expression after `stats.`
//     json    key in the JSON object; "group.key" nests under "group"; "" not in JSON
//     merge   how queues combine into the total: Sum, Max, Latest (from the queue with the
//             latest flood alarm), Fields (a nested table: each field by its own rule), None
//             (DERIVED: computed from the merged fields)
//     kind    Counter, Gauge, Nanoseconds (JSON: ns; metric: seconds), Iso (JSON: an ISO-8601
//             string of a packet time, "" for 0; no metric), Group (a nested table),
//             Internal (neither JSON nor metric)
//     metric  Prometheus sample name, "" for none; entries sharing a name form one family
//             told apart by `label` (REASONS, ANOMALIES: the label's name, one sample per
//             reason); a family is a counter when its kind is Counter or its name ends in _total
//     help    the metric's HELP text (the first entry's for a family), ending with the
//             statistic's JSON path in parentheses, "(cache.hits)." (the metrics end-to-end
//             test pairs metrics and statistics by it)
//     text    heading of the stderr table's column, "" for none
//     column  that column's format: None, Delta (the difference over the -t interval, 12
//             wide), Value (10 wide), Rate (difference / interval seconds / 1e6, 10 wide),
//             Percent (value × 100, 8 wide), Decimal (one decimal, 8 wide)
//
// Thread ownership: constants. Costs: none at run time beyond the code generated from them.
#pragma once

namespace rowprobe {

/// How the statistics of several queues combine into the total.
enum class CounterMerge { Sum, Max, Latest, Fields, None };
/// Where and how a counter is shown.
enum class CounterKind { Counter, Gauge, Nanoseconds, Iso, Group, Internal };
/// The format of a counter's column in the stderr statistics table.
enum class TextColumn { None, Delta, Value, Rate, Percent, Decimal };

}  // namespace rowprobe
