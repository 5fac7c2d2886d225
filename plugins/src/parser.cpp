// The packet parser: one frame in, one canonical flow key plus packet facts out.
//
//   link header (Ethernet, Cisco FabricPath, Linux SLL, raw, BSD null)
//               ──▶ L2 stack (VLAN*, MPLS*, PPPoE) ──▶ IPv4 | IPv6 (+ extension headers)
//               ──▶ TCP | UDP | SCTP | ICMP | ICMPv6 | other ──▶ canonical key
//
// * Every read is preceded by a bounds check against the captured length, and every field is
//   loaded byte by byte (big-endian) or with memcpy, so truncated and malformed input never
//   reads out of bounds and unaligned frames are fine.
// * The transport header is looked for only inside the IP packet (captured bytes AND the IP
//   length), so Ethernet padding is never taken for payload. Invariant on success:
//   l3Offset <= l4Offset <= payloadOffset <= payloadOffset + payloadLen <= capLen.
// * The byte unit is the IP length from the header even when the capture is shorter (as in
//   ipfixprobe). A zero IPv4 total length / IPv6 payload length (segmentation offload on the
//   capturing host, jumbograms) falls back to the captured bytes, as Zeek does.
// * ipfixprobe semantics for ICMP: the key carries ports 0, type and code go to icmpTypeCode.
// * `hasPorts` is false only when the ports are unknown: a non-first fragment, or a transport
//   header cut off (TruncatedL4). Protocols without ports have hasPorts = true and ports 0.
// * Costs: no allocation, no exception, one pass over the headers; the L2 and IPv6 extension
//   chains are bounded (kMaxL2Headers, kMaxIpv6ExtHeaders).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "rowprobe/packet.hpp"

