// TLS ClientHello / ServerHello parser and the fingerprints computed from one hello (JA3, JA3S,
// JA4). Pure functions on byte spans: no allocation, no exceptions, work bounded by the span.
//
//   payload ──parseHello──▶ Hello { type, versions, cipher, spans into the payload,
//                                   first SNI, first ALPN, extension counts }
//                              │
//                              ├── ja3(hello)   MD5 of "ver,ciphers,exts,groups,pointfmts"
//                              ├── ja3s(hello)  MD5 of "ver,cipher,exts"
//                              ├── ja4(hello, …) "t13d1516h2_<sha256[:12]>_<sha256[:12]>"
//                              └── forEachExtension(hello.extensions, f)
//
// * One record, one handshake message, no reassembly (as ipfixprobe): a hello split over two
//   TCP segments is not parsed. The hello may be cut short by the end of the captured payload;
//   every field that lies beyond it is treated as absent, never read.
// * `Hello` holds views into the payload: valid only as long as the packet is. A plugin copies
//   what it keeps.
// * Record check: content type 22, version major 3. Handshake: type 1 or 2, version major 3
//   (ipfixprobe's version check compares only the major byte, see README).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::tls {

enum class HelloType : std::uint8_t { None = 0, Client = 1, Server = 2 };

inline constexpr std::uint16_t kExtServerName = 0x0000;
inline constexpr std::uint16_t kExtSupportedGroups = 0x000a;
inline constexpr std::uint16_t kExtEcPointFormats = 0x000b;
inline constexpr std::uint16_t kExtSignatureAlgorithms = 0x000d;
inline constexpr std::uint16_t kExtAlpn = 0x0010;
inline constexpr std::uint16_t kExtSupportedVersions = 0x002b;

/// RFC 8701 GREASE values: 0x0a0a, 0x1a1a, … 0xfafa.
constexpr bool isGrease(std::uint16_t v) noexcept {
    return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

struct Hello {
    HelloType type = HelloType::None;
    std::uint16_t recordVersion = 0;        ///< record layer version (0 when parsed without record)
    std::uint16_t handshakeVersion = 0;     ///< legacy_version of the hello, e.g. 0x0303
    std::uint16_t cipher = 0;               ///< ServerHello: the selected cipher suite
    std::span<const std::uint8_t> ciphers;  ///< ClientHello: cipher suite list (2 B each)
    std::span<const std::uint8_t> extensions;  ///< whole extensions that fit in the payload
    std::string_view sni;     ///< ClientHello: first server_name entry, empty if none
    std::string_view alpn;    ///< ClientHello: first offered protocol; ServerHello: selected one
    bool hasSni = false;      ///< ClientHello carries a server_name extension
    bool hasSniName = false;  ///< … with at least one complete name entry
    bool hasAlpn = false;     ///< an ALPN extension with at least one protocol was seen
    /// supported_versions: ServerHello: the selected version; ClientHello: highest offered
    /// non-GREASE value (unsigned comparison). 0 when the extension is absent or empty.
    std::uint16_t supportedVersion = 0;
    std::span<const std::uint8_t> supportedVersions;    ///< ClientHello: the version list
    std::span<const std::uint8_t> supportedGroups;      ///< ClientHello: the group list
    std::span<const std::uint8_t> pointFormats;         ///< ClientHello: ec_point_formats list
    std::span<const std::uint8_t> signatureAlgorithms;  ///< whole extension data (list length
                                                        ///< prefix included)
    std::uint16_t extensionCount = 0;  ///< extensions in `extensions`, GREASE included
    std::uint16_t greaseExtensionCount = 0;
};

/// Parses a TLS record holding a ClientHello or ServerHello at the start of `payload`.
/// Returns false (and `out.type == None`) when the payload is not such a record or the hello is
/// cut before its extensions block starts.
bool parseHello(std::span<const std::uint8_t> payload, Hello& out) noexcept;

/// The same without the 5-byte record header: `handshake` starts with the handshake type byte
/// (QUIC CRYPTO frames carry the handshake this way).
bool parseHandshake(std::span<const std::uint8_t> handshake, Hello& out) noexcept;

/// Calls f(type, data) for each extension of an extensions block (as in `Hello::extensions`).
template <class F>
void forEachExtension(std::span<const std::uint8_t> block, F&& f) {
    std::size_t off = 0;
    while (off + 4 <= block.size()) {
        const auto type = static_cast<std::uint16_t>(block[off] << 8 | block[off + 1]);
        const std::size_t len = static_cast<std::size_t>(block[off + 2] << 8 | block[off + 3]);
        if (off + 4 + len > block.size()) return;
        f(type, block.subspan(off + 4, len));
        off += 4 + len;
    }
}

/// JA3 (ClientHello): MD5 of "version,ciphers,extensions,groups,point_formats", decimal values
/// '-'-joined, GREASE removed from every list (salesforce/ja3).
std::array<std::uint8_t, 16> ja3(const Hello& clientHello) noexcept;

/// JA3S (ServerHello): MD5 of "version,cipher,extensions" (salesforce/ja3, GREASE removed).
std::array<std::uint8_t, 16> ja3s(const Hello& serverHello) noexcept;

/// The text before hashing, for tests and debugging (writes at most out.size() bytes, returns
/// the full length).
std::size_t ja3String(const Hello& clientHello, std::span<char> out) noexcept;
std::size_t ja3sString(const Hello& serverHello, std::span<char> out) noexcept;

enum class Ja4Mode : std::uint8_t {
    Spec,        ///< FoxIO's JA4 specification (GREASE ignored everywhere)
    Ipfixprobe,  ///< ipfixprobe 5.7's variant, see README ("ja4=ipfixprobe")
};

inline constexpr std::size_t kJa4Len = 36;  ///< "t13d1516h2_" + 12 + "_" + 12
/// Lists longer than this are not sorted: ja4() then returns 0 (no fingerprint) rather than a
/// wrong one. Real hellos carry < 100 ciphers and < 30 extensions.
inline constexpr std::size_t kJa4MaxListLen = 512;

/// JA4 of a ClientHello into `out`; returns the length written (36 in Spec mode; 34–36 in
/// Ipfixprobe mode, whose counts are not zero-padded), 0 when not computable.
std::size_t ja4(const Hello& clientHello, bool quic, Ja4Mode mode,
                std::array<char, kJa4Len>& out) noexcept;

}  // namespace rowprobe::tls
