// SSDP header extraction: NOTIFY and M-SEARCH, URN prefix, LOCATION port (IPv4/IPv6, strtol
// bases), list deduplication and buffer limits; truncated and hostile input.
#include "process/ssdp/ssdp_parser.hpp"

#include <gtest/gtest.h>

#include <string>

#include "l7_test_bytes.hpp"

namespace {

using namespace rowprobe::ssdp;
using rowprobe::test::bytesOf;
using rowprobe::test::vecOf;

constexpr std::string_view kNotify =
    "NOTIFY * HTTP/1.1\r\n"
    "HOST: 239.255.255.250:1900\r\n"
    "LOCATION: http://192.168.1.20:2869/upnphost/udhisapi.dll?content=uuid:1\r\n"
    "NT: urn:schemas-upnp-org:device:MediaServer:1\r\n"
    "NTS: ssdp:alive\r\n"
    "SERVER: Microsoft-Windows-NT/5.1 UPnP/1.0 UPnP-Device-Host/1.0\r\n"
    "\r\n";

constexpr std::string_view kSearch =
    "M-SEARCH * HTTP/1.1\r\n"
    "HOST: 239.255.255.250:1900\r\n"
    "MAN: \"ssdp:discover\"\r\n"
    "MX: 1\r\n"
    "ST: urn:dial-multiscreen-org:service:dial:1\r\n"
    "USER-AGENT: Google Chrome/83.0.4103.61 Linux\r\n"
    "\r\n";

}  // namespace

TEST(SsdpParser, NotifyFields) {
    SsdpRecord r;
    applySsdpPacket(bytesOf(kNotify), false, r);
    EXPECT_EQ(r.locationPort, 2869);
    EXPECT_EQ(r.ntList.view(r.nt), "schemas-upnp-org:device:MediaServer:1;");
    EXPECT_EQ(r.serverList.view(r.server),
              "Microsoft-Windows-NT/5.1 UPnP/1.0 UPnP-Device-Host/1.0;");
    EXPECT_EQ(r.stList.len, 0);
    EXPECT_EQ(r.userAgentList.len, 0);
}

TEST(SsdpParser, SearchFieldsAndDeduplication) {
    SsdpRecord r;
    applySsdpPacket(bytesOf(kSearch), false, r);
    applySsdpPacket(bytesOf(kSearch), false, r);  // the same values again: not repeated
    EXPECT_EQ(r.stList.view(r.st), "dial-multiscreen-org:service:dial:1;");
    EXPECT_EQ(r.userAgentList.view(r.userAgent), "Google Chrome/83.0.4103.61 Linux;");
    EXPECT_EQ(r.locationPort, 0);
    // A value that is a substring of the list is not added either (ipfixprobe's rule).
    applySsdpPacket(bytesOf("M-SEARCH * HTTP/1.1\r\nST: urn:dial-multiscreen-org\r\n\r\n"), false,
                    r);
    EXPECT_EQ(r.stList.view(r.st), "dial-multiscreen-org:service:dial:1;");
    applySsdpPacket(bytesOf("M-SEARCH * HTTP/1.1\r\nst:URN:other:1\r\n\r\n"), false, r);
    EXPECT_EQ(r.stList.view(r.st), "dial-multiscreen-org:service:dial:1;other:1;");
}

TEST(SsdpParser, OnlyUrnValuesAndKnownMessages) {
    SsdpRecord r;
    applySsdpPacket(bytesOf("M-SEARCH * HTTP/1.1\r\nST: upnp:rootdevice\r\n\r\n"), false, r);
    applySsdpPacket(bytesOf("NOTIFY * HTTP/1.1\r\nNT: uuid:1234\r\nST: urn:x:1\r\n\r\n"), false, r);
    applySsdpPacket(bytesOf("HTTP/1.1 200 OK\r\nST: urn:y:1\r\nSERVER: s\r\n\r\n"), false, r);
    EXPECT_EQ(r.stList.len, 0);  // M-SEARCH: not a URN; NOTIFY: ST not read; response: ignored
    EXPECT_EQ(r.ntList.len, 0);
    EXPECT_EQ(r.serverList.len, 0);
    // An empty value is not taken; a header without CR LF is not a line.
    applySsdpPacket(bytesOf("NOTIFY * HTTP/1.1\r\nSERVER:\r\nSERVER: a\n"), false, r);
    EXPECT_EQ(r.serverList.len, 0);
    applySsdpPacket(bytesOf("NOTIFY * HTTP/1.1\r\nSERVER: b\r\n"), false, r);
    EXPECT_EQ(r.serverList.view(r.server), "b;");
}

