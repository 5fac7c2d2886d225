// The policy lab (tools/policylab, rowprobe-policylab) end to end:
//  * on a hand-made trace whose optimum is known, the Belady line has exactly the optimal
//    counts and no policy does better;
//  * on the synthetic 10k-flow trace with a small table, every registered policy appears, the
//    Belady bound holds for each (hits and forced evictions), and the policies differ;
//  * the lab's `lru` line equals rowprobe's own statistics for the same capture and table;
//  * the PNG plot is written; bad options stop the tool with exit code 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cache/policy_registry.hpp"
#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

fs::path labBinary() { return fs::path(ROWPROBE_BUILD_DIR) / "tools/policylab/rowprobe-policylab"; }

/// One temporary directory for the whole test program.
const fs::path& scratch() {
    static const fs::path dir = tempDir();
    return dir;
}

/// One CSV line of the lab, by column name.
using LabRow = std::map<std::string, std::string>;

std::vector<LabRow> readLabCsv(const fs::path& csv) {
    const auto table = parseCsv(readFile(csv));
    std::vector<LabRow> rows;
    if (table.empty()) return rows;
    for (std::size_t i = 1; i < table.size(); ++i) {
        if (table[i].size() != table[0].size()) continue;
        LabRow r;
        for (std::size_t c = 0; c < table[0].size(); ++c) r[table[0][c]] = table[i][c];
        rows.push_back(r);
    }
    return rows;
}

std::uint64_t num(const LabRow& r, const std::string& column) {
    const auto it = r.find(column);
    if (it == r.end()) throw std::runtime_error("no column " + column);
    return std::stoull(it->second);
}

/// Runs the lab with `args` + --csv and returns the rows (asserting exit 0).
std::vector<LabRow> runLab(std::vector<std::string> args, std::string* out = nullptr) {
    const fs::path csv =
        scratch() / ("lab-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                     "-" + std::to_string(std::rand()) + ".csv");
    args.insert(args.begin(), labBinary().string());
    args.push_back("--csv");
    args.push_back(csv.string());
    // Under TSan the lab runs 5-10x slower, and a loaded machine adds to that: a clean run took
    // 289 s with two other suites beside it. 800 s stays inside the TSan stage's ctest timeout.
    const CommandResult r = runCommand(args, kSanitized ? 800 : 300);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    if (out != nullptr) *out = r.out + r.err;
    return readLabCsv(csv);
}

/// Belady's line must be at least as good as every policy line of the same configuration.
void expectBoundHolds(const std::vector<LabRow>& rows) {
    std::map<std::string, LabRow> bounds;
    auto combo = [](const LabRow& r) {
        return r.at("hash") + "/" + r.at("size") + "/" + r.at("line");
    };
    for (const auto& r : rows) {
        if (r.at("bound") == "1") bounds[combo(r)] = r;
    }
    ASSERT_FALSE(bounds.empty());
    for (const auto& r : rows) {
        if (r.at("bound") == "1") continue;
        const LabRow& b = bounds.at(combo(r));
        EXPECT_GE(num(b, "hits"), num(r, "hits")) << r.at("policy") << " on " << combo(r);
        EXPECT_LE(num(b, "evicted"), num(r, "evicted")) << r.at("policy") << " on " << combo(r);
        EXPECT_LE(num(b, "recreated"), num(r, "recreated")) << r.at("policy") << " on " << combo(r);
        EXPECT_EQ(num(b, "packets"), num(r, "packets"));
    }
}

/// 17 UDP flows, each sending one packet per round, 2 rounds, 1 ms apart: 34 packets.
fs::path cyclicTrace() {
    const fs::path path = scratch() / "cyclic17.pcap";
    if (fs::exists(path)) return path;
    PcapWriter w(path);
    std::uint64_t ts = 1'700'000'000ULL * 1'000'000'000ULL;
    for (int round = 0; round < 2; ++round) {
        for (int f = 0; f < 17; ++f) {
            w.write(ts, ethIpv4Udp("10.0.0.1", static_cast<std::uint16_t>(1000 + f), "10.0.0.2", 53,
                                   20));
            ts += 1'000'000;
        }
    }
    return path;
}

TEST(PolicyLab, BeladyLineIsTheKnownOptimumOfACyclicTrace) {
    // One row of 16 slots (size=4, line=16), 17 flows cycled twice. Any table must miss the 17
    // first packets; one of flows 1..16 cannot be kept until its second packet, so the optimum
    // is 18 misses: 16 into free slots, 2 forced evictions, 1 re-created flow, 16 hits.
    const auto rows = runLab({cyclicTrace().string(), "-s", "4", "-l", "16", "-q"});
    ASSERT_FALSE(rows.empty());
    const LabRow* bound = nullptr;
    for (const auto& r : rows) {
        if (r.at("bound") == "1") bound = &r;
    }
    ASSERT_NE(bound, nullptr);
    EXPECT_EQ(num(*bound, "packets"), 34U);
    EXPECT_EQ(num(*bound, "hits"), 16U);
    EXPECT_EQ(num(*bound, "empty"), 16U);
    EXPECT_EQ(num(*bound, "evicted"), 2U);
    EXPECT_EQ(num(*bound, "recreated"), 1U);
    expectBoundHolds(rows);
    // ipfixprobe's LRU inserts flow 17 mid-row, where 15 hits push it out before its second
    // packet: it pays 3 evictions and 2 re-created flows here.
    for (const auto& r : rows) {
        if (r.at("policy") != "lru") continue;
        EXPECT_EQ(num(r, "evicted"), 3U);
        EXPECT_EQ(num(r, "recreated"), 2U);
        EXPECT_EQ(num(r, "hits"), 15U);
    }
}

TEST(PolicyLab, SmallTableOnSynthTraceCoversEveryPolicyAndBeladyBoundsThemAll) {
    const fs::path pcap = synth10kPcap();
    if (pcap.empty()) GTEST_SKIP() << "synth_10k_flows.pcap.gz not available";
    std::string out;
    const auto rows = runLab({pcap.string(), "-s", "8,10", "-l", "4,16", "-q"}, &out);
    // Every registered policy, on every configuration.
    std::set<std::string> seen;
    for (const auto& r : rows) seen.insert(r.at("policy"));
    for (const auto& name : storage::rowPolicyNames())
        EXPECT_EQ(seen.count(name), 1U) << name << "\n" << out;
    EXPECT_EQ(rows.size(), 4 * (storage::rowPolicyNames().size() + 1));
    expectBoundHolds(rows);
    // The table is small enough that policies make different choices.
    std::set<std::uint64_t> evicted, hits;
    for (const auto& r : rows) {
        if (r.at("size") == "8" && r.at("line") == "16" && r.at("bound") == "0") {
            evicted.insert(num(r, "evicted"));
            hits.insert(num(r, "hits"));
        }
    }
    EXPECT_GE(evicted.size(), 3U);
    EXPECT_GE(hits.size(), 3U);
    // Conservation: every packet is a hit or a miss; every flow created is exported by the end.
    for (const auto& r : rows) {
        if (r.at("bound") == "1") continue;
        EXPECT_EQ(num(r, "hits") + num(r, "empty") + num(r, "not_empty") + num(r, "reclaim"),
                  num(r, "packets"))
            << r.at("policy");
        EXPECT_EQ(num(r, "packets"), 187604U);
    }
}

/// rowprobe's own cache statistics for `pcap` with the `-s` string `storage`.
JsonObject rowprobeStats(const fs::path& pcap, const std::string& storage) {
    const fs::path json = scratch() / "lab-stats.json";
    const CommandResult r =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap.string(), "-s", storage,
                    "-o", "text;file=/dev/null", "--stats-json", json.string(), "-Q"},
                   300);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return parseJsonFlat(readFile(json));
}

