// TCP health of one connection as a passive probe sees it (the Tstat / DPDKStat view): handshake
// round-trip times, RTT samples from data/ACK matching, retransmissions, out-of-order segments,
// duplicate ACKs, zero-window announcements, and the MSS and window scale each side announced.
// Pure functions on a fixed state: no plugin API, no allocation, no throw. The plugin glue is
// tcpperf_plugin.cpp; the metric definitions and their Tstat columns are in README.md.
//
// Design. The state is one TcpPerfState per flow (the plugin's tier-2 record, 192 bytes, three
// cache lines). The first line holds what every segment reads or writes (the "flow" part, one
// TcpPerfFlowDir per direction, index 0 = the flow's forward direction, and the handshake
// bits); the second what data segments and ACKs read and write (RTT timing and samples of both
// directions); the third what only events touch (a retransmission, a duplicate ACK, a zero
// window, a SYN). The plugin loads the first two lines ahead of each packet (its touch hook):
//
//   TcpPerfFlowDir (first line)        what it is for
//   ---------------------------------  ---------------------------------------------------------
//   nextSeq, nextSeqUs                 the highest sequence end sent so far and when it advanced:
//                                      a segment that starts below it is a retransmission or
//                                      out of order (reordered when it comes within the initial
//                                      RTT, or 3 ms, of that advance)
//   lastAck, lastAckUs, window         the last ACK number / time / window this side sent:
//                                      duplicate ACKs, fast retransmissions (>= 2 duplicate ACKs
//                                      of the other side, within 20 ms), spurious ones (the
//                                      data was already acknowledged), zero-window probes
//   rttEnd0, rttUsed                   the oldest timed segment's end: an ACK that does not
//                                      reach it costs no other line
//   TcpPerfRtt (second line)
//   rttEnd1, rttSentUs[kRttSlots]      the first data segments in flight, oldest first (end
//                                      sequence, send time): an ACK equal to an end gives one
//                                      RTT sample; a retransmission in the direction clears
//                                      them (Karn's rule); full = not timed (bounded work)
//   rttMin/Max/Sum/Count               the samples
//   TcpPerfDir (third line)
//   counters                           retransmitted packets/bytes, out-of-order, duplicate
//                                      ACKs, zero windows, MSS, scale
//
// Sequence numbers compare modulo 2^32 (serial arithmetic), so a connection that crosses the
// wrap at 2^32 is measured as any other. Times are kept as microseconds modulo 2^32: every
// quantity is a difference of two times less than 71 minutes apart; a difference that comes out
// "negative" (a capture whose time steps back) is no sample. The retransmission/out-of-order
// classification follows Wireshark's TCP analysis (the probe's view: a segment the sender sent
// again, whether or not the probe saw the first copy), which is what Tstat's RTO + fast
// retransmit + unnecessary-retransmission classes add up to; README.md says where that differs
// from Tstat's own out-of-sequence classes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rowprobe::tcpperf {

inline constexpr std::uint8_t kFin = 0x01;
inline constexpr std::uint8_t kSyn = 0x02;
inline constexpr std::uint8_t kRst = 0x04;
inline constexpr std::uint8_t kAck = 0x10;

/// Outstanding data segments timed per direction for RTT samples.
inline constexpr std::size_t kRttSlots = 2;
/// "No window-scale option" (or no SYN of the direction seen).
inline constexpr std::uint8_t kNoWindowScale = 0xFF;

/// One TCP segment as the analysis reads it.
struct TcpSegment {
    std::uint64_t tsNs = 0;
    std::uint32_t seq = 0;
    std::uint32_t ack = 0;
    std::uint32_t len = 0;                 ///< TCP payload bytes on the wire
    std::uint16_t window = 0;              ///< the header's window field (unscaled)
    std::uint16_t mss = 0;                 ///< MSS option of a SYN, 0 when absent
    std::uint8_t flags = 0;                ///< FIN 0x01 SYN 0x02 RST 0x04 PSH 0x08 ACK 0x10 ...
    std::uint8_t wscale = kNoWindowScale;  ///< window-scale option of a SYN
    std::uint8_t dir = 0;                  ///< 0 = the flow's forward direction, 1 = reverse
};

/// What every segment of a direction reads or writes (Wireshark's per-direction analysis
/// state; 0 = unset for nextSeq and lastAck, as there).
struct TcpPerfFlowDir {
    std::uint32_t nextSeq;
    std::uint32_t nextSeqUs;
    std::uint32_t lastAck;
    std::uint32_t lastAckUs;
    std::uint32_t rttEnd0;  ///< end of the oldest timed segment (when rttUsed != 0)
    std::uint16_t window;
    std::int8_t dupAckRun;  ///< duplicate ACKs in a row (Wireshark's dupacknum, capped)
    std::uint8_t bits;      ///< kDir* below
    std::uint8_t rttUsed;   ///< timed segments (slots in use)
};

