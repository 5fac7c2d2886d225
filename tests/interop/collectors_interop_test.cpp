// rowprobe's flows in the collectors people run, with each collector's own defaults (issue 25):
// NetFlow v9 (output `netflow9`) in nfcapd, nfacctd and tshark; IPFIX biflows and uniflows
// (`ipfix;uniflow`) in nfacctd and GoFlow2; UDP pacing against nfcapd's default socket buffer.
// Every decoded value is compared with rowprobe's own json output for the same capture.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "collector_tools.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

/// Skips unless nfcapd can be given a 4 MiB socket buffer for a whole capture's burst.
#define ROWPROBE_REQUIRE_RMEM_MAX()                                                              \
    do {                                                                                         \
        std::uint64_t rmemMax = 0;                                                               \
        std::ifstream("/proc/sys/net/core/rmem_max") >> rmemMax;                                 \
        if (rmemMax < 4'000'000)                                                                 \
            GTEST_SKIP() << "net.core.rmem_max is " << rmemMax                                   \
                         << ": too small for a UDP burst (sysctl -w net.core.rmem_max=4194304)"; \
    } while (0)

// ---- NetFlow v9 ------------------------------------------------------------------------------

class NetflowV9Interop : public ::testing::TestWithParam<Capture> {};

TEST_P(NetflowV9Interop, NfcapdReceivesBothDirectionsOfEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfcapd", "nfdump");
    ROWPROBE_REQUIRE_TOOL("nfdump", "nfdump");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    ROWPROBE_REQUIRE_RMEM_MAX();
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    Nfcapd nfcapd("v9-" + GetParam().name, 4194304);
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "netflow9;port=" + std::to_string(nfcapd.port));
    const std::string log = nfcapd.stop();
    EXPECT_NE(log.find("Sequence Errors: 0"), std::string::npos) << log;
    EXPECT_NE(log.find("Bad Packets: 0"), std::string::npos) << log;
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(expected, nfdumpFlows(nfcapd.dir, true), c, "nfdump (NetFlow v9)");
}

/// "12.345000000" (seconds, as tshark prints relative times) -> milliseconds.
std::uint64_t secondsTextToMs(const std::string& text) {
    const std::size_t dot = text.find('.');
    std::uint64_t ms = std::stoull(text.substr(0, dot)) * 1000;
    if (dot != std::string::npos) {
        std::string frac = text.substr(dot + 1);
        frac.resize(3, '0');
        ms += std::stoull(frac);
    }
    return ms;
}

/// The v9 records of a pcap decoded by tshark: absolute times as a collector computes them
/// from the header (unix_secs * 1000 - sysUptime + FIRST/LAST_SWITCHED).
std::vector<Flow> tsharkV9Flows(const fs::path& pcap, std::uint16_t port) {
    const std::vector<std::string> fields = {
        "cflow.unix_secs", "cflow.sysuptime", "cflow.ip_version", "cflow.srcaddr",
        "cflow.dstaddr",   "cflow.srcaddrv6", "cflow.dstaddrv6",  "cflow.srcport",
        "cflow.dstport",   "cflow.protocol",  "cflow.packets",    "cflow.octets",
        "cflow.tcpflags",  "cflow.timestart", "cflow.timeend"};
    std::vector<Flow> out;
    for (const auto& v : tsharkCflowColumns(pcap, port, fields)) {
        if (v[0].empty() || v[1].empty()) continue;
        const std::uint64_t bootMs = std::stoull(v[0][0]) * 1000 - secondsTextToMs(v[1][0]);
        std::size_t i4 = 0;
        std::size_t i6 = 0;
        for (std::size_t i = 0; i < v[2].size(); ++i) {
            Flow f;
            if (v[2][i] == "6") {
                f.srcIp = canonicalIp(v[5].at(i6));
                f.dstIp = canonicalIp(v[6].at(i6++));
            } else {
                f.srcIp = canonicalIp(v[3].at(i4));
                f.dstIp = canonicalIp(v[4].at(i4++));
            }
            f.srcPort = toU64(v[7].at(i));
            f.dstPort = toU64(v[8].at(i));
            f.proto = toU64(v[9].at(i));
            f.packets = toU64(v[10].at(i));
            f.bytes = toU64(v[11].at(i));
            f.tcpFlags = std::stoull(v[12].at(i), nullptr, 0);
            f.timeFirstNs = (bootMs + secondsTextToMs(v[13].at(i))) * 1'000'000;
            f.timeLastNs = (bootMs + secondsTextToMs(v[14].at(i))) * 1'000'000;
            out.push_back(f);
        }
    }
    return out;
}

