// Independent checks of the http, tls and dns parsers (not ipfixprobe's outputs):
//  * CESNET FlowTest's annotated cases (../shared/testdata/flowtest: http_get/post/404,
//    tls12/tls12_alpn/tls13, dns_a/aaaa/cname/tcp): host, URL, method, status, agent, content
//    type; SNI, ALPN, client and server version, cipher suite, JA3; DNS id, question, rcode and
//    the first answer.
//  * nDPI 4.2's ndpiReader results (../shared/testdata/ndpi-4.2): JA3C and SNI of every TLS
//    flow over TCP whose ClientHello nDPI saw, the HTTP host and the DNS query name.
// The packets go through rowprobe's packet parser and the plugins' record code, one biflow per
// 5-tuple (both tools annotate whole connections); the nDPI TLS comparison also runs end to end
// (rowprobe -p tls, json output), as l7_reference_test.cpp does for ipfixprobe's references.
//
// Semantic differences handled explicitly:
//  * FlowTest's tls_client_version is the highest supported_versions entry of the ClientHello
//    (0x7f1c for the TLS 1.3 draft-28 case), rowprobe's tls_version the handshake version until
//    the ServerHello replaces it: the client version is checked on the parsed hello.
//  * rowprobe's dns plugin makes one record per message; FlowTest annotates the query fields
//    (_forward) and the response fields (_reverse) of one biflow: each is checked on its record.
//  * rowprobe keeps ipfixprobe's field limits (User-Agent 127 bytes, Host 63, ...): a longer
//    annotated value is compared on its first bytes (http_404's Edge User-Agent is 133 bytes).
//  * nDPI reports the HTTP host without the ":port" of the Host header; rowprobe (and
//    ipfixprobe) export the header as sent, so the port is dropped before comparing.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "flow_truth.hpp"
#include "l7_truth.hpp"
#include "process/dns/dns_record.hpp"
#include "process/http/http_record.hpp"
#include "process/tls/tls_record.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

// ---- per-flow results of the three plugins ------------------------------------------------

struct FlowResult {
    std::vector<http::HttpRecord> http;  ///< one per request/response pair, in order
    std::optional<tls::TlsRecord> tls;
    std::uint16_t tlsClientVersion = 0;  ///< highest supported_versions, else handshake version
    std::vector<std::pair<Packet, dns::DnsRecord>> dns;  ///< each parsed message
};

// Flow id -> results, for every biflow of the capture.
std::map<std::string, FlowResult> analyse(const fs::path& pcap) {
    std::map<std::string, FlowResult> out;
    std::map<std::string, bool> httpOpen, tlsDone;
    for (const Packet& p : readPackets(pcap)) {
        const std::string id = flowId(p);
        FlowResult& f = out[id];
        // http (flush-reinsert: a second request/response opens the next record)
        http::HttpRecord scratch;
        if (httpOpen[id]) {
            if (applyHttpPacket(p.payload, f.http.back()) == http::HttpUpdate::FlushReinsert) {
                httpOpen[id] = false;
                if (applyHttpPacket(p.payload, scratch) == http::HttpUpdate::Stored) {
                    f.http.push_back(scratch);
                    httpOpen[id] = true;
                }
            }
        } else if (applyHttpPacket(p.payload, scratch) == http::HttpUpdate::Stored) {
            f.http.push_back(scratch);
            httpOpen[id] = true;
        }
        // tls
        if (!tlsDone[id]) {
            const tls::TlsOptions options{tls::Ja4Mode::Spec, p.proto == 17};
            if (f.tls) {
                tlsDone[id] =
                    applyTlsPacket(p.payload, *f.tls, true, options) == tls::TlsUpdate::Done;
            } else {
                tls::TlsRecord rec;
                if (applyTlsPacket(p.payload, rec, false, options) == tls::TlsUpdate::Stored) {
                    f.tls = rec;
                    tls::Hello h;
                    tls::parseHello(p.payload, h);
                    f.tlsClientVersion =
                        h.supportedVersion != 0 ? h.supportedVersion : h.handshakeVersion;
                }
            }
        }
        // dns
        if (p.sport == 53 || p.dport == 53) {
            dns::DnsRecord rec;
            if (applyDnsPayload(p.payload, p.proto == 6, rec)) f.dns.emplace_back(p, rec);
        }
    }
    return out;
}

