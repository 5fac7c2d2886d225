// Flood detector (EWMA + CUSUM over new flows per interval of packet time) and the admission
// modes it switches on in the flow table.
#include "cache/flood_detector.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

FloodConfig defaults() { return FloodConfig{}; }

TEST(FloodDetector, SteadyNoisyBackgroundNeverRaisesAnAlarm) {
    FloodDetector d(defaults());
    std::mt19937 rng(7);
    std::normal_distribution<double> noise(3000, 400);  // 600 new flows/s, ±13%
    for (int i = 0; i < 500; ++i) d.addInterval(std::max(0.0, noise(rng)));
    EXPECT_EQ(d.alarms(), 0U);
    EXPECT_FALSE(d.alarm());
    EXPECT_NEAR(d.mean(), 3000, 600);
    EXPECT_GT(d.sigma(), 100);  // the noise is learnt as a proper standard deviation
    EXPECT_LT(d.sigma(), 1000);
}

TEST(FloodDetector, AFloodIsDetectedInItsFirstIntervalAndHeldUntilItEnds) {
    FloodDetector d(defaults());
    for (int i = 0; i < 10; ++i) d.addInterval(1000 + 10 * (i % 3));
    const double baseline = d.mean();
    d.addInterval(1000 + 15000);  // the flood starts
    EXPECT_TRUE(d.alarm());
    EXPECT_EQ(d.alarms(), 1U);
    EXPECT_DOUBLE_EQ(d.alarmCount(), 16000);
    EXPECT_NEAR(d.alarmBaseline(), baseline, 1e-9);
    for (int i = 0; i < 20; ++i) {  // a sustained flood is not learnt as the new normal
        d.addInterval(16000);
        EXPECT_TRUE(d.alarm()) << "interval " << i;
    }
    EXPECT_NEAR(d.mean(), baseline, 1e-9);
    EXPECT_EQ(d.alarms(), 1U);  // one alarm for one flood
    d.addInterval(1005);        // back to normal
    EXPECT_FALSE(d.alarm());
    EXPECT_EQ(d.cusum(), 0.0);
    d.addInterval(16000);  // a second flood is a second alarm
    EXPECT_EQ(d.alarms(), 2U);
}

TEST(FloodDetector, NoAlarmDuringWarmUp) {
    FloodConfig c = defaults();
    c.warmup = 3;
    FloodDetector d(c);
    d.addInterval(100);
    d.addInterval(100000);
    d.addInterval(100000);
    EXPECT_EQ(d.alarms(), 0U);
    d.addInterval(100);
    d.addInterval(5000000);  // after warm-up
    EXPECT_EQ(d.alarms(), 1U);
}

TEST(FloodDetector, TheStartUpBurstDoesNotHideAnEarlyFlood) {
    // Capture start: 200 000 flows already running all look new in the first interval; then a
    // steady 25 000 new flows per interval, and a flood of 500 000 more in the fifth interval.
    FloodDetector d(defaults());
    d.addInterval(225000);
    for (int i = 0; i < 3; ++i) d.addInterval(25000 + 100 * (i % 2));
    EXPECT_EQ(d.alarms(), 0U);
    EXPECT_NEAR(d.mean(), 25000, 200);  // the start-up burst is not the baseline
    d.addInterval(525000);
    EXPECT_TRUE(d.alarm());
    EXPECT_EQ(d.alarms(), 1U);
}

TEST(FloodDetector, TheFloorKeepsSmallAbsoluteBurstsQuiet) {
    for (const double burst : {6900.0, 7100.0}) {
        FloodDetector d(defaults());
        for (int i = 0; i < 10; ++i)
            d.addInterval(100);      // σ = 0: k·σ alone would alarm on anything
        d.addInterval(100 + burst);  // floor = 7000 above the mean
        EXPECT_EQ(d.alarm(), burst > 7000) << burst;
    }
}

