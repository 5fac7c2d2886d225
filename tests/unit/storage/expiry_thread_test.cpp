// expiry=thread: the export thread's scan (sweepFromExportThread) ends flows at the same packet
// time and with the same reasons as the inline sweep, its counters join the worker's, and the
// worker no longer sweeps. Here both sides run on the test's thread, one after the other; the
// concurrent runs are in tests/e2e (tsan_expiry_thread_test.cpp, expiry_modes_test.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

constexpr const char* kThread = "cache;size=8;line=4;seed=1;inactive=30;active=300;expiry=thread";

/// A harness plus the export thread's ring, drained into its own list.
struct ThreadedTable {
    TableHarness h{kThread};
    ExportRing ring{1 << 12};
    std::vector<FlowRecord> swept;

    std::size_t sweep() {
        const std::size_t n = h.table().sweepFromExportThread(ring);
        FlowRecord r;
        while (ring.tryPop(r)) swept.push_back(r);
        return n;
    }
    /// Packets of an unrelated flow that move the worker's clock, one batch per second.
    void tickUntil(double from, double to) {
        for (double t = from; t <= to; t += 1) {
            h.feed(packet("10.200.0.1", 1, "10.200.0.2", 2, at(t), 0, 60, 17));
            sweep();
        }
    }
};

TEST(ExpiryThread, TheModeIsReportedAndInlineTablesDoNotSweepFromOutside) {
    TableHarness inlineTable("cache;size=8;line=4;seed=1");
    EXPECT_FALSE(inlineTable.table().sweepsInExportThread());
    ExportRing ring(64);
    inlineTable.feed(packet("10.0.0.1", 1, "10.0.0.2", 2, at(0)));
    EXPECT_EQ(inlineTable.table().sweepFromExportThread(ring), 0U);
    ThreadedTable t;
    EXPECT_TRUE(t.h.table().sweepsInExportThread());
}

TEST(ExpiryThread, AnIdleFlowLeavesThroughTheExportThreadWithItsTimes) {
    ThreadedTable t;
    t.h.feed({packet("10.0.0.1", 1000, "10.0.0.2", 53, at(0), 0, 80, 17),
              packet("10.0.0.2", 53, "10.0.0.1", 1000, at(2), 0, 120, 17)});
    t.tickUntil(3, 29);
    EXPECT_TRUE(t.swept.empty());  // not idle for 30 s yet
    t.tickUntil(30, 34);
    ASSERT_EQ(t.swept.size(), 1U);
    EXPECT_TRUE(t.h.exported().empty());  // the worker's ring carried nothing
    const FlowRecord& r = t.swept[0];
    EXPECT_EQ(r.endReason, EndReason::InactiveTimeout);
    EXPECT_EQ(r.timeFirst, at(0));
    EXPECT_EQ(r.timeLast, at(2));
    EXPECT_EQ(r.packets[kForward], 1U);
    EXPECT_EQ(r.packets[kReverse], 1U);
    EXPECT_EQ(r.queue, 3);
    const CacheStats s = t.h.stats();
    EXPECT_EQ(s.exported[static_cast<std::size_t>(EndReason::InactiveTimeout)], 1U);
    EXPECT_EQ(s.exportedBySweep, 1U);
    EXPECT_EQ(s.flowsInCache, 1U);  // only the clock flow
    EXPECT_EQ(t.h.table().checkInvariants(), "");
}

TEST(ExpiryThread, TheWorkerDoesNotSweepInThisMode) {
    ThreadedTable t;
    t.h.feed(packet("10.0.0.1", 1000, "10.0.0.2", 53, at(0), 0, 80, 17));
    for (int s = 1; s < 100; ++s)
        t.h.feed(packet("10.200.0.1", 1, "10.200.0.2", 2, at(s), 0, 60, 17));
    EXPECT_TRUE(t.h.exported().empty());
    EXPECT_EQ(t.h.stats().flowsInCache, 2U);
    t.sweep();  // one call catches up: the clock moved by more than a sweep period
    ASSERT_EQ(t.swept.size(), 1U);
    EXPECT_EQ(t.swept[0].endReason, EndReason::InactiveTimeout);
    EXPECT_EQ(t.swept[0].timeLast, at(0));
}

