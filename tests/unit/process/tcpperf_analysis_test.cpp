// The tcpperf TCP analysis on hand-made exchanges, one metric per test: handshake RTTs, MSS and
// window scale, RTT samples and Karn's rule, loss with fast and timeout retransmission,
// reordering, spurious retransmission, duplicate ACKs, zero windows and their probes,
// keep-alives, sequence numbers wrapping at 2^32, time stepping back, hostile option lists;
// and the plugin on real frames (options read from the SYNs, non-TCP flows without instance).
#include "process/tcpperf/tcpperf_analysis.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "flow_driver.hpp"
#include "rowprobe/errors.hpp"

namespace rowprobe::tcpperf {
namespace {

constexpr std::uint8_t kC = 0;  // client (the flow's forward direction)
constexpr std::uint8_t kS = 1;  // server
constexpr std::uint8_t kPshAck = 0x18;
constexpr std::uint8_t kSynAck = kSyn | kAck;

// A connection fed segment by segment; times in µs.
class Conn {
public:
    SegmentVerdict send(std::uint8_t dir, std::uint64_t us, std::uint8_t flags, std::uint32_t seq,
                        std::uint32_t ack, std::uint32_t len = 0, std::uint16_t window = 1000,
                        std::uint16_t mss = 0, std::uint8_t wscale = kNoWindowScale) {
        TcpSegment seg;
        seg.tsNs = us * 1000;
        seg.seq = seq;
        seg.ack = ack;
        seg.len = len;
        seg.window = window;
        seg.flags = flags;
        seg.dir = dir;
        seg.mss = mss;
        seg.wscale = wscale;
        return tcpperfUpdate(s, seg);
    }
    // SYN at t0, SYN-ACK at t0 + a, ACK at t0 + a + b; client ISN c, server ISN v.
    void handshake(std::uint32_t c, std::uint32_t v, std::uint64_t t0 = 1000,
                   std::uint64_t a = 20'000, std::uint64_t b = 300) {
        send(kC, t0, kSyn, c, 0, 0, 64240, 1460, 7);
        send(kS, t0 + a, kSynAck, v, c + 1, 0, 65160, 1400, 9);
        send(kC, t0 + a + b, kAck, c + 1, v + 1, 0, 502);
    }
    const TcpPerfDir& client() const { return s.dir[kC]; }
    const TcpPerfDir& server() const { return s.dir[kS]; }
    const TcpPerfRtt& clientRtt() const { return s.rtt[kC]; }
    const TcpPerfRtt& serverRtt() const { return s.rtt[kS]; }

