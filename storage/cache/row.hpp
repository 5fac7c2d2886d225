// Memory layout of the flow table: rows of tags + policy state, and the record pool.
//
//   m_rows    (hot, one row = 32 bytes for L = 4..16 with lru, 2 rows per cache line)
//   ┌──────────────────────────────┬─────────────────┬──────────────┬─────────────────┐
//   │ tags[L]  (0 = empty)         │ P::RowState     │ deadline     │ P::SlotMeta[L]  │
//   └──────────────────────────────┴─────────────────┴──────────────┴─────────────────┘
//   m_records (row r, slot s  →  record s*rows + r: slot-major; 128 bytes = 2 cache lines each)
//   ┌ line 0: key(40) last(8) packets[2](8) first(8)  │ line 1: bytes[2] hashHi icmp flags ttl
//   └ read and written by every packet of the flow     │        MACs initiatorIsA inlineState pluginWants
//                                                      │        extHandles
//
//              row 0    row 1    row 2   ...  row rows-1
//   plane 0  [ s0     | s0     | s0     | ... ]          rows × 128 B
//   plane 1  [ s1     | s1     | s1     | ... ]
//   ...                                                   (L planes)
//
// * Slot-major: slot s of every row lies in plane s. Rows fill their holes from the
//   lowest-ranked one, which is the lowest-numbered until timeouts reorder them, so a table
//   holding F flows in R rows touches the first few planes (those some row fills that far;
//   about F / R + 4 for random keys) rather than every page: 100 k flows in a 2^20 table
//   fault in ~40 MiB instead of 128 (the kernel zero-fills the rest on demand, and never
//   does for a plane no row reaches). A row's records are L lines apart instead of adjacent,
//   which costs a lookup nothing (the tags decide which record to read) and the sweep, which
//   reads a due row's records, one TLB entry per record instead of per row.
// * A row is aligned to its size rounded up to a power of two (at most 64), so the tag bytes
//   never straddle a cache line and one SIMD load reads them all.
// * Records never move: a slot's record is the flow for its whole life in the cache. Policies
//   express order in RowState (rank_order.hpp); the table never reshuffles pointers (unlike
//   ipfixprobe's pointer table) and never relies on the hash alone for identity.
// * `deadline` is a lower bound of the earliest time any record of the row can expire
//   (min over occupied slots of min(last + inactive, first + active)); kNever when the row is
//   empty. Inserts lower it, hits leave it (a hit only pushes a record's own expiry later), the
//   sweep and the full-row reclaim recompute it exactly. The sweep skips a row whose deadline is
//   in the future without touching its records.
// * Per-direction counters are indexed relative to the initiator (the sender of the flow's first
//   packet): index 0 = initiator → responder. `initiatorIsA` says which side of the canonical key
//   the initiator is, so a packet's direction is (pkt.fromA == initiatorIsA) ? 0 : 1.
//
// Thread ownership: rows and records belong to the worker that owns the table (single writer).
//
// Costs: a lookup touches the row line and, per tag candidate, record line 0; an update touches
// both record lines (processBatch loads all three for the whole batch before the first update).
// 2^17 records (default) = 16 MiB of records + 256 KiB of rows for L = 16.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cache/slot.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::storage {

/// "Never expires": the deadline of an empty row.
inline constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

/// a + b without wrapping past kNever.
constexpr TimeNs saturatingAdd(TimeNs a, TimeNs b) noexcept {
    return a > kNever - b ? kNever : a + b;
}

/// The cached state of one biflow. Trivially copyable; written field by field on creation, so
/// the pool needs no initialisation.
struct alignas(64) CachedFlow {
    // Cache line 0: everything the lookup and the per-packet update read first.
    FlowKey key;                             ///< canonical key (40 bytes)
    TimeNs timeLast = 0;                     ///< newest packet time seen
    std::array<std::uint32_t, 2> packets{};  ///< [0] initiator → responder, [1] reverse
    TimeNs timeFirst = 0;                    ///< first packet time
    // Cache line 1.
    std::array<std::uint64_t, 2> bytes{};  ///< IP total length summed, per direction
    /// The upper half of the table's hash of `key` (the tag and the policies' ghost
    /// fingerprints come from it; the lower half chose the row, which the slot's place says).
    /// Half a hash so that a fourth tier-2 handle fits in this line.
    std::uint32_t hashHi = 0;
    std::array<std::uint16_t, 2> icmpTypeCode{};  ///< of the first packet per direction
    std::array<std::uint8_t, 2> tcpFlags{};       ///< OR of TCP flags per direction
    std::array<std::uint8_t, 2> ttl{};            ///< of the first packet per direction
    std::array<std::uint8_t, 6> srcMac{};         ///< of the first packet (the initiator's)
    std::array<std::uint8_t, 6> dstMac{};
    bool initiatorIsA = true;  ///< the first packet was sent by key side A
    bool tunnelled = false;    ///< the first packet came out of a tunnel: see FlowTable::m_tunnels
    /// Process plugins: the tier-1 state of the first plugin whose state fits in two bytes
    /// (pstats' count), here so that its packets need no plugin-area access (ProcessDispatch).
    alignas(2) std::array<std::uint8_t, 2> inlineState{};
    /// Process plugins: bit i set while plugin i still takes this flow's packets (written by
    /// ProcessDispatch; here rather than in the plugin area so that a flow no plugin wants
    /// costs no access beyond the record's two lines).
    std::uint32_t pluginWants = 0;
    /// Process plugins: the tier-2 handles of the first kRecordHandles plugins that have tier-2
    /// records (ProcessDispatch), here so that reaching a flow's records needs no plugin-area
    /// access.
    std::array<std::uint32_t, 4> extHandles{};

    /// The earliest time this record expires (inactive or active timeout).
    TimeNs deadline(TimeNs inactive, TimeNs active) const noexcept {
        return std::min(saturatingAdd(timeLast, inactive), saturatingAdd(timeFirst, active));
    }
};
static_assert(sizeof(CachedFlow) == 128, "CachedFlow is two cache lines");
static_assert(std::is_trivially_copyable_v<CachedFlow>);

namespace detail {

/// Per-slot metadata storage; takes no space when the policy's SlotMeta is empty.
template <class Meta, unsigned L, bool kEmpty = std::is_empty_v<Meta>>
struct SlotMetaArray {
    std::array<Meta, L> items{};
    Meta& operator[](Slot s) noexcept { return items[s]; }
    const Meta& operator[](Slot s) const noexcept { return items[s]; }
};

template <class Meta, unsigned L>
struct SlotMetaArray<Meta, L, true> {
    // An empty Meta has no state: every slot may share one object.
    Meta& operator[](Slot) noexcept { return shared; }
    const Meta& operator[](Slot) const noexcept { return shared; }
    [[no_unique_address]] Meta shared{};
};

template <class P, unsigned L>
struct RowFields {
    std::array<Tag, L> tags{};     ///< 0 = empty slot
    typename P::RowState state{};  ///< the policy's order / counters
    TimeNs deadline = kNever;      ///< lower bound of the row's earliest expiry
    [[no_unique_address]] SlotMetaArray<typename P::SlotMeta, L> meta{};
};

constexpr std::size_t rowAlignment(std::size_t size) noexcept {
    return std::min<std::size_t>(64, std::bit_ceil(size));
}

}  // namespace detail

/// One row of L slots for policy P (see the layout above).
template <class P, unsigned L>
struct alignas(detail::rowAlignment(sizeof(detail::RowFields<P, L>))) Row
    : detail::RowFields<P, L> {};

}  // namespace rowprobe::storage
