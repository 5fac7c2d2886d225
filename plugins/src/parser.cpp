// The packet parser: one frame in, one canonical flow key plus packet facts out (or, with
// tunnels decapsulated, one packet per layer).
//
//   link header (Ethernet, Cisco FabricPath here; the others in link_layer.cpp)
//               ──▶ L2 stack (VLAN*, MPLS*, PPPoE, PBB, VN-Tag, E-Tag) ──▶ IPv4 | IPv6 (+ ext.)
//               ──▶ TCP | UDP | SCTP | ICMP | ICMPv6 | other ──▶ canonical key
//               ──▶ tunnel? (tunnels.cpp, only with --tunnel inner|both) ──▶ the inner frame
//                   again from "L2 stack" (Ethernet / IP / MPLS), at most kMaxTunnelDepth times
//
// * Every read is preceded by a bounds check against the captured length, and every field is
//   loaded byte by byte (big-endian) or with memcpy, so truncated and malformed input never
//   reads out of bounds and unaligned frames are fine.
// * The transport header is looked for only inside the IP packet (captured bytes AND the IP
//   length), so Ethernet padding is never taken for payload. Invariant on success:
//   l3Offset <= l4Offset <= payloadOffset <= payloadOffset + payloadLen <= capLen.
// * The byte unit is the IP length from the header even when the capture is shorter (as in
//   ipfixprobe). A length that cannot be right is replaced by what was on the wire, and
//   IpLengthClamped counts it: an IPv4 total length of 0 (segmentation offload on the capturing
//   host) or beyond the frame, an IPv6 payload length of 0 without a jumbo option or beyond the
//   frame. "The frame" is the wire length (for an inner packet: its outer IP packet). In a
//   frame of Ethernet's minimum size (60 bytes) the bytes after a zero-length IP header are
//   padding, so only the header counts (Zeek's semantics; cisco-fabric-path).
// * Tunnels: each layer is parsed exactly like an outer packet, inside the bytes of the IP
//   packet that carries it. Every step moves forward in the frame and the depth is bounded, so
//   loops are impossible. A malformed tunnel counts BadTunnel and the packet stays at the layer
//   above; an inner frame that is not IP (ARP over VXLAN) also leaves it there, uncounted.
// * ipfixprobe semantics for ICMP: the key carries ports 0, type and code go to icmpTypeCode.
// * `hasPorts` is false only when the ports are unknown: a non-first fragment, or a transport
//   header cut off (TruncatedL4). Protocols without ports have hasPorts = true and ports 0.
// * Costs: no allocation, no exception, one pass over the headers; the L2 and IPv6 extension
//   chains are bounded (kMaxL2Headers, kMaxIpv6ExtHeaders). With --tunnel outer (the default)
//   the tunnel code is never entered; otherwise a non-tunnel packet costs one protocol test.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "parser_internal.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe {

