// Policy `lru` (ipfixprobe's row LRU) on scripted L = 4 rows: the order after every step.
#include <gtest/gtest.h>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

/// The flows of one row, front first, as indices into `flows` (-1 = hole).
std::vector<int> order(TableHarness& h, std::size_t row, const std::vector<ParsedPacket>& flows) {
    std::vector<int> out(h.table().line(), -2);
    for (const SlotView& v : h.table().inspectRow(row)) {
        int who = -1;
        for (std::size_t i = 0; i < flows.size() && v.occupied; ++i) {
            if (flows[i].key == v.key) who = static_cast<int>(i);
        }
        out.at(v.position) = who;
    }
    return out;
}

ParsedPacket later(ParsedPacket p, TimeNs ts) {
    p.ts = ts;
    return p;
}

TEST(LruPolicy, HitMovesToFrontAndAFullRowInsertsMidRowAfterEvictingTheBack) {
    TableHarness h("cache;size=8;line=4;seed=5;policy=lru");
    constexpr std::size_t kRow = 17;
    const std::vector<ParsedPacket> f = h.flowsInRow(kRow, 6, at(0));
    enum { a, b, c, d, e, g };

    h.feed({f[a], f[b], f[c], f[d]}, 1);  // free slots, no repositioning
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{a, b, c, d}));

    h.feed(later(f[c], at(1)));  // hit → front
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{c, a, b, d}));

    h.feed(later(f[e], at(2)));  // full: evict the back (d), e enters at L/2
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{c, a, e, b}));
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].srcPort, f[d].srcPort());
    EXPECT_EQ(h.exported()[0].endReason, EndReason::LackOfResources);

    h.feed(later(f[b], at(3)));  // hit from the back
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{b, c, a, e}));

    h.feed(later(f[g], at(4)));  // full again: e (back) leaves, g at L/2
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{b, c, g, a}));
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST(LruPolicy, HolesKeepTheirRankAndANewFlowFillsTheFrontmostHoleWithoutMoving) {
    // inactive > active so that only the active timeout empties a slot.
    TableHarness h("cache;size=8;line=4;seed=5;policy=lru;active=300;inactive=1000");
    constexpr std::size_t kRow = 3;
    const std::vector<ParsedPacket> f = h.flowsInRow(kRow, 5, at(0));
    enum { a, b, c, d, e };
    h.feed(f[a]);  // a created at 0
    h.feed({later(f[b], at(200)), later(f[c], at(200)), later(f[d], at(200))}, 1);
    h.feed({later(f[b], at(250)), later(f[c], at(250)), later(f[d], at(250)), later(f[a], at(299))},
           1);
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{a, d, c, b}));

    h.advanceTime(at(300));  // a (the front) reaches the active timeout
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].endReason, EndReason::ActiveTimeout);
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{-1, d, c, b}));  // the hole stays at the front

    h.feed(later(f[e], at(301)));  // not full: the frontmost hole, no repositioning
    EXPECT_EQ(order(h, kRow, f), (std::vector<int>{e, d, c, b}));
    EXPECT_EQ(h.stats().missFree, 5U);
    EXPECT_EQ(h.stats().missEvict, 0U);
}

}  // namespace
}  // namespace rowprobe::storage