namespace rowprobe {

namespace {

constexpr unsigned kMaxL2Headers = 8;       // VLAN tags + MPLS labels + PPPoE
constexpr unsigned kMaxIpv6ExtHeaders = 8;  // hop-by-hop, routing, dest. options, fragment, AH

constexpr std::uint32_t kEthHeaderLen = 14;
constexpr std::uint32_t kFabricPathHeaderLen = 16;  // outer MACs, EtherType, FTag/TTL
constexpr std::uint32_t kSllHeaderLen = 16;
constexpr std::uint32_t kNullHeaderLen = 4;
constexpr std::uint32_t kIpv4MinHeaderLen = 20;
constexpr std::uint32_t kIpv6HeaderLen = 40;

constexpr std::uint16_t kEtherIpv4 = 0x0800;
constexpr std::uint16_t kEtherIpv6 = 0x86DD;
constexpr std::uint16_t kEtherVlan = 0x8100;
constexpr std::uint16_t kEtherQinQ = 0x88A8;
constexpr std::uint16_t kEtherQinQOld = 0x9100;
constexpr std::uint16_t kEtherMplsUnicast = 0x8847;
constexpr std::uint16_t kEtherMplsMulticast = 0x8848;
constexpr std::uint16_t kEtherPppoeSession = 0x8864;
constexpr std::uint16_t kEtherFabricPath = 0x8903;
constexpr std::uint16_t kPppIpv4 = 0x0021;
constexpr std::uint16_t kPppIpv6 = 0x0057;
// Not an EtherType: "IP follows, version nibble decides" (after MPLS and for raw links).
constexpr std::uint16_t kByVersionNibble = 0x0000;

constexpr std::uint8_t kProtoHopByHop = 0;
constexpr std::uint8_t kProtoIcmp = 1;
constexpr std::uint8_t kProtoTcp = 6;
constexpr std::uint8_t kProtoUdp = 17;
constexpr std::uint8_t kProtoRouting = 43;
constexpr std::uint8_t kProtoFragment = 44;
constexpr std::uint8_t kProtoEsp = 50;
constexpr std::uint8_t kProtoAh = 51;
constexpr std::uint8_t kProtoIcmpv6 = 58;
constexpr std::uint8_t kProtoNoNext = 59;
constexpr std::uint8_t kProtoDestOptions = 60;
constexpr std::uint8_t kProtoSctp = 132;

constexpr std::uint32_t kNullFamilyIpv4 = 2;
constexpr std::uint32_t kNullFamilyIpv6Bsd = 24;
constexpr std::uint32_t kNullFamilyIpv6FreeBsd = 28;
constexpr std::uint32_t kNullFamilyIpv6Darwin = 30;

static_assert(std::is_trivially_copyable_v<ParsedPacket>, "parsePacket clears it with memset");

// Internal result: an anomaly, or kOk.
constexpr Anomaly kOk = Anomaly::Count;

inline std::uint16_t load16(const std::uint8_t* p) noexcept {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

inline std::uint32_t load32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
           std::uint32_t{p[3]};
}

// True when `need` bytes are available at `off` below `end` (off may already exceed end).
inline bool has(std::uint32_t off, std::uint32_t need, std::uint32_t end) noexcept {
    return off <= end && end - off >= need;
}

// Walks VLAN / MPLS / PPPoE headers starting with `type` at `off`. On kOk, `type` is
// kEtherIpv4, kEtherIpv6 or kByVersionNibble and `off` points at the IP header.
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
                    outerVlan = static_cast<std::uint16_t>(load16(d + off) & 0x0FFF);
                    tagged = true;
                }
                type = load16(d + off + 2);
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
            case kEtherPppoeSession: {
                if (++depth > kMaxL2Headers) return Anomaly::TooManyHeaders;
                if (!has(off, 8, cap)) return Anomaly::TruncatedL2;  // 6 PPPoE + 2 PPP protocol
                const std::uint16_t ppp = load16(d + off + 6);
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

inline void mapIpv4(std::array<std::uint8_t, 16>& dst, const std::uint8_t* v4) noexcept {
    // The 10 leading zero bytes are already there: parsePacket zeroed `out`.
    dst[10] = 0xFF;
    dst[11] = 0xFF;
    std::memcpy(dst.data() + 12, v4, 4);
}

// Where the IP layer left the transport header.
struct L3Result {
    std::uint32_t l4 = 0;   // start of the transport header (may exceed `end` when cut off)
    std::uint32_t end = 0;  // end of the IP packet inside the capture
    bool parseL4 = true;    // false for non-first fragments and ESP / no-next-header
};

Anomaly parseIpv4(const std::uint8_t* d, std::uint32_t cap, std::uint32_t l3, ParsedPacket& out,
                  L3Result& r) noexcept {
    if (!has(l3, kIpv4MinHeaderLen, cap)) return Anomaly::TruncatedL3;
    const std::uint8_t* ip = d + l3;
    if ((ip[0] >> 4) != 4) return Anomaly::BadIpVersion;
    const std::uint32_t ihl = (ip[0] & 0x0Fu) * 4u;
    if (ihl < kIpv4MinHeaderLen) return Anomaly::BadIpHeader;
    std::uint32_t totalLen = load16(ip + 2);
    if (totalLen == 0) totalLen = cap - l3;  // offloaded segment: trust the capture
    if (totalLen < ihl) return Anomaly::BadIpHeader;
    if (!has(l3, ihl, cap)) return Anomaly::TruncatedL3;

    out.tos = ip[1];
    out.ttl = ip[8];
    out.key.proto = ip[9];
    out.key.ipVersion = 4;
    out.ipLen = totalLen;
    const std::uint16_t flagsOffset = load16(ip + 6);
    const auto fragOffset = static_cast<std::uint16_t>(flagsOffset & 0x1FFF);
    const bool more = (flagsOffset & 0x2000) != 0;
    out.frag.id = load16(ip + 4);
    out.frag.offset = fragOffset;
    out.frag.moreFragments = more;
    out.frag.isFragment = more || fragOffset != 0;
    out.ipFlags = static_cast<std::uint8_t>((flagsOffset & 0xE000) >> 13);
    mapIpv4(out.key.addrA, ip + 12);
    mapIpv4(out.key.addrB, ip + 16);

    r.l4 = l3 + ihl;
    r.end = std::min(cap, l3 + totalLen);
    r.parseL4 = fragOffset == 0;
    return kOk;
}

Anomaly parseIpv6(const std::uint8_t* d, std::uint32_t cap, std::uint32_t l3, ParsedPacket& out,
                  L3Result& r) noexcept {
    if (!has(l3, kIpv6HeaderLen, cap)) return Anomaly::TruncatedL3;
    const std::uint8_t* ip = d + l3;
    if ((ip[0] >> 4) != 6) return Anomaly::BadIpVersion;
    std::uint8_t next = ip[6];
    std::uint32_t payloadLen = load16(ip + 4);
    if (payloadLen == 0 && next != kProtoNoNext) payloadLen = cap - l3 - kIpv6HeaderLen;
    const std::uint32_t declaredEnd = l3 + kIpv6HeaderLen + payloadLen;
    const std::uint32_t end = std::min(cap, declaredEnd);

    out.tos = static_cast<std::uint8_t>(load16(ip) >> 4);
    out.ttl = ip[7];
    out.key.ipVersion = 6;
    out.ipLen = payloadLen + kIpv6HeaderLen;
    std::memcpy(out.key.addrA.data(), ip + 8, 16);
    std::memcpy(out.key.addrB.data(), ip + 24, 16);

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
                const std::uint16_t offsetFlags = load16(d + pos + 2);
                const auto fragOffset = static_cast<std::uint16_t>(offsetFlags >> 3);
                const bool more = (offsetFlags & 0x0001) != 0;
                out.frag.id = load32(d + pos + 4);
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

// --- Process-plugin facts (process-plugins.md A3) ------------------------------------------

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
            out.tcpMss = load16(t + i + 2);
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
bool parseL4(const std::uint8_t* d, const L3Result& r, ParsedPacket& out) noexcept {
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
            out.key.portA = load16(t);
            out.key.portB = load16(t + 2);
            out.tcpFlags = t[13];
            out.tcpWindow = load16(t + 14);
            header = std::max<std::uint32_t>(header, (t[12] >> 4) * 4u);
            out.tcpSeq = load32(t + 4);
            out.tcpAck = load32(t + 8);
            if (header > 20) parseTcpOptions(t, header, r.end - l4, out);
            break;
        case kProtoUdp:
        case kProtoSctp:
            out.key.portA = load16(t);
            out.key.portB = load16(t + 2);
            break;
        case kProtoIcmp:
        case kProtoIcmpv6:
            out.icmpTypeCode = load16(t);
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

inline bool fail(AnomalyCounters& anomalies, Anomaly a) noexcept {
    anomalies.add(a);
    return false;
}

// Big-endian 64-bit load, so that integer order equals byte order.
inline std::uint64_t loadBe64(const std::uint8_t* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
    return v;
}

// Orders (addrA, portA) <= (addrB, portB); the packet's source was written into A. Two 64-bit
// compares instead of memcmp (a library call that cost a third of the parse).
inline void canonicalise(FlowKey& key, bool& fromA) noexcept {
    const std::uint64_t hiA = loadBe64(key.addrA.data());
    const std::uint64_t hiB = loadBe64(key.addrB.data());
    const std::uint64_t loA = loadBe64(key.addrA.data() + 8);
    const std::uint64_t loB = loadBe64(key.addrB.data() + 8);
    const bool swap =
        hiA > hiB || (hiA == hiB && (loA > loB || (loA == loB && key.portA > key.portB)));
    if (swap) {
        std::swap(key.addrA, key.addrB);
        std::swap(key.portA, key.portB);
    }
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
        case Anomaly::Count:
            break;
    }
    return "unknown";
}

bool parsePacket(const RawPacket& raw, LinkType link, const ParserConfig& config, ParsedPacket& out,
                 AnomalyCounters& anomalies) noexcept {
    const std::uint8_t* d = raw.data;
    const std::uint32_t cap = d != nullptr ? raw.capLen : 0;
    // `out = ParsedPacket{}` without the temporary, whose copy stalled on store forwarding and
    // cost a quarter of the parse: every default of ParsedPacket is zero except fromA.
    std::memset(static_cast<void*>(&out), 0, sizeof(ParsedPacket));
    out.fromA = true;
    out.ts = raw.ts;
    out.wireLen = raw.wireLen;
    out.frame = d;
    out.capLen = cap;

    std::uint16_t type = kByVersionNibble;
    std::uint32_t off = 0;
    switch (link) {
        case LinkType::Ethernet:
            if (cap < kEthHeaderLen) return fail(anomalies, Anomaly::TruncatedL2);
            off = 0;
            if (load16(d + 12) == kEtherFabricPath) {  // Cisco FabricPath: skip to the inner frame
                if (cap < kFabricPathHeaderLen + kEthHeaderLen) {
                    return fail(anomalies, Anomaly::TruncatedL2);
                }
                off = kFabricPathHeaderLen;
            }
            std::memcpy(out.dstMac.data(), d + off, 6);
            std::memcpy(out.srcMac.data(), d + off + 6, 6);
            type = load16(d + off + 12);
            off += kEthHeaderLen;
            break;
        case LinkType::LinuxSll:
            if (cap < kSllHeaderLen) return fail(anomalies, Anomaly::TruncatedL2);
            type = load16(d + 14);
            off = kSllHeaderLen;
            break;
        case LinkType::Raw:
            break;
        case LinkType::Null: {
            if (cap < kNullHeaderLen) return fail(anomalies, Anomaly::TruncatedL2);
            std::uint32_t family;
            std::memcpy(&family, d, 4);  // host order of the capturing machine: accept both
            if (family > 0xFFFF) family = __builtin_bswap32(family);
            if (family == kNullFamilyIpv4) {
                type = kEtherIpv4;
            } else if (family == kNullFamilyIpv6Bsd || family == kNullFamilyIpv6FreeBsd ||
                       family == kNullFamilyIpv6Darwin) {
                type = kEtherIpv6;
            } else {
                return fail(anomalies, Anomaly::NotIp);
            }
            off = kNullHeaderLen;
            break;
        }
        default:
            return fail(anomalies, Anomaly::UnsupportedLink);
    }

    std::uint16_t vlan = 0;
    if (type != kEtherIpv4 && type != kEtherIpv6 && link != LinkType::Raw) {
        const Anomaly a = walkL2(d, cap, type, off, vlan);
        if (a != kOk) return fail(anomalies, a);
    }
    if (type == kByVersionNibble) {
        if (off >= cap) return fail(anomalies, Anomaly::TruncatedL3);
        const unsigned version = d[off] >> 4;
        if (version == 4) {
            type = kEtherIpv4;
        } else if (version == 6) {
            type = kEtherIpv6;
        } else {  // raw links promise IP; after MPLS it may be a pseudowire
            return fail(anomalies, link == LinkType::Raw ? Anomaly::BadIpVersion : Anomaly::NotIp);
        }
    }

    L3Result r;
    const Anomaly a =
        type == kEtherIpv4 ? parseIpv4(d, cap, off, out, r) : parseIpv6(d, cap, off, out, r);
    if (a != kOk) return fail(anomalies, a);
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
    canonicalise(out.key, out.fromA);
    return true;
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
        default:
            return false;
    }
}

}  // namespace rowprobe
