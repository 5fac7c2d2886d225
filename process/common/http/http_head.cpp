#include "process/common/http/http_head.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace rowprobe::httphead {

namespace {

constexpr std::size_t kNameCap = 63;  // ipfixprobe copies into a 64-byte buffer first

bool startsWith(std::span<const std::uint8_t> p, std::size_t at, std::string_view s) noexcept {
    return at + s.size() <= p.size() && std::memcmp(p.data() + at, s.data(), s.size()) == 0;
}

std::string_view view(std::span<const std::uint8_t> p, std::size_t from, std::size_t to) noexcept {
    return {reinterpret_cast<const char*>(p.data()) + from, to - from};
}

// atoi() over at most 63 bytes.
long statusValue(std::string_view s) noexcept {
    s = stripCrLf(s.substr(0, kNameCap));
    std::size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    long v = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        v = std::min<long>(v * 10 + (s[i] - '0'), INT_MAX);
    }
    return negative ? -v : v;
}

std::size_t headersAfter(std::span<const std::uint8_t> p, std::size_t from,
                         LineEnd lineEnd) noexcept {
    const std::size_t eol = findLineEnd(p, from, lineEnd);
    if (eol == kNpos) return kNpos;
    return eol + (lineEnd == LineEnd::Crlf ? 2 : 1);
}

}  // namespace

std::size_t findByte(std::span<const std::uint8_t> p, std::size_t from, std::size_t to,
                     std::uint8_t c) noexcept {
    if (from >= to) return kNpos;
    const void* hit = std::memchr(p.data() + from, c, to - from);
    return hit == nullptr
               ? kNpos
               : static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - p.data());
}

std::size_t findLineEnd(std::span<const std::uint8_t> p, std::size_t from,
                        LineEnd lineEnd) noexcept {
    if (lineEnd == LineEnd::Lf) return findByte(p, from, p.size(), '\n');
    for (std::size_t i = from; i < p.size(); ++i) {
        if (p[i] == 0) return kNpos;
        if (p[i] == '\r' && i + 1 < p.size() && p[i + 1] == '\n') return i;
    }
    return kNpos;
}

std::string_view stripCrLf(std::string_view v) noexcept {
    if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
    if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
    return v;
}

bool parseRequestLine(std::span<const std::uint8_t> p, const HeadSyntax& syntax,
                      RequestLine& out) noexcept {
    out = RequestLine{};
    const std::size_t sp1 = findByte(p, 0, p.size(), ' ');
    if (sp1 == kNpos) return false;
    const std::size_t sp2 = findByte(p, sp1 + 1, p.size(), ' ');
    if (sp2 == kNpos || !startsWith(p, sp2 + 1, syntax.version)) return false;
    out.method = view(p, 0, sp1);
    out.uri = view(p, sp1 + 1, sp2);
    out.ok = true;
    out.headers = headersAfter(p, sp2, syntax.lineEnd);
    return true;
}

bool parseStatusLine(std::span<const std::uint8_t> p, const HeadSyntax& syntax,
                     StatusLine& out) noexcept {
    out = StatusLine{};
    if (!startsWith(p, 0, syntax.version)) return false;
    const std::size_t sp1 = findByte(p, 0, p.size(), ' ');
    if (sp1 == kNpos) return false;
    const std::size_t sp2 = findByte(p, sp1 + 1, p.size(), ' ');
    if (sp2 == kNpos) return false;
    const long code = statusValue(view(p, sp1 + 1, sp2));
    if (code <= 0) return false;
    out.status = static_cast<std::uint16_t>(code);
    out.ok = true;
    out.headers = headersAfter(p, sp2, syntax.lineEnd);
    return true;
}

std::size_t copyHeadValue(std::string_view v, std::span<char> dst) noexcept {
    if (dst.empty()) return 0;
    v = stripCrLf(v.substr(0, dst.size() - 1));
    if (!v.empty()) std::memcpy(dst.data(), v.data(), v.size());
    dst[v.size()] = 0;
    return v.size();
}

}  // namespace rowprobe::httphead
