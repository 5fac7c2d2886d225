// Zeek's conn.log summary (conn_tracker.hpp). The function names follow the parts of Zeek's
// TCP session adapter they reproduce, so that a reader can set the two side by side.
#include "process/conn/conn_tracker.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace rowprobe::conn {

namespace {

constexpr std::uint8_t kFin = 0x01;
constexpr std::uint8_t kSyn = 0x02;
constexpr std::uint8_t kRst = 0x04;
constexpr std::uint8_t kAck = 0x10;
constexpr std::uint8_t kProtoTcp = 6;
constexpr std::uint8_t kProtoUdp = 17;
constexpr std::int32_t kTooLargeSeqDelta = 1048576;
constexpr std::uint8_t kSeenOrig = 1;
constexpr std::uint8_t kSeenResp = 2;

// Zeek's once-only history letters (a mask bit per letter; the responder's are << 16).
constexpr std::uint32_t kHistSyn = 0x1;
constexpr std::uint32_t kHistFin = 0x2;
constexpr std::uint32_t kHistRst = 0x4;
constexpr std::uint32_t kHistFinRst = 0x8;
constexpr std::uint32_t kHistData = 0x10;
constexpr std::uint32_t kHistAck = 0x20;
constexpr std::uint32_t kHistMulti = 0x40;

using State = TcpEndpointState;

// Zeek's likely_server_ports with its default scripts: every port an analyzer of
// base/protocols or base/packet-protocols registers (Zeek a13de64f).
constexpr std::array<std::uint16_t, 49> kTcpServerPorts = {
    21,   22,   25,   53,   79,   80,   81,   88,   135,  139,  143,  389,  443,
    445,  465,  502,  514,  563,  585,  587,  614,  631,  636,  989,  990,  992,
    993,  995,  1080, 1434, 1883, 2811, 3128, 3268, 3306, 3389, 5222, 5223, 5269,
    5432, 6379, 6666, 6667, 6668, 6669, 8000, 8080, 8888, 20000};
// Only the server ports: DHCP's client port 68 and QUIC's DNS-over-QUIC ports 784/853 are
// registered as non-server ports and stay out of the set.
constexpr std::array<std::uint16_t, 24> kUdpServerPorts = {
    53,   67,   88,   123,  137,  161,  162,  389,  443,  514,  1812, 2123,
    2152, 3389, 3544, 4011, 4754, 4789, 5060, 5072, 5353, 5355, 6081, 20000};

std::int32_t seqDelta(std::uint32_t a, std::uint32_t b) noexcept {
    return static_cast<std::int32_t>(a - b);
}

// Sequence order modulo 2^32.
bool after(std::uint32_t a, std::uint32_t b) noexcept { return seqDelta(a, b) > 0; }
bool before(std::uint32_t a, std::uint32_t b) noexcept { return seqDelta(a, b) < 0; }

std::uint64_t fullSeq(std::uint32_t seq, std::uint32_t wraps) noexcept {
    return (std::uint64_t{wraps} << 32) + seq;
}

class Tracker {
public:
    explicit Tracker(ConnState& s) noexcept : m_s(s) {}

    void tcp(const ConnPacket& p, int d) noexcept;
    void first(const ConnPacket& p) noexcept;

    void addHistory(char c) noexcept {
        m_s.histIsH = m_s.histLen == 0 && c == 'H' ? 1 : 0;
        if (m_s.histLen < kMaxHistory) {
            m_s.history[m_s.histLen++] = c;
        } else {
            m_s.histFull = 1;
        }
    }
    // Connection::CheckHistory: true when the letter was already recorded.
    bool connCheckHistory(std::uint32_t mask, char code) noexcept {
        if ((m_s.histSeen & mask) == 0) {
            m_s.histSeen |= mask;
            addHistory(code);
            return false;
        }
        return true;
    }
    void flipRoles() noexcept {
        m_s.zeekOrig ^= 1;
        m_s.seenFirst = static_cast<std::uint8_t>(((m_s.seenFirst & kSeenOrig) ? kSeenResp : 0) |
                                                  ((m_s.seenFirst & kSeenResp) ? kSeenOrig : 0));
        m_s.partial = 0;
        addHistory('^');
    }

private:
    bool isOrig(int d) const noexcept { return d == m_s.zeekOrig; }
    static char lower(char c) noexcept { return static_cast<char>(c - 'A' + 'a'); }

