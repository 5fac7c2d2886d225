// 2q-ghost: the true 2Q inside one row, A1out as ghost keys (docs/policies.md).
//
// Source: T. Johnson, D. Shasha, "2Q: A Low Overhead High Performance Buffer Management
// Replacement Algorithm", VLDB 1994 (full version): A1in is a FIFO of first accesses (~25 % of
// the buffer, Kin), A1out remembers only the identities of flows that left A1in (~50 % of the
// buffer in entries, Kout), Am is an LRU of flows that came back while remembered in A1out. A
// hit inside A1in is a correlated reference and does nothing. Unlike `2q-full`, history costs
// no flow slots.
//
// Row-local form:
//
//   rank:  0 ...... am-1 | am ........ used-1 | used ... L-1      ghosts: fragment FIFO (<= 8)
//          Am (LRU)      | A1in (FIFO, head am) | holes             oldest dropped first
//
// * New flow: if its ghost fragment (hash bits 32..47, policy_util.hpp) is in A1out it goes to
//   Am's head and the ghost is removed, else to A1in's head.
// * Full row: if A1in holds more than Kin flows (option 2q-ghost-kin, % of L, default 25) or Am
//   is empty, evict A1in's tail and remember it in A1out; else evict Am's tail (no ghost).
// * Only evictions of A1in flows leave ghosts: a flow that ended (timeout, FIN) is gone.
// * Kout = min(8, option 2q-ghost-out, default 8) fragments per row: RowState stays <= 64 bytes
//   for L = 32 (32 rank bytes + 16 ghost bytes + counters).
// Costs: hit in Am one rotation; insert scans <= 8 fragments; victim O(1).
#include <algorithm>
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kTwoQGhostOptions[] = {
    {.name = "2q-ghost-kin",
     .type = OptionType::Int,
     .defaultValue = "25",
     .help = "A1in share in % of the row (Kin); above it, A1in's tail is evicted first",
     .min = 1,
     .max = 90},
    {.name = "2q-ghost-out",
     .type = OptionType::Int,
     .defaultValue = "8",
     .help = "A1out ghost entries per row (Kout)",
     .min = 0,
     .max = 8},
};
}  // namespace

template <unsigned L>
class TwoQGhostPolicy final : public PolicyBase<TwoQGhostPolicy<L>> {
public:
    static constexpr std::string_view kName = "2q-ghost";
    struct RowState {
        RankOrder<L> order;
        policy::GhostFifo<8> ghosts;  ///< A1out
        std::uint8_t am = 0;          ///< flows in Am
        std::uint8_t used = 0;        ///< flows in the row
    };
    struct SlotMeta {};
    using Row = RowRef<TwoQGhostPolicy, L>;
    using ConstRow = ConstRowRef<TwoQGhostPolicy, L>;

    explicit TwoQGhostPolicy(const Options& options)
        : m_kin(std::max(1U, static_cast<unsigned>(options.getInt("2q-ghost-kin")) * L / 100U)),
          m_kout(static_cast<unsigned>(options.getInt("2q-ghost-out"))) {}

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        RowState& st = row.state();
        if (st.order.rankOf(s) < st.am)
            st.order.moveTo(s, 0);  // Am: LRU; A1in: correlated, no move
    }
    void onInsert(Row row, Slot s, const PacketContext& ctx, Vacancy) noexcept {
        RowState& st = row.state();
        ++st.used;
        if (st.ghosts.take(policy::ghostFragment(ctx.hash))) {
            st.order.moveTo(s, 0);
            ++st.am;
        } else {
            st.order.moveTo(s, st.am);
        }
    }
    void onErase(Row row, Slot s, EndReason why) noexcept {
        RowState& st = row.state();
        if (st.order.rankOf(s) < st.am) {
            --st.am;
        } else if (why == EndReason::LackOfResources) {
            st.ghosts.push(policy::ghostFragment(row.hash(s)), m_kout);
        }
        --st.used;
        st.order.moveTo(s, L - 1);
    }
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        const RowState& st = row.state();
        const bool a1Over = unsigned{st.used} - st.am > m_kin || st.am == 0;
        return st.order.at(a1Over ? st.used - 1U : st.am - 1U);
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        const RowState& st = row.state();
        const unsigned r = st.order.rankOf(s);
        return r < st.am ? 'A' : r < st.used ? 'I' : ' ';
    }
    std::string checkRow(ConstRow row) const {
        const RowState& st = row.state();
        if (st.am > st.used) return "Am larger than the row";
        if (st.ghosts.count > m_kout) return "more ghosts than Kout";
        for (unsigned r = 0; r < L; ++r) {
            if (row.occupied(st.order.at(r)) != (r < st.used))
                return "rank " + std::to_string(r) + ": holes are not at the tail";
        }
        return {};
    }

private:
    unsigned m_kin;
    unsigned m_kout;
};

ROWPROBE_REGISTER_ROW_POLICY(
    TwoQGhostPolicy, "true 2Q: A1in FIFO, A1out ghost fragments, Am LRU (Johnson & Shasha 1994)",
    kTwoQGhostOptions);

}  // namespace rowprobe::storage
