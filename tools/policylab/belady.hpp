// Belady's offline optimum (MIN) inside each row: the bound every row policy is measured against.
//
//   row r (same mapping as the table: hash(key, seed) & (rows-1), L slots)
//   ┌ entry: key id | next packet of its flow (or never) | first, last time | packets ┐  × L
//   packet i of key k in row r:
//     k cached ............................ hit
//     else (a miss; "re-created" if i does not start a flow, see trace.hpp Sessions)
//       free slot ......................... missFree
//       an expired entry (inactive/active)  missFree (the table would reclaim it)
//       else ............................. forced eviction of the entry whose next packet
//                                           comes last; entries never used again first, and
//                                           among those the one that would expire last
//
// Why this is the bound. Flow boundaries are those of an unbounded table (trace.hpp), the same
// for every policy, so misses = flow starts + re-creations, and only re-creations depend on the
// policy. Keeping the entries whose next use comes soonest is Belady's MIN, optimal for misses
// of a fixed-size cache; entries with no further use are dead weight and go first (the latest to
// expire first, so the others still free their slots for nothing). The lab checks on every run
// that no policy beats this bound (hits and forced evictions) and says so if one ever does —
// which could only come from the table's record-level rules (an active timeout counted from a
// re-created record, a SYN after FIN/RST the re-created record did not see).
//
// Thread ownership: a pure function of read-only inputs; one call per (hash, size, line).
// Costs: O(packets × L) compares, ~5-20 ns per packet at L = 16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace.hpp"

namespace rowprobe::lab {

struct BeladyResult {
    std::uint64_t hits = 0;
    std::uint64_t missFree = 0;   ///< into a free slot or an expired entry's slot
    std::uint64_t missEvict = 0;  ///< forced evictions
    std::uint64_t recreated = 0;  ///< misses on packets that do not start a flow
    std::uint64_t cutEvict = 0;   ///< forced evictions of a flow with packets still to come
    std::uint64_t hhEvict = 0;    ///< cut evictions of a top-N key
    std::uint64_t bigEvict = 0;   ///< cut evictions of an entry holding >= bigPackets packets
};

struct BeladyInput {
    const Trace* trace = nullptr;
    const Sessions* sessions = nullptr;
    std::vector<std::uint32_t> rowOfKey;  ///< per key id
    std::size_t rows = 0;
    unsigned line = 16;
    TimeNs inactive = 30 * kNsPerSec;
    TimeNs active = 300 * kNsPerSec;
    const std::vector<std::uint8_t>* topKey = nullptr;  ///< per key id: 1 = heavy hitter
    std::uint32_t bigPackets = 20;
};

BeladyResult simulateBelady(const BeladyInput& in);

}  // namespace rowprobe::lab
