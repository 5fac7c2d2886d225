// Packets as they travel from an input plugin to the flow table.
//
//   input thread (or the worker itself)  worker thread
//   -----------------------------------  -------------
//   PacketBlock { RawPacket[64],  ──────▶ parsePacket(raw) ──▶ ParsedPacket[64] ──▶ storage
//                 byte arena }            (pure, never throws)
//
// * RawPacket points into the block's own arena (or, for zero-copy inputs such as DPDK, into
//   buffers the input keeps alive until the block is returned). The worker never frees them.
// * ParsedPacket carries the canonical, direction-free FlowKey plus one direction bit, so one
//   hash and one lookup find the biflow whichever way the packet went.
// * Every field here is plain data: blocks are recycled between threads through SPSC rings,
//   never allocated on the packet path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace rowprobe {

/// Nanoseconds since the Unix epoch. Offline inputs use capture time, live inputs wall time.
using TimeNs = std::uint64_t;
inline constexpr TimeNs kNsPerSec = 1'000'000'000ULL;

/// A captured frame as delivered by an input plugin. `data` is valid until the block holding
/// the packet is released back to its input.
struct RawPacket {
    const std::uint8_t* data = nullptr;
    std::uint32_t capLen = 0;   ///< bytes available at `data`
    std::uint32_t wireLen = 0;  ///< original length on the wire
    TimeNs ts = 0;
};

/// Link-layer type of the frames in a block (values as in pcap's LINKTYPE_*).
enum class LinkType : std::uint16_t {
    Ethernet = 1,    ///< DLT_EN10MB
    Raw = 101,       ///< DLT_RAW: starts with an IPv4 or IPv6 header
    LinuxSll = 113,  ///< DLT_LINUX_SLL (cooked capture, "any" interface)
    Null = 0,        ///< DLT_NULL (BSD loopback, 4-byte family in host order)
    // Link layers of plugins/src/link_layer.cpp (issue 12).
    Ppp = 9,                  ///< LINKTYPE_PPP: PPP with or without the FF 03 HDLC address/control
    PppHdlc = 50,             ///< LINKTYPE_PPP_HDLC: PPP in HDLC-like framing (FF 03, protocol)
    Ieee80211 = 105,          ///< LINKTYPE_IEEE802_11: 802.11 frames, data frames carry LLC/SNAP
    CiscoHdlc = 104,          ///< LINKTYPE_C_HDLC: address, control, EtherType
    Loop = 108,               ///< LINKTYPE_LOOP: OpenBSD loopback, family in network order
    Ieee80211Radiotap = 127,  ///< LINKTYPE_IEEE802_11_RADIOTAP: radiotap header, then 802.11
    LinuxSll2 = 276,          ///< LINKTYPE_LINUX_SLL2 (20-byte cooked header, protocol first)
};

/// The LinkType of a pcap link-layer header type (pcap_datalink(), or the file header's value),
/// or false when the parser does not handle it. DLT_RAW's several values (12, 14, 101) and
/// DLT_IPV4 / DLT_IPV6 (228, 229) all map to Raw.
bool linkTypeFromPcap(int dlt, LinkType& out) noexcept;

/// The direction-free identity of a biflow. Addresses are IPv4-mapped IPv6 for IPv4
/// (`::ffff:a.b.c.d`). Canonical order: (addrA, portA) <= (addrB, portB) compared as bytes,
/// so both directions of a conversation build the same key. 40 bytes, no padding, so it can
/// be hashed and compared as raw bytes.
struct FlowKey {
    std::array<std::uint8_t, 16> addrA{};
    std::array<std::uint8_t, 16> addrB{};
    std::uint16_t portA = 0;  ///< host order
    std::uint16_t portB = 0;
    std::uint8_t proto = 0;
    std::uint8_t ipVersion = 0;  ///< 4 or 6
    std::uint16_t vlan = 0;      ///< outermost VLAN id, 0 when untagged or excluded from the key

    friend bool operator==(const FlowKey& a, const FlowKey& b) noexcept {
        return std::memcmp(&a, &b, sizeof(FlowKey)) == 0;
    }
    std::span<const std::byte> bytes() const noexcept {
        return std::as_bytes(std::span<const FlowKey, 1>(this, 1));
    }
};
static_assert(sizeof(FlowKey) == 40, "FlowKey must stay 40 packed bytes");

