// WireGuard classification: sizes, reserved bytes, peer indexes per message type and
// direction, the DNS look-alike confidence, a new session's initiation; hostile input.
#include "process/wg/wg_parser.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "l7_test_bytes.hpp"

namespace {

using rowprobe::wg::applyWgPacket;
using rowprobe::wg::WgState;
using rowprobe::wg::WgVerdict;

std::vector<std::uint8_t> message(std::uint8_t type, std::size_t size, std::uint32_t a,
                                  std::uint32_t b = 0) {
    std::vector<std::uint8_t> m(size, 0xAB);
    m[0] = type;
    m[1] = m[2] = m[3] = 0;
    for (int i = 0; i < 4; ++i) {
        m[4 + i] = static_cast<std::uint8_t>(a >> (8 * i));  // little-endian indexes
        if (size >= 12) m[8 + i] = static_cast<std::uint8_t>(b >> (8 * i));
    }
    return m;
}

}  // namespace

TEST(WgParser, HandshakeFillsBothPeersInFlowOrientation) {
    WgState s;
    EXPECT_EQ(applyWgPacket(message(1, 148, 0x11223344), true, s), WgVerdict::Wg);
    EXPECT_EQ(s.srcPeer, 0x11223344U);
    EXPECT_EQ(s.dstPeer, 0U);
    EXPECT_EQ(s.confidence, 100);
    // The responder's answer: its own index first, then the initiator's.
    EXPECT_EQ(applyWgPacket(message(2, 92, 0x55667788, 0x11223344), false, s), WgVerdict::Wg);
    EXPECT_EQ(s.srcPeer, 0x11223344U);
    EXPECT_EQ(s.dstPeer, 0x55667788U);
    // Transport data carries the receiver's index.
    EXPECT_EQ(applyWgPacket(message(4, 32, 0x55667788), true, s), WgVerdict::Wg);
    EXPECT_EQ(s.dstPeer, 0x55667788U);
    EXPECT_EQ(applyWgPacket(message(4, 1400, 0x99999999), false, s), WgVerdict::Wg);
    EXPECT_EQ(s.srcPeer, 0x99999999U);
    // Cookie reply: the receiver's index.
    EXPECT_EQ(applyWgPacket(message(3, 64, 0x01020304), false, s), WgVerdict::Wg);
    EXPECT_EQ(s.srcPeer, 0x01020304U);
}

TEST(WgParser, ExactSizesAndReservedBytes) {
    WgState s;
    EXPECT_EQ(applyWgPacket(message(1, 147, 1), true, s), WgVerdict::NotWg);
    EXPECT_EQ(applyWgPacket(message(1, 149, 1), true, s), WgVerdict::NotWg);
    EXPECT_EQ(applyWgPacket(message(2, 93, 1, 2), true, s), WgVerdict::NotWg);
    EXPECT_EQ(applyWgPacket(message(3, 65, 1), true, s), WgVerdict::NotWg);
    EXPECT_EQ(applyWgPacket(message(4, 31, 1), true, s), WgVerdict::NotWg);
    EXPECT_EQ(applyWgPacket(message(5, 64, 1), true, s), WgVerdict::NotWg);
    EXPECT_EQ(applyWgPacket(message(0, 64, 1), true, s), WgVerdict::NotWg);
    auto m = message(4, 64, 1);
    m[2] = 1;
    EXPECT_EQ(applyWgPacket(m, true, s), WgVerdict::NotWg);
    EXPECT_EQ(s.srcPeer, 0U);  // nothing changed
    EXPECT_EQ(s.dstPeer, 0U);
    EXPECT_EQ(s.confidence, 0);
}

TEST(WgParser, DnsLookAlikeGetsConfidenceOne) {
    // Bytes 4..7 = 00 01 00 00 read like a DNS header's "no flags, one question" after an id
    // of 0x0400 (type 4, reserved zeros): ipfixprobe's look-alike case.
    WgState s;
    auto m = message(4, 40, 0x00000100);
    EXPECT_EQ(applyWgPacket(m, true, s), WgVerdict::Wg);
    EXPECT_EQ(s.confidence, 1);
    EXPECT_EQ(applyWgPacket(message(4, 40, 0x00000200), true, s), WgVerdict::Wg);
    EXPECT_EQ(s.confidence, 100);
}

TEST(WgParser, InitiationWithAnotherIndexIsANewSession) {
    WgState s;
    ASSERT_EQ(applyWgPacket(message(1, 148, 7), true, s), WgVerdict::Wg);
    EXPECT_EQ(applyWgPacket(message(1, 148, 7), true, s), WgVerdict::Wg);  // retransmission
    EXPECT_EQ(applyWgPacket(message(1, 148, 8), true, s), WgVerdict::NewSession);
    EXPECT_EQ(s.srcPeer, 7U);  // unchanged: the new flow starts from a clean state
    // From the other side the responder's slot is still free.
    EXPECT_EQ(applyWgPacket(message(1, 148, 9), false, s), WgVerdict::Wg);
    EXPECT_EQ(s.dstPeer, 9U);
}

TEST(WgParser, TruncatedAndHostileInput) {
    using rowprobe::test::forEachMutation;
    using rowprobe::test::forEachPrefix;
    for (const auto& m :
         {message(1, 148, 1), message(2, 92, 1, 2), message(3, 64, 3), message(4, 100, 4)}) {
        forEachPrefix(m, [](std::span<const std::uint8_t> p) {
            WgState s;
            const WgVerdict v = applyWgPacket(p, true, s);
            if (v == WgVerdict::NotWg) {
                EXPECT_EQ(s.confidence, 0);
            }
        });
        forEachMutation(m, 2000, [](std::span<const std::uint8_t> p) {
            WgState s;
            (void)applyWgPacket(p, false, s);
        });
    }
}
