// ipfixprobe 5.7's reference outputs (../shared/testdata/ipfixprobe/outputs/{http,tls,dns,
// passivedns,idpcontent}) reproduced at the level of the plugins' own fields: the reference
// pcap's packets go through rowprobe's packet parser and each plugin's per-flow record code
// (process/<name>/*_record.hpp) with ipfixprobe's hook semantics — one record per DNS message,
// a new record on a second HTTP request, the TLS record created by the ClientHello — and every
// reference record must come out, keyed by its addresses and ports, with every plugin field
// equal. The end-to-end runs through the flow table and the outputs are in
// l7_reference_test.cpp; this test pins the parsing and the record semantics on their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "flow_truth.hpp"
#include "l7_truth.hpp"
#include "process/dns/dns_record.hpp"
#include "process/http/http_record.hpp"
#include "process/idpcontent/idpcontent_record.hpp"
#include "process/passivedns/passivedns_record.hpp"
#include "process/tls/tls_record.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

std::string keyOf(const std::string& src, const std::string& dst, unsigned long sport,
                  unsigned long dport) {
    return canonicalIp(src) + ':' + std::to_string(sport) + '>' + canonicalIp(dst) + ':' +
           std::to_string(dport);
}

// The reference records as "key | field=value ..." for the given UniRec fields.
std::multiset<std::string> referenceRecords(const fs::path& file,
                                            const std::vector<std::string>& fields) {
    auto rows = parseCsv(readFile(file));
    std::multiset<std::string> out;
    if (rows.empty()) return out;
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < rows.back().size(); ++i) {
        const std::string& h = rows.back()[i];
        col[h.substr(h.find(' ') + 1)] = i;
    }
    rows.pop_back();
    for (const auto& r : rows) {
        std::string s =
            keyOf(r.at(col.at("SRC_IP")), r.at(col.at("DST_IP")),
                  std::stoul(r.at(col.at("SRC_PORT"))), std::stoul(r.at(col.at("DST_PORT")))) +
            " |";
        for (const auto& f : fields) s += ' ' + f + '=' + r.at(col.at(f));
        out.insert(s);
    }
    return out;
}

struct Record {
    std::string key;
    std::vector<std::pair<std::string, std::string>> values;
    std::string text() const {
        std::string s = key + " |";
        for (const auto& [k, v] : values) s += ' ' + k + '=' + v;
        return s;
    }
};

void expectSame(const std::multiset<std::string>& want, const std::multiset<std::string>& got,
                std::size_t expectedCount) {
    std::vector<std::string> missing, extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                        std::back_inserter(extra));
    std::ostringstream report;
    for (const auto& m : missing) report << "  reference: " << m << '\n';
    for (const auto& e : extra) report << "  ours:      " << e << '\n';
    EXPECT_EQ(want.size(), expectedCount) << "reference records";
    EXPECT_EQ(got.size(), want.size()) << "records";
    EXPECT_TRUE(missing.empty() && extra.empty()) << report.str();
}

fs::path refDir() { return testdataDir() / "ipfixprobe"; }

#define REQUIRE_REFERENCE(pcap, output)                  \
    ROWPROBE_REQUIRE_FILE(refDir() / "inputs" / (pcap)); \
    ROWPROBE_REQUIRE_FILE(refDir() / "outputs" / (output))