/// The tunnel a packet was decapsulated from (plugins/src/tunnels.cpp). Values are stable: they
/// are exported as the `tunnel_type` field.
enum class TunnelType : std::uint8_t {
    None = 0,
    Gre = 1,       ///< GRE (RFC 2784/2890) carrying IP, MPLS or Ethernet (transparent bridging)
    Erspan = 2,    ///< ERSPAN type I, II or III over GRE (mirrored Ethernet frames)
    Vxlan = 3,     ///< VXLAN, UDP 4789 (id = VNI)
    Geneve = 4,    ///< Geneve, UDP 6081 (id = VNI)
    GtpU = 5,      ///< GTPv1-U, UDP 2152 (id = TEID)
    Teredo = 6,    ///< Teredo, IPv6 over UDP (RFC 4380)
    Ayiya = 7,     ///< AYIYA, UDP 5072
    Capwap = 8,    ///< CAPWAP data channel, UDP 5247 (802.3 payload)
    IpInIp = 9,    ///< IPv4 or IPv6 directly in IPv4 or IPv6 (protocol 4 or 41)
    MplsUdp = 10,  ///< MPLS over UDP, UDP 6635 (RFC 7510)
};

/// How the parser treats tunnels (`--tunnel`).
enum class TunnelMode : std::uint8_t {
    Outer,  ///< no decapsulation: one flow per outer packet (ipfixprobe's behaviour, default)
    Inner,  ///< the innermost packet only (outer tunnel flows are not exported)
    Both,   ///< every layer: the outer tunnel flow and each inner flow (as Zeek)
};

/// Maximum tunnel layers decapsulated (geneve-in-geneve is 2); deeper ones count
/// Anomaly::TunnelTooDeep and the packet is kept at the deepest layer reached.
inline constexpr unsigned kMaxTunnelDepth = 3;
/// Packets one frame can yield with TunnelMode::Both (outer + each tunnel layer).
inline constexpr std::size_t kMaxLayers = kMaxTunnelDepth + 1;

/// Tunnel facts carried by a decapsulated packet: the innermost tunnel's type and id and the
/// addresses of the IP header that carried it (IPv4-mapped for IPv4). All zero when the packet
/// came through no tunnel.
struct TunnelInfo {
    std::array<std::uint8_t, 16> outerSrc{};
    std::array<std::uint8_t, 16> outerDst{};
    std::uint32_t id = 0;  ///< VNI, TEID, GRE key, ERSPAN session id; 0 when the tunnel has none
    TunnelType type = TunnelType::None;
    std::uint8_t depth = 0;  ///< tunnel layers above this packet (0 = outermost)
};

/// Per-packet fragment information (IPv4 flags/offset or the IPv6 fragment header).
struct FragmentInfo {
    std::uint32_t id = 0;      ///< IPv4 identification or IPv6 fragment identification
    std::uint16_t offset = 0;  ///< in 8-byte units
    bool isFragment = false;   ///< offset != 0 or more-fragments set
    bool moreFragments = false;
};

/// A packet after parsing: everything the flow table and the process plugins need.
/// Direction: `fromA` is true when the packet was sent by (addrA, portA) of the canonical key.
struct ParsedPacket {
    FlowKey key;
    TimeNs ts = 0;
    std::uint32_t ipLen = 0;    ///< IP total length (IPv6: payload length + 40), the byte unit
    std::uint32_t wireLen = 0;  ///< frame length on the wire
    const std::uint8_t* frame = nullptr;  ///< start of the frame (valid while the block lives)
    std::uint32_t capLen = 0;
    std::uint16_t l3Offset = 0;       ///< start of the IP header inside `frame`
    std::uint16_t l4Offset = 0;       ///< start of the transport header inside `frame`
    std::uint16_t payloadOffset = 0;  ///< start of the L4 payload inside `frame`
    std::uint16_t payloadLen = 0;     ///< captured L4 payload bytes
    std::array<std::uint8_t, 6> srcMac{};
    std::array<std::uint8_t, 6> dstMac{};
    FragmentInfo frag;
    std::uint16_t icmpTypeCode = 0;  ///< ICMP/ICMPv6 type << 8 | code, else 0
    std::uint16_t tcpWindow = 0;
    std::uint8_t tcpFlags = 0;  ///< FIN 0x01 SYN 0x02 RST 0x04 PSH 0x08 ACK 0x10 URG 0x20 ...
    std::uint8_t ttl = 0;       ///< IPv4 TTL or IPv6 hop limit
    std::uint8_t tos = 0;       ///< IPv4 TOS or IPv6 traffic class
    bool fromA = true;
    bool hasPorts = false;  ///< false for non-first fragments until the frag cache fills them
    TunnelInfo tunnel;      ///< the tunnel this packet came out of; with type None (not
                            ///< tunnelled) its other members are unspecified

