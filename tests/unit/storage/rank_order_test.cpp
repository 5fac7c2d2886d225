// RankOrder: the rank permutation policies keep per row. Checked against a plain list model.
#include "cache/rank_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace rowprobe::storage {
namespace {

template <class Order, unsigned kL>
struct Variant {
    using Type = Order;
    static constexpr unsigned L = kL;
};

template <class V>
class RankOrderTest : public ::testing::Test {};

using Variants = ::testing::Types<Variant<RankOrder<4>, 4>, Variant<RankOrder<8>, 8>,
                                  Variant<RankOrder<16>, 16>, Variant<RankOrder<32>, 32>,
                                  Variant<ByteRankOrder<16>, 16>, Variant<NibbleRankOrder<5>, 5>>;
TYPED_TEST_SUITE(RankOrderTest, Variants);

/// The order as a list of slots, front first: the model a rank permutation must match.
std::vector<Slot> identityList(unsigned l) {
    std::vector<Slot> v(l);
    for (unsigned i = 0; i < l; ++i) v[i] = static_cast<Slot>(i);
    return v;
}

TYPED_TEST(RankOrderTest, StartsAsIdentity) {
    const typename TypeParam::Type order;
    for (unsigned s = 0; s < TypeParam::L; ++s) {
        EXPECT_EQ(order.rankOf(static_cast<Slot>(s)), s);
        EXPECT_EQ(order.at(s), s);
    }
    EXPECT_TRUE(order.valid());
}

TYPED_TEST(RankOrderTest, RandomMovesStayAPermutationAndMatchAListRotation) {
    constexpr unsigned L = TypeParam::L;
    typename TypeParam::Type order;
    std::vector<Slot> model = identityList(L);
    std::mt19937 rng(12345);
    for (int step = 0; step < 5000; ++step) {
        const auto s = static_cast<Slot>(rng() % L);
        const auto to = static_cast<unsigned>(rng() % L);
        order.moveTo(s, to);
        model.erase(std::find(model.begin(), model.end(), s));
        model.insert(model.begin() + to, s);
        ASSERT_TRUE(order.valid()) << "step " << step;
        for (unsigned rank = 0; rank < L; ++rank) {
            ASSERT_EQ(order.at(rank), model[rank]) << "step " << step << " rank " << rank;
            ASSERT_EQ(order.rankOf(model[rank]), rank) << "step " << step;
        }
    }
}

TYPED_TEST(RankOrderTest, FirstFreeIsTheLowestRankedFreeSlot) {
    constexpr unsigned L = TypeParam::L;
    typename TypeParam::Type order;
    std::mt19937 rng(7);
    for (int step = 0; step < 2000; ++step) {
        order.moveTo(static_cast<Slot>(rng() % L), static_cast<unsigned>(rng() % L));
        const std::uint32_t mask = static_cast<std::uint32_t>(rng()) &
                                   (L == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << L) - 1);
        Slot expected = kNoSlot;
        for (unsigned rank = 0; rank < L && expected == kNoSlot; ++rank) {
            if ((mask >> order.at(rank)) & 1U) expected = order.at(rank);
        }
        ASSERT_EQ(order.firstFree(mask), expected) << "mask " << mask;
    }
    EXPECT_EQ(order.firstFree(0), kNoSlot);
}

TEST(RankOrder, FitsThePolicyStateBudget) {
    EXPECT_EQ(sizeof(RankOrder<16>), 8U);
    EXPECT_EQ(sizeof(RankOrder<32>), 32U);
    EXPECT_TRUE(std::is_trivially_copyable_v<RankOrder<16>>);
    EXPECT_TRUE(std::is_trivially_copyable_v<RankOrder<32>>);
}

}  // namespace
}  // namespace rowprobe::storage
