// Acceptance: ipfixprobe v5.7's own functional-test reference for the `basic` output
// (CESNET/ipfixprobe tests/functional, ../shared/testdata/ipfixprobe/outputs/basic, made from
// inputs/mixed.pcap with the default cache: 30 s inactive, 300 s active). Every one of its
// records must be reproduced on the fields both exporters have: addresses, ports, protocol,
// packets and bytes per direction, first/last time (microseconds: the capture's precision),
// TCP flags per direction and MACs. Compared as sorted multisets; nothing may be missing and
// nothing may be extra.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

struct Rec {
    std::string key;     // src|dst|sport|dport|proto  (oriented)
    std::string pair;    // unordered addresses + ports + proto, to find near misses
    std::string values;  // everything compared
};

std::string usText(const std::string& t) {
    const auto ns = parseTimeNs(t);
    return ns ? std::to_string(*ns / 1000) : "bad-time(" + t + ")";
}

Rec makeRec(const std::string& sip, const std::string& dip, const std::string& sp,
            const std::string& dp, const std::string& proto, const std::string& pk,
            const std::string& pkr, const std::string& by, const std::string& byr,
            const std::string& tf, const std::string& tl, const std::string& fl,
            const std::string& flr, const std::string& smac, const std::string& dmac) {
    Rec r;
    const std::string s = canonicalIp(sip);
    const std::string d = canonicalIp(dip);
    r.key = s + ':' + sp + " > " + d + ':' + dp + " p" + proto;
    const std::string a = s + ':' + sp;
    const std::string b = d + ':' + dp;
    r.pair = (a < b ? a + ' ' + b : b + ' ' + a) + " p" + proto;
    r.values = r.key + " pkts " + pk + '/' + pkr + " bytes " + by + '/' + byr + " first " +
               usText(tf) + " last " + usText(tl) + " flags " + fl + '/' + flr + " mac " + smac +
               " > " + dmac;
    return r;
}

TEST(IpfixprobeReference, BasicOutputOfMixedPcapReproducedRecordForRecord) {
    ROWPROBE_REQUIRE_BINARY();
    const auto dir = testdataDir() / "ipfixprobe";
    ROWPROBE_REQUIRE_FILE(dir / "outputs" / "basic");
    ROWPROBE_REQUIRE_FILE(dir / "inputs" / "mixed.pcap");

    auto lines = parseCsv(readFile(dir / "outputs" / "basic"));
    ASSERT_GE(lines.size(), 2U);
    // The LAST line is the UniRec header: "ipaddr DST_IP,ipaddr SRC_IP,...".
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < lines.back().size(); ++i) {
        const std::string& h = lines.back()[i];
        col[h.substr(h.find(' ') + 1)] = i;
    }
    lines.pop_back();
    for (const char* need : {"SRC_IP", "DST_IP", "SRC_PORT", "DST_PORT", "PROTOCOL", "PACKETS",
                             "PACKETS_REV", "BYTES", "BYTES_REV", "TIME_FIRST", "TIME_LAST",
                             "TCP_FLAGS", "TCP_FLAGS_REV", "SRC_MAC", "DST_MAC"}) {
        ASSERT_TRUE(col.count(need)) << "reference header lacks " << need;
    }
    std::vector<Rec> ref;
    for (const auto& l : lines) {
        auto v = [&](const char* name) { return l.at(col.at(name)); };
        ref.push_back(makeRec(v("SRC_IP"), v("DST_IP"), v("SRC_PORT"), v("DST_PORT"), v("PROTOCOL"),
                              v("PACKETS"), v("PACKETS_REV"), v("BYTES"), v("BYTES_REV"),
                              v("TIME_FIRST"), v("TIME_LAST"), v("TCP_FLAGS"), v("TCP_FLAGS_REV"),
                              v("SRC_MAC"), v("DST_MAC")));
    }
    ASSERT_EQ(ref.size(), 48U);

    const ProbeRun run = runProbe(dir / "inputs" / "mixed.pcap");
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    ASSERT_TRUE(run.error.empty()) << run.error;
    std::vector<Rec> ours;
    for (const auto& f : run.flows) {
        auto v = [&](const char* name) { return flowValue(f, name); };
        ours.push_back(makeRec(v("src_ip"), v("dst_ip"), v("src_port"), v("dst_port"), v("proto"),
                               v("packets"), v("packets_rev"), v("bytes"), v("bytes_rev"),
                               v("time_first"), v("time_last"), v("tcp_flags"), v("tcp_flags_rev"),
                               v("src_mac"), v("dst_mac")));
    }

    std::multiset<std::string> want;
    std::multiset<std::string> got;
    for (const auto& r : ref) want.insert(r.values);
    for (const auto& r : ours) got.insert(r.values);
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                        std::back_inserter(extra));

    std::ostringstream report;
    for (const auto& m : missing) {
        report << "  ipfixprobe: " << m << '\n';
        const auto it =
            std::find_if(ref.begin(), ref.end(), [&](const Rec& r) { return r.values == m; });
        for (const auto& o : ours) {
            if (o.pair == it->pair &&
                std::find(extra.begin(), extra.end(), o.values) != extra.end()) {
                report << "    ours:     " << o.values << '\n';
            }
        }
    }
    for (const auto& e : extra) {
        const auto it =
            std::find_if(ours.begin(), ours.end(), [&](const Rec& r) { return r.values == e; });
        const bool near = std::any_of(ref.begin(), ref.end(), [&](const Rec& r) {
            return r.pair == it->pair &&
                   std::find(missing.begin(), missing.end(), r.values) != missing.end();
        });
        if (!near) report << "  only ours:  " << e << '\n';
    }
    EXPECT_EQ(ours.size(), ref.size()) << "records";
    EXPECT_TRUE(missing.empty() && extra.empty())
        << missing.size() << " of 48 reference records not reproduced, " << extra.size()
        << " records of ours not in the reference:\n"
        << report.str();
}

}  // namespace
}  // namespace rowprobe::test
