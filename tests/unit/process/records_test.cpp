// Per-flow record semantics of http, tls, dns, passivedns and idpcontent (what one packet does
// to a flow's record), independent of the flow table.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "process/dns/dns_record.hpp"
#include "process/http/http_record.hpp"
#include "process/idpcontent/idpcontent_record.hpp"
#include "process/passivedns/passivedns_record.hpp"
#include "process/tls/tls_record.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

std::span<const std::uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void put16(Bytes& b, unsigned v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}

void putName(Bytes& b, std::string_view name) {
    std::size_t pos = 0;
    while (!name.empty()) {
        const std::size_t dot = name.find('.', pos);
        const auto label = name.substr(pos, dot == name.npos ? name.npos : dot - pos);
        b.push_back(static_cast<std::uint8_t>(label.size()));
        b.insert(b.end(), label.begin(), label.end());
        if (dot == name.npos) break;
        pos = dot + 1;
    }
    b.push_back(0);
}

struct Answer {
    unsigned type;
    std::uint32_t ttl;
    Bytes rdata;
    std::string owner;  // empty: pointer to the question
};

Bytes dnsResponse(std::string_view qname, unsigned qtype, const std::vector<Answer>& answers,
                  bool opt = false) {
    Bytes m;
    for (unsigned v :
         {0xbeefU, 0x8183U, 1U, static_cast<unsigned>(answers.size()), 0U, opt ? 1U : 0U}) {
        put16(m, v);
    }
    putName(m, qname);
    put16(m, qtype);
    put16(m, 1);
    for (const auto& a : answers) {
        if (a.owner.empty()) {
            put16(m, 0xc00c);
        } else {
            putName(m, a.owner);
        }
        put16(m, a.type);
        put16(m, 1);
        put16(m, a.ttl >> 16);
        put16(m, a.ttl & 0xffff);
        put16(m, static_cast<unsigned>(a.rdata.size()));
        m.insert(m.end(), a.rdata.begin(), a.rdata.end());
    }
    if (opt) {
        m.push_back(0);
        put16(m, 41);
        put16(m, 1232);
        put16(m, 0);
        put16(m, 0x8000);
        put16(m, 0);
    }
    return m;
}

Bytes tlsRecord(int type, const Bytes& afterRandom, const Bytes& extBlock) {
    Bytes body;
    put16(body, 0x0303);
    body.insert(body.end(), 32, 7);
    body.push_back(0);  // empty session id
    body.insert(body.end(), afterRandom.begin(), afterRandom.end());
    put16(body, static_cast<unsigned>(extBlock.size()));
    body.insert(body.end(), extBlock.begin(), extBlock.end());
    Bytes rec{22, 3, 3};
    put16(rec, static_cast<unsigned>(body.size() + 4));
    rec.push_back(static_cast<std::uint8_t>(type));
    rec.push_back(0);
    put16(rec, static_cast<unsigned>(body.size()));
    rec.insert(rec.end(), body.begin(), body.end());
    return rec;
}

Bytes clientHello(std::string_view host) {
    Bytes ciphers;
    put16(ciphers, 4);
    put16(ciphers, 0x1301);
    put16(ciphers, 0xc02f);
    ciphers.insert(ciphers.end(), {1, 0});
    Bytes exts;
    put16(exts, 0);  // server_name
    put16(exts, static_cast<unsigned>(host.size() + 5));
    put16(exts, static_cast<unsigned>(host.size() + 3));
    exts.push_back(0);
    put16(exts, static_cast<unsigned>(host.size()));
    exts.insert(exts.end(), host.begin(), host.end());
    put16(exts, 23);
    put16(exts, 0);
    return tlsRecord(1, ciphers, exts);
}

Bytes serverHello(std::string_view alpn, unsigned supportedVersion) {
    Bytes sel;
    put16(sel, 0x1301);
    sel.push_back(0);
    Bytes exts;
    if (!alpn.empty()) {
        put16(exts, 16);
        put16(exts, static_cast<unsigned>(alpn.size() + 3));
        put16(exts, static_cast<unsigned>(alpn.size() + 1));
        exts.push_back(static_cast<std::uint8_t>(alpn.size()));
        exts.insert(exts.end(), alpn.begin(), alpn.end());
    }
    if (supportedVersion != 0) {
        put16(exts, 43);
        put16(exts, 2);
        put16(exts, supportedVersion);
    }
    return tlsRecord(2, sel, exts);
}

}  // namespace

// ---- http ---------------------------------------------------------------------------------------

