// Packet parser: hand-built frames layer by layer, canonical keys, byte accounting, every
// truncation point of full frames and a seeded garbage loop (meant to run under ASan/UBSan:
// every frame is copied into a heap buffer of exactly its captured length).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe {
namespace {

using Bytes = std::vector<std::uint8_t>;
using Addr = std::array<std::uint8_t, 16>;

template <class... Parts>
Bytes cat(const Parts&... parts) {
    Bytes out;
    (out.insert(out.end(), parts.begin(), parts.end()), ...);
    return out;
}

void put16(Bytes& b, std::uint16_t v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}

void put32(Bytes& b, std::uint32_t v) {
    put16(b, static_cast<std::uint16_t>(v >> 16));
    put16(b, static_cast<std::uint16_t>(v));
}

void set16(Bytes& b, std::size_t at, std::uint16_t v) {
    b[at] = static_cast<std::uint8_t>(v >> 8);
    b[at + 1] = static_cast<std::uint8_t>(v);
}

std::array<std::uint8_t, 4> ip4(const char* text) {
    std::array<std::uint8_t, 4> a{};
    EXPECT_EQ(inet_pton(AF_INET, text, a.data()), 1) << text;
    return a;
}

Addr ip6(const char* text) {
    Addr a{};
    EXPECT_EQ(inet_pton(AF_INET6, text, a.data()), 1) << text;
    return a;
}

Addr mapped(const char* text) {
    Addr a{};
    a[10] = 0xFF;
    a[11] = 0xFF;
    const auto v4 = ip4(text);
    std::memcpy(a.data() + 12, v4.data(), 4);
    return a;
}

constexpr std::array<std::uint8_t, 6> kDstMac{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
constexpr std::array<std::uint8_t, 6> kSrcMac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

Bytes eth(std::uint16_t type) {
    Bytes b(12);
    std::memcpy(b.data(), kDstMac.data(), 6);
    std::memcpy(b.data() + 6, kSrcMac.data(), 6);
    put16(b, type);
    return b;
}

Bytes vlanTag(std::uint16_t tci, std::uint16_t next) {
    Bytes b;
    put16(b, tci);
    put16(b, next);
    return b;
}

Bytes mplsLabel(std::uint32_t label, bool bottom) {
    Bytes b;
    put32(b, label << 12 | (bottom ? 0x100U : 0U) | 64U);
    return b;
}

Bytes pppoeSession(std::uint16_t pppProto, std::size_t innerLen) {
    Bytes b{0x11, 0x00};  // version 1, type 1, code 0 (session data)
    put16(b, 0x1234);     // session id
    put16(b, static_cast<std::uint16_t>(innerLen + 2));
    put16(b, pppProto);
    return b;
}

Bytes payload(std::size_t n) { return Bytes(n, 0xAB); }

Bytes tcp(std::uint16_t sport, std::uint16_t dport, std::uint8_t flags, std::uint16_t window = 1024,
          const Bytes& data = {}, unsigned optionWords = 0) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put32(b, 1000);  // seq
    put32(b, 0);     // ack
    b.push_back(static_cast<std::uint8_t>((5 + optionWords) << 4));
    b.push_back(flags);
    put16(b, window);
    put32(b, 0);                               // checksum, urgent pointer
    b.insert(b.end(), optionWords * 4, 0x01);  // NOPs
    return cat(b, data);
}

Bytes udp(std::uint16_t sport, std::uint16_t dport, const Bytes& data = {}) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put16(b, static_cast<std::uint16_t>(8 + data.size()));
    put16(b, 0);
    return cat(b, data);
}

Bytes sctp(std::uint16_t sport, std::uint16_t dport) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put32(b, 0xCAFE);  // verification tag
    put32(b, 0);       // checksum
    return b;
}

Bytes icmp(std::uint8_t type, std::uint8_t code, const Bytes& data = {}) {
    Bytes b{type, code, 0, 0, 0x12, 0x34, 0x00, 0x01};
    return cat(b, data);
}

struct Ip4 {
    const char* src = "10.0.0.1";
    const char* dst = "10.0.0.2";
    std::uint8_t proto = 6;
    std::uint8_t ttl = 64;
    std::uint8_t tos = 0;
    std::uint16_t id = 0x4242;
    std::uint16_t fragOffset = 0;  // 8-byte units
    bool moreFragments = false;
    unsigned optionWords = 0;
};

Bytes ipv4(const Ip4& h, const Bytes& l4) {
    Bytes b;
    b.push_back(static_cast<std::uint8_t>(0x40 | (5 + h.optionWords)));
    b.push_back(h.tos);
    put16(b, static_cast<std::uint16_t>(20 + h.optionWords * 4 + l4.size()));
    put16(b, h.id);
    put16(b, static_cast<std::uint16_t>((h.moreFragments ? 0x2000 : 0) | h.fragOffset));
    b.push_back(h.ttl);
    b.push_back(h.proto);
    put16(b, 0);
    const auto s = ip4(h.src);
    const auto d = ip4(h.dst);
    b.insert(b.end(), s.begin(), s.end());
    b.insert(b.end(), d.begin(), d.end());
    b.insert(b.end(), h.optionWords * 4, 0x01);  // NOP options
    return cat(b, l4);
}

struct Ip6 {
    const char* src = "2001:db8::1";
    const char* dst = "2001:db8::2";
    std::uint8_t next = 6;
    std::uint8_t hopLimit = 64;
    std::uint8_t trafficClass = 0;
};

Bytes ipv6(const Ip6& h, const Bytes& rest) {
    Bytes b;
    put32(b, 6U << 28 | std::uint32_t{h.trafficClass} << 20 | 0x12345);
    put16(b, static_cast<std::uint16_t>(rest.size()));
    b.push_back(h.next);
    b.push_back(h.hopLimit);
    const Addr s = ip6(h.src);
    const Addr d = ip6(h.dst);
    b.insert(b.end(), s.begin(), s.end());
    b.insert(b.end(), d.begin(), d.end());
    return cat(b, rest);
}

/// Hop-by-hop, routing or destination options header of (lenUnits + 1) * 8 bytes.
Bytes ext6(std::uint8_t next, std::uint8_t lenUnits = 0) {
    Bytes b((lenUnits + 1U) * 8U, 0x00);  // Pad1 / PadN (built at full size: GCC 12 warns
    b[0] = next;                          // wrongly about resize() after a 2-byte init list)
    b[1] = lenUnits;
    if (b.size() >= 4) b[2] = 0x01, b[3] = static_cast<std::uint8_t>(b.size() - 4);  // PadN
    return b;
}

Bytes frag6(std::uint8_t next, std::uint16_t offset, bool more, std::uint32_t id) {
    Bytes b{next, 0};
    put16(b, static_cast<std::uint16_t>(offset << 3 | (more ? 1 : 0)));
    put32(b, id);
    return b;
}

Bytes nullHeader(std::uint32_t family) {
    Bytes b(4);
    std::memcpy(b.data(), &family, 4);  // host order, as BSD loopback writes it
    return b;
}

Bytes sllHeader(std::uint16_t protocol) {
    Bytes b;
    put16(b, 0);  // packet type: to us
    put16(b, 1);  // ARPHRD_ETHER
    put16(b, 6);
    b.resize(14);
    std::memcpy(b.data() + 6, kSrcMac.data(), 6);
    put16(b, protocol);
    return b;
}

/// One parse with the frame copied into a heap buffer of exactly `capLen` bytes.
struct Parsed {
    std::unique_ptr<std::uint8_t[]> buffer;
    bool ok = false;
    ParsedPacket p;
    AnomalyCounters anomalies;

    std::uint64_t total() const {
        std::uint64_t n = 0;
        for (const auto c : anomalies.count) n += c;
        return n;
    }
};

Parsed parse(const Bytes& frame, LinkType link = LinkType::Ethernet, ParserConfig config = {},
             std::size_t capLen = SIZE_MAX) {
    Parsed r;
    const std::size_t n = std::min(capLen, frame.size());
    r.buffer = std::make_unique<std::uint8_t[]>(n);
    if (n != 0) std::memcpy(r.buffer.get(), frame.data(), n);
    const RawPacket raw{r.buffer.get(), static_cast<std::uint32_t>(n),
                        static_cast<std::uint32_t>(frame.size()), 123456789};
    r.ok = parsePacket(raw, link, config, r.p, r.anomalies);
    return r;
}

/// The properties every successful parse must have, whatever the input.
void expectWellFormed(const Parsed& r) {
    const ParsedPacket& p = r.p;
    ASSERT_TRUE(p.key.ipVersion == 4 || p.key.ipVersion == 6);
    EXPECT_LE(p.l3Offset, p.l4Offset);
    EXPECT_LE(p.l4Offset, p.payloadOffset);
    EXPECT_LE(std::size_t{p.payloadOffset} + p.payloadLen, p.capLen);
    const int c = std::memcmp(p.key.addrA.data(), p.key.addrB.data(), 16);
    EXPECT_TRUE(c < 0 || (c == 0 && p.key.portA <= p.key.portB));
    // A used packet counts only anomalies that are not skip reasons: a cut-off transport
    // header and an IP length replaced by the wire's (frames cut short here lie about it).
    EXPECT_LE(r.anomalies[Anomaly::TruncatedL4], 1U);
    EXPECT_LE(r.anomalies[Anomaly::IpLengthClamped], 1U);
    EXPECT_EQ(r.total(), r.anomalies[Anomaly::TruncatedL4] + r.anomalies[Anomaly::IpLengthClamped]);
}