    // TCP_Endpoint::CheckHistory, with the flip of a connection that began with a SYN-ACK.
    bool checkHistory(int d, std::uint32_t mask, char code) noexcept {
        if ((code == 'A' || code == 'D') && m_s.histIsH != 0) {
            flipRoles();
            m_s.history[0] = '^';
            m_s.history[1] = 'h';
            m_s.histLen = 2;
            m_s.histIsH = 0;
            m_s.seenFirst |= kSeenOrig;
        }
        if (!isOrig(d)) {
            mask <<= 16;
            code = lower(code);
        }
        return connCheckHistory(mask, code);
    }
    void endpointAddHistory(int d, char code) noexcept {
        addHistory(isOrig(d) ? code : lower(code));
    }
    // Session::ScaledHistoryEntry with base 10: the letter at 1, 10, 100, ... occurrences
    // (the counters saturate: the last letter is the one at 10000, or 100 for a u8).
    template <class Counter>
    void scaled(int d, char code, Counter& counter) noexcept {
        if (counter == std::numeric_limits<Counter>::max()) return;
        ++counter;
        if (counter == 1 || counter == 10 || counter == 100 || counter == 1000 || counter == 10000)
            endpointAddHistory(d, code);
    }
    static void setState(TcpEndpoint& e, State s) noexcept {
        if (s != e.state) {
            e.prevState = e.state;
            e.state = s;
        }
    }
    static bool isClean(const TcpEndpoint& e) noexcept {
        return e.state == State::Established ||
               (e.state == State::Closed && e.prevState == State::Established);
    }

    void initEndpoint(TcpEndpoint& e, std::uint8_t flags, std::uint32_t firstSeq,
                      std::uint32_t lastSeq) noexcept;
    std::uint64_t relativeSeq(const TcpEndpoint& e, std::uint32_t cur, std::uint32_t last,
                              std::uint32_t wraps, bool* underflow) const noexcept;
    void updateHistory(int d, std::uint8_t flags, std::uint64_t relSeq, std::uint32_t len) noexcept;
    std::int32_t updateLastSeq(int d, std::uint32_t lastSeq, std::uint8_t flags,
                               std::uint32_t len) noexcept;
    void inactive(int d, std::uint32_t baseSeq, std::uint32_t len, bool orig,
                  std::uint8_t flags) noexcept;
    void stateMachine(int d, std::uint32_t baseSeq, std::uint32_t len, bool orig,
                      std::uint8_t flags) noexcept;
    void ackReceived(int d, std::uint32_t seq) noexcept;
    void dataSent(int d, std::uint32_t seq, std::uint32_t len) noexcept;
    void gap(int d, std::uint64_t len) noexcept;

    ConnState& m_s;
};

void Tracker::first(const ConnPacket& p) noexcept {
    m_s.started = 1;
    m_s.proto = p.proto;
    for (TcpEndpoint& e : m_s.ep) {
        e.reassem = 1;
        e.trim = 1;
    }
    bool flip = false;
    if (p.proto == kProtoTcp) {
        // TCPAnalyzer::WantConnection: only a connection that does not start with a pure SYN.
        if ((p.tcpFlags & kSyn) == 0 || (p.tcpFlags & kAck) != 0) {
            if (likelyServerPort(p.proto, p.srcPort)) {
                flip = likelyServerPort(p.proto, p.dstPort)
                           ? (p.tcpFlags & kSyn) == 0 && p.srcPort < p.dstPort
                           : true;
            }
        }
    } else if (p.proto == kProtoUdp) {
        flip = likelyServerPort(p.proto, p.srcPort) && !likelyServerPort(p.proto, p.dstPort);
    }
    if (flip && !p.broadcastDst) flipRoles();
}

void Tracker::initEndpoint(TcpEndpoint& e, std::uint8_t flags, std::uint32_t firstSeq,
                           std::uint32_t lastSeq) noexcept {
    const bool syn = (flags & kSyn) != 0;
    const auto reinit = [&] {
        e.startSeq = firstSeq;
        e.ackSeq = firstSeq;
        e.lastSeq = lastSeq;
    };
    switch (e.state) {
        case State::Inactive:
            if (syn) {
                e.ackSeq = firstSeq;
                e.startSeq = firstSeq;
            } else {  // a partial connection: numbered as though a SYN had been seen
                e.ackSeq = firstSeq - 1;
                e.startSeq = firstSeq - 1;
                lastSeq = firstSeq;
            }
            e.lastSeq = lastSeq;
            break;
        case State::SynSent:
        case State::SynAckSent:
            if (syn && firstSeq != e.startSeq) reinit();
            break;
        case State::Established:
        case State::Partial:
            if (syn) reinit();
            break;
        case State::Reset:
            if (syn && e.prevState == State::Inactive) reinit();
            break;
        case State::Closed:
            break;
    }
}

std::uint64_t Tracker::relativeSeq(const TcpEndpoint& e, std::uint32_t cur, std::uint32_t last,
                                   std::uint32_t wraps, bool* underflow) const noexcept {
    std::int32_t delta = seqDelta(cur, last);
    if (delta < 0) {
        if (wraps != 0 && cur > last) --wraps;
    } else if (delta > 0) {
        if (cur < last) ++wraps;
    }
    if (wraps == 0) {
        delta = seqDelta(cur, e.startSeq);
        if (underflow != nullptr && delta < 0) *underflow = true;
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(delta));
    }
    return fullSeq(cur, wraps) - e.startSeq;
}

