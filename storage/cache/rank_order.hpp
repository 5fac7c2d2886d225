// RankOrder<L>: the policy order of one row, kept as ranks over slots.
//
// Records and tags never move (row.hpp); a policy that needs an order (LRU, 2Q, adaptive ...)
// keeps it here, inside its RowState. Slot i's rank is its position in the policy order:
// 0 = front (most valuable), L-1 = back (next victim). Example, L = 4, after moveTo(2, 0):
//
//   slot:   0  1  2  3                 slot:   0  1  2  3
//   rank:   0  1  2  3   moveTo(2,0)   rank:   1  2  0  3
//                        ─────────▶    (slot 2 to the front, slots at ranks 0..1 shift back)
//
// Layout
//   L <= 16  NibbleRankOrder: rank of slot i in bits [4i, 4i+4) of one uint64_t (8 bytes).
//   L == 32  ByteRankOrder:   one byte per slot (32 bytes); same interface.
//   RankOrder<L> picks the nibble form for L <= 16 and the byte form otherwise.
//
// Invariants
//   * The ranks of slots 0..L-1 are a permutation of 0..L-1, always: empty slots ("holes")
//     have ranks too, so a policy decides where holes sit (lru keeps them in place, others push
//     them to the tail with moveTo(s, L-1)). `valid()` checks it (tests, debug builds).
//   * moveTo(s, to) is a rotation: the entries between the old and the new rank shift by one
//     towards the old rank, everything else keeps its rank.
//   * Every rank stays within 0..L-1, so no nibble carries or borrows into its neighbour and a
//     rotation is one branch-free pass over L nibbles.
//
// Thread ownership: part of a row's RowState, touched only by the thread that owns the row.
//
// Costs (L = 16, x86-64, -O2): rankOf 1-2 instructions; moveTo one pass of 16 nibbles,
// ~40 instructions without branches; at / firstFree one pass of 16 compares. All on the row's
// own cache line, which the lookup has already loaded.
#pragma once

#include <array>
#include <cstdint>

#include "cache/slot.hpp"

namespace rowprobe::storage {

/// Ranks packed as nibbles in one 64-bit word. L <= 16.
template <unsigned L>
    requires(L >= 1 && L <= 16)
class NibbleRankOrder {
public:
    constexpr NibbleRankOrder() noexcept {
        for (unsigned i = 0; i < L; ++i) m_ranks |= std::uint64_t{i} << (4 * i);  // slot i at rank i
    }
    /// The rank of slot `s`.
    constexpr unsigned rankOf(Slot s) const noexcept {
        return static_cast<unsigned>((m_ranks >> (4 * s)) & 0xF);
    }
    /// The slot holding `rank`.
    constexpr Slot at(unsigned rank) const noexcept {
        Slot found = 0;
        for (Slot i = 0; i < L; ++i) found = rankOf(i) == rank ? i : found;
        return found;
    }
    /// Rotates slot `s` to rank `to`; the slots between shift by one.
    constexpr void moveTo(Slot s, unsigned to) noexcept {
        const unsigned from = rankOf(s);
        for (Slot i = 0; i < L; ++i) {
            const unsigned r = rankOf(i);
            m_ranks += std::uint64_t{to < from && r >= to && r < from} << (4 * i);  // pushed back
            m_ranks -= std::uint64_t{to > from && r > from && r <= to} << (4 * i);  // pulled forward
        }
        m_ranks = (m_ranks & ~(std::uint64_t{0xF} << (4 * s))) | (std::uint64_t{to} << (4 * s));
    }
    /// The lowest-ranked slot whose bit is set in `freeMask`, or kNoSlot.
    constexpr Slot firstFree(std::uint32_t freeMask) const noexcept {
        Slot best = kNoSlot;
        unsigned bestRank = L;
        for (Slot i = 0; i < L; ++i) {
            if (((freeMask >> i) & 1U) != 0 && rankOf(i) < bestRank) {
                best = i;
                bestRank = rankOf(i);
            }
        }
        return best;
    }
    /// True when the ranks are a permutation of 0..L-1.
    constexpr bool valid() const noexcept {
        std::uint32_t seen = 0;
        for (Slot i = 0; i < L; ++i) seen |= std::uint32_t{1} << rankOf(i);
        if constexpr (L < 16) {
            if ((m_ranks >> (4 * L)) != 0) return false;  // nibbles past L stay zero
        }
        return seen == (std::uint32_t{1} << L) - 1;
    }

private:
    std::uint64_t m_ranks = 0;
};

/// Ranks as one byte per slot. Used for L = 32 (and testable for any L <= 32).
template <unsigned L>
    requires(L >= 1 && L <= kMaxLine)
class ByteRankOrder {
public:
    constexpr ByteRankOrder() noexcept {
        for (unsigned i = 0; i < L; ++i) m_ranks[i] = static_cast<std::uint8_t>(i);
    }
    constexpr unsigned rankOf(Slot s) const noexcept { return m_ranks[s]; }
    constexpr Slot at(unsigned rank) const noexcept {
        Slot found = 0;
        for (Slot i = 0; i < L; ++i) found = m_ranks[i] == rank ? i : found;
        return found;
    }
    constexpr void moveTo(Slot s, unsigned to) noexcept {
        const unsigned from = m_ranks[s];
        for (unsigned i = 0; i < L; ++i) {  // written to vectorise: no branch, no early exit
            const unsigned r = m_ranks[i];
            const unsigned up = to < from && r >= to && r < from ? 1U : 0U;
            const unsigned down = to > from && r > from && r <= to ? 1U : 0U;
            m_ranks[i] = static_cast<std::uint8_t>(r + up - down);
        }
        m_ranks[s] = static_cast<std::uint8_t>(to);
    }
    constexpr Slot firstFree(std::uint32_t freeMask) const noexcept {
        Slot best = kNoSlot;
        unsigned bestRank = L;
        for (Slot i = 0; i < L; ++i) {
            if (((freeMask >> i) & 1U) != 0 && m_ranks[i] < bestRank) {
                best = i;
                bestRank = m_ranks[i];
            }
        }
        return best;
    }
    constexpr bool valid() const noexcept {
        std::uint64_t seen = 0;
        for (unsigned i = 0; i < L; ++i) {
            if (m_ranks[i] >= L) return false;
            seen |= std::uint64_t{1} << m_ranks[i];
        }
        return seen == (std::uint64_t{1} << L) - 1;
    }

private:
    std::array<std::uint8_t, L> m_ranks{};
};

template <unsigned L>
concept RankableLine = L >= 1 && L <= kMaxLine;
template <unsigned L>
concept NibbleRankableLine = RankableLine<L> && L <= 16;

/// The order helper policies use: nibbles for L <= 16, one byte per slot for L = 32.
template <unsigned L>
    requires RankableLine<L>
class RankOrder : public ByteRankOrder<L> {};

template <unsigned L>
    requires NibbleRankableLine<L>
class RankOrder<L> : public NibbleRankOrder<L> {};

}  // namespace rowprobe::storage
