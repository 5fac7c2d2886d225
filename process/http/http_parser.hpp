// HTTP/1.x request and response header parser (one packet, no reassembly), with ipfixprobe
// 5.7's detection rules. Pure functions on byte spans: no allocation, no exceptions, one pass.
// The request/status line and header-line walk are the shared HTTP-style head parser
// (process/common/http/http_head.hpp, HTTP dialect); this file adds HTTP's detection, its
// header fields and the Set-Cookie names.
//
//   classifyHttp(payload) ─▶ Request | Response | None
//   parseHttpRequest(payload, req)    request line + Host, User-Agent, Referer
//   parseHttpResponse(payload, resp, cookieBuf)
//                                      status code + Content-Type, Server, Set-Cookie names
//
// * Results are views into the payload (valid while the packet is); Set-Cookie names are
//   joined with ';' into the caller's buffer. copyHttpValue() applies the field limits.
// * Header names match case-sensitively and the value starts two bytes after the ':' — the
//   values ipfixprobe exports, which the reference outputs depend on.
// * The parse stops at the blank line ending the headers. A header section that runs past the
//   end of the packet makes the parse fail (`complete == false`), but what was read before that
//   point is kept in the result: ipfixprobe's record keeps it too (see the plugin README).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::http {

enum class HttpKind : std::uint8_t { None, Request, Response };

/// Request: the first 4 bytes are one of GET /POST/PUT /HEAD/DELE/TRAC/OPTI/CONN/PATC, or the
/// payload looks like "METHOD SP URI SP HTTP" with a space in the first 32 bytes.
/// Response: the payload starts with "HTTP". Otherwise None.
HttpKind classifyHttp(std::span<const std::uint8_t> payload) noexcept;

struct HttpRequest {
    std::string_view method;  ///< up to the first space of the payload
    std::string_view uri;
    std::string_view host;
    std::string_view userAgent;
    std::string_view referer;
    bool requestLine = false;  ///< method and uri were read ("METHOD SP URI SP HTTP")
    bool headers = false;      ///< the request line ended with CRLF: header fields were read
    bool complete = false;     ///< the header section ended inside the packet
};

struct HttpResponse {
    std::uint16_t status = 0;
    std::string_view contentType;
    std::string_view server;
    std::size_t setCookieLen = 0;  ///< bytes of the ';'-joined cookie names in the buffer
    bool statusLine = false;       ///< a positive status code was read
    bool headers = false;          ///< the status line ended with CRLF: header fields were read
    bool complete = false;
};

/// Parses a request; returns `out.complete`.
bool parseHttpRequest(std::span<const std::uint8_t> payload, HttpRequest& out) noexcept;

/// Parses a response; Set-Cookie names go to `cookieNames` (';'-joined, truncated to
/// cookieNames.size() - 1 bytes like ipfixprobe's 512-byte buffer). Returns `out.complete`.
bool parseHttpResponse(std::span<const std::uint8_t> payload, HttpResponse& out,
                       std::span<char> cookieNames) noexcept;

/// Copies `v` into `dst` as ipfixprobe's fixed buffers hold it: at most dst.size() - 1 bytes,
/// then a trailing '\n' and then '\r' dropped, NUL-terminated. Returns the length.
std::size_t copyHttpValue(std::string_view v, std::span<char> dst) noexcept;

}  // namespace rowprobe::http