std::string idOf(const std::string& src, const std::string& sport, const std::string& dst,
                 const std::string& dport, const std::string& proto) {
    Packet p;
    p.src = canonicalIp(src);
    p.dst = canonicalIp(dst);
    p.sport = static_cast<std::uint16_t>(std::stoul(sport));
    p.dport = static_cast<std::uint16_t>(std::stoul(dport));
    p.proto = static_cast<std::uint8_t>(std::stoul(proto));
    return flowId(p);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "0x0303" or "771" -> 771
unsigned long number(const std::string& s) { return std::stoul(s, nullptr, 0); }

// ---- FlowTest -------------------------------------------------------------------------------

class FlowTestL7 : public ::testing::TestWithParam<std::string> {};

TEST_P(FlowTestL7, AnnotatedApplicationFieldsMatch) {
    const fs::path base = testdataDir() / "flowtest";
    const fs::path yml = base / "validation" / (GetParam() + ".yml");
    ROWPROBE_REQUIRE_FILE(yml);
    const YamlNode doc = parseYaml(readFile(yml));
    const fs::path pcap = base / "pcap" / doc.find("pcap")->scalar;
    ROWPROBE_REQUIRE_FILE(pcap);
    const auto flows = analyse(pcap);
    const YamlNode* annotated = doc.find("flows");
    ASSERT_NE(annotated, nullptr);
    int checked = 0;
    for (const YamlNode& a : annotated->list) {
        const auto v = [&](const char* k) -> std::string {
            const YamlNode* n = a.find(k);
            return n != nullptr && n->kind == YamlNode::Kind::Scalar ? n->scalar : std::string();
        };
        const std::string id =
            idOf(v("src_ip"), v("src_port"), v("dst_ip"), v("dst_port"), v("protocol"));
        const auto it = flows.find(id);
        ASSERT_NE(it, flows.end()) << "no packets for " << id;
        const FlowResult& f = it->second;
        SCOPED_TRACE(id);
        if (!v("http_host").empty() || !v("http_status_code").empty()) {
            ASSERT_FALSE(f.http.empty()) << "no HTTP record";
            const http::HttpRecord& r = f.http.front();
            if (!v("http_host").empty()) {
                EXPECT_EQ(std::string(r.host), v("http_host").substr(0, sizeof r.host - 1));
            }
            if (!v("http_url").empty()) {
                EXPECT_EQ(std::string(r.uri), v("http_url"));
            }
            if (!v("http_method").empty()) {
                EXPECT_EQ(std::string(r.method), v("http_method"));
            }
            if (!v("http_agent").empty()) {
                EXPECT_EQ(std::string(r.userAgent),
                          v("http_agent").substr(0, sizeof r.userAgent - 1));
            }
            if (!v("http_status_code").empty()) {
                EXPECT_EQ(r.status, number(v("http_status_code")));
            }
            if (!v("http_content_type").empty()) {
                EXPECT_EQ(std::string(r.contentType), v("http_content_type"));
            }
            ++checked;
        }
        if (!v("tls_sni").empty() || !v("tls_ja3").empty()) {
            ASSERT_TRUE(f.tls.has_value()) << "no ClientHello parsed";
            const tls::TlsRecord& r = *f.tls;
            if (!v("tls_sni").empty()) {
                EXPECT_EQ(std::string(r.sni), v("tls_sni"));
            }
            if (!v("tls_alpn").empty()) {
                EXPECT_EQ(std::string(r.alpn), v("tls_alpn"));
            }
            if (!v("tls_ja3").empty()) {
                EXPECT_EQ("0x" + hex(r.ja3.data(), r.ja3.size()), lower(v("tls_ja3")));
            }
            if (!v("tls_client_version").empty()) {
                EXPECT_EQ(f.tlsClientVersion, number(v("tls_client_version")));
            }
            if (!v("tls_server_version").empty()) {
                EXPECT_TRUE(r.serverHello);
                EXPECT_EQ(r.version, number(v("tls_server_version")));
            }
            if (!v("tls_cipher_suite").empty()) {
                EXPECT_EQ(r.cipher, number(v("tls_cipher_suite")));
            }
            ++checked;
        }
        if (!v("dns_id").empty()) {
            const YamlNode* fwd = a.find("_forward");
            const YamlNode* rev = a.find("_reverse");
            ASSERT_TRUE(fwd != nullptr && rev != nullptr);
            const auto sv = [](const YamlNode* n, const char* k) {
                const YamlNode* x = n->find(k);
                return x != nullptr ? x->scalar : std::string();
            };
            const dns::DnsRecord* query = nullptr;
            const dns::DnsRecord* response = nullptr;
            for (const auto& [pkt, rec] : f.dns) {
                (pkt.dport == 53 ? query : response) = &rec;
            }
            ASSERT_NE(query, nullptr) << "query not parsed";
            ASSERT_NE(response, nullptr) << "response not parsed";
            EXPECT_EQ(query->id, number(v("dns_id")));
            EXPECT_EQ(response->id, number(v("dns_id")));
            EXPECT_EQ(std::string(query->qname), sv(fwd, "dns_req_query_name"));
            EXPECT_EQ(query->qtype, number(sv(fwd, "dns_req_query_type")));
            EXPECT_EQ(query->qclass, number(sv(fwd, "dns_req_query_class")));
            EXPECT_EQ(response->rcode, number(sv(rev, "dns_resp_rcode")));
            const YamlNode* rrs = rev->find("dns_resp_rr");
            ASSERT_TRUE(rrs != nullptr && !rrs->list.empty());
            // ipfixprobe's fields describe the first answer.
            const YamlNode& first = rrs->list.front();
            EXPECT_EQ(response->answers, rrs->list.size());
            EXPECT_EQ(response->ttl, number(sv(&first, "ttl")));
            EXPECT_EQ(std::string(response->rdata, response->rdataLen), sv(&first, "data"));
            ++checked;
        }
    }
    EXPECT_GT(checked, 0) << "no application fields annotated";
}

INSTANTIATE_TEST_SUITE_P(L7, FlowTestL7,
                         ::testing::Values("http_get", "http_post", "http_404", "tls12", "tls13",
                                           "dns_a", "dns_aaaa", "dns_cname", "dns_tcp"),
                         [](const auto& param) { return param.param; });

// ---- nDPI 4.2 -------------------------------------------------------------------------------

struct NdpiFlow {
    std::string id;
    std::string label;  // "TLS.Google"
    std::string hostname;
    std::string ja3c;
};

// The flows of one ndpiReader .out file: "TCP a:p <-> b:q [proto: ..][..][Hostname/SNI: h]..."
std::vector<NdpiFlow> ndpiFlows(const fs::path& out) {
    static const std::regex line(
        R"(^\s*\d+\s+(TCP|UDP) \[?([0-9a-fA-F.:]+?)\]?:(\d+) <?-> \[?([0-9a-fA-F.:]+?)\]?:(\d+) \[proto: [0-9.]+/([^\]]+)\])");
    static const std::regex host(R"(\[Hostname/SNI: ([^\]]*)\])");
    static const std::regex ja3(R"(\[JA3C: ([0-9a-f]{32})\])");
    std::vector<NdpiFlow> flows;
    std::istringstream in(readFile(out));
    for (std::string l; std::getline(in, l);) {
        std::smatch m;
        if (!std::regex_search(l, m, line)) continue;
        NdpiFlow f;
        f.id = idOf(m[2], m[3], m[4], m[5], m[1] == "TCP" ? "6" : "17");
        f.label = m[6];
        if (std::regex_search(l, m, host)) f.hostname = m[1];
        if (std::regex_search(l, m, ja3)) f.ja3c = m[1];
        flows.push_back(f);
    }
    return flows;
}

class NdpiL7 : public ::testing::TestWithParam<std::string> {};

TEST_P(NdpiL7, SniJa3HostAndQueryNamesMatchNdpiReader) {
    const fs::path base = testdataDir() / "ndpi-4.2";
    const fs::path pcap = base / "pcap" / GetParam();
    const fs::path out = base / "result" / (GetParam() + ".out");
    ROWPROBE_REQUIRE_FILE(pcap);
    ROWPROBE_REQUIRE_FILE(out);
    const auto ours = analyse(pcap);
    int checked = 0;
    std::ostringstream problems;
    for (const NdpiFlow& n : ndpiFlows(out)) {
        const auto it = ours.find(n.id);
        if (it == ours.end()) {
            problems << "  no packets for " << n.id << '\n';
            continue;
        }
        const FlowResult& f = it->second;
        const bool tcp = n.id.back() == '6';
        if (n.label.rfind("TLS", 0) == 0 && tcp && (!n.ja3c.empty() || !n.hostname.empty())) {
            if (!f.tls) {
                problems << "  " << n.id << ": nDPI saw a ClientHello, we parsed none\n";
                continue;
            }
            if (!n.ja3c.empty() && hex(f.tls->ja3.data(), 16) != n.ja3c) {
                problems << "  " << n.id << ": JA3 " << hex(f.tls->ja3.data(), 16) << " != nDPI "
                         << n.ja3c << '\n';
            }
            if (std::string(f.tls->sni) != n.hostname) {
                problems << "  " << n.id << ": SNI '" << f.tls->sni << "' != nDPI '" << n.hostname
                         << "'\n";
            }
            ++checked;
        } else if (n.label.rfind("HTTP", 0) == 0 && !n.hostname.empty()) {
            std::string host = f.http.empty() ? std::string() : f.http.front().host;
            if (const auto colon = host.rfind(':');
                colon != std::string::npos && host.find(']', colon) == std::string::npos) {
                host.erase(colon);  // nDPI drops the Host header's port
            }
            if (f.http.empty() || host != n.hostname) {
                problems << "  " << n.id << ": HTTP host '"
                         << (f.http.empty() ? "(no request)" : f.http.front().host) << "' != nDPI '"
                         << n.hostname << "'\n";
            }
            ++checked;
        } else if (n.label.rfind("DNS", 0) == 0 && !n.hostname.empty()) {
            bool found = false;
            for (const auto& [pkt, rec] : f.dns) found |= std::string(rec.qname) == n.hostname;
            if (!found) problems << "  " << n.id << ": no DNS message for '" << n.hostname << "'\n";
            ++checked;
        }
    }
    EXPECT_GT(checked, 0) << "no TLS/HTTP/DNS flows with names in " << out;
    EXPECT_TRUE(problems.str().empty()) << problems.str();
}

// The same TLS comparison end to end: rowprobe -p tls, json output.
class NdpiTlsJson : public ::testing::TestWithParam<std::string> {};

TEST_P(NdpiTlsJson, TlsFieldsOfTheJsonOutputMatchNdpiReader) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path base = testdataDir() / "ndpi-4.2";
    const fs::path pcap = base / "pcap" / GetParam();
    const fs::path out = base / "result" / (GetParam() + ".out");
    ROWPROBE_REQUIRE_FILE(pcap);
    ROWPROBE_REQUIRE_FILE(out);
    std::vector<NdpiFlow> tlsFlows;
    for (const NdpiFlow& n : ndpiFlows(out)) {
        if (n.label.rfind("TLS", 0) == 0 && n.id.back() == '6' && !n.ja3c.empty()) {
            tlsFlows.push_back(n);
        }
    }
    ASSERT_FALSE(tlsFlows.empty()) << "no TLS flow with a JA3C in " << out;
    const ProbeRun run = runProbe(pcap, {"-p", "tls"});
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    std::map<std::string, const JsonObject*> byId;
    for (const JsonObject& f : run.flows) {
        if (f.count("tls_ja3") == 0) continue;
        byId[idOf(flowValue(f, "src_ip"), flowValue(f, "src_port"), flowValue(f, "dst_ip"),
                  flowValue(f, "dst_port"), flowValue(f, "proto"))] = &f;
    }
    for (const NdpiFlow& n : tlsFlows) {
        const auto it = byId.find(n.id);
        ASSERT_NE(it, byId.end()) << n.id << ": no record with tls fields";
        EXPECT_EQ(flowValue(*it->second, "tls_ja3"), n.ja3c) << n.id;
        EXPECT_EQ(flowValue(*it->second, "tls_sni"), n.hostname) << n.id;
    }
}

INSTANTIATE_TEST_SUITE_P(L7, NdpiL7,
                         ::testing::Values("encrypted_sni.pcap", "tls_alert.pcap",
                                           "googledns_android10.pcap", "http_ipv6.pcap",
                                           "1kxun.pcap", "exe_download.pcap",
                                           "http-lines-split.pcap", "dns_long_domainname.pcap",
                                           "dns-tunnel-iodine.pcap"),
                         [](const auto& param) {
                             std::string n = param.param.substr(0, param.param.find(".pcap"));
                             for (char& c : n) {
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             }
                             return n;
                         });

INSTANTIATE_TEST_SUITE_P(L7, NdpiTlsJson,
                         ::testing::Values("encrypted_sni.pcap", "tls_alert.pcap",
                                           "googledns_android10.pcap", "http_ipv6.pcap",
                                           "1kxun.pcap"),
                         [](const auto& param) {
                             return param.param.substr(0, param.param.find(".pcap"));
                         });

}  // namespace
}  // namespace rowprobe::test
