// SMTP command and reply statistics, ipfixprobe 5.7's smtp semantics.
//
//   client → port 25: "VERB args\r\n"  ─▶ command bit (HELO/EHLO/MAIL/RCPT/DATA/VRFY/EXPN/
//                                          HELP/NOOP/QUIT; a verb with a non-upper-case letter:
//                                          "unknown"), MAIL/RCPT counts, the first HELO/EHLO
//                                          domain, MAIL FROM and RCPT TO (text after the ':')
//                     after DATA: packets are mail content until one is exactly ".\r\n"
//   port 25 → client: "NNN text" / "NNN-text" ─▶ status-code bit (known codes, else "unknown",
//                                          "SPAM" anywhere: the spam bit), 2xx..5xx counts
//
// A packet "parses" when it is a complete command line or a reply; the flow gets the fields from
// its first packet that parses on (ipfixprobe keeps what failed packets before it changed).
// SmtpRecord is the flow's tier-2 record (about 800 bytes).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::smtp {

// Command bits (SMTP_COMMAND_FLAGS).
inline constexpr std::uint32_t kCmdEhlo = 0x0001;
inline constexpr std::uint32_t kCmdHelo = 0x0002;
inline constexpr std::uint32_t kCmdMail = 0x0004;
inline constexpr std::uint32_t kCmdRcpt = 0x0008;
inline constexpr std::uint32_t kCmdData = 0x0010;
inline constexpr std::uint32_t kCmdRset = 0x0020;  ///< defined by ipfixprobe, never set by it
inline constexpr std::uint32_t kCmdVrfy = 0x0040;
inline constexpr std::uint32_t kCmdExpn = 0x0080;
inline constexpr std::uint32_t kCmdHelp = 0x0100;
inline constexpr std::uint32_t kCmdNoop = 0x0200;
inline constexpr std::uint32_t kCmdQuit = 0x0400;
inline constexpr std::uint32_t kCmdUnknown = 0x8000;

// Status-code bits (SMTP_STAT_CODE_FLAGS): 211 214 220 221 250 251 252 354 421 450 451 452
// 455 500 501 502 503 504 550 551 552 553 554 555 are bits 0..23 in that order.
inline constexpr std::uint32_t kCodeSpam = 0x40000000;
inline constexpr std::uint32_t kCodeUnknown = 0x80000000;

inline constexpr std::size_t kTextCap = 255;  ///< domain/sender/recipient buffers (NUL incl.)

struct SmtpRecord {
    std::uint32_t commandFlags = 0;
    std::uint32_t mailCount = 0;
    std::uint32_t rcptCount = 0;
    std::uint32_t codeFlags = 0;
    std::uint32_t codes[4] = {};  ///< 2xx, 3xx, 4xx, 5xx replies
    std::uint8_t dataTransfer = 0;
    std::uint8_t present = 0;  ///< a packet of the flow has parsed: the fields are exported
    std::uint8_t domainLen = 0;
    std::uint8_t senderLen = 0;
    std::uint8_t recipientLen = 0;
    char domain[kTextCap - 1] = {};
    char sender[kTextCap - 1] = {};
    char recipient[kTextCap - 1] = {};

    std::string_view domainText() const noexcept { return {domain, domainLen}; }
    std::string_view senderText() const noexcept { return {sender, senderLen}; }
    std::string_view recipientText() const noexcept { return {recipient, recipientLen}; }
};

/// The bit of a reply code, 0 when the code has none (then kCodeUnknown is set).
std::uint32_t smtpCodeBit(int code) noexcept;

/// A reply (a packet from port 25); true when it parsed.
bool applySmtpReply(std::span<const std::uint8_t> payload, SmtpRecord& r) noexcept;
/// A command (a packet to port 25); true when it parsed.
bool applySmtpCommand(std::span<const std::uint8_t> payload, SmtpRecord& r) noexcept;

}  // namespace rowprobe::smtp
