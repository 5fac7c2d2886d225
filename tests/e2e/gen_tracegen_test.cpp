// End to end with the synthetic generator:
//  * `rowprobe -i gen;...` is reproducible for a seed (two runs export the same flows) and a
//    different seed gives other flows;
//  * rowprobe-tracegen's pcap + truth agree, flow for flow and field for field, with what
//    rowprobe exports from that pcap, for every pattern, including flows split by timeouts;
//  * bad generator options stop both programs with exit code 2 and a precise message.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

fs::path tracegenBinary() {
    return fs::path(ROWPROBE_BUILD_DIR) / "tools/tracegen/rowprobe-tracegen";
}

std::string normaliseAddress(const std::string& text) {
    unsigned char buf[16] = {};
    char out[INET6_ADDRSTRLEN] = {};
    if (inet_pton(AF_INET, text.c_str(), buf) == 1) return inet_ntop(AF_INET, buf, out, sizeof out);
    if (inet_pton(AF_INET6, text.c_str(), buf) == 1)
        return inet_ntop(AF_INET6, buf, out, sizeof out);
    return "bad:" + text;
}

std::string timeKey(const std::string& text) {
    const auto ns = parseTimeNs(text);
    return ns ? std::to_string(*ns) : "bad:" + text;
}

std::string flagsKey(const std::string& text) { return text.empty() ? "0" : text; }

// One comparable line per flow record.
std::string recordKey(const std::string& src, const std::string& sport, const std::string& dst,
                      const std::string& dport, const std::string& proto, const std::string& pkts,
                      const std::string& pktsRev, const std::string& bytes,
                      const std::string& bytesRev, const std::string& first,
                      const std::string& last, const std::string& flags,
                      const std::string& flagsRev) {
    std::ostringstream s;
    s << normaliseAddress(src) << ':' << sport << " > " << normaliseAddress(dst) << ':' << dport
      << " p" << proto << " pkts " << pkts << '/' << pktsRev << " bytes " << bytes << '/'
      << bytesRev << " t " << timeKey(first) << ".." << timeKey(last) << " flags "
      << flagsKey(flags) << '/' << flagsKey(flagsRev);
    return s.str();
}

std::vector<std::string> exportedFlows(const fs::path& json) {
    std::vector<std::string> out;
    for (const JsonObject& o : parseJsonLines(readFile(json))) {
        auto get = [&](const char* k) {
            const auto it = o.find(k);
            return it == o.end() ? std::string("missing") : it->second;
        };
        out.push_back(recordKey(get("src_ip"), get("src_port"), get("dst_ip"), get("dst_port"),
                                get("proto"), get("packets"), get("packets_rev"), get("bytes"),
                                get("bytes_rev"), get("time_first"), get("time_last"),
                                get("tcp_flags"), get("tcp_flags_rev")));
    }
    std::sort(out.begin(), out.end());
    return out;
}

struct Truth {
    std::vector<std::string> flows;
    std::size_t splitRecords = 0;  // records after a timeout split ("record" > 0 in extra)
};

Truth truthFlows(const fs::path& csv) {
    Truth t;
    const auto rows = parseCsv(readFile(csv));
    if (rows.empty()) return t;
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        if (row.size() != rows[0].size()) continue;
        auto get = [&](const char* k) { return row[col.at(k)]; };
        t.flows.push_back(recordKey(get("src_ip"), get("src_port"), get("dst_ip"), get("dst_port"),
                                    get("proto"), get("packets"), get("packets_rev"), get("bytes"),
                                    get("bytes_rev"), get("first_ts"), get("last_ts"),
                                    get("tcp_flags"), get("tcp_flags_rev")));
        if (get("extra").find("\"record\": 0") == std::string::npos) ++t.splitRecords;
    }
    std::sort(t.flows.begin(), t.flows.end());
    return t;
}

