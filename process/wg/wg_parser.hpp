// WireGuard detection on UDP payloads (ipfixprobe 5.7's wg plugin semantics).
//
//   payload ─▶ type byte 1..4, three reserved zero bytes, exact size per type
//     1 handshake initiation (148 B)  sender index at 4     → peer of the sending side
//     2 handshake response   (92 B)   sender 4, receiver 8  → both peers
//     3 cookie reply         (64 B)   receiver index at 4   → peer of the receiving side
//     4 transport data       (≥32 B)  receiver index at 4   → peer of the receiving side
//   confidence: 1 when bytes 4..7 are 00 01 00 00 (looks like a DNS query header), else 100.
//
// WgState is the whole per-flow record (tier 1); peers are kept in the flow's orientation
// (src = initiator). An initiation from a side whose peer index is already known and differs
// starts a new WireGuard session: applyWgPacket reports NewSession and changes nothing, and
// the plugin exports the flow and starts a new one (ipfixprobe's FLOW_FLUSH_WITH_REINSERT).
#pragma once

#include <cstdint>
#include <span>

namespace rowprobe::wg {

inline constexpr std::size_t kInitiationLen = 148;
inline constexpr std::size_t kResponseLen = 92;
inline constexpr std::size_t kCookieReplyLen = 64;
inline constexpr std::size_t kMinTransportLen = 32;

struct WgState {
    std::uint32_t srcPeer = 0;    ///< index chosen by the flow's initiator (host order)
    std::uint32_t dstPeer = 0;    ///< index chosen by the responder
    std::uint8_t confidence = 0;  ///< 0 (stopped looking), 1 or 100
    std::uint8_t present = 0;     ///< the flow carries the wg fields
};

enum class WgVerdict : std::uint8_t {
    NotWg,       ///< not a WireGuard message; the state is unchanged
    Wg,          ///< a WireGuard message; peers and confidence updated
    NewSession,  ///< an initiation with a different sender index; the state is unchanged
};

/// Classifies one UDP payload and updates `s` (forward: the packet goes initiator → responder).
WgVerdict applyWgPacket(std::span<const std::uint8_t> payload, bool forward, WgState& s) noexcept;

}  // namespace rowprobe::wg
