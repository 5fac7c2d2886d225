// HTTP header parser on hand-made and truncated payloads.
#include "process/http/http_parser.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace {

using rowprobe::http::HttpKind;
using rowprobe::http::HttpRequest;
using rowprobe::http::HttpResponse;

std::span<const std::uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

constexpr std::string_view kRequest =
    "GET /image/png HTTP/1.1\r\n"
    "User-Agent: Wget/1.17.1 (linux-gnu)\r\n"
    "Accept: */*\r\n"
    "Host: httpbin.org\r\n"
    "Referer: http://example.com/\r\n"
    "Connection: Keep-Alive\r\n"
    "\r\n";

constexpr std::string_view kResponse =
    "HTTP/1.1 200 OK\r\n"
    "Server: nginx\r\n"
    "Content-Type: text/html; charset=utf-8\r\n"
    "Set-Cookie: session=abc; Path=/\r\n"
    "Set-Cookie: theme=dark\r\n"
    "Content-Length: 5\r\n"
    "\r\n"
    "hello";

}  // namespace

TEST(HttpParser, ClassifiesRequestsAndResponses) {
    using rowprobe::http::classifyHttp;
    EXPECT_EQ(classifyHttp(bytes("GET / HTTP/1.0\r\n")), HttpKind::Request);
    EXPECT_EQ(classifyHttp(bytes("POST /x HTTP/1.1\r\n")), HttpKind::Request);
    EXPECT_EQ(classifyHttp(bytes("DELETE /x HTTP/1.1\r\n")), HttpKind::Request);
    // A method outside the list is recognised by "METHOD SP URI SP HTTP".
    EXPECT_EQ(classifyHttp(bytes("PROPFIND /dav HTTP/1.1\r\n")), HttpKind::Request);
    EXPECT_EQ(classifyHttp(bytes("PROPFIND /dav FTP/1.1\r\n")), HttpKind::None);
    // ... but only with its space in the first 32 bytes.
    EXPECT_EQ(classifyHttp(bytes(std::string(40, 'X') + " / HTTP/1.1\r\n")), HttpKind::None);
    // The boundary, in payloads of 32 bytes and more (one scan) and shorter (another): a space
    // at byte 31 counts, at byte 32 it does not; a payload of zeros has none.
    EXPECT_EQ(classifyHttp(bytes(std::string(31, 'X') + " / HTTP/1.1\r\n")), HttpKind::Request);
    EXPECT_EQ(classifyHttp(bytes(std::string(32, 'X') + " / HTTP/1.1\r\n")), HttpKind::None);
    EXPECT_EQ(classifyHttp(bytes("XY / HTTP")), HttpKind::Request);
    EXPECT_EQ(classifyHttp(bytes("XY / HTTX")), HttpKind::None);
    EXPECT_EQ(classifyHttp(std::vector<std::uint8_t>(686, 0)), HttpKind::None);
    EXPECT_EQ(classifyHttp(bytes("HTTP/1.1 404 Not Found\r\n")), HttpKind::Response);
    EXPECT_EQ(classifyHttp(bytes("\x16\x03\x01\x02\x00")), HttpKind::None);
    EXPECT_EQ(classifyHttp(bytes("GET")), HttpKind::None);  // shorter than 4 bytes
    EXPECT_EQ(classifyHttp({}), HttpKind::None);
}

TEST(HttpParser, RequestLineAndHeaders) {
    HttpRequest r;
    ASSERT_TRUE(rowprobe::http::parseHttpRequest(bytes(kRequest), r));
    EXPECT_TRUE(r.requestLine);
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.uri, "/image/png");
    EXPECT_EQ(r.host, "httpbin.org");
    EXPECT_EQ(r.userAgent, "Wget/1.17.1 (linux-gnu)");
    EXPECT_EQ(r.referer, "http://example.com/");
}

TEST(HttpParser, HeaderNamesAreCaseSensitiveAsInIpfixprobe) {
    HttpRequest r;
    ASSERT_TRUE(rowprobe::http::parseHttpRequest(
        bytes("GET / HTTP/1.1\r\nhost: lower.example\r\nHost: upper.example\r\n\r\n"), r));
    EXPECT_EQ(r.host, "upper.example");
}

TEST(HttpParser, HeadersCutByThePacketEndKeepWhatWasRead) {
    HttpRequest r;
    EXPECT_FALSE(rowprobe::http::parseHttpRequest(
        bytes("GET /a HTTP/1.1\r\nHost: h.example\r\nUser-Agent: cut-off"), r));
    EXPECT_TRUE(r.requestLine);
    EXPECT_FALSE(r.complete);
    EXPECT_EQ(r.uri, "/a");
    EXPECT_EQ(r.host, "h.example");
    EXPECT_TRUE(r.userAgent.empty());
    // Ending exactly at a line boundary counts as complete (ipfixprobe's loop runs out).
    ASSERT_TRUE(rowprobe::http::parseHttpRequest(bytes("GET /a HTTP/1.1\r\nHost: h\r\n"), r));
    EXPECT_EQ(r.host, "h");
    // A NUL byte ends the search for the line end, as strnstr() does.
    std::string withNul = "GET /a HTTP/1.1\r\nHost: h";
    withNul += '\0';
    withNul += "x\r\n\r\n";
    EXPECT_FALSE(rowprobe::http::parseHttpRequest(bytes(withNul), r));
}