// --- Ethernet / IPv4 / transport ------------------------------------------------------------

TEST(ParserIpv4, TcpFrameYieldsPortsFlagsWindowTtlTosMacsAndPayload) {
    const Bytes frame =
        cat(eth(0x0800), ipv4({.src = "10.0.0.1", .dst = "10.0.0.2", .ttl = 57, .tos = 0x28},
                              tcp(40000, 80, 0x18, 29200, payload(5))));
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    const ParsedPacket& p = r.p;
    EXPECT_EQ(p.key.ipVersion, 4);
    EXPECT_EQ(p.key.proto, 6);
    EXPECT_EQ(p.srcAddr(), mapped("10.0.0.1"));
    EXPECT_EQ(p.dstAddr(), mapped("10.0.0.2"));
    EXPECT_EQ(p.srcPort(), 40000);
    EXPECT_EQ(p.dstPort(), 80);
    EXPECT_TRUE(p.fromA);
    EXPECT_TRUE(p.hasPorts);
    EXPECT_EQ(p.tcpFlags, 0x18);
    EXPECT_EQ(p.tcpWindow, 29200);
    EXPECT_EQ(p.ttl, 57);
    EXPECT_EQ(p.tos, 0x28);
    EXPECT_EQ(p.srcMac, kSrcMac);
    EXPECT_EQ(p.dstMac, kDstMac);
    EXPECT_EQ(p.ipLen, 45U);
    EXPECT_EQ(p.l3Offset, 14);
    EXPECT_EQ(p.l4Offset, 34);
    EXPECT_EQ(p.payloadOffset, 54);
    EXPECT_EQ(p.payloadLen, 5);
    EXPECT_EQ(p.wireLen, frame.size());
    EXPECT_EQ(p.capLen, frame.size());
    EXPECT_EQ(p.ts, 123456789U);
    EXPECT_FALSE(p.frag.isFragment);
    EXPECT_EQ(p.icmpTypeCode, 0);
    expectWellFormed(r);
}

TEST(ParserIpv4, TcpFlagsByteKeepsEceAndCwr) {
    const Parsed r = parse(cat(eth(0x0800), ipv4({}, tcp(1, 2, 0xC2))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.tcpFlags, 0xC2);  // CWR | ECE | SYN
}

TEST(ParserIpv4, TcpOptionsMovePayloadStart) {
    const Parsed r = parse(cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x10, 100, payload(7), 3))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.payloadOffset, 34 + 32);
    EXPECT_EQ(r.p.payloadLen, 7);
}

TEST(ParserIpv4, HeaderOptionsShiftTheTransportHeader) {
    const Parsed r =
        parse(cat(eth(0x0800), ipv4({.proto = 17, .optionWords = 2}, udp(5353, 53, payload(3)))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.l4Offset, 14 + 28);
    EXPECT_EQ(r.p.srcPort(), 5353);
    EXPECT_EQ(r.p.dstPort(), 53);
    EXPECT_EQ(r.p.ipLen, 28U + 8 + 3);
    EXPECT_EQ(r.p.payloadOffset, 14 + 28 + 8);
    EXPECT_EQ(r.p.payloadLen, 3);
}

TEST(ParserIpv4, UdpPortsAndPayload) {
    const Parsed r = parse(cat(eth(0x0800), ipv4({.proto = 17}, udp(12345, 53, payload(30)))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.p.srcPort(), 12345);
    EXPECT_EQ(r.p.dstPort(), 53);
    EXPECT_EQ(r.p.payloadOffset, 42);
    EXPECT_EQ(r.p.payloadLen, 30);
    EXPECT_EQ(r.p.tcpFlags, 0);
}

TEST(ParserIpv4, SctpPorts) {
    const Parsed r = parse(cat(eth(0x0800), ipv4({.proto = 132}, sctp(2905, 2906))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 132);
    EXPECT_EQ(r.p.srcPort(), 2905);
    EXPECT_EQ(r.p.dstPort(), 2906);
    EXPECT_TRUE(r.p.hasPorts);
}

TEST(ParserIcmp, TypeAndCodeRecordedWhilePortsStayZero) {
    const Parsed v4 = parse(cat(eth(0x0800), ipv4({.proto = 1}, icmp(3, 1, payload(28)))));
    ASSERT_TRUE(v4.ok);
    EXPECT_EQ(v4.p.key.proto, 1);
    EXPECT_EQ(v4.p.icmpTypeCode, 0x0301);
    EXPECT_EQ(v4.p.key.portA, 0);
    EXPECT_EQ(v4.p.key.portB, 0);
    EXPECT_EQ(v4.p.payloadLen, 28);

    const Parsed v6 = parse(cat(eth(0x86DD), ipv6({.next = 58}, icmp(128, 0, payload(8)))));
    ASSERT_TRUE(v6.ok);
    EXPECT_EQ(v6.p.key.proto, 58);
    EXPECT_EQ(v6.p.icmpTypeCode, 128 << 8);
    EXPECT_EQ(v6.p.key.portA, 0);
    EXPECT_EQ(v6.p.key.portB, 0);
}

TEST(ParserIcmp, EchoRequestAndReplyShareOneKey) {
    const Parsed request = parse(
        cat(eth(0x0800), ipv4({.src = "10.0.0.1", .dst = "10.0.0.2", .proto = 1}, icmp(8, 0))));
    const Parsed reply = parse(
        cat(eth(0x0800), ipv4({.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 1}, icmp(0, 0))));
    ASSERT_TRUE(request.ok && reply.ok);
    EXPECT_EQ(request.p.key, reply.p.key);
    EXPECT_NE(request.p.fromA, reply.p.fromA);
}

TEST(ParserIpv4, OtherProtocolGivesKeyWithoutPorts) {
    const Parsed r = parse(cat(eth(0x0800), ipv4({.proto = 47}, payload(24))));  // GRE
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    EXPECT_EQ(r.p.key.proto, 47);
    EXPECT_EQ(r.p.key.portA, 0);
    EXPECT_EQ(r.p.key.portB, 0);
    EXPECT_EQ(r.p.payloadOffset, 34);
    EXPECT_EQ(r.p.payloadLen, 24);
}

TEST(ParserIpv4, HeaderLengthBelowFiveWordsIsBadHeader) {
    Bytes frame = cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x02)));
    frame[14] = 0x44;
    const Parsed r = parse(frame);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::BadIpHeader], 1U);
}

TEST(ParserIpv4, TotalLengthBelowHeaderLengthIsBadHeader) {
    Bytes frame = cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x02)));
    set16(frame, 16, 19);
    const Parsed r = parse(frame);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::BadIpHeader], 1U);
}

TEST(ParserIpv4, VersionSixUnderIpv4EtherTypeIsBadVersion) {
    Bytes frame = cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x02)));
    frame[14] = 0x65;
    const Parsed r = parse(frame);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::BadIpVersion], 1U);
}

TEST(ParserIpv4, ZeroTotalLengthFromSegmentationOffloadFallsBackToCapture) {
    Bytes frame = cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x10, 100, payload(100))));
    set16(frame, 16, 0);
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 140U);
    EXPECT_EQ(r.p.payloadLen, 100);
}

// --- bytes ----------------------------------------------------------------------------------

TEST(ParserBytes, EthernetPaddingIsNeitherIpBytesNorPayload) {
    Bytes frame = cat(eth(0x0800), ipv4({.proto = 17}, udp(1000, 2000, payload(2))));
    ASSERT_EQ(frame.size(), 44U);
    frame.resize(60, 0x00);  // minimum Ethernet frame
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 30U);
    EXPECT_EQ(r.p.payloadOffset, 42);
    EXPECT_EQ(r.p.payloadLen, 2);
    EXPECT_EQ(r.p.wireLen, 60U);
}

TEST(ParserBytes, SnapLengthCutCountsIpTotalLengthButParsesOnlyCapture) {
    const Bytes frame = cat(eth(0x0800), ipv4({}, tcp(443, 50000, 0x10, 100, payload(1400))));
    const Parsed r = parse(frame, LinkType::Ethernet, {}, 96);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    EXPECT_EQ(r.p.ipLen, 1440U);
    EXPECT_EQ(r.p.capLen, 96U);
    EXPECT_EQ(r.p.wireLen, frame.size());
    EXPECT_EQ(r.p.payloadOffset, 54);
    EXPECT_EQ(r.p.payloadLen, 96 - 54);
}

TEST(ParserBytes, Ipv6LengthIsPayloadLengthPlusFortyWithPaddingIgnored) {
    Bytes frame = cat(eth(0x86DD), ipv6({.next = 17}, udp(1, 2)));
    frame.resize(frame.size() + 10, 0x00);
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 48U);
    EXPECT_EQ(r.p.payloadLen, 0);
}

// --- IPv6 -----------------------------------------------------------------------------------

