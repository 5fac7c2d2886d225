// formatFloatShortest (plugins/src/format_float.cpp) must write exactly what std::to_chars
// writes for a float, for every bit pattern. tools/check_float_text compares all 2^32 of them;
// these tests compare the ones most likely to go wrong and enough others to catch a wrong
// rounding decision within seconds: named edge cases, powers of two and of ten with their
// neighbours, whole binades (where the form and the interval's shape change), and 2^22 random
// bit patterns.
#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "rowprobe/format.hpp"

namespace rowprobe {
namespace {

std::string ours(float v) {
    char b[kFloatTextMax];
    return std::string(b, formatFloatShortest(b, v));
}

std::string reference(float v) {
    char b[64];
    return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
}

float fromBits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

/// Compares the bit patterns first..last (inclusive) with std::to_chars; reports the first
/// few that differ (bits and both texts) and returns how many did.
std::uint64_t compareRange(std::uint32_t first, std::uint32_t last) {
    std::uint64_t mismatches = 0;
    char a[kFloatTextMax];
    char b[64];
    for (std::uint64_t bits = first; bits <= last; ++bits) {
        const float v = fromBits(static_cast<std::uint32_t>(bits));
        char* end = formatFloatShortest(a, v);
        char* refEnd = std::to_chars(b, b + sizeof b, v).ptr;
        if (end - a == refEnd - b && std::memcmp(a, b, static_cast<std::size_t>(end - a)) == 0) {
            continue;
        }
        if (++mismatches <= 10) {
            ADD_FAILURE() << "bits 0x" << std::hex << bits << ": \"" << std::string(a, end)
                          << "\", std::to_chars \"" << std::string(b, refEnd) << "\"";
        }
    }
    return mismatches;
}

std::uint32_t bitsOf(float v) { return std::bit_cast<std::uint32_t>(v); }

TEST(FormatFloatShortest, NamedEdgeCases) {
    constexpr float kMin = std::numeric_limits<float>::min();
    constexpr float kMax = std::numeric_limits<float>::max();
    constexpr float kTrueMin = std::numeric_limits<float>::denorm_min();
    const struct {
        float v;
        const char* text;
    } cases[] = {
        {0.0F, "0"},
        {-0.0F, "-0"},
        {kTrueMin, "1e-45"},  // smallest subnormal
        {-kTrueMin, "-1e-45"},
        {fromBits(0x007FFFFF), "1.1754942e-38"},  // largest subnormal
        {kMin, "1.1754944e-38"},                  // smallest normal
        {kMax, "3.4028235e+38"},
        {-kMax, "-3.4028235e+38"},
        {1.0F, "1"},
        {0.5F, "0.5"},
        {0.1F, "0.1"},
        {0.33333334F, "0.33333334"},
        {123.45679F, "123.45679"},
        {1.2345679e-05F, "1.2345679e-05"},
        {4.5e+09F, "4.5e+09"},
        {1.5e-07F, "1.5e-07"},
        {0.0001F, "1e-04"},           // "0.0001" is longer
        {0.00012345F, "0.00012345"},  // as long as "1.2345e-04": fixed
        {0.001F, "0.001"},
        {1e-05F, "1e-05"},
        {9999999.0F, "9999999"},
        {1e7F, "1e+07"},       // a single digit and e = 7
        {100000.0F, "1e+05"},  // the first whole number in "e" form
        {99999.0F, "99999"},
        {123456.0F, "123456"},
        {8388607.5F, "8388607.5"},              // the most whole digits with a point
        {123456789.0F, "123456792"},            // fixed form: the exact whole value
        {123456790528.0F, "123456790528"},      // digits 12345679, e = 4: fixed, exact
        {1099511627776.0F, "1099511627776"},    // 2^40: fixed as long as scientific
        {281474976710656.0F, "2.8147498e+14"},  // 2^48: scientific shorter
        {1e16F, "1e+16"},
        {16777216.0F, "16777216"},  // 2^24
        {16777218.0F, "16777218"},
        {33554436.0F, "33554436"},
        {1e10F, "1e+10"},
        {1e38F, "1e+38"},
        {3.4e38F, "3.4e+38"},
        {std::numeric_limits<float>::infinity(), "inf"},
        {-std::numeric_limits<float>::infinity(), "-inf"},
        {std::numeric_limits<float>::quiet_NaN(), "nan"},
        {-std::numeric_limits<float>::quiet_NaN(), "-nan"},
        {fromBits(0x7F800001), "nan"},  // signalling, payload 1
        {fromBits(0xFFFFFFFF), "-nan"},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(ours(c.v), c.text) << "bits 0x" << std::hex << bitsOf(c.v);
        EXPECT_EQ(ours(c.v), reference(c.v)) << "bits 0x" << std::hex << bitsOf(c.v);
    }
}

/// Every power of two and the float nearest every power of ten, both signs, with the floats
/// either side of each: the interval is lopsided at a power of two, and the form switches
/// near powers of ten.
TEST(FormatFloatShortest, PowersOfTwoAndTenAndTheirNeighbours) {
    std::uint64_t mismatches = 0;
    const auto around = [&](float v) {  // none of them is 0 or FLT_MAX
        const std::uint32_t b = bitsOf(v);
        mismatches += compareRange(b - 1, b + 1);
        mismatches += compareRange((b | 0x80000000) - 1, (b | 0x80000000) + 1);
    };
    for (int e = -149; e <= 127; ++e) around(std::ldexp(1.0F, e));
    for (int e = -45; e <= 38; ++e) around(static_cast<float>(std::pow(10.0, e)));
    EXPECT_EQ(mismatches, 0U);
}

/// Whole binades, every float in them (2^23 each): [1, 2); [2^-24, 2^-23), around 1e-7, in
/// the scientific form; [2^-14, 2^-13), where "0.0001234" gives way to "1e-04"; [65536,
/// 131072), where whole numbers switch to "1e+05"; [2^23, 2^24), whole numbers one unit of
/// 10^0 apart (R exactly one unit wide); [2^46, 2^47), whole numbers printed exactly or in
/// the scientific form; the first 2^23 subnormals; the largest binade up to FLT_MAX.
TEST(FormatFloatShortest, BinadeOneToTwo) { EXPECT_EQ(compareRange(0x3F800000, 0x3FFFFFFF), 0U); }

TEST(FormatFloatShortest, BinadeAround1em7) { EXPECT_EQ(compareRange(0x33800000, 0x33FFFFFF), 0U); }

TEST(FormatFloatShortest, BinadeAround1em4) { EXPECT_EQ(compareRange(0x38800000, 0x38FFFFFF), 0U); }

TEST(FormatFloatShortest, BinadeAround1e5) { EXPECT_EQ(compareRange(0x47800000, 0x47FFFFFF), 0U); }

TEST(FormatFloatShortest, BinadeOfWholeUnits) {
    EXPECT_EQ(compareRange(0x4B000000, 0x4B7FFFFF), 0U);
}

TEST(FormatFloatShortest, BinadeAround1e14) { EXPECT_EQ(compareRange(0x56800000, 0x56FFFFFF), 0U); }

TEST(FormatFloatShortest, Subnormals) { EXPECT_EQ(compareRange(0x00000001, 0x007FFFFF), 0U); }

TEST(FormatFloatShortest, LargestBinade) { EXPECT_EQ(compareRange(0x7F000000, 0x7F7FFFFF), 0U); }

TEST(FormatFloatShortest, RandomBitPatterns) {
    std::mt19937 rng(20240611);
    std::uint64_t mismatches = 0;
    for (int i = 0; i < (1 << 22); ++i) {
        const auto bits = static_cast<std::uint32_t>(rng());
        mismatches += compareRange(bits, bits);
    }
    EXPECT_EQ(mismatches, 0U);
}

/// The text is assembled with fixed-size moves: nothing is written past kFloatTextMax bytes,
/// and the returned end is the text's end.
TEST(FormatFloatShortest, WritesWithinFloatTextMax) {
    std::mt19937 rng(7);
    for (int i = 0; i < 100000; ++i) {
        const auto bits = static_cast<std::uint32_t>(i < 64 ? 0xFF7FFFFF - i : rng());
        char buf[kFloatTextMax + 16];
        std::memset(buf, '#', sizeof buf);
        char* end = formatFloatShortest(buf, fromBits(bits));
        ASSERT_EQ(std::string(buf, end), reference(fromBits(bits)));
        for (std::size_t j = kFloatTextMax; j < sizeof buf; ++j) {
            ASSERT_EQ(buf[j], '#') << "bits 0x" << std::hex << bits << " wrote byte " << j;
        }
    }
}

}  // namespace
}  // namespace rowprobe

