// Flood detection end to end: a SYN flood mixed into background traffic is reported (one log
// line, counter, flag, time) within two detector intervals of its start; the background alone
// raises nothing; second-packet admission keeps the flood out of a small table.
#include <gtest/gtest.h>

#include <random>

#include "queues_flow_set.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kT0 = 1'700'000'000ULL * 1'000'000'000ULL;
constexpr std::uint64_t kSec = 1'000'000'000ULL;
constexpr double kFloodStart = 31.7;
constexpr double kFloodEnd = 45.0;

std::string address(const char* prefix, std::uint32_t n) {
    return std::string(prefix) + std::to_string(n >> 16 & 255) + "." +
           std::to_string(n >> 8 & 255) + "." + std::to_string(n & 255);
}

/// 60 s of background traffic: every second 200 new short flows (a UDP query and its answer, or
/// a TCP exchange of four packets) and 50 long flows sending one packet per second throughout;
/// with `flood`, 3000 lone SYNs per second from spoofed sources between kFloodStart and kFloodEnd.
/// Returns the number of packets written.
std::size_t writeTrace(const fs::path& path, bool flood) {
    struct Frame {
        std::uint64_t ts;
        std::vector<std::uint8_t> bytes;
    };
    std::vector<Frame> frames;
    std::mt19937 rng(42);
    std::uniform_int_distribution<std::uint64_t> jitter(0, kSec - 1);
    std::uint32_t serial = 1;
    for (std::uint64_t s = 0; s < 60; ++s) {
        for (std::uint32_t l = 0; l < 50; ++l) {
            frames.push_back({kT0 + s * kSec + l * 1000, ethIpv4Udp("10.50.0." + std::to_string(l),
                                                                    5000, "192.0.2.10", 5001)});
        }
        for (int f = 0; f < 200; ++f, ++serial) {
            const std::uint64_t t = kT0 + s * kSec + jitter(rng);
            const std::string client = address("10.", serial);
            const auto port = static_cast<std::uint16_t>(1024 + serial % 60000);
            if (f % 2 == 0) {
                frames.push_back({t, ethIpv4Udp(client, port, "192.0.2.53", 53, 30)});
                frames.push_back({t + 2'000'000, ethIpv4Udp("192.0.2.53", 53, client, port, 90)});
            } else {
                frames.push_back({t, ethIpv4Tcp(client, port, "192.0.2.80", 80, 0x02)});
                frames.push_back({t + 1'000'000, ethIpv4Tcp("192.0.2.80", 80, client, port, 0x12)});
                frames.push_back(
                    {t + 2'000'000, ethIpv4Tcp(client, port, "192.0.2.80", 80, 0x18, 100)});
                frames.push_back({t + 3'000'000, ethIpv4Tcp(client, port, "192.0.2.80", 80, 0x11)});
            }
        }
    }
    if (flood) {
        const auto first = static_cast<std::uint64_t>(kFloodStart * 1e9);
        const auto last = static_cast<std::uint64_t>(kFloodEnd * 1e9);
        std::uint32_t spoofed = 0;
        for (std::uint64_t t = first; t < last; t += kSec / 3000, ++spoofed) {
            frames.push_back({kT0 + t, ethIpv4Tcp(address("172.", spoofed * 7919 % 16777213), 40000,
                                                  "192.0.2.80", 80, 0x02)});
        }
    }
    std::stable_sort(frames.begin(), frames.end(),
                     [](const Frame& a, const Frame& b) { return a.ts < b.ts; });
    PcapWriter w(path);
    for (const Frame& f : frames) w.write(f.ts, f.bytes);
    return frames.size();
}

class Flood : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_dir = tempDir() / "flood";
        fs::create_directories(s_dir);
        writeTrace(s_dir / "background.pcap", false);
        writeTrace(s_dir / "flood.pcap", true);
    }
    static fs::path s_dir;
};
fs::path Flood::s_dir;

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

