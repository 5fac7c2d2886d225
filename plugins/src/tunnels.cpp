// Tunnel recognition: given a parsed packet, is it a tunnel, and where does the inner frame
// start? The parser's layer loop (parser.cpp) then parses the inner frame as a packet of its own.
//
//   IP proto 47  GRE (RFC 2784/2890: checksum, key, sequence; version 1 = PPTP's enhanced GRE)
//                  0x0800 / 0x86DD IP, 0x8847/8 MPLS, 0x6558 Ethernet (transparent bridging),
//                  0x880B PPP, 0x88BE ERSPAN I (no S bit: no header) / II, 0x22EB ERSPAN III
//   IP proto 4   IPv4 in IP, IP proto 41 IPv6 in IP (4in4, 6in4, 4in6, 6in6)
//   UDP 4789     VXLAN (I flag; id = VNI)           UDP 6081  Geneve (version 0; id = VNI)
//   UDP 2152     GTPv1-U G-PDU (id = TEID)          UDP 5072  AYIYA (opcode forward)
//   UDP 5247     CAPWAP data (802.3 or 802.11)      UDP 6635  MPLS over UDP (RFC 7510)
//   UDP 3544     Teredo (origin indication / authentication headers, then IPv6)
//
// The peer-to-peer UDP tunnels (VXLAN, Geneve, GTP-U, CAPWAP data, MPLS over UDP) are opened on
// the DESTINATION port only, as Suricata and Zeek do: a sender picks its source port freely, so
// "from port 4789" would let anyone hide a flow inside a made-up VXLAN header and plant chosen
// inner flows (issue 21 item 12). The client-server ones, Teredo (3544) and AYIYA (5072), whose
// server answers from its well-known port, open on that port on either side, as Zeek does; never
// on other ports: a payload that merely looks like IPv6 with a 2001::/32 address is an ordinary
// UDP packet, so Teredo client-relay traffic on arbitrary ports stays outer UDP (README.md,
// "Link types and tunnels"). A header that is
// recognised but cut off or invalid is TunnelFound::Malformed (counted as BadTunnel by the
// caller); a packet that merely uses the port without looking like the tunnel (GTP echo,
// CAPWAP keep-alive, DTLS) is TunnelFound::No and stays an ordinary UDP packet.
//
// Cost: a few compares on the protocol and ports for packets that are not tunnels; no loop runs
// more than a fixed number of times (GTP extension headers, MPLS labels).
#include <cstdint>

#include "parser_internal.hpp"

