// ipfixprobe's row LRU (CESNET/ipfixprobe v5.7, storage plugin "cache"; docs/policies.md): a
// hit moves the flow to the front; a new flow takes the free slot nearest the front and stays
// there; in a full row the flow at the back is evicted and the new one enters at the middle, so
// a burst of new flows cannot push out the established front half. Faithful: holes keep their
// rank (a timeout can leave a hole at the front, and a new flow then lands at rank 0).
#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"

namespace rowprobe::storage {

template <unsigned L>
class LruPolicy final : public PolicyBase<LruPolicy<L>> {
public:
    static constexpr std::string_view kName = "lru";
    struct RowState {
        RankOrder<L> order;
    };
    struct SlotMeta {};
    using Row = RowRef<LruPolicy, L>;
    using ConstRow = ConstRowRef<LruPolicy, L>;

    explicit LruPolicy(const Options&) {}

    void onHit(Row row, Slot s, const PacketContext&) noexcept { row.state().order.moveTo(s, 0); }
    void onInsert(Row row, Slot s, const PacketContext&, Vacancy v) noexcept {
        if (v != Vacancy::Free) row.state().order.moveTo(s, L / 2);  // full row: enter mid-row
    }
    void onErase(Row, Slot, EndReason) noexcept {}  // the hole keeps its rank
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        return row.state().order.at(L - 1);
    }
};

ROWPROBE_REGISTER_ROW_POLICY(LruPolicy,
                             "ipfixprobe LRU: hit to front, new flows mid-row when full");

}  // namespace rowprobe::storage
