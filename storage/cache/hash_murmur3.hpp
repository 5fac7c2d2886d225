// MurmurHash3_x64_128 (Austin Appleby, SMHasher, public domain) as a flow hash: the first 64
// bits (h1) of the 128-bit result.
//
//   16-byte blocks: k1, k2 mixed into h1, h2 (multiply, rotate, multiply) ─▶ tail (len & 15)
//   ─▶ h1 ^= len, h2 ^= len ─▶ cross-add ─▶ fmix64 both ─▶ cross-add ─▶ {h1, h2}
//
// The reference takes a 32-bit seed (h1 = h2 = seed); rowprobe passes the low 32 bits of the
// table's seed folded with the high 32 bits (seed ^ seed >> 32), so a 64-bit seed changes the
// value and seed < 2^32 gives exactly the reference output. A 40-byte key is 2 blocks and an
// 8-byte tail: ~30 instructions, no loop-carried dependency between the two lanes.
//
// Verified against SMHasher's verification value for MurmurHash3_x64_128 (0x6384BA69) and known
// outputs of the reference code (tests/unit/storage/hash_functions_test.cpp).
//
// Thread ownership: stateless; any thread.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rowprobe::storage::murmur3 {

constexpr std::uint64_t fmix64(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/// MurmurHash3_x64_128(data, len, seed) as {h1, h2} (the reference's out[0], out[1]).
// NOLINTNEXTLINE(readability-identifier-naming): the reference's name, MurmurHash3_x64_128
inline std::array<std::uint64_t, 2> x64_128(const void* data, std::size_t len,
                                            std::uint32_t seed) noexcept {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    const std::size_t nblocks = len / 16;
    std::uint64_t h1 = seed;
    std::uint64_t h2 = seed;
    // The reference's names for its two multipliers, kept so the code reads against it.
    constexpr std::uint64_t c1 = 0x87c37b91114253d5ULL;  // NOLINT(readability-identifier-naming)
    constexpr std::uint64_t c2 = 0x4cf5ad432745937fULL;  // NOLINT(readability-identifier-naming)

    for (std::size_t i = 0; i < nblocks; ++i) {
        std::uint64_t k1 = 0;
        std::uint64_t k2 = 0;
        std::memcpy(&k1, bytes + i * 16, 8);
        std::memcpy(&k2, bytes + i * 16 + 8, 8);
        k1 *= c1;
        k1 = std::rotl(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = std::rotl(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = std::rotl(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = std::rotl(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }

    const std::uint8_t* tail = bytes + nblocks * 16;
    const std::size_t rest = len & 15U;
    std::uint64_t k1 = 0;
    std::uint64_t k2 = 0;
    for (std::size_t i = rest; i > 8; --i) k2 ^= std::uint64_t{tail[i - 1]} << (8 * (i - 9));
    if (rest > 8) {
        k2 *= c2;
        k2 = std::rotl(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (std::size_t i = rest < 8 ? rest : 8; i > 0; --i)
        k1 ^= std::uint64_t{tail[i - 1]} << (8 * (i - 1));
    if (rest > 0) {
        k1 *= c1;
        k1 = std::rotl(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }

    h1 ^= len;
    h2 ^= len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    return {h1, h2};
}

}  // namespace rowprobe::storage::murmur3