void Tracker::updateHistory(int d, std::uint8_t flags, std::uint64_t relSeq,
                            std::uint32_t len) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    const int bits = ((flags & kSyn) != 0) + ((flags & kFin) != 0) + ((flags & kRst) != 0);
    const auto rel32 = static_cast<std::uint32_t>(relSeq);
    if (bits > 1) {
        if ((flags & kFin) != 0 && (flags & kRst) != 0) {
            checkHistory(d, kHistFinRst, 'I');
        } else {
            checkHistory(d, kHistMulti, 'Q');
        }
    } else if (bits == 1) {
        if ((flags & kSyn) != 0) {
            const char code = (flags & kAck) != 0 ? 'H' : 'S';
            if (checkHistory(d, kHistSyn, code) && rel32 != e.histLastSyn)
                endpointAddHistory(d, code);
            e.histLastSyn = rel32;
        }
        if ((flags & kFin) != 0) {  // a FIN's number comes after the packet's data
            const auto end = static_cast<std::uint32_t>(relSeq + len);
            if (checkHistory(d, kHistFin, 'F') && end != e.histLastFin) endpointAddHistory(d, 'F');
            e.histLastFin = end;
        }
        if ((flags & kRst) != 0) {
            if (checkHistory(d, kHistRst, 'R') && rel32 != e.histLastRst)
                endpointAddHistory(d, 'R');
            e.histLastRst = rel32;
        }
    } else if (len != 0) {
        checkHistory(d, kHistData, 'D');
    } else if ((flags & kAck) != 0) {
        checkHistory(d, kHistAck, 'A');
    }
}

std::int32_t Tracker::updateLastSeq(int d, std::uint32_t lastSeq, std::uint8_t flags,
                                    std::uint32_t len) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    const std::int32_t delta = seqDelta(lastSeq, e.lastSeq);
    // An outlandish SYN/RST number is not trusted, nor anything after a RST, except a FIN of a
    // > 2 GB connection of which only the SYN and the FIN were seen.
    const bool outlandish =
        (flags & (kSyn | kRst)) != 0 && (delta > kTooLargeSeqDelta || delta < -kTooLargeSeqDelta);
    const bool finAfterSyn = (flags & kFin) != 0 && e.lastSeq == e.startSeq + 1;
    if (outlandish || (!finAfterSyn && e.state == State::Reset)) return delta;
    if (finAfterSyn || delta > 0) {
        if (lastSeq < e.lastSeq) ++e.seqWraps;
        e.lastSeq = lastSeq;
    } else if (len > 0) {
        scaled(d, 'T', e.rxmt);
    }
    return delta;
}

