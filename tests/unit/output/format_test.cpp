#include "rowprobe/format.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <ctime>
#include <random>
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

TEST(FormatIp, Ipv6EdgeCasesPrintAsInetNtopDoes) {
    EXPECT_EQ(formatIp(v6("::ffff:1.2.3.4"), false), "::ffff:1.2.3.4");
    EXPECT_EQ(formatIp(v6("::1.2.3.4"), false), "::1.2.3.4");  // IPv4-compatible (deprecated)
    EXPECT_EQ(formatIp(v6("1::"), false), "1::");
    EXPECT_EQ(formatIp(v6("1:0:0:2::3"), false), "1:0:0:2::3");  // the later run is longer
    EXPECT_EQ(formatIp(v6("1:0:2:0:3:0:4:0"), false), "1:0:2:0:3:0:4:0");
    EXPECT_EQ(formatIp(v6("0:1:2:3:4:5:6:0"), false), "0:1:2:3:4:5:6:0");
    EXPECT_EQ(formatIp(v6("64:ff9b::c000:201"), false), "64:ff9b::c000:201");
    EXPECT_EQ(formatIp(v6("a:bc:def:1234:f:f0:f00:f000"), false), "a:bc:def:1234:f:f0:f00:f000");
    char buf[kIpTextMax];
    EXPECT_LE(formatIp(buf, v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), false) - buf, 39);
    EXPECT_EQ(formatIp(buf, v6("::ffff:255.255.255.255"), false) - buf, 22);
}

/// Every address whose groups are zero or not in any pattern, and random ones with many zero
/// groups and the special values, print byte for byte as libc's inet_ntop prints them (what the
/// outputs wrote before formatIp was hand-written).
TEST(FormatIp, Ipv6MatchesInetNtop) {
    std::mt19937_64 rng(7);
    const auto check = [](const std::array<std::uint8_t, 16>& a) {
        char expect[INET6_ADDRSTRLEN];
        ASSERT_NE(inet_ntop(AF_INET6, a.data(), expect, sizeof expect), nullptr);
        ASSERT_EQ(formatIp(a, false), expect);
    };
    static constexpr unsigned kValues[] = {1, 0xffff, 0xfe, 0x1000, 0xabc, 0x10};
    for (unsigned zeros = 0; zeros < 256; ++zeros) {
        for (unsigned k = 0; k < 40; ++k) {
            std::array<std::uint8_t, 16> a{};
            for (unsigned w = 0; w < 8; ++w) {
                if ((zeros >> w & 1U) != 0) continue;
                const unsigned v = k < 12 ? kValues[(k + w) % std::size(kValues)]
                                          : static_cast<unsigned>(rng() % 0xffff + 1);
                a[2 * w] = static_cast<std::uint8_t>(v >> 8);
                a[2 * w + 1] = static_cast<std::uint8_t>(v);
            }
            check(a);
        }
    }
    for (unsigned k = 0; k < 100'000; ++k) {  // random bytes, often zero
        std::array<std::uint8_t, 16> a{};
        for (auto& b : a) b = rng() % 3 == 0 ? static_cast<std::uint8_t>(rng()) : 0;
        check(a);
    }
}

