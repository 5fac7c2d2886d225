// flowstats end to end on hostile traffic (issue 24): packets of 65535 bytes, 0 s inter-arrival
// times, flows of more than 255 packets with SPLT 255, one-packet flows. The process must exit
// cleanly and every line of the JSON output must parse, with numbers (no NaN, no null) in every
// flowstats column (the basic columns included), in every accounting mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kT0 = 1700000000ULL * 1000000000ULL;

fs::path writeHostileCapture() {
    const fs::path path = tempDir() / "flowstats-hostile.pcap";
    PcapWriter w(path);
    // 65535-byte IP packets (UDP payload 65507) both ways, all at the same nanosecond.
    for (int i = 0; i < 20; ++i) {
        w.write(kT0, i % 2 == 0 ? ethIpv4Udp("10.0.0.1", 4000, "10.0.0.2", 5000, 65507)
                                : ethIpv4Udp("10.0.0.2", 5000, "10.0.0.1", 4000, 65507));
    }
    // 300 TCP packets of growing sizes, 1 ms apart: SPLT 255 is full and cut.
    for (int i = 0; i < 300; ++i) {
        const bool fwd = i % 3 != 2;
        w.write(kT0 + static_cast<std::uint64_t>(i) * 1000000,
                fwd ? ethIpv4Tcp("10.0.1.1", 40000, "10.0.1.2", 443, 0x18, i * 4)
                    : ethIpv4Tcp("10.0.1.2", 443, "10.0.1.1", 40000, 0x10, i * 4));
    }
    // One-packet flows: a SYN, a UDP datagram without payload, and a maximal one.
    w.write(kT0 + 1, ethIpv4Tcp("10.0.2.1", 1111, "10.0.2.2", 80, 0x02));
    w.write(kT0 + 2, ethIpv4Udp("10.0.2.3", 2222, "10.0.2.4", 53, 0));
    w.write(kT0 + 3, ethIpv4Udp("10.0.2.5", 3333, "10.0.2.6", 9, 65507));
    return path;
}

bool isNumber(const std::string& v) {
    if (v.empty() || v == "null" || v.find("nan") != std::string::npos ||
        v.find("inf") != std::string::npos)
        return false;
    std::size_t used = 0;
    try {
        (void)std::stod(v, &used);
    } catch (const std::exception&) {
        return false;
    }
    return used == v.size();
}

TEST(FlowstatsHostile, ValidJsonWithoutNanInEveryMode) {
    const fs::path pcap = writeHostileCapture();
    for (const std::string mode : {"link", "ip", "transport", "payload"}) {
        SCOPED_TRACE(mode);
        const CommandResult r =
            runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap.string(), "-p",
                        "flowstats;splt=255;basic;accounting=" + mode, "-o", "json"});
        ASSERT_EQ(r.exitCode, 0) << r.err;
        std::size_t lines = 0;
        std::size_t checked = 0;  // flows whose values the branches below check
        std::size_t start = 0;
        while (start < r.out.size()) {
            const std::size_t end = r.out.find('\n', start);
            const std::string line = r.out.substr(start, end - start);
            start = end == std::string::npos ? r.out.size() : end + 1;
            if (line.empty()) continue;
            ++lines;
            JsonObject o;
            ASSERT_NO_THROW(o = parseJsonFlat(line)) << line;
            std::size_t columns = 0, splt = 0;
            for (const auto& [k, v] : o) {
                const bool ours = k.starts_with("bidirectional_") || k.starts_with("src2dst_") ||
                                  k.starts_with("dst2src_") || k.starts_with("splt_");
                if (!ours) continue;
                ++columns;
                if (k.starts_with("splt_ps.")) ++splt;
                EXPECT_TRUE(isNumber(v)) << k << "=" << v;
            }
            // 48 statistics, 15 basic columns per series (protocol and vlan_id have no series
            // prefix), 3 SPLT arrays of 255
            EXPECT_EQ(columns, 48U + 15U + 3U * 255U) << line;
            EXPECT_EQ(splt, 255U);
            const std::string src = o["src_ip"];
            checked +=
                src == "10.0.1.1" || src == "10.0.2.1" || (src == "10.0.0.1" && mode == "ip");
            if (src == "10.0.0.1" && mode == "ip") {
                EXPECT_EQ(o["bidirectional_max_ps"], "65535");
                EXPECT_EQ(o["bidirectional_stddev_ps"], "0");
                EXPECT_EQ(o["bidirectional_max_piat_ms"], "0");
                EXPECT_EQ(o["splt_ps.19"], "65535");
                EXPECT_EQ(o["splt_ps.20"], "-1");
                EXPECT_EQ(o["bidirectional_bytes"], "1310700");  // 20 × 65535, no wrap in u64
                EXPECT_EQ(o["bidirectional_duration_ms"], "0");
            }
            if (src == "10.0.1.1") {
                EXPECT_EQ(o["splt_piat_ms.254"], "1");
                EXPECT_EQ(o["splt_direction.254"], "1");  // packet 254: 254 % 3 = 2, back
                EXPECT_EQ(o["bidirectional_packets"], "300");
                EXPECT_EQ(o["bidirectional_duration_ms"], "299");
                EXPECT_EQ(o["dst2src_packets"], "100");
                EXPECT_EQ(o["protocol"], "6");
            }
            if (src == "10.0.2.1") {
                EXPECT_EQ(o["bidirectional_syn_packets"], "1");
                EXPECT_EQ(o["splt_direction.1"], "-1");
                EXPECT_EQ(o["dst2src_first_seen_ms"], "0");  // no packet back: all 0
                EXPECT_EQ(o["dst2src_bytes"], "0");
            }
        }
        EXPECT_EQ(lines, 5U);
        EXPECT_EQ(checked, mode == "ip" ? 3U : 2U);
    }
}

}  // namespace
}  // namespace rowprobe::test
