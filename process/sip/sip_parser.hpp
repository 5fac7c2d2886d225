// SIP message detection and header extraction, ipfixprobe 5.7's sip semantics.
//
//   payload (≥ 64 bytes) ─first 4 bytes─▶ message type: INVITE 1, ACK 2, CANCEL 3, BYE 4,
//       REGISTER 5, OPTIONS 6 (only "OPTIONS sip:"), PUBLISH 7, NOTIFY 8 (not "NOTIFY * HTTP",
//       which is SSDP), INFO 9, SUBSCRIBE 10, "SIP/" (a response) 99
//   first line: a request's Request-URI (2nd word), a response's status code (2nd word)
//   header lines (until an empty one), names matched case-insensitively on their first bytes:
//       From: / f:  → calling party (the sip: or sips: URI)     To: / t: → called party
//       Via: / v:   → via values, ';'-joined                    Call-ID: / i: → call id
//       User-Agent: → user agent                                CSeq: → cseq
//   a value: from its first to its last letter or digit, up to the first ';'; a URI: from
//   "sip:"/"sips:" to '>' (else ';', else its last letter). Every field holds at most 127
//   bytes (ipfixprobe's 128-byte buffers).
//
// SipRecord is the tier-2 record of one message (about 900 bytes): the plugin exports every
// SIP message as its own flow record (FLUSH_WITH_REINSERT on the next message).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::sip {

inline constexpr std::uint16_t kTypeInvalid = 0;
inline constexpr std::uint16_t kTypeStatus = 99;
inline constexpr std::uint16_t kStatusUndefined = 999;
inline constexpr std::size_t kMinMessageLen = 64;
inline constexpr std::size_t kFieldCap = 127;  ///< bytes per text field

struct SipText {
    std::uint8_t len = 0;
    char text[kFieldCap] = {};
    std::string_view view() const noexcept { return {text, len}; }
};

struct SipRecord {
    std::uint16_t msgType = 0;
    std::uint16_t statusCode = 0;
    SipText callId, callingParty, calledParty, via, userAgent, cseq, requestUri;
};

/// The SIP message type of a payload, kTypeInvalid when it is not one.
std::uint16_t sipMessageType(std::span<const std::uint8_t> payload) noexcept;

/// Reads the first line and the headers of a message of type `msgType` into `r`.
void parseSipMessage(std::span<const std::uint8_t> payload, std::uint16_t msgType,
                     SipRecord& r) noexcept;

}  // namespace rowprobe::sip
