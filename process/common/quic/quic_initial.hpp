// QUIC client Initial decryption (RFC 9000, RFC 9001, RFC 9369 and the drafts and vendor
// versions seen on the wire), the frame walk of a decrypted Initial, and the pieces a plugin
// needs to read a datagram's long-header packets. Pure functions on byte spans plus one
// per-thread crypto context: no allocation after a thread's first packet, no exceptions, no
// logging (key material never leaves these functions except through InitialKeys).
//
//   datagram ──parseLongHeader──▶ LongHeader { type, version, dcid, scid, token, pn offset, end }
//       │                              (coalesced packets: the next one starts at `end`)
//       │   versionInfo(version) ──▶ salt, v1 or v2 labels and type bits
//       │   deriveClientInitialKeys(version, dcid) ──▶ InitialKeys { key, iv, hp }
//       └── decryptInitial(datagram, header, keys, out) ──▶ plaintext frames (AES-128-ECB header
//                                                          protection, AES-128-GCM payload)
//                 └── forEachCryptoFrame(plaintext, f) ──▶ f(offset, data) per CRYPTO frame
//
// * Versions: draft-7..34 (0xff0000xx), v1, v2 (RFC 9369, and its provisional 0xff020000 /
//   0x709a50c4), mvfst (0xfaceb0xx), picoquic's internal versions, Google's T050/T051 (QUIC with
//   TLS, long header as IETF's) and Q050 (the same packets around a CHLO, gquic.hpp), and the
//   vendor ranges ipfixprobe 5.7 maps to a draft.
// * The AEAD tag is checked: a packet that fails it yields nothing, and every call re-keys the
//   contexts, so nothing of a rejected packet carries over to the next one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rowprobe::quic {

inline constexpr std::size_t kMaxCidLen = 20;
inline constexpr std::size_t kMinPacketLen = 8;  ///< ipfixprobe's QUIC_MIN_PACKET_LENGTH

enum class PacketType : std::uint8_t { Initial, ZeroRtt, Handshake, Retry, VersionNegotiation };

/// QUIC_PACKETS bits (ipfixprobe 5.7).
inline constexpr std::uint8_t kPktInitial = 0x01;
inline constexpr std::uint8_t kPktZeroRtt = 0x02;
inline constexpr std::uint8_t kPktHandshake = 0x04;
inline constexpr std::uint8_t kPktRetry = 0x08;
inline constexpr std::uint8_t kPktVersionNegotiation = 0x10;
inline constexpr std::uint8_t kPktQuicBit = 0x80;

/// What a version needs for its Initial: the HKDF salt and whether it is QUIC v2 (labels
/// "quicv2 key/iv/hp", packet type bits rotated by one).
struct VersionInfo {
    const std::uint8_t* salt = nullptr;  ///< 20 bytes; null: version known but no Initial keys
    /// A second salt to try when the first fails the tag: forced-negotiation versions
    /// (0x?a?a?a?a) carry no salt of their own; clients use v1's or draft-29's.
    const std::uint8_t* altSalt = nullptr;
    bool v2 = false;            ///< "quicv2" key/iv/hp labels
    bool rotatedTypes = false;  ///< v2's packet-type bits (not in draft-ietf-quic-v2-00)
    bool google = false;        ///< Google Q050/T050/T051: the CRYPTO frame has gQUIC's type 0x08
    bool chlo = false;          ///< Google Q050: the CRYPTO stream holds a CHLO, not TLS
};

/// False for versions neither ipfixprobe nor rowprobe knows (a long-header packet of such a
/// version is not QUIC to the plugin). Version 0 (Version Negotiation) is known, without salt.
bool versionInfo(std::uint32_t version, VersionInfo& out) noexcept;

/// RFC 9000 §16 variable-length integer at `off`; advances `off`. False when cut short.
bool readVarint(std::span<const std::uint8_t> p, std::size_t& off, std::uint64_t& v) noexcept;

