// Comparing rowprobe's json output with per-flow truth in the shared `expected_flows.csv`
// schema (pcaps/*.truth.csv, ../shared/testdata/bench/*.truth.csv). Header-only: the test
// folders compile only *_test.cpp files.
//
// Matching: every required truth row must be matched by exactly one exported flow with the
// same oriented key (src ip/port, dst ip/port, protocol, and the VLAN when the row's `extra`
// names one); when several flows share a key (timeouts), the row's first timestamp decides.
// Then every field the row asserts (non-empty) is compared exactly. Flows left over must be
// covered by an optional row (`"optional": true`: addresses only), otherwise they are extra.
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {

/// Canonical text of an IPv4 / IPv6 address (so "2001:DB8::0:1" equals "2001:db8::1").
inline std::string canonicalIp(const std::string& s) {
    unsigned char buf[16];
    char out[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
        return inet_ntop(AF_INET, buf, out, sizeof out) != nullptr ? std::string(out) : s;
    }
    if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
        return inet_ntop(AF_INET6, buf, out, sizeof out) != nullptr ? std::string(out) : s;
    }
    return s;
}

/// Parses "27", "0x1b"; nullopt for anything else.
inline std::optional<std::uint64_t> parseUint(const std::string& s) {
    if (s.empty()) return std::nullopt;
    try {
        std::size_t used = 0;
        const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        const std::uint64_t v = std::stoull(s, &used, hex ? 16 : 10);
        if (used != s.size()) return std::nullopt;
        return v;
    } catch (...) {
        return std::nullopt;
    }
}

struct TruthRow {
    std::map<std::string, std::string> field;  ///< CSV columns by header name
    JsonObject extra;                          ///< the `extra` JSON, flattened
    int line = 0;
    bool optional() const { return extra.count("optional") != 0 && extra.at("optional") == "true"; }
    const std::string& get(const std::string& name) const {
        static const std::string kEmpty;
        const auto it = field.find(name);
        return it == field.end() ? kEmpty : it->second;
    }
    std::string describe() const {
        std::ostringstream o;
        o << "truth line " << line << " [" << get("label") << "] " << get("src_ip") << ':'
          << get("src_port") << " -> " << get("dst_ip") << ':' << get("dst_port") << " proto "
          << get("proto");
        if (extra.count("vlan") != 0 && extra.at("vlan") != "0") o << " vlan " << extra.at("vlan");
        if (!get("first_ts").empty()) o << " first " << get("first_ts");
        return o.str();
    }
};

/// Loads a truth CSV; `caseName` (when not empty) keeps only rows of that case.
inline std::vector<TruthRow> loadTruth(const std::filesystem::path& csv,
                                       const std::string& caseName = {}) {
    const auto rows = parseCsv(readFile(csv));
    std::vector<TruthRow> out;
    if (rows.empty()) return out;
    const auto& header = rows[0];
    for (std::size_t r = 1; r < rows.size(); ++r) {
        TruthRow t;
        t.line = static_cast<int>(r + 1);
        for (std::size_t c = 0; c < header.size() && c < rows[r].size(); ++c)
            t.field[header[c]] = rows[r][c];
        if (!caseName.empty() && t.get("case") != caseName) continue;
        if (!t.get("extra").empty()) {
            try {
                t.extra = parseJsonFlat(t.get("extra"));
            } catch (...) {
            }
        }
        out.push_back(std::move(t));
    }
    return out;
}

inline std::string flowValue(const JsonObject& f, const std::string& k) {
    const auto it = f.find(k);
    return it == f.end() ? std::string("(absent)") : it->second;
}

inline std::string describeFlow(const JsonObject& f) {
    std::ostringstream o;
    o << flowValue(f, "src_ip") << ':' << flowValue(f, "src_port") << " -> "
      << flowValue(f, "dst_ip") << ':' << flowValue(f, "dst_port") << " proto "
      << flowValue(f, "proto") << " vlan " << flowValue(f, "vlan") << " first "
      << flowValue(f, "time_first") << " pkts " << flowValue(f, "packets") << '/'
      << flowValue(f, "packets_rev") << " bytes " << flowValue(f, "bytes") << '/'
      << flowValue(f, "bytes_rev") << " end " << flowValue(f, "end_reason");
    return o.str();
}

struct TruthOptions {
    bool compareTimes = true;   ///< first_ts / last_ts exactly (nanoseconds)
    bool compareExtras = true;  ///< vlan, ttl, icmp type/code, MACs, end reason from `extra`
    bool useVlan = true;        ///< the row's extra.vlan is part of the key
};

/// Result of a comparison: human-readable problems (empty = all good) and counters.
struct TruthReport {
    std::vector<std::string> problems;
    std::size_t matched = 0;
    std::size_t required = 0;
    std::size_t extraFlows = 0;
    std::size_t missing = 0;
    std::size_t fieldMismatches = 0;

