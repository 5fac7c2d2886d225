// The ndpi plugin's application label against ndpiReader 4.2's (issue 23): every capture of
// ../shared/testdata/ndpi-4.2/pcap (reference result/<pcap>.out) and ../shared/testdata/bench
// (<pcap>.out), plus the capture folders named in ROWPROBE_NDPI_EXTRA (colon-separated; each
// holds X.pcap / X.pcapng with X.pcap.out beside it or in ../result/), run with the
// configuration files ndpiReader was given (ndpi-4.2/reproduce.sh: -p -c -r -j -S).
//
// ndpiReader keys a flow by protocol, both addresses and ports and the VLAN id, for the whole
// file (no timeouts; ICMP with ports 0), oriented from its first packet's sender. rowprobe runs
// with timeouts longer than any capture; where it still makes several records of one such flow
// (a TCP SYN after FIN/RST starts a new one), the first record is the one that saw the packets
// nDPI saw first, and its label is compared. The test prints each file's agreement, the
// disagreements, and fails when the total is under 99 % of ndpiReader's flows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

struct RefFlow {
    std::string key;
    std::string label;
    std::string line;
};

std::string protoNumber(const std::string& name) {
    static const std::map<std::string, std::string> kNames = {{"TCP", "6"},    {"UDP", "17"},
                                                              {"ICMP", "1"},   {"ICMPV6", "58"},
                                                              {"VRRP", "112"}, {"IGMP", "2"}};
    const auto it = kNames.find(name);
    return it == kNames.end() ? name : it->second;
}

std::string convKey(const std::string& a, const std::string& ap, const std::string& b,
                    const std::string& bp, const std::string& proto, const std::string& vlan) {
    const std::string x = canonicalIp(a) + '#' + ap;
    const std::string y = canonicalIp(b) + '#' + bp;
    return (x < y ? x + ' ' + y : y + ' ' + x) + " p" + proto + " v" + vlan;
}

/// The flow lines of an ndpiReader -v 2 report ("\t1\tTCP a:p <-> b:p [VLAN: n][proto: 7/HTTP]").
std::vector<RefFlow> readNdpiOut(const fs::path& out) {
    static const std::regex kLine(
        R"(^\t\d+\t(\S+) (\[[^\]]+\]|[^ \[]+):(\d+) (?:<->|->) (\[[^\]]+\]|[^ \[]+):(\d+) (?:\[VLAN: (\d+)\])?\[proto: [0-9.]+/([^\]]+)\])");
    std::vector<RefFlow> flows;
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, kLine)) continue;
        const auto strip = [](std::string s) {
            if (!s.empty() && s.front() == '[') s = s.substr(1, s.size() - 2);
            return s;
        };
        const std::string vlan = m[6].matched ? m[6].str() : "0";
        flows.push_back({convKey(strip(m[2]), m[3], strip(m[4]), m[5], protoNumber(m[1]), vlan),
                         m[7], line.substr(0, 160)});
    }
    return flows;
}

struct Case {
    fs::path pcap;
    fs::path out;
};

std::vector<Case> cases() {
    std::vector<Case> out;
    const fs::path data = testdataDir();
    const auto scan = [&out](const fs::path& dir, const fs::path& resultDir) {
        if (!fs::is_directory(dir)) return;
        std::vector<Case> found;
        for (const auto& e : fs::directory_iterator(dir)) {
            const fs::path& p = e.path();
            if (p.extension() != ".pcap" && p.extension() != ".pcapng") continue;
            fs::path ref = resultDir / (p.filename().string() + ".out");
            if (!fs::exists(ref)) ref = p.string() + ".out";
            if (fs::exists(ref)) found.push_back({p, ref});
        }
        std::sort(found.begin(), found.end(),
                  [](const Case& a, const Case& b) { return a.pcap < b.pcap; });
        out.insert(out.end(), found.begin(), found.end());
    };
    scan(data / "ndpi-4.2" / "pcap", data / "ndpi-4.2" / "result");
    scan(data / "bench", data / "bench");
    if (const char* extra = std::getenv("ROWPROBE_NDPI_EXTRA"); extra != nullptr) {
        std::stringstream ss(extra);
        std::string dir;
        while (std::getline(ss, dir, ':'))
            if (!dir.empty()) scan(dir, fs::path(dir) / ".." / "result");
    }
    return out;
}

