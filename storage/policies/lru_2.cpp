// lru-2: LRU-K with K = 2 inside one row (docs/policies.md).
//
// Source: E. O'Neil, P. O'Neil, G. Weikum, "The LRU-K Page Replacement Algorithm For Database
// Disk Buffering", SIGMOD 1993: evict the entry whose K-th most recent reference is oldest
// (largest backward K-distance); entries referenced fewer than K times have infinite distance
// and go first, the least recently used of them first. K = 2 separates flows seen once (scans,
// single-packet probes) from flows that came back. The thesis plugin `lru2cache` (Zainullin
// 2024) mixed orderings across its paths and, with no seen-once flow, evicted the *newest*
// penultimate reference — rowprobe implements the paper's rule.
//
// Row-local form: "time" is a per-row logical clock counting the row's packets (the paper's
// reference-string index), so there are no timestamp ties; SlotMeta holds the last and the
// penultimate reference of each flow (penultimate 0 = seen once). History is kept only while
// the flow is cached (no retained-information period, no correlated-reference period: a row has
// no room for either). Before the clock wraps, stamps are replaced by their ranks.
// * Hit: penultimate = last, last = now. No reordering. Free slot: the lowest-numbered.
// * Full row: among flows seen once, the oldest last reference; if none, the oldest
//   penultimate reference.
// Costs: hit two stores; victim one pass over L SlotMeta entries on the row's lines.
#include <array>
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

template <unsigned L>
class Lru2Policy final : public PolicyBase<Lru2Policy<L>> {
public:
    static constexpr std::string_view kName = "lru-2";
    struct RowState {
        std::uint32_t clock = 0;  ///< last stamp handed out in this row
    };
    struct SlotMeta {
        std::uint32_t last = 0;  ///< most recent reference
        std::uint32_t prev = 0;  ///< the one before; 0 = seen once
    };
    using Row = RowRef<Lru2Policy, L>;
    using ConstRow = ConstRowRef<Lru2Policy, L>;

    explicit Lru2Policy(const Options&) {}

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        const std::uint32_t now = tick(row);
        SlotMeta& m = row.meta(s);
        m.prev = m.last;
        m.last = now;
    }
    void onInsert(Row row, Slot s, const PacketContext&, Vacancy) noexcept {
        row.meta(s) = {tick(row), 0};
    }
    void onErase(Row, Slot, EndReason) noexcept {}
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        // Key: seen-once flows first (by last), then by penultimate; smallest key loses.
        Slot best = 0;
        std::uint64_t bestKey = ~std::uint64_t{0};
        for (Slot s = 0; s < Slot{L}; ++s) {
            const SlotMeta& m = row.meta(s);
            const std::uint64_t key = m.prev == 0 ? m.last : (std::uint64_t{1} << 32) | m.prev;
            if (key < bestKey) {
                best = s;
                bestKey = key;
            }
        }
        return best;
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        return row.occupied(s) ? (row.meta(s).prev == 0 ? '1' : '2') : ' ';
    }
    std::string checkRow(ConstRow row) const {
        for (Slot s = 0; s < Slot{L}; ++s) {
            const SlotMeta& m = row.meta(s);
            if (row.occupied(s) &&
                (m.last == 0 || m.prev >= m.last || m.last > row.state().clock)) {
                return "slot " + std::to_string(s) + ": references out of order";
            }
        }
        return {};
    }

private:
    static std::uint32_t tick(Row row) noexcept {
        RowState& st = row.state();
        if (st.clock == ~std::uint32_t{0}) {  // once per 4e9 packets of this row
            std::array<std::uint32_t*, 2 * L> stamps{};
            std::size_t n = 0;
            for (Slot s = 0; s < Slot{L}; ++s) {
                if (!row.occupied(s)) continue;
                stamps[n++] = &row.meta(s).last;
                if (row.meta(s).prev != 0) stamps[n++] = &row.meta(s).prev;
            }
            st.clock = policy::renormalise(stamps, n);
        }
        return ++st.clock;
    }
};

ROWPROBE_REGISTER_ROW_POLICY(
    Lru2Policy,
    "LRU-2: evict flows seen once first, else the oldest penultimate packet (O'Neil et al. 1993)");

}  // namespace rowprobe::storage
