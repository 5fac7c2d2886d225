#include "process/ovpn/ovpn_parser.hpp"

namespace rowprobe::ovpn {

namespace {

constexpr std::uint32_t kMinDataPacketSize = 500;
constexpr std::uint32_t kMinPackets = 20;
constexpr std::uint64_t kMinExportPackets = 5;
constexpr float kDataShare = 0.6F;  // compared as a float, as ipfixprobe does
constexpr std::int32_t kInvalidLimit = 4;

/// A TLS handshake record of `type` at one of the two places OpenVPN's control packet puts it
/// (without or with the HMAC/packet-id of tls-auth): record type 0x16 at `at`, the handshake
/// type 5 bytes later.
bool tlsHandshakeAt(std::span<const std::uint8_t> p, std::size_t at, std::uint8_t type) noexcept {
    return p.size() > at + 5 && p[at] == 0x16 && p[at + 5] == type;
}

bool clientHello(std::span<const std::uint8_t> p, std::size_t op) noexcept {
    return tlsHandshakeAt(p, op + 14, 0x01) || tlsHandshakeAt(p, op + 42, 0x01);
}

bool serverHello(std::span<const std::uint8_t> p, std::size_t op) noexcept {
    return tlsHandshakeAt(p, op + 26, 0x02) || tlsHandshakeAt(p, op + 54, 0x02);
}

bool rtp(const OvpnPacket& p) noexcept {
    if (p.proto != 17 || p.payload.size() < 12) return false;
    if ((p.payload[0] >> 6) != 2) return false;
    const std::uint8_t type = p.payload[1] & 0x7F;
    return type < 72 || type > 95;
}

void invalid(OvpnState& s) noexcept {
    if (++s.invalid == kInvalidLimit) s.status = kNull;
}

}  // namespace

void applyOvpnPacket(const OvpnPacket& p, OvpnState& s) noexcept {
    std::uint8_t opcode = 0;
    std::size_t op = 0;
    if (p.proto == 17) {
        if (p.payload.empty()) return;
        opcode = p.payload[0] >> 3;
    } else if (p.proto == 6) {
        op = 2;
        if (p.payload.size() <= op) return;
        opcode = p.payload[op] >> 3;
    }
    const bool fromClient = *p.src == s.clientIp;
    const bool toClient = *p.dst == s.clientIp;
    const bool large = p.payloadWireLen > kMinDataPacketSize && !rtp(p);
    switch (opcode) {
        case 1:
        case 7:
        case 10:  // hard reset from the client
            s.status = kResetClient;
            s.invalid = -1;
            s.clientIp = *p.src;
            break;
        case 2:
        case 8:  // hard reset from the server
            if (s.status == kResetClient && toClient) {
                s.status = kResetServer;
                s.invalid = -1;
            } else {
                invalid(s);
            }
            break;
        case 4:  // control
            if (s.status == kAck && fromClient && clientHello(p.payload, op)) {
                s.status = kClientHello;
                s.invalid = -1;
            } else if (s.status == kClientHello && toClient && serverHello(p.payload, op)) {
                s.status = kServerHello;
                s.invalid = -1;
            } else if (s.status == kServerHello || s.status == kControlAck) {
                s.status = kControlAck;
                s.invalid = -1;
            } else {
                invalid(s);
            }
            break;
        case 5:  // ack
            if (s.status == kResetServer && fromClient) {
                s.status = kAck;
                s.invalid = -1;
            } else if (s.status == kServerHello || s.status == kControlAck) {
                s.status = kControlAck;
                s.invalid = -1;
            }
            break;
        case 6:
        case 9:  // data
            if (s.status == kControlAck || s.status == kData) {
                s.status = kData;
                s.invalid = -1;
            }
            if (large) ++s.dataPackets;
            break;
        default:  // 3 (soft reset) and anything else: no transition
            break;
    }
    if (large) ++s.largePackets;
    if (s.invalid >= kInvalidLimit) {
        s.status = kNull;
        s.invalid = -1;
    }
    ++s.invalid;
}

bool finishOvpn(std::uint64_t packets, OvpnState& s) noexcept {
    if (packets <= kMinExportPackets) return false;
    if (packets > kMinPackets && s.status == kData) {
        s.confidence = 100;
    } else if (s.largePackets > kMinPackets) {
        const double share = static_cast<double>(s.dataPackets) / s.largePackets;
        if (share >= kDataShare) s.confidence = static_cast<std::uint8_t>(share * 80);
    }
    return true;
}

}  // namespace rowprobe::ovpn
