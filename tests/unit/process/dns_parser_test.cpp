// DNS message parser on hand-made messages: names with compression, RDATA text, loops,
// absurd lengths and truncation.
#include "process/common/dns/dns_parser.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace dns = rowprobe::dns;
using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, unsigned v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}
void put32(Bytes& b, std::uint32_t v) {
    put16(b, v >> 16);
    put16(b, v & 0xffff);
}

// "www.example.com" as labels (uncompressed, root-terminated).
void putName(Bytes& b, std::string_view name) {
    std::size_t pos = 0;
    while (!name.empty() && pos <= name.size()) {
        const std::size_t dot = name.find('.', pos);
        const auto label = name.substr(pos, dot == name.npos ? name.npos : dot - pos);
        b.push_back(static_cast<std::uint8_t>(label.size()));
        b.insert(b.end(), label.begin(), label.end());
        if (dot == name.npos) break;
        pos = dot + 1;
    }
    b.push_back(0);
}
void putPointer(Bytes& b, unsigned offset) { put16(b, 0xc000 | offset); }

Bytes header(unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar) {
    Bytes b;
    for (const unsigned v : {id, flags, qd, an, ns, ar}) put16(b, v);
    return b;
}

void putRrFixed(Bytes& b, unsigned type, unsigned cls, std::uint32_t ttl, const Bytes& rdata) {
    put16(b, type);
    put16(b, cls);
    put32(b, ttl);
    put16(b, static_cast<unsigned>(rdata.size()));
    b.insert(b.end(), rdata.begin(), rdata.end());
}

// A response to "name type?" with one answer of `type` whose owner points at the question.
Bytes response(std::string_view qname, unsigned type, const Bytes& rdata, std::uint32_t ttl = 300) {
    Bytes m = header(0x1234, 0x8180, 1, 1, 0, 0);
    putName(m, qname);
    put16(m, type);
    put16(m, 1);
    putPointer(m, 12);
    putRrFixed(m, type, 1, ttl, rdata);
    return m;
}

std::string rdataText(const Bytes& msg, bool expectOk = true) {
    dns::DnsHeader h;
    EXPECT_TRUE(dns::readHeader(msg, h));
    dns::DnsCursor c(msg, h);
    dns::DnsQuestion q;
    EXPECT_EQ(c.nextQuestion(q), dns::DnsStatus::Ok);
    dns::DnsRr rr;
    EXPECT_EQ(c.nextRr(rr), dns::DnsStatus::Ok);
    char buf[159];
    const auto t = dns::formatRdata(msg, rr, buf);
    EXPECT_EQ(t.ok, expectOk);
    return {buf, t.len};
}

std::string nameAt(const Bytes& msg, std::size_t off, bool* ok = nullptr) {
    char buf[256];
    const auto t = dns::decodeName(msg, off, buf);
    if (ok != nullptr) *ok = t.ok;
    return {buf, t.len};
}

}  // namespace

TEST(DnsParser, HeaderQuestionAndAnswerWalk) {
    Bytes m = response("kernel.org", dns::kTypeA, {198, 145, 20, 140}, 360);
    dns::DnsHeader h;
    ASSERT_TRUE(dns::readHeader(m, h));
    EXPECT_EQ(h.id, 0x1234);
    EXPECT_TRUE(h.isResponse());
    EXPECT_EQ(h.rcode(), 0);
    dns::DnsCursor c(m, h);
    dns::DnsQuestion q;
    ASSERT_EQ(c.nextQuestion(q), dns::DnsStatus::Ok);
    EXPECT_EQ(nameAt(m, q.nameOffset), "kernel.org");
    EXPECT_EQ(q.type, dns::kTypeA);
    EXPECT_EQ(q.qclass, 1);
    EXPECT_EQ(c.nextQuestion(q), dns::DnsStatus::End);
    dns::DnsRr rr;
    ASSERT_EQ(c.nextRr(rr), dns::DnsStatus::Ok);
    EXPECT_EQ(c.section(), 0);
    EXPECT_EQ(nameAt(m, rr.nameOffset), "kernel.org");  // through the pointer
    EXPECT_EQ(rr.ttl, 360u);
    EXPECT_EQ(rr.rdLength, 4);
    EXPECT_EQ(c.nextRr(rr), dns::DnsStatus::End);
    EXPECT_EQ(rdataText(m), "198.145.20.140");
}

