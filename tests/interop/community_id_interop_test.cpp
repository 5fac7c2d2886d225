// The communityid plugin (-p 'communityid;seed=N') through the json and the ipfix outputs
// (IPFIX decoded by libfixbuf's ipfixDump with an element file for the operator's PEN):
//  * Suricata's expected values: every suricata-verify case (../shared/testdata/suricata-verify)
//    whose test.yaml expects a community_id, with the seed its suricata.yaml sets
//    (community-id-ipv6: 7, nfs3-01: 1234); the flow is found by its 5-tuple.
//  * The spec's examples (corelight/community-id-spec b1fe530, baseline/baseline_deflt.json
//    and baseline_seed1.json): TCP, UDP, SCTP, ICMP and ICMPv6 over IPv4 and IPv6, each
//    example a one-packet capture this test writes (the spec's own pcaps are not used).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kPen = 32473;  // RFC 5612's documentation PEN

unsigned num(const std::string& s) { return static_cast<unsigned>(std::stoul(s)); }

struct Expected {
    std::string src, dst;
    unsigned sport = 0, dport = 0, proto = 0;
    std::string id;
};

std::string tupleKey(const std::string& a, unsigned ap, const std::string& b, unsigned bp,
                     unsigned proto) {
    const std::string x = canonicalIp(a) + '#' + std::to_string(ap);
    const std::string y = canonicalIp(b) + '#' + std::to_string(bp);
    return (x < y ? x + ' ' + y : y + ' ' + x) + " p" + std::to_string(proto);
}

fs::path elementFile() {
    fs::path p = tempDir() / "community-id-element.xml";
    std::ofstream out(p);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<registry id=\"rowprobe_cid\" xmlns=\"http://www.iana.org/assignments\" "
           "xmlns:cert=\"http://www.cert.org/ipfix\">\n"
           "  <registry id=\"rowprobe-cid-elements\">\n"
           "    <record><name>communityId</name><dataType>string</dataType>"
           "<cert:enterpriseId>"
        << kPen << "</cert:enterpriseId><elementId>110</elementId></record>\n"
        << "  </registry>\n</registry>\n";
    return p;
}

/// tuple -> community_id of every flow of `pcap`, read from the json output.
std::map<std::string, std::string> fromJson(const fs::path& pcap, unsigned seed) {
    const auto r = runRowprobe("pcap;file=" + pcap.string(), "json",
                               {"-p", "communityid;seed=" + std::to_string(seed)});
    std::map<std::string, std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        const auto f = parseJsonFlat(line);
        const unsigned proto = num(f.at("proto"));
        const bool ports = proto == 6 || proto == 17 || proto == 132;
        out[tupleKey(f.at("src_ip"), ports ? num(f.at("src_port")) : 0, f.at("dst_ip"),
                     ports ? num(f.at("dst_port")) : 0, proto)] = f.at("community_id");
    }
    return out;
}

/// The same from the ipfix output, decoded by ipfixDump (elements 8/12 or 27/28, 7, 11, 4).
std::map<std::string, std::string> fromIpfix(const fs::path& pcap, unsigned seed) {
    const fs::path file = tempDir() / (pcap.stem().string() + "-cid.ipfix");
    runRowprobe(
        "pcap;file=" + pcap.string(), "ipfix;file=" + file.string(),
        {"-p", "communityid;seed=" + std::to_string(seed) + ";pen=" + std::to_string(kPen)});
    const auto dump = runCommand(
        {"ipfixDump", "--in", file.string(), "--data", "--element-file", elementFile().string()});
    EXPECT_EQ(dump.exitCode, 0) << dump.err;
    std::map<std::string, std::string> out;
    for (auto& v : ipfixDumpRecords(dump.out)) {
        const bool v6 = v.count("27") != 0;
        const unsigned proto = num(v["4"]);
        const bool ports = proto == 6 || proto == 17 || proto == 132;
        std::string id = v[std::to_string(kPen) + "/110"];
        // ipfixDump prints a string as `(len: 30) 1:...`
        if (id.rfind("(len: ", 0) == 0 && id.find(") ") != std::string::npos)
            id = id.substr(id.find(") ") + 2);
        out[tupleKey(v[v6 ? "27" : "8"], ports ? num(v["7"]) : 0, v[v6 ? "28" : "12"],
                     ports ? num(v["11"]) : 0, proto)] = id;
    }
    return out;
}

