// The real rowprobe binary exporting IPFIX over TCP while the collector fails: a collector
// killed and restarted in the middle of a run loses nothing (within the buffer), and an
// outage longer than the buffer is counted in the statistics without a hang.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "../unit/output/ipfix_test_decoder.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;
namespace dec = rowprobe::test::ipfix;
using Clock = std::chrono::steady_clock;

/// Flows of one TCP session decoded by the test decoder (times truncated to µs, as encoded).
std::vector<Flow> sessionFlows(const std::vector<dec::Message>& msgs) {
    std::vector<Flow> out;
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
            auto ntpToNs = [](std::uint64_t v) {
                return ((v >> 32) - 2208988800ULL) * 1'000'000'000ULL +
                       (((v & 0xFFFFFFFFULL) * 1'000'000) >> 32) * 1000;
            };
            f.timeFirstNs = ntpToNs(*r.number(0, 154));
            f.timeLastNs = ntpToNs(*r.number(0, 155));
            out.push_back(f);
        }
    }
    return out;
}

std::vector<dec::Message> decodeSession(const std::vector<std::uint8_t>& bytes) {
    dec::Decoder d;
    std::vector<dec::Message> msgs;
    std::string error;
    EXPECT_TRUE(d.decode(bytes, msgs, error)) << error;
    return msgs;
}

std::size_t recordsIn(const dec::TcpCollector& collector) {
    std::size_t n = 0;
    for (const auto& c : collector.connections()) {
        dec::Decoder d;
        std::vector<dec::Message> msgs;
        std::string error;
        d.decode(c, msgs, error);  // a message may be cut at the end: count what is whole
        for (const auto& m : msgs) n += m.records.size();
    }
    return n;
}

/// Waits until the collector's byte count has not changed for `quietMs`.
void waitQuiet(const dec::TcpCollector& collector, int quietMs = 500, double maxSeconds = 30) {
    const auto end = Clock::now() + std::chrono::duration<double>(maxSeconds);
    std::size_t last = collector.totalBytes();
    auto since = Clock::now();
    while (Clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const std::size_t now = collector.totalBytes();
        if (now != last) {
            last = now;
            since = Clock::now();
        } else if (Clock::now() - since >= std::chrono::milliseconds(quietMs)) {
            return;
        }
    }
}

// The capture is fed to rowprobe through a pipe at the test's pace, so the collector can be
// killed while rowprobe runs: 50% of the trace (flows ended early are exported), kill, 25%
// more while the collector is down, restart, the rest.
TEST(IpfixTcpInterop, CollectorKilledAndRestartedMidRunLosesNothing) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path pcap = synth10kPcap();
    if (pcap.empty()) GTEST_SKIP() << "synthetic trace not available";
    const std::string storage = "cache;seed=1;inactive=21";
    const auto expected = referenceFlows(pcap, storage);
    ASSERT_FALSE(expected.empty());

    dec::TcpCollector collector;
    const fs::path err = tempDir() / "restart.err";
    const fs::path statsFile = tempDir() / "restart-stats.json";
    PipedChild rowprobe({rowprobeBinary().string(), "-i", "pcap;file=-", "-s", storage, "-o",
                         "ipfix;port=" + std::to_string(collector.port()) + ";reconnect=0.2",
                         "--stats-json", statsFile.string()},
                        err);
    std::ifstream in(pcap, std::ios::binary);
    const auto total = static_cast<std::size_t>(fs::file_size(pcap));
    std::vector<char> chunk(1 << 20);
    auto feed = [&](std::size_t upTo) {
        static std::size_t fed = 0;
        while (fed < upTo) {
            const std::size_t n = std::min(chunk.size(), upTo - fed);
            in.read(chunk.data(), static_cast<std::streamsize>(n));
            ASSERT_TRUE(rowprobe.write(reinterpret_cast<const std::uint8_t*>(chunk.data()), n));
            fed += n;
        }
    };

    feed(total / 2);
    ASSERT_TRUE(dec::waitUntil([&] { return recordsIn(collector) > 0; }, 30))
        << "no flow exported in the first half";
    waitQuiet(collector);
    const std::size_t beforeKill = recordsIn(collector);
    collector.stop();  // killed: the connection and the listener vanish

    feed(total * 3 / 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    collector.restart();
    feed(total);
    rowprobe.closeInput();
    ASSERT_EQ(rowprobe.wait(120), 0) << readFile(err);
    waitQuiet(collector, 300);

    const auto conns = collector.connections();
    ASSERT_EQ(conns.size(), 2U) << readFile(err);
    std::vector<Flow> decoded;
    for (const auto& c : conns) {
        const auto msgs = decodeSession(c);
        ASSERT_FALSE(msgs.empty());
        EXPECT_EQ(msgs[0].templates.size(), 2U) << "templates first on every connection";
        std::uint32_t seq = 0;
        std::size_t templateMessages = 0;
        for (const auto& m : msgs) {
            EXPECT_EQ(m.sequence, seq);  // restarts at 0 with each transport session
            seq += static_cast<std::uint32_t>(m.records.size());
            templateMessages += m.templates.empty() ? 0 : 1;
        }
        EXPECT_EQ(templateMessages, 1U);
        const auto flows = sessionFlows(msgs);
        decoded.insert(decoded.end(), flows.begin(), flows.end());
    }
    std::cout << "records before the kill: " << beforeKill << " of " << expected.size()
              << "; connection bytes " << conns[0].size() << " + " << conns[1].size() << "\n";
    EXPECT_GT(beforeKill, 0U);
    EXPECT_LT(beforeKill, expected.size());
    Coverage c;
    c.timeUnitNs = 1000;
    expectSameFlows(expected, decoded, c, "collector across a restart");

    const JsonObject stats = parseJsonFlat(readFile(statsFile));
    EXPECT_EQ(stats.at("output.records"), std::to_string(expected.size()));
    EXPECT_EQ(stats.at("output.dropped"), "0");
    const std::string log = readFile(err);
    EXPECT_NE(log.find("connection lost"), std::string::npos) << log;
    EXPECT_NE(log.find("connected after"), std::string::npos) << log;
}

