// A fast, exact model of FlowTable<AdaptivePolicy<L>, L> for the tuner's fitness evaluations.
//
//   per row:   RankOrder<L> (the policy's order)  deadline (lower bound of the earliest expiry)
//   per slot:  key id | first, last time | TCP flags per direction | initiator | last packet
//   per block of 64 rows: deadline            sweep cursor, credit, clock: as the table's
//
// It is the table's packet path (flow_table.hpp) with records reduced to what decides hits and
// evictions, and the policy inlined from storage/policies/adaptive.cpp:
//   * found and not ended (SYN after FIN/RST, inactive, active) → hit: rotate to
//     hitTo[class][rank] = min(rank, clamp(T[rank] + offset[class], 0, L-1));
//   * otherwise (after retiring an ended record): lowest-ranked hole; else, full row: every
//     expired record of the row is retired (slot order) and the lowest-ranked hole taken
//     (missReclaim); else the flow at rank L-1 is evicted (missEvict) and the new one rotated to
//     insert[class]. Every removal rotates the hole to rank L-1.
//   * after every block of frames: the incremental sweep over blocks of 64 rows with the table's
//     credit arithmetic (sweepPeriod 1 s, at least one block per batch).
// Identity is the key id (from a capture: the exact key; from a compact trace: the 56-bit hash).
// Not modelled: the fragment cache (non-first fragments keep their parsed key) and flood
// admission (the default `flood-admission=off` changes nothing). The tuner's --verify and
// tests/e2e/tuner_test.cpp check that this model and the real table agree counter for counter.
//
// Thread ownership: simulate() allocates its own table; any number run in parallel on one
// read-only SimTrace. Costs: ~15-30 ns per packet at L = 16.
#pragma once

#include <cstdint>
#include <vector>

#include "adaptive_config.hpp"
#include "sim_trace.hpp"

namespace rowprobe::tuner {

struct SimParams {
    unsigned sizeLog2 = 17;
    unsigned line = 16;
    TimeNs inactive = 30 * kNsPerSec;
    TimeNs active = 300 * kNsPerSec;
    TimeNs sweepPeriod = kNsPerSec;                     ///< as TableConfig
    const lab::Sessions* sessions = nullptr;            ///< for re-created flows and cut evictions
    const std::vector<std::uint8_t>* topKey = nullptr;  ///< for heavy-hitter evictions
};

struct SimResult {
    std::uint64_t hits = 0;
    std::uint64_t missFree = 0;
    std::uint64_t missEvict = 0;  ///< forced evictions: the default fitness
    std::uint64_t missReclaim = 0;
    std::uint64_t exportedBySweep = 0;
    std::uint64_t recreated = 0;  ///< needs sessions
    std::uint64_t hhEvict = 0;    ///< cut evictions of top keys; needs sessions and topKey
    std::uint64_t positionSum = 0;
};

/// Replays `trace` through an `adaptive` table configured by `config` (must be valid, for
/// params.line).
SimResult simulate(const SimTrace& trace, const storage::AdaptiveConfig& config,
                   const SimParams& params);

}  // namespace rowprobe::tuner