void Tracker::inactive(int d, std::uint32_t baseSeq, std::uint32_t len, bool orig,
                       std::uint8_t flags) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    TcpEndpoint& peer = m_s.ep[1 - d];
    if ((flags & kSyn) != 0) {
        if (orig) {
            setState(e, (flags & kAck) != 0 ? State::SynAckSent : State::SynSent);
        } else {
            if ((flags & kAck) == 0 && peer.state == State::SynAckSent && baseSeq == e.startSeq) {
                // a SYN/SYN-ACK reversal: the roles flip and the connection is established
                m_s.partial = 0;
                flipRoles();
                setState(peer, State::Established);
                m_s.seenFirst |= kSeenOrig;
            }
            if (peer.state == State::SynSent) setState(peer, State::Established);
            setState(e, State::Established);
        }
    }
    if ((flags & kFin) != 0) setState(e, State::Closed);
    if ((flags & kRst) != 0) setState(e, State::Reset);
    if (e.state == State::Inactive) {  // no control flag changed the state
        const TcpEndpoint& zeekOrig = m_s.ep[m_s.zeekOrig];
        if (!orig && len == 0 && zeekOrig.state == State::SynSent) {
            // an ACK of the SYN before the SYN-ACK does not make the connection partial
        } else if ((flags & kAck) != 0 && peer.state == State::Established) {
            setState(e, State::Established);  // the SYN was missed, the SYN-ACK was not
            m_s.partial = 0;
            m_s.seenFirst |= orig ? kSeenOrig : kSeenResp;
        } else {
            setState(e, State::Partial);
        }
    }
}

void Tracker::stateMachine(int d, std::uint32_t baseSeq, std::uint32_t len, bool orig,
                           std::uint8_t flags) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    TcpEndpoint& peer = m_s.ep[1 - d];
    switch (e.state) {
        case State::Inactive:
            inactive(d, baseSeq, len, orig, flags);
            break;
        case State::SynSent:
        case State::SynAckSent:
            if ((flags & kFin) != 0) setState(e, State::Closed);
            if ((flags & kRst) != 0) setState(e, State::Reset);
            break;
        case State::Established:
        case State::Partial:
            if ((flags & kSyn) != 0 && e.state == State::Partial && peer.state == State::Inactive &&
                (flags & kAck) == 0)
                setState(e, State::SynSent);
            if ((flags & kFin) != 0 && (flags & kRst) == 0) {
                setState(e, State::Closed);
                // the peer's FIN then RST was a normal termination
                if (peer.state == State::Reset && peer.prevState == State::Closed)
                    setState(peer, State::Closed);
            }
            if ((flags & kRst) != 0) setState(e, State::Reset);
            break;
        case State::Closed:
            if ((flags & kRst) != 0 && peer.state != State::Closed) setState(e, State::Reset);
            break;
        case State::Reset:
            break;
    }
}

void Tracker::gap(int d, std::uint64_t len) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    if (!isClean(e) || !isClean(m_s.ep[1 - d])) return;
    scaled(d, 'G', e.gap);
    if (len > UINT32_MAX - m_s.missedLow) {  // rare: carried into the cold line
        m_s.missedBytes += m_s.missedLow;
        m_s.missedLow = 0;
        if (len > UINT32_MAX) {
            m_s.missedBytes += len;
            return;
        }
    }
    m_s.missedLow += static_cast<std::uint32_t>(len);
}

// TCP_Reassembler::AckReceived of endpoint d (its data acknowledged by the peer), with one
// buffered out-of-order block standing in for the reassembler's block list.
void Tracker::ackReceived(int d, std::uint32_t seq) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    if ((e.flags & kEndpointFin) != 0 && !before(seq, e.finSeq)) seq = e.finSeq - 1;
    if (!after(seq, e.trim)) return;
    if (after(seq, e.reassem)) {
        if (seq <= 2 && m_s.partial != 0) {
            e.reassem = seq;
        } else {
            if ((e.flags & kEndpointOo) != 0 && !before(e.ooStart, e.reassem) &&
                before(e.ooStart, seq)) {
                gap(d, e.ooStart - e.reassem);
                if (after(e.ooEnd, e.reassem)) e.reassem = e.ooEnd;
                e.flags &= static_cast<std::uint8_t>(~kEndpointOo);
            }
            if (after(seq, e.reassem)) gap(d, seq - e.reassem);
            if (after(seq, e.reassem)) e.reassem = seq;
        }
    }
    e.trim = seq;
    if ((e.flags & kEndpointOo) != 0 && !after(e.ooEnd, seq))
        e.flags &= static_cast<std::uint8_t>(~kEndpointOo);
}

