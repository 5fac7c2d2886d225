// Counters reported by plugins and workers. Plain 64-bit integers owned by one thread each;
// the core publishes snapshots to the statistics printer under a mutex a few times per second,
// never per packet.
#pragma once

#include <array>
#include <cstdint>

#include "rowprobe/cache_counters.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe {

/// Number of EndReason values + 1 (index = IPFIX flowEndReason value, index 0 unused).
inline constexpr std::size_t kEndReasonSlots = 6;

// The argument is a member name, which cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ROWPROBE_CACHE_FIELD_COUNT(member) std::uint64_t member = 0;
#define ROWPROBE_CACHE_FIELD_REASONS(member) std::array<std::uint64_t, kEndReasonSlots> member{};
// NOLINTEND(bugprone-macro-parentheses)
#define ROWPROBE_CACHE_FIELD_DERIVED(member)
#define ROWPROBE_CACHE_FIELD(src, member, ...) ROWPROBE_CACHE_FIELD_##src(member)

/// Flow-table counters, the columns of the thesis tables (docs/statistics.md): one field per
/// COUNT / REASONS line of ROWPROBE_CACHE_COUNTERS (rowprobe/cache_counters.hpp), in its order,
/// which also says what each means and how queues merge it.
struct CacheStats {
    ROWPROBE_CACHE_COUNTERS(ROWPROBE_CACHE_FIELD)

    std::uint64_t exportedTotal() const noexcept {
        std::uint64_t n = 0;
        for (auto v : exported) n += v;
        return n;
    }
    double hitPositionMean() const noexcept {
        return hits ? static_cast<double>(positionSum) / static_cast<double>(hits) : 0.0;
    }
    double hitPositionVariance() const noexcept {
        if (!hits) return 0.0;
        const double m = hitPositionMean();
        return static_cast<double>(positionSqSum) / static_cast<double>(hits) - m * m;
    }
    std::uint64_t pluginHeapLiveBytes() const noexcept {
        return pluginHeapAllocatedBytes - pluginHeapFreedBytes - pluginHeapRetainedBytes;
    }
    std::uint64_t pluginHeapLiveAllocations() const noexcept {
        return pluginHeapAllocations - pluginHeapFrees - pluginHeapRetainedAllocations;
    }
    double loadFactor() const noexcept {
        return capacity ? static_cast<double>(flowsInCache) / static_cast<double>(capacity) : 0.0;
    }
};

/// Input-side counters.
struct InputStats {
    std::uint64_t received = 0;     ///< packets delivered to the worker
    std::uint64_t kernelDrops = 0;  ///< dropped by the kernel / NIC before we saw them
    std::uint64_t ifaceDrops = 0;
};

/// Output-side counters.
struct OutputStats {
    std::uint64_t records = 0;  ///< records written
    std::uint64_t dropped = 0;  ///< records lost (e.g. collector unreachable beyond the buffer)
    std::uint64_t bytes = 0;
    /// The part of `dropped` the output discarded by its configured policy, not for a failure
    /// (UniRec HALF_WAIT / NO_WAIT with nobody connected). Exit code 1 only for the rest.
    std::uint64_t discarded = 0;
};

/// Everything a worker reports about its queue.
struct WorkerStats {
    std::uint64_t packets = 0;  ///< frames read from the input
    std::uint64_t parsed = 0;   ///< frames that reached the flow table
    std::uint64_t ipBytes = 0;  ///< IP bytes of the parsed packets
    AnomalyCounters anomalies;
    std::uint64_t batches = 0;
    std::uint64_t busyNs = 0;  ///< time spent in parse + table, measured per batch
    CacheStats cache;
    InputStats input;
};

}  // namespace rowprobe
