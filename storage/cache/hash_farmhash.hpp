// FarmHash (Google, Geoff Pike 2014, MIT licence) as a flow hash, reimplemented from the
// published algorithm: `Fingerprint64` = farmhashna::Hash64, the platform-independent 64-bit
// variant, and its seeded form `Hash64WithSeed` = farmhashna::Hash64WithSeed.
//
//   len  0..16 : HashLen0to16      17..32 : HashLen17to32      33..64 : HashLen33to64
//   len > 64   : 64-byte loop over a 56-byte state (v, w, x, y, z)
//   seeded     : HashLen16(Hash64(s) - k2, seed)
//
// A flow key is 40 bytes, so the packet path runs HashLen33to64 only: 8 loads, ~12 multiplies,
// straight-line code. Rotations are right rotations (farmhash's Rotate). farmhash's top-level
// `Hash64` is NOT used: it switches between farmhashte/farmhashxo by CPU features, so its values
// differ between machines; Fingerprint64 and Hash64WithSeed are stable everywhere.
//
// Verified against values of the reference code: BigQuery's documented FARM_FINGERPRINT
// examples (Fingerprint64 of "1footrue", "2applefalse", "3true") and reference outputs for the
// other length classes (tests/unit/storage/hash_functions_test.cpp).
//
// Thread ownership: stateless; any thread.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace rowprobe::storage::farmhash {

inline constexpr std::uint64_t k0 = 0xc3a5c85c97cb3127ULL;
inline constexpr std::uint64_t k1 = 0xb492b66fbe98f273ULL;
inline constexpr std::uint64_t k2 = 0x9ae16a3b2f90404fULL;

namespace detail {

inline std::uint64_t fetch64(const std::uint8_t* p) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;  // little-endian hosts only (x86-64, aarch64): farmhash's Fetch is little-endian
}
inline std::uint32_t fetch32(const std::uint8_t* p) noexcept {
    std::uint32_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;
}
constexpr std::uint64_t rotate(std::uint64_t v, int shift) noexcept { return std::rotr(v, shift); }
constexpr std::uint64_t shiftMix(std::uint64_t v) noexcept { return v ^ (v >> 47); }

constexpr std::uint64_t hashLen16(std::uint64_t u, std::uint64_t v, std::uint64_t mul) noexcept {
    std::uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    std::uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    b *= mul;
    return b;
}
/// Hash128to64 (CityHash's Murmur-inspired 128 → 64 fold).
constexpr std::uint64_t hashLen16(std::uint64_t u, std::uint64_t v) noexcept {
    return hashLen16(u, v, 0x9ddfea08eb382d69ULL);
}

inline std::uint64_t hashLen0to16(const std::uint8_t* s, std::size_t len) noexcept {
    if (len >= 8) {
        const std::uint64_t mul = k2 + len * 2;
        const std::uint64_t a = fetch64(s) + k2;
        const std::uint64_t b = fetch64(s + len - 8);
        const std::uint64_t c = rotate(b, 37) * mul + a;
        const std::uint64_t d = (rotate(a, 25) + b) * mul;
        return hashLen16(c, d, mul);
    }
    if (len >= 4) {
        const std::uint64_t mul = k2 + len * 2;
        const std::uint64_t a = fetch32(s);
        return hashLen16(len + (a << 3), fetch32(s + len - 4), mul);
    }
    if (len > 0) {
        const std::uint8_t a = s[0];
        const std::uint8_t b = s[len >> 1];
        const std::uint8_t c = s[len - 1];
        const std::uint32_t y =
            static_cast<std::uint32_t>(a) + (static_cast<std::uint32_t>(b) << 8);
        const std::uint32_t z =
            static_cast<std::uint32_t>(len) + (static_cast<std::uint32_t>(c) << 2);
        return shiftMix(y * k2 ^ z * k0) * k2;
    }
    return k2;
}

inline std::uint64_t hashLen17to32(const std::uint8_t* s, std::size_t len) noexcept {
    const std::uint64_t mul = k2 + len * 2;
    const std::uint64_t a = fetch64(s) * k1;
    const std::uint64_t b = fetch64(s + 8);
    const std::uint64_t c = fetch64(s + len - 8) * mul;
    const std::uint64_t d = fetch64(s + len - 16) * k2;
    return hashLen16(rotate(a + b, 43) + rotate(c, 30) + d, a + rotate(b + k2, 18) + c, mul);
}