std::string pluginString() {
    const fs::path cfg = testdataDir() / "ndpi-4.2" / "config";
    return "ndpi;protos=" + (cfg / "protos.txt").string() +
           ";categories=" + (cfg / "categories.txt").string() +
           ";risky-domains=" + (cfg / "risky_domains.txt").string() +
           ";ja3=" + (cfg / "ja3_fingerprints.csv").string() +
           ";sha1=" + (cfg / "sha1_fingerprints.csv").string();
}

TEST(NdpiLabels, ApplicationLabelEqualsNdpiReaderForAtLeast99PercentOfFlows) {
    ROWPROBE_REQUIRE_BINARY();
    const auto all = cases();
    if (all.empty()) GTEST_SKIP() << "no nDPI captures under " << testdataDir();
    ROWPROBE_REQUIRE_FILE(testdataDir() / "ndpi-4.2" / "config" / "protos.txt");
    std::size_t total = 0;
    std::size_t agree = 0;
    std::size_t heapChecked = 0;
    std::ostringstream report;
    for (const Case& c : all) {
        const auto ref = readNdpiOut(c.out);
        const ProbeRun run = runProbe(c.pcap, {"-p", pluginString(), "--tunnel", "inner"},
                                      "cache;seed=1;active=31536000;inactive=31536000");
        // A capture rowprobe refuses (a damaged file header) counts its flows as disagreements.
        if (run.result.exitCode != 0 || !run.error.empty())
            report << "  " << c.pcap.filename().string() << ": rowprobe exit "
                   << run.result.exitCode << ": " << run.result.err.substr(0, 300) << run.error
                   << '\n';
        // Every record of a conversation: the first one by time, under the key with the VLAN id
        // and under the key without it (ndpiReader keys by the innermost 802.1Q tag, rowprobe by
        // the outermost: with two tags only the VLAN-free key, when it is unambiguous, matches).
        std::map<std::string, const JsonObject*> first;
        std::map<std::string, std::set<std::string>> vlansOf;
        for (const auto& f : run.flows) {
            const auto add = [&first, &f](const std::string& k) {
                auto [it, fresh] = first.emplace(k, &f);
                if (!fresh && flowValue(f, "time_first") < flowValue(*it->second, "time_first"))
                    it->second = &f;
            };
            const std::string bare =
                convKey(flowValue(f, "src_ip"), flowValue(f, "src_port"), flowValue(f, "dst_ip"),
                        flowValue(f, "dst_port"), flowValue(f, "proto"), "*");
            add(bare.substr(0, bare.size() - 1) + flowValue(f, "vlan"));
            add(bare);
            vlansOf[bare].insert(flowValue(f, "vlan"));
        }
        std::size_t ok = 0;
        std::ostringstream diffs;
        for (const RefFlow& r : ref) {
            auto it = first.find(r.key);
            if (it == first.end()) {
                const std::string bare = r.key.substr(0, r.key.rfind(" v")) + " v*";
                if (vlansOf[bare].size() == 1) it = first.find(bare);
            }
            const std::string ours =
                it == first.end() ? "(no flow)" : flowValue(*it->second, "ndpi_app");
            if (ours == r.label) {
                ++ok;
            } else {
                diffs << "    ndpiReader " << r.label << ", ours " << ours << ": " << r.line
                      << '\n';
            }
        }
        total += ref.size();
        agree += ok;
        // Memory: nDPI's flow memory is all freed once every flow is exported (the counted heap).
        if (run.result.exitCode == 0 && run.stat("total.cache.plugin_heap.allocations") != 0) {
            EXPECT_EQ(run.stat("total.cache.plugin_heap.live_bytes"), 0U) << c.pcap;
            EXPECT_EQ(run.stat("total.cache.plugin_heap.live_allocations"), 0U) << c.pcap;
            ++heapChecked;
        }
        report << "  " << c.pcap.filename().string() << ": " << ok << '/' << ref.size() << '\n'
               << diffs.str();
    }
    const double pct =
        total == 0 ? 100.0 : 100.0 * static_cast<double>(agree) / static_cast<double>(total);
    std::cout << "ndpi label agreement with ndpiReader 4.2:\n"
              << report.str() << "  total: " << agree << '/' << total << " = " << std::fixed
              << std::setprecision(2) << pct << " % of flows over " << all.size()
              << " captures; nDPI flow memory back to 0 bytes after " << heapChecked
              << " runs that allocated\n";
    EXPECT_GE(pct, 99.0) << report.str();
}

}  // namespace
}  // namespace rowprobe::test
