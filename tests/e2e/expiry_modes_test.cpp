// expiry=inline and expiry=thread export the same flows, end reasons included, and timeouts fire
// at the right packet time when the export thread does the scanning; on a live link that goes
// idle, flows still expire on the wall clock in both modes (the rowprobe binary, so a
// ThreadSanitizer build checks the real threads).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "../unit/input/live_traffic.hpp"
#include "queues_flow_set.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kT0 = 1'700'000'000ULL * 1'000'000'000ULL;
constexpr std::uint64_t kSec = 1'000'000'000ULL;

fs::path testDir() {
    const fs::path d = tempDir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(d);
    return d;
}

TEST(ExpiryModes, ThreadAndInlineExportTheSameFlowsOnTheSyntheticTrace) {
    const fs::path trace = synth10kPcap();
    if (trace.empty()) GTEST_SKIP() << "missing the synthetic 10k-flow trace (testdata/bench)";
    const fs::path dir = testDir();
    for (const std::string timeouts : {"", ";inactive=0.05;active=0.2", ";inactive=1;active=3"}) {
        const ProbeResult inl = runProbe(
            {"-i", "pcap;file=" + trace.string(), "-s", "cache;seed=1;expiry=inline" + timeouts},
            dir, "inline");
        const ProbeResult thr = runProbe(
            {"-i", "pcap;file=" + trace.string(), "-s", "cache;seed=1;expiry=thread" + timeouts},
            dir, "thread");
        // The export thread sweeps while the worker reads the file itself (no input thread).
        const ProbeResult own = runProbe({"-i", "pcap;file=" + trace.string(), "--input-thread",
                                          "no", "-s", "cache;seed=1;expiry=thread" + timeouts},
                                         dir, "thread-own");
        ASSERT_EQ(inl.cmd.exitCode, 0) << inl.cmd.err;
        ASSERT_EQ(thr.cmd.exitCode, 0) << thr.cmd.err;
        ASSERT_EQ(own.cmd.exitCode, 0) << own.cmd.err;
        ASSERT_GT(inl.flows.size(), 9000U);
        EXPECT_EQ(setDifference(flowSet(inl.flows, true), flowSet(thr.flows, true)), "")
            << timeouts;
        EXPECT_EQ(setDifference(flowSet(inl.flows, true), flowSet(own.flows, true)), "")
            << timeouts << ", --input-thread no";
        EXPECT_EQ(statValue(thr, "total.cache.flows_in_cache"), 0U);
        EXPECT_EQ(statValue(thr, "total.cache.exported_total"), thr.flows.size());
        EXPECT_EQ(statValue(thr, "export.records"), thr.flows.size());
        if (!timeouts.empty()) {
            EXPECT_GT(statValue(thr, "total.cache.exported_by_sweep"), 100U) << timeouts;
        }
    }
}

/// An expected flow of the timeouts trace below: sender, first and last packet (whole seconds
/// after kT0 plus the sender's offset in ns), packets, end reason.
struct Expected {
    std::string src;
    std::uint64_t firstSec;
    std::uint64_t lastSec;
    std::uint64_t subNs;
    unsigned packets;
    std::string reason;
};

