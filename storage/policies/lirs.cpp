// lirs: Low Inter-reference Recency Set inside one row (docs/policies.md).
//
// Source: S. Jiang, X. Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement
// Policy to Improve Buffer Cache Performance", SIGMETRICS 2002. Flows whose packets come back
// quickly (low inter-reference recency) are LIR and stay; the few remaining slots hold resident
// HIR flows in a FIFO Q, which is where victims come from. The recency stack S orders LIRs,
// resident HIRs and non-resident HIR "ghosts" by last access; a HIR flow referenced again while
// still in S has proven a short recency and becomes LIR, pushing the bottom LIR out to Q. The
// stack is pruned so that its bottom is always a LIR. The thesis plugin `lirscache` had index
// bugs (wrong slot returned, a demoted pointer left in two places); rowprobe follows the paper.
//
// Row-local form:
// * At most L - H LIR flows and H resident HIRs per row, H = option lirs-hir (default
//   max(1, L/16), the paper's ~1 %); at most G ghosts (option lirs-ghosts, <= 8) — 16-bit hash
//   fragments of evicted HIR flows (policy_util.hpp).
// * S order = a per-row logical clock: SlotMeta.s is the flow's last access, a ghost carries the
//   access time it had when evicted. A flow is in S when it is LIR or its `inS` bit is set.
//   Q order = SlotMeta.q, the time the flow (re)entered Q; Q's head = the oldest q.
//   Pruning needs no list walk: every HIR entry (resident or ghost) older than the oldest LIR
//   leaves S. `bottom` caches the oldest LIR.
// * Hit on a LIR: to S's top; prune if it was the bottom.
//   Hit on a resident HIR in S: becomes LIR (to S's top, out of Q); if that makes L - H + 1
//   LIRs, the bottom LIR becomes a resident HIR at Q's tail (out of S); prune.
//   Hit on a resident HIR not in S: to S's top (stays HIR) and to Q's tail.
// * New flow: LIR while fewer than L - H LIRs exist; else, if its fragment is a ghost, LIR
//   (the bottom LIR is demoted to Q's tail, prune); else resident HIR at S's top and Q's tail.
// * Full row: the victim is Q's head (H >= 1 resident HIRs exist whenever the row is full). An
//   evicted HIR still in S stays as a ghost; flows that end (timeout, FIN) leave no ghost.
// * Stamps are 16-bit and renormalised (ranks, order kept) before the clock wraps.
// RowState: two masks, clock, bottom, ghosts (G fragments + G stamps) = 46 bytes for any L.
// Costs: a hit on a LIR that is not the bottom is two stores; demotion and pruning one pass over
// L slots and G ghosts; victim one pass over L q-stamps.
#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kLirsOptions[] = {
    {.name = "lirs-hir",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "resident HIR slots per row (H; the LIR set gets L-H); 0 = max(1, L/16)",
     .min = 0,
     .max = 16},
    {.name = "lirs-ghosts",
     .type = OptionType::Int,
     .defaultValue = "8",
     .help = "non-resident HIR ghosts kept in a row's stack",
     .min = 0,
     .max = 8},
};
}  // namespace

template <unsigned L>
class LirsPolicy final : public PolicyBase<LirsPolicy<L>> {
public:
    static constexpr std::string_view kName = "lirs";
    static constexpr unsigned kMaxGhosts = 8;
    struct RowState {
        std::uint32_t lir = 0;  ///< bit s: slot s holds a LIR flow
        std::uint32_t inS = 0;  ///< bit s: resident HIR slot s is in the stack
        std::uint16_t clock = 0;
        std::array<std::uint16_t, kMaxGhosts> ghostFrag{};
        std::array<std::uint16_t, kMaxGhosts> ghostStamp{};
        std::uint8_t ghosts = 0;  ///< valid ghost entries [0, ghosts)
        std::uint8_t bottom = 0;  ///< the oldest LIR (meaningful when lir != 0)
    };
    struct SlotMeta {
        std::uint16_t s = 0;  ///< last access (S order)
        std::uint16_t q = 0;  ///< entry into Q (Q order), for resident HIRs
    };
    using Row = RowRef<LirsPolicy, L>;
    using ConstRow = ConstRowRef<LirsPolicy, L>;