namespace {

constexpr unsigned kMaxL2Headers = 8;       // VLAN tags + MPLS labels + PPPoE
constexpr unsigned kMaxIpv6ExtHeaders = 8;  // hop-by-hop, routing, dest. options, fragment, AH

using namespace parser;

constexpr std::uint32_t kFabricPathHeaderLen = 16;  // outer MACs, EtherType, FTag/TTL
constexpr std::uint32_t kIpv4MinHeaderLen = 20;
constexpr std::uint32_t kIpv6HeaderLen = 40;
constexpr std::uint32_t kEthMinFrame = 60;  // without FCS: shorter frames are padded to this

constexpr std::uint8_t kProtoHopByHop = 0;
constexpr std::uint8_t kProtoIcmp = 1;
constexpr std::uint8_t kProtoTcp = 6;
constexpr std::uint8_t kProtoUdp = 17;
constexpr std::uint8_t kProtoGre = 47;
constexpr std::uint8_t kProtoRouting = 43;
constexpr std::uint8_t kProtoFragment = 44;
constexpr std::uint8_t kProtoEsp = 50;
constexpr std::uint8_t kProtoAh = 51;
constexpr std::uint8_t kProtoIcmpv6 = 58;
constexpr std::uint8_t kProtoNoNext = 59;
constexpr std::uint8_t kProtoDestOptions = 60;
constexpr std::uint8_t kProtoSctp = 132;

static_assert(std::is_trivially_copyable_v<ParsedPacket>, "parsePacket clears it with memset");

// Walks VLAN / MPLS / PPPoE / PBB / VN-Tag / E-Tag headers starting with `type` at `off`. On
// kOk, `type` is kEtherIpv4, kEtherIpv6 or kByVersionNibble and `off` points at the IP header.
Anomaly walkL2(const std::uint8_t* d, std::uint32_t cap, std::uint16_t& type, std::uint32_t& off,
               std::uint16_t& outerVlan) noexcept {
    bool tagged = false;
    unsigned depth = 0;
    for (;;) {
        switch (type) {
            case kEtherIpv4:
            case kEtherIpv6:
                return kOk;
            case kEtherVlan:
            case kEtherQinQ:
            case kEtherQinQOld:
                if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                if (!has(off, 4, cap)) return Anomaly::TruncatedL2;
                if (!tagged) {
                    outerVlan = static_cast<std::uint16_t>(loadBe16(d + off) & 0x0FFF);
                    tagged = true;
                }
                type = loadBe16(d + off + 2);
                off += 4;
                break;
            case kEtherMplsUnicast:
            case kEtherMplsMulticast:
                for (;;) {
                    if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                    if (!has(off, 4, cap)) return Anomaly::TruncatedL2;
                    const bool bottom = (d[off + 2] & 0x01) != 0;
                    off += 4;
                    if (bottom) break;
                }
                type = kByVersionNibble;
                return kOk;
            case kEtherVnTag:  // 4-byte tag, then the EtherType
                if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                if (!has(off, 6, cap)) return Anomaly::TruncatedL2;
                type = loadBe16(d + off + 4);
                off += 6;
                break;
            case kEtherETag:  // 6-byte tag, then the EtherType
                if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                if (!has(off, 8, cap)) return Anomaly::TruncatedL2;
                type = loadBe16(d + off + 6);
                off += 8;
                break;
            case kEtherPbb:  // 4-byte I-TAG, customer destination and source MACs, EtherType
                if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                if (!has(off, 18, cap)) return Anomaly::TruncatedL2;
                type = loadBe16(d + off + 16);
                off += 18;
                break;
            case kEtherPppoeSession: {
                if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                if (!has(off, 8, cap)) return Anomaly::TruncatedL2;  // 6 PPPoE + 2 PPP protocol
                const std::uint16_t ppp = loadBe16(d + off + 6);
                off += 8;
                if (ppp == kPppIpv4) {
                    type = kEtherIpv4;
                } else if (ppp == kPppIpv6) {
                    type = kEtherIpv6;
                } else {
                    return Anomaly::NotIp;
                }
                return kOk;
            }
            default:
                return Anomaly::NotIp;
        }
    }
}

// Where the IP layer left the transport header.
struct L3Result {
    std::uint32_t l4 = 0;   // start of the transport header (may exceed `end` when cut off)
    std::uint32_t end = 0;  // end of the IP packet inside the capture
    bool parseL4 = true;    // false for non-first fragments and ESP / no-next-header
    bool clamped = false;   // the IP length was replaced by the bytes on the wire
    // The source and destination addresses in the frame (4 or 16 bytes: the key's ipVersion).
    // The key gets them in canonical order at the end of the layer (canonicalise).
    const std::uint8_t* src = nullptr;
    const std::uint8_t* dst = nullptr;
    // The transport ports, the source's first (0 without ports): also given to the key there.
    std::uint16_t srcPort = 0;
    std::uint16_t dstPort = 0;
};

// The wire extent an IP header's length is checked against.
struct WireFrame {
    std::uint32_t end = 0;  // where the frame (or the outer IP packet) ends on the wire
    bool minimum = false;   // an Ethernet frame of the minimum size: trailing bytes may be padding
};

[[gnu::always_inline]] inline Anomaly parseIpv4(const std::uint8_t* d, std::uint32_t cap,
                                                std::uint32_t l3, WireFrame wire, ParsedPacket& out,
                                                L3Result& r) noexcept {
    if (!has(l3, kIpv4MinHeaderLen, cap)) return Anomaly::TruncatedL3;
    const std::uint8_t* ip = d + l3;
    if ((ip[0] >> 4) != 4) return Anomaly::BadIpVersion;
    const std::uint32_t ihl = (ip[0] & 0x0Fu) * 4u;
    if (ihl < kIpv4MinHeaderLen) return Anomaly::BadIpHeader;
    std::uint32_t totalLen = loadBe16(ip + 2);
    const std::uint32_t onWire = wire.end > l3 ? wire.end - l3 : 0;
    if (totalLen == 0 || totalLen > onWire) {  // offloaded segment or a lie: count the wire
        totalLen = totalLen == 0 && wire.minimum ? ihl : std::max(onWire, ihl);
        r.clamped = true;
    }
    if (totalLen < ihl) return Anomaly::BadIpHeader;
    if (!has(l3, ihl, cap)) return Anomaly::TruncatedL3;

    out.tos = ip[1];
    out.ttl = ip[8];
    out.key.proto = ip[9];
    out.key.ipVersion = 4;
    out.ipLen = totalLen;
    const std::uint16_t flagsOffset = loadBe16(ip + 6);
    const auto fragOffset = static_cast<std::uint16_t>(flagsOffset & 0x1FFF);
    const bool more = (flagsOffset & 0x2000) != 0;
    out.frag.id = loadBe16(ip + 4);
    out.frag.offset = fragOffset;
    out.frag.moreFragments = more;
    out.frag.isFragment = more || fragOffset != 0;
    out.ipFlags = static_cast<std::uint8_t>((flagsOffset & 0xE000) >> 13);
    r.src = ip + 12;
    r.dst = ip + 16;

    r.l4 = l3 + ihl;
    r.end = std::min(cap, l3 + totalLen);
    r.parseL4 = fragOffset == 0;
    return kOk;
}

// The jumbo payload length (RFC 2675) of a hop-by-hop header at `pos`, or 0.
std::uint32_t jumboLength(const std::uint8_t* d, std::uint32_t cap, std::uint32_t pos) noexcept {
    if (!has(pos, 2, cap)) return 0;
    const std::uint32_t end = std::min(cap, pos + (d[pos + 1] + 1u) * 8u);
    std::uint32_t opt = pos + 2;
    while (has(opt, 2, end)) {
        if (d[opt] == 0) {  // Pad1
            ++opt;
            continue;
        }
        if (d[opt] == 0xC2 && d[opt + 1] == 4 && has(opt, 6, end)) return loadBe32(d + opt + 2);
        opt += 2u + d[opt + 1];
    }
    return 0;
}

[[gnu::always_inline]] inline Anomaly parseIpv6(const std::uint8_t* d, std::uint32_t cap,
                                                std::uint32_t l3, WireFrame wire, ParsedPacket& out,
                                                L3Result& r) noexcept {
    if (!has(l3, kIpv6HeaderLen, cap)) return Anomaly::TruncatedL3;
    const std::uint8_t* ip = d + l3;
    if ((ip[0] >> 4) != 6) return Anomaly::BadIpVersion;
    std::uint8_t next = ip[6];
    std::uint32_t payloadLen = loadBe16(ip + 4);
    const std::uint32_t onWire =
        wire.end > l3 + kIpv6HeaderLen ? wire.end - l3 - kIpv6HeaderLen : 0;
    if (payloadLen == 0 && next == kProtoHopByHop) {
        payloadLen = jumboLength(d, cap, l3 + kIpv6HeaderLen);
    }
    if ((payloadLen == 0 && next != kProtoNoNext) || payloadLen > onWire) {
        payloadLen = payloadLen == 0 && wire.minimum ? 0 : onWire;
        r.clamped = true;
    }
    const std::uint32_t declaredEnd = l3 + kIpv6HeaderLen + payloadLen;
    const std::uint32_t end = std::min(cap, declaredEnd);

    out.tos = static_cast<std::uint8_t>(loadBe16(ip) >> 4);
    out.ttl = ip[7];
    out.key.ipVersion = 6;
    out.ipLen = payloadLen + kIpv6HeaderLen;
    r.src = ip + 8;
    r.dst = ip + 24;

    // Extension headers: the bytes read must lie inside the declared packet (else the chain is
    // broken: BadIpHeader) and inside the capture (else TruncatedL3). A header whose body is
    // cut off is fine as long as the next header number was read.
    std::uint32_t pos = l3 + kIpv6HeaderLen;
    bool parseL4 = true;
    for (unsigned n = 0;; ++n) {
        bool done = false;
        switch (next) {
            case kProtoHopByHop:
            case kProtoRouting:
            case kProtoDestOptions:
            case kProtoAh: {
                if (n >= kMaxIpv6ExtHeaders) return Anomaly::TooManyHeaders;
                if (!has(pos, 2, declaredEnd)) return Anomaly::BadIpHeader;
                if (!has(pos, 2, cap)) return Anomaly::TruncatedL3;
                const std::uint32_t len =
                    next == kProtoAh ? (d[pos + 1] + 2u) * 4u : (d[pos + 1] + 1u) * 8u;
                if (!has(pos, len, declaredEnd)) return Anomaly::BadIpHeader;
                next = d[pos];
                pos += len;
                break;
            }
            case kProtoFragment: {
                if (n >= kMaxIpv6ExtHeaders) return Anomaly::TooManyHeaders;
                if (!has(pos, 8, declaredEnd)) return Anomaly::BadIpHeader;
                if (!has(pos, 8, cap)) return Anomaly::TruncatedL3;
                const std::uint16_t offsetFlags = loadBe16(d + pos + 2);
                const auto fragOffset = static_cast<std::uint16_t>(offsetFlags >> 3);
                const bool more = (offsetFlags & 0x0001) != 0;
                out.frag.id = loadBe32(d + pos + 4);
                out.frag.offset = fragOffset;
                out.frag.moreFragments = more;
                out.frag.isFragment = more || fragOffset != 0;
                next = d[pos];
                pos += 8;
                if (fragOffset != 0) {  // the rest is fragment data, not headers
                    parseL4 = false;
                    done = true;
                }
                break;
            }
            case kProtoEsp:
            case kProtoNoNext:
                parseL4 = false;
                done = true;
                break;
            default:
                done = true;
                break;
        }
        if (done) break;
    }

    out.key.proto = next;
    r.l4 = pos;
    r.end = end;
    r.parseL4 = parseL4;
    return kOk;
}

// Transport header length needed for the ports / flags of `proto`, 0 when it has no ports.
inline std::uint32_t minL4Header(std::uint8_t proto) noexcept {
    switch (proto) {
        case kProtoTcp:
            return 20;
        case kProtoUdp:
        case kProtoIcmp:
        case kProtoIcmpv6:
            return 8;
        case kProtoSctp:
            return 12;
        default:
            return 0;
    }
}

// --- Process-plugin facts (docs/design/process-runtime.md) ---------------------------------

// TCP options of the header at `t` (hdrLen bytes, of which `cap` are captured) as ipfixprobe
// reads them: the IANA bitmap, the MSS, and ipfixprobe's 4-byte reading of the MSS value.
void parseTcpOptions(const std::uint8_t* t, std::uint32_t hdrLen, std::uint32_t cap,
                     ParsedPacket& out) noexcept {
    const std::uint32_t end = std::min(hdrLen, cap);
    std::uint32_t i = 20;
    while (i < end) {
        const std::uint8_t kind = t[i];
        // IE 209 has 64 bits: kinds >= 64 have no bit (ipfixprobe shifts past 64, undefined).
        const unsigned bit = (kind & 0xF8u) + (7u - (kind & 0x07u));
        if (bit < 64) out.tcpOptions |= std::uint64_t{1} << bit;
        if (kind == 0) break;  // end of option list
        if (kind == 1) {       // no-operation
            ++i;
            continue;
        }
        if (i + 1 >= end) break;
        const std::uint8_t len = t[i + 1];
        if (kind == 2 && len >= 4 && i + 4 <= end) {
            out.tcpMss = loadBe16(t + i + 2);
            std::uint32_t raw = 0;
            for (std::uint32_t k = 0; k < 4; ++k)
                raw = (raw << 8) | (i + 2 + k < cap ? t[i + 2 + k] : 0u);
            out.tcpMssRaw = raw;
        }
        if (len < 2) break;  // malformed: stop rather than loop
        i += len;
    }
}

// Fills ports, flags and the payload span. Returns false when the header is cut off.
[[gnu::always_inline]] inline bool parseL4(const std::uint8_t* d, L3Result& r,
                                           ParsedPacket& out) noexcept {
    const std::uint8_t proto = out.key.proto;
    const std::uint32_t need = minL4Header(proto);
    const std::uint32_t l4 = std::min(r.l4, r.end);
    out.l4Offset = static_cast<std::uint16_t>(l4);
    out.payloadOffset = static_cast<std::uint16_t>(l4);
    if (!has(r.l4, need, r.end)) return false;  // payloadLen stays 0

    const std::uint8_t* t = d + l4;
    std::uint32_t header = need;
    switch (proto) {
        case kProtoTcp:
            r.srcPort = loadBe16(t);
            r.dstPort = loadBe16(t + 2);
            out.tcpFlags = t[13];
            out.tcpWindow = loadBe16(t + 14);
            header = std::max<std::uint32_t>(header, (t[12] >> 4) * 4u);
            out.tcpSeq = loadBe32(t + 4);
            out.tcpAck = loadBe32(t + 8);
            if (header > 20) parseTcpOptions(t, header, r.end - l4, out);
            break;
        case kProtoUdp:
        case kProtoSctp:
            r.srcPort = loadBe16(t);
            r.dstPort = loadBe16(t + 2);
            break;
        case kProtoIcmp:
        case kProtoIcmpv6:
            out.icmpTypeCode = loadBe16(t);
            break;
        default:
            break;
    }
    if (proto == kProtoTcp || proto == kProtoUdp) {  // A3: payload on the wire
        const std::uint32_t ipPayload = out.ipLen - std::min(out.ipLen, l4 - out.l3Offset);
        out.payloadWireLen = ipPayload - std::min(ipPayload, header);
    }
    const std::uint32_t payload = std::min(l4 + header, r.end);
    out.payloadOffset = static_cast<std::uint16_t>(payload);
    out.payloadLen = static_cast<std::uint16_t>(std::min<std::uint32_t>(r.end - payload, 0xFFFF));
    out.hasPorts = true;
    return true;
}

/// Writes the IPv4-mapped form (::ffff:a.b.c.d) of the address at `v4` into `dst`, as two
/// 64-bit stores.
inline void putMapped(std::array<std::uint8_t, 16>& dst, const std::uint8_t* v4) noexcept {
    std::uint32_t raw = 0;
    std::memcpy(&raw, v4, 4);  // the address's bytes in memory order
    const std::uint64_t high = 0;
    const std::uint64_t low = std::endian::native == std::endian::little
                                  ? std::uint64_t{raw} << 32 | 0xFFFF0000u
                                  : std::uint64_t{0xFFFF} << 32 | raw;
    std::memcpy(dst.data(), &high, 8);
    std::memcpy(dst.data() + 8, &low, 8);
}

// Writes the addresses and ports into the key with (addrA, portA) <= (addrB, portB), deciding
// the order on the frame's bytes and the ports in `r`. Reading them back from the key instead
// (the addresses as 64-bit words, the two ports as one 32-bit load) waited for the parse's
// narrower stores to reach the cache (store forwarding fails), whose lines the worker had last
// held. Alone on one core the parse is 0.8 ns slower this way (bench_parser, 13.1 -> 13.9 ns);
// in the whole process, where the input thread parses blocks the worker's core had read, it
// takes less CPU (docs/performance.md, session 18).
inline void canonicalise(FlowKey& key, bool& fromA, const L3Result& r) noexcept {
    const std::uint16_t portA = r.srcPort;
    const std::uint16_t portB = r.dstPort;
    bool swap = false;
    if (key.ipVersion == 4) {
        const std::uint32_t a = loadBe32(r.src);
        const std::uint32_t b = loadBe32(r.dst);
        swap = a > b || (a == b && portA > portB);
        putMapped(key.addrA, swap ? r.dst : r.src);
        putMapped(key.addrB, swap ? r.src : r.dst);
    } else {
        const std::uint64_t hiA = loadBe64(r.src);
        const std::uint64_t hiB = loadBe64(r.dst);
        const std::uint64_t loA = loadBe64(r.src + 8);
        const std::uint64_t loB = loadBe64(r.dst + 8);
        swap = hiA > hiB || (hiA == hiB && (loA > loB || (loA == loB && portA > portB)));
        std::memcpy(key.addrA.data(), swap ? r.dst : r.src, 16);
        std::memcpy(key.addrB.data(), swap ? r.src : r.dst, 16);
    }
    key.portA = swap ? portB : portA;
    key.portB = swap ? portA : portB;
    fromA = !swap;
}

}  // namespace