TEST(FloodDetector, ObserveCountsPerIntervalOfPacketTimeIncludingEmptyIntervals) {
    FloodConfig c = defaults();
    c.warmup = 0;
    c.floor = 50;
    FloodDetector d(c);
    const TimeNs t0 = at(0);
    std::uint64_t flows = 0;
    for (int s = 0; s < 20; ++s) {  // 10 new flows per second: 50 per 5-s interval
        flows += 10;
        d.observe(t0 + static_cast<TimeNs>(s) * kNsPerSec, flows);
    }
    EXPECT_EQ(d.intervals(), 3U);  // boundaries at 5, 10, 15 s
    EXPECT_NEAR(d.mean(), 50, 10);
    EXPECT_EQ(d.alarms(), 0U);
    // 22 s of silence: the intervals without packets count as empty ones ...
    EXPECT_TRUE(d.observe(t0 + 42 * kNsPerSec, flows));
    EXPECT_EQ(d.intervals(), 8U);  // 20, 25, 30, 35, 40
    EXPECT_LT(d.mean(), 15);
    // ... and a burst in the next interval is judged against that.
    flows += 500;
    d.observe(t0 + 44 * kNsPerSec, flows);
    d.observe(t0 + 45 * kNsPerSec, flows);
    EXPECT_EQ(d.alarms(), 1U);
    EXPECT_EQ(d.alarmTime(), t0 + 45 * kNsPerSec);
}

TEST(FloodDetector, AClockThatStepsBackRestartsTheInterval) {
    FloodDetector d(defaults());
    d.observe(at(100), 0);
    d.observe(at(103), 2000);
    d.observe(at(10), 2100);  // a second capture from an earlier time
    EXPECT_EQ(d.intervals(), 0U);
    d.observe(at(15), 2200);
    EXPECT_EQ(d.intervals(), 1U);
}

TEST(FloodDetector, TheTableReportsAFloodInItsStatistics) {
    TableHarness h("cache;size=14;line=16;seed=1;flood-interval=1;flood-warmup=2;flood-floor=200");
    std::uint16_t port = 1024;
    std::vector<ParsedPacket> pkts;
    for (int s = 0; s < 10; ++s) {  // 20 new flows per second
        for (int f = 0; f < 20; ++f) {
            pkts.push_back(
                packet("10.0.0.1", port++, "10.9.9.9", 53, at(s + f * 0.04), 0, 100, 17));
        }
    }
    h.feed(pkts, 1);  // one packet per batch: the detector sees every boundary on time
    EXPECT_EQ(h.stats().floodAlarms, 0U);
    EXPECT_EQ(h.stats().floodIntervals, 9U);
    pkts.clear();
    for (int i = 0; i < 2000; ++i) {  // 2000 SYNs in one second
        pkts.push_back(packet("10.5." + std::to_string(i / 250) + "." + std::to_string(i % 250),
                              4000, "10.9.9.9", 80, at(10 + i * 0.0005), kSyn));
    }
    pkts.push_back(packet("10.0.0.1", 1024, "10.9.9.9", 53, at(11.01), 0, 100, 17));
    h.feed(pkts, 1);
    const CacheStats s = h.stats();
    EXPECT_EQ(s.floodAlarms, 1U);
    EXPECT_EQ(s.floodActive, 1U);
    EXPECT_EQ(s.floodLastAlarm, at(11));
    EXPECT_GE(s.floodLastCount, 1990U);  // a SYN at exactly 10 s closed the interval before
    EXPECT_NEAR(static_cast<double>(s.floodBaseline), 20, 5);
    pkts.clear();
    for (int sec = 12; sec < 14; ++sec) {
        pkts.push_back(packet("10.0.0.2", static_cast<std::uint16_t>(sec), "10.9.9.9", 53, at(sec),
                              0, 100, 17));
    }
    h.feed(pkts);
    EXPECT_EQ(h.stats().floodActive, 0U);  // the flood is over
    EXPECT_EQ(h.stats().floodAlarms, 1U);
}

