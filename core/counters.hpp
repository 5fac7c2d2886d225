// The flow-table counter table (rowprobe/cache_counters.hpp) seen from the core: each entry's
// facts as a CounterInfo, and a visitor handing every entry's value of one CacheStats to a
// callback, so that the merge of the queues, the JSON document and the Prometheus metrics are
// loops over the table instead of a line per counter each.
//
//   kCacheCounters[]                       every entry, in table order (docs test, metrics)
//   visitCacheCounters(stats, f)           f(info, value): value is std::uint64_t (COUNT),
//                                          the per-reason array (REASONS) or what a DERIVED
//                                          expression returns (std::uint64_t or double)
//   mergeCacheStats(total, queue)          every COUNT / REASONS field by its merge rule
//
// Thread ownership: pure functions of their arguments. Costs: statistics time only.
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

#include "rowprobe/cache_counters.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::core {

struct CounterInfo {
    std::string_view json;  ///< key in the JSON "cache" object, "" when not shown
    CounterMerge merge = CounterMerge::None;
    CounterKind kind = CounterKind::Counter;
    std::string_view metric;  ///< Prometheus sample name, "" when none
    std::string_view label;   ///< `k="v"` within a family, or (REASONS) the label's name
    std::string_view help;
    bool reasons = false;  ///< one value per EndReason
};

#define ROWPROBE_COUNTER_INFO(src, member, json, merge, kind, metric, label, help) \
    CounterInfo{json,                                                              \
                CounterMerge::merge,                                               \
                CounterKind::kind,                                                 \
                metric,                                                            \
                label,                                                             \
                help,                                                              \
                std::string_view(#src) == "REASONS"},
inline constexpr std::array kCacheCounters = {ROWPROBE_CACHE_COUNTERS(ROWPROBE_COUNTER_INFO)};
#undef ROWPROBE_COUNTER_INFO

template <class F>
void visitCacheCounters(const CacheStats& stats, F&& f) {
    std::size_t i = 0;
#define ROWPROBE_VISIT_COUNTER(src, member, ...) f(kCacheCounters[i++], stats.member);
    ROWPROBE_CACHE_COUNTERS(ROWPROBE_VISIT_COUNTER)
#undef ROWPROBE_VISIT_COUNTER
}

namespace detail {

inline void mergeValue(CounterMerge rule, std::uint64_t& a, std::uint64_t b, bool newer) {
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
        case CounterMerge::None:
            break;
    }
}

}  // namespace detail

/// Adds one queue's counters into a total, each by its merge rule; Latest fields come from the
/// queue whose flood alarm is the latest.
inline void mergeCacheStats(CacheStats& total, const CacheStats& queue) {
    const bool newer = queue.floodLastAlarm > total.floodLastAlarm;
#define ROWPROBE_MERGE_COUNT(member, rule) \
    detail::mergeValue(CounterMerge::rule, total.member, queue.member, newer);
#define ROWPROBE_MERGE_REASONS(member, rule)              \
    for (std::size_t r = 0; r < total.member.size(); ++r) \
        detail::mergeValue(CounterMerge::rule, total.member[r], queue.member[r], newer);
#define ROWPROBE_MERGE_DERIVED(member, rule)
#define ROWPROBE_MERGE(src, member, json, rule, ...) ROWPROBE_MERGE_##src(member, rule)
    ROWPROBE_CACHE_COUNTERS(ROWPROBE_MERGE)
#undef ROWPROBE_MERGE
#undef ROWPROBE_MERGE_DERIVED
#undef ROWPROBE_MERGE_REASONS
#undef ROWPROBE_MERGE_COUNT
}

}  // namespace rowprobe::core