TEST_P(NetflowV9Interop, TsharkDecodesEveryRecordOfAPcapFile) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    const fs::path pcap = tempDir() / ("v9-" + GetParam().name + ".pcap");
    runRowprobe("pcap;file=" + GetParam().path().string(),
                "netflow9;file=" + pcap.string() + ";port=2055;template-packets=50");
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(expected, tsharkV9Flows(pcap, 2055), c, "tshark (NetFlow v9)");
    const auto expert = runCommand(
        {"tshark", "-r", pcap.string(), "-d", "udp.port==2055,cflow", "-q", "-z", "expert,warn"});
    EXPECT_EQ(expert.exitCode, 0);
    EXPECT_EQ(expert.out.find("Errors"), std::string::npos) << expert.out;
    EXPECT_EQ(expert.out.find("Warns"), std::string::npos) << expert.out;
}

TEST(NetflowV9Options, BadValuesExitWithCode2) {
    ROWPROBE_REQUIRE_BINARY();
    for (const char* o :
         {"netflow9;mtu=100", "netflow9;file=/x.pcap;host=a", "netflow9;prot=2055"}) {
        const auto r = runCommand({rowprobeBinary().string(), "-i",
                                   "gen;pattern=random;flows=10;packets=100;packets-per-flow=2",
                                   "-o", o, "--quiet"});
        EXPECT_EQ(r.exitCode, 2) << o << "\n" << r.err;
        EXPECT_NE(r.err.find("netflow9"), std::string::npos) << r.err;
    }
}

// ---- pmacct's nfacctd ------------------------------------------------------------------------

/// Runs nfacctd (print plugin, JSON, every primitive the comparison needs) on a free port,
/// sends the capture with `output` (its port appended) and returns the flows it printed.
std::vector<Flow> nfacctdFlows(const Capture& capture, const std::string& output,
                               const std::string& name,
                               const std::vector<std::string>& extra = {}) {
    const fs::path dir = tempDir() / ("nfacctd-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::uint16_t port = freeLoopbackPort(SOCK_DGRAM);
    const fs::path out = dir / "flows.json";
    std::ofstream(dir / "nfacctd.conf")
        << "daemonize: false\n"
        << "nfacctd_ip: 127.0.0.1\n"
        << "nfacctd_port: " << port << "\n"
        << "nfacctd_pipe_size: 4194304\n"
        << "plugins: print\n"
        << "aggregate: src_host, dst_host, src_port, dst_port, proto, tcpflags, "
           "timestamp_start, timestamp_end\n"
        << "print_output: json\n"
        << "print_output_file: " << out.string() << "\n"
        << "print_output_file_append: true\n"
        << "print_refresh_time: 1\n"
        << "print_num_protos: true\n"
        << "timestamps_since_epoch: true\n"
        << "logfile: " << (dir / "nfacctd.log").string() << "\n";
    ChildProcess nfacctd({findTool("nfacctd"), "-f", (dir / "nfacctd.conf").string()});
    EXPECT_TRUE(dec::waitUntil([&] { return udpPortBoundBy(nfacctd.pid(), port); }, 20))
        << "nfacctd did not start";
    // Paced (about 0.5 s for synth10k): unpaced, a burst can overflow nfacctd's socket buffer
    // on a loaded machine, and the test would measure the machine, not the records.
    runRowprobe("pcap;file=" + capture.path().string(),
                output + ";pace=2000;port=" + std::to_string(port), extra);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // two print intervals
    nfacctd.signal(SIGINT);
    nfacctd.wait(20);
    std::vector<Flow> flows;
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("\"ip_src\"") == std::string::npos) continue;
        const JsonObject o = parseJsonFlat(line);
        auto get = [&](const char* k) {
            const auto it = o.find(k);
            return it == o.end() ? std::string() : it->second;
        };
        Flow f;
        f.srcIp = canonicalIp(get("ip_src"));
        f.dstIp = canonicalIp(get("ip_dst"));
        f.srcPort = toU64(get("port_src"));
        f.dstPort = toU64(get("port_dst"));
        f.proto = toU64(get("ip_proto"));
        f.packets = toU64(get("packets"));
        f.bytes = toU64(get("bytes"));
        f.tcpFlags = toU64(get("tcp_flags"));
        const double first =
            std::stod(get("timestamp_start").empty() ? "0" : get("timestamp_start"));
        const double last = std::stod(get("timestamp_end").empty() ? "0" : get("timestamp_end"));
        f.timeFirstNs = static_cast<std::uint64_t>(first * 1000 + 0.5) * 1'000'000;
        f.timeLastNs = static_cast<std::uint64_t>(last * 1000 + 0.5) * 1'000'000;
        flows.push_back(f);
    }
    return flows;
}

