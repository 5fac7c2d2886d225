// The fragment cache on real and generated captures, through the rowprobe binary: non-first
// IPv4 and IPv6 fragments get the ports of their first fragment (FlowTest's fragmented UDP
// case, Zeek's GTP trace with fragmented outer packets); fragments whose first fragment never
// came are counted (statistics and anomaly) and kept in a flow without ports, as ipfixprobe
// does.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

struct TraceRun {
    CommandResult cmd;
    std::vector<JsonObject> flows;
    JsonObject stats;
};

TraceRun runOn(const fs::path& pcap, const std::string& storage, const std::string& name) {
    const fs::path dir = tempDir() / "frag-traces";
    fs::create_directories(dir);
    const fs::path flows = dir / (name + ".json");
    const fs::path stats = dir / (name + ".stats.json");
    TraceRun r;
    r.cmd =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap.string(), "-s", storage,
                    "-o", "json;file=" + flows.string(), "--stats-json", stats.string(), "-Q"});
    r.flows = parseJsonLines(readFile(flows));
    if (const std::string s = readFile(stats); !s.empty()) r.stats = parseJsonFlat(s);
    return r;
}

std::string get(const JsonObject& o, const std::string& k) {
    const auto it = o.find(k);
    return it == o.end() ? "" : it->second;
}
std::uint64_t num(const JsonObject& o, const std::string& k) {
    const std::string v = get(o, k);
    return v.empty() ? ~std::uint64_t{0} : std::stoull(v);
}

/// The flows between two addresses (either orientation).
std::vector<JsonObject> between(const std::vector<JsonObject>& flows, const std::string& a,
                                const std::string& b) {
    std::vector<JsonObject> out;
    for (const auto& f : flows) {
        const std::string s = get(f, "src_ip");
        const std::string d = get(f, "dst_ip");
        if ((s == a && d == b) || (s == b && d == a)) out.push_back(f);
    }
    return out;
}

TEST(FragTraces, FlowTestFragmentedUdpIsOneFlowWithItsPorts) {
    const fs::path pcap = testdataDir() / "flowtest/pcap/ipv4-udp-fragmented.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const TraceRun r = runOn(pcap, "cache;seed=1", "flowtest");
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.err;
    const auto flows = between(r.flows, "131.179.196.46", "131.179.196.220");
    ASSERT_EQ(flows.size(), 1U);
    // FlowTest validation/ipv4_fragmented.yml (testdata/flowtest/expected_flows.csv).
    const JsonObject& f = flows[0];
    EXPECT_EQ(get(f, "src_ip"), "131.179.196.46");
    EXPECT_EQ(get(f, "src_port"), "6363");
    EXPECT_EQ(get(f, "dst_port"), "6363");
    EXPECT_EQ(num(f, "packets"), 4U);
    EXPECT_EQ(num(f, "packets_rev"), 4U);
    EXPECT_EQ(num(f, "bytes"), 504U);
    EXPECT_EQ(num(f, "bytes_rev"), 5467U);
    EXPECT_EQ(num(r.stats, "total.cache.fragments_filled"), 3U);
    EXPECT_EQ(num(r.stats, "total.cache.fragments_no_ports"), 0U);

    const TraceRun off = runOn(pcap, "cache;seed=1;frag-enable=false", "flowtest-off");
    ASSERT_EQ(off.cmd.exitCode, 0) << off.cmd.err;
    EXPECT_EQ(between(off.flows, "131.179.196.46", "131.179.196.220").size(),
              2U);  // one without ports
    EXPECT_EQ(num(off.stats, "total.cache.fragments_filled"), 0U);
}

