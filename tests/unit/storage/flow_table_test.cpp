// The flow table mechanism (policy `lru`): biflows, timeouts, TCP ends, reclaim, flush, stats.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

constexpr const char* kSmall = "cache;size=8;line=4;seed=1";  // 64 rows of 4

TEST(FlowTable, BothDirectionsCountIntoOneRecordWhoseSourceIsTheFirstSender) {
    // 10.0.0.9 sends first but is side B of the canonical key (10.0.0.2 < 10.0.0.9).
    TableHarness h(kSmall);
    ParsedPacket first = packet("10.0.0.9", 40000, "10.0.0.2", 80, at(0), kSyn, 60);
    first.ttl = 63;
    ParsedPacket reply = packet("10.0.0.2", 80, "10.0.0.9", 40000, at(0.1), kSyn | kAck, 60);
    reply.ttl = 57;
    h.feed({first, reply, packet("10.0.0.9", 40000, "10.0.0.2", 80, at(0.2), kAck, 52),
            packet("10.0.0.9", 40000, "10.0.0.2", 80, at(0.3), kPsh | kAck, 300),
            packet("10.0.0.2", 80, "10.0.0.9", 40000, at(0.4), kAck, 1500)});
    ASSERT_FALSE(first.fromA);
    h.flushAll();

    ASSERT_EQ(h.exported().size(), 1U);
    const FlowRecord& r = h.exported()[0];
    EXPECT_EQ(addressText(r.srcAddr), "10.0.0.9");
    EXPECT_EQ(addressText(r.dstAddr), "10.0.0.2");
    EXPECT_EQ(r.srcPort, 40000);
    EXPECT_EQ(r.dstPort, 80);
    EXPECT_EQ(r.packets[kForward], 3U);
    EXPECT_EQ(r.packets[kReverse], 2U);
    EXPECT_EQ(r.bytes[kForward], 60U + 52 + 300);
    EXPECT_EQ(r.bytes[kReverse], 60U + 1500);
    EXPECT_EQ(r.tcpFlags[kForward], kSyn | kAck | kPsh);
    EXPECT_EQ(r.tcpFlags[kReverse], kSyn | kAck);
    EXPECT_EQ(r.ttl[kForward], 63);
    EXPECT_EQ(r.ttl[kReverse], 57);
    EXPECT_EQ(r.srcMac, first.srcMac);
    EXPECT_EQ(r.timeFirst, at(0));
    EXPECT_EQ(r.timeLast, at(0.4));
    EXPECT_EQ(r.proto, 6);
    EXPECT_EQ(r.ipVersion, 4);
    EXPECT_EQ(r.queue, 3);
    EXPECT_EQ(r.endReason, EndReason::ForcedEnd);
}

TEST(FlowTable, InitiatorOnSideAKeepsItsOrientationToo) {
    TableHarness h(kSmall);
    h.feed({packet("2001:db8::1", 5000, "2001:db8::2", 53, at(0), 0, 80, 17),
            packet("2001:db8::2", 53, "2001:db8::1", 5000, at(1), 0, 200, 17)});
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 1U);
    const FlowRecord& r = h.exported()[0];
    EXPECT_EQ(addressText(r.srcAddr), "2001:db8::1");
    EXPECT_EQ(r.srcPort, 5000);
    EXPECT_EQ(r.ipVersion, 6);
    EXPECT_EQ(r.packets, (std::array<std::uint32_t, 2>{1, 1}));
    EXPECT_EQ(r.bytes, (std::array<std::uint64_t, 2>{80, 200}));
}

TEST(FlowTable, InactiveTimeoutEndsTheFlowExactlyAtTheTimeoutAndTheLatePacketStartsANewOne) {
    TableHarness h("cache;size=8;line=4;seed=1;inactive=30");
    h.feed(packet("10.0.0.1", 1000, "10.0.0.2", 2000, at(0), 0, 100, 17));
    // 1 ns before the timeout: the same flow.
    h.feed(packet("10.0.0.2", 2000, "10.0.0.1", 1000, at(30) - 1, 0, 100, 17));
    EXPECT_TRUE(h.exported().empty());
    // Exactly 30 s after the last packet: the flow has ended; this packet starts a new one.
    h.feed(packet("10.0.0.2", 2000, "10.0.0.1", 1000, at(60) - 1, 0, 100, 17));
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].endReason, EndReason::InactiveTimeout);
    EXPECT_EQ(h.exported()[0].packets, (std::array<std::uint32_t, 2>{1, 1}));
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 2U);
    const FlowRecord& late = h.exported()[1];
    EXPECT_EQ(addressText(late.srcAddr), "10.0.0.2");  // the late packet's sender initiates
    EXPECT_EQ(late.packets, (std::array<std::uint32_t, 2>{1, 0}));
    EXPECT_EQ(late.timeFirst, at(60) - 1);
}

