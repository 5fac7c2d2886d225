// OpenVPN detection (ipfixprobe 5.7's ovpn plugin semantics): a state machine over the opcode
// of every packet (the top 5 bits of byte 0 for UDP, of byte 2 for TCP, after the length) and
// a count of large packets.
//
//   null ─hard reset client (1,7,10)─▶ reset_client ─hard reset server (2,8), to the client─▶
//   reset_server ─ack (5), from the client─▶ ack ─control (4) with a TLS ClientHello, from the
//   client─▶ client_hello ─control with a TLS ServerHello, to the client─▶ server_hello
//   ─control or ack─▶ control_ack ─data (6,9)─▶ data
//
// A packet that makes no valid transition counts as invalid; four in a row reset the machine
// to null. "Large" packets have more than 500 payload bytes on the wire and are not RTP (UDP,
// version 2, payload type outside 72..95); data packets among them are counted separately.
//
// Verdict when the flow ends (ovpnConfidence): flows of at most 5 packets are not reported
// (port scans); more than 20 packets in the data state: 100; otherwise, more than 20 large
// packets of which at least 60 % are data: that share × 80; else 0.
//
// OvpnState is the whole per-flow record (tier 1, 36 bytes).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace rowprobe::ovpn {

// Machine states (OvpnState::status).
inline constexpr std::uint8_t kNull = 0;
inline constexpr std::uint8_t kResetClient = 1;
inline constexpr std::uint8_t kResetServer = 2;
inline constexpr std::uint8_t kAck = 3;
inline constexpr std::uint8_t kClientHello = 4;
inline constexpr std::uint8_t kServerHello = 5;
inline constexpr std::uint8_t kControlAck = 6;
inline constexpr std::uint8_t kData = 7;

struct OvpnState {
    std::array<std::uint8_t, 16> clientIp{};  ///< sender of the client's hard reset
    std::uint32_t largePackets = 0;
    std::uint32_t dataPackets = 0;
    std::int32_t invalid = 0;  ///< packets since the last valid transition (ipfixprobe's counter)
    std::uint8_t status = kNull;
    std::uint8_t confidence = 0;
    std::uint8_t present = 0;  ///< the flow carries the field (cleared for short flows)
};

/// What the state machine needs of one packet.
struct OvpnPacket {
    std::span<const std::uint8_t> payload;              ///< captured L4 payload
    std::uint32_t payloadWireLen = 0;                   ///< L4 payload length on the wire
    std::uint8_t proto = 0;                             ///< 6 or 17 (others carry no opcode)
    const std::array<std::uint8_t, 16>* src = nullptr;  ///< the packet's source address
    const std::array<std::uint8_t, 16>* dst = nullptr;
};

/// Feeds one packet to the state machine.
void applyOvpnPacket(const OvpnPacket& p, OvpnState& s) noexcept;

/// The verdict when the flow ends; false when the flow is too short to report.
bool finishOvpn(std::uint64_t packets, OvpnState& s) noexcept;

}  // namespace rowprobe::ovpn
