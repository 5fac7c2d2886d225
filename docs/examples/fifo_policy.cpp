// fifo: first in, first out — the example row policy of docs/writing-a-row-policy.md, built as
// a shared object (librowprobe-policy-fifo.so) and loaded with -s 'cache;policy=fifo'.
// Belady's FIFO (IBM Systems Journal 5(2), 1966) inside one row: a flow's rank is its age, the
// newest at rank 0; hits change nothing; the oldest flow (rank L-1) is the victim; a flow that
// leaves sends its hole to the tail, so occupied slots always hold ranks 0..n-1.
#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"

namespace example {

using namespace rowprobe;
using namespace rowprobe::storage;

template <unsigned L>
class FifoPolicy final : public PolicyBase<FifoPolicy<L>> {
public:
    static constexpr std::string_view kName = "fifo";
    struct RowState {
        RankOrder<L> order;  // rank 0 = newest flow, L-1 = oldest (or a hole)
    };
    struct SlotMeta {};
    using Row = RowRef<FifoPolicy, L>;
    using ConstRow = ConstRowRef<FifoPolicy, L>;

    explicit FifoPolicy(const Options&) {}

    void onHit(Row, Slot, const PacketContext&) noexcept {}
    void onInsert(Row row, Slot s, const PacketContext&, Vacancy) noexcept {
        row.state().order.moveTo(s, 0);
    }
    void onErase(Row row, Slot s, EndReason) noexcept { row.state().order.moveTo(s, L - 1); }
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        return row.state().order.at(L - 1);
    }
};

}  // namespace example

ROWPROBE_EXPORT_ROW_POLICY(example::FifoPolicy,
                           "FIFO: the oldest flow of the row leaves first (example library)");
