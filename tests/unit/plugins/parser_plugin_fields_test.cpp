// The ParsedPacket facts process plugins read (docs/design/process-runtime.md), with ipfixprobe's
// parser semantics: payload on the wire, TCP seq/ack, the options bitmap and both MSS readings,
// IPv4 flags, and the payload() span.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes ethIpv4(std::uint8_t proto, const Bytes& l4, std::uint16_t flagsOffset = 0x4000,
              std::size_t padding = 0) {
    Bytes b(12, 0x02);
    b.push_back(0x08);
    b.push_back(0x00);
    const auto total = static_cast<std::uint16_t>(20 + l4.size());
    const Bytes ip = {0x45,
                      0,
                      static_cast<std::uint8_t>(total >> 8),
                      static_cast<std::uint8_t>(total),
                      0,
                      1,
                      static_cast<std::uint8_t>(flagsOffset >> 8),
                      static_cast<std::uint8_t>(flagsOffset),
                      64,
                      proto,
                      0,
                      0,
                      10,
                      0,
                      0,
                      1,
                      10,
                      0,
                      0,
                      2};
    b.insert(b.end(), ip.begin(), ip.end());
    b.insert(b.end(), l4.begin(), l4.end());
    b.insert(b.end(), padding, 0);  // Ethernet padding: never payload
    return b;
}

ParsedPacket parse(const Bytes& frame, std::size_t capLen = SIZE_MAX) {
    static std::vector<std::unique_ptr<std::uint8_t[]>> keep;
    const std::size_t n = std::min(capLen, frame.size());
    keep.push_back(std::make_unique<std::uint8_t[]>(n));
    std::memcpy(keep.back().get(), frame.data(), n);
    ParsedPacket p;
    AnomalyCounters a;
    const RawPacket raw{keep.back().get(), static_cast<std::uint32_t>(n),
                        static_cast<std::uint32_t>(frame.size()), 1};
    EXPECT_TRUE(parsePacket(raw, LinkType::Ethernet, ParserConfig{}, p, a));
    return p;
}

/// A TCP SYN with 20 bytes of options: MSS 1460, NOP, window scale, SACK permitted, timestamps.
Bytes tcpSyn(std::size_t data) {
    Bytes t = {0x9c, 0x40, 0x00, 0x50, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
               0xa0,  // 40-byte header
               0x02, 0x72, 0x10, 0,    0,    0,    0};
    const Bytes opts = {2, 4,  0x05, 0xb4,                     // MSS 1460
                        1,                                     // NOP
                        3, 3,  7,                              // window scale 7
                        4, 2,                                  // SACK permitted
                        8, 10, 0,    0,    0, 1, 0, 0, 0, 0};  // timestamps
    t.insert(t.end(), opts.begin(), opts.end());
    t.insert(t.end(), data, 0xAB);
    return t;
}

std::uint64_t optionBit(unsigned kind) {
    return std::uint64_t{1} << ((kind & 0xF8) + (7 - (kind & 7)));
}

TEST(ParserPluginFields, TcpSeqAckOptionsMssAndPayloadOnTheWire) {
    const ParsedPacket p = parse(ethIpv4(6, tcpSyn(10)));
    EXPECT_EQ(p.tcpSeq, 0x11223344U);
    EXPECT_EQ(p.tcpAck, 0x55667788U);
    EXPECT_EQ(p.tcpMss, 1460);
    EXPECT_EQ(p.tcpMssRaw, (1460U << 16) | 0x0103U) << "ipfixprobe: MSS, then NOP and kind 3";
    EXPECT_EQ(p.tcpOptions,
              optionBit(1) | optionBit(2) | optionBit(3) | optionBit(4) | optionBit(8));
    EXPECT_EQ(p.payloadWireLen, 10U);
    EXPECT_EQ(p.payload().size(), 10U);
    EXPECT_EQ(p.payload()[0], 0xAB);
    EXPECT_EQ(p.ipFlags, 2) << "DF";
}

TEST(ParserPluginFields, PayloadOnTheWireCountsWhatTheCaptureCutOff) {
    Bytes u(108, 0xCD);  // UDP 53 -> 53, length 108, 100 payload bytes
    const std::uint8_t header[] = {0x00, 0x35, 0x00, 0x35, 0x00, 108, 0, 0};
    std::memcpy(u.data(), header, sizeof header);
    const Bytes frame = ethIpv4(17, u);
    const ParsedPacket p = parse(frame, 14 + 20 + 8 + 30);  // 30 of 100 payload bytes captured
    EXPECT_EQ(p.payloadWireLen, 100U);
    EXPECT_EQ(p.payload().size(), 30U);
}

TEST(ParserPluginFields, IcmpHeaderIsPayloadAsInIpfixprobe) {
    Bytes icmp(64, 0x11);  // echo request, 56 data bytes
    const std::uint8_t header[] = {8, 0, 0, 0, 0x12, 0x34, 0, 1};
    std::memcpy(icmp.data(), header, sizeof header);
    const ParsedPacket p = parse(ethIpv4(1, icmp, 0x0000, 0));
    EXPECT_EQ(p.payloadWireLen, 64U) << "IP length 84 - 20 (ipfixprobe pstats: 88 -> 68)";
    EXPECT_EQ(p.payload().size(), 64U);
    EXPECT_EQ(p.payload()[0], 8) << "starts at the ICMP header";
    EXPECT_EQ(p.ipFlags, 0);
}

TEST(ParserPluginFields, EthernetPaddingIsNeverPayload) {
    const ParsedPacket p = parse(ethIpv4(6, tcpSyn(0), 0x4000, 6));
    EXPECT_EQ(p.payloadWireLen, 0U);
    EXPECT_TRUE(p.payload().empty());
}

TEST(ParserPluginFields, MalformedOptionLengthsStopTheOptionWalk) {
    Bytes t = tcpSyn(0);
    t[20] = 3;  // window scale where MSS was ...
    t[21] = 0;  // ... with length 0: ipfixprobe's parser throws; rowprobe stops walking
    const ParsedPacket p = parse(ethIpv4(6, t));
    EXPECT_EQ(p.tcpOptions, optionBit(3));
    EXPECT_EQ(p.tcpMss, 0);
}

TEST(ParserPluginFields, OptionKindsBeyondTheBitmapAreSkipped) {
    Bytes t = tcpSyn(0);
    t[20] = 253;  // RFC 4727 experimental option, 4 bytes, where MSS was: no bit in IE 209
    const ParsedPacket p = parse(ethIpv4(6, t));
    EXPECT_EQ(p.tcpOptions, optionBit(1) | optionBit(3) | optionBit(4) | optionBit(8));
    EXPECT_EQ(p.tcpMss, 0);
}

}  // namespace
}  // namespace rowprobe
