#include "process/rtsp/rtsp_record.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "process/common/http/http_head.hpp"

namespace rowprobe::rtsp {

namespace {

using httphead::copyHeadValue;
using httphead::kNpos;
using httphead::kRtspSyntax;

constexpr std::size_t kScratch = 64;  // ipfixprobe reads the method into a 64-byte buffer

bool startsWith(std::span<const std::uint8_t> p, std::string_view s) noexcept {
    return p.size() >= s.size() && std::memcmp(p.data(), s.data(), s.size()) == 0;
}

RtspUpdate applyRequest(std::span<const std::uint8_t> p, RtspRecord& rec) noexcept {
    httphead::RequestLine line;
    if (!httphead::parseRequestLine(p, kRtspSyntax, line)) return RtspUpdate::Ignored;
    if (rec.request) return RtspUpdate::FlushReinsert;
    // The method goes through a 64-byte buffer (cut, "\r\n" dropped), then into 10 bytes.
    std::array<char, kScratch> method{};
    const std::size_t n = std::min(copyHeadValue(line.method, method), sizeof rec.method - 1);
    std::memcpy(rec.method, method.data(), n);
    rec.method[n] = 0;
    copyHeadValue(line.uri, rec.uri);
    if (line.headers == kNpos) return RtspUpdate::Ignored;
    rec.userAgent[0] = 0;
    const bool complete = httphead::walkHeaderLines(
        p, line.headers, kRtspSyntax,
        [&](std::string_view name, std::string_view value, std::size_t, std::size_t, std::size_t) {
            if (name == "User-Agent") copyHeadValue(value, rec.userAgent);
            return true;
        });
    if (!complete) return RtspUpdate::Ignored;
    rec.request = true;
    return RtspUpdate::Stored;
}

RtspUpdate applyResponse(std::span<const std::uint8_t> p, RtspRecord& rec) noexcept {
    httphead::StatusLine line;
    if (!httphead::parseStatusLine(p, kRtspSyntax, line)) return RtspUpdate::Ignored;
    if (rec.response) return RtspUpdate::FlushReinsert;
    rec.status = line.status;
    if (line.headers == kNpos) return RtspUpdate::Ignored;
    rec.contentType[0] = 0;
    const bool complete = httphead::walkHeaderLines(
        p, line.headers, kRtspSyntax,
        [&](std::string_view name, std::string_view value, std::size_t, std::size_t, std::size_t) {
            if (name == "Content-Type") {
                copyHeadValue(value, rec.contentType);
            } else if (name == "Server") {
                copyHeadValue(value, rec.server);
            }
            return true;
        });
    if (!complete) return RtspUpdate::Ignored;
    rec.response = true;
    return RtspUpdate::Stored;
}

}  // namespace

RtspKind classifyRtsp(std::span<const std::uint8_t> p) noexcept {
    if (p.size() < 4) return RtspKind::None;
    static constexpr std::string_view kMethods[] = {"GET ", "POST", "PUT ", "HEAD", "DELE", "TRAC",
                                                    "OPTI", "CONN", "PATC", "DESC", "SETU", "PLAY",
                                                    "PAUS", "TEAR", "RECO", "ANNO"};
    for (const auto m : kMethods) {
        if (startsWith(p, m)) return RtspKind::Request;
    }
    return startsWith(p, "RTSP") ? RtspKind::Response : RtspKind::None;
}

RtspUpdate applyRtspPacket(std::span<const std::uint8_t> payload, RtspRecord& rec) noexcept {
    switch (classifyRtsp(payload)) {
        case RtspKind::Request:
            return applyRequest(payload, rec);
        case RtspKind::Response:
            return applyResponse(payload, rec);
        case RtspKind::None:
            break;
    }
    return RtspUpdate::Ignored;
}

}  // namespace rowprobe::rtsp
