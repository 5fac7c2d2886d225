// The SSA detector's record (process/ssadetector/ssadetector_record.hpp): handshake-like
// triples inside a flow make suspects, the export rules turn them into a confidence; sizes out
// of range, time gaps over 3 s, same-direction packets and hostile lengths do not.
#include "process/ssadetector/ssadetector_record.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using namespace rowprobe::ssadetector;

TEST(SsaDetector, RepeatedSameSizedHandshakesMakeAVpn) {
    SsaRecord r{};
    std::int64_t t = 1'000'000'000;
    for (int i = 0; i < 10; ++i) {
        ssaUpdate(r, false, 100, t += 1000);  // "SYN"
        ssaUpdate(r, true, 104, t += 1000);   // "SYN-ACK": the SYN is within 12 below
    }
    EXPECT_EQ(r.suspects, 10U);
    EXPECT_EQ(r.sampleCount, 10U);
    EXPECT_EQ(ssaFinalise(r, 200), 1);
    EXPECT_EQ(ssaFinalise(r, 200 * 2500), 0);  // too many packets per suspect
}

TEST(SsaDetector, NoSuspectsOutsideTheRulesAndTooManyDistinctSizes) {
    SsaRecord r{};
    std::int64_t t = 5'000'000;
    ssaUpdate(r, false, 100, t);
    ssaUpdate(r, true, 99, t + 3'000'001);   // over 3 s
    ssaUpdate(r, false, 59, t + 3'000'002);  // too short
    ssaUpdate(r, true, 151, t + 3'000'003);  // too long
    ssaUpdate(r, false, 0, t);
    ssaUpdate(r, true, 65535, t);
    ssaUpdate(r, true, 120, t + 3'000'004);  // 20 longer than the other side's 100: no match
    EXPECT_EQ(r.suspects, 0U);
    EXPECT_EQ(ssaFinalise(r, 100), 0);

    SsaRecord distinct{};  // 5 suspects of 5 different sizes: ratio 1 > 0.6
    for (std::uint16_t len = 70; len < 120; len += 10) {
        ssaUpdate(distinct, false, len, t += 100);
        ssaUpdate(distinct, true, len, t += 100);
    }
    EXPECT_EQ(distinct.suspects, 5U);
    EXPECT_EQ(ssaFinalise(distinct, 100), 0);
    SsaRecord shorter{};  // a reply shorter than the other side's packet is no match
    ssaUpdate(shorter, false, 100, t += 100);
    ssaUpdate(shorter, true, 96, t += 100);
    EXPECT_EQ(shorter.suspects, 0U);
}

TEST(SsaDetector, SamplesStopAtAHundred) {
    SsaRecord r{};
    std::int64_t t = 10'000'000;
    for (int i = 0; i < 150; ++i) {
        ssaUpdate(r, false, 90, t += 10);
        ssaUpdate(r, true, 90, t += 10);
    }
    EXPECT_EQ(r.suspects, 150U);
    EXPECT_EQ(r.sampleCount, kMaxSamples);
    EXPECT_EQ(ssaFinalise(r, 300), 1);
}

}  // namespace
