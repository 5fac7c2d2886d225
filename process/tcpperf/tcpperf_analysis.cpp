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

// An ACK of `ackDir`'s peer: does it acknowledge a timed segment of the other direction
// exactly? Segments it covers are no longer in flight.
void matchAck(TcpPerfDir& timed, std::uint32_t ack, std::uint32_t now, SegmentVerdict& v) noexcept {
    std::size_t covered = 0;
    while (covered < timed.rttUsed && seqLe(timed.rtt[covered].end, ack)) ++covered;
    if (covered == 0) return;
    const RttSlot& last = timed.rtt[covered - 1];
    const std::uint32_t d = since(now, last.sentUs);
    // Tstat's rule: a sample only from an ACK of exactly the segment's end; a cumulative ACK
    // beyond it gives none.
    if (last.end == ack && validElapsed(d)) {
        v.rttSample = true;
        v.rttUs = d;
        if (timed.rttCount == 0 || d < timed.rttMinUs) timed.rttMinUs = d;
        if (d > timed.rttMaxUs) timed.rttMaxUs = d;
        timed.rttSumUs += d;
        ++timed.rttCount;
    }
    for (std::size_t i = covered; i < timed.rttUsed; ++i) timed.rtt[i - covered] = timed.rtt[i];
    timed.rttUsed = static_cast<std::uint8_t>(timed.rttUsed - covered);
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
    TcpPerfDir& fwd = s.dir[d];
    TcpPerfDir& rev = s.dir[d ^ 1U];
    const std::uint8_t flags = seg.flags;
    const std::uint32_t seq = seg.seq;
    const std::uint32_t ack = seg.ack;
    const std::uint32_t len = seg.len;
    const bool synFinRst = (flags & (kSyn | kFin | kRst)) != 0;

    handshake(s, seg, now);
    if ((flags & kSyn) != 0) {
        fwd.bits |= kDirSynSeen;
        if (seg.mss != 0) fwd.mss = seg.mss;
        if (seg.wscale != kNoWindowScale) {
            fwd.wscale = seg.wscale;
            fwd.bits |= kDirHasWscale;
        }
    }

    // --- Window and ACK events of this segment (Wireshark's order; a zero-window probe or the
    // ACK of a keep-alive / probe ends the checks).
    if (len == 1 && seq == fwd.nextSeq && (rev.bits & kDirWindowKnown) != 0 && rev.window == 0) {
        v.zeroWindowProbe = true;
    } else {
        if (seg.window == 0 && !synFinRst) {
            v.zeroWindow = true;
            ++fwd.zeroWindows;
        }
        if (len <= 1 && seq == fwd.nextSeq - 1 && !synFinRst) v.keepAlive = true;
        const bool repeats = len == 0 && seq == fwd.nextSeq && ack == fwd.lastAck && !synFinRst &&
                             (fwd.bits & kDirWindowKnown) != 0 && seg.window == fwd.window;
        // the ACK of a keep-alive or of a zero-window probe is no duplicate ACK
        const bool ackOfProbe = (seg.window != 0 && (rev.bits & kDirLastKeepAlive) != 0) ||
                                (seg.window == 0 && (rev.bits & kDirLastZeroWinProbe) != 0);
        if (repeats && seg.window != 0 && !ackOfProbe) {
            v.dupAck = true;
            ++fwd.dupAcks;
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
            v.cls = kClassSpurious;  // its bytes were already acknowledged
        } else if (notAdvanced && rev.dupAckRun >= 2 && rev.lastAck == seq &&
                   since(now, rev.lastAckUs) < kFastRetransmitWindowUs) {
            v.cls = kClassFastRetransmission;
        } else if (notAdvanced && since(now, fwd.nextSeqUs) < reorderUs && fwd.nextSeq != seqEnd) {
            v.cls = kClassOutOfOrder;
        } else if (notAdvanced) {
            v.cls = kClassRetransmission;
        }
    }
    if (v.cls == kClassOutOfOrder) {
        ++fwd.oooPkts;
    } else if (v.cls != kClassNone) {
        ++fwd.retxPkts;
        const std::uint64_t bytes = std::uint64_t{fwd.retxBytes} + len;
        fwd.retxBytes = bytes > 0xFFFF'FFFFU ? 0xFFFF'FFFFU : static_cast<std::uint32_t>(bytes);
        fwd.rttUsed = 0;  // Karn's rule: nothing in flight in this direction is timed any more
    }

    // --- The highest sequence end sent; new data is timed when a slot is free.
    std::uint32_t nextSeq = seq + len;
    if (len != 0 || (flags & (kSyn | kFin)) != 0) {
        if ((flags & (kSyn | kFin)) != 0) ++nextSeq;
    }
    const bool advances = seqGt(nextSeq, fwd.nextSeq) || fwd.nextSeq == 0;
    if (advances && !v.zeroWindowProbe) {
        if (len > 0 && v.cls == kClassNone && !v.keepAlive && fwd.rttUsed < kRttSlots) {
            fwd.rtt[fwd.rttUsed++] = {nextSeq, now};
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
    if ((flags & kAck) != 0 && rev.rttUsed != 0) matchAck(rev, ack, now, v);
    return v;
}

}  // namespace rowprobe::tcpperf
