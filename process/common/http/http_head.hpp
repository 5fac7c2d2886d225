// The head of an HTTP-style message — request line or status line, then header lines up to a
// blank line — as ipfixprobe 5.7's http and rtsp plugins read it, one packet at a time. Pure
// functions on byte spans: no allocation, no exceptions, every index bounds-checked, work
// linear in the payload. Shared by the http and rtsp plugins; each adds its own detection and
// picks its own header fields.
//
//   payload ─parseRequestLine(syntax)─▶ method, uri, where the header lines start
//           ─parseStatusLine(syntax)──▶ status code, where the header lines start
//           ─walkHeaderLines(syntax, from, f)─▶ f(name, value, line, colon, lineEnd) per line
//
// The two dialects (HeadSyntax) differ only where ipfixprobe's two plugins differ:
//
//   |                     | HTTP (kHttpSyntax)                    | RTSP (kRtspSyntax)        |
//   |---------------------|---------------------------------------|---------------------------|
//   | version token       | "HTTP"                                | "RTSP"                    |
//   | line end            | "\r\n"; the search gives up at a NUL  | '\n'                      |
//   | end of the headers  | an empty line                         | a line of 0 or 1 byte     |
//
// Results are views into the payload (valid while the packet is). A header value starts two
// bytes after the ':' and runs to the line end; copyHeadValue() cuts it to a field's buffer and
// drops a trailing "\n" and then "\r" — the values ipfixprobe exports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::httphead {

inline constexpr std::size_t kNpos = static_cast<std::size_t>(-1);

enum class LineEnd : std::uint8_t {
    Crlf,  ///< "\r\n", not found past a NUL byte (ipfixprobe's strnstr)
    Lf,    ///< '\n' (memchr)
};

struct HeadSyntax {
    std::string_view version;  ///< the token after the URI / at the start of a response
    LineEnd lineEnd;
};

inline constexpr HeadSyntax kHttpSyntax{"HTTP", LineEnd::Crlf};
inline constexpr HeadSyntax kRtspSyntax{"RTSP", LineEnd::Lf};

struct RequestLine {
    std::string_view method;  ///< up to the payload's first space
    std::string_view uri;
    std::size_t headers = kNpos;  ///< start of the header lines; kNpos: the line does not end
    bool ok = false;              ///< "METHOD SP URI SP <version>" was read
};

struct StatusLine {
    std::uint16_t status = 0;
    std::size_t headers = kNpos;
    bool ok = false;  ///< "<version>... SP CODE SP" with a positive code was read
};

/// Reads "METHOD SP URI SP <version>" at the start of `p`.
bool parseRequestLine(std::span<const std::uint8_t> p, const HeadSyntax& syntax,
                      RequestLine& out) noexcept;

/// Reads "<version>... SP CODE SP" at the start of `p`; the code is atoi() of the text between
/// the first two spaces (at most 63 bytes of it) and must be positive.
bool parseStatusLine(std::span<const std::uint8_t> p, const HeadSyntax& syntax,
                     StatusLine& out) noexcept;

/// The position of the line end at or after `from` (the '\r' of "\r\n", or the '\n'), kNpos.
std::size_t findLineEnd(std::span<const std::uint8_t> p, std::size_t from,
                        LineEnd lineEnd) noexcept;

/// The first `c` in p[from, to), kNpos when none.
std::size_t findByte(std::span<const std::uint8_t> p, std::size_t from, std::size_t to,
                     std::uint8_t c) noexcept;

/// `v` without one trailing '\n' and then one trailing '\r'.
std::string_view stripCrLf(std::string_view v) noexcept;

/// Copies `v` into `dst` as ipfixprobe's fixed buffers hold it: at most dst.size() - 1 bytes,
/// then a trailing '\n' and then '\r' dropped, NUL-terminated. Returns the length.
std::size_t copyHeadValue(std::string_view v, std::span<char> dst) noexcept;

/// Walks the header lines from `pos`, calling
///   bool f(std::string_view name, std::string_view value, std::size_t line,
///          std::size_t colon, std::size_t lineEnd)
/// for every line with a ':' before its end (f returning false stops the walk, which then
/// counts as ended). Returns true when the section ends inside the packet — the end-of-headers
/// line, the packet ending at a line boundary, or f's stop — and false when a line runs past
/// the packet or the rest of the packet has no ':' (ipfixprobe's "fragmented header").
template <class F>
bool walkHeaderLines(std::span<const std::uint8_t> p, std::size_t pos, const HeadSyntax& syntax,
                     F&& f) noexcept {
    const bool crlf = syntax.lineEnd == LineEnd::Crlf;
    const std::size_t endLen = crlf ? 2 : 1;
    const std::size_t blankMax = crlf ? 0 : 1;  // bytes before the line end of an "empty" line
    while (pos < p.size()) {
        const std::size_t eol = findLineEnd(p, pos, syntax.lineEnd);
        if (eol == kNpos) return false;
        if (eol - pos <= blankMax) return true;  // "\r\n" alone, or 0 or 1 byte then '\n'
        const std::size_t colon = findByte(p, pos, p.size(), ':');
        if (colon == kNpos) return false;
        if (colon < eol) {
            const auto* base = reinterpret_cast<const char*>(p.data());
            const std::string_view name = stripCrLf({base + pos, colon - pos});
            const std::string_view value = colon + 2 <= eol
                                               ? std::string_view{base + colon + 2, eol - colon - 2}
                                               : std::string_view{};
            if (!f(name, value, pos, colon, eol)) return true;
        }
        pos = eol + endLen;
    }
    return true;
}

}  // namespace rowprobe::httphead