/// The rest of a direction's RTT timing and its RTT samples (what a data segment and the ACK
/// of the other side read and write).
struct TcpPerfRtt {
    std::uint64_t rttSumUs;
    std::uint32_t rttEnd1;  ///< end of the second timed segment (when rttUsed == 2)
    std::array<std::uint32_t, kRttSlots> rttSentUs;  ///< send times, oldest first
    std::uint32_t rttMinUs;
    std::uint32_t rttMaxUs;
    std::uint32_t rttCount;
};

/// A direction's event counters and the options of its SYN.
struct TcpPerfDir {
    std::uint32_t retxPkts;
    std::uint32_t retxBytes;  ///< saturates at 2^32 - 1
    std::uint32_t oooPkts;
    std::uint32_t dupAcks;
    std::uint32_t zeroWindows;
    std::uint16_t mss;
    std::uint8_t wscalePlusOne;  ///< the SYN's window-scale option + 1; 0 = none
};

struct TcpPerfState {
    // first cache line: every segment
    std::array<TcpPerfFlowDir, 2> flow;
    std::uint32_t initialRttUs;  ///< SYN -> first ACK without SYN (either side), Wireshark's iRTT
    std::uint8_t hs;             ///< kHs* below
    std::uint8_t synDir;         ///< the direction that sent the SYN
    // second cache line: RTT timing and samples of both directions (data and ACKs)
    std::array<TcpPerfRtt, 2> rtt;
    // third cache line: events (retransmissions, duplicate ACKs, zero windows, SYNs)
    std::array<TcpPerfDir, 2> dir;
    std::uint32_t synUs;        ///< the most recent SYN (without ACK)
    std::uint32_t synAckUs;     ///< the first SYN-ACK answering it
    std::uint32_t rttSynUs;     ///< SYN -> SYN-ACK
    std::uint32_t rttSynAckUs;  ///< SYN-ACK -> the SYN sender's first ACK
};
static_assert(sizeof(TcpPerfFlowDir) == 28);
static_assert(offsetof(TcpPerfState, rtt) == 64, "what every segment touches: one line");
static_assert(offsetof(TcpPerfState, dir) == 128, "what data and ACKs touch: the second line");
static_assert(sizeof(TcpPerfState) == 192, "three cache lines");

// TcpPerfFlowDir::bits
inline constexpr std::uint8_t kDirWindowKnown = 0x01;
inline constexpr std::uint8_t kDirLastKeepAlive = 0x02;  ///< its last segment was a keep-alive
inline constexpr std::uint8_t kDirLastZeroWinProbe = 0x04;

// TcpPerfState::hs
inline constexpr std::uint8_t kHsSyn = 0x01;
inline constexpr std::uint8_t kHsSynAck = 0x02;
inline constexpr std::uint8_t kHsAck = 0x04;
inline constexpr std::uint8_t kHsInitialRtt = 0x08;

/// What the analysis made of one segment (for tests and statistics).
enum class SegmentClass : std::uint8_t {
    None = 0,
    Retransmission = 1,      ///< Wireshark "retransmission"
    FastRetransmission = 2,  ///< Wireshark "fast retransmission"
    Spurious = 3,            ///< Wireshark "spurious retransmission"
    OutOfOrder = 4,          ///< Wireshark "out-of-order"
};

struct SegmentVerdict {
    SegmentClass cls = SegmentClass::None;
    bool dupAck = false;
    bool zeroWindow = false;
    bool keepAlive = false;
    bool zeroWindowProbe = false;
    bool rttSample = false;
    std::uint32_t rttUs = 0;
};

/// One segment of the connection, in arrival order. A zeroed state is a fresh connection.
SegmentVerdict tcpperfUpdate(TcpPerfState& s, const TcpSegment& seg) noexcept;

/// The MSS and window-scale options of a TCP option list (the bytes after the fixed 20-byte
/// header). Bounds-checked; a malformed list yields what was read before the fault.
void parseTcpOptions(std::span<const std::uint8_t> options, std::uint16_t& mss,
                     std::uint8_t& wscale) noexcept;

/// The window-scale shift a direction announced in its SYN (capped at 14, RFC 7323 §2.3), or
/// kNoWindowScale when its SYN had no such option or was not seen.
inline std::uint8_t announcedWindowScale(const TcpPerfDir& d) noexcept {
    if (d.wscalePlusOne == 0) return kNoWindowScale;
    return d.wscalePlusOne > 15 ? 14 : static_cast<std::uint8_t>(d.wscalePlusOne - 1);
}

/// Mean RTT of a direction in µs (0 without samples).
inline std::uint32_t rttMeanUs(const TcpPerfRtt& d) noexcept {
    return d.rttCount == 0 ? 0 : static_cast<std::uint32_t>(d.rttSumUs / d.rttCount);
}

}  // namespace rowprobe::tcpperf
