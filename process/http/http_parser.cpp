#include "process/http/http_parser.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rowprobe::http {

namespace {

constexpr std::size_t kNpos = static_cast<std::size_t>(-1);
constexpr std::size_t kMaxMethodScan = 32;  // detection: the method's space within 32 bytes
constexpr std::size_t kNameCap = 63;        // ipfixprobe compares names in a 64-byte buffer

std::string_view view(std::span<const std::uint8_t> p, std::size_t from, std::size_t to) noexcept {
    return {reinterpret_cast<const char*>(p.data()) + from, to - from};
}

std::size_t findByte(std::span<const std::uint8_t> p, std::size_t from, std::size_t to,
                     std::uint8_t c) noexcept {
    if (from >= to) return kNpos;
    const void* hit = std::memchr(p.data() + from, c, to - from);
    return hit == nullptr
               ? kNpos
               : static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - p.data());
}

// The first space among the first kMaxMethodScan (32) bytes, as findByte(p, 0, 32, ' '): the
// question every packet of every flow asks (classifyHttp), answered with two 16-byte compares
// instead of a call to memchr when the payload has 32 bytes.
std::size_t methodSpace(std::span<const std::uint8_t> p) noexcept {
    static_assert(kMaxMethodScan == 32);
#if defined(__SSE2__)
    if (p.size() >= kMaxMethodScan) {
        const __m128i space = _mm_set1_epi8(' ');
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.data()));
        const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.data() + 16));
        const auto mask =
            static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(lo, space))) |
            (static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(hi, space))) << 16);
        return mask == 0 ? kNpos : static_cast<std::size_t>(__builtin_ctz(mask));
    }
#endif
    return findByte(p, 0, std::min(p.size(), kMaxMethodScan), ' ');
}

// "\r\n" at or after `from`; like ipfixprobe's strnstr the search gives up at a NUL byte.
std::size_t findCrlf(std::span<const std::uint8_t> p, std::size_t from) noexcept {
    for (std::size_t i = from; i < p.size(); ++i) {
        if (p[i] == 0) return kNpos;
        if (p[i] == '\r' && i + 1 < p.size() && p[i + 1] == '\n') return i;
    }
    return kNpos;
}

bool startsWith(std::span<const std::uint8_t> p, std::size_t at, std::string_view s) noexcept {
    return at + s.size() <= p.size() && std::memcmp(p.data() + at, s.data(), s.size()) == 0;
}

std::string_view stripCrLf(std::string_view v) noexcept {
    if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
    if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
    return v;
}

// atoi() over at most 63 bytes (ipfixprobe copies the code into a 64-byte buffer first).
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

// Walks the header lines starting at `pos`, calling f(name, value, lineStart, colon, eol) for
// each line with a ':' before its end. Returns true
// when the section ends (blank line, end of packet at a line boundary, or f returning false).
template <class F>
bool walkHeaders(std::span<const std::uint8_t> p, std::size_t pos, F&& f) noexcept {
    while (pos < p.size()) {
        const std::size_t eol = findCrlf(p, pos);
        if (eol == kNpos) return false;  // the section continues in a later segment
        if (eol == pos) return true;     // blank line
        const std::size_t colon = findByte(p, pos, p.size(), ':');
        if (colon == kNpos) return false;
        if (colon < eol) {
            const std::string_view name = stripCrLf(view(p, pos, colon));
            const std::string_view value =
                colon + 2 <= eol ? view(p, colon + 2, eol) : std::string_view{};
            if (!f(name, value, pos, colon, eol)) return true;
        }
        pos = eol + 2;
    }
    return true;
}

}  // namespace

HttpKind classifyHttp(std::span<const std::uint8_t> p) noexcept {
    if (p.size() < 4) return HttpKind::None;
    static constexpr std::string_view kMethods[] = {"GET ", "POST", "PUT ", "HEAD", "DELE",
                                                    "TRAC", "OPTI", "CONN", "PATC"};
    for (const auto m : kMethods) {
        if (startsWith(p, 0, m)) return HttpKind::Request;
    }
    // "METHOD SP URI SP HTTP" for methods outside the list.
    const std::size_t sp1 = methodSpace(p);
    if (sp1 != kNpos) {
        const std::size_t sp2 = findByte(p, sp1 + 1, p.size(), ' ');
        if (sp2 != kNpos && startsWith(p, sp2 + 1, "HTTP")) return HttpKind::Request;
    }
    if (startsWith(p, 0, "HTTP")) return HttpKind::Response;
    return HttpKind::None;
}

