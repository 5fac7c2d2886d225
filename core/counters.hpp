// The counter tables (rowprobe/counter_table.hpp) seen from the core: for every statistics
// struct, its lines' facts as CounterInfo and a visitor handing each line's value to a
// callback, so that the merge of the queues, the JSON document, the Prometheus metrics and the
// stderr table are loops over the tables instead of a line per counter each.
//
//   CounterTable<S>::kInfo                 every line of S's table, in order
//   CounterTable<S>::visit(f, s...)        f(info, s.member...) for every line: the value is a
//                                          std::uint64_t (COUNT, most DERIVED), a double
//                                          (some DERIVED), a per-reason array (REASONS),
//                                          AnomalyCounters (ANOMALIES) or a nested table's
//                                          struct (INPUT, CACHE); several structs visit in step
//   mergeCounters(total, queue)            every field by its line's merge rule
//   forEachLabel(value, g)                 g(name, count) over a REASONS / ANOMALIES value
//
// Thread ownership: pure functions of their arguments. Costs: statistics time only.
#pragma once

#include <algorithm>
#include <array>
#include <string_view>
#include <type_traits>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::core {

struct CounterInfo {
    std::string_view json;  ///< key in the JSON object, "" when not shown
    CounterMerge merge = CounterMerge::None;
    CounterKind kind = CounterKind::Counter;
    std::string_view metric;  ///< Prometheus sample name, "" when none
    std::string_view label;   ///< `k="v"` within a family, or (REASONS, ANOMALIES) the label's name
    std::string_view help;
    std::string_view text;  ///< heading of the stderr table's column, "" when none
    TextColumn column = TextColumn::None;
};

/// Specialised below for every statistics struct; empty for other types.
template <class Stats>
struct CounterTable {};

/// True for the structs that have a counter table (the nested tables of a line).
template <class V>
concept HasCounterTable = requires {
    CounterTable<V>::kInfo;
};

/// The values shown as one labelled sample / JSON key per name.
using ReasonCounters = std::array<std::uint64_t, kEndReasonSlots>;
template <class V>
concept Labelled = std::is_same_v<V, ReasonCounters> || std::is_same_v<V, AnomalyCounters>;

template <class G>
void forEachLabel(const ReasonCounters& value, G&& g) {
    for (std::size_t r = 1; r < kEndReasonSlots; ++r)
        g(std::string_view(endReasonName(static_cast<EndReason>(r))), value[r]);
}

template <class G>
void forEachLabel(const AnomalyCounters& value, G&& g) {
    for (std::size_t a = 0; a < kAnomalyCount; ++a)
        g(std::string_view(anomalyName(static_cast<Anomaly>(a))), value.count[a]);
}

namespace detail {

/// Whether `queue` supplies the total's Latest fields: its flood alarm is the latest.
template <class Stats>
bool isNewer(const Stats& /*total*/, const Stats& /*queue*/) noexcept {
    return false;
}
inline bool isNewer(const CacheStats& total, const CacheStats& queue) noexcept {
    return queue.floodLastAlarm > total.floodLastAlarm;
}

inline void mergeField(CounterMerge rule, std::uint64_t& a, std::uint64_t b, bool newer) {
    switch (rule) {
        case CounterMerge::Sum:
            a += b;
            break;
        case CounterMerge::Max:
            a = std::max(a, b);
            break;
        case CounterMerge::Latest:
            if (newer) a = b;
            break;
        case CounterMerge::Fields:
        case CounterMerge::None:
            break;
    }
}

inline void mergeField(CounterMerge rule, ReasonCounters& a, const ReasonCounters& b, bool newer) {
    for (std::size_t r = 0; r < a.size(); ++r) mergeField(rule, a[r], b[r], newer);
}

inline void mergeField(CounterMerge rule, AnomalyCounters& a, const AnomalyCounters& b,
                       bool newer) {
    for (std::size_t i = 0; i < kAnomalyCount; ++i) mergeField(rule, a.count[i], b.count[i], newer);
}

template <HasCounterTable Stats>
void mergeField(CounterMerge /*rule: Fields*/, Stats& a, const Stats& b, bool /*newer*/) {
    CounterTable<Stats>::merge(a, b);
}

}  // namespace detail

