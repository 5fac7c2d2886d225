#include "process/http/http_parser.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "process/common/http/http_head.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rowprobe::http {

namespace {

using httphead::findByte;
using httphead::kHttpSyntax;
using httphead::kNpos;

bool startsWith(std::span<const std::uint8_t> p, std::size_t at, std::string_view s) noexcept {
    return at + s.size() <= p.size() && std::memcmp(p.data() + at, s.data(), s.size()) == 0;
}

constexpr std::size_t kMaxMethodScan = 32;  // detection: the method's space within 32 bytes

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
    httphead::RequestLine line;
    if (!httphead::parseRequestLine(p, kHttpSyntax, line)) return false;
    out.method = line.method;
    out.uri = line.uri;
    out.requestLine = true;
    if (line.headers == kNpos) return false;
    out.headers = true;
    out.complete = httphead::walkHeaderLines(
        p, line.headers, kHttpSyntax,
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
    httphead::StatusLine line;
    if (!httphead::parseStatusLine(p, kHttpSyntax, line)) return false;
    out.status = line.status;
    out.statusLine = true;
    if (line.headers == kNpos) return false;
    out.headers = true;
    const std::size_t cap = cookies.empty() ? 0 : cookies.size() - 1;  // room for the NUL
    std::size_t used = 0;
    out.complete = httphead::walkHeaderLines(
        p, line.headers, kHttpSyntax,
        [&](std::string_view name, std::string_view value, std::size_t lineStart, std::size_t colon,
            std::size_t lineEnd) {
            if (name == "Content-Type") {
                out.contentType = value;
            } else if (name == "Server") {
                out.server = value;
            } else if (name == "Set-Cookie") {
                // The name ends at the line's first '=' (searched up to and including the
                // '\r', giving up at a NUL); a line without one ends the header walk.
                std::size_t eq = kNpos;
                for (std::size_t i = lineStart; i <= lineEnd; ++i) {
                    if (p[i] == 0) break;
                    if (p[i] == '=') {
                        eq = i;
                        break;
                    }
                }
                if (eq == kNpos) return false;
                // The value starts two bytes after the ':' (see walkHeaderLines).
                const std::size_t from = colon + 2;
                const std::string_view cookie =
                    from < eq ? std::string_view(reinterpret_cast<const char*>(p.data()) + from,
                                                 eq - from)
                              : std::string_view{};
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
    return httphead::copyHeadValue(v, dst);
}

}  // namespace rowprobe::http
