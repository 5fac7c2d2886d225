// heap-lru: exact LRU kept as a binary min-heap per row (docs/policies.md).
//
// Source: the thesis plugin `lrumhcache` (Zainullin, CTU FIT 2024, branch feature/LRU-maxheap):
// each row is a binary heap on last-access time, root = least recent = victim; a hit or a new
// flow becomes the newest and sinks to a leaf, O(log L) moves instead of the O(L) shift of an
// array LRU. The behaviour is plain LRU (Mattson et al. 1970) with new flows inserted as most
// recent, unlike ipfixprobe's `lru`, which inserts mid-row when the row is full.
//
// Row-local form: RowState holds the heap as slot numbers (heap[0] = victim) and a per-row
// logical clock; SlotMeta holds each slot's last-access stamp. The clock counts the row's
// accesses, so "least recent" is exact (no timestamp ties); before it wraps, the stamps are
// replaced by their ranks (order preserved). Records never move; only slot numbers in the heap.
// position() is the thesis lookup length: the distance of the flow's heap node from the end.
// Costs: hit = find the slot in the heap (L byte compares) + sift-down (<= log2 L swaps);
// victim = heap[0], O(1).
#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

template <unsigned L>
class HeapLruPolicy final : public PolicyBase<HeapLruPolicy<L>> {
public:
    static constexpr std::string_view kName = "heap-lru";
    struct RowState {
        std::array<Slot, L> heap{};  ///< heap[0..count): occupied slots, min-heap on stamp
        std::uint8_t count = 0;
        std::uint32_t clock = 0;  ///< last stamp handed out in this row
    };
    struct SlotMeta {
        std::uint32_t stamp = 0;  ///< logical time of the flow's last packet
    };
    using Row = RowRef<HeapLruPolicy, L>;
    using ConstRow = ConstRowRef<HeapLruPolicy, L>;

    explicit HeapLruPolicy(const Options&) {}

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        RowState& st = row.state();
        row.meta(s).stamp = tick(row);
        siftDown(row, indexOf(st, s));  // the newest sinks to a leaf
    }
    void onInsert(Row row, Slot s, const PacketContext&, Vacancy) noexcept {
        RowState& st = row.state();
        row.meta(s).stamp = tick(row);
        st.heap[st.count++] = s;  // the largest stamp is a valid leaf where it stands
    }
    void onErase(Row row, Slot s, EndReason) noexcept {
        RowState& st = row.state();
        const unsigned i = indexOf(st, s);
        const Slot last = st.heap[--st.count];
        if (i == st.count) return;
        st.heap[i] = last;
        siftDown(row, i);
        siftUp(row, i);
    }
    Slot victim(ConstRow row, const PacketContext&) const noexcept { return row.state().heap[0]; }

    unsigned position(ConstRow row, Slot s) const noexcept {
        const RowState& st = row.state();
        return st.count - 1U - indexOf(st, s);
    }

    std::string checkRow(ConstRow row) const {
        const RowState& st = row.state();
        if (st.count != static_cast<unsigned>(std::popcount(~row.freeMask() & kAll))) {
            return "heap holds " + std::to_string(st.count) + " slots, the row " +
                   std::to_string(std::popcount(~row.freeMask() & kAll)) + " flows";
        }
        std::uint32_t seen = 0;
        for (unsigned i = 0; i < st.count; ++i) {
            const Slot s = st.heap[i];
            if (s >= L || !row.occupied(s) || ((seen >> s) & 1U) != 0)
                return "heap entry " + std::to_string(i) + " is not a distinct live slot";
            seen |= std::uint32_t{1} << s;
            if (i > 0 && row.meta(s).stamp < row.meta(st.heap[(i - 1) / 2]).stamp)
                return "heap order broken at " + std::to_string(i);
            if (row.meta(s).stamp > st.clock) return "stamp ahead of the row clock";
        }
        return {};
    }

private:
    static constexpr std::uint32_t kAll = L == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << L) - 1;

    static unsigned indexOf(const RowState& st, Slot s) noexcept {  // s is in the heap
        unsigned i = 0;
        while (i + 1 < st.count && st.heap[i] != s) ++i;
        return i;
    }

    static std::uint32_t tick(Row row) noexcept {
        RowState& st = row.state();
        if (st.clock == ~std::uint32_t{0}) {  // once per 4e9 accesses of this row
            std::array<std::uint32_t*, L> stamps{};
            for (unsigned i = 0; i < st.count; ++i) stamps[i] = &row.meta(st.heap[i]).stamp;
            st.clock = policy::renormalise(stamps, st.count);
        }
        return ++st.clock;
    }

    static void siftDown(Row row, unsigned i) noexcept {
        RowState& st = row.state();
        for (;;) {
            const unsigned l = 2 * i + 1;
            if (l >= st.count) return;
            unsigned c = l;
            if (l + 1 < st.count && row.meta(st.heap[l + 1]).stamp < row.meta(st.heap[l]).stamp)
                c = l + 1;
            if (row.meta(st.heap[c]).stamp >= row.meta(st.heap[i]).stamp) return;
            std::swap(st.heap[c], st.heap[i]);
            i = c;
        }
    }

    static void siftUp(Row row, unsigned i) noexcept {
        RowState& st = row.state();
        while (i > 0) {
            const unsigned p = (i - 1) / 2;
            if (row.meta(st.heap[i]).stamp >= row.meta(st.heap[p]).stamp) return;
            std::swap(st.heap[p], st.heap[i]);
            i = p;
        }
    }
};

ROWPROBE_REGISTER_ROW_POLICY(
    HeapLruPolicy, "exact LRU on a per-row min-heap, new flows as most recent (thesis lrumhcache)");

}  // namespace rowprobe::storage