TEST(IpfixTcpInterop, CollectorDownAtStartIsNotAnError) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path pcap = sourceDir() / "pcaps" / "demo.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const auto expected = referenceFlows(pcap);
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    // The collector comes up 1 s after rowprobe started; rowprobe lingers up to 10 s at exit.
    std::unique_ptr<dec::TcpCollector> collector;
    std::thread late([&] {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        collector = std::make_unique<dec::TcpCollector>(port);
    });
    const auto r = runRowprobe("pcap;file=" + pcap.string(),
                               "ipfix;port=" + std::to_string(port) + ";linger=10");
    late.join();
    EXPECT_EQ(r.exitCode, 0);
    waitQuiet(*collector, 300);
    const auto conns = collector->connections();
    ASSERT_EQ(conns.size(), 1U);
    Coverage c;
    c.timeUnitNs = 1000;
    expectSameFlows(expected, sessionFlows(decodeSession(conns[0])), c, "late collector");
}

TEST(IpfixTcpInterop, OutageLongerThanTheBufferIsCountedAndExitsPromptly) {
    ROWPROBE_REQUIRE_BINARY();
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    const fs::path statsFile = tempDir() / "outage-stats.json";
    const auto t0 = Clock::now();
    // ~100 000 flows (about 8 MB of IPFIX) against a 1 MiB buffer and a collector that never
    // comes up.
    // Not runRowprobe: dropped records make the exit code 1 (issue 10, defect 7).
    const auto r =
        runCommand({rowprobeBinary().string(), "-i",
                    "gen;pattern=random;flows=1000;packets=200000;packets-per-flow=2", "-s",
                    kStorage, "-o", "ipfix;port=" + std::to_string(port) + ";buffer=1;linger=1",
                    "--quiet", "--stats-json", statsFile.string()},
                   300);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_EQ(r.exitCode, 1) << "records were dropped (issue 10, defect 7)\n" << r.err;
    EXPECT_LT(seconds, 30.0);
    const JsonObject stats = parseJsonFlat(readFile(statsFile));
    const std::uint64_t exported = toU64(stats.at("export.records"));
    const std::uint64_t records = toU64(stats.at("output.records"));
    const std::uint64_t dropped = toU64(stats.at("output.dropped"));
    EXPECT_GT(exported, 90000U);
    EXPECT_EQ(records, 0U);
    EXPECT_EQ(dropped, exported) << "every record is accounted for as dropped";
    EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
}

// Start-up mistakes are configuration errors (exit 2, one message naming the option); a
// collector that is merely down is not (see CollectorDownAtStartIsNotAnError).
TEST(IpfixTcpInterop, BadCollectorOptionsExitWithCode2) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path pcap = sourceDir() / "pcaps" / "mixed.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const std::pair<std::string, std::string> cases[] = {
        {"ipfix;host=no-such-host.invalid", "option 'host'"},
        {"ipfix;port=70000", "option 'port'"},
        {"ipfix;udp;mtu=70", "option 'mtu'"},
        {"unirec;i=x:1", "option 'ifc'"},
        {"unirec;i=u:a;p=http", "option 'plugins'"}};
    for (const auto& [output, option] : cases) {
        const auto r = runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap.string(),
                                   "-o", output, "--quiet"});
        EXPECT_EQ(r.exitCode, 2) << output << "\n" << r.err;
        EXPECT_NE(r.err.find(option), std::string::npos) << output << "\n" << r.err;
    }
}

}  // namespace
}  // namespace rowprobe::test::interop
