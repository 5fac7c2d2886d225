// 2q-full: full 2Q inside one row, with A1out holding live flows (docs/policies.md).
//
// Source: T. Johnson, D. Shasha, "2Q: A Low Overhead High Performance Buffer Management
// Replacement Algorithm", VLDB 1994 — the full version: A1in (FIFO of first accesses), A1out
// (flows that left A1in), Am (LRU of flows re-referenced after leaving A1in). A hit inside A1in
// is a correlated reference and does nothing. The thesis plugin `lru2qfullcache` (Zainullin
// 2024) keeps A1out as live records rather than ghost keys, so history costs capacity; rowprobe
// keeps that (the ghost version is `2q-ghost`).
//
// Row-local form. One rank order per row:
//
//   rank:  0 ..... in-1 | in ...... in+out-1 | in+out ...... used-1 | used ... L-1
//          A1in (FIFO)  | A1out (FIFO)       | Am (LRU)             | holes
//
// * Shares from option 2q-full-ratio A1in:A1out:Am (default 1:2:1): A1in holds at most Kin,
//   Am at most Km flows; A1out takes the rest.
// * New flow: A1in's head (rank 0). When A1in then exceeds Kin, its oldest flow becomes
//   A1out's head — a boundary shift, nothing moves.
// * Full row: the victim is A1out's tail; if A1out is empty, A1in's tail, else Am's tail.
// * Hit in A1in: nothing. Hit in A1out: promotion to Am's head; when Am already holds Km flows,
//   Am's tail is evicted first (lack of resources, as in the thesis). Hit in Am: to Am's head.
// * Removals compact the hole to the tail (rowprobe correction of the thesis's promotion into a
//   hole, which returned the wrong slot).
// Costs: at most one rotation per packet (~25 instructions); victim O(1).
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kTwoQFullOptions[] = {
    {.name = "2q-full-ratio",
     .type = OptionType::String,
     .defaultValue = "1:2:1",
     .help = "A1in:A1out:Am proportion of a row (each part at least one slot)"},
};
}  // namespace

template <unsigned L>
class TwoQFullPolicy final : public PolicyBase<TwoQFullPolicy<L>> {
public:
    static constexpr std::string_view kName = "2q-full";
    struct RowState {
        RankOrder<L> order;
        std::uint8_t in = 0;    ///< flows in A1in
        std::uint8_t out = 0;   ///< flows in A1out
        std::uint8_t used = 0;  ///< flows in the row
    };
    struct SlotMeta {};
    using Row = RowRef<TwoQFullPolicy, L>;
    using ConstRow = ConstRowRef<TwoQFullPolicy, L>;

    explicit TwoQFullPolicy(const Options& options) {
        const auto parts = policy::splitSlots(
            L, policy::parseRatio(options, "2q-full-ratio", 3, "A1in:A1out:Am"), 1);
        m_inMax = parts[0];
        m_amMax = parts[2];
    }

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        RowState& st = row.state();
        const unsigned r = st.order.rankOf(s);
        if (r < st.in) return;  // correlated reference
        if (r >= st.in + st.out) {
            st.order.moveTo(s, st.in + st.out);  // Am: to its head
            return;
        }
        if (unsigned{st.used} - st.in - st.out == m_amMax)
            row.evict(st.order.at(st.used - 1U), EndReason::LackOfResources);
        st.order.moveTo(s, st.in + st.out - 1U);  // A1out's last rank, which becomes Am's head
        --st.out;
    }
    void onInsert(Row row, Slot s, const PacketContext&, Vacancy) noexcept {
        RowState& st = row.state();
        st.order.moveTo(s, 0);
        ++st.used;
        if (++st.in > m_inMax) {  // A1in's oldest becomes A1out's head
            --st.in;
            ++st.out;
        }
    }
    void onErase(Row row, Slot s, EndReason) noexcept {
        RowState& st = row.state();
        const unsigned r = st.order.rankOf(s);
        if (r < st.in) {
            --st.in;
        } else if (r < st.in + st.out) {
            --st.out;
        }
        --st.used;
        st.order.moveTo(s, L - 1);
    }
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        const RowState& st = row.state();
        const unsigned rank = st.out > 0 ? st.in + st.out - 1U : st.in > 0 ? st.in - 1U : L - 1U;
        return st.order.at(rank);
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        const RowState& st = row.state();
        const unsigned r = st.order.rankOf(s);
        return r < st.in ? 'I' : r < st.in + st.out ? 'O' : r < st.used ? 'A' : ' ';
    }
    std::string checkRow(ConstRow row) const {
        const RowState& st = row.state();
        if (st.in > m_inMax) return "A1in over its share";
        if (st.in + st.out > st.used || unsigned{st.used} - st.in - st.out > m_amMax)
            return "Am over its share";
        for (unsigned r = 0; r < L; ++r) {
            if (row.occupied(st.order.at(r)) != (r < st.used))
                return "rank " + std::to_string(r) + ": holes are not at the tail";
        }
        return {};
    }

private:
    unsigned m_inMax = 1;  ///< Kin
    unsigned m_amMax = 1;  ///< Km
};

ROWPROBE_REGISTER_ROW_POLICY(TwoQFullPolicy,
                             "full 2Q: A1in FIFO, A1out of live flows, Am LRU (Johnson & Shasha "
                             "1994; thesis lru2qfullcache)",
                             kTwoQFullOptions);

}  // namespace rowprobe::storage