TEST(DnsParser, TcpLengthPrefixMustMatch) {
    const Bytes m = response("a.example", dns::kTypeA, {1, 2, 3, 4});
    Bytes tcp;
    put16(tcp, static_cast<unsigned>(m.size()));
    tcp.insert(tcp.end(), m.begin(), m.end());
    EXPECT_EQ(dns::dnsMessage(tcp, true).size(), m.size());
    tcp[1] ^= 1;
    EXPECT_TRUE(dns::dnsMessage(tcp, true).empty());
    EXPECT_EQ(dns::dnsMessage(m, false).size(), m.size());
}

TEST(DnsParser, RdataTextPerType) {
    EXPECT_EQ(rdataText(response(
                  "g.com", dns::kTypeAaaa,
                  {0x2a, 0x00, 0x14, 0x50, 0x40, 0x0d, 0x08, 0x06, 0, 0, 0, 0, 0, 0, 0x20, 0x0e})),
              "2a00:1450:400d:806::200e");
    Bytes ns;
    putName(ns, "ns4.google.com");
    EXPECT_EQ(rdataText(response("google.com", dns::kTypeNs, ns)), "ns4.google.com");
    Bytes mx;
    put16(mx, 20);
    putName(mx, "alt1.aspmx.l.google.com");
    EXPECT_EQ(rdataText(response("google.com", dns::kTypeMx, mx)), "20 alt1.aspmx.l.google.com");
    const std::string spf = "v=spf1 include:google.com mx -all";
    Bytes txt{static_cast<std::uint8_t>(spf.size())};
    txt.insert(txt.end(), spf.begin(), spf.end());
    txt.push_back(3);
    txt.insert(txt.end(), {'a', 'b', 'c'});
    EXPECT_EQ(rdataText(response("youtube.com", dns::kTypeTxt, txt)), spf + " abc");
    Bytes soa;
    putName(soa, "ns1.example");
    putName(soa, "admin.example");
    for (std::uint32_t v : {2024010101U, 7200U, 3600U, 1209600U, 300U}) put32(soa, v);
    EXPECT_EQ(rdataText(response("example", dns::kTypeSoa, soa)),
              "ns1.example admin.example 2024010101 7200 3600 1209600 300");
    Bytes srv;
    for (unsigned v : {10U, 60U, 389U}) put16(srv, v);
    putName(srv, "dc1.example.com");
    EXPECT_EQ(rdataText(response("_ldap._tcp.example.com", dns::kTypeSrv, srv)),
              "ldap tcp example.com dc1.example.com 10 60 389");
    Bytes rrsig;
    put16(rrsig, 60);
    rrsig.insert(rrsig.end(), {8, 0});
    for (std::uint32_t v : {86400U, 1460869200U, 1460001600U}) put32(rrsig, v);
    put16(rrsig, 60615);
    putName(rrsig, "");
    rrsig.insert(rrsig.end(), 32, 0xaa);
    // outputs/dns, the root RRSIG record.
    EXPECT_EQ(rdataText(response("", dns::kTypeRrsig, rrsig)),
              "60 8 0 86400 1460869200 1460001600 60615 <key>");
    EXPECT_EQ(rdataText(response("x", dns::kTypeDs, {0xec, 0xc7, 8, 2, 0xde, 0xad})),
              "60615 8 2 <key>");
    EXPECT_EQ(rdataText(response("x", dns::kTypeDnskey, {1, 1, 3, 8, 0xaa})), "257 3 8 <key>");
    EXPECT_EQ(rdataText(response("x", 99, {1, 2})), "(not_impl)");
}