TEST(ParserIpv6, TcpFrameYieldsAddressesHopLimitAndTrafficClass) {
    const Parsed r = parse(cat(
        eth(0x86DD), ipv6({.hopLimit = 33, .trafficClass = 0xB8}, tcp(50000, 443, 0x02, 64240))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.ipVersion, 6);
    EXPECT_EQ(r.p.srcAddr(), ip6("2001:db8::1"));
    EXPECT_EQ(r.p.dstAddr(), ip6("2001:db8::2"));
    EXPECT_EQ(r.p.srcPort(), 50000);
    EXPECT_EQ(r.p.dstPort(), 443);
    EXPECT_EQ(r.p.ttl, 33);
    EXPECT_EQ(r.p.tos, 0xB8);
    EXPECT_EQ(r.p.ipLen, 60U);
    EXPECT_EQ(r.p.l4Offset, 54);
}

TEST(ParserIpv6, HopByHopDestinationOptionsAndFirstFragmentAreWalkedToTcp) {
    const Bytes l4 = tcp(1234, 80, 0x02, 1000, payload(4));
    const Bytes frame =
        cat(eth(0x86DD),
            ipv6({.next = 0}, cat(ext6(60), ext6(44, 1), frag6(6, 0, true, 0xDEADBEEF), l4)));
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    EXPECT_EQ(r.p.key.proto, 6);
    EXPECT_EQ(r.p.l4Offset, 14 + 40 + 8 + 16 + 8);
    EXPECT_EQ(r.p.srcPort(), 1234);
    EXPECT_EQ(r.p.dstPort(), 80);
    EXPECT_TRUE(r.p.hasPorts);
    EXPECT_TRUE(r.p.frag.isFragment);
    EXPECT_TRUE(r.p.frag.moreFragments);
    EXPECT_EQ(r.p.frag.offset, 0);
    EXPECT_EQ(r.p.frag.id, 0xDEADBEEFU);
    EXPECT_EQ(r.p.ipLen, 40U + 32 + 24);
    EXPECT_EQ(r.p.payloadLen, 4);
}

TEST(ParserIpv6, RoutingAndAuthenticationHeadersAreWalked) {
    Bytes ah{17, 4, 0, 0};  // (4 + 2) * 4 = 24 bytes
    ah.resize(24, 0x00);
    const Parsed r = parse(cat(eth(0x86DD), ipv6({.next = 43}, cat(ext6(51), ah, udp(7, 9)))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.p.l4Offset, 14 + 40 + 8 + 24);
    EXPECT_EQ(r.p.srcPort(), 7);
}

TEST(ParserIpv6, EspEndsTheWalkWithoutPorts) {
    const Parsed r = parse(cat(eth(0x86DD), ipv6({.next = 60}, cat(ext6(50), payload(40)))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    EXPECT_EQ(r.p.key.proto, 50);
    EXPECT_EQ(r.p.key.portA, 0);
    EXPECT_EQ(r.p.key.portB, 0);
    EXPECT_EQ(r.p.payloadOffset, 62);
    EXPECT_EQ(r.p.payloadLen, 40);
}

TEST(ParserIpv6, NoNextHeaderEndsTheWalk) {
    const Parsed r = parse(cat(eth(0x86DD), ipv6({.next = 59}, {})));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 59);
    EXPECT_EQ(r.p.ipLen, 40U);
}

TEST(ParserIpv6, ExtensionHeaderBeyondPayloadLengthIsBadHeader) {
    Bytes frame = cat(eth(0x86DD), ipv6({.next = 0}, cat(ext6(6, 3), tcp(1, 2, 0x02))));
    set16(frame, 18, 16);  // payload length shorter than the 32-byte hop-by-hop header
    const Parsed r = parse(frame);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::BadIpHeader], 1U);
}

TEST(ParserIpv6, ExtensionChainDeeperThanEightIsTooManyHeaders) {
    Bytes chain;
    for (int i = 0; i < 9; ++i) chain = cat(chain, ext6(60));
    chain = cat(chain, udp(1, 2));
    const Parsed r = parse(cat(eth(0x86DD), ipv6({.next = 60}, chain)));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::TooManyHeaders], 1U);

    Bytes eight;
    for (int i = 0; i < 7; ++i) eight = cat(eight, ext6(60));
    eight = cat(eight, ext6(17), udp(1, 2));
    EXPECT_TRUE(parse(cat(eth(0x86DD), ipv6({.next = 60}, eight))).ok);
}

// --- fragments ------------------------------------------------------------------------------

TEST(ParserFragments, Ipv4FirstFragmentKeepsPortsAndMarksMoreFragments) {
    const Parsed r = parse(cat(eth(0x0800), ipv4({.proto = 17, .id = 777, .moreFragments = true},
                                                 udp(5000, 6000, payload(64)))));
    ASSERT_TRUE(r.ok);
    EXPECT_TRUE(r.p.hasPorts);
    EXPECT_EQ(r.p.srcPort(), 5000);
    EXPECT_EQ(r.p.dstPort(), 6000);
    EXPECT_TRUE(r.p.frag.isFragment);
    EXPECT_TRUE(r.p.frag.moreFragments);
    EXPECT_EQ(r.p.frag.offset, 0);
    EXPECT_EQ(r.p.frag.id, 777U);
}

TEST(ParserFragments, Ipv4NonFirstFragmentHasNoPortsAndIsNotParsedAsTransport) {
    // The fragment data happens to look like a UDP header: it must not become ports.
    const Parsed r = parse(cat(eth(0x0800), ipv4({.proto = 17, .id = 777, .fragOffset = 9},
                                                 udp(5000, 6000, payload(16)))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    EXPECT_FALSE(r.p.hasPorts);
    EXPECT_EQ(r.p.key.portA, 0);
    EXPECT_EQ(r.p.key.portB, 0);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_TRUE(r.p.frag.isFragment);
    EXPECT_FALSE(r.p.frag.moreFragments);
    EXPECT_EQ(r.p.frag.offset, 9);
    EXPECT_EQ(r.p.frag.id, 777U);
    EXPECT_EQ(r.p.payloadOffset, 34);
    EXPECT_EQ(r.p.payloadLen, 24);
    EXPECT_EQ(r.p.ipLen, 44U);
}

TEST(ParserFragments, Ipv6FirstFragmentKeepsPorts) {
    const Parsed r = parse(cat(
        eth(0x86DD), ipv6({.next = 44}, cat(frag6(17, 0, true, 99), udp(53, 5353, payload(8))))));
    ASSERT_TRUE(r.ok);
    EXPECT_TRUE(r.p.hasPorts);
    EXPECT_EQ(r.p.srcPort(), 53);
    EXPECT_TRUE(r.p.frag.isFragment);
    EXPECT_TRUE(r.p.frag.moreFragments);
    EXPECT_EQ(r.p.frag.id, 99U);
}

TEST(ParserFragments, Ipv6NonFirstFragmentHasNoPorts) {
    const Parsed r =
        parse(cat(eth(0x86DD), ipv6({.next = 44}, cat(frag6(17, 185, false, 99), udp(53, 5353)))));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.total(), 0U);
    EXPECT_FALSE(r.p.hasPorts);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.p.key.portA, 0);
    EXPECT_EQ(r.p.key.portB, 0);
    EXPECT_TRUE(r.p.frag.isFragment);
    EXPECT_FALSE(r.p.frag.moreFragments);
    EXPECT_EQ(r.p.frag.offset, 185);
    EXPECT_EQ(r.p.payloadOffset, 14 + 40 + 8);
    EXPECT_EQ(r.p.payloadLen, 8);
}

TEST(ParserFragments, UnfragmentedPacketIsNotAFragment) {
    const Parsed r =
        parse(cat(eth(0x86DD), ipv6({.next = 44}, cat(frag6(6, 0, false, 5), tcp(1, 2, 2)))));
    ASSERT_TRUE(r.ok);
    EXPECT_FALSE(r.p.frag.isFragment);  // atomic fragment (RFC 6946)
    EXPECT_TRUE(r.p.hasPorts);
}

// --- L2 stacks ------------------------------------------------------------------------------

TEST(ParserL2, VlanIdGoesIntoTheKey) {
    const Bytes frame = cat(eth(0x8100), vlanTag(0x2000 | 100, 0x0800), ipv4({}, tcp(1, 2, 2)));
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.vlan, 100);  // priority bits stripped
    EXPECT_EQ(r.p.l3Offset, 18);
    EXPECT_EQ(r.p.srcPort(), 1);
}

TEST(ParserL2, VlanLeftOutOfTheKeyWhenConfigured) {
    const Bytes frame = cat(eth(0x8100), vlanTag(100, 0x0800), ipv4({}, tcp(1, 2, 2)));
    const Parsed r = parse(frame, LinkType::Ethernet, ParserConfig{.vlanInKey = false});
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.vlan, 0);
}

TEST(ParserL2, QinQRecordsTheOuterVlan) {
    for (const std::uint16_t outerType :
         {std::uint16_t{0x88A8}, std::uint16_t{0x9100}, std::uint16_t{0x8100}}) {
        const Bytes frame = cat(eth(outerType), vlanTag(300, 0x8100), vlanTag(42, 0x86DD),
                                ipv6({.next = 17}, udp(1, 2)));
        const Parsed r = parse(frame);
        ASSERT_TRUE(r.ok) << outerType;
        EXPECT_EQ(r.p.key.vlan, 300) << outerType;
        EXPECT_EQ(r.p.l3Offset, 22);
        EXPECT_EQ(r.p.key.proto, 17);
    }
}

TEST(ParserL2, MoreThanEightTagsIsTooManyHeaders) {
    Bytes eight = eth(0x8100);
    for (int i = 0; i < 7; ++i)
        eight = cat(eight, vlanTag(static_cast<std::uint16_t>(i + 1), 0x8100));
    EXPECT_TRUE(parse(cat(eight, vlanTag(8, 0x0800), ipv4({}, udp(1, 2)))).ok);

    const Parsed r = parse(cat(eight, vlanTag(8, 0x8100), vlanTag(9, 0x0800), ipv4({}, udp(1, 2))));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::TooManyHeaders], 1U);
}

