// OpenVPN state machine: a UDP and a TCP handshake up to the data state, the confidence rules
// at the end of a flow, invalid packets resetting the machine, RTP not counted; hostile input.
#include "process/ovpn/ovpn_parser.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "l7_test_bytes.hpp"

namespace {

using namespace rowprobe::ovpn;

const std::array<std::uint8_t, 16> kClient = {0, 0, 0,    0,    0,  0, 0, 0,
                                              0, 0, 0xff, 0xff, 10, 0, 0, 1};
const std::array<std::uint8_t, 16> kServer = {0, 0, 0,    0,    0,  0, 0, 0,
                                              0, 0, 0xff, 0xff, 10, 0, 0, 2};

/// A packet with `opcode` at `at` (0 for UDP, 2 for TCP) and `size` bytes.
std::vector<std::uint8_t> packet(std::uint8_t opcode, std::size_t size, std::size_t at = 0) {
    std::vector<std::uint8_t> p(size, 0x33);
    p[at] = static_cast<std::uint8_t>(opcode << 3 | 1);
    return p;
}

/// A control packet with a TLS handshake record of `hsType` where OpenVPN puts it.
std::vector<std::uint8_t> control(std::uint8_t hsType, std::size_t at = 0) {
    auto p = packet(4, 120, at);
    const std::size_t off = at + (hsType == 1 ? 14 : 26);
    p[off] = 0x16;
    p[off + 5] = hsType;
    return p;
}

void feed(OvpnState& s, const std::vector<std::uint8_t>& p, bool fromClient, std::uint8_t proto,
          std::uint32_t wire = 0) {
    applyOvpnPacket({.payload = p,
                     .payloadWireLen = wire != 0 ? wire : static_cast<std::uint32_t>(p.size()),
                     .proto = proto,
                     .src = fromClient ? &kClient : &kServer,
                     .dst = fromClient ? &kServer : &kClient},
                    s);
}

void handshake(OvpnState& s, std::uint8_t proto) {
    const std::size_t at = proto == 6 ? 2 : 0;
    feed(s, packet(7, 60, at), true, proto);  // hard reset client v2
    EXPECT_EQ(s.status, kResetClient);
    feed(s, packet(8, 60, at), false, proto);  // hard reset server v2
    EXPECT_EQ(s.status, kResetServer);
    feed(s, packet(5, 30, at), true, proto);  // ack
    EXPECT_EQ(s.status, kAck);
    feed(s, control(1, at), true, proto);  // ClientHello
    EXPECT_EQ(s.status, kClientHello);
    feed(s, control(2, at), false, proto);  // ServerHello
    EXPECT_EQ(s.status, kServerHello);
    feed(s, packet(5, 30, at), true, proto);
    EXPECT_EQ(s.status, kControlAck);
    feed(s, packet(9, 600, at), true, proto);  // data v2
    EXPECT_EQ(s.status, kData);
}

}  // namespace

TEST(OvpnParser, UdpAndTcpHandshakesReachTheDataState) {
    OvpnState udp;
    handshake(udp, 17);
    OvpnState tcp;
    handshake(tcp, 6);
}

TEST(OvpnParser, ConfidenceAtTheEndOfTheFlow) {
    OvpnState s;
    handshake(s, 17);
    EXPECT_FALSE(finishOvpn(5, s));  // too short to report
    EXPECT_TRUE(finishOvpn(21, s));
    EXPECT_EQ(s.confidence, 100);

    // No handshake, but mostly large data packets: share × 80.
    OvpnState d;
    for (int i = 0; i < 30; ++i) feed(d, packet(6, 800), i % 2 == 0, 17);
    for (int i = 0; i < 10; ++i) feed(d, packet(0, 800), true, 17);  // large, not data
    EXPECT_EQ(d.largePackets, 40U);
    EXPECT_EQ(d.dataPackets, 30U);
    EXPECT_TRUE(finishOvpn(40, d));
    EXPECT_EQ(d.confidence, 60);  // 0.75 × 80

    // Below 60 % data: 0, but still reported.
    OvpnState low;
    for (int i = 0; i < 10; ++i) feed(low, packet(6, 800), true, 17);
    for (int i = 0; i < 20; ++i) feed(low, packet(0, 800), true, 17);
    EXPECT_TRUE(finishOvpn(30, low));
    EXPECT_EQ(low.confidence, 0);
}

TEST(OvpnParser, InvalidPacketsInARowResetTheMachine) {
    // ipfixprobe's counter goes up twice per invalid packet (once in the transition, once at
    // the end) and resets at 4: the third invalid packet in a row resets the machine.
    OvpnState s;
    feed(s, packet(1, 60), true, 17);
    ASSERT_EQ(s.status, kResetClient);
    for (int i = 0; i < 2; ++i) feed(s, packet(2, 60), true, 17);  // server reset from the client
    EXPECT_EQ(s.status, kResetClient);
    feed(s, packet(2, 60), true, 17);
    EXPECT_EQ(s.status, kNull);
}

TEST(OvpnParser, RtpIsNotALargePacket) {
    OvpnState s;
    auto rtp = packet(0, 800);
    rtp[0] = 0x80;  // version 2
    rtp[1] = 0x00;  // payload type 0 (PCMU)
    feed(s, rtp, true, 17);
    EXPECT_EQ(s.largePackets, 0U);
    rtp[1] = 72;  // 72..95 are RTCP types: not RTP
    feed(s, rtp, true, 17);
    EXPECT_EQ(s.largePackets, 1U);
    feed(s, rtp, true, 6);  // RTP is only looked for over UDP
    EXPECT_EQ(s.largePackets, 2U);
}

TEST(OvpnParser, TruncatedAndHostileInput) {
    using rowprobe::test::forEachMutation;
    using rowprobe::test::forEachPrefix;
    for (const std::uint8_t proto : {std::uint8_t{6}, std::uint8_t{17}, std::uint8_t{1}}) {
        const std::size_t at = proto == 6 ? 2 : 0;
        for (const auto& m : {control(1, at), control(2, at), packet(9, 700, at)}) {
            OvpnState s;
            handshake(s, proto == 1 ? 17 : proto);
            forEachPrefix(m, [&](std::span<const std::uint8_t> p) {
                applyOvpnPacket({.payload = p,
                                 .payloadWireLen = 1500,
                                 .proto = proto,
                                 .src = &kClient,
                                 .dst = &kServer},
                                s);
            });
            forEachMutation(m, 2000, [&](std::span<const std::uint8_t> p) {
                applyOvpnPacket({.payload = p,
                                 .payloadWireLen = 0,
                                 .proto = proto,
                                 .src = &kServer,
                                 .dst = &kClient},
                                s);
            });
            EXPECT_LE(s.status, kData);
        }
    }
}
