// The conn plugin against Zeek's conn.log baselines (../shared/testdata/zeek/baseline/*/conn.log,
// Zeek a13de64f): conn_state and history of every connection that fits rowprobe's flow
// semantics, per trace and in total; the test fails when fewer than 95 % agree. Orig/resp bytes
// (Zeek's, from sequence numbers) are printed beside them.
//
// rowprobe runs each trace with timeouts longer than the trace (a Zeek connection should be one
// flow) and `--tunnel both` (Zeek reports the flows inside tunnels too). The join:
//  * TCP and UDP connections, by the unordered 5-tuple. ICMP and other protocols are left
//    out: Zeek keys ICMP by type pair and rowprobe by address pair, and conn_state is OTH for
//    every one of them.
//  * A tuple that Zeek reports once is joined with rowprobe's flow of that tuple. A tuple that
//    repeats is joined when rowprobe has as many flows for it, each Zeek connection with the
//    flow of the same duration (conn.log's timestamps are masked, its durations are not).
//  * Otherwise the tuple does not fit: Zeek ended a connection on one of its timers (5 s after
//    a RST or a FIN exchange, and so on) and took later packets of the tuple as a new
//    connection, where rowprobe's flow goes on. Those connections are counted and named.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

struct ZeekConn {
    std::string tuple;
    std::string state;
    std::string history;
    std::string origBytes;
    std::string respBytes;
    std::string service;
    double duration = -1;
};

std::string tupleKey(const std::string& a, const std::string& ap, const std::string& b,
                     const std::string& bp, const std::string& proto) {
    const std::string x = canonicalIp(a) + '#' + ap;
    const std::string y = canonicalIp(b) + '#' + bp;
    return (x < y ? x + ' ' + y : y + ' ' + x) + " p" + proto;
}

std::vector<std::string> splitTabs(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(line);
    while (std::getline(in, cur, '\t')) out.push_back(cur);
    return out;
}

std::vector<ZeekConn> readConnLog(const fs::path& file) {
    std::ifstream in(file);
    std::vector<std::string> names;
    std::vector<ZeekConn> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("#fields", 0) == 0) {
            names = splitTabs(line);
            names.erase(names.begin());
            continue;
        }
        if (line.empty() || line[0] == '#') continue;
        const auto cells = splitTabs(line);
        std::map<std::string, std::string> r;
        for (std::size_t i = 0; i < names.size() && i < cells.size(); ++i) r[names[i]] = cells[i];
        const std::string proto = r["proto"] == "tcp" ? "6" : r["proto"] == "udp" ? "17" : "";
        if (proto.empty()) continue;
        ZeekConn c;
        c.tuple = tupleKey(r["id.orig_h"], r["id.orig_p"], r["id.resp_h"], r["id.resp_p"], proto);
        c.state = r["conn_state"];
        c.history = r["history"] == "-" ? "" : r["history"];
        c.origBytes = r["orig_bytes"];  // "-": Zeek sets them only when the duration is > 0
        c.respBytes = r["resp_bytes"];
        c.duration = r["duration"] == "-" ? 0 : std::stod(r["duration"]);
        c.service = r["service"] == "-" ? "" : r["service"];
        out.push_back(c);
    }
    return out;
}

double durationOf(const JsonObject& f) {
    const auto a = parseTimeNs(flowValue(f, "time_first")).value_or(0);
    const auto b = parseTimeNs(flowValue(f, "time_last")).value_or(0);
    return static_cast<double>(b - a) / 1e9;
}

struct Tally {
    std::size_t joined = 0;
    std::size_t agree = 0;
    std::size_t bytesKnown = 0;
    std::size_t bytesAgree = 0;
    std::size_t unfit = 0;
};