TEST(HttpRecord, RequestThenResponseThenSecondRequestFlushes) {
    using rowprobe::http::HttpUpdate;
    rowprobe::http::HttpRecord rec;
    EXPECT_EQ(applyHttpPacket(bytes("GET /a HTTP/1.1\r\nHost: h.example\r\n"
                                    "User-Agent: ua/1\r\n\r\n"),
                              rec),
              HttpUpdate::Stored);
    EXPECT_EQ(applyHttpPacket(bytes("HTTP/1.1 301 Moved\r\nServer: s\r\nContent-Type: text/x\r\n"
                                    "Set-Cookie: id=1\r\n\r\n"),
                              rec),
              HttpUpdate::Stored);
    EXPECT_EQ(applyHttpPacket(bytes("body bytes that are not HTTP"), rec), HttpUpdate::Ignored);
    EXPECT_STREQ(rec.method, "GET");
    EXPECT_STREQ(rec.uri, "/a");
    EXPECT_STREQ(rec.host, "h.example");
    EXPECT_STREQ(rec.userAgent, "ua/1");
    EXPECT_EQ(rec.status, 301);
    EXPECT_STREQ(rec.server, "s");
    EXPECT_STREQ(rec.contentType, "text/x");
    EXPECT_STREQ(rec.setCookieNames, "id");
    // Keep-alive: the next request belongs to a new flow record; this one is left untouched.
    EXPECT_EQ(applyHttpPacket(bytes("GET /b HTTP/1.1\r\nHost: other\r\n\r\n"), rec),
              HttpUpdate::FlushReinsert);
    EXPECT_STREQ(rec.uri, "/a");
    EXPECT_EQ(applyHttpPacket(bytes("HTTP/1.1 200 OK\r\n\r\n"), rec), HttpUpdate::FlushReinsert);
}

TEST(HttpRecord, FieldLimitsAreIpfixprobesBuffers) {
    rowprobe::http::HttpRecord rec;
    const std::string uri(300, 'u');
    const std::string host(100, 'h');
    const std::string req =
        "VERYLONGMETHODNAMEXYZ " + uri + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
    ASSERT_EQ(applyHttpPacket(bytes(req), rec), rowprobe::http::HttpUpdate::Stored);
    EXPECT_EQ(std::string(rec.method), "VERYLONGMETHODN");  // 15 + NUL
    EXPECT_EQ(std::string(rec.uri), uri.substr(0, 127));
    EXPECT_EQ(std::string(rec.host), host.substr(0, 63));
}

// Issue 21 item 5: a first request whose head is split across TCP segments keeps the fields
// read before the cut (ipfixprobe's record keeps them too); it does not count as seen.
TEST(HttpRecord, IncompleteFirstRequestKeepsWhatWasRead) {
    using rowprobe::http::HttpUpdate;
    rowprobe::http::HttpRecord rec;
    EXPECT_EQ(applyHttpPacket(bytes("GET /x HTTP/1.1\r\nHost: h.example\r\n"
                                    "User-Agent: ua/2\r\nCookie: a=lon"),
                              rec),
              HttpUpdate::Partial);
    EXPECT_STREQ(rec.method, "GET");
    EXPECT_STREQ(rec.uri, "/x");
    EXPECT_STREQ(rec.host, "h.example");
    EXPECT_STREQ(rec.userAgent, "ua/2");
    EXPECT_FALSE(rec.request);
    // The rest of the head is not HTTP on its own; the response is stored in the same record.
    EXPECT_EQ(applyHttpPacket(bytes("g-cookie-value\r\n\r\n"), rec), HttpUpdate::Ignored);
    EXPECT_EQ(applyHttpPacket(bytes("HTTP/1.1 404 Not Found\r\n\r\n"), rec), HttpUpdate::Stored);
    EXPECT_EQ(rec.status, 404);
    EXPECT_STREQ(rec.uri, "/x");
    // A cut inside the request line itself leaves nothing to keep.
    rowprobe::http::HttpRecord none;
    EXPECT_EQ(applyHttpPacket(bytes("GET /a-very-long-path-cut-he"), none), HttpUpdate::Ignored);
}

// ---- tls ----------------------------------------------------------------------------------------