struct LongHeader {
    std::uint8_t firstByte = 0;  ///< as on the wire (the low bits still protected)
    std::uint32_t version = 0;
    PacketType type = PacketType::Initial;
    bool v2 = false;
    bool chlo = false;                    ///< Google Q050: CRYPTO data is a CHLO
    std::uint8_t cryptoFrameType = 0x06;  ///< 0x08 for Google Q050/T050/T051
    std::span<const std::uint8_t> dcid;
    std::span<const std::uint8_t> scid;
    std::uint64_t tokenLength = 0;  ///< Initial: the token's length; Retry: the token's
    std::size_t start = 0;          ///< offset of the first byte in the datagram
    std::size_t pnOffset = 0;       ///< Initial, 0-RTT, Handshake: the packet number
    std::size_t end = 0;            ///< one past the packet (Retry, VN: the datagram's end)
};

/// Parses the long-header packet starting at `off` of `datagram`. False when it is not one of
/// a known version, or is cut short (then nothing after `off` is a usable packet).
bool parseLongHeader(std::span<const std::uint8_t> datagram, std::size_t off,
                     LongHeader& out) noexcept;

struct InitialKeys {
    std::array<std::uint8_t, 16> key{};
    std::array<std::uint8_t, 12> iv{};
    std::array<std::uint8_t, 16> hp{};
};

/// RFC 9001 §5.2: the client's Initial secret from the version's salt and the client's first
/// destination connection id, then the packet key, IV and header-protection key. `secret`
/// (optional, 32 bytes) receives the client initial secret, for the test vectors.
bool deriveClientInitialKeys(const VersionInfo& version, std::span<const std::uint8_t> dcid,
                             InitialKeys& out, std::uint8_t* secret = nullptr) noexcept;

/// The same for the server's Initials ("server in"); the plugin never needs them (it reads the
/// client's), the RFC 9001 A.3 vector checks the decryptor with them.
bool deriveServerInitialKeys(const VersionInfo& version, std::span<const std::uint8_t> dcid,
                             InitialKeys& out, std::uint8_t* secret = nullptr) noexcept;

/// Removes header protection and decrypts the Initial `h` of `datagram` into `out`; returns the
/// plaintext length, 0 when the packet is malformed, `out` is too small or the tag is wrong.
/// `packetNumber` receives the decoded (truncated) packet number.
std::size_t decryptInitial(std::span<const std::uint8_t> datagram, const LongHeader& h,
                           const InitialKeys& keys, std::span<std::uint8_t> out,
                           std::uint64_t* packetNumber = nullptr) noexcept;

/// Walks the frames of a decrypted Initial: PADDING, PING, ACK (both), CRYPTO, CONNECTION_CLOSE
/// (both). Calls f(offset, data) for each CRYPTO frame (data clipped to the plaintext). Returns
/// false at a frame an Initial may not carry or a frame cut short (frames before it were
/// reported). `cryptoType`: the CRYPTO frame's type (LongHeader::cryptoFrameType).
template <class F>
bool forEachCryptoFrame(std::span<const std::uint8_t> p, F&& f, std::uint8_t cryptoType = 0x06) {
    std::size_t off = 0;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    while (off < p.size()) {
        std::uint8_t type = p[off++];
        if (type == cryptoType)
            type = 0x06;
        else if (type == 0x06)
            type = 0xff;
        switch (type) {
            case 0x00:
            case 0x01:
                break;
            case 0x02:
            case 0x03: {
                std::uint64_t count = 0;
                if (!readVarint(p, off, a) || !readVarint(p, off, a) ||
                    !readVarint(p, off, count) || !readVarint(p, off, a))
                    return false;
                if (count > p.size()) return false;
                for (std::uint64_t i = 0; i < count; ++i) {
                    if (!readVarint(p, off, a) || !readVarint(p, off, a)) return false;
                }
                if (type == 0x03 &&
                    (!readVarint(p, off, a) || !readVarint(p, off, a) || !readVarint(p, off, a)))
                    return false;
                break;
            }
            case 0x06: {
                if (!readVarint(p, off, a) || !readVarint(p, off, b)) return false;
                if (b > p.size() - off) return false;
                f(a, p.subspan(off, static_cast<std::size_t>(b)));
                off += static_cast<std::size_t>(b);
                break;
            }
            case 0x1c:
            case 0x1d:
                if (!readVarint(p, off, a)) return false;
                if (type == 0x1c && !readVarint(p, off, a)) return false;
                if (!readVarint(p, off, b) || b > p.size() - off) return false;
                off += static_cast<std::size_t>(b);
                break;
            default:
                return false;
        }
    }
    return true;
}

}  // namespace rowprobe::quic