const char* anomalyName(Anomaly a) noexcept {
    switch (a) {
        case Anomaly::NotIp:
            return "not_ip";
        case Anomaly::TruncatedL2:
            return "truncated_l2";
        case Anomaly::TruncatedL3:
            return "truncated_l3";
        case Anomaly::TruncatedL4:
            return "truncated_l4";
        case Anomaly::BadIpVersion:
            return "bad_ip_version";
        case Anomaly::BadIpHeader:
            return "bad_ip_header";
        case Anomaly::TooManyHeaders:
            return "too_many_headers";
        case Anomaly::UnsupportedLink:
            return "unsupported_link";
        case Anomaly::FragmentNoPorts:
            return "fragment_no_ports";
        case Anomaly::IpLengthClamped:
            return "ip_length_clamped";
        case Anomaly::BadTunnel:
            return "bad_tunnel";
        case Anomaly::TunnelTooDeep:
            return "tunnel_too_deep";
        case Anomaly::Count:
            break;
    }
    return "unknown";
}

namespace {

// Clears `out` and sets the per-frame facts. `out = ParsedPacket{}` without the temporary, whose
// copy stalled on store forwarding and cost a quarter of the parse: every default of
// ParsedPacket is zero except fromA.
// The tunnel's addresses and id are left alone (they are read only when tunnel.type is set),
// which keeps the clearing as short as before tunnels existed.
inline void startPacket(const RawPacket& raw, std::uint32_t cap, ParsedPacket& out) noexcept {
    constexpr std::size_t kTunnelAt = offsetof(ParsedPacket, tunnel);
    constexpr std::size_t kAfterTunnel = kTunnelAt + sizeof(TunnelInfo);
    auto* bytes = reinterpret_cast<unsigned char*>(&out);
    std::memset(bytes, 0, kTunnelAt);
    if constexpr (kAfterTunnel < sizeof(ParsedPacket)) {
        std::memset(bytes + kAfterTunnel, 0, sizeof(ParsedPacket) - kAfterTunnel);
    }
    out.tunnel.type = TunnelType::None;
    out.tunnel.depth = 0;
    out.fromA = true;
    out.ts = raw.ts;
    out.wireLen = raw.wireLen;
    out.frame = raw.data;
    out.capLen = cap;
}

// Parses one layer from its network-layer start (`s`, after the link header or a tunnel
// header) to the transport header, inside `cap` bytes. kOk, or why the layer is unusable.
// kInner: a tunnelled frame, which may start with an Ethernet header (kEtherTeb) or carry
// MACs of its own (CAPWAP's 802.11); the outermost layer's MACs are set by startLink.
template <bool kInner>
[[gnu::always_inline]] inline Anomaly parseLayer(const std::uint8_t* d, std::uint32_t cap,
                                                 WireFrame wire, LinkStart s, bool rawIp,
                                                 const ParserConfig& config, ParsedPacket& out,
                                                 L3Result& r, AnomalyCounters& anomalies) noexcept {
    std::uint16_t type = s.type;
    std::uint32_t off = s.off;
    if constexpr (kInner) {
        if (type == kEtherTeb) {  // an Ethernet frame
            if (!has(off, kEthHeaderLen, cap)) return Anomaly::TruncatedL2;
            s.dstMac = off;
            s.srcMac = off + 6;
            type = loadBe16(d + off + 12);
            off += kEthHeaderLen;
        }
        if (s.dstMac != kNoMac) {
            std::memcpy(out.dstMac.data(), d + s.dstMac, 6);
            std::memcpy(out.srcMac.data(), d + s.srcMac, 6);
        }
    }

    std::uint16_t vlan = 0;
    if (type != kEtherIpv4 && type != kEtherIpv6 && !rawIp) {  // rawIp: by the version nibble
        const Anomaly a = walkL2(d, cap, type, off, vlan);
        if (a != kOk) return a;
    }
    if (type == kByVersionNibble) {
        if (off >= cap) return Anomaly::TruncatedL3;
        const unsigned version = d[off] >> 4;
        if (version == 4) {
            type = kEtherIpv4;
        } else if (version == 6) {
            type = kEtherIpv6;
        } else {  // raw links promise IP; after MPLS it may be a pseudowire
            return rawIp ? Anomaly::BadIpVersion : Anomaly::NotIp;
        }
    }

    const Anomaly a = type == kEtherIpv4 ? parseIpv4(d, cap, off, wire, out, r)
                                         : parseIpv6(d, cap, off, wire, out, r);
    if (a != kOk) return a;
    if (r.clamped) anomalies.add(Anomaly::IpLengthClamped);
    out.l3Offset = static_cast<std::uint16_t>(off);
    out.key.vlan = config.vlanInKey ? vlan : std::uint16_t{0};

    if (r.parseL4) {
        if (!parseL4(d, r, out)) anomalies.add(Anomaly::TruncatedL4);
    } else {  // non-first fragment or ESP / no next header: the rest is opaque payload
        const std::uint32_t l4 = std::min(r.l4, r.end);
        out.l4Offset = static_cast<std::uint16_t>(l4);
        out.payloadOffset = static_cast<std::uint16_t>(l4);
        out.payloadLen = static_cast<std::uint16_t>(std::min<std::uint32_t>(r.end - l4, 0xFFFF));
        out.hasPorts = out.frag.offset == 0;
    }
    if (out.key.proto != kProtoTcp && out.key.proto != kProtoUdp) {  // A3: header is payload
        const std::uint32_t l4 = std::min(r.l4, off + out.ipLen);
        out.payloadWireLen = out.ipLen - std::min(out.ipLen, l4 - off);
    } else if (!r.parseL4 || !out.hasPorts) {  // fragment or cut-off header: all of it
        out.payloadWireLen = out.ipLen - std::min(out.ipLen, out.l4Offset - off);
    }
    canonicalise(out.key, out.fromA, r);
    return kOk;
}

// The link header of the outermost layer.
// The link header of the outermost layer; copies its MACs into `out`.
[[gnu::always_inline]] inline Anomaly startLink(const std::uint8_t* d, std::uint32_t cap,
                                                LinkType link, LinkStart& s,
                                                ParsedPacket& out) noexcept {
    if (link != LinkType::Ethernet) [[unlikely]] {
        const Anomaly a = decodeLink(d, cap, link, s);
        if (a == kOk) {  // 802.11: both; Linux cooked (SLL, SLL2): the source only
            if (s.dstMac != kNoMac) std::memcpy(out.dstMac.data(), d + s.dstMac, 6);
            if (s.srcMac != kNoMac) std::memcpy(out.srcMac.data(), d + s.srcMac, 6);
        }
        return a;
    }
    if (cap < kEthHeaderLen) return Anomaly::TruncatedL2;
    std::uint32_t off = 0;
    if (loadBe16(d + 12) == kEtherFabricPath) {  // Cisco FabricPath: skip to the inner frame
        if (cap < kFabricPathHeaderLen + kEthHeaderLen) return Anomaly::TruncatedL2;
        off = kFabricPathHeaderLen;
    }
    std::memcpy(out.dstMac.data(), d + off, 6);
    std::memcpy(out.srcMac.data(), d + off + 6, 6);
    s.type = loadBe16(d + off + 12);
    s.off = off + kEthHeaderLen;
    return kOk;
}

// The tunnel part of the layer loop, out of line: the outer layer in out[0] is parsed, `r` is
// where its IP layer left off. Returns the layers written.
[[gnu::noinline]] std::size_t followTunnels(const RawPacket& raw, const ParserConfig& config,
                                            ParsedPacket* out, bool keepAll, L3Result r,
                                            AnomalyCounters& anomalies) noexcept {
    const std::uint8_t* d = raw.data;
    const std::uint32_t cap = raw.capLen;
    ParsedPacket* p = out;
    Anomaly a = kOk;
    std::size_t layers = 1;
    for (unsigned depth = 0;; ++depth) {
        // Only a whole packet or a first fragment shows its tunnel header.
        if (!mayCarryTunnel(p->key.proto) || p->frag.offset != 0 || !p->hasPorts) break;
        TunnelProbe probe;
        probe.proto = p->key.proto;
        probe.l4 = std::min(r.l4, r.end);
        probe.payload = p->payloadOffset;
        probe.end = r.end;
        probe.srcPort = p->srcPort();
        probe.dstPort = p->dstPort();
        probe.ipfixprobeOnly = config.tunnels == TunnelMode::Ipfixprobe;
        probe.outerIpv4 = p->key.ipVersion == 4;
        TunnelStep step;
        const TunnelFound f = findTunnel(d, probe, step);
        if (f == TunnelFound::No) break;
        if (f == TunnelFound::Malformed) {
            anomalies.add(Anomaly::BadTunnel);
            break;
        }
        if (depth == kMaxTunnelDepth) {
            anomalies.add(Anomaly::TunnelTooDeep);
            break;
        }
        // The inner packet lives inside the outer IP packet: its bytes end where that ends,
        // in the capture (r.end) and on the wire (the outer IP length).
        ParsedPacket& next = keepAll ? p[1] : *p;
        const ParsedPacket outer = *p;  // small copy, only for tunnelled packets
        startPacket(raw, cap, next);
        next.srcMac = outer.srcMac;
        next.dstMac = outer.dstMac;
        next.tunnel.outerSrc = outer.srcAddr();
        next.tunnel.outerDst = outer.dstAddr();
        next.tunnel.id = step.id;
        next.tunnel.type = step.type;
        next.tunnel.depth = static_cast<std::uint8_t>(depth + 1);
        const std::uint32_t innerEnd = r.end;
        // A first fragment carries the start of an inner packet that is longer than itself:
        // its IP length is then only checked against the capture.
        const WireFrame innerWire{
            outer.frag.moreFragments ? 0xFFFFFFFFu : outer.l3Offset + outer.ipLen, false};
        L3Result inner;
        const bool byNibble = step.start.type == kByVersionNibble;
        a = parseLayer<true>(d, innerEnd, innerWire, step.start, byNibble, config, next, inner,
                             anomalies);
        if (a != kOk) {
            if (a != Anomaly::NotIp) anomalies.add(Anomaly::BadTunnel);
            if (!keepAll) *p = outer;  // stay at the layer above
            break;
        }
        next.key.vlan = outer.key.vlan;  // the key keeps the wire's (outermost) VLAN
        r = inner;
        if (keepAll) {
            ++p;
            ++layers;
        }
    }
    return layers;
}

// Which packets the layer loop hands to followTunnels: none (--tunnel outer), every one
// (inner, both), or only GRE over IPv4 (ipfixprobe: one compare for everything else, so the
// default mode costs what `outer` costs on traffic without GRE).
enum class Follow : std::uint8_t { None, All, GreOverIpv4 };

// The layer loop behind parsePacket and parsePacketLayers. Writes layer i to out[i] when
// `keepAll`, else every layer to out[0] (the innermost one wins). Returns the layers written.
// With Follow::None it is a leaf function: the outer-only parse pays nothing for tunnels.
template <Follow kFollow>
[[gnu::always_inline]] inline std::size_t parseLayers(const RawPacket& raw, LinkType link,
                                                      const ParserConfig& config, ParsedPacket* out,
                                                      bool keepAll,
                                                      AnomalyCounters& anomalies) noexcept {
    const std::uint8_t* d = raw.data;
    const std::uint32_t cap = d != nullptr ? raw.capLen : 0;
    ParsedPacket* p = out;
    startPacket(raw, cap, *p);

    LinkStart s;
    Anomaly a = startLink(d, cap, link, s, *p);
    if (a != kOk) {
        anomalies.add(a);
        return 0;
    }
    // The wire length, not below what was captured (inputs that do not know it pass 0).
    const std::uint32_t wireLen = std::max(raw.wireLen, cap);
    WireFrame wire{wireLen, link == LinkType::Ethernet && wireLen <= kEthMinFrame};
    L3Result r;
    a = parseLayer<false>(d, cap, wire, s, link == LinkType::Raw, config, *p, r, anomalies);
    if (a != kOk) {
        anomalies.add(a);
        return 0;
    }
    if constexpr (kFollow == Follow::All) {
        return followTunnels(raw, config, out, keepAll, r, anomalies);
    } else if constexpr (kFollow == Follow::GreOverIpv4) {
        if (p->key.proto != kProtoGre || p->key.ipVersion != 4) [[likely]]
            return 1;
        return followTunnels(raw, config, out, keepAll, r, anomalies);
    } else {
        (void)config;
        (void)keepAll;
        return 1;
    }
}

[[gnu::noinline]] bool parseTunnelled(const RawPacket& raw, LinkType link,
                                      const ParserConfig& config, ParsedPacket& out,
                                      AnomalyCounters& anomalies) noexcept {
    return parseLayers<Follow::All>(raw, link, config, &out, false, anomalies) != 0;
}

}  // namespace

