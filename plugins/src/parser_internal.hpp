// Pieces the packet parser shares between its files (not part of the SDK's public headers):
//
//   parser.cpp      Ethernet, the L2 stack (VLAN, MPLS, PPPoE, PBB, VN-Tag), IP, transport,
//                   and the layer loop that follows tunnels
//   link_layer.cpp  the other link types (cooked, raw, null/loop, PPP, HDLC, 802.11, radiotap)
//   tunnels.cpp     recognising a tunnel in a parsed packet and finding the inner header
//
// Every function here is pure and noexcept, reads only below the `cap` it is given, and loads
// multi-byte fields byte by byte with rowprobe/byte_order.hpp (unaligned frames are fine).
#pragma once

#include <cstdint>

#include "rowprobe/byte_order.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::parser {

/// Internal result: an anomaly, or kOk.
inline constexpr Anomaly kOk = Anomaly::Count;

inline constexpr std::uint16_t kEtherIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherIpv6 = 0x86DD;
inline constexpr std::uint16_t kEtherVlan = 0x8100;
inline constexpr std::uint16_t kEtherQinQ = 0x88A8;
inline constexpr std::uint16_t kEtherQinQOld = 0x9100;
inline constexpr std::uint16_t kEtherMplsUnicast = 0x8847;
inline constexpr std::uint16_t kEtherMplsMulticast = 0x8848;
inline constexpr std::uint16_t kEtherPppoeSession = 0x8864;
inline constexpr std::uint16_t kEtherFabricPath = 0x8903;
inline constexpr std::uint16_t kEtherPbb = 0x88E7;    // 802.1ah I-TAG
inline constexpr std::uint16_t kEtherVnTag = 0x8926;  // Cisco VN-Tag
inline constexpr std::uint16_t kEtherETag = 0x893F;   // 802.1BR E-Tag
inline constexpr std::uint16_t kEtherTeb = 0x6558;    // "an Ethernet frame follows" (GRE, Geneve)
inline constexpr std::uint16_t kPppIpv4 = 0x0021;
inline constexpr std::uint16_t kPppIpv6 = 0x0057;
inline constexpr std::uint16_t kPppMplsUnicast = 0x0281;
inline constexpr std::uint16_t kPppMplsMulticast = 0x0283;
/// Not an EtherType: "IP follows, version nibble decides" (after MPLS and for raw links).
inline constexpr std::uint16_t kByVersionNibble = 0x0000;

inline constexpr std::uint32_t kEthHeaderLen = 14;
inline constexpr std::uint32_t kNoMac = 0xFFFFFFFF;

/// True when `need` bytes are available at `off` below `end` (off may already exceed end).
inline bool has(std::uint32_t off, std::uint32_t need, std::uint32_t end) noexcept {
    return off <= end && end - off >= need;
}

/// Where a link (or tunnelled) frame's network layer starts. `type` is an EtherType (or
/// kByVersionNibble, or kEtherTeb for "an Ethernet header is at `off`"); the MAC offsets point at
/// 6-byte addresses inside the frame, kNoMac when the link has none.
struct LinkStart {
    std::uint16_t type = kByVersionNibble;
    std::uint32_t off = 0;
    std::uint32_t dstMac = kNoMac;
    std::uint32_t srcMac = kNoMac;
};

/// A link type other than Ethernet (link_layer.cpp). kOk, or the reason the frame is skipped.
Anomaly decodeLink(const std::uint8_t* d, std::uint32_t cap, LinkType link,
                   LinkStart& start) noexcept;

/// An 802.11 frame at `off` (link_layer.cpp; also used for CAPWAP's native frames).
Anomaly decode80211(const std::uint8_t* d, std::uint32_t cap, std::uint32_t off,
                    LinkStart& start) noexcept;

/// The transport-level facts of a parsed packet that tunnel recognition needs.
struct TunnelProbe {
    std::uint32_t l4 = 0;       ///< transport header (for GRE / IP-in-IP: the protocol's header)
    std::uint32_t payload = 0;  ///< UDP payload start
    std::uint32_t end = 0;      ///< end of the IP packet inside the capture
    std::uint16_t srcPort = 0;
    std::uint16_t dstPort = 0;
    std::uint8_t proto = 0;
};

/// A recognised tunnel: the inner frame starts at `start` and has the given id.
struct TunnelStep {
    LinkStart start;
    std::uint32_t id = 0;
    TunnelType type = TunnelType::None;
};

enum class TunnelFound : std::uint8_t { No, Yes, Malformed };

/// Is the packet a tunnel, and where does the inner frame start (tunnels.cpp)? Only called
/// for the first fragment (or a whole packet) when tunnels are decapsulated.
TunnelFound findTunnel(const std::uint8_t* d, const TunnelProbe& p, TunnelStep& step) noexcept;

/// True for the IP protocols findTunnel may recognise: UDP, GRE, IPv4 and IPv6 in IP.
constexpr bool mayCarryTunnel(std::uint8_t proto) noexcept {
    return proto == 17 || proto == 47 || proto == 4 || proto == 41;
}

}  // namespace rowprobe::parser