TEST(FragTraces, ZeekGtpOuterFragmentsJoinTheirTunnelFlow) {
    const fs::path pcap =
        testdataDir() / "zeek/Traces/tunnels/gtp/gtp1_gn_normal_incl_fragmentation.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const TraceRun on = runOn(pcap, "cache;seed=1", "gtp");
    const TraceRun off = runOn(pcap, "cache;seed=1;frag-enable=false", "gtp-off");
    ASSERT_EQ(on.cmd.exitCode, 0) << on.cmd.err;
    ASSERT_EQ(off.cmd.exitCode, 0) << off.cmd.err;
    const std::string a = "239.114.155.111";
    const std::string b = "63.94.149.181";
    const auto withCache = between(on.flows, a, b);
    ASSERT_EQ(withCache.size(), 1U) << "every outer fragment in the GTP-U flow";
    const JsonObject& f = withCache[0];
    EXPECT_EQ(get(f, "src_ip"), a);
    EXPECT_EQ(get(f, "src_port"), "2152");
    EXPECT_EQ(get(f, "dst_port"), "2152");
    EXPECT_EQ(num(on.stats, "total.cache.fragments_no_ports"), 0U);

    // Without the cache the non-first fragments form a port-less flow; with it, not one packet
    // is lost or moved: the flow holds both flows' packets and bytes, per direction.
    const auto withoutCache = between(off.flows, a, b);
    ASSERT_EQ(withoutCache.size(), 2U);
    const JsonObject& portless =
        get(withoutCache[0], "src_port") == "0" ? withoutCache[0] : withoutCache[1];
    const JsonObject& ported =
        get(withoutCache[0], "src_port") == "0" ? withoutCache[1] : withoutCache[0];
    ASSERT_EQ(get(portless, "src_ip"), a);
    for (const char* k : {"packets", "packets_rev", "bytes", "bytes_rev"}) {
        EXPECT_EQ(num(f, k), num(ported, k) + num(portless, k)) << k;
    }
    EXPECT_EQ(num(on.stats, "total.cache.fragments_filled"),
              num(portless, "packets") + num(portless, "packets_rev"));

    // Zeek (baseline core.tunnels.gtp.outer_ip_frag) counts reassembled datagrams: its
    // originator side is ours minus the non-first fragments, each without its 20-byte header.
    const std::uint64_t extra = num(portless, "packets");
    EXPECT_EQ(num(f, "packets") - extra, 27U);
    EXPECT_EQ(num(f, "bytes") - 20 * extra, 4176U);
}

/// An IPv4 UDP fragment: offset in 8-byte units; only the first carries the UDP header.
std::vector<std::uint8_t> ipv4Fragment(const std::string& src, const std::string& dst,
                                       std::uint16_t id, std::uint16_t offset, bool more) {
    std::vector<std::uint8_t> f =
        ethIpv4Udp(src, offset == 0 ? 5353 : 0, dst, offset == 0 ? 53 : 0, 200);
    f[18] = static_cast<std::uint8_t>(id >> 8);
    f[19] = static_cast<std::uint8_t>(id);
    const auto frag = static_cast<std::uint16_t>((more ? 0x2000 : 0) | offset);
    f[20] = static_cast<std::uint8_t>(frag >> 8);
    f[21] = static_cast<std::uint8_t>(frag);
    return f;
}

