// libFuzzer target for the HTTP header parser: every view it returns must lie inside the
// payload, and the Set-Cookie names must stay inside their buffer.
//
//   ./http_fuzz -max_len=2048 corpus/http_fuzz
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "process/http/http_parser.hpp"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto buf = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
    if (size != 0) std::memcpy(buf.get(), data, size);
    const std::span<const std::uint8_t> payload(buf.get(), size);
    const auto in = [&](std::string_view v) {
        const auto* b = reinterpret_cast<const std::uint8_t*>(v.data());
        return v.empty() || (b >= payload.data() && b + v.size() <= payload.data() + size);
    };

    (void)rowprobe::http::classifyHttp(payload);
    rowprobe::http::HttpRequest q;
    const bool req = rowprobe::http::parseHttpRequest(payload, q);
    check(!req || (q.requestLine && q.complete));
    check(in(q.method) && in(q.uri) && in(q.host) && in(q.userAgent) && in(q.referer));

    rowprobe::http::HttpResponse r;
    char cookies[64] = {};
    const bool resp = rowprobe::http::parseHttpResponse(payload, r, cookies);
    check(!resp || (r.statusLine && r.complete && r.status != 0));
    check(in(r.contentType) && in(r.server));
    check(r.setCookieLen < sizeof cookies);
    check(std::strlen(cookies) == r.setCookieLen);

    char value[16];
    check(rowprobe::http::copyHttpValue(q.uri, value) < sizeof value);
    return 0;
}
