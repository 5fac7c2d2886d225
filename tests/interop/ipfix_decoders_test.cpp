// The `ipfix` output of the real rowprobe binary decoded by tools nobody here wrote:
// libfixbuf's ipfixDump (file), tshark (UDP datagrams), nfdump's nfcapd (UDP collector), and a
// TCP stream saved by a collector and read by ipfixDump. For every flow of each capture, each
// decoded value must equal rowprobe's own json output for the same capture.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "../unit/output/ipfix_test_decoder.hpp"
#include "collector_tools.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;
namespace dec = rowprobe::test::ipfix;

// ---- ipfixDump ------------------------------------------------------------------------------

Flow flowFromIpfixDump(const std::map<std::string, std::string>& r) {
    auto get = [&](const char* k) -> std::string {
        auto it = r.find(k);
        return it == r.end() ? std::string() : it->second;
    };
    auto either = [&](const char* a, const char* b) { return r.count(a) != 0 ? get(a) : get(b); };
    Flow f;
    f.srcIp = canonicalIp(either("8", "27"));
    f.dstIp = canonicalIp(either("12", "28"));
    f.srcPort = toU64(get("7"));
    f.dstPort = toU64(get("11"));
    f.proto = toU64(get("4"));
    f.packets = toU64(get("2"));
    f.bytes = toU64(get("1"));
    f.packetsRev = toU64(get("29305/2"));
    f.bytesRev = toU64(get("29305/1"));
    f.tcpFlags = toU64(get("6"));
    f.tcpFlagsRev = toU64(get("29305/6"));
    f.timeFirstNs = parseTimeNs(either("152", "154")).value_or(0);
    f.timeLastNs = parseTimeNs(either("153", "155")).value_or(0);
    return f;
}

class IpfixDumpInterop : public ::testing::TestWithParam<Capture> {};

// ipfixDump prints dateTimeMicroseconds with a zero fraction (a libfixbuf
// quirk), so the µs run checks times to the second and the ms run to the ms.
TEST_P(IpfixDumpInterop, DecodesEveryFlowOfAnIpfixFile) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = referenceFlows(GetParam().path());
    ASSERT_FALSE(expected.empty());
    for (const std::string ts : {"us", "ms"}) {
        SCOPED_TRACE("timestamps=" + ts);
        const fs::path file = tempDir() / (GetParam().name + "-" + ts + ".ipfix");
        runRowprobe("pcap;file=" + GetParam().path().string(),
                    "ipfix;file=" + file.string() + ";timestamps=" + ts);
        const auto dump = runCommand({"ipfixDump", "--in", file.string(), "--data"});
        ASSERT_EQ(dump.exitCode, 0) << dump.err;
        std::vector<Flow> decoded;
        for (const auto& r : ipfixDumpRecords(dump.out)) decoded.push_back(flowFromIpfixDump(r));
        Coverage c;
        c.timeUnitNs = ts == "us" ? 1'000'000'000 : 1'000'000;
        expectSameFlows(expected, decoded, c, "ipfixDump");

        // Its statistics: every record, in template 258 (IPv4) or 259 (IPv6).
        const auto stats = runCommand({"ipfixDump", "--in", file.string(), "--stats"});
        EXPECT_NE(stats.out.find(std::to_string(expected.size()) + " Data Records"),
                  std::string::npos)
            << stats.out;
        EXPECT_NE(stats.out.find("2 Template Records"), std::string::npos) << stats.out;
        std::size_t v6 = 0;
        for (const auto& f : expected) v6 += f.srcIp.find(':') != std::string::npos ? 1 : 0;
        if (v6 != 0) {
            EXPECT_NE(stats.out.find("259 (0x0103)| " + std::to_string(v6)), std::string::npos)
                << stats.out;
        }
    }
}

// ---- tshark ---------------------------------------------------------------------------------

class TsharkInterop : public ::testing::TestWithParam<Capture> {};

