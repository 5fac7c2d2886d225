// Link layers other than Ethernet: where each one's network layer starts.
//
//   Linux cooked v1 (16 B, protocol at 14) and v2 (20 B, protocol at 0); raw IP; BSD null and
//   OpenBSD loop (4-byte address family, either byte order); PPP (optional FF 03, 1- or 2-byte
//   protocol) and PPP in HDLC-like framing; Cisco HDLC (address 0F/8F, control, EtherType);
//   802.11 data frames (QoS, 4-address, HT control; LLC/SNAP) alone or behind radiotap.
//
// Every read is bounds-checked against `cap`. Frames that are valid but carry no IP (802.11
// management and control frames, protected data, PPP LCP, ...) are NotIp; cut-off headers are
// TruncatedL2.
#include <cstdint>
#include <cstring>

#include "parser_internal.hpp"

namespace rowprobe::parser {

namespace {

constexpr std::uint32_t kSllHeaderLen = 16;
constexpr std::uint32_t kSll2HeaderLen = 20;
constexpr std::uint32_t kNullHeaderLen = 4;
constexpr std::uint32_t kNullFamilyIpv4 = 2;
constexpr std::uint32_t kNullFamilyIpv6Bsd = 24;
constexpr std::uint32_t kNullFamilyIpv6FreeBsd = 28;
constexpr std::uint32_t kNullFamilyIpv6Darwin = 30;
constexpr std::uint32_t k80211HeaderLen = 24;
constexpr std::uint32_t kRadiotapMinLen = 8;

// PPP protocol number -> the EtherType the L2 walker continues with, 0 when not IP or MPLS.
std::uint16_t pppToEther(std::uint16_t ppp) noexcept {
    switch (ppp) {
        case kPppIpv4:
            return kEtherIpv4;
        case kPppIpv6:
            return kEtherIpv6;
        case kPppMplsUnicast:
            return kEtherMplsUnicast;
        case kPppMplsMulticast:
            return kEtherMplsMulticast;
        default:
            return 0;
    }
}

// PPP at `off`: optional FF 03, then a protocol field of 1 byte (odd first byte, RFC 1661
// protocol-field compression) or 2 bytes.
Anomaly decodePpp(const std::uint8_t* d, std::uint32_t cap, std::uint32_t off,
                  LinkStart& s) noexcept {
    if (has(off, 2, cap) && d[off] == 0xFF && d[off + 1] == 0x03) off += 2;
    if (!has(off, 1, cap)) return Anomaly::TruncatedL2;
    std::uint16_t proto;
    if ((d[off] & 0x01) != 0) {
        proto = d[off];
        off += 1;
    } else {
        if (!has(off, 2, cap)) return Anomaly::TruncatedL2;
        proto = loadBe16(d + off);
        off += 2;
    }
    const std::uint16_t type = pppToEther(proto);
    if (type == 0) return Anomaly::NotIp;
    s.type = type;
    s.off = off;
    return kOk;
}

Anomaly decodeCiscoHdlc(const std::uint8_t* d, std::uint32_t cap, LinkStart& s) noexcept {
    if (cap < 4) return Anomaly::TruncatedL2;
    s.type = loadBe16(d + 2);  // an EtherType (SLARP 0x8035 and CDP 0x2000 end as NotIp)
    s.off = 4;
    return kOk;
}

Anomaly decodeFamily(const std::uint8_t* d, std::uint32_t cap, LinkStart& s) noexcept {
    if (cap < kNullHeaderLen) return Anomaly::TruncatedL2;
    std::uint32_t family;
    std::memcpy(&family, d, 4);  // host order of the capturing machine (loop: network): both
    if (family > 0xFFFF) family = __builtin_bswap32(family);
    if (family == kNullFamilyIpv4) {
        s.type = kEtherIpv4;
    } else if (family == kNullFamilyIpv6Bsd || family == kNullFamilyIpv6FreeBsd ||
               family == kNullFamilyIpv6Darwin) {
        s.type = kEtherIpv6;
    } else {
        return Anomaly::NotIp;
    }
    s.off = kNullHeaderLen;
    return kOk;
}

}  // namespace

Anomaly decode80211(const std::uint8_t* d, std::uint32_t cap, std::uint32_t off,
                    LinkStart& s) noexcept {
    if (!has(off, k80211HeaderLen, cap)) return Anomaly::TruncatedL2;
    const std::uint8_t fc0 = d[off];
    const std::uint8_t fc1 = d[off + 1];
    const unsigned type = (fc0 >> 2) & 0x3;
    const unsigned subtype = fc0 >> 4;
    if (type != 2) return Anomaly::NotIp;             // management, control, extension
    if ((subtype & 0x4) != 0) return Anomaly::NotIp;  // null / CF-only: no frame body
    if ((fc1 & 0x40) != 0) return Anomaly::NotIp;     // protected: the body is encrypted
    const bool toDs = (fc1 & 0x01) != 0;
    const bool fromDs = (fc1 & 0x02) != 0;
    const std::uint32_t a1 = off + 4;
    const std::uint32_t a2 = off + 10;
    const std::uint32_t a3 = off + 16;
    std::uint32_t len = k80211HeaderLen;
    if (toDs && fromDs) {  // WDS: address 4 is the source
        s.dstMac = a3;
        s.srcMac = off + 24;
        len += 6;
    } else if (toDs) {
        s.dstMac = a3;
        s.srcMac = a2;
    } else if (fromDs) {
        s.dstMac = a1;
        s.srcMac = a3;
    } else {
        s.dstMac = a1;
        s.srcMac = a2;
    }
    if ((subtype & 0x8) != 0) {  // QoS data: QoS control, and HT control when "order" is set
        len += 2;
        if ((fc1 & 0x80) != 0) len += 4;
    }
    const std::uint32_t llc = off + len;
    if (!has(llc, 8, cap)) return Anomaly::TruncatedL2;
    // LLC/SNAP: AA AA 03 + OUI 00 00 00 (RFC 1042) or 00 00 F8 (bridge tunnel), then EtherType.
    if (d[llc] != 0xAA || d[llc + 1] != 0xAA || d[llc + 2] != 0x03 || d[llc + 3] != 0 ||
        d[llc + 4] != 0 || (d[llc + 5] != 0 && d[llc + 5] != 0xF8)) {
        return Anomaly::NotIp;
    }
    s.type = loadBe16(d + llc + 6);
    s.off = llc + 8;
    return kOk;
}

Anomaly decodeLink(const std::uint8_t* d, std::uint32_t cap, LinkType link, LinkStart& s) noexcept {
    switch (link) {
        case LinkType::Raw:
            s.type = kByVersionNibble;
            s.off = 0;
            return kOk;
        case LinkType::LinuxSll:
            if (cap < kSllHeaderLen) return Anomaly::TruncatedL2;
            s.type = loadBe16(d + 14);
            s.off = kSllHeaderLen;
            return kOk;
        case LinkType::LinuxSll2:
            if (cap < kSll2HeaderLen) return Anomaly::TruncatedL2;
            s.type = loadBe16(d);
            s.off = kSll2HeaderLen;
            return kOk;
        case LinkType::Null:
        case LinkType::Loop:
            return decodeFamily(d, cap, s);
        case LinkType::Ppp:
            return decodePpp(d, cap, 0, s);
        case LinkType::PppHdlc:
            // Some captures labelled PPP_HDLC hold Cisco HDLC frames (address 0x0F / 0x8F).
            if (cap >= 1 && (d[0] == 0x0F || d[0] == 0x8F)) return decodeCiscoHdlc(d, cap, s);
            return decodePpp(d, cap, 0, s);
        case LinkType::CiscoHdlc:
            return decodeCiscoHdlc(d, cap, s);
        case LinkType::Ieee80211:
            return decode80211(d, cap, 0, s);
        case LinkType::Ieee80211Radiotap: {
            if (cap < kRadiotapMinLen) return Anomaly::TruncatedL2;
            if (d[0] != 0) return Anomaly::NotIp;  // radiotap version 0 is the only one
            const std::uint32_t len = d[2] | std::uint32_t{d[3]} << 8;  // little-endian
            if (len < kRadiotapMinLen) return Anomaly::TruncatedL2;
            return decode80211(d, cap, len, s);
        }
        case LinkType::Ethernet:
            break;  // parser.cpp decodes Ethernet itself
    }
    return Anomaly::UnsupportedLink;
}

}  // namespace rowprobe::parser
