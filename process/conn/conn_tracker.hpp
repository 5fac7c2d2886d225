// Zeek's connection summary for one flow: conn_state, history, orig/resp bytes and missed bytes
// as Zeek's conn.log writes them, from the packets of the flow in arrival order. A port of the
// rules of Zeek's TCP session adapter (its endpoint state machine, history letters, sequence
// space with wraps, the reassembler's content gaps) and of its UDP/ICMP summaries, reduced to
// what these fields need. Pure: no plugin API, no allocation, no throw.
//
//   ConnState (tier-1 state of the conn plugin, 192 bytes, zeroed at flow creation)
//     ep[2]       Zeek's two TCP endpoints, indexed by the rowprobe direction of the packet
//                 (0 = the flow's initiator, 1 = the responder); `zeekOrig` says which of them
//                 Zeek calls the originator (Zeek flips the roles, history '^')
//       state/prevState  INACTIVE SYN_SENT SYN_ACK_SENT PARTIAL ESTABLISHED CLOSED RESET
//       startSeq/lastSeq/ackSeq + wraps   Zeek's sequence bookkeeping (Size() = bytes)
//       histLast{Syn,Fin,Rst}  relative sequence of the last S/H, F, R letter
//       rxmt/win0/gap  counters of the logarithmic letters T, W (1, 10, ..., 10000), G (to 100)
//       reassem/trim/oo*  a one-hole model of the reassembler: next expected byte, highest
//                         ack seen, one buffered out-of-order block
//     history     the letters in order (kMaxHistory, then truncated: `histFull`)
//     histSeen    Zeek's once-only mask per letter and direction
//     datagram    UDP (and other) payload bytes per direction (in the place of ep, line 1)
//
// Zeek's rules that decide the roles: a connection that does not start with a pure SYN is
// flipped when its source port is a likely server port (Zeek's `likely_server_ports`: the
// ports its analyzers register) and its destination port is not (both: only a non-SYN packet
// towards a higher port); UDP flips when the source port is a likely server port and the
// destination is not; a SYN-ACK first connection flips at its first pure ACK or data ('^h').
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::conn {

enum class TcpEndpointState : std::uint8_t {
    Inactive,
    SynSent,
    SynAckSent,
    Partial,
    Established,
    Closed,
    Reset,
};

inline constexpr std::uint8_t kEndpointFin = 0x01;  ///< TcpEndpoint::flags: a FIN was seen
inline constexpr std::uint8_t kEndpointOo = 0x02;   ///< the out-of-order block is set

struct TcpEndpoint {
    std::uint32_t startSeq;
    std::uint32_t lastSeq;
    std::uint32_t ackSeq;
    std::uint32_t histLastSyn;
    std::uint32_t histLastFin;
    std::uint32_t histLastRst;
    std::uint32_t finSeq;  ///< relative sequence just past the FIN (low 32 bits)
    // The reassembler model, in relative sequence numbers compared modulo 2^32 (as TCP does):
    std::uint32_t reassem;  ///< next relative sequence to deliver
    std::uint32_t trim;     ///< highest acknowledged relative sequence
    std::uint32_t ooStart;  ///< one buffered out-of-order block [ooStart, ooEnd)
    std::uint32_t ooEnd;
    std::uint16_t rxmt;  ///< retransmissions (T), saturating
    std::uint16_t win0;  ///< zero windows (W), saturating
    std::uint16_t seqWraps;
    std::uint16_t ackWraps;
    std::uint8_t gap;  ///< content gaps (G), saturating
    TcpEndpointState state;
    TcpEndpointState prevState;
    std::uint8_t flags;  ///< kEndpointFin, kEndpointOo
};
static_assert(sizeof(TcpEndpoint) == 56);

inline constexpr std::size_t kMaxHistory = 32;

/// A non-TCP flow's counters, in the place of the endpoints: in line 1, beside the once-only
/// mask, so that its packets read and write that line alone.
struct DatagramCounters {
    std::array<std::uint8_t, 64> lineZero;  ///< unused
    std::array<std::uint64_t, 2> bytes;     ///< payload bytes, by rowprobe direction
};

// Lines 0-1 (what a TCP packet reads, loaded by the plugin's touch hook): the endpoints, the
// once-only mask, the roles, the missed bytes below 4 GiB (gaps are frequent on traffic with
// random numbers) and the length of the history. A UDP (or other) packet reads line 1 only:
// its byte counts, the mask, the roles. Line 2: the history letters and the missed bytes
// beyond 4 GiB, only written while a flow runs (a letter added is a store, which does not
// hold up the packet as a load would) and read at export.
struct alignas(64) ConnState {
    union {
        std::array<TcpEndpoint, 2> ep;  ///< TCP
        DatagramCounters datagram;      ///< other protocols
    };
    std::uint32_t histSeen;
    std::uint32_t missedLow;  ///< missed bytes, carried into missedBytes before it overflows
    std::uint8_t zeekOrig;    ///< rowprobe direction of Zeek's originator (0 or 1)
    std::uint8_t proto;       ///< 6, 17, other (set by the first packet)
    std::uint8_t started;
    std::uint8_t seenFirst;  ///< Zeek's first_packet_seen bits (1 = orig, 2 = resp)
    std::uint8_t partial;    ///< Zeek's is_partial
    std::uint8_t histIsH;    ///< the history is exactly "H" (Zeek's SYN-ACK flip rule)
    std::uint8_t histLen;
    std::uint8_t histFull;      ///< a letter did not fit
    std::uint64_t missedBytes;  ///< missed bytes beyond missedLow
    std::array<char, kMaxHistory> history;
};
static_assert(sizeof(ConnState) == 192 && offsetof(ConnState, missedBytes) == 128);
static_assert(offsetof(ConnState, datagram) + offsetof(DatagramCounters, bytes) == 64 &&
              offsetof(ConnState, histFull) < 128);

/// What the tracker needs of one packet.
struct ConnPacket {
    std::uint8_t proto = 0;
    bool fromInitiator = true;  ///< rowprobe direction: sent by the flow's initiator
    std::uint16_t srcPort = 0;
    std::uint16_t dstPort = 0;
    std::uint8_t tcpFlags = 0;  ///< FIN 0x01 SYN 0x02 RST 0x04 ACK 0x10
    std::uint32_t seq = 0;
    std::uint32_t ack = 0;
    std::uint16_t window = 0;
    std::uint32_t payloadLen = 0;  ///< from the IP header (Zeek's len), not the capture
    bool broadcastDst = false;     ///< destination 255.255.255.255 (Zeek never flips towards it)
};

/// Zeek's `likely_server_ports` (the ports the analyzers of Zeek's default scripts register).
bool likelyServerPort(std::uint8_t proto, std::uint16_t port) noexcept;

/// Feeds one packet of the flow (the first one creates the connection).
void connPacket(ConnState& s, const ConnPacket& p) noexcept;

/// The summary as conn.log writes it. Byte counts are Zeek's (TCP: from sequence numbers).
struct ConnSummary {
    std::string_view state;  ///< "S0", "SF", ... (static storage)
    std::string_view history;
    std::uint64_t origBytes = 0;
    std::uint64_t respBytes = 0;
    std::uint64_t missedBytes = 0;
    bool flipped = false;  ///< Zeek's originator is the flow's responder
};
ConnSummary connSummary(const ConnState& s) noexcept;

/// Zeek's TCP endpoint Size(): the bytes an endpoint sent, from its sequence numbers.
std::uint64_t tcpEndpointSize(const TcpEndpoint& e, const TcpEndpoint& peer) noexcept;

}  // namespace rowprobe::conn