// The macros below expand one table into a CounterTable specialisation.
#define ROWPROBE_COUNTER_INFO(src, member, json, merge, kind, metric, label, help, text, column) \
    CounterInfo{json, CounterMerge::merge, CounterKind::kind, metric, label, help,               \
                text, TextColumn::column},
#define ROWPROBE_COUNTER_VISIT(src, member, ...) f(kInfo[i++], s.member...);
#define ROWPROBE_COUNTER_MERGE_FIELD(member, rule) \
    detail::mergeField(CounterMerge::rule, total.member, queue.member, newer);
#define ROWPROBE_COUNTER_MERGE_COUNT ROWPROBE_COUNTER_MERGE_FIELD
#define ROWPROBE_COUNTER_MERGE_REASONS ROWPROBE_COUNTER_MERGE_FIELD
#define ROWPROBE_COUNTER_MERGE_ANOMALIES ROWPROBE_COUNTER_MERGE_FIELD
#define ROWPROBE_COUNTER_MERGE_INPUT ROWPROBE_COUNTER_MERGE_FIELD
#define ROWPROBE_COUNTER_MERGE_CACHE ROWPROBE_COUNTER_MERGE_FIELD
#define ROWPROBE_COUNTER_MERGE_DERIVED(member, rule)
#define ROWPROBE_COUNTER_MERGE(src, member, json, rule, ...) \
    ROWPROBE_COUNTER_MERGE_##src(member, rule)

// NOLINTBEGIN(bugprone-macro-parentheses): the arguments are a type and a table's name.
#define ROWPROBE_DEFINE_COUNTER_TABLE(Stats, TABLE)                            \
    template <>                                                                \
    struct CounterTable<Stats> {                                               \
        static constexpr std::array kInfo = {TABLE(ROWPROBE_COUNTER_INFO)};    \
        template <class F, class... S>                                         \
        static void visit(F&& f, const S&... s) {                              \
            std::size_t i = 0;                                                 \
            TABLE(ROWPROBE_COUNTER_VISIT)                                      \
        }                                                                      \
        static void merge(Stats& total, const Stats& queue) {                  \
            [[maybe_unused]] const bool newer = detail::isNewer(total, queue); \
            TABLE(ROWPROBE_COUNTER_MERGE)                                      \
        }                                                                      \
    };
// NOLINTEND(bugprone-macro-parentheses)

ROWPROBE_DEFINE_COUNTER_TABLE(CacheStats, ROWPROBE_CACHE_COUNTERS)
ROWPROBE_DEFINE_COUNTER_TABLE(InputStats, ROWPROBE_INPUT_COUNTERS)
ROWPROBE_DEFINE_COUNTER_TABLE(WorkerStats, ROWPROBE_WORKER_COUNTERS)
ROWPROBE_DEFINE_COUNTER_TABLE(ExportStats, ROWPROBE_EXPORT_COUNTERS)
ROWPROBE_DEFINE_COUNTER_TABLE(OutputStats, ROWPROBE_OUTPUT_COUNTERS)

#undef ROWPROBE_DEFINE_COUNTER_TABLE
#undef ROWPROBE_COUNTER_MERGE
#undef ROWPROBE_COUNTER_MERGE_DERIVED
#undef ROWPROBE_COUNTER_MERGE_CACHE
#undef ROWPROBE_COUNTER_MERGE_INPUT
#undef ROWPROBE_COUNTER_MERGE_ANOMALIES
#undef ROWPROBE_COUNTER_MERGE_REASONS
#undef ROWPROBE_COUNTER_MERGE_COUNT
#undef ROWPROBE_COUNTER_MERGE_FIELD
#undef ROWPROBE_COUNTER_VISIT
#undef ROWPROBE_COUNTER_INFO

/// Adds one queue's (or output's) counters into a total, each by its line's merge rule;
/// Latest fields come from the queue whose flood alarm is the latest.
template <HasCounterTable Stats>
void mergeCounters(Stats& total, const Stats& queue) {
    CounterTable<Stats>::merge(total, queue);
}

}  // namespace rowprobe::core