    // --- What process plugins read (docs/design/process-runtime.md), filled by parsePacket -
    // ipfixprobe's parser semantics: only TCP and UDP headers are "headers"; for every other
    // protocol (ICMP included) the transport header is part of the payload.
    std::uint32_t payloadWireLen = 0;  ///< IP payload length - TCP/UDP header (on the wire)
    std::uint32_t tcpSeq = 0;
    std::uint32_t tcpAck = 0;
    /// TCP options present, bit (kind & 0xF8) + (7 - (kind & 7)): IANA tcpOptions (IE 209)
    std::uint64_t tcpOptions = 0;
    std::uint16_t tcpMss = 0;     ///< value of the MSS option (kind 2), 0 when absent
    std::uint32_t tcpMssRaw = 0;  ///< ipfixprobe's reading of it: 4 bytes from the option value
                                  ///< (MSS << 16 | the next 2 bytes, 0 beyond the header)
    std::uint8_t ipFlags = 0;     ///< IPv4 flags (frag_off & 0xE000) >> 13, DF = 2; IPv6: 0

    /// The captured L4 payload as process plugins see it (valid while the block lives): after
    /// the TCP/UDP header, else from the transport header on. Never past the IP packet's end.
    std::span<const std::uint8_t> payload() const noexcept {
        if (frame == nullptr) return {};
        const bool ports = key.proto == 6 || key.proto == 17;
        const std::uint32_t start = ports ? payloadOffset : l4Offset;
        return {frame + start, static_cast<std::size_t>(payloadOffset + payloadLen - start)};
    }

    /// Source and destination in packet orientation.
    const std::array<std::uint8_t, 16>& srcAddr() const noexcept {
        return fromA ? key.addrA : key.addrB;
    }
    const std::array<std::uint8_t, 16>& dstAddr() const noexcept {
        return fromA ? key.addrB : key.addrA;
    }
    std::uint16_t srcPort() const noexcept { return fromA ? key.portA : key.portB; }
    std::uint16_t dstPort() const noexcept { return fromA ? key.portB : key.portA; }
};

/// Named reasons a packet is skipped or only partly parsed (Zeek's "weirds"). Counted per
/// worker; never thrown, never logged on the packet path.
enum class Anomaly : std::uint8_t {
    NotIp,            ///< ARP, LLDP, ... : skipped, not an error
    TruncatedL2,      ///< frame shorter than its Ethernet / VLAN / MPLS / PPPoE headers
    TruncatedL3,      ///< IP header cut off
    TruncatedL4,      ///< transport header cut off: flow kept without ports / flags
    BadIpVersion,     ///< version nibble is neither 4 nor 6
    BadIpHeader,      ///< IHL < 5, total length < header, extension header chain broken
    TooManyHeaders,   ///< VLAN / MPLS / IPv6 extension chain deeper than the parser allows
    UnsupportedLink,  ///< link type the parser does not know
    FragmentNoPorts,  ///< non-first fragment whose first fragment was never seen
    // Counted while the packet is still used (never a skip reason):
    IpLengthClamped,  ///< IPv4 total length 0 or beyond the frame, IPv6 payload length 0 without
                      ///< a jumbo option: the bytes on the wire were counted instead
    BadTunnel,        ///< tunnel header cut off or invalid: the packet stays at the outer layer
    TunnelTooDeep,    ///< more than kMaxTunnelDepth tunnels: kept at the deepest layer parsed
    Count
};