// Lists what only one side has (at most a few lines of each).
std::string difference(const std::vector<std::string>& truth, const std::vector<std::string>& got) {
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    std::set_difference(truth.begin(), truth.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), truth.begin(), truth.end(),
                        std::back_inserter(extra));
    std::ostringstream s;
    s << missing.size() << " truth records not exported, " << extra.size()
      << " exported records not in the truth\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(missing.size(), 4); ++i)
        s << "  truth only: " << missing[i] << '\n';
    for (std::size_t i = 0; i < std::min<std::size_t>(extra.size(), 4); ++i)
        s << "  rowprobe only: " << extra[i] << '\n';
    return s.str();
}

struct Scenario {
    const char* name;
    const char* gen;                    // generator options (the same string for gen and the tool)
    const char* cache;                  // rowprobe's storage plugin string
    std::vector<std::string> toolArgs;  // extra tool arguments (timeouts)
    bool expectSplits = false;
};

class TracegenAgreesWithRowprobe : public ::testing::TestWithParam<Scenario> {};

TEST_P(TracegenAgreesWithRowprobe, FlowForFlow) {
    const Scenario& sc = GetParam();
    ASSERT_TRUE(fs::exists(tracegenBinary())) << tracegenBinary();
    const fs::path dir = tempDir();
    const fs::path pcap = dir / (std::string(sc.name) + ".pcap");
    const fs::path truth = dir / (std::string(sc.name) + ".truth.csv");
    const fs::path json = dir / (std::string(sc.name) + ".json");

    std::vector<std::string> tool = {tracegenBinary().string(), "-w", pcap.string(), "-t",
                                     truth.string()};
    tool.insert(tool.end(), sc.toolArgs.begin(), sc.toolArgs.end());
    tool.push_back(sc.gen);
    const CommandResult gen = runCommand(tool);
    ASSERT_EQ(gen.exitCode, 0) << gen.err;

    const CommandResult run =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap.string(), "-s", sc.cache,
                    "-o", "json;file=" + json.string(), "-Q"});
    ASSERT_EQ(run.exitCode, 0) << run.err;

    const Truth expected = truthFlows(truth);
    const std::vector<std::string> got = exportedFlows(json);
    ASSERT_GT(expected.flows.size(), 0U) << gen.err;
    EXPECT_EQ(got.size(), expected.flows.size());
    EXPECT_TRUE(got == expected.flows) << sc.name << ": " << difference(expected.flows, got);
    if (sc.expectSplits) {
        EXPECT_GT(expected.splitRecords, 0U) << "the scenario is meant to split flows by timeouts";
    } else {
        EXPECT_EQ(expected.splitRecords, 0U);
    }
}

INSTANTIATE_TEST_SUITE_P(
    EveryPattern, TracegenAgreesWithRowprobe,
    ::testing::Values(
        Scenario{"random",
                 "pattern=random;flows=2000;packets=60000;seed=11;ipv6=0.3;reverse=0.35;tcp=0.6",
                 "cache;seed=1",
                 {}},
        Scenario{"zipf_ppf_fin",
                 "pattern=zipf;flows=3000;packets=50000;skew=1.1;seed=5;packets-per-flow=40;"
                 "reverse=0.2;fin",
                 "cache;seed=1;size=18",
                 {}},
        Scenario{"netscan",
                 "pattern=netscan;packets=20000;ipv6=0.5;size=80",
                 "cache;seed=1;size=18",
                 {}},
        Scenario{"portscan", "pattern=portscan;packets=70000;tcp=1", "cache;seed=1;size=20", {}},
        Scenario{"deterministic",
                 "pattern=deterministic;packets=30000;packets-per-flow=1000;reverse=0.5;tcp=1;fin",
                 "cache;seed=1",
                 {}},
        Scenario{"big_frames_snaplen",
                 "pattern=random;flows=300;packets=6000;size=1400;snaplen=128;seed=3",
                 "cache;seed=1",
                 {}},
        // 200 s of packet time over a Zipf tail: unpopular flows idle longer than 10 s and old
        // ones pass 60 s, so the cache splits them, and so must the truth.
        Scenario{"timeouts",
                 "pattern=zipf;flows=400;packets=20000;pps=100;seed=3;reverse=0.3",
                 "cache;seed=1;inactive=10;active=60",
                 {"--inactive", "10", "--active", "60"},
                 true}),
    [](const ::testing::TestParamInfo<Scenario>& p) { return std::string(p.param.name); });