TEST(TlsRecord, ClientHelloThenServerHello) {
    using rowprobe::tls::TlsUpdate;
    rowprobe::tls::TlsRecord rec;
    const rowprobe::tls::TlsOptions opts;
    EXPECT_EQ(applyTlsPacket(serverHello("h2", 0x0304), rec, false, opts), TlsUpdate::Ignored);
    EXPECT_FALSE(rec.serverHello);
    EXPECT_EQ(applyTlsPacket(clientHello("www.example.org"), rec, false, opts), TlsUpdate::Stored);
    EXPECT_STREQ(rec.sni, "www.example.org");
    EXPECT_EQ(rec.version, 0x0303);
    EXPECT_EQ(rec.extCount, 2);
    EXPECT_EQ(rec.extTypes[0], 0);
    EXPECT_EQ(rec.extLengths[0], 20);
    EXPECT_EQ(rec.ja4Len, rowprobe::tls::kJa4Len);
    EXPECT_EQ(std::string(rec.ja4.data(), 4), "t12d");
    EXPECT_EQ(applyTlsPacket(bytes("\x17\x03\x03\x00\x10 encrypted data"), rec, true, opts),
              TlsUpdate::Ignored);
    EXPECT_EQ(applyTlsPacket(serverHello("h2", 0x0304), rec, true, opts), TlsUpdate::Done);
    EXPECT_TRUE(rec.serverHello);
    EXPECT_STREQ(rec.alpn, "h2");
    EXPECT_EQ(rec.version, 0x0304);
    EXPECT_EQ(rec.cipher, 0x1301);
}

TEST(TlsRecord, ServerHelloWithoutSupportedVersionsKeepsTheClientVersion) {
    rowprobe::tls::TlsRecord rec;
    const rowprobe::tls::TlsOptions opts{rowprobe::tls::Ja4Mode::Ipfixprobe, true};
    ASSERT_EQ(applyTlsPacket(clientHello("a.b"), rec, false, opts),
              rowprobe::tls::TlsUpdate::Stored);
    EXPECT_EQ(rec.ja4[0], 'q');
    ASSERT_EQ(applyTlsPacket(serverHello("", 0), rec, true, opts), rowprobe::tls::TlsUpdate::Done);
    EXPECT_EQ(rec.version, 0x0303);
    EXPECT_STREQ(rec.alpn, "");
}

TEST(TlsRecord, OverlongSniIsNotStored) {
    rowprobe::tls::TlsRecord rec;
    ASSERT_EQ(applyTlsPacket(clientHello(std::string(254, 'x')), rec, false, {}),
              rowprobe::tls::TlsUpdate::Stored);
    EXPECT_STREQ(rec.sni, "");
    rowprobe::tls::TlsRecord fits;
    ASSERT_EQ(applyTlsPacket(clientHello(std::string(253, 'x')), fits, false, {}),
              rowprobe::tls::TlsUpdate::Stored);
    EXPECT_EQ(std::string(fits.sni).size(), 253u);
}

TEST(TlsRecord, RepeatedClientHelloIsNotParsedAgain) {
    rowprobe::tls::TlsRecord rec;
    ASSERT_EQ(applyTlsPacket(clientHello("first.example"), rec, false, {}),
              rowprobe::tls::TlsUpdate::Stored);
    EXPECT_EQ(applyTlsPacket(clientHello("second.example"), rec, true, {}),
              rowprobe::tls::TlsUpdate::Ignored);
    EXPECT_STREQ(rec.sni, "first.example");
}

// ---- dns ----------------------------------------------------------------------------------------

TEST(DnsRecord, ResponseFieldsAndEdns) {
    const Bytes m = dnsResponse(
        "kernel.org", 1, {{1, 360, {199, 204, 44, 194}, ""}, {1, 360, {1, 1, 1, 1}, ""}}, true);
    rowprobe::dns::DnsRecord rec;
    ASSERT_TRUE(applyDnsPayload(m, false, rec));
    EXPECT_EQ(rec.id, 0xbeef);
    EXPECT_EQ(rec.answers, 2);
    EXPECT_EQ(rec.rcode, 3);
    EXPECT_STREQ(rec.qname, "kernel.org");
    EXPECT_EQ(rec.qtype, 1);
    EXPECT_EQ(rec.qclass, 1);
    EXPECT_EQ(rec.ttl, 360u);
    EXPECT_EQ(std::string(rec.rdata, rec.rdataLen), "199.204.44.194");  // first answer only
    EXPECT_EQ(rec.ednsSize, 1232);
    EXPECT_EQ(rec.dnssecOk, 1);
}