TEST_P(TsharkInterop, DecodesEveryFlowSentOverUdp) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = referenceFlows(GetParam().path());
    for (const std::string ts : {"us", "ns"}) {
        SCOPED_TRACE("timestamps=" + ts);
        dec::UdpCollector collector;
        runRowprobe("pcap;file=" + GetParam().path().string(),
                    "ipfix;udp;port=" + std::to_string(collector.port()) + ";timestamps=" + ts);
        const auto datagrams = settledDatagrams(collector);
        const fs::path pcap = tempDir() / (GetParam().name + "-udp-" + ts + ".pcap");
        writeUdpPcap(pcap, datagrams, collector.port());
        Coverage c;
        c.timeUnitNs = ts == "us" ? 1000 : 1;
        expectSameFlows(expected, tsharkFlows(pcap, collector.port()), c, "tshark");

        // The dissector has no complaint (malformed set, unknown template, bad length ...).
        const auto expert = runCommand({"tshark", "-r", pcap.string(), "-d",
                                        "udp.port==" + std::to_string(collector.port()) + ",cflow",
                                        "-q", "-z", "expert,warn"});
        EXPECT_EQ(expert.exitCode, 0);
        EXPECT_EQ(expert.out.find("Errors"), std::string::npos) << expert.out;
        EXPECT_EQ(expert.out.find("Warns"), std::string::npos) << expert.out;
    }
}

// Periodic template refresh over UDP, as a decoder sees it: template sets keep reappearing.
TEST_P(TsharkInterop, UdpTemplateRefreshIsVisibleInTheCapture) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    dec::UdpCollector collector;
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "ipfix;udp;port=" + std::to_string(collector.port()) + ";template-packets=5");
    const auto datagrams = settledDatagrams(collector);
    const fs::path pcap = tempDir() / (GetParam().name + "-refresh.pcap");
    writeUdpPcap(pcap, datagrams, collector.port());
    const auto r = runCommand({"tshark", "-r", pcap.string(), "-d",
                               "udp.port==" + std::to_string(collector.port()) + ",cflow", "-Y",
                               "cflow.flowset_id == 2", "-T", "fields", "-e", "frame.number"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto frames = splitOn(r.out, '\n');
    std::size_t templateFrames = 0;
    for (const auto& f : frames) templateFrames += f.empty() ? 0 : 1;
    // One template message, then at most 5 data messages until the next one.
    EXPECT_GE(templateFrames, datagrams.size() / 6);
    EXPECT_GE(templateFrames, 2U);
    EXPECT_EQ(frames.front(), "1") << "templates come first";
}

// ---- nfdump ---------------------------------------------------------------------------------

class NfdumpInterop : public ::testing::TestWithParam<Capture> {};

// nfcapd (nfdump 1.7) collects IPFIX over UDP only and reads flowStart/EndMilliseconds but not
// the microsecond elements, so rowprobe runs with timestamps=ms here (docs/collectors.md). It
// maps RFC 5103 reverse counters to out_packets / out_bytes.
TEST_P(NfdumpInterop, NfcapdReceivesEveryFlowOverUdp) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfcapd", "nfdump");
    ROWPROBE_REQUIRE_TOOL("nfdump", "nfdump");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    // rowprobe sends a whole capture's flows in one burst; nfcapd's socket must hold it
    // (about 1 MB for the synthetic trace). Its -B is capped by net.core.rmem_max.
    std::uint64_t rmemMax = 0;
    std::ifstream("/proc/sys/net/core/rmem_max") >> rmemMax;
    if (rmemMax < 2'000'000) {
        GTEST_SKIP() << "net.core.rmem_max is " << rmemMax
                     << ": too small for a UDP burst (sysctl -w net.core.rmem_max=4194304)";
    }
    const auto expected = referenceFlows(GetParam().path());
    Nfcapd nfcapd(GetParam().name, 4194304);
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "ipfix;udp;port=" + std::to_string(nfcapd.port) + ";timestamps=ms");
    // nfcapd's summary: no gap in the sequence numbers, nothing it could not parse.
    const std::string log = nfcapd.stop();
    EXPECT_NE(log.find("Sequence Errors: 0"), std::string::npos) << log;
    EXPECT_NE(log.find("Bad Packets: 0"), std::string::npos) << log;

    const std::vector<Flow> decoded = nfdumpFlows(nfcapd.dir, false);
    Coverage c;
    c.timeUnitNs = 1'000'000;
    c.flags = false;  // see above: nfdump's flags are the reverse ones
    expectSameFlows(expected, decoded, c, "nfdump");
}