/// Every byte value in every position prints as inet_ntop's dotted quad, and nothing is
/// written after the returned end.
TEST(FormatIp, Ipv4EveryByteValueMatchesInetNtopAndStopsAtItsEnd) {
    for (unsigned pos = 0; pos < 4; ++pos) {
        for (unsigned v = 0; v < 256; ++v) {
            for (unsigned other : {0U, 7U, 42U, 255U}) {
                std::array<std::uint8_t, 16> a = v4("0.0.0.0");
                for (unsigned i = 0; i < 4; ++i) {
                    a[12 + i] = static_cast<std::uint8_t>(i == pos ? v : other);
                }
                char expect[INET_ADDRSTRLEN];
                ASSERT_NE(inet_ntop(AF_INET, a.data() + 12, expect, sizeof expect), nullptr);
                char buf[kIpTextMax + 8];
                std::memset(buf, '#', sizeof buf);
                char* end = formatIp(buf, a, true);
                ASSERT_EQ(std::string(buf, end), expect);
                ASSERT_EQ(std::string(end, buf + sizeof buf),
                          std::string(buf + sizeof buf - end, '#'));
            }
        }
    }
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
    EXPECT_EQ(formatMac({0x01, 0x23, 0x45, 0x67, 0x89, 0xAB}), "01:23:45:67:89:ab");
    char buf[kMacTextLen + 4];
    std::memset(buf, '#', sizeof buf);
    EXPECT_EQ(formatMac(buf, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), buf + kMacTextLen);
    EXPECT_EQ(std::string(buf, sizeof buf), "ff:ff:ff:ff:ff:ff####");  // nothing after its end
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

TEST(FormatTimeIso, NanosecondsAreZeroPadded) {
    const TimeNs s = 1'700'000'000ULL * kNsPerSec;
    EXPECT_EQ(formatTimeIso(s + 1), "2023-11-14T22:13:20.000000001Z");
    EXPECT_EQ(formatTimeIso(s + 10), "2023-11-14T22:13:20.000000010Z");
    EXPECT_EQ(formatTimeIso(s + 100'000'000), "2023-11-14T22:13:20.100000000Z");
    EXPECT_EQ(formatTimeIso(s + 5'000), "2023-11-14T22:13:20.000005000Z");
    EXPECT_EQ(formatTimeIso(s + 999'999, 6), "2023-11-14T22:13:20.000999Z");
    EXPECT_EQ(formatTimeIso(s + 999'999, 3), "2023-11-14T22:13:20.000Z");
    EXPECT_EQ(formatTimeIso(s + 123'456'789, 1), "2023-11-14T22:13:20.1Z");
}

TEST(FormatTimeIso, CenturyLeapRulesAndTheEndOfTheClock) {
    // 2100 is not a leap year, 2400 is; the 64-bit nanosecond clock ends in 2554.
    EXPECT_EQ(formatTimeIso(4'107'542'399ULL * kNsPerSec, 0), "2100-02-28T23:59:59Z");
    EXPECT_EQ(formatTimeIso(4'102'444'800ULL * kNsPerSec, 0), "2100-01-01T00:00:00Z");
    EXPECT_EQ(formatTimeIso(13'574'563'200ULL * kNsPerSec, 0), "2400-02-29T00:00:00Z");
    EXPECT_EQ(formatTimeIso(~TimeNs{0}), "2554-07-21T23:34:33.709551615Z");
    EXPECT_EQ(formatTimeIso(951'868'799ULL * kNsPerSec, 0), "2000-02-29T23:59:59Z");
    EXPECT_EQ(formatTimeIso(951'868'800ULL * kNsPerSec, 0), "2000-03-01T00:00:00Z");
}

/// The per-thread cache of the last second and day must never show a stale date or clock:
/// values jumping back and forth between seconds, days and years in one thread, against gmtime.
TEST(FormatTimeIso, InterleavedSecondsAndDaysMatchGmtime) {
    std::mt19937_64 rng(11);
    const std::uint64_t bases[] = {0, 951'782'399, 1'700'000'000, 4'107'542'399};
    for (unsigned k = 0; k < 200'000; ++k) {
        const std::uint64_t s =
            bases[rng() % std::size(bases)] + rng() % 3 * (rng() % 2 ? 1 : 86'400);
        const TimeNs t = s * kNsPerSec + rng() % kNsPerSec;
        const auto tt = static_cast<time_t>(s);
        tm parts{};
        gmtime_r(&tt, &parts);
        char expect[64];
        const std::size_t n = std::strftime(expect, sizeof expect, "%Y-%m-%dT%H:%M:%S", &parts);
        char frac[16];
        std::snprintf(frac, sizeof frac, ".%09lluZ",
                      static_cast<unsigned long long>(t % kNsPerSec));
        ASSERT_EQ(formatTimeIso(t), std::string(expect, n) + frac) << t;
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

TEST(FormatUint, EveryDigitCountBoundary) {
    char buf[kUintTextMax];
    std::uint64_t p = 1;
    for (unsigned digits = 1; digits <= 20; ++digits) {
        for (std::uint64_t v : {p, p - 1, p + 1, p * 2, p * 9, p * 10 - 1}) {
            if (digits == 20 && v > p * 2) continue;  // p * 9 and p * 10 overflow
            const std::string expect = std::to_string(v);
            EXPECT_EQ(std::string(buf, formatUint(buf, v)), expect);
            EXPECT_EQ(decimalDigits(v), expect.size()) << v;
        }
        if (digits < 20) p *= 10;
    }
    EXPECT_EQ(decimalDigits(0), 1U);
    EXPECT_EQ(decimalDigits(~std::uint64_t{0}), 20U);
}

/// putShort and putSpaces write exactly their text, whatever its length (each length takes a
/// different pair of fixed-size moves), and return its end.
TEST(PutShort, EveryLengthWritesExactlyItsText) {
    const std::string source =
        "{\"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\":";
    for (std::size_t n = 0; n <= 40; ++n) {
        char buf[64];
        std::memset(buf, '#', sizeof buf);
        char* end = putShort(buf, std::string_view(source).substr(0, n));
        ASSERT_EQ(end, buf + n);
        ASSERT_EQ(std::string(buf, sizeof buf), source.substr(0, n) + std::string(64 - n, '#'));
    }
    for (std::size_t n = 0; n <= 100; ++n) {
        char buf[128];
        std::memset(buf, '#', sizeof buf);
        char* end = putSpaces(buf, n);
        ASSERT_EQ(end, buf + n);
        ASSERT_EQ(std::string(buf, sizeof buf), std::string(n, ' ') + std::string(128 - n, '#'));
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