namespace rowprobe {
namespace {

std::string json(float v) {
    char b[kFloatTextMax];
    return std::string(b, formatFloatJson(b, v));
}

// formatFloatJson: std::to_chars' text for every whole float from 0 to 100001 (its integer
// shortcut's domain and past it), for floats spread over [0, 100001], and null where JSON has
// no number.
TEST(FormatFloatJson, IsToCharsTextOrNull) {
    std::uint64_t differ = 0;
    auto check = [&](float v) {
        if (json(v) != reference(v) && ++differ <= 5) ADD_FAILURE() << reference(v);
    };
    for (std::uint32_t w = 0; w <= 100001; ++w) check(static_cast<float>(w));
    for (std::uint32_t bits = 0; bits <= std::bit_cast<std::uint32_t>(100001.0F); bits += 4099)
        check(std::bit_cast<float>(bits));
    EXPECT_EQ(differ, 0U);
    for (const float v : {0.0F, 9.0F, 10.0F, 99999.0F, 100000.0F, 99999.5F, 1e-45F}) {
        EXPECT_EQ(json(v), reference(v));
        EXPECT_EQ(json(-v), reference(-v));  // -0 keeps its sign
    }
    EXPECT_EQ(json(std::numeric_limits<float>::quiet_NaN()), "null");
    EXPECT_EQ(json(std::numeric_limits<float>::infinity()), "null");
    EXPECT_EQ(json(-std::numeric_limits<float>::infinity()), "null");
}

}  // namespace
}  // namespace rowprobe