TEST(ParserL2, MplsTwoLabelsPoppedAndIpGuessedFromVersion) {
    const Parsed v4 = parse(cat(eth(0x8847), mplsLabel(1000, false), mplsLabel(2000, true),
                                ipv4({.proto = 17}, udp(10, 20))));
    ASSERT_TRUE(v4.ok);
    EXPECT_EQ(v4.p.l3Offset, 22);
    EXPECT_EQ(v4.p.key.ipVersion, 4);
    EXPECT_EQ(v4.p.dstPort(), 20);

    const Parsed v6 = parse(cat(eth(0x8848), mplsLabel(1000, false), mplsLabel(2000, true),
                                ipv6({.next = 6}, tcp(10, 20, 2))));
    ASSERT_TRUE(v6.ok);
    EXPECT_EQ(v6.p.key.ipVersion, 6);
    EXPECT_EQ(v6.p.dstPort(), 20);
}

TEST(ParserL2, MplsPayloadThatIsNotIpIsNotIp) {
    const Parsed r = parse(cat(eth(0x8847), mplsLabel(16, true), Bytes{0x00, 0x00, 0x00, 0x00},
                               eth(0x0800)));  // pseudowire control word + Ethernet
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::NotIp], 1U);
}

TEST(ParserL2, VlanThenPppoeSessionCarriesIpv4AndIpv6) {
    const Bytes inner4 = ipv4({.proto = 6}, tcp(3333, 80, 0x02));
    const Parsed v4 =
        parse(cat(eth(0x8100), vlanTag(7, 0x8864), pppoeSession(0x0021, inner4.size()), inner4));
    ASSERT_TRUE(v4.ok);
    EXPECT_EQ(v4.p.l3Offset, 14 + 4 + 8);
    EXPECT_EQ(v4.p.key.vlan, 7);
    EXPECT_EQ(v4.p.srcPort(), 3333);

    const Bytes inner6 = ipv6({.next = 17}, udp(1, 2));
    const Parsed v6 = parse(cat(eth(0x8864), pppoeSession(0x0057, inner6.size()), inner6));
    ASSERT_TRUE(v6.ok);
    EXPECT_EQ(v6.p.key.ipVersion, 6);
    EXPECT_EQ(v6.p.l3Offset, 22);
}

TEST(ParserL2, CiscoFabricPathIsSkippedToTheInnerFrame) {
    const Bytes outer = cat(Bytes(12, 0xEE), Bytes{0x89, 0x03, 0x00, 0x3F});
    const Bytes frame = cat(outer, eth(0x0800), ipv4({.proto = 6}, tcp(57005, 48879, 0x02)));
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.l3Offset, 16 + 14);
    EXPECT_EQ(r.p.srcMac, kSrcMac);  // the inner frame's addresses
    EXPECT_EQ(r.p.srcPort(), 57005);

    const Parsed cut = parse(frame, LinkType::Ethernet, {}, 29);
    EXPECT_FALSE(cut.ok);
    EXPECT_EQ(cut.anomalies[Anomaly::TruncatedL2], 1U);
}

TEST(ParserL2, PppControlProtocolIsNotIp) {
    const Parsed r = parse(cat(eth(0x8864), pppoeSession(0xC021, 4), payload(4)));  // LCP
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::NotIp], 1U);
}

TEST(ParserL2, ArpAndLldpAreCountedAsNotIp) {
    AnomalyCounters counters;
    ParsedPacket out;
    for (const std::uint16_t type : {std::uint16_t{0x0806}, std::uint16_t{0x88CC}}) {
        const Bytes frame = cat(eth(type), payload(46));
        const RawPacket raw{frame.data(), static_cast<std::uint32_t>(frame.size()),
                            static_cast<std::uint32_t>(frame.size()), 0};
        EXPECT_FALSE(parsePacket(raw, LinkType::Ethernet, {}, out, counters));
    }
    EXPECT_EQ(counters[Anomaly::NotIp], 2U);
}

// --- other link types -----------------------------------------------------------------------

TEST(ParserLink, LinuxCookedCaptureUsesProtocolAtOffsetFourteen) {
    const Parsed r =
        parse(cat(sllHeader(0x0800), ipv4({.proto = 17}, udp(68, 67))), LinkType::LinuxSll);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.l3Offset, 16);
    EXPECT_EQ(r.p.srcPort(), 68);
    EXPECT_EQ(r.p.srcMac, (std::array<std::uint8_t, 6>{}));
    EXPECT_EQ(r.p.dstMac, (std::array<std::uint8_t, 6>{}));
}

TEST(ParserLink, RawLinkChoosesIpVersionByNibble) {
    const Parsed v4 = parse(ipv4({}, tcp(1, 2, 2)), LinkType::Raw);
    ASSERT_TRUE(v4.ok);
    EXPECT_EQ(v4.p.key.ipVersion, 4);
    EXPECT_EQ(v4.p.l3Offset, 0);
    const Parsed v6 = parse(ipv6({}, tcp(1, 2, 2)), LinkType::Raw);
    ASSERT_TRUE(v6.ok);
    EXPECT_EQ(v6.p.key.ipVersion, 6);

    Bytes bad = ipv4({}, tcp(1, 2, 2));
    bad[0] = 0x55;
    const Parsed r = parse(bad, LinkType::Raw);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::BadIpVersion], 1U);
}

TEST(ParserLink, NullLoopbackFamilyInEitherByteOrder) {
    const Parsed v4 = parse(cat(nullHeader(2), ipv4({}, tcp(1, 2, 2))), LinkType::Null);
    ASSERT_TRUE(v4.ok);
    EXPECT_EQ(v4.p.l3Offset, 4);
    EXPECT_EQ(v4.p.key.ipVersion, 4);
    for (const std::uint32_t family : {24U, 28U, 30U, __builtin_bswap32(30U)}) {
        const Parsed v6 = parse(cat(nullHeader(family), ipv6({}, tcp(1, 2, 2))), LinkType::Null);
        ASSERT_TRUE(v6.ok) << family;
        EXPECT_EQ(v6.p.key.ipVersion, 6);
    }
    const Parsed other = parse(cat(nullHeader(7), payload(40)), LinkType::Null);
    EXPECT_FALSE(other.ok);
    EXPECT_EQ(other.anomalies[Anomaly::NotIp], 1U);
}

TEST(ParserLink, UnknownLinkTypeIsUnsupported) {
    const Parsed r = parse(ipv4({}, tcp(1, 2, 2)), static_cast<LinkType>(147));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.anomalies[Anomaly::UnsupportedLink], 1U);
}

// --- canonical key --------------------------------------------------------------------------

TEST(ParserKey, BothDirectionsBuildOneKeyWithOppositeDirection) {
    const Parsed ab = parse(
        cat(eth(0x0800), ipv4({.src = "192.168.1.20", .dst = "10.1.1.1"}, tcp(51000, 443, 0x02))));
    const Parsed ba = parse(
        cat(eth(0x0800), ipv4({.src = "10.1.1.1", .dst = "192.168.1.20"}, tcp(443, 51000, 0x12))));
    ASSERT_TRUE(ab.ok && ba.ok);
    EXPECT_EQ(ab.p.key, ba.p.key);
    EXPECT_FALSE(ab.p.fromA);  // 192.168.1.20 > 10.1.1.1
    EXPECT_TRUE(ba.p.fromA);
    EXPECT_EQ(ab.p.key.addrA, mapped("10.1.1.1"));
    EXPECT_EQ(ab.p.key.portA, 443);
    EXPECT_EQ(ab.p.srcAddr(), mapped("192.168.1.20"));
    EXPECT_EQ(ab.p.srcPort(), 51000);
    EXPECT_EQ(ba.p.srcPort(), 443);

    const Parsed v6ab =
        parse(cat(eth(0x86DD), ipv6({.src = "fe80::9", .dst = "2001:db8::1"}, tcp(1, 2, 2))));
    const Parsed v6ba =
        parse(cat(eth(0x86DD), ipv6({.src = "2001:db8::1", .dst = "fe80::9"}, tcp(2, 1, 2))));
    ASSERT_TRUE(v6ab.ok && v6ba.ok);
    EXPECT_EQ(v6ab.p.key, v6ba.p.key);
    EXPECT_NE(v6ab.p.fromA, v6ba.p.fromA);
}

TEST(ParserKey, EqualAddressesAreOrderedByPort) {
    const Parsed hi = parse(cat(
        eth(0x0800), ipv4({.src = "127.0.0.1", .dst = "127.0.0.1", .proto = 17}, udp(9000, 53))));
    const Parsed lo = parse(cat(
        eth(0x0800), ipv4({.src = "127.0.0.1", .dst = "127.0.0.1", .proto = 17}, udp(53, 9000))));
    ASSERT_TRUE(hi.ok && lo.ok);
    EXPECT_EQ(hi.p.key, lo.p.key);
    EXPECT_EQ(hi.p.key.portA, 53);
    EXPECT_EQ(hi.p.key.portB, 9000);
    EXPECT_FALSE(hi.p.fromA);
    EXPECT_TRUE(lo.p.fromA);
}

TEST(ParserKey, EqualEndpointsAreFromA) {
    const Parsed r = parse(cat(
        eth(0x0800), ipv4({.src = "10.0.0.7", .dst = "10.0.0.7", .proto = 17}, udp(5000, 5000))));
    ASSERT_TRUE(r.ok);
    EXPECT_TRUE(r.p.fromA);
}