    TcpPerfState s{};
};

TEST(TcpperfAnalysis, HandshakeRttsAreSynToSynAckAndSynAckToAck) {
    Conn c;
    c.handshake(100, 5000, 1000, 20'000, 300);
    EXPECT_EQ(c.s.rttSynUs, 20'000U);
    EXPECT_EQ(c.s.rttSynAckUs, 300U);
    EXPECT_EQ(c.s.initialRttUs, 20'300U);  // Wireshark's iRTT: the two summed
    EXPECT_EQ(c.client().retxPkts, 0U);
    EXPECT_EQ(c.server().retxPkts, 0U);
}

TEST(TcpperfAnalysis, MssAndWindowScaleAreWhatEachSynAnnounced) {
    Conn c;
    c.handshake(100, 5000);
    EXPECT_EQ(c.client().mss, 1460);
    EXPECT_EQ(c.server().mss, 1400);
    EXPECT_EQ(announcedWindowScale(c.client()), 7);
    EXPECT_EQ(announcedWindowScale(c.server()), 9);

    Conn none;  // no options at all: no MSS, no scaling
    none.send(kC, 0, kSyn, 1, 0);
    none.send(kS, 10, kSynAck, 9, 2);
    EXPECT_EQ(none.client().mss, 0);
    EXPECT_EQ(announcedWindowScale(none.client()), kNoWindowScale);
    EXPECT_EQ(announcedWindowScale(none.server()), kNoWindowScale);

    Conn big;  // a shift above 14 counts as 14 (RFC 7323)
    big.send(kC, 0, kSyn, 1, 0, 0, 1000, 536, 15);
    EXPECT_EQ(announcedWindowScale(big.client()), 14);
}

TEST(TcpperfAnalysis, RetransmittedSynRestartsTheHandshakeRttAndCountsAsRetransmission) {
    Conn c;
    c.send(kC, 0, kSyn, 100, 0);
    c.send(kC, 1'000'000, kSyn, 100, 0);  // the SYN again after 1 s
    c.send(kS, 1'030'000, kSynAck, 7000, 101);
    c.send(kC, 1'030'500, kAck, 101, 7001);
    EXPECT_EQ(c.s.rttSynUs, 30'000U);  // from the latest SYN
    EXPECT_EQ(c.s.rttSynAckUs, 500U);
    EXPECT_EQ(c.client().retxPkts, 1U);
}

TEST(TcpperfAnalysis, RttSampleFromTheAckOfExactlyTheSegmentsEnd) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kC, 100'000, kPshAck, 101, 5001, 200);  // request
    const auto v = c.send(kS, 130'000, kAck, 5001, 301);
    EXPECT_TRUE(v.rttSample);
    EXPECT_EQ(v.rttUs, 30'000U);
    c.send(kS, 131'000, kPshAck, 5001, 301, 1000);  // response
    c.send(kC, 131'400, kAck, 301, 6001);
    EXPECT_EQ(c.clientRtt().rttCount, 1U);
    EXPECT_EQ(c.clientRtt().rttMinUs, 30'000U);
    EXPECT_EQ(c.serverRtt().rttCount, 1U);
    EXPECT_EQ(c.serverRtt().rttMinUs, 400U);
    EXPECT_EQ(c.serverRtt().rttMaxUs, 400U);
    EXPECT_EQ(rttMeanUs(c.serverRtt()), 400U);
}

TEST(TcpperfAnalysis, CumulativeAckSamplesOnlyTheSegmentItEndsAt) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kS, 100'000, kPshAck, 5001, 101, 1000);
    c.send(kS, 100'100, kPshAck, 6001, 101, 1000);
    const auto v = c.send(kC, 140'100, kAck, 101, 7001);  // delayed ACK of both
    EXPECT_TRUE(v.rttSample);
    EXPECT_EQ(v.rttUs, 40'000U);  // from the second segment, not 40.1 ms from the first
    EXPECT_EQ(c.serverRtt().rttCount, 1U);
    // an ACK beyond everything timed gives no sample
    c.send(kS, 200'000, kPshAck, 7001, 101, 500);
    EXPECT_FALSE(c.send(kC, 250'000, kAck, 101, 7600).rttSample);
    EXPECT_EQ(c.serverRtt().rttCount, 1U);
}

TEST(TcpperfAnalysis, KarnsRuleNoSampleFromARetransmittedSegment) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kS, 100'000, kPshAck, 5001, 101, 1000);
    const auto r = c.send(kS, 400'000, kPshAck, 5001, 101, 1000);  // timeout, sent again
    EXPECT_EQ(r.cls, SegmentClass::Retransmission);
    const auto v = c.send(kC, 430'000, kAck, 101, 6001);
    EXPECT_FALSE(v.rttSample);  // 30 ms or 330 ms? ambiguous: no sample
    EXPECT_EQ(c.serverRtt().rttCount, 0U);
    EXPECT_EQ(c.server().retxPkts, 1U);
    EXPECT_EQ(c.server().retxBytes, 1000U);
    // new data after it is timed again
    c.send(kS, 500'000, kPshAck, 6001, 101, 100);
    EXPECT_TRUE(c.send(kC, 525'000, kAck, 101, 6101).rttSample);
    EXPECT_EQ(c.serverRtt().rttMinUs, 25'000U);
}

TEST(TcpperfAnalysis, LossBeforeTheProbeDuplicateAcksAndFastRetransmission) {
    Conn c;
    c.handshake(100, 5000);
    // the server sends 4 segments of 1000; the second is lost before the probe
    c.send(kS, 100'000, kPshAck, 5001, 101, 1000);
    c.send(kS, 100'020, kPshAck, 7001, 101, 1000);
    c.send(kS, 100'030, kPshAck, 8001, 101, 1000);
    c.send(kC, 130'000, kAck, 101, 6001, 0, 502);  // ACK of the first
    const auto d1 = c.send(kC, 130'010, kAck, 101, 6001, 0, 502);
    const auto d2 = c.send(kC, 130'020, kAck, 101, 6001, 0, 502);
    EXPECT_TRUE(d1.dupAck);
    EXPECT_TRUE(d2.dupAck);
    EXPECT_EQ(c.client().dupAcks, 2U);
    const auto fr = c.send(kS, 135'000, kPshAck, 6001, 101, 1000);  // within 20 ms
    EXPECT_EQ(fr.cls, SegmentClass::FastRetransmission);
    EXPECT_EQ(c.server().retxPkts, 1U);
    EXPECT_EQ(c.server().oooPkts, 0U);
    // the ACK that follows is not a duplicate
    EXPECT_FALSE(c.send(kC, 165'000, kAck, 101, 9001, 0, 502).dupAck);
}

TEST(TcpperfAnalysis, LossAfterTheProbeIsARetransmissionAfterTheTimeout) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kC, 100'000, kPshAck, 101, 5001, 300);
    // no ACK (lost after the probe): the client sends it again after 1 s
    const auto r = c.send(kC, 1'100'000, kPshAck, 101, 5001, 300);
    EXPECT_EQ(r.cls, SegmentClass::Retransmission);
    EXPECT_EQ(c.client().retxPkts, 1U);
    EXPECT_EQ(c.client().retxBytes, 300U);
}

TEST(TcpperfAnalysis, ReorderingWithinTheInitialRttIsOutOfOrderNotRetransmission) {
    Conn c;
    c.handshake(100, 5000, 1000, 20'000, 300);  // initial RTT 20.3 ms
    c.send(kS, 100'000, kPshAck, 5001, 101, 1000);
    c.send(kS, 100'010, kPshAck, 7001, 101, 1000);  // the third arrives before the second
    const auto o = c.send(kS, 100'500, kPshAck, 6001, 101, 1000);
    EXPECT_EQ(o.cls, SegmentClass::OutOfOrder);
    EXPECT_EQ(c.server().oooPkts, 1U);
    EXPECT_EQ(c.server().retxPkts, 0U);
    // the same hole filled only after the initial RTT is a retransmission
    c.send(kS, 200'000, kPshAck, 9001, 101, 1000);
    const auto r = c.send(kS, 230'000, kPshAck, 8001, 101, 1000);
    EXPECT_EQ(r.cls, SegmentClass::Retransmission);
}

TEST(TcpperfAnalysis, WithoutHandshakeReorderingThresholdIs3ms) {
    Conn c;  // capture starts mid-connection
    c.send(kS, 0, kPshAck, 5001, 101, 1000);
    c.send(kS, 10, kPshAck, 7001, 101, 1000);
    EXPECT_EQ(c.send(kS, 2'900, kPshAck, 6001, 101, 1000).cls, SegmentClass::OutOfOrder);
    c.send(kS, 10'000, kPshAck, 9001, 101, 1000);
    EXPECT_EQ(c.send(kS, 13'500, kPshAck, 8001, 101, 1000).cls, SegmentClass::Retransmission);
}

TEST(TcpperfAnalysis, DataAlreadyAcknowledgedIsASpuriousRetransmission) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kS, 100'000, kPshAck, 5001, 101, 1000);
    c.send(kC, 130'000, kAck, 101, 6001);
    const auto v = c.send(kS, 600'000, kPshAck, 5001, 101, 1000);
    EXPECT_EQ(v.cls, SegmentClass::Spurious);
    EXPECT_EQ(c.server().retxPkts, 1U);
}

TEST(TcpperfAnalysis, ZeroWindowAnnouncementsProbesAndTheirAcks) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kS, 100'000, kPshAck, 5001, 101, 1000);
    const auto z = c.send(kC, 130'000, kAck, 101, 6001, 0, 0);  // receiver full
    EXPECT_TRUE(z.zeroWindow);
    // the sender probes with one byte at the next sequence number, twice
    const auto p1 = c.send(kS, 330'000, kPshAck, 6001, 101, 1);
    EXPECT_TRUE(p1.zeroWindowProbe);
    EXPECT_EQ(p1.cls, SegmentClass::None);
    const auto a1 = c.send(kC, 360'000, kAck, 101, 6001, 0, 0);  // still zero
    EXPECT_FALSE(a1.dupAck);
    const auto p2 = c.send(kS, 760'000, kPshAck, 6001, 101, 1);
    EXPECT_TRUE(p2.zeroWindowProbe);
    EXPECT_EQ(p2.cls, SegmentClass::None);
    c.send(kC, 790'000, kAck, 101, 6001, 0, 0);
    EXPECT_EQ(c.client().zeroWindows, 3U);
    EXPECT_EQ(c.client().dupAcks, 0U);
    EXPECT_EQ(c.server().retxPkts, 0U);
    // the window opens: data flows at the probe's sequence number without a retransmission
    c.send(kC, 800'000, kAck, 101, 6001, 0, 502);
    EXPECT_EQ(c.send(kS, 800'100, kPshAck, 6001, 101, 1000).cls, SegmentClass::None);
    EXPECT_EQ(c.client().zeroWindows, 3U);
}

TEST(TcpperfAnalysis, KeepAliveIsNeitherRetransmissionNorItsAckADuplicate) {
    Conn c;
    c.handshake(100, 5000);
    c.send(kC, 100'000, kPshAck, 101, 5001, 10);
    c.send(kS, 110'000, kAck, 5001, 111);
    const auto k = c.send(kC, 60'000'000, kAck, 110, 5001, 0);  // seq = next - 1
    EXPECT_TRUE(k.keepAlive);
    EXPECT_EQ(k.cls, SegmentClass::None);
    const auto a = c.send(kS, 60'030'000, kAck, 5001, 111);
    EXPECT_FALSE(a.dupAck);
    EXPECT_EQ(c.client().retxPkts, 0U);
    EXPECT_EQ(c.server().dupAcks, 0U);
}

TEST(TcpperfAnalysis, SequenceNumbersWrapAt2Pow32) {
    Conn c;
    const std::uint32_t isn = 0xFFFF'FC00U;  // 1 KiB below the wrap
    c.handshake(100, isn);
    std::uint32_t seq = isn + 1;
    std::uint64_t t = 100'000;
    for (int i = 0; i < 4; ++i) {  // 4 x 500 bytes cross 2^32
        EXPECT_EQ(c.send(kS, t, kPshAck, seq, 101, 500).cls, SegmentClass::None) << i;
        const auto a = c.send(kC, t + 10'000, kAck, 101, seq + 500);
        EXPECT_TRUE(a.rttSample) << i;
        seq += 500;
        t += 20'000;
    }
    EXPECT_EQ(c.serverRtt().rttCount, 4U);
    EXPECT_EQ(c.server().retxPkts, 0U);
    // after the wrap (seq is small now) a segment from before it is still a retransmission
    EXPECT_LT(seq, 2000U);
    EXPECT_EQ(c.send(kS, t + 500'000, kPshAck, seq - 500, 101, 500).cls, SegmentClass::Spurious);
    c.send(kS, t + 600'000, kPshAck, seq, 101, 500);
    EXPECT_EQ(c.send(kS, t + 900'000, kPshAck, seq, 101, 500).cls, SegmentClass::Retransmission);
    EXPECT_EQ(c.server().retxPkts, 2U);
}

TEST(TcpperfAnalysis, TimeSteppingBackGivesNoSamples) {
    Conn c;
    c.send(kC, 50'000, kSyn, 1, 0);
    c.send(kS, 40'000, kSynAck, 9, 2);  // earlier than the SYN
    c.send(kC, 60'000, kAck, 2, 10);
    EXPECT_EQ(c.s.rttSynUs, 0U);
    c.send(kS, 100'000, kPshAck, 10, 2, 100);
    EXPECT_FALSE(c.send(kC, 90'000, kAck, 2, 110).rttSample);
    EXPECT_EQ(c.serverRtt().rttCount, 0U);
}

TEST(TcpperfAnalysis, OptionParserReadsMssAndWindowScaleAndSurvivesGarbage) {
    std::uint16_t mss = 0;
    std::uint8_t ws = kNoWindowScale;
    const std::vector<std::uint8_t> linux = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0,
                                             0, 1, 0,    0,    0, 0, 1, 3,  3, 7};
    parseTcpOptions(linux, mss, ws);
    EXPECT_EQ(mss, 1460);
    EXPECT_EQ(ws, 7);
    for (const std::vector<std::uint8_t>& bad : std::vector<std::vector<std::uint8_t>>{
             {3}, {3, 3}, {3, 0, 7}, {3, 1}, {2, 4, 5}, {1, 1, 1, 3, 200, 9}, {0, 3, 3, 5}}) {
        mss = 0;
        ws = kNoWindowScale;
        parseTcpOptions(bad, mss, ws);
        EXPECT_EQ(ws, kNoWindowScale);
        EXPECT_EQ(mss, 0);
    }
}

// The plugin on frames: options read from the SYNs, one instance for a TCP flow, none for UDP.
std::vector<std::uint8_t> tcpFrame(bool fromClient, std::uint8_t flags, std::uint32_t seq,
                                   std::uint32_t ack, const std::vector<std::uint8_t>& options) {
    std::vector<std::uint8_t> f =
        test::frame(6, fromClient ? test::kClient : test::kServer, fromClient ? 40000 : 80,
                    fromClient ? test::kServer : test::kClient, fromClient ? 80 : 40000, options);
    // the builder put `options` as payload: turn them into TCP options instead
    const std::size_t tcp = 14 + 20;
    for (int i = 0; i < 4; ++i) {
        f[tcp + 4 + i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
        f[tcp + 8 + i] = static_cast<std::uint8_t>(ack >> (24 - 8 * i));
    }
    f[tcp + 12] = static_cast<std::uint8_t>((20 + options.size()) / 4 << 4);
    f[tcp + 13] = flags;
    return f;
}

TEST(TcpperfPlugin, ReadsMssAndWindowScaleFromTheSynsOfFrames) {
    test::FlowDriver d("tcpperf");
    d.packet(tcpFrame(true, kSyn, 100, 0, {2, 4, 0x05, 0xb4, 1, 3, 3, 8}));
    d.packet(tcpFrame(false, kSynAck, 900, 101, {2, 4, 0x05, 0x78, 0, 0, 0, 0}));
    d.packet(tcpFrame(true, kAck, 101, 901, {}));
    const auto inst = d.write();
    ASSERT_EQ(inst.size(), 1U);
    EXPECT_EQ(inst[0].at("tcpperf_mss"), "1460");
    EXPECT_EQ(inst[0].at("tcpperf_mss_rev"), "1400");
    EXPECT_EQ(inst[0].at("tcpperf_wscale"), "8");
    EXPECT_EQ(inst[0].at("tcpperf_wscale_rev"), "255");
    EXPECT_EQ(inst[0].at("tcpperf_retx_pkts"), "0");
}

TEST(TcpperfPlugin, UdpFlowsHaveNoInstance) {
    test::FlowDriver d("tcpperf");
    d.packet(test::frame(17, test::kClient, 5000, test::kServer, 53, test::bytesOf("abc")));
    EXPECT_TRUE(d.write().empty());
}

TEST(TcpperfPlugin, PenOptionPutsTheFieldsUnderTheOperatorsEnterpriseNumber) {
    test::FlowDriver plain("tcpperf");
    test::FlowDriver pen("tcpperf;pen=32473;first-id=100");
    std::uint16_t expected = 100;
    for (std::size_t i = 0; i < pen.plugin().fields().size(); ++i) {
        const FieldSpec& p = pen.plugin().fields()[i];
        const FieldSpec& q = plain.plugin().fields()[i];
        if (p.ipfix.pen == kPenIana || p.ipfix.pen == kPenReverse) {  // window scale: IANA 238
            EXPECT_EQ(p.ipfix.id, 238) << p.name;
            EXPECT_EQ(p.ipfix, q.ipfix) << p.name;
            continue;
        }
        EXPECT_EQ(p.ipfix.pen, 32473U) << p.name;
        EXPECT_EQ(p.ipfix.id, expected++) << p.name;
        EXPECT_FALSE(q.ipfix.exported()) << q.name;
    }
    EXPECT_EQ(expected, 122);
}

TEST(TcpperfPlugin, ElementIdsMustFitBelow32768) {
    EXPECT_NO_THROW(test::FlowDriver("tcpperf;pen=32473;first-id=32746"));  // ids up to 32767
    EXPECT_THROW(test::FlowDriver("tcpperf;pen=32473;first-id=32747"), ConfigError);
    EXPECT_THROW(test::FlowDriver("tcpperf;pen=-1"), ConfigError);
}

}  // namespace
}  // namespace rowprobe::tcpperf
