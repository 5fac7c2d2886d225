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
// Costs (L = 16, x86-64, -O2): rankOf 2 instructions; moveTo ~25 instructions, branch-free
// (SWAR over all 16 nibbles at once, see moveTo); at ~6; firstFree one pass of 16 compares.
// All on the row's own cache line, which the lookup has already loaded. The byte form is a
// loop the compiler vectorises (32 bytes = one AVX2 register).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "cache/slot.hpp"

namespace rowprobe::storage {

/// Ranks packed as nibbles in one 64-bit word. L <= 16.
template <unsigned L>
requires(L >= 1 && L <= 16) class NibbleRankOrder {
public:
    constexpr NibbleRankOrder() noexcept {
        for (unsigned i = 0; i < L; ++i)
            m_ranks |= std::uint64_t{i} << (4 * i);  // slot i at rank i
    }
    /// The rank of slot `s`.
    constexpr unsigned rankOf(Slot s) const noexcept {
        return static_cast<unsigned>((m_ranks >> (4 * s)) & 0xF);
    }
    /// The slot holding `rank`: the lowest nibble equal to `rank` (SWAR zero-nibble search;
    /// a borrow can only flag nibbles above the first true match, and nibbles past L sit above).
    constexpr Slot at(unsigned rank) const noexcept {
        const std::uint64_t t = m_ranks ^ (kOnes * rank);
        const std::uint64_t zero = (t - kOnes) & ~t & kHighBits;
        return static_cast<Slot>(std::countr_zero(zero) / 4);
    }
    /// Rotates slot `s` to rank `to`; the slots between shift by one.
    ///
    /// Branch-free SWAR: the 16 nibbles are spread over the bytes of two words (even and odd
    /// slots), so every rank has 4 spare bits; one subtraction per word compares all ranks with
    /// a bound ((x | 0x80) - c keeps bit 7 iff x >= c, and never borrows across bytes since
    /// x, c <= 16). Ranks in [lo, hi) move by one: +1 when s moves forward, -1 when it moves
    /// back. Equivalent to this loop, one slot at a time:
    ///     r = rankOf(i);
    ///     r += to < from && r >= to && r < from;
    ///     r -= to > from && r > from && r <= to;
    constexpr void moveTo(Slot s, unsigned to) noexcept {
        const unsigned from = rankOf(s);
        const bool forward = to < from;
        const std::uint64_t lo = kBytes * (forward ? to : from + 1);
        const std::uint64_t hi = kBytes * (forward ? from : to + 1);
        auto shift = [&](std::uint64_t x) {  // x: one rank per byte, each <= 15
            const std::uint64_t inRange =
                ((x | kByteHigh) - lo) & ~((x | kByteHigh) - hi) & kByteHigh;
            const std::uint64_t ones = inRange >> 7;
            return forward ? x + ones : x - ones;
        };
        const std::uint64_t even = shift(m_ranks & kLowNibbles);
        const std::uint64_t odd = shift((m_ranks >> 4) & kLowNibbles);
        const std::uint64_t ranks = ((even & kLowNibbles) | ((odd & kLowNibbles) << 4)) & kUsed;
        m_ranks = (ranks & ~(std::uint64_t{0xF} << (4 * s))) | (std::uint64_t{to} << (4 * s));
    }
    /// The lowest-ranked slot whose bit is set in `freeMask`, or kNoSlot.
    constexpr Slot firstFree(std::uint32_t freeMask) const noexcept {
        Slot best = kNoSlot;
        unsigned bestRank = L;
        for (Slot i = 0; i < Slot{L}; ++i) {
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
        for (Slot i = 0; i < Slot{L}; ++i) seen |= std::uint32_t{1} << rankOf(i);
        if constexpr (L < 16) {
            if ((m_ranks >> (4 * L)) != 0) return false;  // nibbles past L stay zero
        }
        return seen == (std::uint32_t{1} << L) - 1;
    }

private:
    static constexpr std::uint64_t kOnes = 0x1111'1111'1111'1111ULL;      // 1 in every nibble
    static constexpr std::uint64_t kHighBits = 0x8888'8888'8888'8888ULL;  // bit 3 of every nibble
    static constexpr std::uint64_t kBytes = 0x0101'0101'0101'0101ULL;     // 1 in every byte
    static constexpr std::uint64_t kByteHigh = 0x8080'8080'8080'8080ULL;  // bit 7 of every byte
    static constexpr std::uint64_t kLowNibbles = 0x0F0F'0F0F'0F0F'0F0FULL;
    static constexpr std::uint64_t kUsed =
        L == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * L)) - 1;

    std::uint64_t m_ranks = 0;
};

/// Ranks as one byte per slot. Used for L = 32 (and testable for any L <= 32).
template <unsigned L>
requires(L >= 1 && L <= kMaxLine) class ByteRankOrder {
public:
    constexpr ByteRankOrder() noexcept {
        for (unsigned i = 0; i < L; ++i) m_ranks[i] = static_cast<std::uint8_t>(i);
    }
    constexpr unsigned rankOf(Slot s) const noexcept { return m_ranks[s]; }
    constexpr Slot at(unsigned rank) const noexcept {
        Slot found = 0;
        for (Slot i = 0; i < Slot{L}; ++i) found = m_ranks[i] == rank ? i : found;
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
        for (Slot i = 0; i < Slot{L}; ++i) {
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
class RankOrder : public ByteRankOrder<L> {
};

template <unsigned L>
requires NibbleRankableLine<L>
class RankOrder<L> : public NibbleRankOrder<L> {
};

}  // namespace rowprobe::storage
