// CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over a byte string, as a flow hash.
//
//   crc = ~seed32 ─▶ for each 8-byte word: crc = crc32c(crc, word) ─▶ bytes left: one at a time
//                 ─▶ ~crc                                  (seed32 = 0: the standard CRC32C)
//
// Two implementations give identical values:
//   * hardware: SSE4.2 `crc32` (_mm_crc32_u64 / _mm_crc32_u8), 5 instructions for a 40-byte key,
//     ~15 cycles latency per key, overlapping across the keys of a batch;
//   * table: Sarwate's byte-at-a-time loop over one 256-entry table (1 KiB, built at compile
//     time), ~40 table look-ups per key; used when the CPU lacks SSE4.2.
// The choice is made once per batch (crc32cHashBatch tests a flag read once at start-up), never
// per packet; the hardware loop is compiled with __attribute__((target("sse4.2"))), so it exists
// even in builds without -march=native.
//
// Seeding follows the usual `extend` convention (Google crc32c::Extend, iSCSI's running CRC): the
// seed is the CRC of a virtual prefix, so crc32c(seed = 0, "123456789") = 0xE3069283. CRC is
// linear (crc(a ^ b) relates to crc(a) ^ crc(b)), which is harmless for row selection once the
// value is widened by the non-linear 64-bit mixer in hash.hpp, and identity never rests on the
// hash anyway.
//
// Thread ownership: stateless; any thread. The CPU flag is a function-local static (thread-safe
// initialisation, read-only afterwards).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ROWPROBE_HAVE_X86_CRC32C 1
#else
#define ROWPROBE_HAVE_X86_CRC32C 0
#endif

namespace rowprobe::storage::crc32c {

/// Reflected Castagnoli polynomial.
inline constexpr std::uint32_t kPolynomial = 0x82F63B78U;

/// Byte-wise table: kTable[b] = CRC register after shifting byte b through eight steps.
inline constexpr std::array<std::uint32_t, 256> kTable = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t c = b;
        for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? (c >> 1) ^ kPolynomial : c >> 1;
        t[b] = c;
    }
    return t;
}();

/// Table implementation: CRC32C of data[0, len) continuing from `seed` (0 = plain CRC32C).
constexpr std::uint32_t software(const std::uint8_t* data, std::size_t len,
                                 std::uint32_t seed) noexcept {
    std::uint32_t crc = ~seed;
    for (std::size_t i = 0; i < len; ++i) crc = kTable[(crc ^ data[i]) & 0xFFU] ^ (crc >> 8);
    return ~crc;
}

#if ROWPROBE_HAVE_X86_CRC32C
/// SSE4.2 implementation; the caller must have checked hardwareAvailable().
__attribute__((target("sse4.2"))) inline std::uint32_t hardware(const std::uint8_t* data,
                                                                std::size_t len,
                                                                std::uint32_t seed) noexcept {
    std::uint64_t crc = ~seed;
    std::size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, data + i, sizeof word);  // little-endian load, as the CRC expects
        crc = _mm_crc32_u64(crc, word);
    }
    auto c32 = static_cast<std::uint32_t>(crc);
    for (; i < len; ++i) c32 = _mm_crc32_u8(c32, data[i]);
    return ~c32;
}
#endif

/// True when the CPU executes SSE4.2 `crc32` (checked once).
inline bool hardwareAvailable() noexcept {
#if ROWPROBE_HAVE_X86_CRC32C
    static const bool kHave = __builtin_cpu_supports("sse4.2") != 0;
    return kHave;
#else
    return false;
#endif
}

/// CRC32C with whichever implementation this CPU has (one flag test per call).
inline std::uint32_t compute(const void* data, std::size_t len, std::uint32_t seed) noexcept {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
#if ROWPROBE_HAVE_X86_CRC32C
    if (hardwareAvailable()) return hardware(bytes, len, seed);
#endif
    return software(bytes, len, seed);
}

}  // namespace rowprobe::storage::crc32c
