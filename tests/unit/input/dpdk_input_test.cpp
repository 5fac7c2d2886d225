// The `dpdk` input without a NIC: DPDK's net_pcap virtual device replays a capture file into
// an RX queue (EAL with --no-huge --no-pci), and the flows rowprobe exports from it must equal,
// field for field, the flows it exports from the same file through the `pcap` input. The
// runs use the real binary, because the EAL can be initialised only once per process.
// Skipped when rowprobe was built without DPDK or the EAL cannot start here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"
#ifdef ROWPROBE_HAVE_DPDK
#include "input/dpdk/dpdk_runtime.hpp"
#endif

namespace rowprobe {
namespace {

namespace fs = std::filesystem;
using test::JsonObject;

bool binaryHasDpdk() {
    static const bool has =
        test::runCommand({test::rowprobeBinary().string(), "-h", "dpdk"}, 30).exitCode == 0;
    return has;
}

#define REQUIRE_DPDK()                                                                     \
    do {                                                                                   \
        if (!binaryHasDpdk()) GTEST_SKIP() << "rowprobe was built without the dpdk input"; \
    } while (0)

/// EAL arguments for one run: no hugepages, no PCI scan, a private runtime directory
/// (/var/run/dpdk/<prefix>, removed afterwards) and one net_pcap device whose RX queues
/// replay `files` (queue i = files[i]).
class Eal {
public:
    explicit Eal(const std::vector<fs::path>& files) {
        static int counter = 0;
        // Not named "rowprobe": the package test counts every such path under /run as one its
        // purge left, and this directory exists while a DPDK test runs beside it.
        m_prefix = "rptest-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
        m_args =
            "--no-huge --no-pci -m 256 --no-shconf --log-level=warning --file-prefix=" + m_prefix +
            " --vdev=net_pcap0";
        for (const auto& f : files) m_args += ",rx_pcap=" + f.string();
    }
    ~Eal() {
        std::error_code ec;
        fs::remove_all(fs::path("/var/run/dpdk") / m_prefix, ec);
    }
    Eal(const Eal&) = delete;
    Eal& operator=(const Eal&) = delete;
    const std::string& args() const { return m_args; }

private:
    std::string m_prefix;
    std::string m_args;
};

/// Skips the test when the EAL itself cannot start on this machine (not a rowprobe bug).
#define SKIP_IF_EAL_UNAVAILABLE(result)                                      \
    do {                                                                     \
        if ((result).exitCode == 2 &&                                        \
            (result).err.find("rte_eal_init failed") != std::string::npos)   \
            GTEST_SKIP() << "DPDK EAL cannot start here:\n" << (result).err; \
    } while (0)

std::vector<JsonObject> flowsOf(const fs::path& json, bool dropQueue) {
    auto flows = test::parseJsonLines(test::readFile(json));
    if (dropQueue) {
        for (auto& f : flows) f.erase("queue");
    }
    std::sort(flows.begin(), flows.end());
    return flows;
}

std::string describe(const JsonObject& o) {
    std::string s;
    for (const auto& [k, v] : o) s += k + "=" + v + " ";
    return s;
}

/// Compares two sorted flow lists and reports the first difference readably.
void expectSameFlows(const std::vector<JsonObject>& expected,
                     const std::vector<JsonObject>& actual) {
    EXPECT_EQ(actual.size(), expected.size()) << "number of flows";
    for (std::size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
        if (expected[i] != actual[i]) {
            ADD_FAILURE() << "flow " << i << " differs\n  pcap: " << describe(expected[i])
                          << "\n  dpdk: " << describe(actual[i]);
            return;
        }
    }
}

/// A microsecond pcap (net_pcap in DPDK 22.11 reads time stamps at microsecond precision)
/// with `flows` TCP/UDP flows, `packets` packets in total, frames up to 4000 bytes (longer
/// than one mbuf) and a 40 s pause in the middle, so some flows expire as inactive.
fs::path writeSyntheticPcap(const fs::path& dir, int flows, int packets) {
    const fs::path path = dir / "synthetic.pcap";
    test::PcapWriter writer(path, /*nanosecond=*/false);
    std::mt19937 rng(7);
    std::uint64_t ts = 1'700'000'000'000'000'000ULL;
    for (int i = 0; i < packets; ++i) {
        const int f = static_cast<int>(rng() % static_cast<unsigned>(flows));
        const bool reply = rng() % 3 == 0;
        const std::string client =
            "10.1." + std::to_string(f / 200) + "." + std::to_string(f % 200 + 1);
        const std::string server = "192.0.2." + std::to_string(f % 7 + 1);
        const auto cport = static_cast<std::uint16_t>(20000 + f);
        const auto sport = static_cast<std::uint16_t>(f % 2 == 0 ? 443 : 53);
        std::size_t payload = rng() % 1400;
        if (rng() % 50 == 0) payload = 3900;  // a jumbo frame: multi-segment mbuf in DPDK
        std::vector<std::uint8_t> frame;
        if (f % 2 == 0) {
            frame = reply ? test::ethIpv4Tcp(server, sport, client, cport, 0x18, payload)
                          : test::ethIpv4Tcp(client, cport, server, sport, 0x18, payload);
        } else {
            frame = reply ? test::ethIpv4Udp(server, sport, client, cport, payload)
                          : test::ethIpv4Udp(client, cport, server, sport, payload);
        }
        ts += 1000 * (1 + rng() % 50);  // whole microseconds
        if (i == packets / 2) ts += 40 * kNsPerSec;
        writer.write(ts, frame);
    }
    return path;
}

/// The capture as DPDK's net_pcap PMD hands it to a port: that PMD builds each mbuf from the
/// captured bytes only and drops a record's original length, so a frame cut by the capture's
/// snaplen reaches the dpdk input as a short frame. The pcap reference for a comparison is run
/// on a copy whose original lengths equal the captured ones (classic pcap; other formats are
/// returned unchanged).
fs::path asNetPcapDeliversIt(const fs::path& dir, const fs::path& capture) {
    std::string bytes = test::readFile(capture);
    if (bytes.size() < 24) return capture;
    std::uint32_t magic = 0;
    std::memcpy(&magic, bytes.data(), 4);
    const bool native = magic == 0xa1b2c3d4U || magic == 0xa1b23c4dU;
    const bool swapped = magic == 0xd4c3b2a1U || magic == 0x4d3cb2a1U;
    if (!native && !swapped) return capture;
    auto get = [&](std::size_t at) {
        std::uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, 4);
        return swapped ? __builtin_bswap32(v) : v;
    };
    for (std::size_t at = 24; at + 16 <= bytes.size();) {
        const std::uint32_t caplen = get(at + 8);
        std::memcpy(bytes.data() + at + 12, bytes.data() + at + 8, 4);  // orig_len = caplen
        at += 16 + caplen;
    }
    const fs::path out = dir / ("netpcap-" + capture.filename().string());
    std::ofstream(out, std::ios::binary) << bytes;
    return out;
}

struct RunResult {
    test::CommandResult result;
    fs::path json;
    fs::path stats;
};

RunResult runRowprobe(const fs::path& dir, const std::string& name,
                      const std::vector<std::string>& inputs,
                      const std::vector<std::string>& extra = {}) {
    RunResult run{{}, dir / (name + ".json"), dir / (name + ".stats.json")};
    std::vector<std::string> argv = {test::rowprobeBinary().string()};
    for (const auto& in : inputs) argv.insert(argv.end(), {"-i", in});
    argv.insert(argv.end(), {"-s", "cache;seed=1", "-o", "json;file=" + run.json.string(),
                             "--stats-json", run.stats.string(), "-Q"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    run.result = test::runCommand(argv, 120);
    return run;
}

// --- the symmetric RSS key --------------------------------------------------------------------

#ifdef ROWPROBE_HAVE_DPDK
/// Software Toeplitz hash as a NIC computes it over the RSS input tuple.
std::uint32_t toeplitz(const std::vector<std::uint8_t>& key,
                       const std::vector<std::uint8_t>& input) {
    std::uint32_t hash = 0;
    std::uint32_t window = std::uint32_t{key[0]} << 24 | std::uint32_t{key[1]} << 16 |
                           std::uint32_t{key[2]} << 8 | key[3];
    for (std::size_t i = 0; i < input.size(); ++i) {
        for (int bit = 7; bit >= 0; --bit) {
            if ((input[i] >> bit) & 1) hash ^= window;
            const std::size_t next = i + 4;
            const std::uint32_t in = next < key.size() ? (key[next] >> bit) & 1U : 0U;
            window = (window << 1) | in;
        }
    }
    return hash;
}

std::vector<std::uint8_t> ipv4Tuple(std::uint32_t src, std::uint32_t dst, std::uint16_t sport,
                                    std::uint16_t dport) {
    std::vector<std::uint8_t> t;
    for (std::uint32_t a : {src, dst}) {
        for (int s = 24; s >= 0; s -= 8) t.push_back(static_cast<std::uint8_t>(a >> s));
    }
    for (std::uint16_t p : {sport, dport}) {
        t.push_back(static_cast<std::uint8_t>(p >> 8));
        t.push_back(static_cast<std::uint8_t>(p));
    }
    return t;
}

TEST(DpdkRss, SymmetricKeyHashesBothDirectionsOfAFlowAlikeAndSpreadsFlows) {
    const auto key = input::symmetricRssKey(40);
    ASSERT_EQ(key.size(), 40u);
    std::mt19937 rng(1);
    std::array<int, 4> perQueue{};
    for (int i = 0; i < 4000; ++i) {
        const auto a = static_cast<std::uint32_t>(rng()), b = static_cast<std::uint32_t>(rng());
        const auto pa = static_cast<std::uint16_t>(rng()), pb = static_cast<std::uint16_t>(rng());
        const std::uint32_t forward = toeplitz(key, ipv4Tuple(a, b, pa, pb));
        ASSERT_EQ(forward, toeplitz(key, ipv4Tuple(b, a, pb, pa))) << "flow " << i;
        ++perQueue[(forward & 127) % 4];  // default redirection table: entry i -> queue i % 4
    }
    for (int n : perQueue) EXPECT_NEAR(n, 1000, 150) << "flows spread evenly over 4 queues";

    // The check can fail: Microsoft's reference key is not symmetric.
    const std::vector<std::uint8_t> msKey = {
        0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
        0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
        0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};
    const auto t = ipv4Tuple(0x420995bb, 0xa18e6450, 2794, 1766);
    EXPECT_EQ(toeplitz(msKey, t), 0x51ccc178u) << "Toeplitz test vector of the Microsoft RSS spec";
    EXPECT_NE(toeplitz(msKey, t), toeplitz(msKey, ipv4Tuple(0xa18e6450, 0x420995bb, 1766, 2794)));
}
#endif

// --- options checked before the EAL starts ------------------------------------------------------

TEST(DpdkInput, OptionsAreCheckedBeforeTheEalStarts) {
    if (Registry::instance().find(PluginKind::Input, "dpdk") == nullptr)
        GTEST_SKIP() << "built without DPDK";
    try {
        Registry::instance().create(PluginKind::Input, "dpdk;rx-desc=256;mempool=2000", "-i");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "mempool");
        EXPECT_NE(e.details().problem.find("at least 2752"), std::string::npos)
            << e.details().problem;
    }
    try {
        Registry::instance().create(PluginKind::Input, "dpdk;queues=2;queue=2", "-i");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "queue");
        EXPECT_NE(e.details().problem.find("below queues (2)"), std::string::npos)
            << e.details().problem;
    }
    EXPECT_THROW(Registry::instance().create(PluginKind::Input, "dpdk;burst=65", "-i"),
                 ConfigError);
    EXPECT_THROW(Registry::instance().create(PluginKind::Input, "dpdk;timestamp=ptp", "-i"),
                 ConfigError);
}

// --- dpdk (net_pcap) equals pcap, flow for flow --------------------------------------------------

class DpdkEqualsPcap : public ::testing::TestWithParam<std::string> {};

fs::path resolveCapture(const std::string& name, const fs::path& dir) {
    if (name == "synthetic") return writeSyntheticPcap(dir, 600, 20000);
    if (name.rfind("testdata/", 0) == 0) return test::testdataDir() / name.substr(9);
    return test::sourceDir() / name;
}

TEST_P(DpdkEqualsPcap, SameFlowsFromTheSameFile) {
    REQUIRE_DPDK();
    const fs::path dir = test::tempDir();
    const fs::path capture = resolveCapture(GetParam(), dir);
    ROWPROBE_REQUIRE_FILE(capture);
    const RunResult pcap =
        runRowprobe(dir, "pcap", {"pcap;file=" + asNetPcapDeliversIt(dir, capture).string()});
    ASSERT_EQ(pcap.result.exitCode, 0) << pcap.result.err;
    const Eal eal({capture});
    const RunResult dpdk = runRowprobe(dir, "dpdk", {"dpdk;eal=" + eal.args() + ";idle-end=300ms"});
    SKIP_IF_EAL_UNAVAILABLE(dpdk.result);
    ASSERT_EQ(dpdk.result.exitCode, 0) << dpdk.result.err;

    const auto expected = flowsOf(pcap.json, true);
    ASSERT_FALSE(expected.empty());
    expectSameFlows(expected, flowsOf(dpdk.json, true));
    if (GetParam() == "synthetic") {
        // The comparison covered expiry on packet time: the 40 s pause ends flows as inactive.
        const auto inactive =
            std::count_if(expected.begin(), expected.end(),
                          [](const JsonObject& f) { return f.at("end_reason") == "inactive"; });
        EXPECT_GT(inactive, 100) << "flows ended by the inactive timeout";
        EXPECT_GT(expected.size(), 600u) << "flows seen on both sides of the pause";
    }

    const JsonObject ps = test::parseJsonFlat(test::readFile(pcap.stats));
    const JsonObject ds = test::parseJsonFlat(test::readFile(dpdk.stats));
    EXPECT_EQ(ds.at("queues.0.packets"), ps.at("queues.0.packets"))
        << "every packet of the file read once";
    EXPECT_EQ(ds.at("queues.0.input.received"), ps.at("queues.0.packets"));
    EXPECT_EQ(ds.at("queues.0.input.kernel_drops"), "0");
}

INSTANTIATE_TEST_SUITE_P(Captures, DpdkEqualsPcap,
                         ::testing::Values("pcaps/mixed.pcap", "pcaps/demo.pcap", "synthetic",
                                           "testdata/flowtest/pcap/http_get.pcap",
                                           "testdata/flowtest/pcap/ICMP_across_dot1q.pcap"),
                         [](const auto& param) {
                             std::string n = fs::path(param.param).stem().string();
                             std::replace_if(
                                 n.begin(), n.end(),
                                 [](char c) {
                                     return !std::isalnum(static_cast<unsigned char>(c));
                                 },
                                 '_');
                             return n;
                         });

TEST(DpdkInput, SmallestAllowedMempoolRecyclesMbufsWithoutLossOrCorruption) {
    // 20000 packets through a pool of 2752 mbufs: each mbuf is reused ~7 times, and only after
    // the worker has finished with the packet block pointing into it.
    REQUIRE_DPDK();
    const fs::path dir = test::tempDir();
    const fs::path capture = writeSyntheticPcap(dir, 600, 20000);
    const RunResult pcap = runRowprobe(dir, "pcap", {"pcap;file=" + capture.string()});
    ASSERT_EQ(pcap.result.exitCode, 0) << pcap.result.err;
    const Eal eal({capture});
    const RunResult dpdk = runRowprobe(
        dir, "dpdk",
        {"dpdk;eal=" + eal.args() + ";idle-end=300ms;rx-desc=256;mempool=2752;burst=16"});
    SKIP_IF_EAL_UNAVAILABLE(dpdk.result);
    ASSERT_EQ(dpdk.result.exitCode, 0) << dpdk.result.err;
    expectSameFlows(flowsOf(pcap.json, true), flowsOf(dpdk.json, true));
    const JsonObject ds = test::parseJsonFlat(test::readFile(dpdk.stats));
    EXPECT_EQ(ds.at("queues.0.input.received"), "20000");
    EXPECT_EQ(ds.at("queues.0.input.kernel_drops"), "0") << "no rx_nombuf: the pool never ran dry";
}

TEST(DpdkInput, TwoQueuesOfOnePortShareOneEalAndEqualTwoPcapInputs) {
    REQUIRE_DPDK();
    const fs::path a = test::sourceDir() / "pcaps/mixed.pcap";
    const fs::path b = test::sourceDir() / "pcaps/demo.pcap";
    ROWPROBE_REQUIRE_FILE(a);
    ROWPROBE_REQUIRE_FILE(b);
    const fs::path dir = test::tempDir();
    const RunResult pcap = runRowprobe(dir, "pcap",
                                       {"pcap;file=" + asNetPcapDeliversIt(dir, a).string(),
                                        "pcap;file=" + asNetPcapDeliversIt(dir, b).string()});
    ASSERT_EQ(pcap.result.exitCode, 0) << pcap.result.err;
    const Eal eal({a, b});  // net_pcap: queue 0 replays a, queue 1 replays b
    const RunResult dpdk =
        runRowprobe(dir, "dpdk",
                    {"dpdk;eal=" + eal.args() + ";queues=2;queue=0;idle-end=300ms",
                     "dpdk;queues=2;queue=1;idle-end=300ms"});
    SKIP_IF_EAL_UNAVAILABLE(dpdk.result);
    ASSERT_EQ(dpdk.result.exitCode, 0) << dpdk.result.err;
    expectSameFlows(flowsOf(pcap.json, false), flowsOf(dpdk.json, false));  // queue field included
}

TEST(DpdkInput, SigintStopsTheInputAndEveryFlowIsExported) {
    REQUIRE_DPDK();
    const fs::path capture = test::sourceDir() / "pcaps/mixed.pcap";
    ROWPROBE_REQUIRE_FILE(capture);
    const fs::path dir = test::tempDir();
    const RunResult pcap =
        runRowprobe(dir, "pcap", {"pcap;file=" + asNetPcapDeliversIt(dir, capture).string()});
    ASSERT_EQ(pcap.result.exitCode, 0) << pcap.result.err;
    const Eal eal({capture});
    // No idle-end: after the file the queue stays empty until the signal.
    const fs::path json = dir / "dpdk.json";
    test::ChildProcess child({test::rowprobeBinary().string(), "-i", "dpdk;eal=" + eal.args(), "-s",
                              "cache;seed=1", "-o", "json;file=" + json.string(), "-Q"});
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ASSERT_TRUE(child.running()) << child.wait(1).err;
    child.signal(SIGINT);
    const test::CommandResult r = child.wait(10);
    SKIP_IF_EAL_UNAVAILABLE(r);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    expectSameFlows(flowsOf(pcap.json, true), flowsOf(json, true));
}

TEST(DpdkInput, EalAndPortErrorsAreConfigErrorsNamingTheOption) {
    REQUIRE_DPDK();
    const std::string bin = test::rowprobeBinary().string();
    auto bad =
        test::runCommand({bin, "-i", "dpdk;eal=--no-such-eal-option", "-o", "json;file=/dev/null"});
    EXPECT_EQ(bad.exitCode, 2) << bad.err;
    EXPECT_NE(bad.err.find("option 'eal'"), std::string::npos) << bad.err;

    const Eal none({});
    std::string args = none.args();
    args.resize(args.find(" --vdev"));  // an EAL with no ports at all
    auto noPort = test::runCommand({bin, "-i", "dpdk;eal=" + args, "-o", "json;file=/dev/null"});
    SKIP_IF_EAL_UNAVAILABLE(noPort);
    EXPECT_EQ(noPort.exitCode, 2) << noPort.err;
    EXPECT_NE(noPort.err.find("option 'port'"), std::string::npos) << noPort.err;
    EXPECT_NE(noPort.err.find("no DPDK port 0"), std::string::npos) << noPort.err;

    const fs::path capture = test::sourceDir() / "pcaps/mixed.pcap";
    ROWPROBE_REQUIRE_FILE(capture);
    const Eal eal({capture, capture});  // two RX queues
    auto twice =
        test::runCommand({bin, "-i", "dpdk;eal=" + eal.args() + ";queues=2;queue=0", "-i",
                          "dpdk;eal=--no-huge;queues=2;queue=1", "-o", "json;file=/dev/null"});
    EXPECT_EQ(twice.exitCode, 2) << twice.err;
    EXPECT_NE(twice.err.find("once per process"), std::string::npos) << twice.err;

    auto clash = test::runCommand({bin, "-i", "dpdk;eal=" + eal.args() + ";queues=2", "-i",
                                   "dpdk;queues=2", "-o", "json;file=/dev/null"});
    EXPECT_EQ(clash.exitCode, 2) << clash.err;
    EXPECT_NE(clash.err.find("already read by another dpdk input"), std::string::npos) << clash.err;
}

}  // namespace
}  // namespace rowprobe
