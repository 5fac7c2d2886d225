#include "process/smtp/smtp_parser.hpp"

#include <algorithm>
#include <cstring>

namespace rowprobe::smtp {

namespace {

constexpr int kCodes[] = {211, 214, 220, 221, 250, 251, 252, 354, 421, 450, 451, 452,
                          455, 500, 501, 502, 503, 504, 550, 551, 552, 553, 554, 555};

bool isDigit(std::uint8_t c) noexcept { return c >= '0' && c <= '9'; }

std::uint8_t lower(std::uint8_t c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<std::uint8_t>(c + 32) : c;
}

/// ipfixprobe's strncasestr: a match restarts after a mismatch without re-testing the byte,
/// and the scan stops at a NUL.
bool containsSpam(std::span<const std::uint8_t> p) noexcept {
    static constexpr char kWord[] = "spam";
    std::size_t j = 0;
    for (const std::uint8_t c : p) {
        if (c == 0) return false;
        if (lower(c) == static_cast<std::uint8_t>(kWord[j])) {
            if (++j == 4) return true;
        } else {
            j = 0;
        }
    }
    return false;
}

std::size_t find(std::span<const std::uint8_t> p, std::size_t from, std::uint8_t c) noexcept {
    for (std::size_t i = from; i < p.size(); ++i)
        if (p[i] == c) return i;
    return p.size();
}

/// Copies p[begin, end) (cut at kTextCap - 1 bytes) into a text field.
void copyText(std::span<const std::uint8_t> p, std::size_t begin, std::size_t end, char* out,
              std::uint8_t& len) noexcept {
    const std::size_t n = std::min(end - begin, kTextCap - 1);
    std::memcpy(out, p.data() + begin, n);
    len = static_cast<std::uint8_t>(n);
}

/// MAIL FROM / RCPT TO: the text between the first ':' after the verb's space and the CR.
void takeAddress(std::span<const std::uint8_t> p, std::size_t space, char* out,
                 std::uint8_t& len) noexcept {
    const std::size_t colon = find(p, space + 1, ':');
    const std::size_t cr = find(p, space, '\r');
    if (colon == p.size() || cr == p.size() || cr < colon + 1) return;
    copyText(p, colon + 1, cr, out, len);
}

}  // namespace

std::uint32_t smtpCodeBit(int code) noexcept {
    for (std::size_t i = 0; i < std::size(kCodes); ++i)
        if (kCodes[i] == code) return std::uint32_t{1} << i;
    return 0;
}

bool applySmtpReply(std::span<const std::uint8_t> p, SmtpRecord& r) noexcept {
    if (p.size() < 5 || (p[3] != ' ' && p[3] != '-')) return false;
    if (!isDigit(p[0]) || !isDigit(p[1]) || !isDigit(p[2])) return false;
    const int code = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
    const std::uint32_t bit = smtpCodeBit(code);
    r.codeFlags |= bit != 0 ? bit : kCodeUnknown;
    if (containsSpam(p)) r.codeFlags |= kCodeSpam;
    if (p[0] < '2' || p[0] > '5') return false;
    ++r.codes[p[0] - '2'];
    return true;
}

bool applySmtpCommand(std::span<const std::uint8_t> p, SmtpRecord& r) noexcept {
    if (p.empty()) return false;
    if (r.dataTransfer != 0) {
        if (p.size() != 3 || p[0] != '.' || p[1] != '\r' || p[2] != '\n') return false;
        r.dataTransfer = 0;
        return true;
    }
    const std::size_t cr = find(p, 0, '\r');
    if (cr == p.size()) return false;
    // The verb ends at the payload's first space (even one after the CR), else at the CR.
    const std::size_t space = find(p, 0, ' ');
    const bool hasSpace = space != p.size();
    const std::size_t len = hasSpace ? space : cr;
    if (len >= 32) return false;
    std::string_view verb(reinterpret_cast<const char*>(p.data()), len);
    verb = verb.substr(0, verb.find('\0'));  // ipfixprobe compares it as a C string
    if (verb == "HELO" || verb == "EHLO") {
        if (r.domainLen == 0 && hasSpace) {
            const std::size_t end = find(p, space, '\r');
            if (end != p.size()) copyText(p, space + 1, end, r.domain, r.domainLen);
        }
        r.commandFlags |= verb == "HELO" ? kCmdHelo : kCmdEhlo;
    } else if (verb == "RCPT") {
        ++r.rcptCount;
        if (r.recipientLen == 0 && hasSpace) takeAddress(p, space, r.recipient, r.recipientLen);
        r.commandFlags |= kCmdRcpt;
    } else if (verb == "MAIL") {
        ++r.mailCount;
        if (r.senderLen == 0 && hasSpace) takeAddress(p, space, r.sender, r.senderLen);
        r.commandFlags |= kCmdMail;
    } else if (verb == "DATA") {
        r.dataTransfer = 1;
        r.commandFlags |= kCmdData;
    } else if (verb == "VRFY") {
        r.commandFlags |= kCmdVrfy;
    } else if (verb == "EXPN") {
        r.commandFlags |= kCmdExpn;
    } else if (verb == "HELP") {
        r.commandFlags |= kCmdHelp;
    } else if (verb == "NOOP") {
        r.commandFlags |= kCmdNoop;
    } else if (verb == "QUIT") {
        r.commandFlags |= kCmdQuit;
    } else if (!std::all_of(verb.begin(), verb.end(),
                            [](char c) { return c >= 'A' && c <= 'Z'; })) {
        r.commandFlags |= kCmdUnknown;
    }
    return true;
}

}  // namespace rowprobe::smtp
