// The exported biflow record: what leaves a worker's flow table through its export ring and
// what every output plugin formats. Oriented: "src" is the sender of the flow's first packet,
// index 0 of the per-direction arrays is src -> dst ("forward"), index 1 is dst -> src
// ("reverse", RFC 5103). Plain data, trivially copyable, about 170 bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "rowprobe/packet.hpp"

namespace rowprobe {

/// Why a flow ended. Values are IPFIX flowEndReason (IANA element 136, RFC 5102).
enum class EndReason : std::uint8_t {
    InactiveTimeout = 1,  ///< idle longer than the inactive timeout
    ActiveTimeout = 2,    ///< alive longer than the active timeout: split, continues as a new flow
    EndOfFlow = 3,        ///< TCP FIN or RST seen, or a new SYN after the end
    ForcedEnd = 4,        ///< end of input, shutdown, or a plugin-requested flush
    LackOfResources = 5,  ///< evicted from a full row to make room for a new flow
};

/// Stable lower-case names ("inactive", "active", "end", "forced", "resources").
std::string_view endReasonName(EndReason r) noexcept;

inline constexpr std::size_t kForward = 0;
inline constexpr std::size_t kReverse = 1;

/// The tunnel an inner flow came out of (--tunnel inner|both), from the flow's first packet;
/// all zero for a flow that was not tunnelled.
struct FlowTunnel {
    std::array<std::uint8_t, 16> src{};  ///< outer source (IPv4-mapped for IPv4)
    std::array<std::uint8_t, 16> dst{};  ///< outer destination
    std::uint32_t id = 0;                ///< VNI, TEID, GRE key, ERSPAN session id
    std::uint8_t type = 0;               ///< TunnelType
};

struct FlowRecord {
    std::array<std::uint8_t, 16> srcAddr{};  ///< IPv4-mapped for IPv4 (::ffff:a.b.c.d)
    std::array<std::uint8_t, 16> dstAddr{};
    TimeNs timeFirst = 0;
    TimeNs timeLast = 0;
    std::array<std::uint64_t, 2> bytes{};  ///< IP total length summed, per direction
    std::array<std::uint32_t, 2> packets{};
    std::uint16_t srcPort = 0;
    std::uint16_t dstPort = 0;
    std::uint16_t vlan = 0;
    std::array<std::uint16_t, 2> icmpTypeCode{};  ///< first ICMP type<<8|code per direction
    std::array<std::uint8_t, 6> srcMac{};         ///< of the first packet
    std::array<std::uint8_t, 6> dstMac{};
    std::array<std::uint8_t, 2> tcpFlags{};  ///< OR of all TCP flags per direction
    std::array<std::uint8_t, 2> ttl{};       ///< TTL / hop limit of the first packet per direction
    std::uint8_t proto = 0;
    std::uint8_t ipVersion = 0;
    EndReason endReason = EndReason::ForcedEnd;
    std::uint8_t queue = 0;  ///< worker (queue) that built the record
    FlowTunnel tunnel;       ///< outer addresses, type and id of an inner flow's tunnel
    // Process-plugin data (rowprobe/plugin_data.hpp): extLen bytes of instances at `ext`, valid
    // during OutputPlugin::write only (they live in the export ring's ExtRing). extLen == 0
    // when no plugin exported anything for this flow.
    std::uint32_t extLen = 0;
    const std::uint8_t* ext = nullptr;

    bool isIpv4() const noexcept { return ipVersion == 4; }
};

}  // namespace rowprobe