TEST(FloodDetector, TheDetectorCanBeSwitchedOff) {
    TableHarness h("cache;size=14;line=16;seed=1;flood=false");
    std::vector<ParsedPacket> pkts;
    for (int i = 0; i < 20000; ++i) {
        pkts.push_back(packet("10.5." + std::to_string(i / 250) + "." + std::to_string(i % 250),
                              4000, "10.9.9.9", 80, at(i * 0.001), kSyn));
    }
    h.feed(pkts);
    EXPECT_EQ(h.stats().floodIntervals, 0U);
    EXPECT_EQ(h.stats().floodAlarms, 0U);
}

TEST(FloodDetector, AdmissionNeedsTheDetector) {
    EXPECT_THROW(TableHarness("cache;flood=false;flood-admission=back"), ConfigError);
    EXPECT_THROW(TableHarness("cache;flood-admission=third-packet"), ConfigError);
    EXPECT_THROW(TableHarness("cache;flood-alpha=0"), ConfigError);
}

// --- admission ---------------------------------------------------------------------------------

/// A small table (16 rows of 4) holding 48 established flows (3 per row) that send a packet
/// every 50 ms in a random order, among a SYN flood of 192 new flows per 50 ms from t = 3.9 s
/// to t = 8.9 s. Counts the established flows evicted after the alarm
/// (t >= 4.05 s): all of them, and those cached when it was raised (never evicted before).
struct FloodOutcome {
    std::size_t establishedEvictedAfterAlarm = 0;
    std::size_t protectedEvictedAfterAlarm = 0;
    CacheStats stats;
};

FloodOutcome establishedFlowsUnderFlood(const std::string& admission) {
    TableHarness h(
        "cache;size=6;line=4;seed=3;flood-interval=1;flood-warmup=2;flood-floor=100;flood-"
        "admission=" +
        admission);
    std::vector<ParsedPacket> established;  // three per row: one slot of each row stays free
    std::vector<int> perRow(h.table().rowCount(), 0);
    for (int i = 1; established.size() < 3 * perRow.size(); ++i) {
        const ParsedPacket p =
            packet("10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250), 5000,
                   "10.9.9.9", 443, 0, kAck, 200);
        if (perRow[h.table().rowOf(p.key)]++ < 3) established.push_back(p);
    }
    std::uint32_t serial = 0;
    std::mt19937 rng(11);
    for (int step = 0; step < 240; ++step) {                        // 12 s in steps of 50 ms
        std::shuffle(established.begin(), established.end(), rng);  // each step in another order
        std::vector<ParsedPacket> batch;  // the established packets spread among the SYNs
        const bool flood = step >= 78 && step < 178;
        for (std::size_t k = 0; k < 240; ++k) {
            const double t = step * 0.05 + static_cast<double>(k) * 0.0002;
            if (k % 5 == 0) {
                ParsedPacket p = established[k / 5];
                p.ts = at(t);
                batch.push_back(p);
            } else if (flood) {
                batch.push_back(packet("172.16." + std::to_string(serial / 250 % 250) + "." +
                                           std::to_string(serial % 250),
                                       static_cast<std::uint16_t>(1024 + serial / 62500),
                                       "10.9.9.9", 80, at(t), kSyn, 60));
                ++serial;
            }
        }
        h.feed(batch);
    }
    FloodOutcome out;
    std::set<std::array<std::uint8_t, 16>> evictedBefore;
    for (const FlowRecord& r : h.exportedWith(EndReason::LackOfResources)) {
        if (r.dstPort == 443 && r.timeLast < at(4.05)) evictedBefore.insert(r.srcAddr);
    }
    for (const FlowRecord& r : h.exportedWith(EndReason::LackOfResources)) {
        if (r.dstPort != 443 || r.timeLast < at(4.05)) continue;
        ++out.establishedEvictedAfterAlarm;
        if (evictedBefore.count(r.srcAddr) == 0) ++out.protectedEvictedAfterAlarm;
    }
    out.stats = h.stats();
    EXPECT_TRUE(h.table().checkInvariants().empty()) << h.table().checkInvariants();
    return out;
}

