// The row-policy contract: what a replacement policy decides inside one row, and how the table
// (the mechanism, flow_table.hpp) calls it. Guide: docs/writing-a-row-policy.md.
//
//   packet ──▶ table: hash, row, tag match + key compare, timeouts, export
//                 │
//                 ├─ hit ──────────▶ policy.onHit(row, s, ctx)          where does s move?
//                 └─ miss ─────────▶ policy.pickFree(row, ctx)          which hole?
//                                    (row full) reclaim expired records, else
//                                    policy.victim(row, ctx)            whom to evict?
//                                    policy.onInsert(row, s, ctx, v)    where does the new flow go?
//                 every removal ───▶ policy.onErase(row, s, reason)     what does the hole do?
//
// * A policy is a class template over L satisfying RowPolicy<P, L>. FlowTable<P, L> is a
//   template over it, so every call above is a direct, inlinable call: no virtual call per
//   packet. Policies keep their order in P::RowState (usually a RankOrder<L>) and optional hot
//   per-slot data in P::SlotMeta; records and tags never move.
// * Policies do not allocate, do I/O, throw, or look outside the row they are given; one
//   instance per worker table; deterministic. RowState is trivially copyable and <= 64 bytes.
// * Every removal (timeout, TCP end, eviction, flush) goes through onErase, so holes never
//   appear behind the policy's back.
// * RowRef::evict lets a policy evict another flow of the same row from inside a hook (2Q
//   promotions); it exports the record and calls back into onErase before returning.
//
// Thread ownership: a RowRef is valid only inside the hook it is passed to, on the worker that
// owns the table; never keep one.
//
// Costs: the hooks of `lru` compile to ~10-40 instructions on the row's cache line.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "cache/rank_order.hpp"
#include "cache/row.hpp"
#include "cache/slot.hpp"
#include "cache/tag_match.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/options.hpp"

namespace rowprobe::storage {

/// How a new flow got its slot.
enum class Vacancy : std::uint8_t {
    Free,     ///< a hole (never used, or left by a timeout, TCP end, flush)
    Evicted,  ///< a live flow was exported with LackOfResources to make room
    Expired,  ///< the row was full, but expired records were reclaimed (exported as timeouts)
};

/// Built once per packet by the table and handed to every hook.
struct PacketContext {
    std::uint64_t hash = 0;  ///< seeded hash of the canonical key
    TimeNs ts = 0;           ///< packet time
    std::uint8_t cls = 0;    ///< packet class (set by classify), else 0
    std::uint8_t tcpFlags = 0;
    bool forward = true;  ///< direction relative to the stored flow (true for new flows)
    /// The packet itself (header fields for classify); null where no packet exists (prefetch
    /// hints). Valid only during the hook call.
    const ParsedPacket* packet = nullptr;
};

template <class P, unsigned L>
class FlowTable;

/// Read-only view of one row for policy decisions (victim, pickFree, position).
template <class P, unsigned L>
class ConstRowRef {
public:
    /// `records` is the record of slot 0; slot s's lies `stride` records further (row.hpp).
    ConstRowRef(const Row<P, L>& row, const CachedFlow* records, std::size_t stride) noexcept
        : m_row(&row), m_records(records), m_stride(stride) {}

    static constexpr unsigned size() noexcept { return L; }
    /// Bit s set when slot s is empty.
    std::uint32_t freeMask() const noexcept {
        return TagMatch::template match<L>(m_row->tags.data(), kEmptyTag);
    }
    bool occupied(Slot s) const noexcept { return m_row->tags[s] != kEmptyTag; }
    const typename P::RowState& state() const noexcept { return m_row->state; }
    const typename P::SlotMeta& meta(Slot s) const noexcept { return m_row->meta[s]; }
    /// The record in slot s (meaningful only while occupied(s), and inside onErase for s).
    const CachedFlow& rec(Slot s) const noexcept { return m_records[s * m_stride]; }
    /// The upper 32 bits of the flow's hash, in place (the lower 32 read 0): fingerprints.
    std::uint64_t hash(Slot s) const noexcept { return std::uint64_t{rec(s).hashHi} << 32; }
    TimeNs lastSeen(Slot s) const noexcept { return rec(s).timeLast; }

private:
    const Row<P, L>* m_row;
    const CachedFlow* m_records;
    std::size_t m_stride;
};

/// Mutable view of one row, passed to onHit / onInsert / onErase.
template <class P, unsigned L>
class RowRef {
public:
    RowRef(Row<P, L>& row, CachedFlow* records, std::size_t stride, FlowTable<P, L>& table,
           std::size_t index) noexcept
        : m_row(&row), m_records(records), m_stride(stride), m_table(&table), m_index(index) {}