TEST(ExpiryThread, ActiveTimeoutSplitsAtThePacketThatFindsTheFlowTooOld) {
    ThreadedTable t;
    for (int s = 0; s <= 700; s += 10) {
        t.h.feed(packet("10.0.0.3", 8000, "10.0.0.4", 9000, at(s), 0, 100, 17));
        t.sweep();
    }
    t.h.flushAll();
    t.sweep();
    std::vector<FlowRecord> all = t.h.exported();
    all.insert(all.end(), t.swept.begin(), t.swept.end());
    ASSERT_EQ(all.size(), 3U);
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.timeFirst < b.timeFirst; });
    EXPECT_EQ(all[0].timeFirst, at(0));
    EXPECT_EQ(all[0].timeLast, at(290));
    EXPECT_EQ(all[0].endReason, EndReason::ActiveTimeout);
    EXPECT_EQ(all[1].timeFirst, at(300));
    EXPECT_EQ(all[1].timeLast, at(590));
    EXPECT_EQ(all[1].endReason, EndReason::ActiveTimeout);
    EXPECT_EQ(all[2].timeFirst, at(600));
    EXPECT_EQ(all[2].endReason, EndReason::ForcedEnd);
}

TEST(ExpiryThread, ALatePacketOfAnExpiredFlowStartsANewFlow) {
    ThreadedTable t;
    const ParsedPacket a = packet("10.0.0.5", 4000, "10.0.0.6", 80, at(0), kSyn);
    t.h.feed(a);
    t.tickUntil(1, 40);
    ASSERT_EQ(t.swept.size(), 1U);  // swept at >= 30 s
    ParsedPacket late = packet("10.0.0.6", 80, "10.0.0.5", 4000, at(41), kAck);
    t.h.feed(late);
    t.h.flushAll();
    ASSERT_EQ(t.h.exported().size(), 2U);  // the late one, and the clock flow
    const auto again = std::find_if(t.h.exported().begin(), t.h.exported().end(),
                                    [](const FlowRecord& r) { return r.srcPort == 80; });
    ASSERT_NE(again, t.h.exported().end());  // oriented from the late packet's sender
    EXPECT_EQ(again->timeFirst, at(41));
    EXPECT_EQ(again->packets[kForward], 1U);
}

TEST(ExpiryThread, AFinishedTcpFlowLeavesAsEndOfFlowAfterTheInactiveTimeout) {
    ThreadedTable t;
    t.h.feed({packet("10.0.0.7", 5555, "10.0.0.8", 22, at(0), kSyn),
              packet("10.0.0.8", 22, "10.0.0.7", 5555, at(0.1), kSyn | kAck),
              packet("10.0.0.7", 5555, "10.0.0.8", 22, at(1), kFin | kAck)});
    t.tickUntil(2, 35);
    ASSERT_EQ(t.swept.size(), 1U);
    EXPECT_EQ(t.swept[0].endReason, EndReason::EndOfFlow);
    EXPECT_EQ(t.swept[0].timeLast, at(1));
}

TEST(ExpiryThread, TheReasonIsTheTimeoutThatCameFirstHoweverLateTheScan) {
    // Active deadline (300 s) before the inactive one (295 + 30 s): a scan at 400 s still says
    // active, as a scan at 301 s would.
    for (const char* mode : {"inline", "thread"}) {
        TableHarness h(std::string("cache;size=8;line=4;seed=1;expiry=") + mode);
        ExportRing ring(64);
        for (int s = 0; s <= 295; s += 5)
            h.feed(packet("10.0.0.9", 1, "10.0.0.10", 2, at(s), 0, 100, 17));
        h.feed(packet("10.200.0.1", 1, "10.200.0.2", 2, at(400), 0, 60, 17));
        h.table().sweepFromExportThread(ring);
        FlowRecord r;
        std::vector<FlowRecord> all = h.exported();
        while (ring.tryPop(r)) all.push_back(r);
        ASSERT_EQ(all.size(), 1U) << mode;
        EXPECT_EQ(all[0].endReason, EndReason::ActiveTimeout) << mode;
        EXPECT_EQ(all[0].timeLast, at(295)) << mode;
    }
}

TEST(ExpiryThread, AdvanceTimeMovesTheClockTheExportThreadUses) {
    ThreadedTable t;
    t.h.feed(packet("10.0.0.1", 1000, "10.0.0.2", 53, at(0), 0, 80, 17));
    t.h.advanceTime(at(31));  // e.g. wall time of an idle live input
    EXPECT_TRUE(t.h.exported().empty());
    t.sweep();
    ASSERT_EQ(t.swept.size(), 1U);
    EXPECT_EQ(t.swept[0].endReason, EndReason::InactiveTimeout);
}