class NfacctdInterop : public ::testing::TestWithParam<Capture> {};

// nfacctd reads no RFC 5103 reverse element: a biflow arrives with its forward direction only
// (the reason for `uniflow`). Checked so that the day pmacct learns biflows, this test says so.
TEST_P(NfacctdInterop, IpfixBiflowArrivesWithItsForwardDirectionOnly) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfacctd", "pmacct");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    auto expected = referenceFlows(GetParam().path());
    for (Flow& f : expected) f.packetsRev = f.bytesRev = f.tcpFlagsRev = 0;
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(
        expected, nfacctdFlows(GetParam(), "ipfix;udp;timestamps=ms", "biflow-" + GetParam().name),
        c, "nfacctd (IPFIX biflow)");
}

TEST_P(NfacctdInterop, IpfixUniflowArrivesWithBothDirections) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfacctd", "pmacct");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(
        expected,
        nfacctdFlows(GetParam(), "ipfix;udp;uniflow;timestamps=ms", "uniflow-" + GetParam().name),
        c, "nfacctd (IPFIX uniflow)");
}

// nfacctd turns v9 times into whole seconds: unix_secs - (sysUptime - FIRST_SWITCHED) / 1000
// with an integer division, so a flow's second comes out rounded up (pmacct's arithmetic; the
// milliseconds are on the wire, as tshark, nfdump and GoFlow2 show).
TEST_P(NfacctdInterop, NetflowV9ArrivesWithBothDirections) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfacctd", "pmacct");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    auto ceilSecond = [](std::uint64_t ns) {
        const std::uint64_t ms = ns / 1'000'000;
        return (ms + 999) / 1000 * 1'000'000'000ULL;
    };
    for (Flow& f : expected) {
        f.timeFirstNs = ceilSecond(f.timeFirstNs);
        f.timeLastNs = ceilSecond(f.timeLastNs);
    }
    Coverage c;
    c.timeUnitNs = 1'000'000'000;
    expectSameFlows(expected, nfacctdFlows(GetParam(), "netflow9", "v9-" + GetParam().name), c,
                    "nfacctd (NetFlow v9)");
}

// ---- GoFlow2 ---------------------------------------------------------------------------------

/// The pace of every output sent to GoFlow2, in messages a second. GoFlow2 keeps its default
/// socket buffer (about 150 messages) and decodes with one worker: a 10k-flow burst overflows
/// it, and so did 2000 messages a second on a 2-core machine running three test suites at once
/// (load average 9: 2709 of 19713 NetFlow v9 records lost). 500 a second is 14 000 records a
/// second at most, about 1.5 s for synth10k.
constexpr const char* kGoflowPace = ";pace=500";