TEST(FlowTable, SweepExportsAnIdleFlowOnceOtherTrafficPassesItsTimeoutNotBefore) {
    TableHarness h("cache;size=8;line=4;seed=1;inactive=30");
    h.feed(packet("10.0.0.1", 1000, "10.0.0.2", 2000, at(0), 0, 100, 17));
    h.feed(packet("10.1.0.1", 1, "10.1.0.2", 2, at(30) - 1, 0, 100, 17));
    EXPECT_TRUE(h.exported().empty());
    h.feed(packet("10.1.0.1", 1, "10.1.0.2", 2, at(30), 0, 100, 17));
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].srcPort, 1000);
    EXPECT_EQ(h.exported()[0].endReason, EndReason::InactiveTimeout);
    EXPECT_EQ(h.stats().exportedBySweep, 1U);
}

TEST(FlowTable, AdvanceTimeExportsEverythingDueAndNothingElse) {
    TableHarness h("cache;size=12;line=16;seed=1;inactive=30");
    std::vector<ParsedPacket> pkts;
    for (std::uint16_t i = 0; i < 500; ++i)
        pkts.push_back(packet("10.0.0.1", i, "10.0.0.2", 53, at(i % 2), 0, 100, 17));
    h.feed(pkts);
    h.advanceTime(at(30) - 1);
    EXPECT_TRUE(h.exported().empty());
    h.advanceTime(at(30));  // the 250 flows seen at t=0 are due, the others 1 s later
    EXPECT_EQ(h.exported().size(), 250U);
    h.advanceTime(at(31));
    EXPECT_EQ(h.exported().size(), 500U);
    EXPECT_EQ(h.exportedWith(EndReason::InactiveTimeout).size(), 500U);
    EXPECT_EQ(h.stats().exportedBySweep, 500U);
    EXPECT_EQ(h.stats().flowsInCache, 0U);
}

TEST(FlowTable, IncrementalSweepFinishesAFullPassWithinOneBatchPerBlockOfRows) {
    // 2^14 records / 16 = 1024 rows = 16 blocks of 64 rows: every expired flow must be exported
    // within 16 batches, even when packet time advances only 1 ns per batch.
    TableHarness h("cache;size=14;line=16;seed=1;inactive=30");
    std::vector<ParsedPacket> pkts;
    for (std::uint16_t i = 0; i < 3000; ++i)
        pkts.push_back(packet("10.0.0.1", i, "10.0.0.3", 53, at(0), 0, 100, 17));
    h.feed(pkts);
    ASSERT_EQ(h.stats().flowsInCache, 3000U);
    h.feed(packet("10.9.0.1", 1, "10.9.0.2", 2, at(30) - 1, 0, 100, 17));  // nothing due yet
    ASSERT_TRUE(h.exported().empty());
    std::size_t batches = 0;
    for (TimeNs t = at(30); h.stats().flowsInCache > 1 && batches < 100; ++t, ++batches) {
        h.feed(packet("10.9.0.1", 1, "10.9.0.2", 2, t, 0, 100, 17));
    }
    EXPECT_LE(batches, 16U);
    EXPECT_GE(batches, 8U);  // the sweep is incremental, not a full pass per batch
    EXPECT_EQ(h.exportedWith(EndReason::InactiveTimeout).size(), 3000U);
}

TEST(FlowTable, IncrementalSweepFinishesAFullPassWithinOneSweepPeriodOfPacketTime) {
    TableHarness h("cache;size=20;line=16;seed=1;inactive=30");  // 1024 blocks
    h.feed(packet("10.0.0.1", 7, "10.0.0.3", 53, at(0), 0, 100, 17));
    // One batch per 100 ms: with the 1 s sweep period the whole table is visited within ~10
    // batches, far fewer than the 1024 the batch bound alone would allow.
    h.feed(packet("10.9.0.1", 1, "10.9.0.2", 2, at(29), 0, 100, 17));
    std::size_t batches = 0;
    for (int tenth = 291; h.stats().flowsInCache > 1 && batches < 100; ++tenth) {
        h.feed(packet("10.9.0.1", 1, "10.9.0.2", 2, at(tenth / 10.0), 0, 100, 17));
        if (tenth >= 300) ++batches;  // batches since the flow became due
    }
    EXPECT_LE(batches, 11U);
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].srcPort, 7);
}

