// NetTiSA statistics (process/nettisa/nettisa_stats.hpp) on hand-computed flows, a one-packet
// flow, and hostile inputs (time running backwards, zero-length and maximal payloads).
#include "process/nettisa/nettisa_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace {

using rowprobe::nettisa::nettisaFinalise;
using rowprobe::nettisa::NettisaState;
using rowprobe::nettisa::nettisaUpdate;

TEST(NettisaStats, TwoPacketsByHand) {
    NettisaState s{};
    nettisaUpdate(s, 100, 154, 1'000'000, 1'000'000, 1);
    nettisaUpdate(s, 300, 354, 1'000'400, 1'000'000, 2);
    ASSERT_TRUE(nettisaFinalise(s, 2));
    EXPECT_FLOAT_EQ(s.mean, 200);
    EXPECT_EQ(s.min, 100);
    EXPECT_EQ(s.max, 300);
    EXPECT_FLOAT_EQ(s.rootMeanSquare, std::sqrt((100.0F * 100 + 300.0F * 300) / 2));
    EXPECT_FLOAT_EQ(s.stdev, 100);  // sqrt(50000 - 200²)
    // deviations from the running mean: 100 (0 → 100), 200 (100 → 300)
    EXPECT_FLOAT_EQ(s.averageDispersion, 150);
    EXPECT_FLOAT_EQ(s.kurtosis, (1e8F + 1.6e9F) / (2 * 1e8F));
    EXPECT_FLOAT_EQ(s.minDifftimes, 0);
    EXPECT_FLOAT_EQ(s.maxDifftimes, 400);
    EXPECT_FLOAT_EQ(s.meanDifftimes, 200);
    EXPECT_FLOAT_EQ(s.meanScaledTime, 200);
    EXPECT_FLOAT_EQ(s.switchingRatio, 1);
    // |mean_gap - gap| = 0 then |200 - 400|; / (n - 1) / (max_gap - min_len)
    EXPECT_FLOAT_EQ(s.timeDistribution, 200.0F / (400 - 100));
    const NettisaState before = s;
    EXPECT_TRUE(nettisaFinalise(s, 2));  // idempotent
    EXPECT_FLOAT_EQ(s.stdev, before.stdev);
}

TEST(NettisaStats, OnePacketFlowHasNoStatistics) {
    NettisaState s{};
    nettisaUpdate(s, 10, 64, 5, 5, 1);
    EXPECT_FALSE(nettisaFinalise(s, 1));
    EXPECT_FALSE(nettisaFinalise(s, 0));
}

TEST(NettisaStats, HostileTimesAndLengthsStayFinite) {
    NettisaState s{};
    nettisaUpdate(s, 0, 60, 1'000'000, 1'000'000, 1);
    nettisaUpdate(s, 65535, 65535, 999'000, 1'000'000, 2);  // earlier than the previous packet
    nettisaUpdate(s, 0, 60, 1'000'000, 1'000'000, 3);
    ASSERT_TRUE(nettisaFinalise(s, 3));
    EXPECT_EQ(s.max, 65535);
    EXPECT_TRUE(std::isfinite(s.mean));
    EXPECT_TRUE(std::isfinite(s.rootMeanSquare));
    EXPECT_GE(s.maxDifftimes, 1e18F);  // the unsigned difference wraps, as in ipfixprobe
}

}  // namespace
