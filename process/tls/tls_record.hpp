// The tls plugin's per-flow record and how one packet updates it (ipfixprobe 5.7's semantics,
// plus JA3S and the selected cipher), kept apart from the plugin glue so it is tested alone.
//
//   no record yet ── ClientHello ──▶ Stored (record attached: SNI, version, JA3, JA4, extensions)
//                └─ anything else ─▶ Ignored (keep trying the next packets)
//   record ──────── ClientHello ──▶ Ignored (a retransmission: not parsed again)
//          └─────── ServerHello ──▶ Done (ALPN, version from supported_versions, cipher, JA3S;
//                                        the plugin needs no more packets of this flow)
//
// Strings are NUL-terminated in ipfixprobe's 255-byte buffers: a name longer than 253 bytes is
// not stored (ipfixprobe's save_to_buffer needs room for two more bytes).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "process/common/tls/tls_parser.hpp"

namespace rowprobe::tls {

inline constexpr std::size_t kMaxExtensions = 30;  ///< TLS_EXT_TYPE / TLS_EXT_LEN entries

struct TlsRecord {
    std::uint16_t version = 0;  ///< ClientHello version, then the ServerHello's selected one
    std::uint16_t cipher = 0;   ///< selected by the server (0: no ServerHello)
    bool serverHello = false;
    std::uint8_t ja4Len = 0;
    std::uint8_t extCount = 0;
    std::array<std::uint8_t, 16> ja3{};
    std::array<std::uint8_t, 16> ja3s{};  ///< valid when serverHello
    std::array<char, kJa4Len> ja4{};
    char sni[255] = {};
    char alpn[255] = {};  ///< the server's selected protocol
    std::array<std::uint16_t, kMaxExtensions> extTypes{};
    std::array<std::uint16_t, kMaxExtensions> extLengths{};
};

enum class TlsUpdate : std::uint8_t {
    Ignored,  ///< nothing usable in this packet
    Stored,   ///< a ClientHello filled the record
    Done,     ///< the ServerHello was applied; no further packet can change the record
};

struct TlsOptions {
    Ja4Mode ja4 = Ja4Mode::Spec;
    bool quic = false;  ///< JA4's first letter: 'q' for UDP transport (ipfixprobe: IP proto 17)
};

/// Applies one packet to `rec`: the flow's record when `attached`, otherwise a default-
/// constructed scratch record the caller keeps only on Stored.
TlsUpdate applyTlsPacket(std::span<const std::uint8_t> payload, TlsRecord& rec, bool attached,
                         const TlsOptions& options) noexcept;

}  // namespace rowprobe::tls