void expectIds(const std::vector<Expected>& expected, const std::map<std::string, std::string>& got,
               const std::string& what) {
    for (const Expected& e : expected) {
        const bool ports = e.proto == 6 || e.proto == 17 || e.proto == 132;
        const std::string key =
            tupleKey(e.src, ports ? e.sport : 0, e.dst, ports ? e.dport : 0, e.proto);
        const auto it = got.find(key);
        ASSERT_NE(it, got.end()) << what << ": no flow " << key;
        EXPECT_EQ(it->second, e.id) << what << ": " << key;
    }
}

// ---- suricata-verify --------------------------------------------------------------------------

std::vector<Expected> suricataExpected(const fs::path& yaml) {
    std::ifstream in(yaml);
    std::vector<Expected> out;
    std::map<std::string, std::string> cur;
    const auto flush = [&] {
        if (cur.count("community_id") != 0 && cur.count("src_ip") != 0 &&
            cur.count("src_port") != 0) {
            Expected e;
            e.src = cur["src_ip"];
            e.dst = cur["dest_ip"];
            e.sport = num(cur["src_port"]);
            e.dport = num(cur["dest_port"]);
            e.proto = cur["proto"] == "TCP" ? 6 : cur["proto"] == "UDP" ? 17 : 0;
            e.id = cur["community_id"];
            if (e.proto != 0) out.push_back(e);
        }
        cur.clear();
    };
    const std::regex kv(R"(^\s+([a-z_.]+):\s*(.*?)\s*$)");
    for (std::string l; std::getline(in, l);) {
        if (l.find("- filter:") != std::string::npos) flush();
        std::smatch m;
        if (std::regex_match(l, m, kv)) cur[m[1]] = m[2];
    }
    flush();
    return out;
}

unsigned suricataSeed(const fs::path& yaml) {
    std::ifstream in(yaml);
    const std::regex seed(R"(^\s*community-id-seed:\s*(\d+))");
    for (std::string l; std::getline(in, l);) {
        std::smatch m;
        if (std::regex_search(l, m, seed)) return num(m[1].str());
    }
    return 0;
}

TEST(CommunityIdInterop, SuricataVerifyExpectedValuesThroughJsonAndIpfix) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path base = testdataDir() / "suricata-verify";
    ROWPROBE_REQUIRE_FILE(base / "community-id-ipv6" / "test.yaml");
    std::size_t cases = 0;
    for (const auto& dir : fs::directory_iterator(base)) {
        const fs::path yaml = dir.path() / "test.yaml";
        if (!fs::exists(yaml) || !fs::exists(dir.path() / "input.pcap")) continue;
        const auto expected = suricataExpected(yaml);
        if (expected.empty()) continue;
        ++cases;
        const unsigned seed = suricataSeed(dir.path() / "suricata.yaml");
        SCOPED_TRACE(dir.path().filename().string() + " seed " + std::to_string(seed));
        expectIds(expected, fromJson(dir.path() / "input.pcap", seed), "json");
        if (!findTool("ipfixDump").empty())
            expectIds(expected, fromIpfix(dir.path() / "input.pcap", seed), "ipfix");
    }
    EXPECT_GE(cases, 2U) << "community-id-ipv6 and nfs3-01 expect Community IDs";
}

// ---- the spec's examples ----------------------------------------------------------------------

struct SpecCase {
    unsigned proto;
    const char* saddr;
    const char* daddr;
    unsigned sport;  // ICMP: type
    unsigned dport;  // ICMP: the counterpart type, or the code of a one-way type
    const char* deflt;
    const char* seed1;
};