/// GoFlow2 (`go install github.com/netsampler/goflow2/v2/cmd/goflow2@latest`) listening for
/// NetFlow v9 and IPFIX on a free port with its default socket buffer (hence `kGoflowPace` in
/// the outputs); its JSON lines, one per record. A datagram the kernel dropped for its socket
/// fails the test with that reason.
std::vector<Flow> goflow2Flows(const Capture& capture, const std::string& output,
                               const std::string& name,
                               const std::vector<std::string>& extra = {}) {
    const fs::path dir = tempDir() / ("goflow2-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::uint16_t port = freeLoopbackPort(SOCK_DGRAM);
    const fs::path out = dir / "flows.json";
    // Its HTTP server gets a free port too: on the default :8080, two GoFlow2 cases run side by
    // side by ctest -j2 collide and the second exits at start-up.
    const std::uint16_t httpPort = freeLoopbackPort(SOCK_STREAM);
    ChildProcess goflow({findTool("goflow2"), "-listen",
                         "netflow://127.0.0.1:" + std::to_string(port) + "?workers=1", "-addr",
                         "127.0.0.1:" + std::to_string(httpPort), "-format", "json", "-transport",
                         "file", "-transport.file", out.string()});
    EXPECT_TRUE(dec::waitUntil([&] { return udpPortBoundBy(goflow.pid(), port); }, 20))
        << "goflow2 did not start";
    runRowprobe("pcap;file=" + capture.path().string(),
                output + kGoflowPace + ";port=" + std::to_string(port), extra);
    // GoFlow2 decodes and writes asynchronously: wait until its file has not grown for 3 s (a
    // loaded machine can starve it for a second or more), at most 60 s.
    std::uintmax_t last = 0;
    for (int stable = 0, i = 0; stable < 10 && i < 200; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::error_code ec;
        const std::uintmax_t now = fs::file_size(out, ec);
        stable = !ec && now != 0 && now == last ? stable + 1 : 0;
        last = ec ? 0 : now;
    }
    EXPECT_EQ(udpSocketDrops(port), 0U)
        << "GoFlow2's socket overflowed: the machine starved it even at " << kGoflowPace;
    goflow.signal(SIGTERM);
    goflow.wait(20);
    std::vector<Flow> flows;
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("\"src_addr\"") == std::string::npos) continue;
        const JsonObject o = parseJsonFlat(line);
        auto get = [&](const char* k) {
            const auto it = o.find(k);
            return it == o.end() ? std::string("0") : it->second;
        };
        Flow f;
        f.srcIp = canonicalIp(get("src_addr"));
        f.dstIp = canonicalIp(get("dst_addr"));
        f.srcPort = toU64(get("src_port"));
        f.dstPort = toU64(get("dst_port"));
        const std::string proto = get("proto");
        f.proto = proto == "TCP"         ? 6
                  : proto == "UDP"       ? 17
                  : proto == "ICMP"      ? 1
                  : proto == "IPv6-ICMP" ? 58
                                         : toU64(proto);
        f.packets = toU64(get("packets"));
        f.bytes = toU64(get("bytes"));
        f.tcpFlags = toU64(get("tcp_flags"));
        f.timeFirstNs = toU64(get("time_flow_start_ns"));
        f.timeLastNs = toU64(get("time_flow_end_ns"));
        flows.push_back(f);
    }
    return flows;
}

class GoFlow2Interop : public ::testing::TestWithParam<Capture> {};

// Today's biflows: GoFlow2 keeps the forward counters and drops the RFC 5103 reverse ones,
// so half of every conversation vanishes (what its users report).
TEST_P(GoFlow2Interop, IpfixBiflowLosesTheReverseDirection) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("goflow2", "GoFlow2 via go install");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    auto expected = referenceFlows(GetParam().path());
    for (Flow& f : expected) f.packetsRev = f.bytesRev = f.tcpFlagsRev = 0;
    Coverage c;
    c.timeUnitNs = 1000;
    expectSameFlows(expected, goflow2Flows(GetParam(), "ipfix;udp", "biflow-" + GetParam().name), c,
                    "goflow2 (IPFIX biflow)");
}

TEST_P(GoFlow2Interop, IpfixUniflowReverseCountersReachItsOutput) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("goflow2", "GoFlow2 via go install");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    Coverage c;
    c.timeUnitNs = 1000;
    expectSameFlows(expected,
                    goflow2Flows(GetParam(), "ipfix;udp;uniflow", "uniflow-" + GetParam().name), c,
                    "goflow2 (IPFIX uniflow)");
}