TEST(SsdpParser, LocationPortLikeStrtol) {
    const auto port = [](std::string_view loc, bool v6) {
        SsdpRecord r;
        const std::string msg = "NOTIFY * HTTP/1.1\r\nLOCATION: " + std::string(loc) + "\r\n\r\n";
        applySsdpPacket(bytesOf(msg), v6, r);
        return r.locationPort;
    };
    EXPECT_EQ(port("http://10.0.0.1:80/desc.xml", false), 80);
    EXPECT_EQ(port("http://10.0.0.1:0x50/", false), 80);    // base 0: hexadecimal
    EXPECT_EQ(port("http://10.0.0.1:0120/", false), 80);    // base 0: octal
    EXPECT_EQ(port("http://10.0.0.1/desc.xml", false), 0);  // no port
    EXPECT_EQ(port("http://[fe80::1]:2869/x", true), 2869);
    EXPECT_EQ(port("http://[fe80::1]:2869/x", false), 0);     // IPv4 rule: ':' after the first '.'
    EXPECT_EQ(port("http://host.example:65536/", false), 0);  // strtol's value cut to 16 bits
    EXPECT_EQ(port("http://host.example:65537/", false), 1);
    // A later NOTIFY without a port keeps the previous one.
    SsdpRecord r;
    applySsdpPacket(bytesOf("NOTIFY *\r\nLOCATION: http://a.b:99/\r\n\r\n"), false, r);
    applySsdpPacket(bytesOf("NOTIFY *\r\nLOCATION: http://a.b/\r\n\r\n"), false, r);
    EXPECT_EQ(r.locationPort, 99);
}

TEST(SsdpParser, ListsStopAtTheirBuffer) {
    SsdpRecord r;
    for (int i = 0; i < 100; ++i) {
        const std::string msg =
            "NOTIFY *\r\nSERVER: server-number-" + std::to_string(i) + "\r\n\r\n";
        applySsdpPacket(bytesOf(msg), false, r);
    }
    EXPECT_LT(r.serverList.len, kServerCap - 1);  // the list, and ipfixprobe's NUL, fit
    EXPECT_EQ(r.serverList.view(r.server).back(), ';');
    EXPECT_EQ(r.serverList.view(r.server).substr(0, 17), "server-number-0;s");
}

TEST(SsdpParser, TruncatedAndHostileInput) {
    using rowprobe::test::forEachMutation;
    using rowprobe::test::forEachPrefix;
    for (const auto text : {kNotify, kSearch}) {
        SsdpRecord r;
        forEachPrefix(vecOf(text), [&](std::span<const std::uint8_t> p) {
            applySsdpPacket(p, false, r);
            applySsdpPacket(p, true, r);
        });
        forEachMutation(vecOf(text), 3000, [&](std::span<const std::uint8_t> p) {
            applySsdpPacket(p, false, r);
            EXPECT_LE(r.ntList.len, kUrnCap - 1);
            EXPECT_LE(r.serverList.len, kServerCap - 1);
        });
        // Every prefix ends in a LOCATION port read at most up to the payload's end.
        EXPECT_EQ(ssdpLocationPort(bytesOf("a.b:"), 0, 4, false), 0);
        EXPECT_EQ(ssdpLocationPort(bytesOf("a.b:7"), 0, 5, false), 7);
    }
}
