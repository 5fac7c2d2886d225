// SSE2 tag matcher (x86-64 baseline): one compare + movemask per 16 tags.
//
//   _mm_set1_epi8(tag) ──cmpeq──▶ 0xFF where equal ──movemask──▶ bit i = slot i
//
// L = 4 and 8 load exactly L bytes (movd / movq), so a row never needs padding; L = 16 is one
// unaligned 16-byte load (the row layout keeps it inside one cache line); L = 32 is two.
// Stateless; any thread. Cost: 3-4 instructions, ~2 cycles of latency, for L <= 16.
//
// Compiled on every x86 target (functions carry target("sse2"), which x86-64 always has); the
// table uses it when the build has __SSE2__ but not __AVX2__ (tag_match.hpp).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define ROWPROBE_HAVE_SSE2_TAG_MATCH 1

#include <emmintrin.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "cache/slot.hpp"

namespace rowprobe::storage {

struct Sse2TagMatch {
    static constexpr std::string_view kName = "sse2";

    template <unsigned L>
    __attribute__((target("sse2"))) static std::uint32_t match(const Tag* tags, Tag tag) noexcept {
        static_assert(L == 4 || L == 8 || L == 16 || L == 32);
        const __m128i needle = _mm_set1_epi8(static_cast<char>(tag));
        if constexpr (L == 4) {
            std::int32_t word = 0;
            std::memcpy(&word, tags, 4);
            const __m128i v = _mm_cvtsi32_si128(word);
            return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle))) & 0xFU;
        } else if constexpr (L == 8) {
            const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(tags));
            return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle))) & 0xFFU;
        } else if constexpr (L == 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags));
            return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)));
        } else {
            const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags));
            const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + 16));
            const auto mlo =
                static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(lo, needle)));
            const auto mhi =
                static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(hi, needle)));
            return mlo | (mhi << 16);
        }
    }
};

}  // namespace rowprobe::storage

#endif