namespace rowprobe::parser {

namespace {

constexpr std::uint8_t kProtoIpv4 = 4;
constexpr std::uint8_t kProtoIpv6 = 41;
constexpr std::uint8_t kProtoGre = 47;
constexpr std::uint8_t kProtoUdp = 17;

constexpr std::uint16_t kPortVxlan = 4789;
constexpr std::uint16_t kPortGeneve = 6081;
constexpr std::uint16_t kPortGtpU = 2152;
constexpr std::uint16_t kPortTeredo = 3544;
constexpr std::uint16_t kPortAyiya = 5072;
constexpr std::uint16_t kPortCapwapData = 5247;
constexpr std::uint16_t kPortMplsUdp = 6635;

constexpr std::uint16_t kGreErspan2 = 0x88BE;
constexpr std::uint16_t kGreErspan3 = 0x22EB;
constexpr std::uint16_t kGrePpp = 0x880B;

constexpr unsigned kMaxGtpExtensions = 8;
constexpr unsigned kMaxMplsLabels = 8;

TunnelFound found(TunnelStep& step, TunnelType type, std::uint16_t etherType, std::uint32_t off,
                  std::uint32_t id) noexcept {
    step.type = type;
    step.start.type = etherType;
    step.start.off = off;
    step.id = id;
    return TunnelFound::Yes;
}

// PPP inside PPTP's GRE: optional FF 03, 1- or 2-byte protocol.
TunnelFound pppInGre(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end, std::uint32_t key,
                     TunnelStep& step) noexcept {
    if (has(pos, 2, end) && d[pos] == 0xFF && d[pos + 1] == 0x03) pos += 2;
    if (!has(pos, 1, end)) return TunnelFound::Malformed;
    std::uint16_t proto = d[pos];
    if ((proto & 0x01) != 0) {
        pos += 1;
    } else {
        if (!has(pos, 2, end)) return TunnelFound::Malformed;
        proto = loadBe16(d + pos);
        pos += 2;
    }
    if (proto == kPppIpv4) return found(step, TunnelType::Gre, kEtherIpv4, pos, key);
    if (proto == kPppIpv6) return found(step, TunnelType::Gre, kEtherIpv6, pos, key);
    return TunnelFound::No;  // LCP, CCP, compressed data, ...: not an IP packet
}

TunnelFound gre(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                TunnelStep& step) noexcept {
    if (!has(pos, 4, end)) return TunnelFound::Malformed;
    const std::uint16_t flags = loadBe16(d + pos);
    const std::uint16_t proto = loadBe16(d + pos + 2);
    const unsigned version = flags & 0x7;
    const bool checksum = (flags & 0x8000) != 0;
    const bool routing = (flags & 0x4000) != 0;
    const bool keyed = (flags & 0x2000) != 0;
    const bool sequenced = (flags & 0x1000) != 0;
    const bool ack = (flags & 0x0080) != 0;
    if (routing || version > 1) return TunnelFound::Malformed;  // RFC 1701 routing: obsolete
    std::uint32_t len = 4;
    if (version == 1) {  // PPTP (RFC 2637): key present (payload length, call id), no checksum
        if (checksum || !keyed || proto != kGrePpp) return TunnelFound::Malformed;
        len += 4 + (sequenced ? 4 : 0) + (ack ? 4 : 0);
        if (!has(pos, len, end)) return TunnelFound::Malformed;
        const std::uint32_t callId = loadBe16(d + pos + 6);
        if (!sequenced) return TunnelFound::No;  // an acknowledgement without payload
        return pppInGre(d, pos + len, end, callId, step);
    }
    const std::uint32_t keyOff = pos + 4 + (checksum ? 4 : 0);
    len += (checksum ? 4 : 0) + (keyed ? 4 : 0) + (sequenced ? 4 : 0);
    if (!has(pos, len, end)) return TunnelFound::Malformed;
    const std::uint32_t key = keyed ? loadBe32(d + keyOff) : 0;
    const std::uint32_t inner = pos + len;
    switch (proto) {
        case kEtherIpv4:
        case kEtherIpv6:
        case kEtherMplsUnicast:
        case kEtherMplsMulticast:
        case kEtherTeb:
            return found(step, TunnelType::Gre, proto, inner, key);
        case kGrePpp:
            return pppInGre(d, inner, end, key, step);
        case kGreErspan2: {
            if (!sequenced) {  // type I: the mirrored frame follows the GRE header directly
                return found(step, TunnelType::Erspan, kEtherTeb, inner, 0);
            }
            if (!has(inner, 8, end)) return TunnelFound::Malformed;
            if ((d[inner] >> 4) != 1) return TunnelFound::Malformed;  // type II is version 1
            const std::uint32_t session = loadBe16(d + inner + 2) & 0x03FF;
            return found(step, TunnelType::Erspan, kEtherTeb, inner + 8, session);
        }
        case kGreErspan3: {
            if (!has(inner, 12, end)) return TunnelFound::Malformed;
            if ((d[inner] >> 4) != 2) return TunnelFound::Malformed;  // type III is version 2
            const std::uint32_t session = loadBe16(d + inner + 2) & 0x03FF;
            const unsigned frameType = (d[inner + 10] >> 2) & 0x1F;
            const bool platform = (d[inner + 11] & 0x01) != 0;
            const std::uint32_t frame = inner + 12 + (platform ? 8 : 0);
            if (frameType != 0) return TunnelFound::No;  // only Ethernet frames are mirrored here
            if (!has(frame, 0, end)) return TunnelFound::Malformed;
            return found(step, TunnelType::Erspan, kEtherTeb, frame, session);
        }
        default:
            return TunnelFound::No;  // WCCP, NSH, keep-alives, ...: the GRE flow itself
    }
}

TunnelFound vxlan(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                  TunnelStep& step) noexcept {
    if (!has(pos, 8 + kEthHeaderLen, end)) return TunnelFound::Malformed;
    if ((d[pos] & 0x08) == 0) return TunnelFound::Malformed;  // the I flag: VNI valid
    const std::uint32_t vni = loadBe32(d + pos + 4) >> 8;
    return found(step, TunnelType::Vxlan, kEtherTeb, pos + 8, vni);
}

TunnelFound geneve(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                   TunnelStep& step) noexcept {
    if (!has(pos, 8, end)) return TunnelFound::Malformed;
    if ((d[pos] >> 6) != 0) return TunnelFound::Malformed;  // version 0
    const std::uint32_t len = 8 + (d[pos] & 0x3Fu) * 4u;
    const std::uint16_t proto = loadBe16(d + pos + 2);
    const std::uint32_t vni = loadBe32(d + pos + 4) >> 8;
    if (!has(pos, len, end)) return TunnelFound::Malformed;
    if (proto != kEtherTeb && proto != kEtherIpv4 && proto != kEtherIpv6) return TunnelFound::No;
    return found(step, TunnelType::Geneve, proto, pos + len, vni);
}

TunnelFound gtpU(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                 TunnelStep& step) noexcept {
    if (!has(pos, 8, end)) return TunnelFound::Malformed;
    const std::uint8_t flags = d[pos];
    if ((flags >> 5) != 1 || (flags & 0x10) == 0) return TunnelFound::No;  // GTPv1, not GTP'
    if (d[pos + 1] != 0xFF) return TunnelFound::No;  // echo, error indication, end marker, ...
    const std::uint32_t teid = loadBe32(d + pos + 4);
    std::uint32_t off = pos + 8;
    if ((flags & 0x07) != 0) {  // sequence number, N-PDU number, next extension header type
        if (!has(off, 4, end)) return TunnelFound::Malformed;
        std::uint8_t next = d[off + 3];
        off += 4;
        for (unsigned n = 0; next != 0; ++n) {
            if (n == kMaxGtpExtensions || !has(off, 1, end)) return TunnelFound::Malformed;
            const std::uint32_t len = d[off] * 4u;
            if (len == 0 || !has(off, len, end)) return TunnelFound::Malformed;
            next = d[off + len - 1];
            off += len;
        }
    }
    if (!has(off, 1, end)) return TunnelFound::No;  // an empty G-PDU
    return found(step, TunnelType::GtpU, kByVersionNibble, off, teid);
}

TunnelFound teredo(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                   TunnelStep& step) noexcept {
    std::uint32_t off = pos;
    // Authentication (00 01 id-len auth-len id auth nonce[8] confirmation) and origin
    // indication (00 00 port[2] address[4]) headers, in that order, both optional.
    if (has(off, 4, end) && d[off] == 0 && d[off + 1] == 1) {
        off += 4 + d[off + 2] + d[off + 3] + 9u;
    }
    if (has(off, 8, end) && d[off] == 0 && d[off + 1] == 0) off += 8;
    // Bubbles and qualification packets are IPv6 with no payload; anything else on 3544 that is
    // not IPv6 is an ordinary UDP packet.
    if (!has(off, 40, end) || (d[off] >> 4) != 6) return TunnelFound::No;
    return found(step, TunnelType::Teredo, kEtherIpv6, off, 0);
}

TunnelFound ayiya(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                  TunnelStep& step) noexcept {
    if (!has(pos, 8, end)) return TunnelFound::Malformed;
    const std::uint32_t idLen = 1u << (d[pos] >> 4);
    const std::uint32_t sigLen = (d[pos + 1] >> 4) * 4u;
    const unsigned opcode = d[pos + 2] & 0x0F;
    const std::uint8_t next = d[pos + 3];
    const std::uint32_t len = 8 + idLen + sigLen;
    if (opcode != 1) return TunnelFound::No;  // only "forward" carries a packet
    if (!has(pos, len, end)) return TunnelFound::Malformed;
    if (next == kProtoIpv6) return found(step, TunnelType::Ayiya, kEtherIpv6, pos + len, 0);
    if (next == kProtoIpv4) return found(step, TunnelType::Ayiya, kEtherIpv4, pos + len, 0);
    return TunnelFound::No;
}

TunnelFound capwapData(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                       TunnelStep& step) noexcept {
    if (!has(pos, 8, end)) return TunnelFound::Malformed;
    if (d[pos] != 0) return TunnelFound::No;  // version 0, type 1 = DTLS: encrypted
    const std::uint32_t word = loadBe32(d + pos);
    const std::uint32_t len = ((word >> 19) & 0x1F) * 4u;  // HLEN, in 4-byte words
    const unsigned wbid = (word >> 9) & 0x1F;
    const bool native = (word & 0x100) != 0;  // T: frame in the wireless binding's format
    const bool fragment = (word & 0x80) != 0;
    const std::uint16_t fragOffset = static_cast<std::uint16_t>(loadBe16(d + pos + 6) >> 3);
    const bool keepAlive = (word & 0x08) != 0;
    if (len < 8) return TunnelFound::Malformed;
    if (keepAlive || (fragment && fragOffset != 0)) return TunnelFound::No;
    if (!has(pos, len, end)) return TunnelFound::Malformed;
    if (!native) return found(step, TunnelType::Capwap, kEtherTeb, pos + len, 0);  // 802.3
    if (wbid != 1) return TunnelFound::No;  // only the IEEE 802.11 binding is known
    LinkStart s;
    if (decode80211(d, end, pos + len, s) != kOk) return TunnelFound::No;
    step.type = TunnelType::Capwap;
    step.start = s;
    step.id = 0;
    return TunnelFound::Yes;
}

TunnelFound mplsUdp(const std::uint8_t* d, std::uint32_t pos, std::uint32_t end,
                    TunnelStep& step) noexcept {
    // Validate the label stack here so that a bad stack is a bad tunnel, not a skipped frame.
    std::uint32_t off = pos;
    for (unsigned n = 0;; ++n) {
        if (n == kMaxMplsLabels || !has(off, 4, end)) return TunnelFound::Malformed;
        const bool bottom = (d[off + 2] & 0x01) != 0;
        off += 4;
        if (bottom) break;
    }
    return found(step, TunnelType::MplsUdp, kEtherMplsUnicast, pos, 0);
}

TunnelFound byPort(std::uint16_t port, const std::uint8_t* d, const TunnelProbe& p,
                   TunnelStep& step) noexcept {
    switch (port) {
        case kPortVxlan:
            return vxlan(d, p.payload, p.end, step);
        case kPortGeneve:
            return geneve(d, p.payload, p.end, step);
        case kPortGtpU:
            return gtpU(d, p.payload, p.end, step);
        case kPortCapwapData:
            return capwapData(d, p.payload, p.end, step);
        case kPortMplsUdp:
            return mplsUdp(d, p.payload, p.end, step);
        default:
            return TunnelFound::No;
    }
}

}  // namespace

TunnelFound findTunnel(const std::uint8_t* d, const TunnelProbe& p, TunnelStep& step) noexcept {
    switch (p.proto) {
        case kProtoGre:
            return gre(d, p.l4, p.end, step);
        case kProtoIpv4:
            if (!has(p.l4, 1, p.end)) return TunnelFound::Malformed;
            return found(step, TunnelType::IpInIp, kEtherIpv4, p.l4, 0);
        case kProtoIpv6:
            if (!has(p.l4, 1, p.end)) return TunnelFound::Malformed;
            return found(step, TunnelType::IpInIp, kEtherIpv6, p.l4, 0);
        case kProtoUdp:
            // Client-server tunnels, whose server answers from its well-known port: either side.
            if (p.dstPort == kPortTeredo || p.srcPort == kPortTeredo)
                return teredo(d, p.payload, p.end, step);
            if (p.dstPort == kPortAyiya || p.srcPort == kPortAyiya)
                return ayiya(d, p.payload, p.end, step);
            return byPort(p.dstPort, d, p, step);
        default:
            return TunnelFound::No;
    }
}

}  // namespace rowprobe::parser
