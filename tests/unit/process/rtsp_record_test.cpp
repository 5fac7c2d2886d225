// The RTSP record (rtsp_record.hpp) and the HTTP-style head parser's RTSP dialect
// (process/common/http/http_head.hpp) on hand-made, truncated and hostile payloads: ipfixprobe
// 5.7's rtsp semantics (first request/response per record, a second one flush-reinserts, fields
// kept as far as a parse got once the flow has a record).
#include "process/rtsp/rtsp_record.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "process/common/http/http_head.hpp"

namespace {

using rowprobe::rtsp::applyRtspPacket;
using rowprobe::rtsp::classifyRtsp;
using rowprobe::rtsp::RtspKind;
using rowprobe::rtsp::RtspRecord;
using rowprobe::rtsp::RtspUpdate;

std::span<const std::uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

constexpr std::string_view kDescribe =
    "DESCRIBE rtsp://EMAP1.planetwideradio.com/tfm RTSP/1.0\r\n"
    "Accept: application/sdp\r\n"
    "User-Agent: WMPlayer/10.0.0.380 guid/7405E143\r\n"
    "CSeq: 1\r\n"
    "\r\n";

constexpr std::string_view kOk =
    "RTSP/1.0 200 OK\r\n"
    "Content-Type: application/sdp\r\n"
    "Server: WMServer/9.0.0.3380\r\n"
    "CSeq: 1\r\n"
    "\r\n";

TEST(RtspRecord, RequestThenResponseThenSecondRequestFlushes) {
    RtspRecord rec;
    EXPECT_EQ(applyRtspPacket(bytes(kDescribe), rec), RtspUpdate::Stored);
    EXPECT_STREQ(rec.method, "DESCRIBE");
    EXPECT_STREQ(rec.uri, "rtsp://EMAP1.planetwideradio.com/tfm");
    EXPECT_STREQ(rec.userAgent, "WMPlayer/10.0.0.380 guid/7405E143");
    EXPECT_EQ(applyRtspPacket(bytes(kOk), rec), RtspUpdate::Stored);
    EXPECT_EQ(rec.status, 200);
    EXPECT_STREQ(rec.contentType, "application/sdp");
    EXPECT_STREQ(rec.server, "WMServer/9.0.0.3380");
    EXPECT_EQ(applyRtspPacket(bytes(kDescribe), rec), RtspUpdate::FlushReinsert);
    EXPECT_EQ(applyRtspPacket(bytes(kOk), rec), RtspUpdate::FlushReinsert);
}

TEST(RtspRecord, DetectionAndLimits) {
    EXPECT_EQ(classifyRtsp(bytes("SETUP rtsp://x RTSP/1.0\r\n")), RtspKind::Request);
    EXPECT_EQ(classifyRtsp(bytes("GET / HTTP/1.1\r\n")), RtspKind::Request);  // ipfixprobe's list
    EXPECT_EQ(classifyRtsp(bytes("RTSP/1.0 200 OK\r\n")), RtspKind::Response);
    EXPECT_EQ(classifyRtsp(bytes("SET")), RtspKind::None);
    EXPECT_EQ(classifyRtsp(bytes("HTTP/1.1 200 OK\r\n")), RtspKind::None);
    // an HTTP request is classified but has no "RTSP" after the URI: nothing kept
    RtspRecord rec;
    EXPECT_EQ(applyRtspPacket(bytes("GET / HTTP/1.1\r\n\r\n"), rec), RtspUpdate::Ignored);
    // the method is cut to 9 bytes (10-byte buffer), a long URI to 127
    const std::string longUri(300, 'u');
    const std::string req = "ANNOUNCEMENT " + longUri + " RTSP/1.0\n\n";
    RtspRecord cut;
    EXPECT_EQ(applyRtspPacket(bytes(req), cut), RtspUpdate::Stored);
    EXPECT_STREQ(cut.method, "ANNOUNCEM");
    EXPECT_EQ(std::string(cut.uri), longUri.substr(0, 127));
    // status must be positive
    RtspRecord bad;
    EXPECT_EQ(applyRtspPacket(bytes("RTSP/1.0 -5 x\r\n\r\n"), bad), RtspUpdate::Ignored);
}

TEST(RtspRecord, LinesEndAtLfAndAOneByteLineEndsTheHeaders) {
    RtspRecord rec;  // bare '\n' line ends: the RTSP dialect accepts them
    EXPECT_EQ(
        applyRtspPacket(bytes("PLAY rtsp://h/s RTSP/1.0\nUser-Agent: vlc\nX\nCSeq: 2\n"), rec),
        RtspUpdate::Stored);
    EXPECT_STREQ(rec.userAgent, "vlc");
}

TEST(RtspRecord, TruncatedHeadsKeepNothingOnAFreshRecordButFieldsOnAnExistingOne) {
    const std::string full(kDescribe);
    for (std::size_t n = 0; n + 2 < full.size(); ++n) {
        RtspRecord scratch;
        const RtspUpdate u = applyRtspPacket(bytes(std::string_view(full).substr(0, n)), scratch);
        // a cut at a line boundary still counts (ipfixprobe: the packet ended between lines)
        if (u == RtspUpdate::Stored) {
            EXPECT_EQ(full[n - 1], '\n') << n;
        }
    }
    RtspRecord rec;
    EXPECT_EQ(applyRtspPacket(bytes(kOk), rec), RtspUpdate::Stored);
    EXPECT_EQ(applyRtspPacket(bytes(std::string_view(kDescribe).substr(0, 60)), rec),
              RtspUpdate::Ignored);
    EXPECT_STREQ(rec.method, "DESCRIBE");  // written as far as the parse got
    EXPECT_FALSE(rec.request);
}

TEST(HttpHead, HostileInputStaysInBounds) {
    using namespace rowprobe::httphead;
    const std::vector<std::string> inputs = {"",
                                             " ",
                                             "  ",
                                             "A  RTSP",
                                             "A B RTS",
                                             "RTSP",
                                             "RTSP ",
                                             "RTSP 1",
                                             "RTSP 1 ",
                                             "RTSP/1.0 200 OK\r",
                                             "X Y RTSP\n:",
                                             "X Y RTSP\nname:\n",
                                             "X Y RTSP\nName\n: v\n\n",
                                             std::string("X Y RTSP\n\0:\n", 13),
                                             std::string(4000, ':'),
                                             std::string(4000, '\n')};
    for (const auto& s : inputs) {
        RequestLine r;
        StatusLine st;
        for (const HeadSyntax& syn : {kHttpSyntax, kRtspSyntax}) {
            if (parseRequestLine(bytes(s), syn, r) && r.headers != kNpos) {
                EXPECT_LE(r.headers, s.size());
                walkHeaderLines(bytes(s), r.headers, syn,
                                [&](std::string_view n, std::string_view v, std::size_t,
                                    std::size_t, std::size_t) {
                                    EXPECT_GE(n.data(), s.data());
                                    EXPECT_LE(v.data() + v.size(), s.data() + s.size());
                                    return true;
                                });
            }
            (void)parseStatusLine(bytes(s), syn, st);
        }
        RtspRecord rec;
        (void)applyRtspPacket(bytes(s), rec);
    }
}

}  // namespace