    operator ConstRowRef<P, L>() const noexcept {
        return ConstRowRef<P, L>(*m_row, m_records, m_stride);
    }

    static constexpr unsigned size() noexcept { return L; }
    std::uint32_t freeMask() const noexcept {
        return TagMatch::template match<L>(m_row->tags.data(), kEmptyTag);
    }
    bool occupied(Slot s) const noexcept { return m_row->tags[s] != kEmptyTag; }
    typename P::RowState& state() const noexcept { return m_row->state; }
    typename P::SlotMeta& meta(Slot s) const noexcept { return m_row->meta[s]; }
    const CachedFlow& rec(Slot s) const noexcept { return m_records[s * m_stride]; }
    /// The upper 32 bits of the flow's hash, in place (the lower 32 read 0): fingerprints.
    std::uint64_t hash(Slot s) const noexcept { return std::uint64_t{rec(s).hashHi} << 32; }
    TimeNs lastSeen(Slot s) const noexcept { return rec(s).timeLast; }
    /// The row's index in the table.
    std::size_t index() const noexcept { return m_index; }

    /// Exports the flow in slot s with `why`, counts it, frees the slot and calls the policy's
    /// onErase before returning. For policies that evict during a hit; s must be occupied and
    /// must not be the slot the current hook is about.
    void evict(Slot s, EndReason why) const noexcept;  // defined in flow_table.hpp

private:
    Row<P, L>* m_row;
    CachedFlow* m_records;
    std::size_t m_stride;
    FlowTable<P, L>* m_table;
    std::size_t m_index;
};

/// What a row policy must provide. Optional hooks (pickFree, classify, position) come from
/// PolicyBase<P> unless P defines its own. Two more optional hooks are used only by tests and
/// tools (FlowTable::checkInvariants / inspectRow), never on the packet path:
///   std::string checkRow(ConstRowRef) const      empty, or the policy invariant that is broken
///   char segmentOf(ConstRowRef, Slot) const      a one-letter segment name ('A' Am, 'L' LIR ...)
template <class P, unsigned L>
concept RowPolicy = std::is_trivially_copyable_v<typename P::RowState> &&
                        sizeof(typename P::RowState) <= 64 &&
                    std::is_trivially_copyable_v<typename P::SlotMeta>&& requires(
                        P& p, const P& cp, RowRef<P, L> row, ConstRowRef<P, L> crow, Slot s,
                        PacketContext& mctx, const PacketContext& ctx, Vacancy v, EndReason why) {
    { P::kName } -> std::convertible_to<std::string_view>;
    { p.onHit(row, s, ctx) }
    noexcept;  // s holds the flow just found
    { p.onInsert(row, s, ctx, v) }
    noexcept;  // new flow created in s: place it in the order
    { p.onErase(row, s, why) }
    noexcept;  // s vacated: timeout, TCP end, flush, eviction
    { cp.victim(crow, ctx) }
    noexcept->std::same_as<Slot>;  // called on a full row
    { cp.pickFree(crow, ctx) }
    noexcept->std::same_as<Slot>;  // a hole, or kNoSlot
    { cp.classify(mctx) }
    noexcept;
    { cp.position(crow, s) }
    noexcept->std::convertible_to<unsigned>;
};

/// Defaults for the optional hooks. Derive as `class MyPolicy : public PolicyBase<MyPolicy<L>>`.
template <class Derived>
class PolicyBase {
public:
    /// The free slot a new flow takes: the lowest-ranked hole if RowState has an `order`
    /// (a RankOrder), else the lowest-numbered hole; kNoSlot when the row is full.
    template <unsigned L>
    Slot pickFree(ConstRowRef<Derived, L> row, const PacketContext&) const noexcept {
        const std::uint32_t free = row.freeMask();
        if (free == 0) return kNoSlot;
        if constexpr (requires { row.state().order.firstFree(free); }) {
            return row.state().order.firstFree(free);
        } else {
            return static_cast<Slot>(std::countr_zero(free));
        }
    }

    /// Per-packet pre-pass that may set ctx.cls (adaptive policies); nothing by default.
    void classify(PacketContext&) const noexcept {}

    /// 0-based position of slot s in the policy's order, for the hit-position statistics:
    /// the rank if RowState has an `order`, else the slot number.
    template <unsigned L>
    unsigned position(ConstRowRef<Derived, L> row, Slot s) const noexcept {
        if constexpr (requires { row.state().order.rankOf(s); }) {
            return row.state().order.rankOf(s);
        } else {
            return s;
        }
    }
};

}  // namespace rowprobe::storage
