// The flow-table counters as one table: every CacheStats field, how queues merge it, where it
// appears (the --stats-json key, the Prometheus metric) and what it means. The struct
// (rowprobe/stats.hpp), the merge of the queues' statistics and the JSON document
// (core/stats.cpp), the Prometheus metrics (core/metrics.cpp) are generated from it, and a test
// (tests/unit/core/counters_doc_test.cpp) checks that docs/statistics.md lists exactly its JSON
// keys. Adding a counter is one line here, one in docs/statistics.md, and the code that counts.
//
//   X(src, member, json, merge, kind, metric, label, help)
//     src     COUNT    a std::uint64_t field of CacheStats
//             REASONS  an array of counters per EndReason (index = IPFIX flowEndReason)
//             DERIVED  no field: `member` is an expression on the stats (a member function,
//                      or a field shown a second way)
//     member  the CacheStats field, or for DERIVED the expression after `stats.`
//     json    key in the JSON "cache" object; "group.key" nests under "group"; "" not in JSON
//     merge   Sum, Max, Latest (taken from the queue with the latest flood alarm), None
//     kind    Counter, Gauge, Nanoseconds (JSON: ns; metric: a gauge in seconds), Iso (JSON: an
//             ISO-8601 string of a packet time, "" for 0; no metric), Internal (neither)
//     metric  Prometheus sample name, "" for none; entries sharing a name form one family
//             told apart by `label` (REASONS: label is the label's name, one sample per reason)
//     help    the metric's HELP text (the first entry's for a family)
//
// Thread ownership: constants. Costs: none at run time beyond the code generated from it.
#pragma once

