// Tag matchers: every SIMD variant must agree with the portable reference, for every row length.
#include "cache/tag_match.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>

namespace rowprobe::storage {
namespace {

template <class M>
class TagMatchTest : public ::testing::Test {
protected:
    void SetUp() override {
#ifdef ROWPROBE_HAVE_AVX2_TAG_MATCH
        if constexpr (std::is_same_v<M, Avx2TagMatch>) {
            if (!Avx2TagMatch::supported()) GTEST_SKIP() << "CPU without AVX2";
        }
#endif
    }
};

using Matchers = ::testing::Types<PortableTagMatch
#ifdef ROWPROBE_HAVE_SSE2_TAG_MATCH
                                  ,
                                  Sse2TagMatch
#endif
#ifdef ROWPROBE_HAVE_AVX2_TAG_MATCH
                                  ,
                                  Avx2TagMatch
#endif
                                  >;
TYPED_TEST_SUITE(TagMatchTest, Matchers);

template <class M, unsigned L>
void agreesWithReference(std::mt19937& rng) {
    // The row sits inside a larger buffer with different bytes around it: a matcher must read
    // exactly L tags.
    alignas(64) std::array<Tag, 96> buf{};
    for (int round = 0; round < 2000; ++round) {
        for (auto& b : buf) b = static_cast<Tag>(rng() % 4);  // few values: many matches
        const Tag* tags = buf.data() + 32;
        const auto tag = static_cast<Tag>(rng() % 4);
        std::uint32_t expected = 0;
        for (unsigned i = 0; i < L; ++i) expected |= std::uint32_t{tags[i] == tag} << i;
        ASSERT_EQ(M::template match<L>(tags, tag), expected) << "L=" << L << " round " << round;
        ASSERT_EQ(M::template match<L>(tags, tag), PortableTagMatch::match<L>(tags, tag));
    }
}

TYPED_TEST(TagMatchTest, AgreesWithThePortableReferenceForEveryRowLength) {
    std::mt19937 rng(99);
    agreesWithReference<TypeParam, 4>(rng);
    agreesWithReference<TypeParam, 8>(rng);
    agreesWithReference<TypeParam, 16>(rng);
    agreesWithReference<TypeParam, 32>(rng);
}

TYPED_TEST(TagMatchTest, FindsFreeSlotsAndHighTags) {
    alignas(64) std::array<Tag, 32> tags{};
    tags[0] = 0xFF;
    tags[5] = 0x80;
    tags[31] = 0x80;
    EXPECT_EQ(TypeParam::template match<32>(tags.data(), 0x80), (1U << 5) | (1U << 31));
    EXPECT_EQ(TypeParam::template match<16>(tags.data(), 0xFF), 1U);
    EXPECT_EQ(TypeParam::template match<8>(tags.data(), kEmptyTag), 0xDEU);  // 0 and 5 taken
    EXPECT_EQ(TypeParam::template match<4>(tags.data(), kEmptyTag), 0xEU);
}

TEST(TagOf, UsesTheTopByteAndNeverReturnsTheEmptyTag) {
    EXPECT_EQ(tagOf(0xAB00'0000'0000'0000ULL), 0xAB);
    EXPECT_EQ(tagOf(0x00FF'FFFF'FFFF'FFFFULL), 1);  // 0 is reserved for empty slots
    EXPECT_EQ(tagOf(0x0000'0000'0000'0000ULL), 1);
}

}  // namespace
}  // namespace rowprobe::storage