std::vector<std::string> genRun(const std::string& genOptions, const fs::path& json) {
    const CommandResult run =
        runCommand({rowprobeBinary().string(), "-i", genOptions, "-s", "cache;seed=1", "-o",
                    "json;file=" + json.string(), "-Q"});
    EXPECT_EQ(run.exitCode, 0) << run.err;
    return exportedFlows(json);
}

TEST(GenInputEndToEnd, SameSeedExportsTheSameFlowsAnotherSeedOthers) {
    const fs::path dir = tempDir();
    const std::string options =
        "gen;pattern=random;flows=500;packets=20000;seed=7;ipv6=0.3;reverse=0.3";
    const auto first = genRun(options, dir / "a.json");
    const auto second = genRun(options, dir / "b.json");
    ASSERT_EQ(first.size(), 500U);
    EXPECT_TRUE(first == second) << difference(first, second);
    EXPECT_EQ(readFile(dir / "a.json").size(), readFile(dir / "b.json").size());

    const auto other = genRun(
        "gen;pattern=random;flows=500;packets=20000;seed=8;ipv6=0.3;reverse=0.3", dir / "c.json");
    std::vector<std::string> common;
    std::set_intersection(first.begin(), first.end(), other.begin(), other.end(),
                          std::back_inserter(common));
    EXPECT_EQ(common.size(), 0U);

    std::uint64_t packets = 0;
    for (const JsonObject& o : parseJsonLines(readFile(dir / "a.json"))) {
        packets += std::stoull(o.at("packets")) + std::stoull(o.at("packets_rev"));
    }
    EXPECT_EQ(packets, 20000U);
}

TEST(GenInputEndToEnd, GenAndItsTracegenPcapExportTheSameFlows) {
    const fs::path dir = tempDir();
    const std::string options =
        "pattern=zipf;flows=1000;packets=30000;seed=21;ipv6=0.2;reverse=0.25";
    const auto live = genRun("gen;" + options, dir / "gen.json");
    ASSERT_EQ(
        runCommand({tracegenBinary().string(), "-w", (dir / "t.pcap").string(), options}).exitCode,
        0);
    const CommandResult run =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + (dir / "t.pcap").string(), "-s",
                    "cache;seed=1", "-o", "json;file=" + (dir / "pcap.json").string(), "-Q"});
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_TRUE(live == exportedFlows(dir / "pcap.json"))
        << difference(live, exportedFlows(dir / "pcap.json"));
    EXPECT_TRUE(fs::exists(dir / "t.truth.csv"))
        << "default truth name: the pcap's stem + .truth.csv";
}

TEST(GenInputEndToEnd, BadGeneratorOptionsExitWithCode2AndAPreciseMessage) {
    const CommandResult r =
        runCommand({rowprobeBinary().string(), "-i", "gen;pattern=zipfian", "-Q"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("input 'gen'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pattern"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("zipf"), std::string::npos) << "the choices or a did-you-mean: " << r.err;

    const CommandResult skew =
        runCommand({rowprobeBinary().string(), "-i", "gen;pattern=random;skew=2", "-Q"});
    EXPECT_EQ(skew.exitCode, 2);
    EXPECT_NE(skew.err.find("only to pattern=zipf"), std::string::npos) << skew.err;

    const fs::path dir = tempDir();
    const CommandResult tool =
        runCommand({tracegenBinary().string(), "-w", (dir / "x.pcap").string(), "flows=0"});
    EXPECT_EQ(tool.exitCode, 2);
    EXPECT_NE(tool.err.find("flows"), std::string::npos) << tool.err;
    const CommandResult endless =
        runCommand({tracegenBinary().string(), "-w", (dir / "x.pcap").string(), "packets=0"});
    EXPECT_EQ(endless.exitCode, 2);
    EXPECT_NE(endless.err.find("needs an end"), std::string::npos) << endless.err;
    const CommandResult noFile = runCommand({tracegenBinary().string(), "packets=10"});
    EXPECT_EQ(noFile.exitCode, 2);
    EXPECT_NE(noFile.err.find("-w FILE"), std::string::npos) << noFile.err;
}

}  // namespace
}  // namespace rowprobe::test
