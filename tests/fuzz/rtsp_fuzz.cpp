// libFuzzer target for the RTSP record and the HTTP-style head parser's RTSP dialect: any
// payload, applied to a fresh record and to one that already holds a request and a response,
// leaves every field NUL-terminated inside its buffer, and every view inside the payload.
//
//   ./rtsp_fuzz -max_len=2048 corpus/rtsp_fuzz
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "process/common/http/http_head.hpp"
#include "process/rtsp/rtsp_record.hpp"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

template <std::size_t N>
void terminated(const char (&field)[N]) {
    check(std::memchr(field, 0, N) != nullptr);
}

void fieldsOk(const rowprobe::rtsp::RtspRecord& r) {
    terminated(r.method);
    terminated(r.userAgent);
    terminated(r.uri);
    terminated(r.contentType);
    terminated(r.server);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe;
    const auto buf = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
    if (size != 0) std::memcpy(buf.get(), data, size);
    const std::span<const std::uint8_t> payload(buf.get(), size);

    rtsp::RtspRecord fresh;
    (void)rtsp::applyRtspPacket(payload, fresh);
    fieldsOk(fresh);
    rtsp::RtspRecord full;
    full.request = true;
    full.response = true;
    (void)rtsp::applyRtspPacket(payload, full);
    fieldsOk(full);

    httphead::RequestLine line;
    if (httphead::parseRequestLine(payload, httphead::kRtspSyntax, line) &&
        line.headers != httphead::kNpos) {
        check(line.headers <= size);
        const auto* lo = reinterpret_cast<const char*>(buf.get());
        httphead::walkHeaderLines(
            payload, line.headers, httphead::kRtspSyntax,
            [&](std::string_view n, std::string_view v, std::size_t, std::size_t, std::size_t) {
                check(n.data() >= lo && n.data() + n.size() <= lo + size);
                check(v.empty() || (v.data() >= lo && v.data() + v.size() <= lo + size));
                return true;
            });
    }
    return 0;
}