TEST_F(Flood, ASynFloodIsDetectedWithinTwoIntervalsAndLoggedOnce) {
    const ProbeResult r =
        runProbe({"-i", "pcap;file=" + (s_dir / "flood.pcap").string(), "-s", "cache;seed=1"},
                 s_dir, "flood");
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.err;
    EXPECT_EQ(statValue(r, "total.cache.flood.alarms"), 1U);
    EXPECT_EQ(statValue(r, "total.cache.flood.active"), 0U);  // the flood ended at 45 s of 60
    const std::uint64_t at = statValue(r, "total.cache.flood.last_alarm_ns");
    const auto start = kT0 + static_cast<std::uint64_t>(kFloodStart * 1e9);
    EXPECT_GT(at, start);
    EXPECT_LE(at, start + 2 * 5 * kSec)
        << "detected " << static_cast<double>(at - start) / 1e9 << " s after the start";
    EXPECT_GT(statValue(r, "total.cache.flood.last_count"), 8000U);
    EXPECT_LT(statValue(r, "total.cache.flood.baseline"), 2000U);
    // -Q silences the statistics, not the flood log: one line when it starts, one when it ends.
    EXPECT_EQ(occurrences(r.cmd.err, "flood detected on queue 0"), 1U) << r.cmd.err;
    EXPECT_EQ(occurrences(r.cmd.err, "flood over on queue 0"), 1U) << r.cmd.err;
    EXPECT_GE(statValue(r, "total.cache.flood.intervals"), 11U);
}

TEST_F(Flood, TheBackgroundAloneRaisesNoAlarm) {
    const ProbeResult r =
        runProbe({"-i", "pcap;file=" + (s_dir / "background.pcap").string(), "-s", "cache;seed=1"},
                 s_dir, "background");
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.err;
    EXPECT_EQ(statValue(r, "total.cache.flood.alarms"), 0U);
    EXPECT_GE(statValue(r, "total.cache.flood.intervals"), 11U);  // the detector did run
    EXPECT_EQ(r.cmd.err.find("flood"), std::string::npos) << r.cmd.err;
}

TEST_F(Flood, TheAlarmIsTheSameInThreadExpiryMode) {
    const ProbeResult r = runProbe(
        {"-i", "pcap;file=" + (s_dir / "flood.pcap").string(), "-s", "cache;seed=1;expiry=thread"},
        s_dir, "thread");
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.err;
    EXPECT_EQ(statValue(r, "total.cache.flood.alarms"), 1U);
}

TEST_F(Flood, SecondPacketAdmissionKeepsTheFloodOutOfAFullTable) {
    // 2^12 records: background flows wait for their inactive timeout in a table that is full,
    // so without admission every spoofed SYN evicts a flow and becomes a record of its own.
    const std::string small = "cache;seed=1;size=12;line=16";
    const ProbeResult off =
        runProbe({"-i", "pcap;file=" + (s_dir / "flood.pcap").string(), "-s", small}, s_dir, "off");
    const ProbeResult on = runProbe({"-i", "pcap;file=" + (s_dir / "flood.pcap").string(), "-s",
                                     small + ";flood-admission=second-packet"},
                                    s_dir, "on");
    ASSERT_EQ(off.cmd.exitCode, 0) << off.cmd.err;
    ASSERT_EQ(on.cmd.exitCode, 0) << on.cmd.err;
    auto spoofedRecords = [](const ProbeResult& r) {
        std::size_t n = 0;
        for (const auto& f : r.flows) n += field(f, "src_ip").rfind("172.", 0) == 0 ? 1 : 0;
        return n;
    };
    EXPECT_EQ(statValue(on, "total.cache.flood.alarms"), 1U);
    EXPECT_EQ(statValue(off, "total.cache.admission_deferred"), 0U);
    EXPECT_GT(statValue(on, "total.cache.admission_deferred"), 20000U);
    EXPECT_GT(spoofedRecords(off), 35000U);
    EXPECT_LT(spoofedRecords(on), spoofedRecords(off) / 2);
    EXPECT_LT(statValue(on, "total.cache.miss_evict"),
              statValue(off, "total.cache.miss_evict") / 2);
    // Every background packet is still counted: the long flows lose nothing.
    std::uint64_t longPackets = 0;
    for (const auto& f : on.flows) {
        if (field(f, "src_ip").rfind("10.50.0.", 0) == 0)
            longPackets += std::stoull(field(f, "packets"));
    }
    EXPECT_EQ(longPackets, 50U * 60U);
}

}  // namespace
}  // namespace rowprobe::test