TEST(ExpiryThread, TheScanStopsWhenItsRingIsFullAndResumesLater) {
    TableHarness h("cache;size=10;line=16;seed=1;expiry=thread");
    ExportRing ring(64);
    std::vector<ParsedPacket> pkts;
    for (std::uint16_t i = 0; i < 300; ++i)
        pkts.push_back(packet("10.0.0.1", 1000 + i, "10.0.0.2", 53, at(0), 0, 80, 17));
    h.feed(pkts);
    ASSERT_TRUE(h.exported().empty());  // no row overflowed
    h.feed(packet("10.200.0.1", 1, "10.200.0.2", 2, at(40), 0, 60, 17));
    std::size_t total = 0;
    std::size_t calls = 0;
    for (; total < 300 && calls < 1000; ++calls) {
        const std::size_t n = h.table().sweepFromExportThread(ring);
        EXPECT_LE(n, ring.capacity());
        total += n;
        FlowRecord r;
        while (ring.tryPop(r)) EXPECT_EQ(r.endReason, EndReason::InactiveTimeout);
        if (n == 0)
            h.feed(packet("10.200.0.1", 1, "10.200.0.2", 2, at(41 + static_cast<double>(calls)), 0,
                          60, 17));
    }
    EXPECT_EQ(total, 300U);
    EXPECT_GT(calls, 300U / 64);  // it had to stop and come back
    EXPECT_EQ(h.stats().flowsInCache, 1U);
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST(ExpiryThread, FlushAllExportsWhatIsDueWithItsReasonAndTheRestAsForcedEnd) {
    ThreadedTable t;
    t.h.feed({packet("10.0.0.1", 1, "10.0.0.2", 2, at(0), 0, 80, 17),
              packet("10.0.0.3", 3, "10.0.0.4", 4, at(35), 0, 80, 17)});
    t.h.flushAll();  // no scan ran: the flush itself finds the idle flow
    ASSERT_EQ(t.h.exported().size(), 2U);
    EXPECT_EQ(t.h.exportedWith(EndReason::InactiveTimeout).size(), 1U);
    EXPECT_EQ(t.h.exportedWith(EndReason::ForcedEnd).size(), 1U);
    EXPECT_EQ(t.h.stats().flowsInCache, 0U);
    EXPECT_EQ(t.sweep(), 0U);
}

// Issue 21 item 15: the worker reads the table's statistics right after flushAll, while the
// export thread may still be in a scan. Every record that scan took off the table must already be
// counted (exported, flowsInCache) when flushAll returns, or the final statistics miss it.
TEST(ExpiryThread, FlushAllReturnsWithTheRacingScanAlreadyCounted) {
    constexpr int kRounds = 1500;
    constexpr std::uint16_t kFlows = 48;
    int wrong = 0;
    std::string first;
    for (int round = 0; round < kRounds && wrong == 0; ++round) {
        TableHarness h("cache;size=6;line=4;seed=1;inactive=30;active=300;expiry=thread");
        std::vector<ParsedPacket> pkts;
        for (std::uint16_t i = 0; i < kFlows; ++i)
            pkts.push_back(packet("10.0.0.1", 1000 + i, "10.0.0.2", 53, at(0), 0, 80, 17));
        h.feed(pkts);
        h.feed(packet("10.200.0.1", 1, "10.200.0.2", 2, at(40), 0, 60, 17));  // all due now
        ExportRing ring(1 << 10);
        std::atomic<bool> go{false};
        std::atomic<bool> stop{false};
        std::thread exporter([&] {
            go.store(true);
            FlowRecord r;
            while (!stop.load(std::memory_order_relaxed)) {
                h.table().sweepFromExportThread(ring);
                while (ring.tryPop(r)) {
                }
            }
        });
        while (!go.load()) std::this_thread::yield();
        h.table().flushAll();
        const CacheStats s = h.stats();  // what the worker publishes as final
        stop.store(true);
        exporter.join();
        if (s.flowsInCache != 0 || s.exportedTotal() != kFlows + 1U) {
            ++wrong;
            first = "round " + std::to_string(round) + ": flowsInCache " +
                    std::to_string(s.flowsInCache) + ", exported " +
                    std::to_string(s.exportedTotal()) + " of " + std::to_string(kFlows + 1);
        }
    }
    EXPECT_EQ(wrong, 0) << first;
}

}  // namespace
}  // namespace rowprobe::storage
