// The TCP analysis of tcpperf_analysis.hpp. Each step names the rule it implements; the rules
// and their sources are in README.md ("Metric definitions").
#include "process/tcpperf/tcpperf_analysis.hpp"

#include <cstddef>

namespace rowprobe::tcpperf {

namespace {

constexpr std::uint32_t kNsPerUs = 1000;
constexpr std::uint32_t kFastRetransmitWindowUs = 20'000;  ///< after the last duplicate ACK
constexpr std::uint32_t kDefaultReorderUs = 3'000;         ///< without an initial RTT
constexpr std::uint32_t kNegative = 0x8000'0000U;          ///< a time difference below zero
constexpr std::int8_t kDupAckRunCap = 100;

// Serial-number arithmetic (RFC 1982) on 32-bit sequence numbers.
constexpr bool seqLt(std::uint32_t a, std::uint32_t b) noexcept {
    return static_cast<std::int32_t>(a - b) < 0;
}
constexpr bool seqGt(std::uint32_t a, std::uint32_t b) noexcept { return seqLt(b, a); }
constexpr bool seqLe(std::uint32_t a, std::uint32_t b) noexcept { return !seqGt(a, b); }

// `now - then` in µs, or kNegative and above when `then` is later (time stepped back).
constexpr std::uint32_t since(std::uint32_t now, std::uint32_t then) noexcept { return now - then; }
constexpr bool validElapsed(std::uint32_t d) noexcept { return d < kNegative; }

void handshake(TcpPerfState& s, const TcpSegment& seg, std::uint32_t now) noexcept {
    const bool syn = (seg.flags & kSyn) != 0;
    const bool ack = (seg.flags & kAck) != 0;
    if (syn && !ack) {
        // the most recent SYN: a SYN sent again restarts the measurement, as Wireshark's iRTT
        s.synUs = now;
        s.synDir = seg.dir;
        s.hs = static_cast<std::uint8_t>((s.hs | kHsSyn) & ~(kHsSynAck | kHsAck));
        return;
    }
    if ((s.hs & kHsSyn) == 0) return;
    if (syn) {  // SYN-ACK
        if (seg.dir == s.synDir || (s.hs & kHsAck) != 0) return;
        if ((s.hs & kHsSynAck) != 0) return;  // sent again: both parts stay from the first
        const std::uint32_t d = since(now, s.synUs);
        if (validElapsed(d)) s.rttSynUs = d;
        s.synAckUs = now;
        s.hs |= kHsSynAck;
        return;
    }
    if (!ack) return;
    // Wireshark's initial RTT: the first ACK without SYN in either direction after a SYN
    if ((s.hs & kHsInitialRtt) == 0) {
        const std::uint32_t d = since(now, s.synUs);
        if (validElapsed(d)) s.initialRttUs = d;
        s.hs |= kHsInitialRtt;
    }
    if (seg.dir == s.synDir && (s.hs & (kHsSynAck | kHsAck)) == kHsSynAck) {
        const std::uint32_t d = since(now, s.synAckUs);
        if (validElapsed(d)) s.rttSynAckUs = d;
        s.hs |= kHsAck;
    }
}

// An ACK from the other side: does it acknowledge a timed segment of `h`/`d` exactly? The
// segments it covers are no longer in flight. An ACK short of the oldest one reads only `h`.
void matchAck(TcpPerfFlowDir& h, TcpPerfRtt& d, std::uint32_t ack, std::uint32_t now,
              SegmentVerdict& v) noexcept {
    if (h.rttUsed == 0 || seqGt(h.rttEnd0, ack)) return;
    const std::size_t covered = h.rttUsed == 2 && seqLe(d.rttEnd1, ack) ? 2 : 1;
    const std::uint32_t end = covered == 2 ? d.rttEnd1 : h.rttEnd0;
    const std::uint32_t elapsed = since(now, d.rttSentUs[covered - 1]);
    // Tstat's rule: a sample only from an ACK of exactly the segment's end; a cumulative ACK
    // beyond it gives none.
    if (end == ack && validElapsed(elapsed)) {
        v.rttSample = true;
        v.rttUs = elapsed;
        if (d.rttCount == 0 || elapsed < d.rttMinUs) d.rttMinUs = elapsed;
        if (elapsed > d.rttMaxUs) d.rttMaxUs = elapsed;
        d.rttSumUs += elapsed;
        ++d.rttCount;
    }
    if (covered == 1 && h.rttUsed == 2) {  // the second becomes the oldest
        h.rttEnd0 = d.rttEnd1;
        d.rttSentUs[0] = d.rttSentUs[1];
    }
    h.rttUsed = static_cast<std::uint8_t>(h.rttUsed - covered);
}

}  // namespace

void parseTcpOptions(std::span<const std::uint8_t> options, std::uint16_t& mss,
                     std::uint8_t& wscale) noexcept {
    std::size_t i = 0;
    while (i < options.size()) {
        const std::uint8_t kind = options[i];
        if (kind == 0) return;  // end of option list
        if (kind == 1) {        // no-operation
            ++i;
            continue;
        }
        if (i + 1 >= options.size()) return;
        const std::uint8_t len = options[i + 1];
        if (len < 2 || i + len > options.size()) return;
        if (kind == 2 && len == 4) {
            mss = static_cast<std::uint16_t>(options[i + 2] << 8 | options[i + 3]);
        } else if (kind == 3 && len == 3) {
            wscale = options[i + 2];
        }
        i += len;
    }
}

SegmentVerdict tcpperfUpdate(TcpPerfState& s, const TcpSegment& seg) noexcept {
    SegmentVerdict v;
    const std::uint32_t now = static_cast<std::uint32_t>(seg.tsNs / kNsPerUs);
    const std::size_t d = seg.dir & 1U;
    TcpPerfFlowDir& fwd = s.flow[d];
    TcpPerfFlowDir& rev = s.flow[d ^ 1U];
    const std::uint8_t flags = seg.flags;
    const std::uint32_t seq = seg.seq;
    const std::uint32_t ack = seg.ack;
    const std::uint32_t len = seg.len;
    const bool synFinRst = (flags & (kSyn | kFin | kRst)) != 0;

    handshake(s, seg, now);
    if ((flags & kSyn) != 0) {
        TcpPerfDir& out = s.dir[d];
        if (seg.mss != 0) out.mss = seg.mss;
        if (seg.wscale != kNoWindowScale) {
            out.wscalePlusOne = static_cast<std::uint8_t>((seg.wscale > 14 ? 14 : seg.wscale) + 1);
        }
    }

    // --- Window and ACK events of this segment (Wireshark's order; a zero-window probe or the
    // ACK of a keep-alive / probe ends the checks).
    if (len == 1 && seq == fwd.nextSeq && (rev.bits & kDirWindowKnown) != 0 && rev.window == 0) {
        v.zeroWindowProbe = true;
    } else {
        if (seg.window == 0 && !synFinRst) {
            v.zeroWindow = true;
            ++s.dir[d].zeroWindows;
        }
        if (len <= 1 && seq == fwd.nextSeq - 1 && !synFinRst) v.keepAlive = true;
        const bool repeats = len == 0 && seq == fwd.nextSeq && ack == fwd.lastAck && !synFinRst &&
                             (fwd.bits & kDirWindowKnown) != 0 && seg.window == fwd.window;
        // the ACK of a keep-alive or of a zero-window probe is no duplicate ACK
        const bool ackOfProbe = (seg.window != 0 && (rev.bits & kDirLastKeepAlive) != 0) ||
                                (seg.window == 0 && (rev.bits & kDirLastZeroWinProbe) != 0);
        if (repeats && seg.window != 0 && !ackOfProbe) {
            v.dupAck = true;
            ++s.dir[d].dupAcks;
            if (fwd.dupAckRun < kDupAckRunCap) ++fwd.dupAckRun;
        }
    }
    if (ack != fwd.lastAck) fwd.dupAckRun = 0;

    // --- Retransmission / out-of-order (segments with data, SYN or FIN; not keep-alives).
    if ((len > 0 || (flags & (kSyn | kFin)) != 0) && !v.keepAlive) {
        bool notAdvanced = fwd.nextSeq != 0 && seqLt(seq, fwd.nextSeq);
        // a segment of new data that starts one byte early follows a zero-window probe
        if (len > 1 && fwd.nextSeq - 1 == seq) notAdvanced = false;
        const std::uint32_t seqEnd = seq + len + ((flags & (kSyn | kFin)) != 0 ? 1U : 0U);
        const std::uint32_t reorderUs = s.initialRttUs != 0 ? s.initialRttUs : kDefaultReorderUs;
        if (len > 0 && rev.lastAck != 0 && seqLe(seq + len, rev.lastAck)) {
            v.cls = SegmentClass::Spurious;  // its bytes were already acknowledged
        } else if (notAdvanced && rev.dupAckRun >= 2 && rev.lastAck == seq &&
                   since(now, rev.lastAckUs) < kFastRetransmitWindowUs) {
            v.cls = SegmentClass::FastRetransmission;
        } else if (notAdvanced && since(now, fwd.nextSeqUs) < reorderUs && fwd.nextSeq != seqEnd) {
            v.cls = SegmentClass::OutOfOrder;
        } else if (notAdvanced) {
            v.cls = SegmentClass::Retransmission;
        }
    }
    if (v.cls == SegmentClass::OutOfOrder) {
        ++s.dir[d].oooPkts;
    } else if (v.cls != SegmentClass::None) {
        TcpPerfDir& out = s.dir[d];
        ++out.retxPkts;
        const std::uint64_t bytes = std::uint64_t{out.retxBytes} + len;
        out.retxBytes = bytes > 0xFFFF'FFFFU ? 0xFFFF'FFFFU : static_cast<std::uint32_t>(bytes);
        fwd.rttUsed = 0;  // Karn's rule: nothing in flight in this direction is timed any more
    }

    // --- The highest sequence end sent; new data is timed when a slot is free.
    std::uint32_t nextSeq = seq + len;
    if (len != 0 || (flags & (kSyn | kFin)) != 0) {
        if ((flags & (kSyn | kFin)) != 0) ++nextSeq;
    }
    const bool advances = seqGt(nextSeq, fwd.nextSeq) || fwd.nextSeq == 0;
    if (advances && !v.zeroWindowProbe) {
        if (len > 0 && v.cls == SegmentClass::None && !v.keepAlive && fwd.rttUsed < kRttSlots) {
            if (fwd.rttUsed == 0) {
                fwd.rttEnd0 = nextSeq;
            } else {
                s.rtt[d].rttEnd1 = nextSeq;
            }
            s.rtt[d].rttSentUs[fwd.rttUsed++] = now;
        }
        fwd.nextSeq = nextSeq;
        fwd.nextSeqUs = now;
    }

    fwd.window = seg.window;
    fwd.bits |= kDirWindowKnown;
    fwd.lastAck = ack;
    fwd.lastAckUs = now;
    fwd.bits = static_cast<std::uint8_t>(fwd.bits & ~(kDirLastKeepAlive | kDirLastZeroWinProbe));
    if (v.keepAlive) fwd.bits |= kDirLastKeepAlive;
    if (v.zeroWindowProbe) fwd.bits |= kDirLastZeroWinProbe;

    // --- RTT: this ACK against the other direction's timed segments.
    if ((flags & kAck) != 0) matchAck(rev, s.rtt[d ^ 1U], ack, now, v);
    return v;
}

}  // namespace rowprobe::tcpperf