    explicit LirsPolicy(const Options& options)
        : m_hir(options.getInt("lirs-hir") == 0
                    ? std::max(1U, L / 16)
                    : static_cast<unsigned>(options.getInt("lirs-hir"))),
          m_ghostCap(static_cast<unsigned>(options.getInt("lirs-ghosts"))) {
        if (m_hir >= L) {
            options.fail("lirs-hir", "must be below line (" + std::to_string(L) +
                                         ") so that LIR flows have room, got " +
                                         std::to_string(m_hir));
        }
    }

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        RowState& st = row.state();
        const std::uint32_t bit = std::uint32_t{1} << s;
        const std::uint16_t now = tick(row);
        row.meta(s).s = now;
        if ((st.lir & bit) != 0) {
            if (st.bottom == s) settle(row);
            return;
        }
        if ((st.inS & bit) != 0) {  // short recency proven: HIR → LIR
            st.inS &= ~bit;
            st.lir |= bit;
            if (lirCount(st) > L - m_hir) demoteBottom(row, now);
            settle(row);
            return;
        }
        st.inS |= bit;  // back into S as a HIR, and to Q's tail
        row.meta(s).q = now;
    }

    void onInsert(Row row, Slot s, const PacketContext& ctx, Vacancy) noexcept {
        RowState& st = row.state();
        const std::uint32_t bit = std::uint32_t{1} << s;
        const std::uint16_t now = tick(row);
        row.meta(s) = {now, now};
        const bool wasGhost = takeGhost(st, policy::ghostFragment(ctx.hash));
        if (lirCount(st) < L - m_hir) {
            st.lir |= bit;
            if (lirCount(st) == 1) st.bottom = s;
            return;
        }
        if (wasGhost) {
            st.lir |= bit;
            demoteBottom(row, now);
            settle(row);
            return;
        }
        st.inS |= bit;
    }

    void onErase(Row row, Slot s, EndReason why) noexcept {
        RowState& st = row.state();
        const std::uint32_t bit = std::uint32_t{1} << s;
        if ((st.lir & bit) != 0) {
            st.lir &= ~bit;
            if (st.bottom == s) settle(row);
            return;
        }
        if ((st.inS & bit) != 0 && why == EndReason::LackOfResources && m_ghostCap > 0) {
            addGhost(st, policy::ghostFragment(row.hash(s)), row.meta(s).s);
        }
        st.inS &= ~bit;
    }

    Slot victim(ConstRow row, const PacketContext&) const noexcept {  // Q's head
        const RowState& st = row.state();
        Slot best = 0;
        unsigned bestQ = ~0U;
        for (Slot s = 0; s < Slot{L}; ++s) {
            const bool hir = ((st.lir >> s) & 1U) == 0;
            if (hir && row.meta(s).q < bestQ) {
                best = s;
                bestQ = row.meta(s).q;
            }
        }
        return best;
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        if (!row.occupied(s)) return ' ';
        const RowState& st = row.state();
        return ((st.lir >> s) & 1U) != 0   ? 'L'
               : ((st.inS >> s) & 1U) != 0 ? 'H'
                                           : 'h';  // h: HIR not in S
    }

    std::string checkRow(ConstRow row) const {
        const RowState& st = row.state();
        const std::uint32_t occupied = ~row.freeMask() & kAll;
        if ((st.lir & ~occupied) != 0 || (st.inS & ~occupied) != 0 || (st.lir & st.inS) != 0)
            return "flag bits on a free slot";
        if (lirCount(st) > L - m_hir) return "more than L-H LIR flows";
        if (static_cast<unsigned>(std::popcount(occupied & ~st.lir)) > m_hir)
            return "more than H resident HIR flows";
        if (st.ghosts > m_ghostCap) return "more ghosts than allowed";
        if (st.lir == 0)
            return st.inS != 0 || st.ghosts != 0 ? "HIR entries in a stack without LIR" : "";
        if (((st.lir >> st.bottom) & 1U) == 0) return "bottom is not a LIR";
        const std::uint16_t floor = row.meta(st.bottom).s;
        for (Slot s = 0; s < Slot{L}; ++s) {
            if (((st.lir >> s) & 1U) != 0 && row.meta(s).s < floor)
                return "bottom is not the oldest LIR";
            if (((st.inS >> s) & 1U) != 0 && row.meta(s).s < floor)
                return "HIR below the stack's bottom LIR (not pruned)";
        }
        for (unsigned g = 0; g < st.ghosts; ++g) {
            if (st.ghostStamp[g] < floor) return "ghost below the stack's bottom LIR (not pruned)";
        }
        return {};
    }

