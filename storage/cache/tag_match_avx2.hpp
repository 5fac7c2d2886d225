// AVX2 tag matcher: L = 32 in one 256-bit compare; shorter rows use the SSE2 forms (AVX2
// implies SSE2, and a 256-bit op buys nothing for 16 tags).
//
//   _mm256_set1_epi8(tag) ──vpcmpeqb──▶ ──vpmovmskb──▶ 32-bit mask, bit i = slot i
//
// The functions carry target("avx2"), so this header compiles on any x86 build and tests can
// run it after checking the CPU (__builtin_cpu_supports). The table selects it only when the
// whole build targets AVX2 (__AVX2__, e.g. -march=native on an AVX2 machine): the choice is made
// at build time, never per packet. Stateless; any thread. Cost: 3 instructions for L = 32.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define ROWPROBE_HAVE_AVX2_TAG_MATCH 1

#include <immintrin.h>

#include <cstdint>
#include <string_view>

#include "cache/slot.hpp"
#include "cache/tag_match_sse2.hpp"

namespace rowprobe::storage {

struct Avx2TagMatch {
    static constexpr std::string_view kName = "avx2";

    template <unsigned L>
    __attribute__((target("avx2"))) static std::uint32_t match(const Tag* tags, Tag tag) noexcept {
        static_assert(L == 4 || L == 8 || L == 16 || L == 32);
        if constexpr (L == 32) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags));
            const __m256i needle = _mm256_set1_epi8(static_cast<char>(tag));
            return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, needle)));
        } else {
            return Sse2TagMatch::match<L>(tags, tag);
        }
    }

    /// True when the running CPU can execute this variant.
    static bool supported() noexcept { return __builtin_cpu_supports("avx2") != 0; }
};

}  // namespace rowprobe::storage

#endif