// corelight/community-id-spec b1fe530, baseline/baseline_deflt.json and baseline_seed1.json
// (RSVP, proto 46, has no ports and is covered by the SDK's unit test).
constexpr SpecCase kSpec[] = {
    {58, "fe80::200:86ff:fe05:80da", "fe80::260:97ff:fe07:69ea", 135, 136,
     "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=", "1:kHa1FhMYIT6Ym2Vm2AOtoOARDzY="},
    {58, "fe80::260:97ff:fe07:69ea", "fe80::200:86ff:fe05:80da", 136, 135,
     "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=", "1:kHa1FhMYIT6Ym2Vm2AOtoOARDzY="},
    {58, "fe80::260:97ff:fe07:69ea", "fe80::200:86ff:fe05:80da", 135, 136,
     "1:zavyT/cezQr1fmImYCwYnMXbgck=", "1:2hSqmsDZ2kdcY9kbiUzOEBic0iM="},
    {58, "3ffe:501:1800:2345::2", "3ffe:507:0:1:200:86ff:fe05:80da", 3, 0,
     "1:2ObVBgIn28oZvibYZhZMBgh7WdQ=", "1:lVEtCZpYu84Xqaa++3lXFyuu2n4="},
    {58, "3ffe:501:410:0:2c0:dfff:fe47:33e", "3ffe:507:0:1:200:86ff:fe05:80da", 1, 4,
     "1:hLZd0XGWojozrvxqE0dWB1iM6R0=", "1:W8MHwXpWzpoSTD+cGcaJr4u0ys8="},
    {58, "3ffe:507:0:1:200:86ff:fe05:80da", "3ffe:501:0:1001::2", 128, 129,
     "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg=", "1:GfZxjAkDk2MkegpBYHV6tadtFXQ="},
    {58, "3ffe:501:0:1001::2", "3ffe:507:0:1:200:86ff:fe05:80da", 129, 128,
     "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg=", "1:GfZxjAkDk2MkegpBYHV6tadtFXQ="},
    {58, "fe80::200:86ff:fe05:80da", "ff02::2", 133, 134,
     "1:hO+sN4H+MG5MY/8hIrXPqc4ZQz0=", "1:L7Ka0ZMYu+J3bL4ulW2PrqyXNo8="},
    {58, "fe80::260:97ff:fe07:69ea", "ff02::1", 134, 133,
     "1:pkvHqCL88/tg1k4cPigmZXUtL00=", "1:K/ee5UCqAMAQXDorP5nSa2CGLjc="},
    {1, "192.168.0.89", "192.168.0.1", 8, 0,
     "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=", "1:03g6IloqVBdcZlPyX8r0hgoE7kA="},
    {1, "192.168.0.1", "192.168.0.89", 0, 8,
     "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=", "1:03g6IloqVBdcZlPyX8r0hgoE7kA="},
    {1, "10.0.0.1", "10.0.0.2", 11, 0,
     "1:YHxtAirCG//0OzkcVAukqKQN9xM=", "1:XjUibYHaafLQ3pxQeiMI8g25q20="},
    {6, "2001:470:e5bf:dead:4957:2174:e82c:4887", "2607:f8b0:400c:c03::1a", 63943, 25,
     "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4=", "1:eJYTW6AOzFLlSUoESovMjnu7rMw="},
    {6, "2607:f8b0:400c:c03::1a", "2001:470:e5bf:dead:4957:2174:e82c:4887", 25, 63943,
     "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4=", "1:eJYTW6AOzFLlSUoESovMjnu7rMw="},
    {132, "192.168.170.8", "192.168.170.56", 7, 7,
     "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=", "1:5w3ZRjeKBzqT3zsaEECDGjUbYeg="},
    {132, "192.168.170.56", "192.168.170.8", 7, 7,
     "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=", "1:5w3ZRjeKBzqT3zsaEECDGjUbYeg="},
    {6, "128.232.110.120", "66.35.250.204", 34855, 80,
     "1:LQU9qZlK+B5F3KDmev6m5PMibrg=", "1:3V71V58M3Ksw/yuFALMcW0LAHvc="},
    {6, "66.35.250.204", "128.232.110.120", 80, 34855,
     "1:LQU9qZlK+B5F3KDmev6m5PMibrg=", "1:3V71V58M3Ksw/yuFALMcW0LAHvc="},
    {17, "192.168.1.52", "8.8.8.8", 54585, 53,
     "1:d/FP5EW3wiY1vCndhwleRRKHowQ=", "1:Q9We8WO3piVF8yEQBNJF4uiSVrI="},
    {17, "8.8.8.8", "192.168.1.52", 53, 54585,
     "1:d/FP5EW3wiY1vCndhwleRRKHowQ=", "1:Q9We8WO3piVF8yEQBNJF4uiSVrI="},
};

