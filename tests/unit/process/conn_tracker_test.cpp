// The conn plugin's tracker (process/conn/conn_tracker.hpp) on hand-made TCP and UDP exchanges:
// one for each of Zeek's conn_state values, its history letters (flips, logarithmic repeats),
// and the byte counts from sequence numbers (wrap included). The expected values follow
// Zeek's rules as its conn.log baselines show them (e.g. "REJ Sr", "RSTRH ^r", "SHR ^fA").
#include "process/conn/conn_tracker.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace rowprobe::conn {
namespace {

constexpr std::uint8_t kFin = 0x01;
constexpr std::uint8_t kSyn = 0x02;
constexpr std::uint8_t kRst = 0x04;
constexpr std::uint8_t kAck = 0x10;
constexpr std::uint32_t kC = 1000;  // client ISN
constexpr std::uint32_t kS = 5000;  // server ISN

struct Pkt {
    bool fromInitiator;
    std::uint8_t flags;
    std::uint32_t seq;
    std::uint32_t ack;
    std::uint32_t len = 0;
    std::uint16_t window = 65535;
};

// A TCP flow whose initiator is (40000 -> `server`), unless `initiatorPort` says otherwise.
ConnSummary run(std::initializer_list<Pkt> pkts, std::uint16_t initiatorPort = 40000,
                std::uint16_t responderPort = 80, std::uint8_t proto = 6) {
    static ConnState s;
    s = ConnState{};
    for (const Pkt& p : pkts) {
        ConnPacket c;
        c.proto = proto;
        c.fromInitiator = p.fromInitiator;
        c.srcPort = p.fromInitiator ? initiatorPort : responderPort;
        c.dstPort = p.fromInitiator ? responderPort : initiatorPort;
        c.tcpFlags = p.flags;
        c.seq = p.seq;
        c.ack = p.ack;
        c.window = p.window;
        c.payloadLen = p.len;
        connPacket(s, c);
    }
    return connSummary(s);
}

std::string show(const ConnSummary& s) {
    return std::string(s.state) + " " + std::string(s.history);
}

TEST(ConnTracker, S0SynWithoutReply) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0}})), "S0 S");
    EXPECT_EQ(show(run({{true, kSyn, kC, 0}, {true, kSyn, kC, 0}})), "S0 S");  // same seq
}

TEST(ConnTracker, RejResponderResetsTheSyn) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0}, {false, kRst | kAck, 0, kC + 1}})), "REJ Sr");
}

TEST(ConnTracker, SfNormalEstablishmentAndTerminationWithBytes) {
    const auto s = run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1},
                        {true, kAck, kC + 1, kS + 1, 100},
                        {false, kAck, kS + 1, kC + 101, 200},
                        {true, kFin | kAck, kC + 101, kS + 201},
                        {false, kFin | kAck, kS + 201, kC + 102},
                        {true, kAck, kC + 102, kS + 202}});
    EXPECT_EQ(show(s), "SF ShADdFf");
    EXPECT_EQ(s.origBytes, 100U);
    EXPECT_EQ(s.respBytes, 200U);
    EXPECT_EQ(s.missedBytes, 0U);
    EXPECT_FALSE(s.flipped);
}

TEST(ConnTracker, S1EstablishedNotTerminated) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1, 10},
                        {false, kAck, kS + 1, kC + 11, 20}})),
              "S1 ShDd");
}

TEST(ConnTracker, S2AndS3OneSideClosed) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1},
                        {true, kFin | kAck, kC + 1, kS + 1}})),
              "S2 ShAF");
    EXPECT_EQ(show(run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1},
                        {false, kFin | kAck, kS + 1, kC + 1}})),
              "S3 ShAf");
}

TEST(ConnTracker, RstoAndRstrAfterEstablishment) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1},
                        {true, kRst, kC + 1, 0}})),
              "RSTO ShAR");
    EXPECT_EQ(show(run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1},
                        {false, kRst, kS + 1, 0}})),
              "RSTR ShAr");
}

TEST(ConnTracker, Rstos0SynThenOriginatorReset) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0}, {true, kRst, kC + 1, 0}})), "RSTOS0 SR");
}

TEST(ConnTracker, RstrhResetFromAServerPortFlipsTheRoles) {
    // A RST from port 80 to a client port first: Zeek makes port 80 the responder ('^').
    EXPECT_EQ(show(run({{true, kRst, kS, 0}}, 80, 40000)), "RSTRH ^r");
    // Data from the originator, then the responder's RST.
    EXPECT_EQ(show(run({{true, kAck, kC, kS, 50}, {false, kRst, kS, 0}})), "RSTRH Dr");
}

TEST(ConnTracker, ShAndShrHalfOpenCloses) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0}, {true, kFin, kC + 1, 0}})), "SH SF");
    // The server's FIN first (flipped), then the client's pure ACK.
    EXPECT_EQ(show(run({{true, kFin | kAck, kS, kC}, {false, kAck, kC, kS + 1}}, 80, 40000)),
              "SHR ^fA");
}