void expectLabEqualsRowprobe(const fs::path& pcap, const std::string& policy,
                             const std::string& size) {
    const auto rows =
        runLab({pcap.string(), "-p", policy, "-s", size, "--seed", "11", "--no-belady", "-q"});
    ASSERT_EQ(rows.size(), 1U);
    const LabRow& lab = rows[0];
    const JsonObject st = rowprobeStats(
        pcap, "cache;policy=" + policy + ";size=" + size + ";line=16;hash=xxh3;seed=11");
    EXPECT_EQ(lab.at("hits"), st.at("total.cache.hits"));
    EXPECT_EQ(lab.at("empty"), st.at("total.cache.miss_free"));
    EXPECT_EQ(lab.at("not_empty"), st.at("total.cache.miss_evict"));
    EXPECT_EQ(lab.at("reclaim"), st.at("total.cache.miss_reclaim"));
    EXPECT_EQ(lab.at("exported"), st.at("total.cache.exported_total"));
    EXPECT_EQ(lab.at("evicted"), st.at("total.cache.exported.resources"));
    EXPECT_EQ(lab.at("sweep"), st.at("total.cache.exported_by_sweep"));
    EXPECT_EQ(lab.at("end"), st.at("total.cache.exported_at_end"));
    EXPECT_NEAR(std::stod(lab.at("pos_avg")), std::stod(st.at("total.cache.hit_position_mean")),
                1e-3);
    EXPECT_EQ(lab.at("packets"), st.at("total.parsed"));
}

TEST(PolicyLab, LruLineEqualsRowprobesOwnStatisticsOnTheSameTrace) {
    expectLabEqualsRowprobe(cyclicTrace(), "lru", "4");
    const fs::path pcap = synth10kPcap();
    if (pcap.empty()) GTEST_SKIP() << "synth_10k_flows.pcap.gz not available";
    expectLabEqualsRowprobe(pcap, "lru", "8");
    expectLabEqualsRowprobe(pcap, "lru", "10");
}

TEST(PolicyLab, WritesAPngPlot) {
    if (runShell("command -v gnuplot").exitCode != 0)
        GTEST_SKIP() << "gnuplot not installed (gnuplot-nox)";
    const fs::path png = scratch() / "lab.png";
    runLab({cyclicTrace().string(), "-s", "4", "-l", "8,16", "--plot", png.string(), "-q"});
    const std::string data = readFile(png);
    ASSERT_GT(data.size(), 1000U);
    EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST(PolicyLab, BadOptionsStopWithExitCodeTwoAndNameTheProblem) {
    auto fails = [](std::vector<std::string> args, const std::string& expect) {
        args.insert(args.begin(), labBinary().string());
        const CommandResult r = runCommand(args, 60);
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    };
    fails({cyclicTrace().string(), "-p", "lur"}, "lru");
    fails({cyclicTrace().string(), "-H", "md5"}, "xxh3");
    fails({cyclicTrace().string(), "-l", "12"}, "line");
    fails({cyclicTrace().string(), "-c", "seed=3"}, "lab axis");
    fails({cyclicTrace().string(), "--variant", "nolabel"}, "LABEL=POLICY");
    const CommandResult missing = runCommand({labBinary().string(), "/nonexistent.pcap"}, 60);
    EXPECT_EQ(missing.exitCode, 1);
    EXPECT_NE(missing.err.find("/nonexistent.pcap"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace rowprobe::test