private:
    static constexpr std::uint32_t kAll = L == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << L) - 1;

    static unsigned lirCount(const RowState& st) noexcept {
        return static_cast<unsigned>(std::popcount(st.lir));
    }

    /// Recomputes the bottom LIR and prunes every HIR entry below it.
    static void settle(Row row) noexcept {
        RowState& st = row.state();
        if (st.lir == 0) {  // nothing can be below an absent bottom: the stack is empty
            st.inS = 0;
            st.ghosts = 0;
            return;
        }
        if (std::has_single_bit(st.lir)) {  // sparse rows: the only LIR is the bottom
            st.bottom = static_cast<std::uint8_t>(std::countr_zero(st.lir));
        } else {
            unsigned oldest = ~0U;
            for (Slot s = 0; s < Slot{L}; ++s) {
                if (((st.lir >> s) & 1U) != 0 && row.meta(s).s < oldest) {
                    oldest = row.meta(s).s;
                    st.bottom = s;
                }
            }
        }
        if (st.inS == 0 && st.ghosts == 0) return;  // no HIR entry to prune
        const unsigned floor = row.meta(st.bottom).s;
        for (Slot s = 0; s < Slot{L}; ++s) {
            if (row.meta(s).s < floor) st.inS &= ~(std::uint32_t{1} << s);
        }
        unsigned kept = 0;
        for (unsigned g = 0; g < st.ghosts; ++g) {
            if (st.ghostStamp[g] >= floor) {
                st.ghostFrag[kept] = st.ghostFrag[g];
                st.ghostStamp[kept++] = st.ghostStamp[g];
            }
        }
        st.ghosts = static_cast<std::uint8_t>(kept);
    }

    /// The bottom LIR becomes a resident HIR at Q's tail, outside S.
    static void demoteBottom(Row row, std::uint16_t now) noexcept {
        RowState& st = row.state();
        unsigned floor = ~0U;
        Slot b = 0;
        for (Slot s = 0; s < Slot{L}; ++s) {
            if (((st.lir >> s) & 1U) != 0 && row.meta(s).s < floor) {
                floor = row.meta(s).s;
                b = s;
            }
        }
        st.lir &= ~(std::uint32_t{1} << b);
        row.meta(b).q = now;
    }

    void addGhost(RowState& st, std::uint16_t frag, std::uint16_t stamp) const noexcept {
        if (st.ghosts == m_ghostCap) {  // drop the oldest
            unsigned oldest = 0;
            for (unsigned g = 1; g < st.ghosts; ++g)
                oldest = st.ghostStamp[g] < st.ghostStamp[oldest] ? g : oldest;
            st.ghostFrag[oldest] = st.ghostFrag[st.ghosts - 1U];
            st.ghostStamp[oldest] = st.ghostStamp[st.ghosts - 1U];
            --st.ghosts;
        }
        st.ghostFrag[st.ghosts] = frag;
        st.ghostStamp[st.ghosts++] = stamp;
    }

    static bool takeGhost(RowState& st, std::uint16_t frag) noexcept {
        for (unsigned g = 0; g < st.ghosts; ++g) {
            if (st.ghostFrag[g] == frag) {
                st.ghostFrag[g] = st.ghostFrag[st.ghosts - 1U];
                st.ghostStamp[g] = st.ghostStamp[st.ghosts - 1U];
                --st.ghosts;
                return true;
            }
        }
        return false;
    }

    static std::uint16_t tick(Row row) noexcept {
        RowState& st = row.state();
        if (st.clock == 0xFFFF) renormaliseClock(row);
        return ++st.clock;
    }

    /// Replaces the S stamps (LIRs, HIRs in S, ghosts) and the Q stamps (resident HIRs) by their
    /// ranks, preserving both orders. Once per 65 535 accesses of a row.
    static void renormaliseClock(Row row) noexcept {
        RowState& st = row.state();
        std::array<std::uint16_t*, L + kMaxGhosts> sStamps{};
        std::array<std::uint16_t*, L> qStamps{};
        std::size_t ns = 0;
        std::size_t nq = 0;
        for (Slot s = 0; s < Slot{L}; ++s) {
            if (!row.occupied(s)) continue;
            const bool lir = ((st.lir >> s) & 1U) != 0;
            if (lir || ((st.inS >> s) & 1U) != 0) sStamps[ns++] = &row.meta(s).s;
            if (!lir) qStamps[nq++] = &row.meta(s).q;
        }
        for (unsigned g = 0; g < st.ghosts; ++g) sStamps[ns++] = &st.ghostStamp[g];
        const std::uint32_t topS = policy::renormalise(sStamps, ns);
        const std::uint32_t topQ = policy::renormalise(qStamps, nq);
        for (Slot s = 0; s < Slot{L}; ++s) {  // stamps outside both orders must not look recent
            const bool lir = ((st.lir >> s) & 1U) != 0;
            if (!row.occupied(s))
                row.meta(s) = {0, 0};
            else if (!lir && ((st.inS >> s) & 1U) == 0)
                row.meta(s).s = 0;
        }
        st.clock = static_cast<std::uint16_t>(std::max(topS, topQ));
    }

    unsigned m_hir;       ///< H
    unsigned m_ghostCap;  ///< G
};

ROWPROBE_REGISTER_ROW_POLICY(LirsPolicy,
                             "LIRS: LIR flows stay, victims from a small FIFO of HIR flows, ghosts "
                             "and pruning (Jiang & Zhang 2002)",
                             kLirsOptions);

}  // namespace rowprobe::storage
