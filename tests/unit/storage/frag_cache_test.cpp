// Fragment cache: non-first fragments get the ports of their first fragment.
#include <gtest/gtest.h>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

/// Fragment `index` of a datagram: the first carries the ports, the later ones do not.
ParsedPacket fragment(std::string_view src, std::uint16_t sport, std::string_view dst,
                      std::uint16_t dport, std::uint32_t id, unsigned index, bool last, TimeNs ts) {
    ParsedPacket p =
        packet(src, index == 0 ? sport : 0, dst, index == 0 ? dport : 0, ts, 0, 1500, 17);
    p.frag.isFragment = true;
    p.frag.id = id;
    p.frag.offset = static_cast<std::uint16_t>(index * 185);
    p.frag.moreFragments = !last;
    p.hasPorts = index == 0;
    return p;
}

std::vector<ParsedPacket> train(std::string_view src, std::string_view dst, std::uint32_t id,
                                double t) {
    return {fragment(src, 5000, dst, 53, id, 0, false, at(t)),
            fragment(src, 5000, dst, 53, id, 1, false, at(t + 0.001)),
            fragment(src, 5000, dst, 53, id, 2, true, at(t + 0.002))};
}

TEST(FragCache, FillsThePortsOfAnIpv4FragmentTrainSoItFormsOneFlow) {
    TableHarness h("cache;size=8;line=4;seed=1");
    h.feed(train("10.0.0.9", "10.0.0.1", 77, 0));  // sender is side B of the canonical key
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 1U);
    const FlowRecord& r = h.exported()[0];
    EXPECT_EQ(addressText(r.srcAddr), "10.0.0.9");
    EXPECT_EQ(r.srcPort, 5000);
    EXPECT_EQ(r.dstPort, 53);
    EXPECT_EQ(r.packets[kForward], 3U);
    EXPECT_EQ(r.bytes[kForward], 4500U);
    EXPECT_EQ(h.stats().fragmentsFilled, 2U);
    EXPECT_EQ(h.stats().fragmentsNoPorts, 0U);
}

TEST(FragCache, FillsThePortsOfAnIpv6FragmentTrain) {
    TableHarness h("cache;size=8;line=4;seed=1");
    h.feed(train("2001:db8::1", "2001:db8::2", 0x12345678, 0));
    h.feed(train("2001:db8::1", "2001:db8::2", 0x12345679, 1));  // a second datagram, same flow
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].packets[kForward], 6U);
    EXPECT_EQ(h.exported()[0].ipVersion, 6);
    EXPECT_EQ(h.stats().fragmentsFilled, 4U);
}

TEST(FragCache, AFragmentBeforeItsFirstFragmentStaysAPortlessFlowAndIsCounted) {
    TableHarness h("cache;size=8;line=4;seed=1");
    std::vector<ParsedPacket> t = train("10.0.0.1", "10.0.0.2", 5, 0);
    h.feed({t[1], t[0], t[2]});  // fragment 1 overtakes the first fragment
    h.flushAll();
    EXPECT_EQ(h.stats().fragmentsNoPorts, 1U);
    EXPECT_EQ(h.stats().fragmentsFilled, 1U);
    ASSERT_EQ(h.exported().size(), 2U);
    std::uint32_t portless = 0;
    std::uint32_t withPorts = 0;
    for (const auto& r : h.exported()) {
        (r.srcPort == 0 ? portless : withPorts) += r.packets[kForward];
    }
    EXPECT_EQ(portless, 1U);
    EXPECT_EQ(withPorts, 2U);
}

TEST(FragCache, ForgetsAFirstFragmentAfterTheTimeout) {
    TableHarness h("cache;size=8;line=4;seed=1;frag-timeout=3");
    std::vector<ParsedPacket> t = train("10.0.0.1", "10.0.0.2", 5, 0);
    t[2].ts = at(3.5);
    h.feed(t);
    EXPECT_EQ(h.stats().fragmentsFilled, 1U);
    EXPECT_EQ(h.stats().fragmentsNoPorts, 1U);
}

TEST(FragCache, DisabledLeavesFragmentsWithoutPorts) {
    TableHarness h("cache;size=8;line=4;seed=1;fe=false");
    h.feed(train("10.0.0.1", "10.0.0.2", 5, 0));
    h.flushAll();
    EXPECT_EQ(h.exported().size(), 2U);
    EXPECT_EQ(h.stats().fragmentsFilled, 0U);
}

TEST(FragCache, DifferentDatagramsDoNotBorrowEachOthersPorts) {
    TableHarness h("cache;size=8;line=4;seed=1");
    std::vector<ParsedPacket> a = train("10.0.0.1", "10.0.0.2", 5, 0);
    ParsedPacket other = fragment("10.0.0.1", 0, "10.0.0.2", 0, 6, 1, true, at(0.5));  // id 6
    h.feed({a[0], other});
    EXPECT_EQ(h.stats().fragmentsNoPorts, 1U);
    EXPECT_EQ(h.stats().fragmentsFilled, 0U);
}

}  // namespace
}  // namespace rowprobe::storage