TEST(FlowTable, ActiveTimeoutSplitsALongFlowAndThePacketThatFoundItStartsTheNext) {
    TableHarness h("cache;size=8;line=4;seed=1;active=300;inactive=30");
    std::vector<ParsedPacket> pkts;
    for (int s = 0; s <= 700; s += 10)
        pkts.push_back(packet("10.0.0.1", 1000, "10.0.0.2", 2000, at(s), 0, 100, 17));
    h.feed(pkts, 1);
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 3U);
    EXPECT_EQ(h.exported()[0].endReason, EndReason::ActiveTimeout);
    EXPECT_EQ(h.exported()[0].packets[kForward], 30U);  // 0, 10, ..., 290
    EXPECT_EQ(h.exported()[0].timeLast, at(290));
    EXPECT_EQ(h.exported()[1].endReason, EndReason::ActiveTimeout);
    EXPECT_EQ(h.exported()[1].timeFirst, at(300));
    EXPECT_EQ(h.exported()[1].packets[kForward], 30U);
    EXPECT_EQ(h.exported()[2].endReason, EndReason::ForcedEnd);
    EXPECT_EQ(h.exported()[2].packets[kForward], 11U);  // 600 .. 700
}

std::vector<ParsedPacket> tcpSession(double t0) {
    const char* c = "192.168.1.10";
    const char* s = "192.168.1.1";
    return {packet(c, 50000, s, 443, at(t0), kSyn, 60),
            packet(s, 443, c, 50000, at(t0 + 0.01), kSyn | kAck, 60),
            packet(c, 50000, s, 443, at(t0 + 0.02), kAck, 52),
            packet(c, 50000, s, 443, at(t0 + 0.03), kFin | kAck, 52),
            packet(s, 443, c, 50000, at(t0 + 0.04), kFin | kAck, 52),
            packet(c, 50000, s, 443, at(t0 + 0.05), kAck, 52)};
}

TEST(FlowTable, FinThenTheFinalAcksStayInOneFlowEndedAsEndOfFlowByTheTimeout) {
    TableHarness h("cache;size=8;line=4;seed=1;inactive=30");
    h.feed(tcpSession(0));
    EXPECT_TRUE(h.exported().empty());  // still cached after the FINs
    h.advanceTime(at(31));
    ASSERT_EQ(h.exported().size(), 1U);
    const FlowRecord& r = h.exported()[0];
    EXPECT_EQ(r.packets, (std::array<std::uint32_t, 2>{4, 2}));
    EXPECT_EQ(r.endReason, EndReason::EndOfFlow);
    EXPECT_EQ(r.tcpFlags[kForward], kSyn | kAck | kFin);
}

TEST(FlowTable, SynAfterFinInTheSameDirectionEndsTheOldFlowAndStartsANewOne) {
    TableHarness h(kSmall);
    std::vector<ParsedPacket> pkts = tcpSession(0);
    const std::vector<ParsedPacket> again = tcpSession(5);  // same 5-tuple, new connection
    pkts.insert(pkts.end(), again.begin(), again.end());
    h.feed(pkts);
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].endReason, EndReason::EndOfFlow);
    EXPECT_EQ(h.exported()[0].packets, (std::array<std::uint32_t, 2>{4, 2}));
    EXPECT_EQ(h.exported()[0].timeLast, at(0.05));
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 2U);
    EXPECT_EQ(h.exported()[1].timeFirst, at(5));
    EXPECT_EQ(addressText(h.exported()[1].srcAddr), "192.168.1.10");
    EXPECT_EQ(h.stats().exported[static_cast<std::size_t>(EndReason::EndOfFlow)], 1U);
}

TEST(FlowTable, SynAfterRstEndsTheFlowOnlyInTheDirectionThatSentTheRst) {
    const char* c = "192.168.1.10";
    const char* s = "192.168.1.1";
    {
        // The client resets, then opens again: a new flow (EndOfFlow on the old one).
        TableHarness h(kSmall);
        h.feed({packet(c, 50000, s, 80, at(0), kSyn), packet(s, 80, c, 50000, at(0.1), kSyn | kAck),
                packet(c, 50000, s, 80, at(0.2), kRst), packet(c, 50000, s, 80, at(1), kSyn)});
        ASSERT_EQ(h.exported().size(), 1U);
        EXPECT_EQ(h.exported()[0].endReason, EndReason::EndOfFlow);
        EXPECT_EQ(h.exported()[0].packets, (std::array<std::uint32_t, 2>{2, 1}));
    }
    {
        // The server refuses (RST), the client retries its SYN: ipfixprobe keeps one flow,
        // because the retry's own direction has seen no FIN or RST.
        TableHarness h(kSmall);
        h.feed({packet(c, 50000, s, 81, at(0), kSyn), packet(s, 81, c, 50000, at(0.1), kRst | kAck),
                packet(c, 50000, s, 81, at(1), kSyn),
                packet(s, 81, c, 50000, at(1.1), kRst | kAck)});
        EXPECT_TRUE(h.exported().empty());
        h.flushAll();
        ASSERT_EQ(h.exported().size(), 1U);
        EXPECT_EQ(h.exported()[0].packets, (std::array<std::uint32_t, 2>{2, 2}));
    }
}