void Tracker::dataSent(int d, std::uint32_t seq, std::uint32_t len) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    const std::uint32_t upper = seq + len;
    if (!after(upper, e.trim)) return;  // delivered and acknowledged before
    if (before(seq, e.trim)) seq = e.trim;
    if (!after(seq, e.reassem)) {
        if (after(upper, e.reassem)) e.reassem = upper;
        if ((e.flags & kEndpointOo) != 0 && !after(e.ooStart, e.reassem)) {
            if (after(e.ooEnd, e.reassem)) e.reassem = e.ooEnd;
            e.flags &= static_cast<std::uint8_t>(~kEndpointOo);
        }
    } else if ((e.flags & kEndpointOo) == 0) {
        e.ooStart = seq;
        e.ooEnd = upper;
        e.flags |= kEndpointOo;
    } else if (after(seq, e.ooEnd) || before(upper, e.ooStart)) {
        if (before(seq, e.ooStart)) {  // keep the block nearest the hole
            e.ooStart = seq;
            e.ooEnd = upper;
        }
    } else {
        if (before(seq, e.ooStart)) e.ooStart = seq;
        if (after(upper, e.ooEnd)) e.ooEnd = upper;
    }
}

// TCPSessionAdapter::Process for one packet sent by rowprobe direction d.
void Tracker::tcp(const ConnPacket& p, int d) noexcept {
    TcpEndpoint& e = m_s.ep[d];
    TcpEndpoint& peer = m_s.ep[1 - d];
    const std::uint8_t flags = p.tcpFlags;
    const std::uint32_t len = p.payloadLen;
    const bool orig = isOrig(d);

    // SetPartialStatus
    if (orig) {
        if ((m_s.seenFirst & kSeenOrig) == 0)
            m_s.partial = ((flags & kSyn) == 0 || (flags & kAck) != 0) ? 1 : 0;
    } else if ((m_s.seenFirst & kSeenResp) == 0 && m_s.partial == 0) {
        m_s.partial = (flags & kSyn) == 0 ? 1 : 0;
    }

    std::uint32_t segLen = len;
    if ((flags & kSyn) != 0) ++segLen;
    if ((flags & kFin) != 0) ++segLen;
    if ((flags & kRst) != 0) segLen -= len;
    const std::uint32_t onePast = p.seq + segLen;
    initEndpoint(e, flags, p.seq, onePast);

    bool underflow = false;
    const std::uint64_t relSeq = relativeSeq(e, p.seq, e.lastSeq, e.seqWraps, &underflow);
    updateHistory(d, flags, relSeq, len);

    // update_window: only the zero-window letter
    if (p.window == 0 && (flags & kRst) == 0 && peer.state != State::Closed &&
        e.state != State::Reset)
        scaled(d, 'W', e.win0);

    if ((flags & kFin) != 0) {
        e.flags |= kEndpointFin;
        e.finSeq = static_cast<std::uint32_t>(relSeq + segLen);  // modulo 2^32 like the rest
    }

    std::uint64_t relAck = 0;
    if ((flags & kAck) != 0) {
        if (peer.state == State::Inactive) {
            relAck = 1;
            peer.startSeq = p.ack - 1;  // init_peer
            peer.ackSeq = p.ack - 1;
            peer.lastSeq = p.ack - 1;
        } else {
            bool ackUnderflow = false;
            relAck = relativeSeq(peer, p.ack, peer.ackSeq, peer.ackWraps, &ackUnderflow);
            if (ackUnderflow) {
                relAck = 0;
            } else if ((flags & kRst) == 0) {  // update_ack_seq; acks in RSTs are not trusted
                const std::int32_t deltaAck = seqDelta(p.ack, peer.ackSeq);
                if (p.ack == 0 && deltaAck > kTooLargeSeqDelta) {
                    // a broken ack rather than a large connection landing on 0
                } else if (deltaAck > 0) {
                    if (p.ack < peer.ackSeq) ++peer.ackWraps;
                    peer.ackSeq = p.ack;
                }
            }
        }
    }

    updateLastSeq(d, onePast, flags, len);
    stateMachine(d, p.seq, len, orig, flags);
    if ((flags & kAck) != 0) ackReceived(1 - d, static_cast<std::uint32_t>(relAck));
    if (len > 0 && (flags & kRst) == 0 && !underflow)
        dataSent(d, static_cast<std::uint32_t>((flags & kSyn) != 0 ? relSeq + 1 : relSeq), len);
}

bool matchesRstos0(std::string_view h) noexcept {
    // Zeek's /\^?S[^HAFGIQ]*R.*/, matched against the whole history
    std::size_t i = 0;
    if (i < h.size() && h[i] == '^') ++i;
    if (i >= h.size() || h[i] != 'S') return false;
    for (++i; i < h.size(); ++i) {
        const char c = h[i];
        if (c == 'R') return true;
        if (c == 'H' || c == 'A' || c == 'F' || c == 'G' || c == 'I' || c == 'Q') return false;
    }
    return false;
}

