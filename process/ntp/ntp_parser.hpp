// NTP (RFC 5905) packet header parser with ipfixprobe 5.7's acceptance rules, and the text forms
// of its reference id and timestamps. Pure functions on byte spans: no allocation, no
// exceptions, constant work.
//
//   payload ──parseNtp──▶ NtpHeader (raw values)      accepted: ≥ 48 bytes, version 4,
//                                                      mode 3 (client) or 4 (server),
//                                                      stratum ≤ 16, poll ≤ 17
//   NtpHeader ──formatRefId──▶ "a.b.c.d", or INIT/STEP/DENY/RATE (stratum 0 kiss codes)
//   64-bit timestamp ──formatNtpTimestamp──▶ "seconds.micro" (6 digits)
//
// Two ways to write the timestamps (NtpTextMode):
// * Rfc: the seconds and the fraction read as 32-bit big-endian numbers; the fraction rounded
//   to microseconds, a rounding to 1 s carried into the seconds.
// * Ipfixprobe: ipfixprobe 5.7 prints each byte with "%x" (no leading zero) and reads the
//   concatenated hex back, so a byte below 0x10 loses its leading zero and the value shifts
//   (47 of the 224 timestamps of its own reference capture are wrong this way); a fraction that
//   rounds to 1 s prints ".000000" without carrying. Reproduced for byte-compatibility only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rowprobe::ntp {

inline constexpr std::size_t kNtpHeaderLen = 48;

struct NtpHeader {
    std::uint8_t leap = 0;
    std::uint8_t version = 0;
    std::uint8_t mode = 0;
    std::uint8_t stratum = 0;
    std::uint8_t poll = 0;
    std::uint8_t precision = 0;
    std::uint32_t rootDelay = 0;       ///< NTP short format (16.16 s)
    std::uint32_t rootDispersion = 0;  ///< NTP short format (16.16 s)
    std::uint32_t refId = 0;           ///< the 4 bytes, big-endian
    std::uint64_t reference = 0;       ///< NTP timestamps: seconds << 32 | fraction
    std::uint64_t origin = 0;
    std::uint64_t receive = 0;
    std::uint64_t transmit = 0;
};

/// Parses the 48-byte header at the start of `payload` (extensions and MAC are ignored).
/// Returns false for a payload that is too short or fails ipfixprobe's checks (see above).
bool parseNtp(std::span<const std::uint8_t> payload, NtpHeader& out) noexcept;

enum class NtpTextMode : std::uint8_t { Rfc, Ipfixprobe };

/// Longest text: "4294967295.999999" (17) or "255.255.255.255" (15), plus NUL.
inline constexpr std::size_t kNtpTextSize = 24;

/// The reference id as ipfixprobe writes it: dotted decimal of its 4 bytes, or for stratum 0
/// the kiss codes INIT, STEP, DENY and RATE by name. Returns the length written (NUL added).
std::size_t formatRefId(std::uint32_t refId, std::uint8_t stratum,
                        std::span<char, kNtpTextSize> out) noexcept;

/// An NTP timestamp as "seconds.micro" (see NtpTextMode). Returns the length (NUL added).
std::size_t formatNtpTimestamp(std::uint64_t ts, NtpTextMode mode,
                               std::span<char, kNtpTextSize> out) noexcept;

}  // namespace rowprobe::ntp