TEST(ExpiryModes, TimeoutsFireAtThePacketTimeWhenTheExportThreadScans) {
    const fs::path dir = testDir();
    const fs::path pcap = dir / "timeouts.pcap";
    {
        PcapWriter w(pcap);
        for (std::uint64_t s = 0; s <= 720; ++s) {
            const std::uint64_t t = kT0 + s * kSec;
            // a background flow keeps the clock moving, one packet per second
            w.write(t, ethIpv4Udp("10.0.9.1", 9, "10.0.9.2", 9));
            // A: three packets, silence, then a late packet 43 s after the last one
            if (s <= 2 || s == 45) w.write(t + 1000, ethIpv4Udp("10.0.1.1", 1000, "10.0.1.2", 53));
            // B: a packet every 10 s for 700 s: split by the active timeout
            if (s % 10 == 0 && s <= 700)
                w.write(t + 2000, ethIpv4Udp("10.0.2.1", 2000, "10.0.2.2", 2001));
            // C: a TCP connection closed at 5 s, nothing after
            if (s == 4) w.write(t + 3000, ethIpv4Tcp("10.0.3.1", 3000, "10.0.3.2", 22, 0x02));
            if (s == 5) w.write(t + 3000, ethIpv4Tcp("10.0.3.1", 3000, "10.0.3.2", 22, 0x11));
            // D: its active deadline (300 s) comes before its inactive one (290 + 30 s)
            if (s % 10 == 0 && s <= 290)
                w.write(t + 4000, ethIpv4Udp("10.0.4.1", 4000, "10.0.4.2", 4001));
        }
    }
    const std::vector<Expected> expected = {
        {"10.0.1.1", 0, 2, 1000, 3, "inactive"},    {"10.0.1.1", 45, 45, 1000, 1, "inactive"},
        {"10.0.2.1", 0, 290, 2000, 30, "active"},   {"10.0.2.1", 300, 590, 2000, 30, "active"},
        {"10.0.2.1", 600, 700, 2000, 11, "forced"}, {"10.0.3.1", 4, 5, 3000, 2, "end"},
        {"10.0.4.1", 0, 290, 4000, 30, "active"},   {"10.0.9.1", 0, 299, 0, 300, "active"},
        {"10.0.9.1", 300, 599, 0, 300, "active"},   {"10.0.9.1", 600, 720, 0, 121, "forced"},
    };
    for (const char* mode : {"thread", "inline"}) {
        const ProbeResult r = runProbe(
            {"-i", "pcap;file=" + pcap.string(), "-s", std::string("cache;seed=1;expiry=") + mode},
            dir, mode);
        ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.err;
        for (const Expected& e : expected) {
            const std::string what =
                std::string(mode) + ": " + e.src + " from +" + std::to_string(e.firstSec) + " s";
            std::size_t found = 0;
            for (const auto& f : r.flows) {
                if (field(f, "src_ip") != e.src ||
                    parseTimeNs(field(f, "time_first")) != kT0 + e.firstSec * kSec + e.subNs) {
                    continue;
                }
                ++found;
                EXPECT_EQ(parseTimeNs(field(f, "time_last")), kT0 + e.lastSec * kSec + e.subNs)
                    << what;
                EXPECT_EQ(field(f, "packets"), std::to_string(e.packets)) << what;
                EXPECT_EQ(field(f, "end_reason"), e.reason) << what;
            }
            EXPECT_EQ(found, 1U) << what;
        }
        EXPECT_EQ(r.flows.size(), expected.size()) << mode;
        // A, C, D and the late A leave by the scan (the first A may be ended by its late packet).
        if (std::string(mode) == "thread") {
            EXPECT_GE(statValue(r, "total.cache.exported_by_sweep"), 3U);
        }
    }
}

TEST(ExpiryModes, AnIdleLiveLinkStillExpiresFlowsOnTheWallClock) {
    if (!live::packetSocketsAllowed()) GTEST_SKIP() << "AF_PACKET sockets need CAP_NET_RAW";
    const live::PrivateLoopback ownLoopback;  // idle: no other suite's traffic on this `lo`
    for (const char* mode : {"inline", "thread"}) {
        const fs::path dir = testDir() / mode;
        fs::create_directories(dir);
        const fs::path flows = dir / "flows.json";
        const fs::path pid = dir / "pid";
        live::UdpSocket rx;
        live::UdpSocket tx;
        ChildProcess probe({rowprobeBinary().string(), "-i", "raw;ifc=lo", "-s",
                            std::string("cache;seed=1;inactive=1;expiry=") + mode, "-o",
                            "json;file=" + flows.string(), "--pid-file", pid.string(), "-Q"});
        const auto start = std::chrono::steady_clock::now();
        while (!fs::exists(pid) && probe.running() &&
               std::chrono::steady_clock::now() - start < std::chrono::seconds(15)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ASSERT_TRUE(fs::exists(pid)) << mode << ": " << probe.wait(1).err;
        tx.sendTo(rx.port(), 100);
        const auto sent = std::chrono::steady_clock::now();
        // Nothing else of this flow arrives: only the wall clock can end it, after the inactive
        // timeout (1 s) plus at most one sweep period (1 s) and the block retire timeout.
        std::string reason;
        while (reason.empty() &&
               std::chrono::steady_clock::now() - sent < std::chrono::seconds(8)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            for (const JsonObject& f : parseJsonLines(readFile(flows))) {
                if (field(f, "src_port") == std::to_string(tx.port()) &&
                    field(f, "dst_port") == std::to_string(rx.port())) {
                    reason = field(f, "end_reason");
                }
            }
        }
        const auto waited = std::chrono::steady_clock::now() - sent;
        probe.signal(SIGINT);
        const CommandResult r = probe.wait(10);
        ASSERT_EQ(r.exitCode, 0) << mode << ": " << r.err;
        EXPECT_EQ(reason, "inactive") << mode << ": exported while rowprobe still ran";
        EXPECT_GE(waited, std::chrono::seconds(1)) << mode << ": not before the timeout";
    }
}

}  // namespace
}  // namespace rowprobe::test
