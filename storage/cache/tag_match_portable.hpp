// Portable tag matcher: the reference every SIMD variant must agree with (typed tests).
//
//   tags:  t0 t1 ... t(L-1)   (one byte per slot, 0 = empty)
//   match: bit i set  <=>  tags[i] == tag
//
// Plain C++, no intrinsics: compilers turn the loop into a few vector compares where they can.
// Stateless; any thread. Cost: L byte compares (~L/2 cycles when not vectorised).
#pragma once

#include <cstdint>
#include <string_view>

#include "cache/slot.hpp"

namespace rowprobe::storage {

struct PortableTagMatch {
    static constexpr std::string_view kName = "portable";

    /// Bit i of the result is set when tags[i] == tag. `tags` points at L readable bytes.
    template <unsigned L>
    static std::uint32_t match(const Tag* tags, Tag tag) noexcept {
        static_assert(L >= 1 && L <= kMaxLine);
        std::uint32_t mask = 0;
        for (unsigned i = 0; i < L; ++i) mask |= std::uint32_t{tags[i] == tag} << i;
        return mask;
    }
};

}  // namespace rowprobe::storage
