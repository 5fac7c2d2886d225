// Fault injection: IPFIX collectors that stall, never come up, close or reset every
// connection, and UDP collectors that are not there (issue 10, defects 1, 7 and 9).
#include <csignal>

#include "fault_support.hpp"

namespace rowprobe::test::faults {
namespace {

// One-packet flows: 300 000 (100 000 in the slower sanitizer builds), 5-15 MB of IPFIX.
const std::uint64_t kFlows = kSanitized ? 100000 : 300000;
const std::string kManyFlows = "gen;pattern=netscan;packets=" + std::to_string(kFlows);

std::string ipfixTo(std::uint16_t port, const std::string& extra) {
    return "ipfix;port=" + std::to_string(port) + ";" + extra;
}

// Defect 1: a collector that accepts (here: completes the handshake) and never reads. Once the
// 1 MiB buffer is full the stall is detected once (5 s), then records are dropped without a
// wait per message; the run ends and everything is accounted for. The old code waited the
// stall time for every message (hours for this run).
TEST(IpfixCollectorFaults, StalledCollectorIsDetectedOnceAndTheRunEnds) {
    Collector collector(Collector::Mode::Stall, 4096);
    const RunResult r =
        runFor({"-i", kManyFlows, "-o", ipfixTo(collector.port(), "buffer=1;linger=1")}, 18);
    ASSERT_NE(r.result.exitCode, -1) << "still running after 18 s: the stalled collector froze it";
    EXPECT_EQ(r.result.exitCode, 1) << "records were dropped: exit 1\n" << r.result.err;
    EXPECT_LT(r.seconds, scaled(12.0));
    const Accounting a = readAccounting(r.stats);
    EXPECT_EQ(a.exported, kFlows);
    EXPECT_GT(a.dropped, kFlows / 2);
    EXPECT_EQ(countOf(r.result.err, "took no data"), 1U) << r.result.err;
}

// Defect 1, shutdown: an endless input against the stalled collector; SIGTERM must end the
// run within `linger` (2 s) plus the stall detection, with every cached flow accounted for.
TEST(IpfixCollectorFaults, SigtermEndsWithinLingerWhateverTheCollectorDoes) {
    Collector collector(Collector::Mode::Stall, 4096);
    double stopSeconds = 0;
    const RunResult r = runAndStop({"-i", "gen;pattern=netscan;packets=0", "-s", "cache;size=14",
                                    "-o", ipfixTo(collector.port(), "buffer=1;linger=2")},
                                   3.0, 12.0, &stopSeconds);
    ASSERT_NE(r.result.exitCode, -1) << "SIGTERM did not end the run within 12 s";
    EXPECT_NE(r.result.exitCode, 130) << "a clean stop, not the second-signal exit";
    EXPECT_EQ(r.result.exitCode, 1) << r.result.err;
    EXPECT_LT(stopSeconds, 2.0 + 5.0 + scaled(1.5)) << "linger + one stall detection + slack";
    readAccounting(r.stats);
}

// Defect 7: a collector that never comes up: every record is dropped and counted, exit 1 (the
// old code exited 0).
TEST(IpfixCollectorFaults, CollectorNeverUpDropsEverythingAndExitsOne) {
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    const RunResult r = runFor(
        {"-i", "gen;pattern=netscan;packets=20000", "-o", ipfixTo(port, "buffer=1;linger=1")}, 15);
    ASSERT_NE(r.result.exitCode, -1);
    EXPECT_EQ(r.result.exitCode, 1) << r.result.err;
    const Accounting a = readAccounting(r.stats);
    EXPECT_EQ(a.written, 0U);
    EXPECT_EQ(a.dropped, 20000U);
    EXPECT_NE(r.result.err.find("dropped 20000 of 20000 records"), std::string::npos)
        << r.result.err;
}

// Defect 9: a collector that accepts and at once closes (or resets) every connection. The old
// code reconnected at once after every such connection (thousands of connections and log
// lines a second); the back-off must keep growing (0.1, 0.2, 0.4, 0.8, 1.6 s: a handful of
// connections in 3 s) and the connection events must be rate-limited in the log.
void expectBackoff(Collector::Mode mode) {
    Collector collector(mode);
    const RunResult r = runAndStop({"-i", "gen;pattern=random;flows=1000;packets=0", "-o",
                                    ipfixTo(collector.port(), "linger=1")},
                                   3.0, 10.0);
    ASSERT_NE(r.result.exitCode, -1);
    EXPECT_EQ(r.result.exitCode, 1) << "the cached flows were not delivered\n" << r.result.err;
    EXPECT_GE(collector.connections(), 2U);
    EXPECT_LE(collector.connections(), 10U) << "reconnect storm";
    EXPECT_LE(countOf(r.result.err, "connection lost"), 2U) << r.result.err;
    EXPECT_LE(countOf(r.result.err, ": connected"), 2U) << r.result.err;
    readAccounting(r.stats);
}

TEST(IpfixCollectorFaults, CollectorClosingEveryConnectionGetsBackoffNotAStorm) {
    expectBackoff(Collector::Mode::Close);
}

TEST(IpfixCollectorFaults, CollectorResettingEveryConnectionGetsBackoffNotAStorm) {
    expectBackoff(Collector::Mode::Reset);
}

// A collector that reads everything: nothing dropped, exit 0, and the bytes it got are the
// bytes rowprobe says it delivered (templates included, so at least as many).
TEST(IpfixCollectorFaults, ReadingCollectorGetsEverything) {
    Collector collector(Collector::Mode::Sink);
    const RunResult r = runFor(
        {"-i", "gen;pattern=netscan;packets=50000", "-o", ipfixTo(collector.port(), "linger=5")},
        15);
    ASSERT_NE(r.result.exitCode, -1);
    EXPECT_EQ(r.result.exitCode, 0) << r.result.err;
    const Accounting a = readAccounting(r.stats);
    EXPECT_EQ(a.written, 50000U);
    EXPECT_EQ(a.dropped, 0U);
    const JsonObject s = parseJsonFlat(readFile(r.stats));
    for (int i = 0; i < 100 && collector.bytes() < u64(s, "output.bytes"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GE(collector.bytes(), u64(s, "output.bytes"));
}

// A collector that is killed (its connections vanish) and restarted on the same port while the
// probe runs: rowprobe reconnects, and the flows flushed at SIGTERM reach the new instance;
// nothing is dropped, exit 0.
TEST(IpfixCollectorFaults, CollectorRestartMidRunLosesNothing) {
    auto collector = std::make_unique<Collector>(Collector::Mode::Sink);
    const std::uint16_t port = collector->port();
    const auto stats = tempDir() / "restart-stats.json";
    ChildProcess child(command({"-i", "gen;pattern=random;flows=1000;packets=0", "-o",
                                ipfixTo(port, "linger=5;reconnect=0.5")},
                               stats));
    const auto t0 = Clock::now();
    while (collector->connections() == 0 && secondsSince(t0) < scaled(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(collector->connections(), 1U);
    collector.reset();  // killed
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    collector = std::make_unique<Collector>(Collector::Mode::Sink, 0, port);  // restarted
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    child.signal(SIGTERM);
    const CommandResult r = child.wait(scaled(12));
    ASSERT_NE(r.exitCode, -1);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(collector->connections(), 1U) << "reconnected once to the new instance";
    const Accounting a = readAccounting(stats);
    EXPECT_GE(a.exported, 1000U);
    EXPECT_EQ(a.dropped, 0U);
    EXPECT_GT(collector->bytes(), 0U);
}

// UDP to a port nobody listens on: the ICMP errors make some sends fail; whatever the split,
// the run ends, every record is either sent or counted as dropped, and the exit code says
// whether any was dropped.
TEST(IpfixCollectorFaults, UdpCollectorDownIsAccountedFor) {
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    const RunResult r = runFor(
        {"-i", "gen;pattern=netscan;packets=20000", "-o", "ipfix;udp;port=" + std::to_string(port)},
        15);
    ASSERT_NE(r.result.exitCode, -1);
    const Accounting a = readAccounting(r.stats);
    EXPECT_EQ(a.exported, 20000U);
    EXPECT_EQ(r.result.exitCode, a.dropped > 0 ? 1 : 0) << r.result.err;
}

}  // namespace
}  // namespace rowprobe::test::faults