TEST_P(GoFlow2Interop, NetflowV9ArrivesWithBothDirections) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("goflow2", "GoFlow2 via go install");
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = uniflowsOf(referenceFlows(GetParam().path()));
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(expected, goflow2Flows(GetParam(), "netflow9", "v9-" + GetParam().name), c,
                    "goflow2 (NetFlow v9)");
}

// ---- UDP pacing ------------------------------------------------------------------------------

// nfcapd with its default receive buffer (no -B) and a burst of 20 000 flows: unpaced, a part
// of the records is lost unseen, varying run to run; paced, every record arrives, 10 runs of 10.
// 500 messages a second: at 2 000 nfcapd fell behind beside another suite (17,958 of 20,514
// records, load 6), as GoFlow2 did.
TEST(UdpPacing, NfcapdWithItsDefaultBufferGetsEveryRecordTenRunsOutOfTen) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfcapd", "nfdump");
    ROWPROBE_REQUIRE_TOOL("nfdump", "nfdump");
    const std::string input = "gen;pattern=random;flows=2000;packets=40000;packets-per-flow=2";
    const auto reference = runRowprobe(input, "json");
    const std::size_t expected =
        static_cast<std::size_t>(std::count(reference.out.begin(), reference.out.end(), '\n'));
    ASSERT_GT(expected, 15000U);
    for (int run = 0; run < 10; ++run) {
        SCOPED_TRACE("run " + std::to_string(run));
        Nfcapd nfcapd("paced", 0);
        const auto t0 = std::chrono::steady_clock::now();
        runRowprobe(input, "ipfix;udp;pace=500;timestamps=ms;port=" + std::to_string(nfcapd.port));
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        nfcapd.stop();
        const auto info = runCommand({"nfdump", "-R", nfcapd.dir.string(), "-I"}, 120);
        ASSERT_EQ(info.exitCode, 0) << info.err;
        const std::size_t at = info.out.find("Flows: ");
        ASSERT_NE(at, std::string::npos) << info.out;
        EXPECT_EQ(std::stoull(info.out.substr(at + 7)), expected) << info.out;
        // The pacing's price: about 1 100 messages at 500 a second.
        EXPECT_LT(seconds, 30.0);
    }
}

// RFC 5610 type records (sent with plugin templates, type-info=yes by default) are one more
// options template to collectors that do not read them: nfacctd and GoFlow2 keep every flow of
// a capture whose flows carry http fields (ipfixprobe's http.pcap), both directions, no more.
TEST(TypeRecordsInCollectors, NfacctdKeepsEveryFlowWithPluginTemplatesAndTypeRecords) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfacctd", "pmacct");
    const Capture http{"ipfixprobe/inputs/http"};
    ROWPROBE_REQUIRE_CAPTURE(http);
    const auto expected = uniflowsOf(referenceFlows(http.path()));
    Coverage c;
    c.timeUnitNs = 1'000'000;
    expectSameFlows(
        expected, nfacctdFlows(http, "ipfix;udp;uniflow;timestamps=ms", "typeinfo", {"-p", "http"}),
        c, "nfacctd (uniflow, http templates with type records)");
}

TEST(TypeRecordsInCollectors, GoFlow2KeepsEveryFlowWithPluginTemplatesAndTypeRecords) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("goflow2", "GoFlow2 via go install");
    const Capture http{"ipfixprobe/inputs/http"};
    ROWPROBE_REQUIRE_CAPTURE(http);
    const auto expected = uniflowsOf(referenceFlows(http.path()));
    Coverage c;
    c.timeUnitNs = 1000;
    expectSameFlows(expected, goflow2Flows(http, "ipfix;udp;uniflow", "typeinfo", {"-p", "http"}),
                    c, "goflow2 (uniflow, http templates with type records)");
}

const Capture kCaptures[] = {{"synth10k"}, {"demo"}};
INSTANTIATE_TEST_SUITE_P(Captures, NetflowV9Interop, ::testing::ValuesIn(kCaptures), captureName);
INSTANTIATE_TEST_SUITE_P(Captures, NfacctdInterop, ::testing::ValuesIn(kCaptures), captureName);
INSTANTIATE_TEST_SUITE_P(Captures, GoFlow2Interop, ::testing::ValuesIn(kCaptures), captureName);

}  // namespace
}  // namespace rowprobe::test::interop