// ---- Uniflow export (`ipfix;uniflow`) ---------------------------------------------------------
//
// Collectors that ignore RFC 5103 reverse elements (GoFlow2, Akvorado) or fold them wrongly
// (nfdump's flags) get each biflow as two uniflow records with IANA elements only: every
// direction's packets, bytes, flags and times must arrive as records of their own.

class UniflowInterop : public ::testing::TestWithParam<Capture> {};

TEST_P(UniflowInterop, NfcapdReceivesBothDirectionsOfEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfcapd", "nfdump");
    ROWPROBE_REQUIRE_TOOL("nfdump", "nfdump");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    std::uint64_t rmemMax = 0;
    std::ifstream("/proc/sys/net/core/rmem_max") >> rmemMax;
    if (rmemMax < 4'000'000) {
        GTEST_SKIP() << "net.core.rmem_max is " << rmemMax
                     << ": too small for a UDP burst (sysctl -w net.core.rmem_max=4194304)";
    }
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    Nfcapd nfcapd("uniflow-" + GetParam().name, 4194304);
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "ipfix;udp;uniflow;port=" + std::to_string(nfcapd.port) + ";timestamps=ms");
    const std::string log = nfcapd.stop();
    EXPECT_NE(log.find("Sequence Errors: 0"), std::string::npos) << log;
    EXPECT_NE(log.find("Bad Packets: 0"), std::string::npos) << log;
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(expected, nfdumpFlows(nfcapd.dir, true), c, "nfdump (uniflow)");
}

TEST_P(UniflowInterop, TsharkDecodesBothDirectionsOfEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    dec::UdpCollector collector;
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "ipfix;udp;uniflow;port=" + std::to_string(collector.port()));
    const auto datagrams = settledDatagrams(collector);
    const fs::path pcap = tempDir() / (GetParam().name + "-uniflow.pcap");
    writeUdpPcap(pcap, datagrams, collector.port());
    Coverage c;
    c.timeUnitNs = 1000;
    expectSameFlows(expected, tsharkFlows(pcap, collector.port(), true), c, "tshark (uniflow)");
    // Only IANA elements: no RFC 5103 reverse element nor any enterprise element.
    const auto pen =
        runCommand({"tshark", "-r", pcap.string(), "-d",
                    "udp.port==" + std::to_string(collector.port()) + ",cflow", "-Y",
                    "cflow.template_ipfix_field_pen", "-T", "fields", "-e", "frame.number"});
    EXPECT_EQ(pen.exitCode, 0) << pen.err;
    EXPECT_EQ(pen.out, "") << "template fields with an enterprise number";
}

// libfixbuf reads the uniflow templates too: every direction of every flow is a record of its
// own (timestamps=ms: ipfixDump prints milliseconds exactly), and flowDirection says which.
TEST_P(UniflowInterop, IpfixDumpDecodesBothDirectionsOfEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    const fs::path file = tempDir() / (GetParam().name + "-uniflow.ipfix");
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "ipfix;file=" + file.string() + ";uniflow;timestamps=ms");
    const auto dump = runCommand({"ipfixDump", "--in", file.string(), "--data"});
    ASSERT_EQ(dump.exitCode, 0) << dump.err;
    std::vector<Flow> decoded;
    std::size_t reverse = 0;
    for (auto r : ipfixDumpRecords(dump.out)) {
        EXPECT_EQ(r.count("29305/1"), 0U) << "an RFC 5103 element in a uniflow record";
        reverse += r.count("61") != 0 && r.at("61") == "1" ? 1 : 0;
        for (const char* rev : {"29305/1", "29305/2", "29305/6"}) r[rev] = "0";  // none here
        decoded.push_back(flowFromIpfixDump(r));
    }
    std::size_t expectedReverse = 0;
    for (const auto& f : referenceFlows(GetParam().path())) expectedReverse += f.packetsRev != 0;
    EXPECT_EQ(reverse, expectedReverse);
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(expected, decoded, c, "ipfixDump (uniflow)");
}

// flowDirection tells the two halves apart in uniflow export, so a `dir` constant is refused.
TEST(UniflowOptions, DirWithUniflowIsRefusedWithExitCode2) {
    ROWPROBE_REQUIRE_BINARY();
    const auto r = runCommand({rowprobeBinary().string(), "-i",
                               "gen;pattern=random;flows=10;packets=100;packets-per-flow=2", "-o",
                               "ipfix;udp;uniflow;dir=1", "--quiet"});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("dir"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("uniflow"), std::string::npos) << r.err;
}