TEST(DnsRecord, TruncatedSectionsStillCountAndBadNamesDoNot) {
    Bytes m = dnsResponse("a.example", 1, {{1, 60, {10, 0, 0, 1}, ""}});
    m.resize(m.size() - 2);  // the answer's RDATA is cut
    rowprobe::dns::DnsRecord rec;
    EXPECT_TRUE(applyDnsPayload(m, false, rec));
    EXPECT_STREQ(rec.qname, "a.example");
    EXPECT_EQ(rec.rdataLen, 0);

    Bytes loop = dnsResponse("x", 1, {});
    loop[12] = 0xc0;  // question name: pointer to itself
    loop[13] = 12;
    rowprobe::dns::DnsRecord rec2;
    EXPECT_FALSE(applyDnsPayload(loop, false, rec2));
    EXPECT_FALSE(applyDnsPayload(bytes("short"), false, rec2));
}

TEST(DnsRecord, QnameIsCutAt127Bytes) {
    std::string name;
    for (int i = 0; i < 4; ++i) name += std::string(50, static_cast<char>('a' + i)) + ".";
    name += "org";
    rowprobe::dns::DnsRecord rec;
    ASSERT_TRUE(applyDnsPayload(dnsResponse(name, 1, {}), false, rec));
    EXPECT_EQ(std::string(rec.qname), name.substr(0, 127));
}

// ---- passivedns ---------------------------------------------------------------------------------

TEST(PassiveDnsRecord, OneRecordPerAddressAnswer) {
    const Bytes m = dnsResponse("kernel.org", 1,
                                {{5, 30, {}, ""},  // CNAME with empty RDATA: not an address answer
                                 {1, 360, {149, 20, 4, 69}, ""},
                                 {28,
                                  32,
                                  {0x2a, 0, 0x14, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x0e},
                                  "v6.kernel.org"}});
    std::vector<rowprobe::dns::PassiveDnsRecord> got;
    EXPECT_EQ(
        rowprobe::dns::forEachPassiveDnsRecord(m, false, [&](const auto& r) { got.push_back(r); }),
        2u);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].type, 1);
    EXPECT_STREQ(got[0].name, "kernel.org");
    EXPECT_EQ(got[0].ttl, 360u);
    EXPECT_FALSE(got[0].ip.v6);
    EXPECT_EQ(got[0].ip.bytes[0], 149);
    EXPECT_EQ(got[0].id, 0xbeef);
    EXPECT_EQ(got[1].type, 28);
    EXPECT_STREQ(got[1].name, "v6.kernel.org");
    EXPECT_TRUE(got[1].ip.v6);
    EXPECT_EQ(got[1].ip.bytes[15], 0x0e);
}

TEST(PassiveDnsRecord, PtrAnswerGivesTargetNameAndOwnerAddress) {
    Bytes target;
    putName(target, "www.cesnet.cz");
    const Bytes m = dnsResponse("230.144.113.195.in-addr.arpa", 12, {{12, 21599, target, ""}});
    std::vector<rowprobe::dns::PassiveDnsRecord> got;
    rowprobe::dns::forEachPassiveDnsRecord(m, false, [&](const auto& r) { got.push_back(r); });
    ASSERT_EQ(got.size(), 1u);
    EXPECT_STREQ(got[0].name, "www.cesnet.cz");
    EXPECT_EQ(got[0].ip.bytes[0], 195);
    EXPECT_EQ(got[0].ip.bytes[3], 230);
    // A PTR whose owner is not a reverse name gives no record.
    const Bytes bad = dnsResponse("printer.local", 12, {{12, 60, target, ""}});
    EXPECT_EQ(rowprobe::dns::forEachPassiveDnsRecord(bad, false, [](const auto&) {}), 0u);
}

// ---- idpcontent ---------------------------------------------------------------------------------

TEST(IdpContentRecord, FirstNonEmptyPayloadPerDirectionCappedAt100) {
    rowprobe::idpcontent::IdpContentRecord rec;
    EXPECT_FALSE(rec.update(false, {}));  // SYN: no payload
    const std::string big(150, 'q');
    EXPECT_FALSE(rec.update(false, bytes(big)));
    EXPECT_FALSE(rec.update(false, bytes("later")));  // ignored
    EXPECT_EQ(rec.size[0], 100);
    EXPECT_EQ(rec.data[0][99], 'q');
    EXPECT_TRUE(rec.update(true, bytes("HTTP/1.1 403")));
    EXPECT_EQ(rec.size[1], 12);
    EXPECT_EQ(std::string(rec.data[1].begin(), rec.data[1].begin() + 12), "HTTP/1.1 403");
}