TEST(DnsParser, RdataIsTruncatedToTheBuffer) {
    std::string longName;
    for (int i = 0; i < 5; ++i) longName += std::string(60, static_cast<char>('a' + i)) + ".";
    longName += "com";
    Bytes cname;
    putName(cname, longName);
    const std::string text = rdataText(response("x.example", dns::kTypeCname, cname));
    EXPECT_EQ(text.size(), 159u);
    EXPECT_EQ(text, longName.substr(0, 159));
}

TEST(DnsParser, CompressionPointerLoopsTerminate) {
    // Question name is a pointer to itself.
    Bytes m = header(1, 0, 1, 0, 0, 0);
    putPointer(m, 12);
    put16(m, 1);
    put16(m, 1);
    bool ok = true;
    EXPECT_EQ(nameAt(m, 12, &ok), "");
    EXPECT_FALSE(ok);
    dns::DnsHeader h;
    ASSERT_TRUE(dns::readHeader(m, h));
    dns::DnsCursor c(m, h);
    dns::DnsQuestion q;
    EXPECT_EQ(c.nextQuestion(q), dns::DnsStatus::Malformed);

    // Two labels pointing at each other through a label: a -> b -> a ...
    Bytes loop = header(1, 0, 0, 0, 0, 0);
    loop.insert(loop.end(), {1, 'a'});
    putPointer(loop, 16);  // offset 14
    loop.insert(loop.end(), {1, 'b'});
    putPointer(loop, 12);  // offset 18
    EXPECT_EQ(loop.size(), 20u);
    nameAt(loop, 12, &ok);
    EXPECT_FALSE(ok);
}

TEST(DnsParser, AbsurdLabelsAndPointersAreMalformed) {
    bool ok = true;
    Bytes m = header(1, 0, 0, 0, 0, 0);
    m.push_back(64);  // label length > 63 (and the 0x40 extended label type)
    m.insert(m.end(), 64, 'x');
    m.push_back(0);
    nameAt(m, 12, &ok);
    EXPECT_FALSE(ok);

    Bytes far = header(1, 0, 0, 0, 0, 0);
    putPointer(far, 0x3fff);  // beyond the message
    nameAt(far, 12, &ok);
    EXPECT_FALSE(ok);

    Bytes runs = header(1, 0, 0, 0, 0, 0);
    runs.insert(runs.end(), {20, 'a', 'b'});  // label runs past the end
    nameAt(runs, 12, &ok);
    EXPECT_FALSE(ok);
    EXPECT_EQ(dns::skipName(runs, 12), 0u);

    // 200 one-byte labels: more than 128 steps.
    Bytes deep = header(1, 0, 0, 0, 0, 0);
    for (int i = 0; i < 200; ++i) deep.insert(deep.end(), {1, 'x'});
    deep.push_back(0);
    nameAt(deep, 12, &ok);
    EXPECT_FALSE(ok);
    EXPECT_EQ(dns::skipName(deep, 12), deep.size());  // skipping still works
}

TEST(DnsParser, CountsLargerThanTheMessageEndInTruncated) {
    Bytes m = header(7, 0x8180, 1, 65535, 65535, 65535);
    putName(m, "a.b");
    put16(m, 1);
    put16(m, 1);
    putPointer(m, 12);
    putRrFixed(m, 1, 1, 60, {1, 2, 3, 4});
    dns::DnsHeader h;
    ASSERT_TRUE(dns::readHeader(m, h));
    dns::DnsCursor c(m, h);
    dns::DnsQuestion q;
    ASSERT_EQ(c.nextQuestion(q), dns::DnsStatus::Ok);
    dns::DnsRr rr;
    ASSERT_EQ(c.nextRr(rr), dns::DnsStatus::Ok);
    EXPECT_EQ(c.nextRr(rr), dns::DnsStatus::Truncated);  // no name bytes left at all
    // An RDLENGTH beyond the end is Truncated.
    Bytes t = response("a.b", 1, {1, 2, 3, 4});
    t[t.size() - 5] = 0xff;
    ASSERT_TRUE(dns::readHeader(t, h));
    dns::DnsCursor c2(t, h);
    ASSERT_EQ(c2.nextQuestion(q), dns::DnsStatus::Ok);
    EXPECT_EQ(c2.nextRr(rr), dns::DnsStatus::Truncated);
}