TEST(ParserKey, Ipv4AddressesAreIpv4MappedAndVersionSet) {
    const Parsed r =
        parse(cat(eth(0x0800), ipv4({.src = "1.2.3.4", .dst = "5.6.7.8"}, tcp(1, 2, 2))));
    ASSERT_TRUE(r.ok);
    const Addr expected{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 1, 2, 3, 4};
    EXPECT_EQ(r.p.key.addrA, expected);
    EXPECT_EQ(r.p.key.ipVersion, 4);
    EXPECT_EQ(r.p.key.proto, 6);
}

TEST(ParserKey, KeyBytesAreDeterministicAcrossReusedOutput) {
    // A reused ParsedPacket must not leak fields of the previous packet into the key.
    AnomalyCounters counters;
    ParsedPacket out;
    const Bytes first = cat(eth(0x8100), vlanTag(5, 0x86DD), ipv6({}, tcp(1, 2, 2)));
    const Bytes second = cat(eth(0x0800), ipv4({.proto = 47}, payload(4)));
    ASSERT_TRUE(parsePacket({first.data(), static_cast<std::uint32_t>(first.size()), 0, 0},
                            LinkType::Ethernet, {}, out, counters));
    ASSERT_TRUE(parsePacket({second.data(), static_cast<std::uint32_t>(second.size()), 0, 0},
                            LinkType::Ethernet, {}, out, counters));
    const Parsed fresh = parse(second);
    EXPECT_EQ(out.key, fresh.p.key);
    EXPECT_EQ(out.key.vlan, 0);
    EXPECT_EQ(out.tcpFlags, 0);
}

// --- truncation and garbage -----------------------------------------------------------------

TEST(ParserTruncation, EveryCutOfAnIpv6TcpFrameCountsTheLayerThatIsMissing) {
    // 0..13 Ethernet, 14..53 IPv6, 54..61 hop-by-hop, 62..81 TCP, 82..91 payload.
    const Bytes frame =
        cat(eth(0x86DD), ipv6({.next = 0}, cat(ext6(6), tcp(40000, 443, 0x18, 500, payload(10)))));
    ASSERT_EQ(frame.size(), 92U);
    for (std::size_t n = 0; n <= frame.size(); ++n) {
        SCOPED_TRACE(n);
        const Parsed r = parse(frame, LinkType::Ethernet, {}, n);
        if (n < 14) {
            EXPECT_FALSE(r.ok);
            EXPECT_EQ(r.anomalies[Anomaly::TruncatedL2], 1U);
        } else if (n < 56) {  // IPv6 header, or the hop-by-hop next-header byte, cut off
            EXPECT_FALSE(r.ok);
            EXPECT_EQ(r.anomalies[Anomaly::TruncatedL3], 1U);
        } else if (n < 82) {
            ASSERT_TRUE(r.ok);
            EXPECT_EQ(r.anomalies[Anomaly::TruncatedL4], 1U);
            EXPECT_FALSE(r.p.hasPorts);
            EXPECT_EQ(r.p.key.proto, 6);
            EXPECT_EQ(r.p.key.portA, 0);
            EXPECT_EQ(r.p.key.portB, 0);
            EXPECT_EQ(r.p.payloadLen, 0);
            EXPECT_EQ(r.p.ipLen, 78U);
            expectWellFormed(r);
        } else {
            ASSERT_TRUE(r.ok);
            EXPECT_TRUE(r.p.hasPorts);
            EXPECT_EQ(r.p.dstPort(), 443);
            EXPECT_EQ(r.p.tcpFlags, 0x18);
            EXPECT_EQ(r.p.payloadLen, n - 82);
            EXPECT_EQ(r.p.ipLen, 78U);
            expectWellFormed(r);
        }
        EXPECT_EQ(r.total(), n < 82 ? 1U : 0U);
    }
}

TEST(ParserTruncation, EveryCutOfAVlanIpv4TcpFrameWithOptionsCountsTheLayerThatIsMissing) {
    // 0..17 Ethernet + 802.1Q, 18..41 IPv4 with one option word, 42..61 TCP, 62..65 payload.
    const Bytes frame = cat(eth(0x8100), vlanTag(12, 0x0800),
                            ipv4({.optionWords = 1}, tcp(1, 2, 0x02, 100, payload(4))));
    ASSERT_EQ(frame.size(), 66U);
    for (std::size_t n = 0; n <= frame.size(); ++n) {
        SCOPED_TRACE(n);
        const Parsed r = parse(frame, LinkType::Ethernet, {}, n);
        EXPECT_EQ(r.total(), n < 62 ? 1U : 0U);
        if (n < 18) {
            EXPECT_EQ(r.anomalies[Anomaly::TruncatedL2], 1U);
        } else if (n < 42) {
            EXPECT_EQ(r.anomalies[Anomaly::TruncatedL3], 1U);
        } else if (n < 62) {
            ASSERT_TRUE(r.ok);
            EXPECT_EQ(r.anomalies[Anomaly::TruncatedL4], 1U);
            EXPECT_EQ(r.p.key.vlan, 12);
            EXPECT_EQ(r.p.ipLen, 48U);
        } else {
            ASSERT_TRUE(r.ok);
            EXPECT_EQ(r.p.srcPort(), 1);
            EXPECT_EQ(r.p.payloadLen, n - 62);
        }
        EXPECT_EQ(r.ok, n >= 42);
    }
}

TEST(ParserTruncation, EmptyAndNullFramesAreTruncated) {
    AnomalyCounters counters;
    ParsedPacket out;
    EXPECT_FALSE(parsePacket(RawPacket{}, LinkType::Ethernet, {}, out, counters));
    EXPECT_FALSE(parsePacket(RawPacket{}, LinkType::Raw, {}, out, counters));
    EXPECT_EQ(counters[Anomaly::TruncatedL2], 1U);
    EXPECT_EQ(counters[Anomaly::TruncatedL3], 1U);
}