TEST(FloodAdmission, WithoutAdmissionTheFloodEvictsEstablishedFlows) {
    const FloodOutcome o = establishedFlowsUnderFlood("off");
    EXPECT_EQ(o.stats.floodAlarms, 1U);
    // Intervals are counted from the first batch (t = 0.047 s): the flood starting at 3.9 s is
    // reported at the end of its first interval, 4.047 s.
    EXPECT_EQ(o.stats.floodLastAlarm, at(4.047));
    EXPECT_GT(o.establishedEvictedAfterAlarm, 100U);  // the damage the modes below prevent
    EXPECT_GT(o.protectedEvictedAfterAlarm, 100U);
    EXPECT_EQ(o.stats.admissionDeferred, 0U);
}

TEST(FloodAdmission, SecondPacketAdmissionProtectsEstablishedFlows) {
    const FloodOutcome o = establishedFlowsUnderFlood("second-packet");
    EXPECT_EQ(o.stats.floodAlarms, 1U);
    EXPECT_EQ(o.establishedEvictedAfterAlarm, 0U);
    EXPECT_GT(o.stats.admissionDeferred, 10000U);  // lone SYNs never got in
    EXPECT_EQ(o.stats.floodActive, 0U);            // over by the end
}

TEST(FloodAdmission, BackAdmissionEvictsFlowsCreatedDuringTheFloodFirst) {
    const FloodOutcome o = establishedFlowsUnderFlood("back");
    EXPECT_EQ(o.stats.floodAlarms, 1U);
    // A flow evicted before the alarm is new again when it returns, and new flows are the
    // first to go: only the flows cached when the alarm was raised are protected.
    EXPECT_EQ(o.protectedEvictedAfterAlarm, 0U);
    EXPECT_GT(o.stats.admissionEvicted, 10000U);
    EXPECT_EQ(o.stats.admissionDeferred, 0U);
}

TEST(FloodAdmission, ASecondPacketAdmitsTheFlowDuringAFlood) {
    TableHarness h(
        "cache;size=4;line=4;seed=1;flood-interval=1;flood-warmup=1;flood-floor=10;"
        "flood-admission=second-packet");
    std::vector<ParsedPacket> pkts;
    for (std::uint16_t i = 0; i < 16; ++i)
        pkts.push_back(packet("10.0.0.1", 1000 + i, "10.9.9.9", 53, at(0), 0, 100, 17));
    // Intervals: [0, 1) only counted, [1, 2) (empty) learnt, [2, 3) judged: the flood.
    for (int i = 0; i < 200; ++i) {
        pkts.push_back(packet("10.2.0." + std::to_string(i % 250), 7, "10.9.9.9", 80,
                              at(2 + i * 0.004), kSyn));
    }
    pkts.push_back(packet("10.0.0.1", 1000, "10.9.9.9", 53, at(3.5), 0, 100, 17));
    h.feed(pkts, 1);
    ASSERT_EQ(h.stats().floodActive, 1U);
    const std::uint64_t deferred = h.stats().admissionDeferred;
    const ParsedPacket first = packet("10.7.7.7", 9999, "10.9.9.9", 443, at(3.6), kSyn);
    h.feed(first);  // full table, a flood: deferred
    EXPECT_EQ(h.stats().admissionDeferred, deferred + 1);
    EXPECT_FALSE(h.find(first.key).has_value());
    ParsedPacket second = first;
    second.ts = at(3.7);
    h.feed(second);  // its second packet: admitted
    ASSERT_TRUE(h.find(first.key).has_value());
    EXPECT_EQ(h.find(first.key)->packets, 1U);  // the deferred first packet is in no record
}

}  // namespace
}  // namespace rowprobe::storage