bool icmpPairType(unsigned proto, unsigned type) {
    static const std::vector<unsigned> v4 = {8, 0, 13, 14, 15, 16, 10, 9, 17, 18};
    static const std::vector<unsigned> v6 = {128, 129, 130, 131, 133, 134,
                                             135, 136, 139, 140, 144, 145};
    const auto& l = proto == 1 ? v4 : v6;
    return std::find(l.begin(), l.end(), type) != l.end();
}

void put16(std::vector<std::uint8_t>& b, unsigned v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}

/// A one-packet Ethernet capture of the example.
fs::path specCapture(const SpecCase& c, std::size_t index) {
    const bool v6 = std::string(c.saddr).find(':') != std::string::npos;
    std::vector<std::uint8_t> l4;
    if (c.proto == 1 || c.proto == 58) {
        l4 = {static_cast<std::uint8_t>(c.sport),
              static_cast<std::uint8_t>(icmpPairType(c.proto, c.sport) ? 0 : c.dport),
              0,
              0,
              0,
              1,
              0,
              1};
    } else {
        put16(l4, c.sport);
        put16(l4, c.dport);
        if (c.proto == 6) {
            l4.insert(l4.end(), {0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0});
        } else if (c.proto == 17) {
            l4.insert(l4.end(), {0, 8, 0, 0});
        } else {  // SCTP common header: verification tag, checksum
            l4.insert(l4.end(), {0, 0, 0, 1, 0, 0, 0, 0});
        }
    }
    std::vector<std::uint8_t> f(12, 0x02);
    put16(f, v6 ? 0x86dd : 0x0800);
    std::array<std::uint8_t, 16> s{}, d{};
    EXPECT_EQ(inet_pton(v6 ? AF_INET6 : AF_INET, c.saddr, s.data()), 1);
    EXPECT_EQ(inet_pton(v6 ? AF_INET6 : AF_INET, c.daddr, d.data()), 1);
    if (v6) {
        f.insert(f.end(), {0x60, 0, 0, 0});
        put16(f, static_cast<unsigned>(l4.size()));
        f.push_back(static_cast<std::uint8_t>(c.proto));
        f.push_back(64);
        f.insert(f.end(), s.begin(), s.end());
        f.insert(f.end(), d.begin(), d.end());
    } else {
        f.insert(f.end(), {0x45, 0});
        put16(f, static_cast<unsigned>(20 + l4.size()));
        f.insert(f.end(), {0, 0, 0x40, 0, 64, static_cast<std::uint8_t>(c.proto), 0, 0});
        f.insert(f.end(), s.begin(), s.begin() + 4);
        f.insert(f.end(), d.begin(), d.begin() + 4);
    }
    f.insert(f.end(), l4.begin(), l4.end());
    const fs::path p = tempDir() / ("cid-spec-" + std::to_string(index) + ".pcap");
    std::ofstream out(p, std::ios::binary);
    const std::uint32_t hdr[] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
    out.write(reinterpret_cast<const char*>(hdr), 4);
    out.write(reinterpret_cast<const char*>(&hdr[1]), 20);
    const std::uint32_t rec[] = {1700000000, 0, static_cast<std::uint32_t>(f.size()),
                                 static_cast<std::uint32_t>(f.size())};
    out.write(reinterpret_cast<const char*>(rec), sizeof rec);
    out.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
    return p;
}

TEST(CommunityIdInterop, SpecBaselineExamplesThroughJsonAndIpfix) {
    ROWPROBE_REQUIRE_BINARY();
    const bool dump = !findTool("ipfixDump").empty();
    for (std::size_t i = 0; i < std::size(kSpec); ++i) {
        const SpecCase& c = kSpec[i];
        const fs::path pcap = specCapture(c, i);
        for (const auto& [seed, id] : {std::pair{0U, c.deflt}, std::pair{1U, c.seed1}}) {
            SCOPED_TRACE(std::string(c.saddr) + " -> " + c.daddr + " proto " +
                         std::to_string(c.proto) + " seed " + std::to_string(seed));
            const std::vector<Expected> e = {{c.saddr, c.daddr, c.sport, c.dport, c.proto, id}};
            expectIds(e, fromJson(pcap, seed), "json");
            if (dump) expectIds(e, fromIpfix(pcap, seed), "ipfix");
        }
    }
}

}  // namespace
}  // namespace rowprobe::test::interop
