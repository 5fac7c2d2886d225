// The SDK's service facility (rowprobe/process.hpp, FlowServices): the L7 plugins name the
// protocol they recognised as Zeek service names, at export, and only when they recognised it.
#include <gtest/gtest.h>

#include <array>
#include <string_view>

#include "flow_driver.hpp"
#include "rowprobe/process.hpp"

namespace rowprobe {
namespace {

using test::bytesOf;
using test::FlowDriver;
using test::frame;
using test::kClient;
using test::kServer;

TEST(FlowServices, KeepsOrderDropsEmptyAndRepeatedNamesAndJoinsWithCommas) {
    FlowServices s;
    EXPECT_TRUE(s.empty());
    s.add("ssl");
    s.add("");
    s.add("http");
    s.add("ssl");
    ASSERT_EQ(s.list().size(), 2U);
    EXPECT_EQ(s.list()[0], "ssl");
    EXPECT_EQ(s.list()[1], "http");
    std::array<char, 32> buf{};
    EXPECT_EQ(std::string_view(buf.data(), s.join(buf)), "ssl,http");
    std::array<char, 5> small{};  // "ssl" fits, ",http" does not: left out whole
    EXPECT_EQ(std::string_view(small.data(), s.join(small)), "ssl");
}

TEST(FlowServices, ListIsBounded) {
    FlowServices s;
    constexpr std::array<std::string_view, 10> kNames = {"a", "b", "c", "d", "e",
                                                         "f", "g", "h", "i", "j"};
    for (const auto n : kNames) s.add(n);
    EXPECT_EQ(s.list().size(), FlowServices::kMax);
}

TEST(PluginService, HttpNamesHttpOnlyWhenItSawHttp) {
    FlowDriver d("http");
    d.packet(frame(6, kClient, 40000, kServer, 80, bytesOf("hello there\r\n")));
    EXPECT_EQ(d.service(), "");
    FlowDriver h("http");
    h.packet(frame(6, kClient, 40000, kServer, 80,
                   bytesOf("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")));
    EXPECT_EQ(h.service(), "http");
}

TEST(PluginService, SmtpAndSipAndRtspUseZeeksNames) {
    FlowDriver smtp("smtp");
    smtp.packet(frame(6, kServer, 25, kClient, 40000, bytesOf("220 mail.example ESMTP\r\n")));
    EXPECT_EQ(smtp.service(), "smtp");
    FlowDriver sip("sip");
    sip.packet(frame(17, kClient, 5060, kServer, 5060,
                     bytesOf("INVITE sip:bob@example.org SIP/2.0\r\nCall-ID: a84b4c76e66710\r\n"
                             "CSeq: 1 INVITE\r\nFrom: <sip:alice@example.org>\r\n\r\n")));
    EXPECT_EQ(sip.service(), "sip");
    FlowDriver rtsp("rtsp");
    rtsp.packet(frame(6, kClient, 40000, kServer, 554,
                      bytesOf("OPTIONS rtsp://a.example/ RTSP/1.0\r\nCSeq: 1\r\n\r\n")));
    EXPECT_EQ(rtsp.service(), "rtsp");
}

TEST(PluginService, PluginsWithoutAServiceHookReportNothing) {
    FlowDriver d("pstats");
    d.packet(frame(6, kClient, 40000, kServer, 80, bytesOf("GET / HTTP/1.1\r\n\r\n")));
    EXPECT_EQ(d.service(), "");
}

}  // namespace
}  // namespace rowprobe