TEST(ConnTracker, OthMidstream) {
    EXPECT_EQ(show(run({{true, kAck | 0x08, kC, kS, 100}})), "OTH D");
}

TEST(ConnTracker, SynAckFirstFlipsAtTheFirstAckOrData) {
    // Neither port is a likely server port: the SYN-ACK sender stays the originator until the
    // other side sends a pure ACK, then Zeek flips the roles and rewrites the history "^h".
    const auto s =
        run({{true, kSyn | kAck, kS, kC + 1}, {false, kAck, kC + 1, kS + 1}}, 5555, 6666);
    EXPECT_EQ(show(s), "OTH ^hA");
    EXPECT_TRUE(s.flipped);
}

TEST(ConnTracker, RetransmissionsAreLoggedAtOneAndTen) {
    ConnState st{};
    const auto feed = [&](bool fwd, std::uint8_t flags, std::uint32_t seq, std::uint32_t ack,
                          std::uint32_t len) {
        connPacket(st, {.proto = 6,
                        .fromInitiator = fwd,
                        .srcPort = static_cast<std::uint16_t>(fwd ? 40000 : 80),
                        .dstPort = static_cast<std::uint16_t>(fwd ? 80 : 40000),
                        .tcpFlags = flags,
                        .seq = seq,
                        .ack = ack,
                        .window = 100,
                        .payloadLen = len});
    };
    feed(true, kSyn, kC, 0, 0);
    feed(false, kSyn | kAck, kS, kC + 1, 0);
    feed(true, kAck, kC + 1, kS + 1, 0);
    for (int i = 0; i < 11; ++i) feed(true, kAck, kC + 1, kS + 1, 100);  // 10 retransmissions
    EXPECT_EQ(show(connSummary(st)), "S1 ShADTT");
    for (int i = 0; i < 90; ++i) feed(true, kAck, kC + 1, kS + 1, 100);  // 100 in all
    EXPECT_EQ(connSummary(st).history, "ShADTTT");
}

TEST(ConnTracker, ZeroWindowIsLogged) {
    EXPECT_EQ(show(run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1},
                        {false, kAck, kS + 1, kC + 1, 0, 0}})),
              "S1 ShAaw");
}

TEST(ConnTracker, ContentGapIsLoggedAndCountsMissedBytes) {
    const auto s = run({{true, kSyn, kC, 0},
                        {false, kSyn | kAck, kS, kC + 1},
                        {true, kAck, kC + 1, kS + 1, 100},
                        {true, kAck, kC + 201, kS + 1, 100},  // 100 bytes never seen
                        {false, kAck, kS + 1, kC + 301}});
    EXPECT_EQ(show(s), "S1 ShDaG");
    EXPECT_EQ(s.missedBytes, 100U);
    EXPECT_EQ(s.origBytes, 300U);  // from the sequence numbers, the gap included
}

TEST(ConnTracker, BytesAcrossASequenceWrap) {
    const std::uint32_t isn = 0xFFFFFF00U;
    const auto s = run({{true, kSyn, isn, 0},
                        {false, kSyn | kAck, kS, isn + 1},
                        {true, kAck, isn + 1, kS + 1, 1000},
                        {false, kAck, kS + 1, isn + 1001},
                        {true, kFin | kAck, isn + 1001, kS + 1},
                        {false, kFin | kAck, kS + 1, isn + 1002}});
    EXPECT_EQ(show(s), "SF ShDaFf");
    EXPECT_EQ(s.origBytes, 1000U);
    EXPECT_EQ(s.respBytes, 0U);
}

TEST(ConnTracker, UdpStatesAndServerPortFlip) {
    EXPECT_EQ(show(run({{true, 0, 0, 0, 40}}, 40000, 53, 17)), "S0 D");
    const auto sf = run({{true, 0, 0, 0, 40}, {false, 0, 0, 0, 80}}, 40000, 53, 17);
    EXPECT_EQ(show(sf), "SF Dd");
    EXPECT_EQ(sf.origBytes, 40U);
    EXPECT_EQ(sf.respBytes, 80U);
    // A DHCP server (67) answering a client (68, not a server port): Zeek flips, "SHR ^d".
    EXPECT_EQ(show(run({{true, 0, 0, 0, 300}}, 67, 68, 17)), "SHR ^d");
}

TEST(ConnTracker, OtherProtocolsAreOth) {
    EXPECT_EQ(show(run({{true, 0, 0, 0, 64}, {false, 0, 0, 0, 64}}, 0, 0, 1)), "OTH ");
}

TEST(ConnTracker, LikelyServerPortsAreZeeksServerPortsOnly) {
    EXPECT_TRUE(likelyServerPort(6, 443));
    EXPECT_TRUE(likelyServerPort(17, 67));
    EXPECT_FALSE(likelyServerPort(17, 68));  // DHCP's client port
    EXPECT_FALSE(likelyServerPort(6, 40000));
    EXPECT_FALSE(likelyServerPort(1, 80));
}

}  // namespace
}  // namespace rowprobe::conn