// ---- TCP stream -----------------------------------------------------------------------------

class TcpStreamInterop : public ::testing::TestWithParam<Capture> {};

// nfcapd 1.7 has no TCP listener; a TCP IPFIX stream is an IPFIX file (RFC 5655), so the
// stream saved by a collector is checked with ipfixDump, and to the microsecond with the
// test decoder.
TEST_P(TcpStreamInterop, StreamSavedByACollectorDecodesWithIpfixDump) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = referenceFlows(GetParam().path());
    dec::TcpCollector collector;
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "ipfix;port=" + std::to_string(collector.port()));
    ASSERT_TRUE(dec::waitUntil([&] {
        const auto c = collector.connections();
        return !c.empty() && c[0].size() > 0;
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto conns = collector.connections();
    ASSERT_EQ(conns.size(), 1U);
    const fs::path file = tempDir() / (GetParam().name + "-tcp.ipfix");
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(conns[0].data()),
               static_cast<std::streamsize>(conns[0].size()));
    const auto dump = runCommand({"ipfixDump", "--in", file.string(), "--data"});
    ASSERT_EQ(dump.exitCode, 0) << dump.err;
    std::vector<Flow> decoded;
    for (const auto& r : ipfixDumpRecords(dump.out)) decoded.push_back(flowFromIpfixDump(r));
    Coverage seconds;
    seconds.timeUnitNs = 1'000'000'000;
    expectSameFlows(expected, decoded, seconds, "ipfixDump (TCP stream)");

    dec::Decoder d;
    std::vector<dec::Message> msgs;
    std::string error;
    ASSERT_TRUE(d.decode(conns[0], msgs, error)) << error;
    std::vector<Flow> exact;
    for (const auto& m : msgs) {
        for (const auto& r : m.records) {
            Flow f;
            const auto* src = r.find(0, 8) != nullptr ? r.find(0, 8) : r.find(0, 27);
            const auto* dst = r.find(0, 12) != nullptr ? r.find(0, 12) : r.find(0, 28);
            char text[INET6_ADDRSTRLEN] = {};
            inet_ntop(src->size() == 4 ? AF_INET : AF_INET6, src->data(), text, sizeof text);
            f.srcIp = text;
            inet_ntop(dst->size() == 4 ? AF_INET : AF_INET6, dst->data(), text, sizeof text);
            f.dstIp = text;
            f.srcPort = *r.number(0, 7);
            f.dstPort = *r.number(0, 11);
            f.proto = *r.number(0, 4);
            f.packets = *r.number(0, 2);
            f.bytes = *r.number(0, 1);
            f.packetsRev = *r.number(29305, 2);
            f.bytesRev = *r.number(29305, 1);
            f.tcpFlags = *r.number(0, 6);
            f.tcpFlagsRev = *r.number(29305, 6);
            auto ntpToNs = [](std::uint64_t v) {  // truncating, as libfixbuf
                return ((v >> 32) - 2208988800ULL) * 1'000'000'000ULL +
                       (((v & 0xFFFFFFFFULL) * 1'000'000) >> 32) * 1000;
            };
            f.timeFirstNs = ntpToNs(*r.number(0, 154));
            f.timeLastNs = ntpToNs(*r.number(0, 155));
            exact.push_back(f);
        }
    }
    Coverage micro;
    micro.timeUnitNs = 1000;
    expectSameFlows(expected, exact, micro, "test decoder (TCP stream)");
}

const Capture kCaptures[] = {{"synth10k"}, {"demo"}};
INSTANTIATE_TEST_SUITE_P(Captures, IpfixDumpInterop, ::testing::ValuesIn(kCaptures), captureName);
INSTANTIATE_TEST_SUITE_P(Captures, TsharkInterop, ::testing::ValuesIn(kCaptures), captureName);
INSTANTIATE_TEST_SUITE_P(Captures, NfdumpInterop, ::testing::ValuesIn(kCaptures), captureName);
INSTANTIATE_TEST_SUITE_P(Captures, UniflowInterop, ::testing::ValuesIn(kCaptures), captureName);
INSTANTIATE_TEST_SUITE_P(Captures, TcpStreamInterop, ::testing::ValuesIn(kCaptures), captureName);

}  // namespace
}  // namespace rowprobe::test::interop
