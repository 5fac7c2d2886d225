#include "process/sip/sip_parser.hpp"

#include <algorithm>
#include <cstring>

namespace rowprobe::sip {

namespace {

using Bytes = std::span<const std::uint8_t>;

std::uint32_t word(const std::uint8_t* p) noexcept {  // the 4 bytes as text order, MSB first
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

constexpr std::uint32_t tag(const char (&s)[5]) noexcept {
    return static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[0])) << 24 |
           static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[1])) << 16 |
           static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[2])) << 8 |
           static_cast<std::uint8_t>(s[3]);
}

bool isAlnum(std::uint8_t c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool isAlpha(std::uint8_t c) noexcept { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

/// ipfixprobe's parser_strtok without its word-at-a-time search: tokens up to `sep`; a
/// separator that is the last byte ends the walk (no empty last token).
class Tokenizer {
public:
    Tokenizer(const std::uint8_t* s, std::size_t len, std::uint8_t sep) noexcept
        : m_p(s), m_left(len), m_sep(sep) {}
    bool next(const std::uint8_t*& tok, std::size_t& len) noexcept {
        if (!m_more) return false;
        tok = m_p;
        const auto* hit = m_left == 0
                              ? nullptr
                              : static_cast<const std::uint8_t*>(std::memchr(m_p, m_sep, m_left));
        if (hit == nullptr) {
            len = m_left;
            m_more = false;
            return true;
        }
        len = static_cast<std::size_t>(hit - m_p);
        if (len + 1 == m_left) {
            m_more = false;
        } else {
            m_p = hit + 1;
            m_left -= len + 1;
        }
        return true;
    }

private:
    const std::uint8_t* m_p;
    std::size_t m_left;
    std::uint8_t m_sep;
    bool m_more = true;
};

void copyField(const std::uint8_t* s, std::size_t n, SipText& dst, std::size_t cap) noexcept {
    n = std::min(n, cap);
    if (n != 0) std::memcpy(dst.text, s, n);
    dst.len = static_cast<std::uint8_t>(n);
}

/// parser_field_value: the line after `skip` bytes, trimmed to its first and last letter or
/// digit, up to the first ';'. Writes at `dst.text + at` with `cap` bytes of room.
void fieldValue(const std::uint8_t* line, std::size_t lineLen, std::size_t skip, SipText& dst,
                std::size_t at) noexcept {
    const std::size_t cap = kFieldCap - at;
    std::size_t n = lineLen > skip ? lineLen - skip : 0;
    const std::uint8_t* s = line + std::min(skip, lineLen);
    while (n > 0 && !isAlnum(*s)) {
        ++s;
        --n;
    }
    while (n > 0 && !isAlnum(s[n - 1])) --n;
    Tokenizer t(s, n, ';');
    const std::uint8_t* tok = s;
    std::size_t len = 0;
    t.next(tok, len);
    len = std::min(len, cap);
    if (len != 0) std::memcpy(dst.text + at, tok, len);
    dst.len = static_cast<std::uint8_t>(at + len);
}

/// parser_field_uri (see the header; ipfixprobe's length arithmetic for a second ':' on the
/// line is kept, but every read stays inside the payload).
void fieldUri(Bytes p, const std::uint8_t* line, std::size_t lineLen, std::size_t skip,
              SipText& dst) noexcept {
    if (lineLen <= skip) return;
    line += skip;
    lineLen -= skip;
    const std::uint8_t* const end = p.data() + p.size();
    const std::uint8_t* start = nullptr;
    std::size_t finalLen = 0;
    Tokenizer t(line, lineLen, ':');
    const std::uint8_t* tok = nullptr;
    std::size_t n = 0;
    bool have = t.next(tok, n);
    while (have && n > 0) {
        const std::uint8_t* colon = tok + n;
        const std::size_t rest = lineLen > n ? lineLen - n : 0;
        const std::ptrdiff_t at = colon - p.data();
        if (at >= 3 && colon < end) {
            const std::uint32_t w = word(colon - 3) & 0xDFDFDFDF;
            if (w == tag("SIP\x1a")) {
                start = colon - 3;
                finalLen = rest + 3;
                break;
            }
            if (w == tag("IPS\x1a") && at >= 4) {
                start = colon - 4;
                finalLen = rest + 4;
                break;
            }
        }
        have = t.next(tok, n);
    }
    if (start == nullptr) return;
    finalLen = std::min<std::size_t>(finalLen, static_cast<std::size_t>(end - start));
    const auto* gt = static_cast<const std::uint8_t*>(std::memchr(start, '>', finalLen));
    const auto* semi = static_cast<const std::uint8_t*>(std::memchr(start, ';', finalLen));
    // (start is inside the payload, so non-null even when finalLen is 0)
    if (gt != nullptr) {
        finalLen = static_cast<std::size_t>(gt - start);
    } else if (semi != nullptr) {
        finalLen = static_cast<std::size_t>(semi - start);
    } else {
        while (finalLen > 0 && !isAlpha(start[finalLen - 1])) --finalLen;
    }
    copyField(start, finalLen, dst, kFieldCap);
}

}  // namespace

std::uint16_t sipMessageType(Bytes p) noexcept {
    if (p.size() < kMinMessageLen) return kTypeInvalid;
    switch (word(p.data())) {
        case tag("REGI"):
            return 5;
        case tag("INVI"):
            return 1;
        case tag("OPTI"):  // OPTIONS is an HTTP method too: only "OPTIONS sip:"
            return word(p.data() + 4) == tag("ONS ") && word(p.data() + 8) == tag("sip:") ? 6 : 0;
        case tag("NOTI"):  // SSDP uses "NOTIFY * HTTP/1.1"
            return word(p.data() + 4) == tag("FY *") && word(p.data() + 8) == tag(" HTT") ? 0 : 8;
        case tag("CANC"):
            return 3;
        case tag("INFO"):
            return 9;
        case tag("SIP/"):
            return kTypeStatus;
        case tag("ACK "):
            return 2;
        case tag("BYE "):
            return 4;
        case tag("SUBS"):
            return 10;
        case tag("PUBL"):
            return 7;
        default:
            return kTypeInvalid;
    }
}

void parseSipMessage(Bytes p, std::uint16_t msgType, SipRecord& r) noexcept {
    r.msgType = msgType;
    Tokenizer lines(p.data(), p.size(), '\n');
    const std::uint8_t* line = nullptr;
    std::size_t len = 0;
    if (!lines.next(line, len)) return;
    Tokenizer words(line, len, ' ');
    const std::uint8_t* w = nullptr;
    std::size_t wl = 0;
    words.next(w, wl);
    const bool second = words.next(w, wl);
    if (msgType <= 10) {
        if (second) {
            fieldValue(w, wl, 0, r.requestUri, 0);
        } else {
            r.requestUri.len = 0;
        }
    } else if (msgType == kTypeStatus) {
        r.statusCode = kStatusUndefined;
        if (second) {  // atoi: leading blanks, optional sign, digits
            std::size_t i = 0;
            const std::size_t lim = static_cast<std::size_t>(p.data() + p.size() - w);
            while (i < lim && (w[i] == ' ' || (w[i] >= '\t' && w[i] <= '\r'))) ++i;
            bool neg = false;
            if (i < lim && (w[i] == '+' || w[i] == '-')) neg = w[i++] == '-';
            std::uint32_t v = 0;
            for (; i < lim && w[i] >= '0' && w[i] <= '9'; ++i) v = v * 10 + (w[i] - '0');
            r.statusCode = static_cast<std::uint16_t>(neg ? 0U - v : v);
        }
    }
    while (lines.next(line, len) && len > 1) {
        std::uint8_t head[4] = {};
        std::memcpy(head, line, std::min<std::size_t>(len, 4));
        const std::uint32_t w4 = word(head) & 0xDFDFDFDF;
        const std::uint32_t w3 = w4 & 0xFFFFFF00;
        const std::uint32_t w2 = w4 & 0xFFFF0000;
        if (w4 == tag("FROM")) {
            fieldUri(p, line, len, 5, r.callingParty);
        } else if (w2 == (tag("F\x1a\0\0") & 0xFFFF0000)) {
            fieldUri(p, line, len, 2, r.callingParty);
        } else if (w3 == (tag("TO\x1a\0") & 0xFFFFFF00)) {
            fieldUri(p, line, len, 3, r.calledParty);
        } else if (w2 == (tag("T\x1a\0\0") & 0xFFFF0000)) {
            fieldUri(p, line, len, 2, r.calledParty);
        } else if (w4 == tag("VIA\x1a") || w2 == (tag("V\x1a\0\0") & 0xFFFF0000)) {
            const std::size_t skip = w4 == tag("VIA\x1a") ? 4 : 2;
            if (r.via.len == 0) {
                fieldValue(line, len, skip, r.via, 0);
            } else if (r.via.len < kFieldCap) {  // "v1;v2" (ipfixprobe overflows when full)
                r.via.text[r.via.len] = ';';
                fieldValue(line, len, skip, r.via, r.via.len + 1U);
            }
        } else if (w4 == tag("CALL")) {
            fieldValue(line, len, 8, r.callId, 0);
        } else if (w2 == (tag("I\x1a\0\0") & 0xFFFF0000)) {
            fieldValue(line, len, 2, r.callId, 0);
        } else if (w4 == tag("USER")) {
            fieldValue(line, len, 11, r.userAgent, 0);
        } else if (w4 == tag("CSEQ")) {
            fieldValue(line, len, 5, r.cseq, 0);
        }
    }
}

}  // namespace rowprobe::sip
