// Acceptance: no packet is lost between the parser and the exporter. At the end of a file, and
// when the process is stopped by SIGINT or SIGTERM while its input is still open, the sum of
// the exported packets (both directions of every record) equals the packets the statistics
// report as parsed (they reached the flow table).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

void expectConserved(const ProbeRun& run, const std::string& what) {
    ASSERT_TRUE(run.hasStat("total.parsed")) << what << ": no total.parsed in --stats-json";
    const std::uint64_t parsed = run.stat("total.parsed");
    EXPECT_EQ(packetSum(run.flows), parsed) << what << ": exported packets vs parsed";
    std::uint64_t perQueue = 0;
    for (std::size_t q = 0; run.hasStat("queues." + std::to_string(q) + ".parsed"); ++q) {
        perQueue += run.stat("queues." + std::to_string(q) + ".parsed");
    }
    EXPECT_EQ(perQueue, parsed) << what << ": sum of queues.N.parsed vs total.parsed";
    EXPECT_LE(parsed, run.stat("total.packets")) << what;
}

TEST(Conservation, ExportedPacketsEqualParsedAtEndOfOwnCaptures) {
    ROWPROBE_REQUIRE_BINARY();
    for (const char* name : {"mixed.pcap", "timeouts.pcap", "malformed.pcap", "demo.pcap"}) {
        const ProbeRun run = runProbe(sourceDir() / "pcaps" / name);
        ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
        ASSERT_TRUE(run.error.empty()) << run.error;
        expectConserved(run, name);
        EXPECT_GT(run.stat("total.parsed"), 0U) << name;
    }
}

TEST(Conservation, ExportedPacketsEqualParsedAtEndOfSynth10k) {
    ROWPROBE_REQUIRE_BINARY();
    const auto pcap = synth10kPcap();
    if (pcap.empty()) GTEST_SKIP() << "synth_10k_flows.pcap.gz not available";
    const ProbeRun run = runProbe(pcap);
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    expectConserved(run, "synth_10k_flows.pcap");
    EXPECT_EQ(run.stat("total.parsed"), 187604U);
}

TEST(Conservation, PacketLimitStopsAfterNPacketsAndExportsThemAll) {
    ROWPROBE_REQUIRE_BINARY();
    const ProbeRun run = runProbe(sourceDir() / "pcaps" / "demo.pcap", {"-c", "1000"});
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    EXPECT_EQ(run.stat("total.packets"), 1000U);
    expectConserved(run, "demo.pcap -c 1000");
}

// Raw pcap records (header included) of the first `limit` packets of a classic pcap file.
struct PcapBytes {
    std::string header;
    std::vector<std::string> records;
};

PcapBytes loadPcap(const std::filesystem::path& path, std::size_t limit) {
    PcapBytes p;
    const std::string all = readFile(path);
    if (all.size() < 24) return p;
    p.header = all.substr(0, 24);
    std::size_t at = 24;
    while (at + 16 <= all.size() && p.records.size() < limit) {
        std::uint32_t capLen = 0;
        std::memcpy(&capLen, all.data() + at + 8, 4);  // little-endian files only (ours are)
        if (at + 16 + capLen > all.size()) break;
        p.records.push_back(all.substr(at, 16 + capLen));
        at += 16 + capLen;
    }
    return p;
}