// clang-format off
#define ROWPROBE_CACHE_COUNTERS(X)                                                               \
    X(COUNT, hits, "hits", Sum, Counter, "rowprobe_cache_hits_total", "",                        \
      "Packets that found their flow (cache.hits).")                                             \
    X(COUNT, missFree, "miss_free", Sum, Counter, "rowprobe_cache_misses_total", "kind=\"free\"", \
      "New flows by where they were placed: free slot, evicting a live flow, or an expired "     \
      "flow's slot (cache.miss_free, miss_evict, miss_reclaim).")                                \
    X(COUNT, missEvict, "miss_evict", Sum, Counter, "rowprobe_cache_misses_total",               \
      "kind=\"evict\"", "New flows that evicted a live flow (cache.miss_evict).")                \
    X(COUNT, missReclaim, "miss_reclaim", Sum, Counter, "rowprobe_cache_misses_total",           \
      "kind=\"reclaim\"", "New flows that took the slot of an expired flow (cache.miss_reclaim).") \
    X(COUNT, flowsCreated, "flows_created", Sum, Counter, "rowprobe_cache_flows_created_total", "", \
      "Flows created (cache.flows_created).")                                                    \
    X(REASONS, exported, "exported", Sum, Counter, "rowprobe_flows_exported_total", "reason",    \
      "Flows exported by end reason (cache.exported.<reason>).")                                 \
    X(DERIVED, exportedTotal(), "exported_total", None, Counter, "", "",                         \
      "Flows exported, all end reasons (cache.exported_total).")                                 \
    X(COUNT, exportedBySweep, "exported_by_sweep", Sum, Counter,                                 \
      "rowprobe_cache_exported_by_sweep_total", "",                                              \
      "Flows exported by the incremental expiry sweep (cache.exported_by_sweep).")               \
    X(COUNT, exportedAtEnd, "exported_at_end", Sum, Counter, "rowprobe_cache_exported_at_end_total", \
      "", "Flows exported by the final flush (cache.exported_at_end).")                          \
    X(COUNT, positionSum, "", Sum, Internal, "", "",                                             \
      "Sum of the 1-based hit positions (for the mean).")                                        \
    X(COUNT, positionSqSum, "", Sum, Internal, "", "",                                           \
      "Sum of the squared 1-based hit positions (for the variance).")                            \
    X(DERIVED, hitPositionMean(), "hit_position_mean", None, Gauge,                              \
      "rowprobe_cache_hit_position_mean", "",                                                    \
      "Mean 1-based position of the hit flow in its row's policy order (cache.hit_position_mean).") \
    X(DERIVED, hitPositionVariance(), "hit_position_variance", None, Gauge,                      \
      "rowprobe_cache_hit_position_variance", "",                                                \
      "Variance of the hit position (cache.hit_position_variance).")                             \
    X(COUNT, flowsInCache, "flows_in_cache", Sum, Gauge, "rowprobe_cache_flows", "",             \
      "Flows in the cache (cache.flows_in_cache).")                                              \
    X(COUNT, capacity, "capacity", Sum, Gauge, "rowprobe_cache_capacity", "",                    \
      "Flow records the cache can hold (cache.capacity).")                                       \
    X(DERIVED, loadFactor(), "load_factor", None, Gauge, "rowprobe_cache_load_factor", "",       \
      "Flows in the cache / capacity (cache.load_factor).")                                      \
    X(COUNT, fragmentsFilled, "fragments_filled", Sum, Counter,                                  \
      "rowprobe_cache_fragments_filled_total", "",                                               \
      "Non-first fragments that got their ports from the fragment cache (cache.fragments_filled).") \
    X(COUNT, fragmentsNoPorts, "fragments_no_ports", Sum, Counter,                               \
      "rowprobe_cache_fragments_no_ports_total", "",                                             \
      "Non-first fragments without a known first fragment (cache.fragments_no_ports).")          \
    X(COUNT, floodIntervals, "flood.intervals", Max, Counter, "rowprobe_flood_intervals_total", "", \
      "Intervals the flood detector evaluated (cache.flood.intervals).")                         \
    X(COUNT, floodAlarms, "flood.alarms", Sum, Counter, "rowprobe_flood_alarms_total", "",       \
      "Floods detected (cache.flood.alarms).")                                                   \
    X(COUNT, floodActive, "flood.active", Sum, Gauge, "rowprobe_flood_active", "",               \
      "1 while a flood is detected (cache.flood.active; the total: queues in a flood).")         \
    X(DERIVED, floodLastAlarm, "flood.last_alarm", None, Iso, "", "",                            \
      "Packet time of the latest flood alarm, ISO 8601 (cache.flood.last_alarm).")               \
    X(COUNT, floodLastAlarm, "flood.last_alarm_ns", Latest, Nanoseconds,                            \
      "rowprobe_flood_last_alarm_timestamp_seconds", "",                                         \
      "Packet time of the latest flood alarm, 0 if none (cache.flood.last_alarm_ns / 1e9).")     \
    X(COUNT, floodLastCount, "flood.last_count", Latest, Gauge, "rowprobe_flood_last_alarm_flows", \
      "", "New flows in the interval that raised the latest alarm (cache.flood.last_count).")    \
    X(COUNT, floodBaseline, "flood.baseline", Latest, Gauge, "rowprobe_flood_baseline", "",      \
      "Expected new flows per interval at the latest alarm (cache.flood.baseline).")             \
    X(COUNT, admissionDeferred, "admission_deferred", Sum, Counter,                              \
      "rowprobe_admission_deferred_total", "",                                                   \
      "First packets of new flows not admitted in flood mode (cache.admission_deferred).")       \
    X(COUNT, admissionEvicted, "admission_evicted", Sum, Counter,                                \
      "rowprobe_admission_evicted_total", "",                                                    \
      "Flows admitted during a flood evicted before others (cache.admission_evicted).")          \
    X(COUNT, extPoolExhausted, "ext_pool_exhausted", Sum, Counter,                               \
      "rowprobe_plugin_ext_pool_exhausted_total", "",                                            \
      "Process-plugin records refused by a full per-worker pool; the flow was exported without " \
      "them (cache.ext_pool_exhausted).")                                                        \
    X(COUNT, pluginDataDropped, "plugin_data_dropped", Sum, Counter,                             \
      "rowprobe_plugin_data_dropped_total", "",                                                  \
      "Process-plugin instances beyond the per-record limit, not exported "                      \
      "(cache.plugin_data_dropped).")                                                            \
    X(COUNT, pluginFlushes, "plugin_flushes", Sum, Counter, "rowprobe_plugin_flushes_total", "",  \
      "Flows ended by a process plugin: flush or flush-reinsert (cache.plugin_flushes).")                                                                    \
    X(COUNT, pluginHeapAllocations, "plugin_heap.allocations", Sum, Counter,                     \
      "rowprobe_plugin_heap_allocations_total", "",                                              \
      "Heap allocations made by process plugins' libraries (nDPI) for flows "                    \
      "(cache.plugin_heap.allocations).")                                                        \
    X(COUNT, pluginHeapFrees, "plugin_heap.frees", Sum, Counter, "rowprobe_plugin_heap_frees_total", \
      "", "Of those, freed (cache.plugin_heap.frees).")                                          \
    X(COUNT, pluginHeapAllocatedBytes, "plugin_heap.allocated_bytes", Sum, Counter,              \
      "rowprobe_plugin_heap_allocated_bytes_total", "",                                          \
      "Bytes of those allocations (cache.plugin_heap.allocated_bytes).")                         \
    X(COUNT, pluginHeapFreedBytes, "plugin_heap.freed_bytes", Sum, Counter,                      \
      "rowprobe_plugin_heap_freed_bytes_total", "",                                              \
      "Bytes of those frees (cache.plugin_heap.freed_bytes).")                                   \
    X(COUNT, pluginHeapRetainedBytes, "plugin_heap.retained_bytes", Sum, Counter,                \
      "rowprobe_plugin_heap_retained_bytes_total", "",                                           \
      "Bytes allocated while working on flows that the library keeps after their export (nDPI's " \
      "LRU caches, made on first use), counted in module_bytes (cache.plugin_heap.retained_bytes).") \
    X(COUNT, pluginHeapRetainedAllocations, "", Sum, Internal, "", "",                          \
      "Allocations among retained_bytes (for live_allocations).")                                \
    X(DERIVED, pluginHeapLiveBytes(), "plugin_heap.live_bytes", None, Gauge,                     \
      "rowprobe_plugin_heap_live_bytes", "",                                                     \
      "Bytes process plugins' libraries hold for live flows; 0 once every flow is exported "     \
      "(cache.plugin_heap.live_bytes).")                                                         \
    X(DERIVED, pluginHeapLiveAllocations(), "plugin_heap.live_allocations", None, Gauge,         \
      "rowprobe_plugin_heap_live_allocations", "",                                               \
      "Allocations process plugins' libraries hold for live flows "                              \
      "(cache.plugin_heap.live_allocations).")                                                   \
    X(COUNT, pluginModuleBytes, "plugin_heap.module_bytes", Sum, Gauge,                          \
      "rowprobe_plugin_heap_module_bytes", "",                                                   \
      "Bytes held by process plugins' per-worker library state (nDPI detection modules and "    \
      "their caches), freed at exit (cache.plugin_heap.module_bytes).")
// clang-format on

namespace rowprobe {

/// How the statistics of several queues combine into the total.
enum class CounterMerge { Sum, Max, Latest, None };
/// Where and how a counter is shown (see the table above).
enum class CounterKind { Counter, Gauge, Nanoseconds, Iso, Internal };

}  // namespace rowprobe