TEST(ParserFuzz, SeededGarbageAndMutatedFramesNeverBreakTheInvariants) {
    const std::vector<std::pair<Bytes, LinkType>> seeds = {
        {cat(eth(0x86DD), ipv6({.next = 0}, cat(ext6(60), ext6(44), frag6(6, 0, true, 1),
                                                tcp(1, 2, 2, 3, payload(20))))),
         LinkType::Ethernet},
        {cat(eth(0x8100), vlanTag(1, 0x88A8), vlanTag(2, 0x0800),
             ipv4({.proto = 17, .optionWords = 2}, udp(1, 2, payload(20)))),
         LinkType::Ethernet},
        {cat(eth(0x8847), mplsLabel(1, false), mplsLabel(2, true), ipv4({.proto = 1}, icmp(8, 0))),
         LinkType::Ethernet},
        {cat(eth(0x8864), pppoeSession(0x0057, 48), ipv6({.next = 132}, sctp(1, 2))),
         LinkType::Ethernet},
        {cat(sllHeader(0x86DD),
             ipv6({.next = 51}, cat(Bytes{6, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, tcp(5, 6, 7)))),
         LinkType::LinuxSll},
        {ipv4({.fragOffset = 3}, payload(30)), LinkType::Raw},
        {cat(nullHeader(30), ipv6({.next = 58}, icmp(1, 4, payload(8)))), LinkType::Null},
    };
    constexpr LinkType kLinks[] = {LinkType::Ethernet, LinkType::Raw, LinkType::LinuxSll,
                                   LinkType::Null};
    std::mt19937_64 rng(0x5EED0F00D);
    std::uint64_t accepted = 0;
    std::uint64_t rejected = 0;
    for (int i = 0; i < 200'000; ++i) {
        Bytes frame;
        LinkType link;
        if (i % 2 == 0) {  // pure garbage, IP-looking first bytes now and then
            frame.resize(rng() % 160);
            for (auto& b : frame) b = static_cast<std::uint8_t>(rng());
            link = kLinks[rng() % 4];
            if (!frame.empty() && link == LinkType::Raw) {
                frame[0] = static_cast<std::uint8_t>((rng() % 2 ? 0x40 : 0x60) | (frame[0] & 0x0F));
            }
        } else {  // a valid frame with a few bytes flipped, then cut at a random length
            const auto& seed = seeds[rng() % seeds.size()];
            frame = seed.first;
            link = seed.second;
            const int flips = 1 + static_cast<int>(rng() % 6);
            for (int f = 0; f < flips; ++f)
                frame[rng() % frame.size()] = static_cast<std::uint8_t>(rng());
            frame.resize(rng() % (frame.size() + 1));
        }
        const Parsed r = parse(frame, link);
        if (r.ok) {
            ++accepted;
            expectWellFormed(r);
        } else {
            ++rejected;
            ASSERT_EQ(r.total(), 1U);
        }
        if (HasFailure()) {
            ADD_FAILURE() << "iteration " << i;
            break;
        }
    }
    EXPECT_GT(accepted, 10'000U);  // the mutated frames do reach the transport layer
    EXPECT_GT(rejected, 10'000U);
}

TEST(ParserAnomalyNames, AreStableSnakeCase) {
    EXPECT_STREQ(anomalyName(Anomaly::NotIp), "not_ip");
    EXPECT_STREQ(anomalyName(Anomaly::TruncatedL2), "truncated_l2");
    EXPECT_STREQ(anomalyName(Anomaly::TruncatedL3), "truncated_l3");
    EXPECT_STREQ(anomalyName(Anomaly::TruncatedL4), "truncated_l4");
    EXPECT_STREQ(anomalyName(Anomaly::BadIpVersion), "bad_ip_version");
    EXPECT_STREQ(anomalyName(Anomaly::BadIpHeader), "bad_ip_header");
    EXPECT_STREQ(anomalyName(Anomaly::TooManyHeaders), "too_many_headers");
    EXPECT_STREQ(anomalyName(Anomaly::UnsupportedLink), "unsupported_link");
    EXPECT_STREQ(anomalyName(Anomaly::FragmentNoPorts), "fragment_no_ports");
}

// --- Tunnels (issue 12) ----------------------------------------------------------------------

constexpr ParserConfig kInner{.tunnels = TunnelMode::Inner};
constexpr ParserConfig kBoth{.tunnels = TunnelMode::Both};

Bytes innerEth(const Bytes& ipPacket, std::uint16_t type = 0x0800) {
    Bytes b{0x0a, 0, 0, 0, 0, 0x0b, 0x0a, 0, 0, 0, 0, 0x0c};  // inner dst, src MACs
    put16(b, type);
    return cat(b, ipPacket);
}

Bytes innerTcp() { return ipv4({.src = "192.168.0.1", .dst = "192.168.0.2"}, tcp(1111, 80, 0x02)); }

Bytes vxlanHeader(std::uint32_t vni, std::uint8_t flags = 0x08) {
    Bytes b{flags, 0, 0, 0};
    put32(b, vni << 8);
    return b;
}

Bytes overUdp(std::uint16_t dport, const Bytes& payloadBytes) {
    return cat(eth(0x0800), ipv4({.src = "10.1.1.1", .dst = "10.2.2.2", .proto = 17},
                                 udp(40000, dport, payloadBytes)));
}

Bytes greHeader(std::uint16_t flags, std::uint16_t proto,
                std::initializer_list<std::uint32_t> words) {
    Bytes b;
    put16(b, flags);
    put16(b, proto);
    for (const auto w : words) put32(b, w);
    return b;
}

Bytes overGre(const Bytes& greAndInner) {
    return cat(eth(0x0800), ipv4({.src = "10.1.1.1", .dst = "10.2.2.2", .proto = 47}, greAndInner));
}

/// Every layer of a frame (--tunnel both).
struct Layers {
    std::unique_ptr<std::uint8_t[]> buffer;
    std::array<ParsedPacket, kMaxLayers> p;
    std::size_t n = 0;
    AnomalyCounters anomalies;
};

Layers layers(const Bytes& frame, LinkType link = LinkType::Ethernet) {
    Layers r;
    r.buffer = std::make_unique<std::uint8_t[]>(frame.size() + 1);
    std::memcpy(r.buffer.get(), frame.data(), frame.size());
    const RawPacket raw{r.buffer.get(), static_cast<std::uint32_t>(frame.size()),
                        static_cast<std::uint32_t>(frame.size()), 1};
    r.n = parsePacketLayers(raw, link, kBoth, r.p, r.anomalies);
    return r;
}

void expectInnerTcp(const Parsed& r, TunnelType type, std::uint32_t id) {
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 6);
    EXPECT_EQ(r.p.srcAddr(), mapped("192.168.0.1"));
    EXPECT_EQ(r.p.dstPort(), 80);
    EXPECT_EQ(r.p.tcpFlags, 0x02);
    EXPECT_EQ(r.p.ipLen, 40U);  // the inner packet's bytes, not the outer's
    EXPECT_EQ(r.p.tunnel.type, type);
    EXPECT_EQ(r.p.tunnel.id, id);
    EXPECT_EQ(r.p.tunnel.outerSrc, mapped("10.1.1.1"));
    EXPECT_EQ(r.p.tunnel.outerDst, mapped("10.2.2.2"));
    EXPECT_EQ(r.p.tunnel.depth, 1);
    EXPECT_EQ(r.total(), 0U);
    expectWellFormed(r);
}

TEST(ParserTunnel, OuterModeLeavesVxlanAsOneUdpFlow) {
    const Bytes frame = overUdp(4789, cat(vxlanHeader(0x123456), innerEth(innerTcp())));
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.p.tunnel.type, TunnelType::None);
}

TEST(ParserTunnel, VxlanInnerFlowCarriesVniOuterAddressesAndInnerMacs) {
    const Parsed r = parse(overUdp(4789, cat(vxlanHeader(0x123456), innerEth(innerTcp()))),
                           LinkType::Ethernet, kInner);
    expectInnerTcp(r, TunnelType::Vxlan, 0x123456);
    EXPECT_EQ(r.p.srcMac[5], 0x0c);
    EXPECT_EQ(r.p.dstMac[5], 0x0b);
}

TEST(ParserTunnel, BothModeYieldsOuterThenInnerInOrder) {
    const Layers r = layers(overUdp(4789, cat(vxlanHeader(7), innerEth(innerTcp()))));
    ASSERT_EQ(r.n, 2U);
    EXPECT_EQ(r.p[0].key.proto, 17);
    EXPECT_EQ(r.p[0].tunnel.type, TunnelType::None);
    EXPECT_EQ(r.p[0].ipLen, 20U + 8 + 8 + 14 + 40);
    EXPECT_EQ(r.p[1].key.proto, 6);
    EXPECT_EQ(r.p[1].tunnel.id, 7U);
    EXPECT_EQ(r.p[1].ts, r.p[0].ts);
}

TEST(ParserTunnel, VxlanWithoutTheIFlagIsABadTunnelKeptAsOuter) {
    const Parsed r = parse(overUdp(4789, cat(vxlanHeader(5, 0x00), innerEth(innerTcp()))),
                           LinkType::Ethernet, kInner);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.anomalies[Anomaly::BadTunnel], 1U);
}

TEST(ParserTunnel, VxlanCarryingArpStaysOuterWithoutAnomaly) {
    const Parsed r = parse(overUdp(4789, cat(vxlanHeader(5), innerEth(payload(28), 0x0806))),
                           LinkType::Ethernet, kInner);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.total(), 0U);
}

TEST(ParserTunnel, GreKeyedAndSequencedCarriesIpv4WithKeyAsId) {
    const Parsed r = parse(overGre(cat(greHeader(0x3000, 0x0800, {0xCAFEBABE, 99}), innerTcp())),
                           LinkType::Ethernet, kInner);
    expectInnerTcp(r, TunnelType::Gre, 0xCAFEBABE);
}

TEST(ParserTunnel, GreWithChecksumBridgesEthernet) {
    const Parsed r = parse(overGre(cat(greHeader(0x8000, 0x6558, {0}), innerEth(innerTcp()))),
                           LinkType::Ethernet, kInner);
    expectInnerTcp(r, TunnelType::Gre, 0);
}

TEST(ParserTunnel, GreCarriesMpls) {
    const Parsed r = parse(overGre(cat(greHeader(0, 0x8847, {}), mplsLabel(100, true), innerTcp())),
                           LinkType::Ethernet, kInner);
    expectInnerTcp(r, TunnelType::Gre, 0);
}

TEST(ParserTunnel, PptpEnhancedGreCarriesPpp) {
    Bytes gre = greHeader(0x3001, 0x880B, {0x00280007, 1});  // payload length 40, call id 7; seq
    const Parsed r = parse(overGre(cat(gre, Bytes{0xFF, 0x03, 0x00, 0x21}, innerTcp())),
                           LinkType::Ethernet, kInner);
    expectInnerTcp(r, TunnelType::Gre, 7);
}

TEST(ParserTunnel, ErspanTypesOneTwoAndThreeMirrorEthernetFrames) {
    const Parsed one = parse(overGre(cat(greHeader(0, 0x88BE, {}), innerEth(innerTcp()))),
                             LinkType::Ethernet, kInner);
    expectInnerTcp(one, TunnelType::Erspan, 0);
    Bytes type2 = greHeader(0x1000, 0x88BE, {1});  // sequenced
    put32(type2, 0x10010155);                      // version 1, VLAN 1, session 0x155
    put32(type2, 0);
    expectInnerTcp(parse(overGre(cat(type2, innerEth(innerTcp()))), LinkType::Ethernet, kInner),
                   TunnelType::Erspan, 0x155);
    Bytes type3 = greHeader(0x1000, 0x22EB, {1});
    put32(type3, 0x20010042);  // version 2, session 0x42
    put32(type3, 0);           // timestamp
    put32(type3, 0);           // SGT, frame type 0 (Ethernet), no platform header
    expectInnerTcp(parse(overGre(cat(type3, innerEth(innerTcp()))), LinkType::Ethernet, kInner),
                   TunnelType::Erspan, 0x42);
}

TEST(ParserTunnel, GeneveSkipsItsOptions) {
    Bytes g{0x02, 0x00, 0x65, 0x58};  // version 0, 2 option words, Ethernet
    put32(g, 0xABCDEF00);             // VNI
    g.insert(g.end(), 8, 0x11);       // options
    expectInnerTcp(parse(overUdp(6081, cat(g, innerEth(innerTcp()))), LinkType::Ethernet, kInner),
                   TunnelType::Geneve, 0xABCDEF);
}

TEST(ParserTunnel, GtpUWithExtensionHeaderCarriesIpWithTeidAsId) {
    Bytes g{0x34, 0xFF};  // version 1, PT, E flag; G-PDU
    put16(g, 0);
    put32(g, 0x01020304);                      // TEID
    g.insert(g.end(), {0, 0, 0, 0x85});        // seq, N-PDU, next: PDU session container
    g.insert(g.end(), {1, 0x10, 0x05, 0x00});  // 4 bytes, next 0
    expectInnerTcp(parse(overUdp(2152, cat(g, innerTcp())), LinkType::Ethernet, kInner),
                   TunnelType::GtpU, 0x01020304);
}

