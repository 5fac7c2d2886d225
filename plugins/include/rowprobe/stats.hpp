// Counters reported by plugins and workers, generated from the counter tables
// (rowprobe/counter_table.hpp). Plain 64-bit integers owned by one thread each; the core
// publishes snapshots to the statistics printer under a mutex a few times per second, never
// per packet.
#pragma once

#include <array>
#include <cstdint>

#include "rowprobe/cache_counters.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/stats_counters.hpp"

namespace rowprobe {

/// Number of EndReason values + 1 (index = IPFIX flowEndReason value, index 0 unused).
inline constexpr std::size_t kEndReasonSlots = 6;

// One field per table line, in the line's order (rowprobe/counter_table.hpp); DERIVED lines
// have none. The argument is a member name, which cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ROWPROBE_COUNTER_FIELD_COUNT(member) std::uint64_t member = 0;
#define ROWPROBE_COUNTER_FIELD_REASONS(member) std::array<std::uint64_t, kEndReasonSlots> member{};
#define ROWPROBE_COUNTER_FIELD_ANOMALIES(member) AnomalyCounters member;
#define ROWPROBE_COUNTER_FIELD_INPUT(member) InputStats member;
#define ROWPROBE_COUNTER_FIELD_CACHE(member) CacheStats member;
// NOLINTEND(bugprone-macro-parentheses)
#define ROWPROBE_COUNTER_FIELD_DERIVED(member)
#define ROWPROBE_COUNTER_FIELD(src, member, ...) ROWPROBE_COUNTER_FIELD_##src(member)

/// Flow-table counters, the columns of the thesis tables (docs/statistics.md): one field per
/// line of ROWPROBE_CACHE_COUNTERS (rowprobe/cache_counters.hpp), which also says what each
/// means and how queues merge it.
struct CacheStats {
    ROWPROBE_CACHE_COUNTERS(ROWPROBE_COUNTER_FIELD)

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

/// Input-side counters (ROWPROBE_INPUT_COUNTERS): `received` packets delivered to the worker,
/// `kernelDrops` dropped by the kernel / NIC before rowprobe saw them, `ifaceDrops` by the
/// interface.
struct InputStats {
    ROWPROBE_INPUT_COUNTERS(ROWPROBE_COUNTER_FIELD)
};

/// Output-side counters (ROWPROBE_OUTPUT_COUNTERS): `records` written, `dropped` lost (e.g.
/// collector unreachable beyond the buffer), `discarded` the part of `dropped` the output
/// discarded by its configured policy rather than for a failure (UniRec HALF_WAIT / NO_WAIT
/// with nobody connected; exit code 1 only for the rest), `bytes` written.
struct OutputStats {
    ROWPROBE_OUTPUT_COUNTERS(ROWPROBE_COUNTER_FIELD)
};

/// The export thread's counters (ROWPROBE_EXPORT_COUNTERS): `records` taken off the rings.
struct ExportStats {
    ROWPROBE_EXPORT_COUNTERS(ROWPROBE_COUNTER_FIELD)
};

/// Everything a worker reports about its queue (ROWPROBE_WORKER_COUNTERS): frames read
/// (`packets`), those that reached the flow table (`parsed`) and their IP bytes, the anomalies,
/// the input's and the flow table's counters, and its time in parse + table (`busyNs`,
/// measured per batch).
struct WorkerStats {
    ROWPROBE_WORKER_COUNTERS(ROWPROBE_COUNTER_FIELD)

    std::uint64_t skipped() const noexcept { return packets - parsed; }
    double nsPerPacket() const noexcept {
        return packets ? static_cast<double>(busyNs) / static_cast<double>(packets) : 0.0;
    }
};

}  // namespace rowprobe