TEST(L7ReferenceFields, TlsRecordsOfTlsPcap) {
    REQUIRE_REFERENCE("tls.pcap", "tls");
    struct Flow {
        std::string key;
        tls::TlsRecord rec;
        bool attached = false;
        bool done = false;
    };
    std::map<std::string, Flow> flows;
    const tls::TlsOptions options{tls::Ja4Mode::Ipfixprobe, false};
    for (const auto& p : readPackets(refDir() / "inputs" / "tls.pcap")) {
        auto [it, fresh] = flows.try_emplace(flowId(p));
        Flow& f = it->second;
        if (fresh) f.key = keyOf(p.src, p.dst, p.sport, p.dport);
        if (f.done) continue;
        if (f.attached) {
            f.done = applyTlsPacket(p.payload, f.rec, true, options) == tls::TlsUpdate::Done;
        } else {
            tls::TlsRecord scratch;
            if (applyTlsPacket(p.payload, scratch, false, options) == tls::TlsUpdate::Stored) {
                f.rec = scratch;
                f.attached = true;
            }
        }
    }
    std::multiset<std::string> got;
    for (const auto& [id, f] : flows) {
        if (!f.attached) continue;
        const auto& r = f.rec;
        got.insert(Record{f.key,
                          {{"TLS_VERSION", std::to_string(r.version)},
                           {"TLS_ALPN", r.alpn},
                           {"TLS_JA3", hex(r.ja3.data(), r.ja3.size())},
                           {"TLS_JA4", std::string(r.ja4.data(), r.ja4Len)},
                           {"TLS_SNI", r.sni},
                           {"TLS_EXT_LEN", list(r.extLengths.data(), r.extCount)},
                           {"TLS_EXT_TYPE", list(r.extTypes.data(), r.extCount)}}}
                       .text());
    }
    expectSame(referenceRecords(refDir() / "outputs" / "tls",
                                {"TLS_VERSION", "TLS_ALPN", "TLS_JA3", "TLS_JA4", "TLS_SNI",
                                 "TLS_EXT_LEN", "TLS_EXT_TYPE"}),
               got, 28);
}

TEST(L7ReferenceFields, HttpRecordsOfHttpPcap) {
    REQUIRE_REFERENCE("http.pcap", "http");
    struct Flow {
        std::string key;
        http::HttpRecord rec;
        bool attached = false;
    };
    std::map<std::string, Flow> flows;
    std::multiset<std::string> got;
    const auto emit = [&](const Flow& f) {
        const auto& r = f.rec;
        got.insert(Record{f.key,
                          {{"HTTP_REQUEST_AGENT", r.userAgent},
                           {"HTTP_REQUEST_HOST", r.host},
                           {"HTTP_REQUEST_METHOD", r.method},
                           {"HTTP_REQUEST_REFERER", r.referer},
                           {"HTTP_REQUEST_URL", r.uri},
                           {"HTTP_RESPONSE_STATUS_CODE", std::to_string(r.status)},
                           {"HTTP_RESPONSE_CONTENT_TYPE", r.contentType},
                           {"HTTP_RESPONSE_SERVER", r.server},
                           {"HTTP_RESPONSE_SET_COOKIE_NAMES", r.setCookieNames}}}
                       .text());
    };
    const auto tryAttach = [](Flow& f, const std::vector<std::uint8_t>& payload) {
        http::HttpRecord scratch;
        if (applyHttpPacket(payload, scratch) == http::HttpUpdate::Stored) {
            f.rec = scratch;
            f.attached = true;
        }
    };
    for (const auto& p : readPackets(refDir() / "inputs" / "http.pcap")) {
        auto [it, fresh] = flows.try_emplace(flowId(p));
        Flow& f = it->second;
        if (fresh) f.key = keyOf(p.src, p.dst, p.sport, p.dport);
        if (!f.attached) {
            tryAttach(f, p.payload);
        } else if (applyHttpPacket(p.payload, f.rec) == http::HttpUpdate::FlushReinsert) {
            emit(f);  // exported; the new flow keeps the orientation
            f.rec = http::HttpRecord{};
            f.attached = false;
            tryAttach(f, p.payload);
        }
    }
    for (const auto& [id, f] : flows) {
        if (f.attached) emit(f);
    }
    expectSame(referenceRecords(refDir() / "outputs" / "http",
                                {"HTTP_REQUEST_AGENT", "HTTP_REQUEST_HOST", "HTTP_REQUEST_METHOD",
                                 "HTTP_REQUEST_REFERER", "HTTP_REQUEST_URL",
                                 "HTTP_RESPONSE_STATUS_CODE", "HTTP_RESPONSE_CONTENT_TYPE",
                                 "HTTP_RESPONSE_SERVER", "HTTP_RESPONSE_SET_COOKIE_NAMES"}),
               got, 9);
}