TEST(HttpParser, NotARequestLine) {
    HttpRequest r;
    EXPECT_FALSE(rowprobe::http::parseHttpRequest(bytes("GET /only-one-space"), r));
    EXPECT_FALSE(r.requestLine);
    EXPECT_FALSE(rowprobe::http::parseHttpRequest(bytes("GET / FTP/1.1\r\n\r\n"), r));
    EXPECT_FALSE(rowprobe::http::parseHttpRequest(bytes("GET / HTT"), r));
    EXPECT_FALSE(r.requestLine);
}

TEST(HttpParser, ResponseStatusHeadersAndCookieNames) {
    HttpResponse r;
    char cookies[512];
    ASSERT_TRUE(rowprobe::http::parseHttpResponse(bytes(kResponse), r, cookies));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.server, "nginx");
    EXPECT_EQ(r.contentType, "text/html; charset=utf-8");
    EXPECT_EQ(std::string_view(cookies, r.setCookieLen), "session;theme");
    EXPECT_EQ(cookies[r.setCookieLen], '\0');
}

TEST(HttpParser, ResponseStatusMustBePositive) {
    HttpResponse r;
    char cookies[16];
    EXPECT_FALSE(rowprobe::http::parseHttpResponse(bytes("HTTP/1.1 abc OK\r\n\r\n"), r, cookies));
    EXPECT_FALSE(rowprobe::http::parseHttpResponse(bytes("HTTP/1.1 -5 OK\r\n\r\n"), r, cookies));
    EXPECT_FALSE(rowprobe::http::parseHttpResponse(bytes("HTTP/1.1 200"), r, cookies));
    EXPECT_FALSE(r.statusLine);
    ASSERT_TRUE(
        rowprobe::http::parseHttpResponse(bytes("HTTP/1.0 404 Not Found\r\n\r\n"), r, cookies));
    EXPECT_EQ(r.status, 404);
}

TEST(HttpParser, SetCookieWithoutEqualsEndsTheHeaders) {
    HttpResponse r;
    char cookies[64];
    ASSERT_TRUE(rowprobe::http::parseHttpResponse(
        bytes("HTTP/1.1 200 OK\r\nSet-Cookie: broken\r\nServer: after\r\n\r\n"), r, cookies));
    EXPECT_TRUE(r.complete);
    EXPECT_TRUE(r.server.empty());  // never reached
    EXPECT_EQ(r.setCookieLen, 0u);
}

TEST(HttpParser, CookieNamesAreTruncatedToTheBuffer) {
    std::string resp = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 100; ++i) resp += "Set-Cookie: cookie" + std::to_string(i) + "=v\r\n";
    resp += "\r\n";
    HttpResponse r;
    char cookies[512];
    ASSERT_TRUE(rowprobe::http::parseHttpResponse(bytes(resp), r, cookies));
    EXPECT_EQ(r.setCookieLen, 511u);  // ipfixprobe's char[512] minus the NUL
    EXPECT_EQ(std::string_view(cookies, 17), "cookie0;cookie1;c");
    EXPECT_EQ(cookies[511], '\0');
}

TEST(HttpParser, CopyValueAppliesLimitAndStripsLineEnd) {
    char buf[8];
    EXPECT_EQ(rowprobe::http::copyHttpValue("abc\r", buf), 3u);
    EXPECT_STREQ(buf, "abc");
    EXPECT_EQ(rowprobe::http::copyHttpValue("0123456789", buf), 7u);
    EXPECT_STREQ(buf, "0123456");
    EXPECT_EQ(rowprobe::http::copyHttpValue("", buf), 0u);
    EXPECT_STREQ(buf, "");
}

TEST(HttpParser, EveryPrefixStaysInsideThePayload) {
    for (const std::string_view msg : {kRequest, kResponse}) {
        for (std::size_t len = 0; len <= msg.size(); ++len) {
            const std::string cut(msg.substr(0, len));  // exact-size heap copy for ASan
            const auto in = [&](std::string_view v) {
                return v.empty() ||
                       (v.data() >= cut.data() && v.data() + v.size() <= cut.data() + cut.size());
            };
            HttpRequest q;
            rowprobe::http::parseHttpRequest(bytes(cut), q);
            EXPECT_TRUE(in(q.method) && in(q.uri) && in(q.host) && in(q.userAgent) &&
                        in(q.referer));
            HttpResponse s;
            char cookies[512];
            rowprobe::http::parseHttpResponse(bytes(cut), s, cookies);
            EXPECT_TRUE(in(s.server) && in(s.contentType));
            EXPECT_LT(s.setCookieLen, sizeof cookies);
        }
    }
}