TEST(ParserTunnel, GtpEchoIsAnOrdinaryUdpPacket) {
    Bytes g{0x32, 0x01, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0};
    const Parsed r = parse(overUdp(2152, g), LinkType::Ethernet, kInner);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.total(), 0U);
}

Bytes teredoInner() {
    return ipv6({.src = "2001:0:4137:9e50::1", .dst = "2001:db8::2", .next = 6}, tcp(1, 2, 0x10));
}

TEST(ParserTunnel, TeredoOnItsPortSkipsOriginIndication) {
    const Bytes origin{0, 0, 0x12, 0x34, 1, 2, 3, 4};
    const Parsed r = parse(overUdp(3544, cat(origin, teredoInner())), LinkType::Ethernet, kInner);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.ipVersion, 6);
    EXPECT_EQ(r.p.key.proto, 6);
    EXPECT_EQ(r.p.tunnel.type, TunnelType::Teredo);
    EXPECT_EQ(r.p.ipLen, 60U);
}

// Issue 21 item 12: a sender chooses its source port, so the UDP tunnels open on the destination
// port only (as Suricata and Zeek), and Teredo only with 3544 on one side; before, "from 4789"
// and any-port IPv6-with-2001::/32 payloads let a sender plant inner flows of its choice.
TEST(ParserTunnel, UdpTunnelsOpenOnTheDestinationPortOnly) {
    auto fromPort = [](std::uint16_t sport, std::uint16_t dport, const Bytes& body) {
        return cat(eth(0x0800), ipv4({.src = "10.1.1.1", .dst = "10.2.2.2", .proto = 17},
                                     udp(sport, dport, body)));
    };
    const Parsed spoofed = parse(fromPort(4789, 5555, cat(vxlanHeader(7), innerEth(innerTcp()))),
                                 LinkType::Ethernet, kInner);
    ASSERT_TRUE(spoofed.ok);
    EXPECT_EQ(spoofed.p.tunnel.type, TunnelType::None);
    EXPECT_EQ(spoofed.p.key.proto, 17);
    EXPECT_EQ(spoofed.p.dstPort(), 5555);
    const Parsed real = parse(fromPort(5555, 4789, cat(vxlanHeader(7), innerEth(innerTcp()))),
                              LinkType::Ethernet, kInner);
    ASSERT_TRUE(real.ok);
    EXPECT_EQ(real.p.tunnel.type, TunnelType::Vxlan);
    EXPECT_EQ(real.p.key.proto, 6);
}

TEST(ParserTunnel, TeredoOpensOnlyWithPort3544OnOneSide) {
    auto fromPort = [](std::uint16_t sport, std::uint16_t dport, const Bytes& body) {
        return cat(eth(0x0800), ipv4({.src = "10.1.1.1", .dst = "10.2.2.2", .proto = 17},
                                     udp(sport, dport, body)));
    };
    const Parsed relay = parse(overUdp(32900, teredoInner()), LinkType::Ethernet, kInner);
    ASSERT_TRUE(relay.ok);
    EXPECT_EQ(relay.p.tunnel.type, TunnelType::None);  // looks like Teredo, any port: plain UDP
    EXPECT_EQ(relay.p.key.proto, 17);
    const Parsed server = parse(fromPort(3544, 40000, teredoInner()), LinkType::Ethernet, kInner);
    ASSERT_TRUE(server.ok);
    EXPECT_EQ(server.p.tunnel.type, TunnelType::Teredo);  // a Teredo server answers from 3544
    EXPECT_EQ(server.p.key.proto, 6);
}

TEST(ParserTunnel, AyiyaSkipsIdentityAndSignature) {
    Bytes a{0x41, 0x50, 0x11, 41};  // 16-byte identity, 20-byte signature, forward, IPv6
    put32(a, 0);                    // epoch
    a.insert(a.end(), 16 + 20, 0x77);
    const Parsed r = parse(overUdp(5072, cat(a, teredoInner())), LinkType::Ethernet, kInner);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.tunnel.type, TunnelType::Ayiya);
    EXPECT_EQ(r.p.key.ipVersion, 6);
}

TEST(ParserTunnel, CapwapDataCarriesEthernet) {
    Bytes c{0x00, 0x10, 0x02, 0x00};  // preamble, HLEN 2 words, WBID 1, T = 0 (802.3)
    put32(c, 0);
    expectInnerTcp(parse(overUdp(5247, cat(c, innerEth(innerTcp()))), LinkType::Ethernet, kInner),
                   TunnelType::Capwap, 0);
}

TEST(ParserTunnel, MplsOverUdp) {
    expectInnerTcp(parse(overUdp(6635, cat(mplsLabel(16, false), mplsLabel(17, true), innerTcp())),
                         LinkType::Ethernet, kInner),
                   TunnelType::MplsUdp, 0);
}

TEST(ParserTunnel, IpInIpAllFourCombinations) {
    const Bytes in4 = innerTcp();
    const Bytes in6 = ipv6({.next = 6}, tcp(5, 6, 0x02));
    struct Case {
        Bytes frame;
        std::uint8_t innerVersion;
    };
    const Case cases[] = {
        {cat(eth(0x0800), ipv4({.proto = 4}, in4)), 4},
        {cat(eth(0x0800), ipv4({.proto = 41}, in6)), 6},
        {cat(eth(0x86DD), ipv6({.next = 4}, in4)), 4},
        {cat(eth(0x86DD), ipv6({.next = 41}, in6)), 6},
    };
    for (const auto& c : cases) {
        const Parsed r = parse(c.frame, LinkType::Ethernet, kInner);
        ASSERT_TRUE(r.ok);
        EXPECT_EQ(r.p.key.ipVersion, c.innerVersion);
        EXPECT_EQ(r.p.key.proto, 6);
        EXPECT_EQ(r.p.tunnel.type, TunnelType::IpInIp);
    }
}

TEST(ParserTunnel, DepthIsBoundedAndCounted) {
    Bytes frame = innerTcp();
    for (int i = 0; i < 5; ++i) frame = ipv4({.proto = 4}, frame);
    const Layers r = layers(cat(eth(0x0800), frame));
    ASSERT_EQ(r.n, kMaxLayers);
    EXPECT_EQ(r.p[kMaxLayers - 1].tunnel.depth, kMaxTunnelDepth);
    EXPECT_EQ(r.p[kMaxLayers - 1].key.proto, 4);  // the deepest layer parsed, still IP-in-IP
    EXPECT_EQ(r.anomalies[Anomaly::TunnelTooDeep], 1U);
}

TEST(ParserTunnel, TruncatedTunnelHeadersNeverReadPastTheCapture) {
    const Bytes frame = overUdp(6081, cat(Bytes{0x3F, 0, 0x65, 0x58, 0, 0, 1, 0}, payload(20)));
    const Parsed r = parse(frame, LinkType::Ethernet, kInner);  // 63 option words announced
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.key.proto, 17);
    EXPECT_EQ(r.anomalies[Anomaly::BadTunnel], 1U);
}

TEST(ParserTunnel, InnerBytesAreBoundedByTheOuterPacketNotThePadding) {
    // The inner IPv4 header claims 1000 bytes inside a 60-byte outer packet.
    Bytes inner = innerTcp();
    set16(inner, 2, 1000);
    const Parsed r = parse(cat(eth(0x0800), ipv4({.proto = 4}, inner)), LinkType::Ethernet, kInner);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 40U);
    EXPECT_EQ(r.anomalies[Anomaly::IpLengthClamped], 1U);
}

// --- Link types (issue 12) -------------------------------------------------------------------

void expectTcpFlow(const Parsed& r) {
    ASSERT_TRUE(r.ok) << r.total();
    EXPECT_EQ(r.p.key.proto, 6);
    EXPECT_EQ(r.p.srcAddr(), mapped("10.0.0.1"));
    EXPECT_EQ(r.p.dstPort(), 80);
    expectWellFormed(r);
}

Bytes tcp4() { return ipv4({}, tcp(1234, 80, 0x02)); }

TEST(ParserLink, LinuxCookedV2HasTheProtocolFirst) {
    Bytes h;
    put16(h, 0x0800);
    h.insert(h.end(), 18, 0);
    expectTcpFlow(parse(cat(h, tcp4()), LinkType::LinuxSll2));
}

TEST(ParserLink, PppWithAndWithoutAddressControlAndCompressedProtocol) {
    expectTcpFlow(parse(cat(Bytes{0xFF, 0x03, 0x00, 0x21}, tcp4()), LinkType::Ppp));
    expectTcpFlow(parse(cat(Bytes{0x00, 0x21}, tcp4()), LinkType::Ppp));
    expectTcpFlow(parse(cat(Bytes{0x21}, tcp4()), LinkType::Ppp));
    expectTcpFlow(parse(cat(Bytes{0xFF, 0x03, 0x00, 0x21}, tcp4()), LinkType::PppHdlc));
    const Parsed lcp = parse(cat(Bytes{0xFF, 0x03, 0xC0, 0x21}, payload(10)), LinkType::Ppp);
    EXPECT_FALSE(lcp.ok);
    EXPECT_EQ(lcp.anomalies[Anomaly::NotIp], 1U);
}

TEST(ParserLink, CiscoHdlcCarriesAnEtherType) {
    expectTcpFlow(parse(cat(Bytes{0x0F, 0x00, 0x08, 0x00}, tcp4()), LinkType::CiscoHdlc));
    expectTcpFlow(parse(cat(Bytes{0x8F, 0x00, 0x08, 0x00}, tcp4()), LinkType::PppHdlc));
}