    std::string summary(std::size_t maxLines = 40) const {
        std::ostringstream o;
        o << matched << '/' << required << " truth rows matched; " << missing << " missing, "
          << fieldMismatches << " field mismatches, " << extraFlows << " unexpected flows\n";
        for (std::size_t i = 0; i < problems.size() && i < maxLines; ++i)
            o << "  " << problems[i] << '\n';
        if (problems.size() > maxLines)
            o << "  ... and " << problems.size() - maxLines << " more\n";
        return o.str();
    }
};

namespace detail {

inline std::string orientedKey(const std::string& sip, const std::string& sport,
                               const std::string& dip, const std::string& dport,
                               const std::string& proto, const std::string& vlan) {
    return canonicalIp(sip) + '|' + sport + '|' + canonicalIp(dip) + '|' + dport + '|' + proto +
           '|' + vlan;
}

inline bool sameNumber(const std::string& a, const std::string& b) {
    const auto x = parseUint(a);
    const auto y = parseUint(b);
    return x && y ? *x == *y : a == b;
}

inline bool anyOf(const std::string& alternatives, const std::string& v) {
    std::size_t start = 0;
    while (start <= alternatives.size()) {
        const std::size_t bar = alternatives.find('|', start);
        const std::string alt =
            alternatives.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
        if (alt == v) return true;
        if (bar == std::string::npos) break;
        start = bar + 1;
    }
    return false;
}

}  // namespace detail

inline TruthReport compareWithTruth(const std::vector<JsonObject>& flows,
                                    const std::vector<TruthRow>& rows,
                                    const TruthOptions& opt = {}) {
    TruthReport rep;
    std::unordered_map<std::string, std::vector<std::size_t>> byKey;
    for (std::size_t i = 0; i < flows.size(); ++i) {
        const JsonObject& f = flows[i];
        byKey[detail::orientedKey(flowValue(f, "src_ip"), flowValue(f, "src_port"),
                                  flowValue(f, "dst_ip"), flowValue(f, "dst_port"),
                                  flowValue(f, "proto"), opt.useVlan ? flowValue(f, "vlan") : "-")]
            .push_back(i);
    }
    std::vector<bool> used(flows.size(), false);
    auto vlanOf = [&](const TruthRow& r) -> std::string {
        if (!opt.useVlan) return "-";
        const auto it = r.extra.find("vlan");
        return it == r.extra.end() ? "0" : it->second;
    };
    for (const TruthRow& r : rows) {
        if (r.optional()) continue;
        ++rep.required;
        const std::string key =
            detail::orientedKey(r.get("src_ip"), r.get("src_port"), r.get("dst_ip"),
                                r.get("dst_port"), r.get("proto"), vlanOf(r));
        std::optional<std::size_t> pick;
        const auto it = byKey.find(key);
        if (it != byKey.end()) {
            const auto wantFirst = parseTimeNs(r.get("first_ts"));
            for (const std::size_t i : it->second) {
                if (used[i]) continue;
                if (wantFirst && it->second.size() > 1 &&
                    parseTimeNs(flowValue(flows[i], "time_first")) != wantFirst) {
                    continue;
                }
                pick = i;
                break;
            }
            if (!pick) {  // several flows with this key but none starts at the right time
                for (const std::size_t i : it->second) {
                    if (!used[i]) {
                        pick = i;
                        break;
                    }
                }
            }
        }
        if (!pick) {
            ++rep.missing;
            const std::string reversed =
                detail::orientedKey(r.get("dst_ip"), r.get("dst_port"), r.get("src_ip"),
                                    r.get("src_port"), r.get("proto"), vlanOf(r));
            const auto rev = byKey.find(reversed);
            std::string hint;
            if (rev != byKey.end())
                hint = " (a flow with the reversed orientation exists: " +
                       describeFlow(flows[rev->second[0]]) + ")";
            rep.problems.push_back("missing: " + r.describe() + hint);
            continue;
        }
        used[*pick] = true;
        const JsonObject& f = flows[*pick];
        std::vector<std::string> diffs;
        auto num = [&](const std::string& truthName, const std::string& flowName) {
            const std::string& want = r.get(truthName);
            if (want.empty()) return;
            if (!detail::sameNumber(want, flowValue(f, flowName))) {
                diffs.push_back(flowName + " " + flowValue(f, flowName) + " != " + want);
            }
        };
        num("packets", "packets");
        num("packets_rev", "packets_rev");
        num("bytes", "bytes");
        num("bytes_rev", "bytes_rev");
        num("tcp_flags", "tcp_flags");
        num("tcp_flags_rev", "tcp_flags_rev");
        if (opt.compareTimes) {
            for (const auto& [truthName, flowName] :
                 {std::pair{"first_ts", "time_first"}, std::pair{"last_ts", "time_last"}}) {
                const std::string& want = r.get(truthName);
                if (want.empty()) continue;
                const auto w = parseTimeNs(want);
                const auto g = parseTimeNs(flowValue(f, flowName));
                if (!w || !g || *w != *g)
                    diffs.push_back(std::string(flowName) + " " + flowValue(f, flowName) +
                                    " != " + want);
            }
        }
        if (opt.compareExtras) {
            for (const char* k :
                 {"vlan", "ip_version", "ttl", "ttl_rev", "icmp_type_code", "icmp_type_code_rev"}) {
                const auto e = r.extra.find(k);
                if (e != r.extra.end() && !detail::sameNumber(e->second, flowValue(f, k))) {
                    diffs.push_back(std::string(k) + " " + flowValue(f, k) + " != " + e->second);
                }
            }
            for (const char* k : {"src_mac", "dst_mac"}) {
                const auto e = r.extra.find(k);
                if (e != r.extra.end() && !e->second.empty() && e->second != flowValue(f, k)) {
                    diffs.push_back(std::string(k) + " " + flowValue(f, k) + " != " + e->second);
                }
            }
            const auto e = r.extra.find("end_reason");
            if (e != r.extra.end() && !detail::anyOf(e->second, flowValue(f, "end_reason"))) {
                diffs.push_back("end_reason " + flowValue(f, "end_reason") + " not in " +
                                e->second);
            }
        }
        if (diffs.empty()) {
            ++rep.matched;
        } else {
            ++rep.fieldMismatches;
            std::string line = "mismatch: " + r.describe() + ":";
            for (const auto& d : diffs) line += " " + d + ";";
            rep.problems.push_back(line);
        }
    }
    for (std::size_t i = 0; i < flows.size(); ++i) {
        if (used[i]) continue;
        const JsonObject& f = flows[i];
        bool covered = false;
        for (const TruthRow& r : rows) {
            if (!r.optional()) continue;
            const std::string a = canonicalIp(r.get("src_ip"));
            const std::string b = canonicalIp(r.get("dst_ip"));
            const std::string s = canonicalIp(flowValue(f, "src_ip"));
            const std::string d = canonicalIp(flowValue(f, "dst_ip"));
            if ((a == s && b == d) || (a == d && b == s)) {
                covered = true;
                break;
            }
        }
        if (!covered) {
            ++rep.extraFlows;
            rep.problems.push_back("unexpected flow: " + describeFlow(f));
        }
    }
    return rep;
}