TEST(DnsParser, EdnsOptRecordInAdditionalSection) {
    Bytes m = header(9, 0x0100, 1, 0, 0, 1);
    putName(m, "example.org");
    put16(m, 1);
    put16(m, 1);
    m.push_back(0);  // root owner
    putRrFixed(m, dns::kTypeOpt, 4096, 0x00008000, {});
    dns::DnsHeader h;
    ASSERT_TRUE(dns::readHeader(m, h));
    EXPECT_FALSE(h.isResponse());
    dns::DnsCursor c(m, h);
    dns::DnsQuestion q;
    ASSERT_EQ(c.nextQuestion(q), dns::DnsStatus::Ok);
    dns::DnsRr rr;
    ASSERT_EQ(c.nextRr(rr), dns::DnsStatus::Ok);
    EXPECT_EQ(c.section(), 2);
    EXPECT_EQ(rr.type, dns::kTypeOpt);
    EXPECT_EQ(rr.rclass, 4096);           // UDP payload size
    EXPECT_EQ(rr.ttl & 0x8000, 0x8000u);  // DO bit
}

TEST(DnsParser, ReverseNames) {
    dns::IpAddress a;
    ASSERT_TRUE(dns::reverseNameToAddress("4.4.8.8.in-addr.arpa", a));
    EXPECT_FALSE(a.v6);
    EXPECT_EQ(a.bytes[0], 8);
    EXPECT_EQ(a.bytes[1], 8);
    EXPECT_EQ(a.bytes[2], 4);
    EXPECT_EQ(a.bytes[3], 4);
    ASSERT_TRUE(dns::reverseNameToAddress("230.144.113.195.IN-ADDR.ARPA.", a));
    EXPECT_EQ(a.bytes[0], 195);
    EXPECT_FALSE(dns::reverseNameToAddress("1.2.3.in-addr.arpa", a));
    EXPECT_FALSE(dns::reverseNameToAddress("1.2.3.4.5.in-addr.arpa", a));
    EXPECT_FALSE(dns::reverseNameToAddress("1.2.3.256.in-addr.arpa", a));
    EXPECT_FALSE(dns::reverseNameToAddress("1.2.x.4.in-addr.arpa", a));
    EXPECT_FALSE(dns::reverseNameToAddress("example.com", a));
    // 2001:db8::567:89ab
    ASSERT_TRUE(dns::reverseNameToAddress(
        "b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa", a));
    EXPECT_TRUE(a.v6);
    const std::uint8_t expect[16] = {0x20, 0x01, 0x0d, 0xb8, 0,    0,    0,    0,
                                     0,    0,    0,    0,    0x05, 0x67, 0x89, 0xab};
    for (int i = 0; i < 16; ++i) EXPECT_EQ(a.bytes[i], expect[i]) << i;
    EXPECT_FALSE(dns::reverseNameToAddress("b.a.9.ip6.arpa", a));
}

TEST(DnsParser, EveryPrefixOfAResponseIsSafe) {
    Bytes mx;
    put16(mx, 5);
    putName(mx, "mail.example.com");
    const Bytes full = response("example.com", dns::kTypeMx, mx);
    for (std::size_t len = 0; len <= full.size(); ++len) {
        const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
        dns::DnsHeader h;
        if (!dns::readHeader(cut, h)) {
            EXPECT_LT(len, dns::kHeaderLen);
            continue;
        }
        dns::DnsCursor c(cut, h);
        dns::DnsQuestion q;
        const auto qs = c.nextQuestion(q);
        if (qs != dns::DnsStatus::Ok) continue;
        dns::DnsRr rr;
        if (c.nextRr(rr) != dns::DnsStatus::Ok) {
            EXPECT_LT(len, full.size());
            continue;
        }
        EXPECT_EQ(len, full.size());  // the answer fits only in the whole message
        char buf[160];
        EXPECT_TRUE(dns::formatRdata(cut, rr, buf).ok);
    }
}
