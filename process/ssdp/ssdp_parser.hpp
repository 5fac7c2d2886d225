// SSDP (UPnP discovery, UDP 1900) header extraction, ipfixprobe 5.7's ssdp semantics.
//
//   NOTIFY *  ──▶ NT: urn:X (→ nt list), LOCATION: url (→ port), SERVER: s (→ server list)
//   M-SEARCH * ──▶ ST: urn:X (→ st list), USER-AGENT: s (→ user-agent list)
//
// A message is recognised by its first byte ('N' or 'M'); header lines end in CR LF, names are
// matched case-insensitively and immediately followed by ':'; the value starts after the
// white space and ends before the CR. NT/ST values count only with the "urn:" prefix, which is
// dropped. Each list is "v1;v2;..." over the flow's packets: a value is appended (with ';')
// when it fits the buffer and is not already a substring of the list. The location port is
// the number after the first ':' behind the host (after the first '.' for IPv4 flows, after
// ']' for IPv6), read like strtol with base 0 (0x.. hex, 0.. octal); 0 = none; the last
// message's port wins. Parsing stops at a NUL byte or the end of the payload.
//
// SsdpRecord is the flow's tier-2 record (about 1.5 kB); the buffers are ipfixprobe's sizes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::ssdp {

inline constexpr std::size_t kUrnCap = 511;     ///< NT and ST lists (incl. the NUL in ipfixprobe)
inline constexpr std::size_t kServerCap = 255;  ///< SERVER list
inline constexpr std::size_t kUserAgentCap = 255;  ///< USER-AGENT list

struct SsdpList {
    std::uint16_t len = 0;
    std::string_view view(const char* data) const noexcept { return {data, len}; }
};

struct SsdpRecord {
    std::uint16_t locationPort = 0;
    SsdpList ntList, stList, serverList, userAgentList;
    char nt[kUrnCap] = {};
    char st[kUrnCap] = {};
    char server[kServerCap] = {};
    char userAgent[kUserAgentCap] = {};
};

/// Reads one SSDP message (a UDP payload sent to port 1900) into `r`.
/// `ipv6`: the flow is IPv6 (decides how the LOCATION port is found).
void applySsdpPacket(std::span<const std::uint8_t> payload, bool ipv6, SsdpRecord& r) noexcept;

/// Appends `value` + ';' to the list `buf` (capacity `cap`, ipfixprobe's rule: only when the
/// list, the value, the ';' and a NUL fit, and only when the value is not already a substring
/// of the list). Exposed for the tests.
void appendSsdpValue(char* buf, std::size_t cap, SsdpList& list, std::string_view value) noexcept;

/// The port of a LOCATION value, 0 when none (see the file comment). Exposed for the tests.
std::uint16_t ssdpLocationPort(std::span<const std::uint8_t> payload, std::size_t begin,
                               std::size_t end, bool ipv6) noexcept;

}  // namespace rowprobe::ssdp
