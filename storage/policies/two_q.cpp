// 2q: simplified 2Q inside one row (docs/policies.md).
//
// Source: T. Johnson, D. Shasha, "2Q: A Low Overhead High Performance Buffer Management
// Replacement Algorithm", VLDB 1994 — the "simplified 2Q": a FIFO probation queue A1 for first
// accesses and an LRU queue Am for flows seen again; a flow is promoted from A1 to Am on its
// second access, so a burst of one-packet flows (scans, floods) only churns A1. The thesis
// plugin `lru2qcache` (Zainullin 2024) splits each row at a fixed delimiter D (Am:A1 = 1:1).
//
// Row-local form. One rank order per row:
//
//   rank:  0 ........ am-1 | am ......... used-1 | used ..... L-1
//          Am (LRU, head 0) | A1 (FIFO, head am)  | holes
//
// * Am holds at most D = L·Am/(Am+A1) flows (option 2q-ratio, default 1:1); A1 takes the rest,
//   and while Am is below its share A1 may use Am's free slots (a row never refuses a free slot).
// * New flow: A1's head. Full row: the victim is A1's tail (rank L-1) — A1 is never empty in a
//   full row because Am <= D < L.
// * Hit in Am: to Am's head. Hit in A1: promotion to Am's head; if Am already holds D flows,
//   Am's tail is evicted first (exported as lack of resources, as the thesis does).
// * Every removal compacts the hole to the tail (rowprobe correction: the thesis searched holes
//   from the end without repositioning and, on promotion into a hole, returned the wrong slot).
// Costs: hit in Am = one rotation (~25 instructions); promotion = one rotation, plus an export
// when Am is full; victim O(1).
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kTwoQOptions[] = {
    {.name = "2q-ratio",
     .type = OptionType::String,
     .defaultValue = "1:1",
     .help =
         "Am:A1 proportion of a row: Am (LRU, flows seen twice) gets L*Am/(Am+A1) slots at most"},
};
}  // namespace

template <unsigned L>
class TwoQPolicy final : public PolicyBase<TwoQPolicy<L>> {
public:
    static constexpr std::string_view kName = "2q";
    struct RowState {
        RankOrder<L> order;
        std::uint8_t am = 0;    ///< flows in Am (ranks [0, am))
        std::uint8_t used = 0;  ///< flows in the row (Am then A1: ranks [0, used))
    };
    struct SlotMeta {};
    using Row = RowRef<TwoQPolicy, L>;
    using ConstRow = ConstRowRef<TwoQPolicy, L>;

    explicit TwoQPolicy(const Options& options)
        : m_amMax(
              policy::splitSlots(L, policy::parseRatio(options, "2q-ratio", 2, "Am:A1"), 1)[0]) {}

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        RowState& st = row.state();
        if (st.order.rankOf(s) < st.am) {
            st.order.moveTo(s, 0);
            return;
        }
        if (st.am == m_amMax)
            row.evict(st.order.at(st.am - 1U), EndReason::LackOfResources);  // Am's tail
        st.order.moveTo(s,
                        0);  // A1 → Am's head; the Am flows shift back by one, A1 keeps its order
        ++st.am;
    }
    void onInsert(Row row, Slot s, const PacketContext&, Vacancy) noexcept {
        RowState& st = row.state();
        st.order.moveTo(s, st.am);  // A1's head
        ++st.used;
    }
    void onErase(Row row, Slot s, EndReason) noexcept {
        RowState& st = row.state();
        if (st.order.rankOf(s) < st.am) --st.am;
        --st.used;
        st.order.moveTo(s, L - 1);  // the hole to the tail
    }
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        return row.state().order.at(L - 1);
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        const RowState& st = row.state();
        const unsigned r = st.order.rankOf(s);
        return r < st.am ? 'A' : r < st.used ? '1' : ' ';
    }
    std::string checkRow(ConstRow row) const {
        const RowState& st = row.state();
        if (st.am > m_amMax)
            return "Am holds " + std::to_string(st.am) + " flows, more than " +
                   std::to_string(m_amMax);
        if (st.am > st.used) return "Am larger than the row";
        for (unsigned r = 0; r < L; ++r) {
            if (row.occupied(st.order.at(r)) != (r < st.used))
                return "rank " + std::to_string(r) + ": holes are not at the tail";
        }
        return {};
    }

private:
    unsigned m_amMax;  ///< D: Am's share of the row
};

ROWPROBE_REGISTER_ROW_POLICY(
    TwoQPolicy,
    "simplified 2Q: A1 FIFO for new flows, Am LRU after a second hit (Johnson & Shasha 1994)",
    kTwoQOptions);

}  // namespace rowprobe::storage