TEST(FlowTable, FullRowReclaimsExpiredRecordsBeforeEvictingALiveFlow) {
    TableHarness h("cache;size=8;line=4;seed=1;inactive=30");
    const std::vector<ParsedPacket> flows = h.flowsInRow(5, 5, at(0));
    h.feed({flows[0], flows[1], flows[2], flows[3]}, 1);
    std::vector<ParsedPacket> refresh = {flows[1], flows[2], flows[3]};
    for (auto& p : refresh) p.ts = at(20);
    h.feed(refresh, 1);
    ParsedPacket newcomer = flows[4];
    newcomer.ts = at(35);  // flows[0] idle for 35 s, the others for 15 s
    h.feed(newcomer);
    const CacheStats st = h.stats();
    EXPECT_EQ(st.missReclaim, 1U);
    EXPECT_EQ(st.missEvict, 0U);
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].srcPort, flows[0].srcPort());
    EXPECT_EQ(h.exported()[0].endReason, EndReason::InactiveTimeout);
    EXPECT_EQ(st.exported[static_cast<std::size_t>(EndReason::LackOfResources)], 0U);
    EXPECT_TRUE(h.find(newcomer.key).has_value());
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST(FlowTable, FlushAllExportsEveryCachedFlowAsForcedEnd) {
    TableHarness h("cache;size=10;line=8;seed=3");
    std::vector<ParsedPacket> pkts;
    for (std::uint16_t i = 0; i < 300; ++i)
        pkts.push_back(packet("10.0.0.1", i, "10.0.0.2", 53, at(1), 0, 100, 17));
    h.feed(pkts);
    const std::uint64_t cached = h.stats().flowsInCache;
    const std::uint64_t evicted = h.stats().missEvict;
    EXPECT_EQ(cached + evicted, 300U);
    h.flushAll();
    EXPECT_EQ(h.exportedWith(EndReason::ForcedEnd).size(), cached);
    EXPECT_EQ(h.exported().size(), 300U);
    EXPECT_EQ(h.stats().exportedAtEnd, cached);
    EXPECT_EQ(h.stats().flowsInCache, 0U);
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST(FlowTable, CountsHitsFreeAndEvictingMissesAndHitPositionsOnAScriptedRow) {
    TableHarness h(kSmall);
    const std::vector<ParsedPacket> f = h.flowsInRow(9, 5, at(0));
    // a, b, c into free slots (ranks 0, 1, 2); hit c (rank 2 → position 3), hit a (rank 1 →
    // position 2), hit a (rank 0 → position 1); d into the last hole; e evicts the back (d).
    h.feed({f[0], f[1], f[2], f[2], f[0], f[0], f[3], f[4]}, 1);
    const CacheStats st = h.stats();
    EXPECT_EQ(st.hits, 3U);
    EXPECT_EQ(st.missFree, 4U);
    EXPECT_EQ(st.missEvict, 1U);
    EXPECT_EQ(st.flowsCreated, 5U);
    EXPECT_EQ(st.positionSum, 3U + 2 + 1);
    EXPECT_EQ(st.positionSqSum, 9U + 4 + 1);
    EXPECT_DOUBLE_EQ(st.hitPositionMean(), 2.0);
    EXPECT_EQ(st.flowsInCache, 4U);
    EXPECT_EQ(st.capacity, 256U);
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].srcPort, f[3].srcPort());
    EXPECT_EQ(h.exported()[0].endReason, EndReason::LackOfResources);
}

TEST(FlowTable, SameSeedGivesTheSameRowsAndAnotherSeedOthers) {
    TableHarness a("cache;size=16;seed=42");
    TableHarness b("cache;size=16;seed=42");
    TableHarness c("cache;size=16;seed=43;hash=xxh64");
    std::size_t differ = 0;
    for (std::uint16_t i = 0; i < 100; ++i) {
        const ParsedPacket p = packet("10.0.0.1", i, "10.0.0.2", 53, at(0), 0, 100, 17);
        EXPECT_EQ(a.table().rowOf(p.key), b.table().rowOf(p.key));
        differ += a.table().rowOf(p.key) != c.table().rowOf(p.key) ? 1 : 0;
    }
    EXPECT_GT(differ, 90U);
}

}  // namespace
}  // namespace rowprobe::storage
