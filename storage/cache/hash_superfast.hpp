// SuperFastHash (Paul Hsieh, 2004-2008, http://www.azillionmonkeys.com/qed/hash.html) as a
// flow hash: the reference algorithm, 32 bits.
//
//   hash = len ─▶ per 4 bytes: two little-endian 16-bit words mixed with shifts and adds
//              ─▶ 1..3 trailing bytes (signed char, as the reference) ─▶ final avalanche
//
// The algorithm has no seed (its initial value is the length); the table's seed enters in the
// 32→64-bit widening of hash.hpp, which moves rows and tags per seed but cannot separate keys
// whose SuperFastHash values collide. A 40-byte key is 10 rounds of ~8 operations, a serial
// dependency chain (~35 cycles): the slowest of the selectable hashes, kept because the thesis
// compared it. Its avalanche is known to be weak; the widening mixer hides that for row choice.
//
// No official test vectors exist; tests compare against values of Hsieh's C code (computed
// once with the reference source and pasted in) — see hash_functions_test.cpp.
//
// Thread ownership: stateless; any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rowprobe::storage::superfast {

/// Paul Hsieh's SuperFastHash of data[0, len) (0 for len == 0, as the reference).
constexpr std::uint32_t hash(const std::uint8_t* data, std::size_t len) noexcept {
    if (len == 0) return 0;
    auto get16 = [](const std::uint8_t* p) -> std::uint32_t {
        return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
    };
    auto signedByte = [](std::uint8_t b) -> std::uint32_t {
        return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(b)));
    };
    auto h = static_cast<std::uint32_t>(len);
    const std::size_t rem = len & 3U;
    for (std::size_t n = len >> 2; n > 0; --n) {
        h += get16(data);
        const std::uint32_t tmp = (get16(data + 2) << 11) ^ h;
        h = (h << 16) ^ tmp;
        data += 4;
        h += h >> 11;
    }
    switch (rem) {
        case 3:
            h += get16(data);
            h ^= h << 16;
            h ^= signedByte(data[2]) << 18;
            h += h >> 11;
            break;
        case 2:
            h += get16(data);
            h ^= h << 11;
            h += h >> 17;
            break;
        case 1:
            h += signedByte(data[0]);
            h ^= h << 10;
            h += h >> 1;
            break;
        default:
            break;
    }
    h ^= h << 3;
    h += h >> 5;
    h ^= h << 4;
    h += h >> 17;
    h ^= h << 25;
    h += h >> 6;
    return h;
}

}  // namespace rowprobe::storage::superfast