/// An IPv6 UDP fragment 2001:db8::1 → 2001:db8::2 (ports 6000 → 4500 in the first one).
std::vector<std::uint8_t> ipv6Fragment(std::uint32_t id, std::uint16_t offset, bool more) {
    std::vector<std::uint8_t> f(14 + 40 + 8 + 8 + 72, 0);
    f[0] = 0x02;
    f[6] = 0x02;
    f[12] = 0x86;
    f[13] = 0xdd;
    std::uint8_t* ip6 = f.data() + 14;
    ip6[0] = 0x60;
    ip6[5] = 8 + 8 + 72;
    ip6[6] = 44;
    ip6[7] = 64;
    for (std::uint8_t* a : {ip6 + 8, ip6 + 24}) {
        a[0] = 0x20;
        a[1] = 0x01;
        a[2] = 0x0d;
        a[3] = 0xb8;
    }
    ip6[23] = 1;
    ip6[39] = 2;
    std::uint8_t* fh = ip6 + 40;
    fh[0] = 17;
    const auto off = static_cast<std::uint16_t>(offset << 3 | (more ? 1 : 0));
    fh[2] = static_cast<std::uint8_t>(off >> 8);
    fh[3] = static_cast<std::uint8_t>(off);
    fh[4] = static_cast<std::uint8_t>(id >> 24);
    fh[5] = static_cast<std::uint8_t>(id >> 16);
    fh[6] = static_cast<std::uint8_t>(id >> 8);
    fh[7] = static_cast<std::uint8_t>(id);
    if (offset == 0) {
        fh[8] = 6000 >> 8;
        fh[9] = 6000 & 255;
        fh[10] = 4500 >> 8;
        fh[11] = 4500 & 255;
    }
    return f;
}

TEST(FragTraces, Ipv6FragmentsGetTheirPortsAndOrphansAreCountedAndKeptWithoutPorts) {
    const fs::path pcap = tempDir() / "frag-generated.pcap";
    const std::uint64_t t0 = 1'700'000'000ULL * 1'000'000'000ULL;
    {
        PcapWriter w(pcap);
        std::uint64_t t = t0;
        for (std::uint32_t d = 0; d < 5;
             ++d, t += 1'000'000) {  // five IPv6 datagrams of 3 fragments
            w.write(t, ipv6Fragment(0x1000 + d, 0, true));
            w.write(t + 10, ipv6Fragment(0x1000 + d, 10, true));
            w.write(t + 20, ipv6Fragment(0x1000 + d, 20, false));
        }
        for (std::uint16_t d = 0; d < 4; ++d, t += 1'000'000) {  // IPv4: the first fragment is lost
            w.write(t, ipv4Fragment("10.7.0.1", "10.7.0.2", static_cast<std::uint16_t>(300 + d), 25,
                                    true));
            w.write(t + 10, ipv4Fragment("10.7.0.1", "10.7.0.2",
                                         static_cast<std::uint16_t>(300 + d), 50, false));
        }
        w.write(t, ipv4Fragment("10.7.0.1", "10.7.0.2", 400, 0, true));  // a whole datagram
        w.write(t + 10, ipv4Fragment("10.7.0.1", "10.7.0.2", 400, 25, false));
    }
    const TraceRun r = runOn(pcap, "cache;seed=1", "generated");
    ASSERT_EQ(r.cmd.exitCode, 0) << r.cmd.err;
    const auto v6 = between(r.flows, "2001:db8::1", "2001:db8::2");
    ASSERT_EQ(v6.size(), 1U);
    EXPECT_EQ(get(v6[0], "src_port"), "6000");
    EXPECT_EQ(get(v6[0], "dst_port"), "4500");
    EXPECT_EQ(num(v6[0], "packets"), 15U);

    const auto v4 = between(r.flows, "10.7.0.1", "10.7.0.2");
    ASSERT_EQ(v4.size(), 2U);
    const JsonObject& orphans = get(v4[0], "src_port") == "0" ? v4[0] : v4[1];
    const JsonObject& whole = get(v4[0], "src_port") == "0" ? v4[1] : v4[0];
    EXPECT_EQ(get(orphans, "dst_port"), "0");
    EXPECT_EQ(num(orphans, "packets"), 8U);  // all of them, in one port-less flow
    EXPECT_EQ(get(whole, "src_port"), "5353");
    EXPECT_EQ(num(whole, "packets"), 2U);
    EXPECT_EQ(num(r.stats, "total.cache.fragments_filled"), 10U + 1U);
    EXPECT_EQ(num(r.stats, "total.cache.fragments_no_ports"), 8U);
    EXPECT_EQ(num(r.stats, "total.anomalies.fragment_no_ports"), 8U);
}

}  // namespace
}  // namespace rowprobe::test