/// True for the anomalies that make parsePacket return false (the frame is skipped); the others
/// are counted on packets that are still used. packets = parsed + the sum of the skip counters.
constexpr bool isSkipAnomaly(Anomaly a) noexcept {
    switch (a) {
        case Anomaly::NotIp:
        case Anomaly::TruncatedL2:
        case Anomaly::TruncatedL3:
        case Anomaly::BadIpVersion:
        case Anomaly::BadIpHeader:
        case Anomaly::TooManyHeaders:
        case Anomaly::UnsupportedLink:
            return true;
        default:
            return false;
    }
}
inline constexpr std::size_t kAnomalyCount = static_cast<std::size_t>(Anomaly::Count);

/// Stable names of the anomalies, used in statistics and JSON.
const char* anomalyName(Anomaly a) noexcept;

/// Per-worker anomaly counters (plain integers: one writer, published through WorkerStats).
struct AnomalyCounters {
    std::array<std::uint64_t, kAnomalyCount> count{};
    void add(Anomaly a) noexcept { ++count[static_cast<std::size_t>(a)]; }
    AnomalyCounters& operator+=(const AnomalyCounters& other) noexcept {
        for (std::size_t i = 0; i < kAnomalyCount; ++i) count[i] += other.count[i];
        return *this;
    }
    std::uint64_t operator[](Anomaly a) const noexcept {
        return count[static_cast<std::size_t>(a)];
    }
};

/// Options of the packet parser that change the flow key.
struct ParserConfig {
    bool vlanInKey = true;                   ///< put the outermost VLAN id into the key
    TunnelMode tunnels = TunnelMode::Outer;  ///< `--tunnel`: decapsulate or not
};

/// Parses one frame. Pure function: no allocation, no exception, cost ~20-40 ns.
/// Returns true when `out` holds an IP packet with a usable key; on false, the reason has been
/// counted in `anomalies`. Truncated transport headers still return true (key without ports)
/// and count `TruncatedL4`. With config.tunnels Inner or Both, `out` is the innermost layer
/// (use parsePacketLayers for every layer).
bool parsePacket(const RawPacket& raw, LinkType link, const ParserConfig& config, ParsedPacket& out,
                 AnomalyCounters& anomalies) noexcept;

/// Parses one frame into up to kMaxLayers packets, outermost first: with TunnelMode::Both the
/// outer packet and each decapsulated layer, otherwise exactly what parsePacket yields. Returns
/// how many were written (0 when the frame was skipped, its reason counted). Same costs and
/// guarantees as parsePacket.
std::size_t parsePacketLayers(const RawPacket& raw, LinkType link, const ParserConfig& config,
                              std::span<ParsedPacket, kMaxLayers> out,
                              AnomalyCounters& anomalies) noexcept;

/// Maximum packets in one block; batches through the flow table use the same bound.
inline constexpr std::size_t kMaxBatch = 64;

/// A batch of raw packets handed from an input thread to its worker (or read by the worker).
/// The arena holds copies of the frames for inputs whose buffers do not outlive the next read
/// (libpcap).
struct PacketBlock {
    static constexpr std::size_t kArenaBytes = 256 * 1024;
    std::array<RawPacket, kMaxBatch> packets{};
    std::size_t count = 0;
    LinkType link = LinkType::Ethernet;
    std::size_t arenaUsed = 0;
    alignas(64) std::array<std::uint8_t, kArenaBytes> arena;  ///< not zeroed: written before read

    void clear() noexcept {
        count = 0;
        arenaUsed = 0;
    }
    bool full() const noexcept { return count == kMaxBatch; }
    /// Copies a frame into the arena and appends it; returns false (block unchanged) when the
    /// arena cannot hold `len` more bytes.
    bool append(const std::uint8_t* data, std::uint32_t len, std::uint32_t wireLen,
                TimeNs ts) noexcept {
        if (count == kMaxBatch || arenaUsed + len > kArenaBytes) return false;
        std::memcpy(arena.data() + arenaUsed, data, len);
        packets[count++] = RawPacket{arena.data() + arenaUsed, len, wireLen, ts};
        arenaUsed += (len + 63) & ~std::size_t{63};
        return true;
    }
};

}  // namespace rowprobe