TEST(L7ReferenceFields, DnsRecordsOfDnsPcap) {
    REQUIRE_REFERENCE("dns.pcap", "dns");
    std::multiset<std::string> got;
    for (const auto& p : readPackets(refDir() / "inputs" / "dns.pcap")) {
        if (p.sport != 53 && p.dport != 53) continue;
        dns::DnsRecord r;
        if (!applyDnsPayload(p.payload, p.proto == 6, r)) continue;
        // Every parsed message is flushed at once: its own record, src = its sender.
        got.insert(
            Record{keyOf(p.src, p.dst, p.sport, p.dport),
                   {{"DNS_ID", std::to_string(r.id)},
                    {"DNS_ANSWERS", std::to_string(r.answers)},
                    {"DNS_RCODE", std::to_string(r.rcode)},
                    {"DNS_NAME", r.qname},
                    {"DNS_QTYPE", std::to_string(r.qtype)},
                    {"DNS_CLASS", std::to_string(r.qclass)},
                    {"DNS_RR_TTL", std::to_string(r.ttl)},
                    {"DNS_RLENGTH", std::to_string(r.rdataLen)},
                    {"DNS_RDATA", hex(reinterpret_cast<const std::uint8_t*>(r.rdata), r.rdataLen)},
                    {"DNS_PSIZE", std::to_string(r.ednsSize)},
                    {"DNS_DO", std::to_string(r.dnssecOk)}}}
                .text());
    }
    expectSame(referenceRecords(
                   refDir() / "outputs" / "dns",
                   {"DNS_ID", "DNS_ANSWERS", "DNS_RCODE", "DNS_NAME", "DNS_QTYPE", "DNS_CLASS",
                    "DNS_RR_TTL", "DNS_RLENGTH", "DNS_RDATA", "DNS_PSIZE", "DNS_DO"}),
               got, 16);
}

TEST(L7ReferenceFields, PassiveDnsRecordsOfDnsPcap) {
    REQUIRE_REFERENCE("dns.pcap", "passivedns");
    std::map<std::string, std::string> initiator;  // flow id -> key oriented by its first packet
    std::multiset<std::string> got;
    for (const auto& p : readPackets(refDir() / "inputs" / "dns.pcap")) {
        const std::string key =
            initiator.try_emplace(flowId(p), keyOf(p.src, p.dst, p.sport, p.dport)).first->second;
        if (p.sport != 53) continue;
        dns::forEachPassiveDnsRecord(p.payload, p.proto == 6, [&](const dns::PassiveDnsRecord& r) {
            char ip[INET6_ADDRSTRLEN];
            inet_ntop(r.ip.v6 ? AF_INET6 : AF_INET, r.ip.bytes.data(), ip, sizeof ip);
            got.insert(Record{
                key,
                {{"DNS_ID", std::to_string(r.id)},
                 {"DNS_ATYPE", std::to_string(r.type)},
                 {"DNS_NAME", r.name},
                 {"DNS_RR_TTL", std::to_string(r.ttl)},
                 {"DNS_IP",
                  ip}}}.text());
        });
        initiator.erase(flowId(p));  // flushed: the next packet starts a new flow
    }
    expectSame(referenceRecords(refDir() / "outputs" / "passivedns",
                                {"DNS_ID", "DNS_ATYPE", "DNS_NAME", "DNS_RR_TTL", "DNS_IP"}),
               got, 6);
}

TEST(L7ReferenceFields, IdpContentOfIdpcontentPcap) {
    REQUIRE_REFERENCE("idpcontent.pcap", "idpcontent");
    struct Flow {
        std::string key;
        std::string src;
        std::uint16_t sport = 0;
        idpcontent::IdpContentRecord rec;
    };
    std::map<std::string, Flow> flows;
    for (const auto& p : readPackets(refDir() / "inputs" / "idpcontent.pcap")) {
        auto [it, fresh] = flows.try_emplace(flowId(p));
        Flow& f = it->second;
        if (fresh) {
            f.key = keyOf(p.src, p.dst, p.sport, p.dport);
            f.src = p.src;
            f.sport = p.sport;
        }
        f.rec.update(!(p.src == f.src && p.sport == f.sport), p.payload);
    }
    std::multiset<std::string> got;
    for (const auto& [id, f] : flows) {
        got.insert(Record{f.key,
                          {{"IDP_CONTENT", hex(f.rec.data[0].data(), f.rec.size[0])},
                           {"IDP_CONTENT_REV", hex(f.rec.data[1].data(), f.rec.size[1])}}}
                       .text());
    }
    expectSame(
        referenceRecords(refDir() / "outputs" / "idpcontent", {"IDP_CONTENT", "IDP_CONTENT_REV"}),
        got, 1);
}

}  // namespace
}  // namespace rowprobe::test