bool writeAll(int fd, const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

struct SignalCase {
    int sig;
    const char* name;
    const char* source;  // "demo" or "synth"
};

void PrintTo(const SignalCase& c, std::ostream* os) { *os << c.name << " on " << c.source; }

class StopOnSignal : public ::testing::TestWithParam<SignalCase> {};

TEST_P(StopOnSignal, FlushesEveryCachedFlowWhileInputStillOpen) {
    ROWPROBE_REQUIRE_BINARY();
    const SignalCase c = GetParam();
    std::filesystem::path source = sourceDir() / "pcaps" / "demo.pcap";
    std::size_t limit = 1'000'000;
    if (std::string(c.source) == "synth") {
        source = synth10kPcap();
        if (source.empty()) GTEST_SKIP() << "synth_10k_flows.pcap.gz not available";
        limit = 60'000;  // about a third of the trace: thousands of flows still in the cache
    }
    const PcapBytes pcap = loadPcap(source, limit);
    ASSERT_FALSE(pcap.records.empty());

    std::signal(SIGPIPE, SIG_IGN);
    const auto dir = tempDir();
    const auto fifo = dir / "input.pcap";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    ChildProcess child({rowprobeBinary().string(), "-i", "pcap;file=" + fifo.string(), "-s",
                        "cache;seed=1", "-o", "json;file=" + (dir / "flows.json").string(),
                        "--stats-json", (dir / "stats.json").string()});

    // Open the writing end once rowprobe has opened the reading end (ENXIO until then).
    int fd = -1;
    for (int i = 0; i < 1000 && fd < 0; ++i) {
        fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_TRUE(fd >= 0 || child.running()) << "rowprobe exited before opening its input:\n"
                                                << child.wait(1).err;
    }
    ASSERT_GE(fd, 0) << "rowprobe never opened the FIFO";
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    ASSERT_TRUE(writeAll(fd, pcap.header));
    std::size_t fed = 0;
    for (const auto& r : pcap.records) {
        if (!writeAll(fd, r)) break;
        ++fed;
    }
    EXPECT_EQ(fed, pcap.records.size()) << "rowprobe stopped reading early";
    std::this_thread::sleep_for(
        std::chrono::milliseconds(700));  // let it process; input stays open
    ASSERT_TRUE(child.running()) << "rowprobe exited although its input is still open:\n"
                                 << child.wait(1).err;

    child.signal(c.sig);
    CommandResult r = child.wait(10);
    const bool stoppedBySignal = r.exitCode != -1;
    close(
        fd);  // unblock it if it ignored the signal, so the rest of the test can look at the output
    EXPECT_TRUE(stoppedBySignal)
        << "rowprobe did not stop within 10 s of " << c.name
        << " while its input was open (the rest is checked after closing the input)";
    if (!stoppedBySignal) r = child.wait(10);
    ASSERT_NE(r.exitCode, -1) << "rowprobe did not stop even after its input was closed";
    EXPECT_EQ(r.exitCode, 0) << c.name << "\n" << r.err;

    ProbeRun run;
    run.result = r;
    run.flows = readFlows(dir / "flows.json", &run.error);
    ASSERT_TRUE(run.error.empty()) << run.error;
    const std::string stats = readFile(dir / "stats.json");
    ASSERT_FALSE(stats.empty()) << "no --stats-json written after " << c.name;
    run.stats = parseJsonFlat(stats);
    expectConserved(run, std::string(c.name) + " after " + std::to_string(fed) + " packets");
    EXPECT_GT(run.stat("total.parsed"), 0U);
    EXPECT_LE(run.stat("total.packets"), fed);
    for (const auto& f : run.flows) {
        if (flowValue(f, "end_reason") == "forced") return;  // flushed at shutdown, as expected
    }
    ADD_FAILURE() << "no record with end_reason 'forced': the cache was not flushed at shutdown";
}

// Inputs that never block are read by their worker, which has no input thread to wait for:
// the signal must still end an endless generator on every queue, with every flow exported.
TEST(StopOnSignalInWorker, EndlessGeneratorsReadByTheirWorkersStopAndFlushEverything) {
    ROWPROBE_REQUIRE_BINARY();
    const auto dir = tempDir();
    const std::string gen = "gen;pattern=random;flows=50000;packets=0;pps=1000000";
    ChildProcess child({rowprobeBinary().string(), "-i", gen + ";seed=1", "-i", gen + ";seed=2",
                        "--input-thread", "no", "-s", "cache;seed=1", "-o",
                        "json;file=" + (dir / "flows.json").string(), "--stats-json",
                        (dir / "stats.json").string()});
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ASSERT_TRUE(child.running()) << "rowprobe ended an endless input:\n" << child.wait(1).err;
    child.signal(SIGINT);
    const CommandResult r = child.wait(10);
    ASSERT_NE(r.exitCode, -1) << "rowprobe did not stop within 10 s of SIGINT";
    EXPECT_EQ(r.exitCode, 0) << r.err;

    ProbeRun run;
    run.result = r;
    run.flows = readFlows(dir / "flows.json", &run.error);
    ASSERT_TRUE(run.error.empty()) << run.error;
    run.stats = parseJsonFlat(readFile(dir / "stats.json"));
    expectConserved(run, "SIGINT on two generators");
    EXPECT_GT(run.stat("queues.0.parsed"), 10000U) << "worker 0 read its generator";
    EXPECT_GT(run.stat("queues.1.parsed"), 10000U) << "worker 1 read its generator";
    std::size_t forced = 0;
    for (const auto& f : run.flows) forced += flowValue(f, "end_reason") == "forced" ? 1 : 0;
    EXPECT_GT(forced, 1000U) << "the cache was not flushed at shutdown";
}

INSTANTIATE_TEST_SUITE_P(Signals, StopOnSignal,
                         ::testing::Values(SignalCase{SIGINT, "SIGINT", "demo"},
                                           SignalCase{SIGTERM, "SIGTERM", "demo"},
                                           SignalCase{SIGINT, "SIGINT", "synth"},
                                           SignalCase{SIGTERM, "SIGTERM", "synth"}),
                         [](const auto& p) {
                             return std::string(p.param.name) + "_" + p.param.source;
                         });

}  // namespace
}  // namespace rowprobe::test
