// Tag matching: which slots of a row may hold the flow we are looking for.
//
//   row tags (L bytes)   [ 00 | 9c | 17 | 9c | 00 | ... ]      tag of the packet: 9c
//   match<L>(tags, 9c)   0b...01010  → candidate slots 1 and 3, each confirmed by a full
//                                       FlowKey compare (a tag is 8 bits: it narrows, never
//                                       decides)
//   match<L>(tags, 0)    0b...10001  → the free slots
//
// Variants live in separate headers: tag_match_portable.hpp (reference), tag_match_sse2.hpp,
// tag_match_avx2.hpp. `TagMatch` is the one the table uses, chosen at build time from the
// compiler's target flags (__AVX2__, else __SSE2__, else portable): never per packet, and no
// indirect call. All variants have the same interface and are checked against each other by
// tests/unit/storage/tag_match_test.cpp.
//
// Invariants: bit i of a result refers to slot i; bits >= L are zero. Stateless; any thread.
// Costs: a handful of instructions for L <= 16 on SSE2/AVX2; expected false candidates per
// lookup in a full row of 16 = 16/255 ≈ 0.06 key compares.
#pragma once

#include <cstdint>

#include "cache/slot.hpp"
#include "cache/tag_match_avx2.hpp"
#include "cache/tag_match_portable.hpp"
#include "cache/tag_match_sse2.hpp"

namespace rowprobe::storage {

#if defined(__AVX2__) && defined(ROWPROBE_HAVE_AVX2_TAG_MATCH)
using TagMatch = Avx2TagMatch;
#elif defined(__SSE2__) && defined(ROWPROBE_HAVE_SSE2_TAG_MATCH)
using TagMatch = Sse2TagMatch;
#else
using TagMatch = PortableTagMatch;
#endif

/// The tag stored for hash `h`: its top 8 bits (independent of the low bits that choose the
/// row), with 0 remapped to 1 because 0 marks an empty slot.
constexpr Tag tagOf(std::uint64_t h) noexcept {
    const auto t = static_cast<Tag>(h >> 56);
    return t == kEmptyTag ? Tag{1} : t;
}

}  // namespace rowprobe::storage