TEST(ZeekConn, StateAndHistoryEqualConnLogForAtLeast95PercentOfConnections) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path base = testdataDir() / "zeek";
    ROWPROBE_REQUIRE_FILE(base / "expected_flows.csv");
    std::map<std::string, std::string> pcapOf;  // case -> trace
    for (const auto& row : loadTruth(base / "expected_flows.csv", ""))
        pcapOf[row.get("case")] = row.get("pcap");
    ASSERT_FALSE(pcapOf.empty());

    Tally total;
    std::ostringstream report;
    std::ostringstream problems;
    for (const auto& [name, pcap] : pcapOf) {
        const fs::path log = base / "baseline" / name / "conn.log";
        if (!fs::exists(log) || !fs::exists(base / pcap)) continue;
        const ProbeRun run = runProbe(base / pcap, {"--tunnel", "both", "-p", "conn"},
                                      "cache;seed=1;inactive=86400;active=86400");
        ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
        ASSERT_TRUE(run.error.empty()) << run.error;
        std::map<std::string, std::vector<const JsonObject*>> ours;
        for (const auto& f : run.flows) {
            const std::string proto = flowValue(f, "proto");
            if (proto != "6" && proto != "17") continue;
            ours[tupleKey(flowValue(f, "src_ip"), flowValue(f, "src_port"), flowValue(f, "dst_ip"),
                          flowValue(f, "dst_port"), proto)]
                .push_back(&f);
        }
        std::map<std::string, std::vector<ZeekConn>> zeek;
        for (auto& c : readConnLog(log)) zeek[c.tuple].push_back(c);

        Tally t;
        for (const auto& [tuple, conns] : zeek) {
            const auto it = ours.find(tuple);
            const std::size_t flows = it == ours.end() ? 0 : it->second.size();
            std::vector<std::pair<const ZeekConn*, const JsonObject*>> pairs;
            if (flows == conns.size()) {
                std::set<const JsonObject*> used;
                for (const ZeekConn& c : conns) {
                    const JsonObject* match = nullptr;
                    for (const JsonObject* f : it->second) {
                        if (used.count(f) == 0 &&
                            (conns.size() == 1 || std::fabs(durationOf(*f) - c.duration) < 2e-6))
                            match = f;
                    }
                    if (match == nullptr) break;
                    used.insert(match);
                    pairs.emplace_back(&c, match);
                }
            }
            if (pairs.size() != conns.size()) {
                t.unfit += conns.size();
                problems << "  " << name << ": not compared (Zeek " << conns.size()
                         << " connection(s), rowprobe " << flows << " flow(s)): " << tuple << '\n';
                continue;
            }
            for (const auto& [c, f] : pairs) {
                ++t.joined;
                const std::string state = flowValue(*f, "conn_state");
                const std::string history = flowValue(*f, "conn_history");
                if (state == c->state && history == c->history) {
                    ++t.agree;
                } else {
                    problems << "  " << name << ": " << tuple << " zeek " << c->state << ' '
                             << (c->history.empty() ? "-" : c->history) << ", rowprobe " << state
                             << ' ' << (history.empty() ? "-" : history) << '\n';
                }
                if (c->origBytes != "-") {
                    ++t.bytesKnown;
                    if (flowValue(*f, "conn_orig_bytes") == c->origBytes &&
                        flowValue(*f, "conn_resp_bytes") == c->respBytes)
                        ++t.bytesAgree;
                }
            }
        }
        report << "  " << name << ": " << t.agree << "/" << t.joined << " state+history, "
               << t.bytesAgree << "/" << t.bytesKnown << " orig/resp bytes, " << t.unfit
               << " not fitting\n";
        total.joined += t.joined;
        total.agree += t.agree;
        total.bytesAgree += t.bytesAgree;
        total.bytesKnown += t.bytesKnown;
        total.unfit += t.unfit;
    }
    ASSERT_GT(total.joined, 0U);
    const double share = static_cast<double>(total.agree) / static_cast<double>(total.joined);
    std::cout << "conn vs Zeek conn.log, per trace:\n"
              << report.str() << "total: " << total.agree << "/" << total.joined
              << " state+history (" << share * 100 << " %), " << total.bytesAgree << "/"
              << total.bytesKnown << " orig/resp bytes, " << total.unfit
              << " connections not fitting\n"
              << problems.str();
    EXPECT_GE(share, 0.95) << problems.str();
}

// conn_service through the SDK's service facility, end to end: with `-p http -p conn`, every
// record of a connection Zeek labels "http" says "http", and no record of a connection Zeek
// leaves without a service does (the http plugin may split a keep-alive flow into several
// records, so records are checked per tuple rather than joined one to one).
TEST(ZeekConn, ServiceFromTheHttpPluginEqualsConnLog) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path base = testdataDir() / "zeek";
    const fs::path pcap = base / "Traces" / "http" / "concurrent-range-requests.pcap";
    const fs::path log =
        base / "baseline" / "scripts.base.protocols.http.concurrent-range-requests" / "conn.log";
    ROWPROBE_REQUIRE_FILE(pcap);
    ROWPROBE_REQUIRE_FILE(log);
    const ProbeRun run =
        runProbe(pcap, {"-p", "http", "-p", "conn"}, "cache;seed=1;inactive=86400;active=86400");
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    std::map<std::string, std::set<std::string>> ours;  // tuple -> conn_service values
    for (const auto& f : run.flows) {
        ours[tupleKey(flowValue(f, "src_ip"), flowValue(f, "src_port"), flowValue(f, "dst_ip"),
                      flowValue(f, "dst_port"), flowValue(f, "proto"))]
            .insert(flowValue(f, "conn_service"));
    }
    std::size_t http = 0;
    for (const ZeekConn& c : readConnLog(log)) {
        const auto it = ours.find(c.tuple);
        ASSERT_NE(it, ours.end()) << c.tuple;
        EXPECT_EQ(it->second, std::set<std::string>{c.service}) << c.tuple;
        if (c.service == "http") ++http;
    }
    EXPECT_GT(http, 0U);
}

}  // namespace
}  // namespace rowprobe::test
