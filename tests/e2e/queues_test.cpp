// Several queues export the same flows as one: `-q 2` (one reader, software distributor), two
// `-i` (one capture file per worker, split by flow), on the synthetic 10k-flow trace with the
// default and with short timeouts; a worker reading its own file exports what an input thread
// would; fragments keep their ports on any queue; -q / --cpus errors.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sched.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "queues_flow_set.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kShortTimeouts = "cache;seed=1;inactive=0.05;active=0.2";

/// Splits `pcap` into `parts` files by the flow of each packet (both directions together, in
/// order), with a hash unrelated to rowprobe's.
std::vector<fs::path> splitByFlow(const fs::path& pcap, std::size_t parts, const fs::path& dir) {
    char err[PCAP_ERRBUF_SIZE] = {};
    pcap_t* in =
        pcap_open_offline_with_tstamp_precision(pcap.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (in == nullptr) throw std::runtime_error(err);
    std::vector<fs::path> paths;
    std::vector<std::unique_ptr<PcapWriter>> out;
    for (std::size_t i = 0; i < parts; ++i) {
        paths.push_back(dir / ("part" + std::to_string(i) + ".pcap"));
        out.push_back(std::make_unique<PcapWriter>(paths.back(), true,
                                                   static_cast<std::uint32_t>(pcap_datalink(in))));
    }
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    AnomalyCounters anomalies;
    while (pcap_next_ex(in, &h, &data) == 1) {
        const TimeNs ts =
            static_cast<TimeNs>(h->ts.tv_sec) * kNsPerSec + static_cast<TimeNs>(h->ts.tv_usec);
        const RawPacket raw{data, h->caplen, h->len, ts};
        ParsedPacket p;
        std::size_t part = 0;
        if (parsePacket(raw, static_cast<LinkType>(pcap_datalink(in)), ParserConfig{}, p,
                        anomalies)) {
            std::uint64_t x = 1469598103934665603ULL;  // FNV-1a over the canonical key
            for (const std::byte b : p.key.bytes())
                x = (x ^ static_cast<std::uint8_t>(b)) * 1099511628211ULL;
            part = static_cast<std::size_t>(x % parts);
        }
        out[part]->write(ts, std::vector<std::uint8_t>(data, data + h->caplen));
    }
    pcap_close(in);
    return paths;
}

class Queues : public ::testing::Test {
protected:
    void SetUp() override {
        m_trace = synth10kPcap();
        if (m_trace.empty())
            GTEST_SKIP() << "missing the synthetic 10k-flow trace (testdata/bench)";
        m_dir = tempDir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::create_directories(m_dir);
    }
    fs::path m_trace;
    fs::path m_dir;
};

TEST_F(Queues, TwoWorkersFedByTheDistributorExportTheSameFlowsAsOne) {
    for (const std::string storage : {"cache;seed=1", kShortTimeouts}) {
        const ProbeResult one =
            runProbe({"-i", "pcap;file=" + m_trace.string(), "-s", storage}, m_dir, "one");
        const ProbeResult two = runProbe(
            {"-i", "pcap;file=" + m_trace.string(), "-q", "2", "-s", storage}, m_dir, "two");
        ASSERT_EQ(one.cmd.exitCode, 0) << one.cmd.err;
        ASSERT_EQ(two.cmd.exitCode, 0) << two.cmd.err;
        ASSERT_GT(one.flows.size(), 9000U);
        // The distributor keeps every worker on the capture's clock: even the end reasons agree.
        EXPECT_EQ(setDifference(flowSet(one.flows, true), flowSet(two.flows, true)), "") << storage;
        const std::uint64_t q0 = statValue(two, "queues.0.packets");
        const std::uint64_t q1 = statValue(two, "queues.1.packets");
        EXPECT_EQ(q0 + q1, 187604U);
        EXPECT_GT(q0, 187604U * 4 / 10) << "flows spread over both workers";
        EXPECT_GT(q1, 187604U * 4 / 10);
    }
}

TEST_F(Queues, OneCaptureFilePerWorkerExportsTheSameFlowsAsOneQueue) {
    const std::vector<fs::path> parts = splitByFlow(m_trace, 2, m_dir);
    for (const std::string storage : {"cache;seed=1", kShortTimeouts}) {
        const ProbeResult one =
            runProbe({"-i", "pcap;file=" + m_trace.string(), "-s", storage}, m_dir, "one");
        const ProbeResult two = runProbe({"-i", "pcap;file=" + parts[0].string(), "-i",
                                          "pcap;file=" + parts[1].string(), "-s", storage},
                                         m_dir, "two");
        ASSERT_EQ(one.cmd.exitCode, 0) << one.cmd.err;
        ASSERT_EQ(two.cmd.exitCode, 0) << two.cmd.err;
        // Each worker follows its own file's clock, so flows still cached at the end of a file
        // may leave as `forced` where one queue already saw their timeout: compare without it.
        EXPECT_EQ(setDifference(flowSet(one.flows, false), flowSet(two.flows, false)), "")
            << storage;
        EXPECT_EQ(statValue(two, "total.packets"), 187604U);
    }
}

TEST_F(Queues, ThreadExpiryOnTwoQueuesMatchesInlineExpiryOnOne) {
    const ProbeResult one =
        runProbe({"-i", "pcap;file=" + m_trace.string(), "-s", kShortTimeouts}, m_dir, "one");
    const ProbeResult two = runProbe({"-i", "pcap;file=" + m_trace.string(), "-q", "2", "-s",
                                      std::string(kShortTimeouts) + ";expiry=thread"},
                                     m_dir, "two");
    ASSERT_EQ(two.cmd.exitCode, 0) << two.cmd.err;
    EXPECT_EQ(setDifference(flowSet(one.flows, true), flowSet(two.flows, true)), "");
    EXPECT_GT(statValue(two, "total.cache.exported_by_sweep"), 1000U);
}

// A worker reads a regular file itself (--input-thread no), or the file has a thread and rings of
// its own (yes). Both must export exactly the same records, on one queue and on two.
TEST_F(Queues, WorkerReadingItsFileMatchesAnInputThread) {
    const std::vector<fs::path> parts = splitByFlow(m_trace, 2, m_dir);
    const std::vector<std::vector<std::string>> layouts = {
        {"-i", "pcap;file=" + m_trace.string()},
        {"-i", "pcap;file=" + parts[0].string(), "-i", "pcap;file=" + parts[1].string()},
        {"-i", "pcap;file=" + m_trace.string(), "-c", "100000"}};
    for (const auto& layout : layouts) {
        std::vector<std::string> args = layout;
        args.insert(args.end(), {"-s", kShortTimeouts, "--input-thread"});
        args.emplace_back("no");
        const ProbeResult inWorker = runProbe(args, m_dir, "worker");
        args.back() = "yes";
        const ProbeResult threaded = runProbe(args, m_dir, "thread");
        ASSERT_EQ(inWorker.cmd.exitCode, 0) << inWorker.cmd.err;
        ASSERT_EQ(threaded.cmd.exitCode, 0) << threaded.cmd.err;
        ASSERT_GT(inWorker.flows.size(), 1000U);
        EXPECT_EQ(setDifference(flowSet(inWorker.flows, true), flowSet(threaded.flows, true)), "")
            << layout.size() << " arguments";
        EXPECT_EQ(statValue(inWorker, "total.packets"), statValue(threaded, "total.packets"));
        EXPECT_EQ(statValue(inWorker, "total.input.received"),
                  statValue(threaded, "total.input.received"));
    }
}

/// Names of the threads of process `pid` (/proc/PID/task/*/comm), sorted.
std::vector<std::string> threadNames(int pid) {
    std::vector<std::string> names;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
        std::string name = readFile(task.path() / "comm");
        while (!name.empty() && name.back() == '\n') name.pop_back();
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// --input-thread auto gives a file its own reader only with two CPUs per queue: on one CPU the
// worker reads it; yes and no force either way whatever the CPUs. Threads carry their role.
TEST(QueuesReaders, AutoGivesAReaderThreadOnlyWithTwoCpusPerQueue) {
    if (std::system("taskset -c 0 true >/dev/null 2>&1") != 0) GTEST_SKIP() << "no taskset";
    cpu_set_t mine;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    const int cpus = CPU_COUNT(&mine);
    struct Case {
        std::string cpuList;  // taskset -c
        std::string mode;
        bool reader;
    };
    std::vector<Case> cases = {{"0", "auto", false}, {"0", "yes", true}, {"0", "no", false}};
    if (cpus >= 2 && CPU_ISSET(0, &mine) && CPU_ISSET(1, &mine)) {
        cases.push_back({"0,1", "auto", true});
        cases.push_back({"0,1", "no", false});
    }
    for (const Case& c : cases) {
        ChildProcess child({"taskset", "-c", c.cpuList, rowprobeBinary().string(), "-i",
                            "gen;pattern=random;flows=1000;packets=0", "--input-thread", c.mode,
                            "-o", "json;file=/dev/null", "-Q"});
        std::vector<std::string> names;
        for (int i = 0; i < 200 && child.running(); ++i) {
            names = threadNames(child.pid());
            // Started last but one: the readers follow right after the workers.
            if (std::find(names.begin(), names.end(), "rp-worker/0") != names.end()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every thread started
        names = threadNames(child.pid());
        child.signal(SIGTERM);
        EXPECT_EQ(child.wait(10).exitCode, 0) << c.cpuList << " " << c.mode;
        auto has = [&](const std::string& n) {
            return std::find(names.begin(), names.end(), n) != names.end();
        };
        EXPECT_TRUE(has("rp-worker/0")) << c.cpuList << " " << c.mode;
        EXPECT_TRUE(has("rp-export")) << c.cpuList << " " << c.mode;
        EXPECT_EQ(has("rp-input/0"), c.reader)
            << "CPUs " << c.cpuList << ", --input-thread " << c.mode;
    }
}

TEST(QueuesOptions, BadQueueAndCpuOptionsStopWithExitCode2) {
    const fs::path pcap = sourceDir() / "pcaps" / "demo.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const std::string in = "pcap;file=" + pcap.string();
    auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), rowprobeBinary().string());
        args.insert(args.end(), {"-o", "json;file=/dev/null", "-Q"});
        return runCommand(args, 60);
    };
    CommandResult r = run({"-i", in, "-q", "0"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("[1, 255]"), std::string::npos) << r.err;
    r = run({"-i", in, "-i", in, "-q", "3"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("one -i per queue"), std::string::npos) << r.err;
    r = run({"-i", in, "-q", "2", "--cpus", "1-0"});
    EXPECT_EQ(r.exitCode, 2);
    r = run({"-i", in, "-q", "2", "--cpus", "4000"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("not available"), std::string::npos) << r.err;
    r = run({"-i", in, "-q", "2", "--cpus", "0"});  // both workers on CPU 0
    EXPECT_EQ(r.exitCode, 0) << r.err;
    r = run({"-i", in, "--input-thread", "yess"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--input-thread"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'yes'"), std::string::npos) << r.err;
}

TEST(QueuesFragments, FragmentsKeepTheirPortsOnAnyNumberOfQueues) {
    const std::vector<fs::path> traces = {
        testdataDir() / "flowtest/pcap/ipv4-udp-fragmented.pcap",
        testdataDir() / "zeek/Traces/tunnels/gtp/gtp1_gn_normal_incl_fragmentation.pcap"};
    const fs::path dir = tempDir() / "queues-fragments";
    fs::create_directories(dir);
    for (const fs::path& trace : traces) {
        ROWPROBE_REQUIRE_FILE(trace);
        const ProbeResult one =
            runProbe({"-i", "pcap;file=" + trace.string(), "-s", "cache;seed=1"}, dir, "one");
        ASSERT_EQ(one.cmd.exitCode, 0) << one.cmd.err;
        for (const char* queues : {"2", "3", "4"}) {
            const ProbeResult many =
                runProbe({"-i", "pcap;file=" + trace.string(), "-q", queues, "-s", "cache;seed=1"},
                         dir, "many");
            ASSERT_EQ(many.cmd.exitCode, 0) << many.cmd.err;
            EXPECT_EQ(setDifference(flowSet(one.flows, true), flowSet(many.flows, true)), "")
                << trace.filename() << " -q " << queues;
            EXPECT_EQ(statValue(many, "total.cache.fragments_no_ports"), 0U);
            EXPECT_EQ(statValue(many, "total.cache.fragments_filled"),
                      statValue(one, "total.cache.fragments_filled"));
        }
    }
}

}  // namespace
}  // namespace rowprobe::test