std::string_view tcpConnState(const ConnState& s, std::string_view history) noexcept {
    const TcpEndpoint& o = s.ep[s.zeekOrig];
    const TcpEndpoint& r = s.ep[1 - s.zeekOrig];
    const State os = o.state;
    const State rs = r.state;
    const bool oInactive = os == State::Inactive || os == State::Partial;
    const bool rInactive = rs == State::Inactive || rs == State::Partial;
    if (rs == State::Reset) {
        if (os == State::SynSent || os == State::SynAckSent ||
            (os == State::Reset && tcpEndpointSize(o, r) == 0 && tcpEndpointSize(r, o) == 0))
            return "REJ";
        return oInactive ? "RSTRH" : "RSTR";
    }
    if (os == State::Reset) {
        if (rInactive) return matchesRstos0(history) ? "RSTOS0" : "OTH";
        return "RSTO";
    }
    if (rs == State::Closed && os == State::Closed) return "SF";
    if (os == State::Closed) return rInactive ? "SH" : "S2";
    if (rs == State::Closed) return oInactive ? "SHR" : "S3";
    if (os == State::SynSent && rs == State::Inactive) return "S0";
    if (os == State::Established && rs == State::Established) return "S1";
    return "OTH";
}

}  // namespace

bool likelyServerPort(std::uint8_t proto, std::uint16_t port) noexcept {
    if (proto == kProtoTcp)
        return std::find(kTcpServerPorts.begin(), kTcpServerPorts.end(), port) !=
               kTcpServerPorts.end();
    if (proto == kProtoUdp)
        return std::find(kUdpServerPorts.begin(), kUdpServerPorts.end(), port) !=
               kUdpServerPorts.end();
    return false;
}

std::uint64_t tcpEndpointSize(const TcpEndpoint& e, const TcpEndpoint& peer) noexcept {
    const std::uint64_t start = e.startSeq;
    const std::uint64_t ack = fullSeq(e.ackSeq, e.ackWraps);
    const bool noDataAcked = ack == start || ack == start + 1;
    if (e.prevState == State::SynSent && e.state == State::Reset && peer.state == State::Inactive &&
        !noDataAcked)
        return 0;  // a half-open connection discovered and aborted
    const std::uint64_t last = fullSeq(e.lastSeq, e.seqWraps);
    std::uint64_t size = last > ack ? last - start : ack - start;
    if (size != 0) --size;                                   // the SYN
    if ((e.flags & kEndpointFin) != 0 && size != 0) --size;  // the FIN
    return size;
}

void connPacket(ConnState& s, const ConnPacket& p) noexcept {
    Tracker t(s);
    if (s.started == 0) t.first(p);
    const int d = p.fromInitiator ? 0 : 1;
    const bool orig = d == s.zeekOrig;
    if (s.proto == kProtoTcp) {
        t.tcp(p, d);
    } else if (s.proto == kProtoUdp) {
        t.connCheckHistory(orig ? 0x10U : 0x10U << 16, orig ? 'D' : 'd');
        s.datagram.bytes[static_cast<std::size_t>(d)] += p.payloadLen;
    } else {
        s.datagram.bytes[static_cast<std::size_t>(d)] += p.payloadLen;
    }
}

ConnSummary connSummary(const ConnState& s) noexcept {
    ConnSummary out;
    out.history = {s.history.data(), s.histLen};
    out.flipped = s.zeekOrig != 0;
    const std::size_t o = s.zeekOrig;
    if (s.proto == kProtoTcp) {
        out.state = tcpConnState(s, out.history);
        out.origBytes = tcpEndpointSize(s.ep[o], s.ep[1 - o]);
        out.respBytes = tcpEndpointSize(s.ep[1 - o], s.ep[o]);
        out.missedBytes = s.missedBytes + s.missedLow;
    } else {
        out.origBytes = s.datagram.bytes[o];
        out.respBytes = s.datagram.bytes[1 - o];
        if (s.proto == kProtoUdp) {
            const bool os = (s.histSeen & 0x10U) != 0;
            const bool rs = (s.histSeen & (0x10U << 16)) != 0;
            out.state = os ? (rs ? "SF" : "S0") : (rs ? "SHR" : "OTH");
        } else {
            out.state = "OTH";
        }
    }
    return out;
}

}  // namespace rowprobe::conn