bool parseHttpRequest(std::span<const std::uint8_t> p, HttpRequest& out) noexcept {
    out = HttpRequest{};
    const std::size_t sp1 = findByte(p, 0, p.size(), ' ');
    if (sp1 == kNpos) return false;
    const std::size_t sp2 = findByte(p, sp1 + 1, p.size(), ' ');
    if (sp2 == kNpos || !startsWith(p, sp2 + 1, "HTTP")) return false;
    out.method = view(p, 0, sp1);
    out.uri = view(p, sp1 + 1, sp2);
    out.requestLine = true;
    const std::size_t eol = findCrlf(p, sp2);
    if (eol == kNpos) return false;
    out.headers = true;
    out.complete = walkHeaders(
        p, eol + 2,
        [&](std::string_view name, std::string_view value, std::size_t, std::size_t, std::size_t) {
            if (name == "Host") {
                out.host = value;
            } else if (name == "User-Agent") {
                out.userAgent = value;
            } else if (name == "Referer") {
                out.referer = value;
            }
            return true;
        });
    return out.complete;
}

bool parseHttpResponse(std::span<const std::uint8_t> p, HttpResponse& out,
                       std::span<char> cookies) noexcept {
    out = HttpResponse{};
    if (!startsWith(p, 0, "HTTP")) return false;
    const std::size_t sp1 = findByte(p, 0, p.size(), ' ');
    if (sp1 == kNpos) return false;
    const std::size_t sp2 = findByte(p, sp1 + 1, p.size(), ' ');
    if (sp2 == kNpos) return false;
    const long code = statusValue(view(p, sp1 + 1, sp2));
    if (code <= 0) return false;
    out.status = static_cast<std::uint16_t>(code);
    out.statusLine = true;
    const std::size_t eol = findCrlf(p, sp2);
    if (eol == kNpos) return false;
    out.headers = true;
    const std::size_t cap = cookies.empty() ? 0 : cookies.size() - 1;  // room for the NUL
    std::size_t used = 0;
    out.complete = walkHeaders(
        p, eol + 2,
        [&](std::string_view name, std::string_view value, std::size_t line, std::size_t colon,
            std::size_t lineEnd) {
            if (name == "Content-Type") {
                out.contentType = value;
            } else if (name == "Server") {
                out.server = value;
            } else if (name == "Set-Cookie") {
                // The name ends at the line's first '=' (searched up to and including the
                // '\r', giving up at a NUL); a line without one ends the header walk.
                std::size_t eq = kNpos;
                for (std::size_t i = line; i <= lineEnd; ++i) {
                    if (p[i] == 0) break;
                    if (p[i] == '=') {
                        eq = i;
                        break;
                    }
                }
                if (eq == kNpos) return false;
                // The value starts two bytes after the ':' (see walkHeaders).
                const std::size_t from = colon + 2;
                const std::string_view cookie = from < eq ? view(p, from, eq) : std::string_view{};
                if (used > 0) {
                    if (used + 2 > cap) return true;  // no room for ';' and one byte
                    cookies[used++] = ';';
                }
                const std::size_t n = std::min(cookie.size(), cap - used);
                if (n != 0) std::memcpy(cookies.data() + used, cookie.data(), n);
                used += n;
            }
            return true;
        });
    if (!cookies.empty()) cookies[used] = 0;
    out.setCookieLen = used;
    return out.complete;
}

std::size_t copyHttpValue(std::string_view v, std::span<char> dst) noexcept {
    if (dst.empty()) return 0;
    v = stripCrLf(v.substr(0, dst.size() - 1));
    if (!v.empty()) std::memcpy(dst.data(), v.data(), v.size());
    dst[v.size()] = 0;
    return v.size();
}

}  // namespace rowprobe::http