TEST(ParserLink, LoopHasTheFamilyInNetworkOrder) {
    expectTcpFlow(parse(cat(Bytes{0, 0, 0, 2}, tcp4()), LinkType::Loop));
}

Bytes wifiData(std::uint8_t fc0, std::uint8_t fc1) {
    Bytes h(24, 0);  // frame control, duration, addresses 1-3, sequence control
    h[0] = fc0;
    h[1] = fc1;
    for (std::size_t a = 1; a <= 3; ++a) {
        h[4 + (a - 1) * 6] = 0x02;
        h[4 + (a - 1) * 6 + 5] = static_cast<std::uint8_t>(a);
    }
    if ((fc0 & 0x80) != 0) h.resize(26, 0);  // QoS control
    return cat(h, Bytes{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00});
}

TEST(ParserLink, Ieee80211DataFramesWithLlcSnap) {
    const Parsed toDs = parse(cat(wifiData(0x08, 0x01), tcp4()), LinkType::Ieee80211);
    expectTcpFlow(toDs);
    EXPECT_EQ(toDs.p.srcMac[5], 2);  // address 2 = source when going to the DS
    EXPECT_EQ(toDs.p.dstMac[5], 3);
    expectTcpFlow(parse(cat(wifiData(0x88, 0x02), tcp4()), LinkType::Ieee80211));  // QoS, from DS
    const Parsed beacon = parse(cat(Bytes(24, 0), payload(20)), LinkType::Ieee80211);
    EXPECT_EQ(beacon.anomalies[Anomaly::NotIp], 1U);
    const Parsed protectedFrame = parse(cat(wifiData(0x08, 0x41), tcp4()), LinkType::Ieee80211);
    EXPECT_EQ(protectedFrame.anomalies[Anomaly::NotIp], 1U);
}

TEST(ParserLink, RadiotapHeaderIsSkippedByItsLength) {
    const Bytes radiotap{0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // version 0, length 12 (LE)
    expectTcpFlow(parse(cat(radiotap, wifiData(0x08, 0x01), tcp4()), LinkType::Ieee80211Radiotap));
}

TEST(ParserLink, PbbVnTagAndETagAreWalked) {
    Bytes pbb = eth(0x88E7);
    put32(pbb, 0x00012345);           // I-TAG
    pbb.insert(pbb.end(), 12, 0x02);  // customer MACs
    put16(pbb, 0x0800);
    expectTcpFlow(parse(cat(pbb, tcp4())));
    Bytes vntag = eth(0x8926);
    put32(vntag, 0x80010002);
    put16(vntag, 0x0800);
    expectTcpFlow(parse(cat(vntag, tcp4())));
    Bytes etag = eth(0x893F);
    etag.insert(etag.end(), 6, 0);
    put16(etag, 0x0800);
    expectTcpFlow(parse(cat(etag, tcp4())));
}

TEST(ParserLink, NewPcapLinkTypesMap) {
    const std::pair<int, LinkType> kMap[] = {
        {9, LinkType::Ppp},         {50, LinkType::PppHdlc}, {104, LinkType::CiscoHdlc},
        {105, LinkType::Ieee80211}, {108, LinkType::Loop},   {127, LinkType::Ieee80211Radiotap},
        {276, LinkType::LinuxSll2},
    };
    for (const auto& [dlt, link] : kMap) {
        LinkType out = LinkType::Ethernet;
        EXPECT_TRUE(linkTypeFromPcap(dlt, out)) << dlt;
        EXPECT_EQ(out, link) << dlt;
    }
}

// --- Byte accounting (issue 12) -----------------------------------------------------------------

TEST(ParserBytes, Ipv4TotalLengthZeroCountsTheWire) {
    Bytes frame = cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x10, 1024, payload(100))));
    set16(frame, 14 + 2, 0);
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 140U);
    EXPECT_EQ(r.anomalies[Anomaly::IpLengthClamped], 1U);
}

TEST(ParserBytes, Ipv4TotalLengthBeyondTheFrameIsClampedToIt) {
    Bytes frame = cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x10, 1024, payload(100))));
    set16(frame, 14 + 2, 4000);
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 140U);
    EXPECT_EQ(r.anomalies[Anomaly::IpLengthClamped], 1U);
    // A snap length is not a lie: the wire length covers the header's value.
    const Parsed snapped = parse(cat(eth(0x0800), ipv4({}, tcp(1, 2, 0x10, 1024, payload(100)))),
                                 LinkType::Ethernet, {}, 60);
    EXPECT_EQ(snapped.p.ipLen, 140U);
    EXPECT_EQ(snapped.anomalies[Anomaly::IpLengthClamped], 0U);
}

TEST(ParserBytes, Ipv6PayloadLengthZeroCountsTheWireButNotEthernetPadding) {
    Bytes big = cat(eth(0x86DD), ipv6({.next = 17}, udp(1, 2, payload(100))));
    set16(big, 14 + 4, 0);
    const Parsed r = parse(big);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 40U + 108);
    EXPECT_EQ(r.anomalies[Anomaly::IpLengthClamped], 1U);
    // 60-byte frame: 14 + 40 + 6 bytes that are padding (cisco-fabric-path, as Zeek).
    Bytes small = cat(eth(0x86DD), ipv6({.next = 99}, payload(6)));
    set16(small, 14 + 4, 0);
    ASSERT_EQ(small.size(), 60U);
    const Parsed padded = parse(small);
    ASSERT_TRUE(padded.ok);
    EXPECT_EQ(padded.p.ipLen, 40U);
}

TEST(ParserBytes, Ipv6JumboPayloadLengthIsUsed) {
    Bytes hop{17, 0, 0xC2, 4, 0, 0, 0, 0};  // next UDP, jumbo option
    Bytes frame = cat(eth(0x86DD), ipv6({.next = 0}, cat(hop, udp(1, 2, payload(100)))));
    set16(frame, 14 + 4, 0);
    const std::uint32_t jumbo = 8 + 108;
    frame[14 + 40 + 4 + 2] = static_cast<std::uint8_t>(jumbo >> 8);
    frame[14 + 40 + 4 + 3] = static_cast<std::uint8_t>(jumbo);
    const Parsed r = parse(frame);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.p.ipLen, 40U + jumbo);
    EXPECT_EQ(r.anomalies[Anomaly::IpLengthClamped], 0U);
    EXPECT_EQ(r.p.key.proto, 17);
}

// Mutated tunnel frames in every mode: never out of bounds, every layer well formed.
TEST(ParserFuzz, MutatedTunnelFramesKeepTheInvariantsOnEveryLayer) {
    const std::vector<Bytes> seeds = {
        overUdp(4789, cat(vxlanHeader(1), innerEth(innerTcp()))),
        overGre(cat(greHeader(0x3000, 0x0800, {1, 2}), innerTcp())),
        overUdp(2152,
                cat(Bytes{0x34, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x85, 1, 0, 0, 0}, innerTcp())),
        overUdp(3544, cat(Bytes{0, 0, 1, 2, 3, 4, 5, 6}, teredoInner())),
        overUdp(6081,
                cat(Bytes{0x01, 0, 0x65, 0x58, 0, 0, 1, 0, 9, 9, 9, 9}, innerEth(innerTcp()))),
        cat(eth(0x0800), ipv4({.proto = 4}, ipv4({.proto = 41}, teredoInner()))),
    };
    std::mt19937_64 rng(0x7E4A1);
    std::size_t tunnelled = 0;
    for (int i = 0; i < 100'000; ++i) {
        Bytes frame = seeds[rng() % seeds.size()];
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) {
            frame[14 + rng() % (frame.size() - 14)] = static_cast<std::uint8_t>(rng());
        }
        frame.resize(14 + rng() % (frame.size() - 13));
        const Layers r = layers(frame);
        ASSERT_LE(r.n, kMaxLayers);
        for (std::size_t k = 0; k < r.n; ++k) {
            const ParsedPacket& p = r.p[k];
            ASSERT_TRUE(p.key.ipVersion == 4 || p.key.ipVersion == 6);
            ASSERT_LE(p.l3Offset, p.l4Offset);
            ASSERT_LE(p.l4Offset, p.payloadOffset);
            ASSERT_LE(std::size_t{p.payloadOffset} + p.payloadLen, frame.size());
            ASSERT_EQ(p.tunnel.depth, k);
            if (k > 0) {
                ASSERT_GT(p.l3Offset, r.p[k - 1].l3Offset);  // always forward: no loop
                ++tunnelled;
            }
        }
        std::uint64_t skips = 0;
        for (std::size_t a = 0; a < kAnomalyCount; ++a) {
            if (isSkipAnomaly(static_cast<Anomaly>(a))) skips += r.anomalies.count[a];
        }
        ASSERT_EQ(skips, r.n == 0 ? 1U : 0U) << "iteration " << i;
    }
    EXPECT_GT(tunnelled, 10'000U);
}

TEST(ParserAnomalyNames, TunnelAndLengthAnomaliesAreNamed) {
    EXPECT_STREQ(anomalyName(Anomaly::IpLengthClamped), "ip_length_clamped");
    EXPECT_STREQ(anomalyName(Anomaly::BadTunnel), "bad_tunnel");
    EXPECT_STREQ(anomalyName(Anomaly::TunnelTooDeep), "tunnel_too_deep");
    EXPECT_FALSE(isSkipAnomaly(Anomaly::IpLengthClamped));
    EXPECT_TRUE(isSkipAnomaly(Anomaly::NotIp));
}

}  // namespace
}  // namespace rowprobe