inline std::uint64_t hashLen33to64(const std::uint8_t* s, std::size_t len) noexcept {
    const std::uint64_t mul = k2 + len * 2;
    const std::uint64_t a = fetch64(s) * k2;
    const std::uint64_t b = fetch64(s + 8);
    const std::uint64_t c = fetch64(s + len - 8) * mul;
    const std::uint64_t d = fetch64(s + len - 16) * k2;
    const std::uint64_t y = rotate(a + b, 43) + rotate(c, 30) + d;
    const std::uint64_t z = hashLen16(y, a + rotate(b + k2, 18) + c, mul);
    const std::uint64_t e = fetch64(s + 16) * mul;
    const std::uint64_t f = fetch64(s + 24);
    const std::uint64_t g = (y + fetch64(s + len - 32)) * mul;
    const std::uint64_t h = (z + fetch64(s + len - 24)) * mul;
    return hashLen16(rotate(e + f, 43) + rotate(g, 30) + h, e + rotate(f + a, 18) + g, mul);
}

/// A 16-byte hash of 32 bytes and two seeds (farmhash's WeakHashLen32WithSeeds).
inline std::pair<std::uint64_t, std::uint64_t> weakHashLen32WithSeeds(const std::uint8_t* s,
                                                                      std::uint64_t a,
                                                                      std::uint64_t b) noexcept {
    const std::uint64_t w = fetch64(s);
    const std::uint64_t x = fetch64(s + 8);
    const std::uint64_t y = fetch64(s + 16);
    const std::uint64_t z = fetch64(s + 24);
    a += w;
    b = rotate(b + a + z, 21);
    const std::uint64_t c = a;
    a += x;
    a += y;
    b += rotate(a, 44);
    return {a + z, b + c};
}

inline std::uint64_t hashLong(const std::uint8_t* s, std::size_t len) noexcept {
    constexpr std::uint64_t kSeed = 81;
    std::uint64_t x = kSeed;
    std::uint64_t y = kSeed * k1 + 113;
    std::uint64_t z = shiftMix(y * k2 + 113) * k2;
    std::pair<std::uint64_t, std::uint64_t> v{0, 0};
    std::pair<std::uint64_t, std::uint64_t> w{0, 0};
    x = x * k2 + fetch64(s);
    const std::uint8_t* end = s + ((len - 1) / 64) * 64;
    const std::uint8_t* last64 = end + ((len - 1) & 63) - 63;
    do {
        x = rotate(x + y + v.first + fetch64(s + 8), 37) * k1;
        y = rotate(y + v.second + fetch64(s + 48), 42) * k1;
        x ^= w.second;
        y += v.first + fetch64(s + 40);
        z = rotate(z + w.first, 33) * k1;
        v = weakHashLen32WithSeeds(s, v.second * k1, x + w.first);
        w = weakHashLen32WithSeeds(s + 32, z + w.second, y + fetch64(s + 16));
        std::swap(z, x);
        s += 64;
    } while (s != end);
    const std::uint64_t mul = k1 + ((z & 0xff) << 1);
    s = last64;
    w.first += (len - 1) & 63;
    v.first += w.first;
    w.first += v.first;
    x = rotate(x + y + v.first + fetch64(s + 8), 37) * mul;
    y = rotate(y + v.second + fetch64(s + 48), 42) * mul;
    x ^= w.second * 9;
    y += v.first * 9 + fetch64(s + 40);
    z = rotate(z + w.first, 33) * mul;
    v = weakHashLen32WithSeeds(s, v.second * mul, x + w.first);
    w = weakHashLen32WithSeeds(s + 32, z + w.second, y + fetch64(s + 16));
    std::swap(z, x);
    return hashLen16(hashLen16(v.first, w.first, mul) + shiftMix(y) * k0 + z,
                     hashLen16(v.second, w.second, mul) + x, mul);
}

}  // namespace detail

/// farmhash::Fingerprint64 (= farmhashna::Hash64): stable across platforms and versions.
inline std::uint64_t fingerprint64(const void* data, std::size_t len) noexcept {
    const auto* s = static_cast<const std::uint8_t*>(data);
    if (len <= 16) return detail::hashLen0to16(s, len);
    if (len <= 32) return detail::hashLen17to32(s, len);
    if (len <= 64) return detail::hashLen33to64(s, len);
    return detail::hashLong(s, len);
}

/// farmhash::Hash64WithSeed (= farmhashna::Hash64WithSeed).
inline std::uint64_t hash64WithSeed(const void* data, std::size_t len,
                                    std::uint64_t seed) noexcept {
    return detail::hashLen16(fingerprint64(data, len) - k2, seed);
}

}  // namespace rowprobe::storage::farmhash