bool parsePacket(const RawPacket& raw, LinkType link, const ParserConfig& config, ParsedPacket& out,
                 AnomalyCounters& anomalies) noexcept {
    // The default (ipfixprobe) and outer modes are inlined here; a tail call for
    // --tunnel inner|both.
    if (config.tunnels == TunnelMode::Ipfixprobe) [[likely]]
        return parseLayers<Follow::GreOverIpv4>(raw, link, config, &out, false, anomalies) != 0;
    if (config.tunnels != TunnelMode::Outer)
        return parseTunnelled(raw, link, config, out, anomalies);
    return parseLayers<Follow::None>(raw, link, config, &out, false, anomalies) != 0;
}

std::size_t parsePacketLayers(const RawPacket& raw, LinkType link, const ParserConfig& config,
                              std::span<ParsedPacket, kMaxLayers> out,
                              AnomalyCounters& anomalies) noexcept {
    if (config.tunnels == TunnelMode::Outer) {
        return parseLayers<Follow::None>(raw, link, config, out.data(), false, anomalies);
    }
    if (config.tunnels == TunnelMode::Ipfixprobe) {
        return parseLayers<Follow::GreOverIpv4>(raw, link, config, out.data(), false, anomalies);
    }
    return parseLayers<Follow::All>(raw, link, config, out.data(),
                                    config.tunnels == TunnelMode::Both, anomalies);
}

