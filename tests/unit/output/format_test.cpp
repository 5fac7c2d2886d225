#include "rowprobe/format.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

namespace rowprobe {
namespace {

std::array<std::uint8_t, 16> v4(const char* text) {
    std::array<std::uint8_t, 16> a{};
    a[10] = 0xFF;
    a[11] = 0xFF;
    EXPECT_EQ(inet_pton(AF_INET, text, a.data() + 12), 1) << text;
    return a;
}

std::array<std::uint8_t, 16> v6(const char* text) {
    std::array<std::uint8_t, 16> a{};
    EXPECT_EQ(inet_pton(AF_INET6, text, a.data()), 1) << text;
    return a;
}

TEST(FormatIp, Ipv4MappedPrintsDottedQuadWithoutMappingPrefix) {
    EXPECT_EQ(formatIp(v4("192.0.2.1"), true), "192.0.2.1");
    EXPECT_EQ(formatIp(v4("0.0.0.0"), true), "0.0.0.0");
    EXPECT_EQ(formatIp(v4("255.255.255.255"), true), "255.255.255.255");
    EXPECT_EQ(formatIp(v4("10.100.7.99"), true), "10.100.7.99");
}

TEST(FormatIp, Ipv6UsesRfc5952CompressedForm) {
    EXPECT_EQ(formatIp(v6("2001:0db8:0000:0000:0000:0000:0000:0001"), false), "2001:db8::1");
    EXPECT_EQ(formatIp(v6("::"), false), "::");
    EXPECT_EQ(formatIp(v6("::1"), false), "::1");
    EXPECT_EQ(formatIp(v6("fe80::"), false), "fe80::");
    // The longest run of zeros is compressed, the first one on a tie; a single zero group is not.
    EXPECT_EQ(formatIp(v6("2001:db8:0:0:1:0:0:1"), false), "2001:db8::1:0:0:1");
    EXPECT_EQ(formatIp(v6("2001:db8:0:1:1:1:1:1"), false), "2001:db8:0:1:1:1:1:1");
    EXPECT_EQ(formatIp(v6("2001:DB8::ABCD"), false), "2001:db8::abcd");
    EXPECT_EQ(formatIp(v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), false),
              "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

TEST(FormatIp, BufferFormReturnsEndWithoutTerminator) {
    char buf[kIpTextMax + 1];
    std::memset(buf, '#', sizeof buf);
    char* end = formatIp(buf, v4("1.2.3.4"), true);
    EXPECT_EQ(std::string(buf, end), "1.2.3.4");
    EXPECT_EQ(*end, '#');
    end = formatIp(buf, v6("2001:db8::1"), false);
    EXPECT_EQ(std::string(buf, end), "2001:db8::1");
}

TEST(FormatMac, SixLowerCaseHexPairs) {
    EXPECT_EQ(formatMac({0xAA, 0xBB, 0xCC, 0x0D, 0x0E, 0xFF}), "aa:bb:cc:0d:0e:ff");
    EXPECT_EQ(formatMac({0, 0, 0, 0, 0, 0}), "00:00:00:00:00:00");
    EXPECT_EQ(formatMac({0, 0, 0, 0, 0, 0}).size(), kMacTextLen);
}

TEST(FormatTimeIso, UtcWithNineDecimalsAndZ) {
    EXPECT_EQ(formatTimeIso(1'700'000'000'001'289'368ULL), "2023-11-14T22:13:20.001289368Z");
    EXPECT_EQ(formatTimeIso(0), "1970-01-01T00:00:00.000000000Z");
    EXPECT_EQ(formatTimeIso(1'700'000'000'000'000'000ULL).size(), kTimeIsoMax);
}

TEST(FormatTimeIso, CalendarEdges) {
    // Leap day, end of a leap year, 2100 (not a leap year), 2000 (leap year).
    EXPECT_EQ(formatTimeIso(951'782'400ULL * kNsPerSec), "2000-02-29T00:00:00.000000000Z");
    EXPECT_EQ(formatTimeIso(1'735'689'599ULL * kNsPerSec + 999'999'999),
              "2024-12-31T23:59:59.999999999Z");
    EXPECT_EQ(formatTimeIso(4'107'542'400ULL * kNsPerSec), "2100-03-01T00:00:00.000000000Z");
    EXPECT_EQ(formatTimeIso(1'709'164'800ULL * kNsPerSec, 0), "2024-02-29T00:00:00Z");
}

TEST(FormatTimeIso, FewerDecimalsTruncateInsteadOfRounding) {
    const TimeNs t = 1'735'689'599ULL * kNsPerSec + 999'999'999;
    EXPECT_EQ(formatTimeIso(t, 6), "2024-12-31T23:59:59.999999Z");
    EXPECT_EQ(formatTimeIso(t, 3), "2024-12-31T23:59:59.999Z");
    EXPECT_EQ(formatTimeIso(t, 0), "2024-12-31T23:59:59Z");
    EXPECT_EQ(formatTimeIso(t, 42), "2024-12-31T23:59:59.999999999Z");
}

TEST(FormatTimeIso, MatchesGmtimeOverManyDays) {
    for (std::uint64_t s = 0; s < 4'102'444'800ULL; s += 86'400ULL * 37 + 3'601) {
        const auto tt = static_cast<time_t>(s);
        tm parts{};
        gmtime_r(&tt, &parts);
        char expect[64];
        std::strftime(expect, sizeof expect, "%Y-%m-%dT%H:%M:%SZ", &parts);
        ASSERT_EQ(formatTimeIso(s * kNsPerSec, 0), expect) << s;
    }
}

TEST(FormatTcpFlags, NfdumpLettersMostSignificantFirst) {
    EXPECT_EQ(formatTcpFlags(0x00), "........");
    EXPECT_EQ(formatTcpFlags(0x02), "......S.");  // SYN
    EXPECT_EQ(formatTcpFlags(0x12), "...A..S.");  // SYN+ACK
    EXPECT_EQ(formatTcpFlags(0x11), "...A...F");  // FIN+ACK
    EXPECT_EQ(formatTcpFlags(0x04), ".....R..");  // RST
    EXPECT_EQ(formatTcpFlags(0x18), "...AP...");  // PSH+ACK
    EXPECT_EQ(formatTcpFlags(0xFF), "CEUAPRSF");
    EXPECT_EQ(formatTcpFlags(0xC0), "CE......");
}

TEST(FormatUint, Decimal) {
    char buf[kUintTextMax];
    for (std::uint64_t v : {0ULL, 7ULL, 10ULL, 99ULL, 100ULL, 12345ULL, 1'000'000'007ULL,
                            18'446'744'073'709'551'615ULL}) {
        EXPECT_EQ(std::string(buf, formatUint(buf, v)), std::to_string(v));
    }
}

TEST(ProtoName, KnownAndUnknown) {
    EXPECT_EQ(protoName(6), "tcp");
    EXPECT_EQ(protoName(17), "udp");
    EXPECT_EQ(protoName(58), "icmp6");
    EXPECT_TRUE(protoName(253).empty());
}

}  // namespace
}  // namespace rowprobe