/// Reads rowprobe's json output file; adds a gtest failure and returns {} on a parse error.
inline std::vector<JsonObject> readFlows(const std::filesystem::path& jsonFile,
                                         std::string* error = nullptr) {
    try {
        return parseJsonLines(readFile(jsonFile));
    } catch (const std::exception& e) {
        if (error != nullptr) *error = e.what();
        return {};
    }
}

/// Sum of packets over both directions of every flow.
inline std::uint64_t packetSum(const std::vector<JsonObject>& flows) {
    std::uint64_t n = 0;
    for (const auto& f : flows) {
        n += parseUint(flowValue(f, "packets")).value_or(0) +
             parseUint(flowValue(f, "packets_rev")).value_or(0);
    }
    return n;
}

/// One run of the built binary on a capture with json output and statistics.
struct ProbeRun {
    CommandResult result;
    std::vector<JsonObject> flows;
    JsonObject stats;           ///< --stats-json, flattened ("total.parsed", "queues.0.packets")
    std::string error;          ///< json / stats parse problems
    std::filesystem::path dir;  ///< where flows.json and stats.json are
    std::string commandLine;

    std::uint64_t stat(const std::string& key) const {
        const auto it = stats.find(key);
        return it == stats.end() ? 0 : parseUint(it->second).value_or(0);
    }
    bool hasStat(const std::string& key) const { return stats.count(key) != 0; }
};

/// Runs `rowprobe -i 'pcap;file=PCAP' -s STORAGE -o 'json;file=DIR/flows.json'
/// --stats-json DIR/stats.json EXTRA...`.
inline ProbeRun runProbe(const std::filesystem::path& pcap,
                         const std::vector<std::string>& extra = {},
                         const std::string& storage = "cache;seed=1", int timeoutSec = 300) {
    ProbeRun run;
    run.dir = tempDir();
    std::vector<std::string> argv = {rowprobeBinary().string(),
                                     "-i",
                                     "pcap;file=" + pcap.string(),
                                     "-s",
                                     storage,
                                     "-o",
                                     "json;file=" + (run.dir / "flows.json").string(),
                                     "--stats-json",
                                     (run.dir / "stats.json").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const auto& a : argv)
        run.commandLine += (run.commandLine.empty() ? "" : " ") + ("'" + a + "'");
    run.result = runCommand(argv, timeoutSec);
    run.flows = readFlows(run.dir / "flows.json", &run.error);
    try {
        const std::string s = readFile(run.dir / "stats.json");
        if (!s.empty()) run.stats = parseJsonFlat(s);
    } catch (const std::exception& e) {
        run.error += std::string(" stats: ") + e.what();
    }
    return run;
}

/// Skips the test when the binary has not been built.
#define ROWPROBE_REQUIRE_BINARY()                                                                \
    do {                                                                                         \
        if (!std::filesystem::exists(::rowprobe::test::rowprobeBinary()))                        \
            GTEST_SKIP() << "rowprobe binary not built: " << ::rowprobe::test::rowprobeBinary(); \
    } while (0)

}  // namespace rowprobe::test