bool linkTypeFromPcap(int dlt, LinkType& out) noexcept {
    switch (dlt) {
        case 1:  // DLT_EN10MB
            out = LinkType::Ethernet;
            return true;
        case 12:   // DLT_RAW on most systems
        case 14:   // DLT_RAW on BSD/OS and OpenBSD
        case 101:  // LINKTYPE_RAW as stored in files
        case 228:  // DLT_IPV4
        case 229:  // DLT_IPV6
            out = LinkType::Raw;
            return true;
        case 113:  // DLT_LINUX_SLL
            out = LinkType::LinuxSll;
            return true;
        case 0:  // DLT_NULL
            out = LinkType::Null;
            return true;
        case 9:  // DLT_PPP
            out = LinkType::Ppp;
            return true;
        case 50:  // LINKTYPE_PPP_HDLC (DLT_PPP_SERIAL)
            out = LinkType::PppHdlc;
            return true;
        case 104:  // DLT_C_HDLC
            out = LinkType::CiscoHdlc;
            return true;
        case 105:  // DLT_IEEE802_11
            out = LinkType::Ieee80211;
            return true;
        case 108:  // DLT_LOOP
            out = LinkType::Loop;
            return true;
        case 127:  // DLT_IEEE802_11_RADIO
            out = LinkType::Ieee80211Radiotap;
            return true;
        case 276:  // DLT_LINUX_SLL2
            out = LinkType::LinuxSll2;
            return true;
        default:
            return false;
    }
}

}  // namespace rowprobe
