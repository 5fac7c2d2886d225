// Counters reported by plugins and workers. Plain 64-bit integers owned by one thread each;
// the core publishes snapshots to the statistics printer under a mutex a few times per second,
// never per packet.
#pragma once

#include <array>
#include <cstdint>

#include "rowprobe/packet.hpp"

namespace rowprobe {

/// Number of EndReason values + 1 (index = IPFIX flowEndReason value, index 0 unused).
inline constexpr std::size_t kEndReasonSlots = 6;

/// Flow-table counters, the columns of the thesis tables (docs/statistics.md).
struct CacheStats {
    std::uint64_t hits = 0;         ///< packets that found their flow
    std::uint64_t missFree = 0;     ///< "empty": new flow placed into a free slot
    std::uint64_t missEvict = 0;    ///< "not empty": new flow evicted a live flow
    std::uint64_t missReclaim = 0;  ///< new flow took the slot of an expired flow
    std::uint64_t flowsCreated = 0;
    std::array<std::uint64_t, kEndReasonSlots> exported{};  ///< by EndReason value
    std::uint64_t exportedBySweep = 0;                      ///< periodic / incremental expiry
    std::uint64_t exportedAtEnd = 0;                        ///< forced end at EOF or shutdown
    std::uint64_t positionSum = 0;                          ///< sum of 1-based hit positions
    std::uint64_t positionSqSum = 0;
    std::uint64_t flowsInCache = 0;
    std::uint64_t capacity = 0;
    std::uint64_t fragmentsFilled = 0;   ///< non-first fragments that got ports from the frag cache
    std::uint64_t fragmentsNoPorts = 0;  ///< non-first fragments without a known first fragment
    // Flood detector (EWMA + CUSUM over new flows per interval of packet time).
    std::uint64_t floodIntervals = 0;     ///< intervals the detector has evaluated
    std::uint64_t floodAlarms = 0;        ///< floods detected (alarm raised; rising edges)
    std::uint64_t floodActive = 0;        ///< 1 while a flood is detected, else 0
    TimeNs floodLastAlarm = 0;            ///< packet time at which the latest alarm was raised
    std::uint64_t floodLastCount = 0;     ///< new flows in the interval that raised it
    std::uint64_t floodBaseline = 0;      ///< the detector's expected new flows per interval then
    std::uint64_t admissionDeferred = 0;  ///< first packets of new flows not admitted (flood mode)
    std::uint64_t admissionEvicted = 0;   ///< flows admitted during a flood evicted before others
    // Process plugins (rowprobe/process.hpp).
    std::uint64_t extPoolExhausted = 0;   ///< tier-2 records refused: flow exported without them
    std::uint64_t pluginDataDropped = 0;  ///< plugin instances over kMaxPluginData, not exported
    std::uint64_t pluginFlushes = 0;      ///< flows ended by a plugin (flush / flush-reinsert)

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
