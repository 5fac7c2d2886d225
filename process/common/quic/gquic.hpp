// Legacy Google QUIC (gQUIC, "QUIC crypto"): the client's first packets of versions Q024..Q046,
// whose handshake message (CHLO) travels in clear in stream 1, and the CHLO message itself,
// which Q050 also carries (encrypted like an IETF Initial, see quic_initial.hpp). Pure
// functions on byte spans: no allocation, no exceptions, every read bounds-checked.
//
//   Q024..Q043  public header: flags (0x01 version, 0x08 8-byte connection id, 0x30 packet
//               number length 1/2/4/6; a client's packet never has a nonce), connection
//               id, version "Q0xx", packet number, 12-byte message hash, private flags
//               (up to Q033), frames
//   Q044..Q046  IETF-invariant long header: 0x80 | type bits, version, one byte of connection
//               id lengths (nibbles, 0 or n+3), ids, packet number ((first & 3) + 1 bytes),
//               12-byte message hash, frames
//       └── forEachGquicStreamData(frames) ──▶ f(offset, data) for stream 1 (the handshake)
//                 └── chloLength / parseChlo ──▶ SNI, UAID (user agent), VER tags
//
// * Frames read: PADDING, STREAM (any stream id; only stream 1 is reported), ACK (Q034+
//   layout), STOP_WAITING, PING; anything else ends the walk (frames before it were reported).
// * Lengths in the frames are little-endian before Q039 and big-endian from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::quic {

/// "Q0xx" versions with a cleartext CHLO (nDPI 4.2 and Wireshark: Q024..Q046).
bool isGquicCleartextVersion(std::uint32_t version) noexcept;

/// Number of a "Q0xx" / "T0xx" version (43 for Q043), 0 for other versions.
unsigned gquicVersionNumber(std::uint32_t version) noexcept;

struct GquicHeader {
    std::uint32_t version = 0;
    std::span<const std::uint8_t> dcid;  ///< the connection id (Q043: the only one)
    std::span<const std::uint8_t> scid;  ///< Q046 only
    std::size_t frames = 0;              ///< offset of the first frame in the datagram
    std::size_t packetNumberLength = 1;  ///< STOP_WAITING's field has this length
    bool longHeader = false;             ///< Q044..Q046 style
    bool initial = true;                 ///< Q046: long-header type 0 (Initial)
};

/// Cheap test before parseGquicHeader, inlined on the packet path: a version "Q..." where a
/// public header (flags 0x09 without 0x02) or a long header puts it.
inline bool mayBeGquic(std::span<const std::uint8_t> d) noexcept {
    if (d.size() < 14) return false;
    return (d[0] & 0x80) != 0 ? d[1] == 'Q' : ((d[0] & 0x0b) == 0x09 && d[9] == 'Q');
}

/// Parses the header of a gQUIC packet carrying a version (the client's handshake packets).
/// False when the datagram is not one, or is cut before its first frame.
bool parseGquicHeader(std::span<const std::uint8_t> datagram, GquicHeader& out) noexcept;

/// Reads a gQUIC little/big-endian unsigned of `len` bytes (≤ 8) at `off`; advances `off`.
bool readGquicUint(std::span<const std::uint8_t> p, std::size_t& off, std::size_t len,
                   bool bigEndian, std::uint64_t& v) noexcept;

/// Walks the frames of a cleartext gQUIC packet (`p`: from h.frames to the datagram's end) and calls f(offset, data) for every STREAM frame of stream 1. Returns false
/// at a frame it does not know or one cut short.
template <class F>
bool forEachGquicStreamData(std::span<const std::uint8_t> p, const GquicHeader& h, F&& f) {
    const std::uint32_t version = h.version;
    const unsigned number = gquicVersionNumber(version);
    const bool be = number >= 39;
    std::size_t off = 0;
    std::uint64_t v = 0;
    while (off < p.size()) {
        const std::uint8_t type = p[off++];
        if (type == 0x00) continue;  // PADDING (to the end of the packet in practice)
        if ((type & 0x80) != 0) {    // STREAM: 1 fin datalen ooo ss
            const std::size_t sidLen = (type & 3U) + 1;
            const unsigned o = (type >> 2) & 7U;
            const std::size_t offLen = o == 0 ? 0 : o + 1;
            std::uint64_t sid = 0;
            std::uint64_t offset = 0;
            if (!readGquicUint(p, off, sidLen, be, sid) ||
                !readGquicUint(p, off, offLen, be, offset))
                return false;
            std::uint64_t len = p.size() - off;
            if ((type & 0x20) != 0 && (!readGquicUint(p, off, 2, be, len) || len > p.size() - off))
                return false;
            if (sid == 1) f(offset, p.subspan(off, static_cast<std::size_t>(len)));
            off += static_cast<std::size_t>(len);
            continue;
        }
        if ((type & 0xc0) == 0x40 && number >= 34) {  // ACK: 01 n u ll mm
            static constexpr std::size_t kLen[] = {1, 2, 4, 6};
            const std::size_t largest = kLen[(type >> 2) & 3U];
            const std::size_t block = kLen[type & 3U];
            std::uint64_t blocks = 0;
            if (!readGquicUint(p, off, largest, be, v) || !readGquicUint(p, off, 2, be, v) ||
                ((type & 0x20) != 0 && !readGquicUint(p, off, 1, be, blocks)) ||
                !readGquicUint(p, off, block, be, v))
                return false;
            for (std::uint64_t i = 0; i < blocks; ++i)
                if (!readGquicUint(p, off, 1 + block, be, v)) return false;
            std::uint64_t stamps = 0;
            if (!readGquicUint(p, off, 1, be, stamps)) return false;
            if (stamps != 0 && !readGquicUint(p, off, 5, be, v)) return false;
            for (std::uint64_t i = 1; i < stamps; ++i)
                if (!readGquicUint(p, off, 3, be, v)) return false;
            continue;
        }
        if (type == 0x07) continue;  // PING
        if (type == 0x06) {          // STOP_WAITING: entropy (before Q034), least unacked delta
            const std::size_t len = h.packetNumberLength + (number < 34 ? 1 : 0);
            if (len > p.size() - off) return false;
            off += len;
            continue;
        }
        return false;
    }
    return true;
}

/// Length of the CHLO starting `prefix` once its tag table is there (8 + 8 × tags + the last
/// value's end offset), 0 while it is not yet known or when `prefix` is not a CHLO.
std::size_t chloLength(std::span<const std::uint8_t> prefix) noexcept;

struct Chlo {
    std::string_view sni;        ///< tag "SNI\0"
    std::string_view userAgent;  ///< tag "UAID"
    std::uint32_t version = 0;   ///< tag "VER\0" (the version the client asks for), 0 if absent
};

/// Parses a whole CHLO (message tag "CHLO", tag count, tag table, values). Tags are read in
/// order until an end offset goes backwards or past the message (nDPI stops there too).
bool parseChlo(std::span<const std::uint8_t> msg, Chlo& out) noexcept;

}  // namespace rowprobe::quic
