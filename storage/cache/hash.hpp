// Hash functions of the flow table, selectable by name (`hash=` option of the cache plugin).
//
//   FlowKey (40 bytes, canonical, direction-free)
//        │  Hasher::hash(key, seed)        ── one value per packet (64 or 32 bits)
//        │  32-bit hashers only: widen     ── fmix64(value | seedFold << 32)
//        ▼
//   h:  [ 63 .. 56 | 55 ............ log2(rows) | log2(rows)-1 .. 0 ]
//         tag (8 bits)       unused                  row index
//
// | name           | algorithm                             | bits | seed            | file      |
// |----------------|---------------------------------------|------|-----------------|-----------|
// | xxh3 (default) | XXH3_64bits_withSeed                  | 64   | 64-bit          | libxxhash |
// | xxh64          | XXH64 (seed 0 = upstream ipfixprobe)  | 64   | 64-bit          | libxxhash |
// | xxh3-128       | XXH3_128bits_withSeed, low 64 bits    | 64   | 64-bit          | libxxhash |
// | crc32c         | CRC32C, SSE4.2 or table (same values) | 32   | 32-bit + widen  | crc32c    |
// | toeplitz       | RSS Toeplitz, symmetric key 0x6d5a... | 32   | widening only   | toeplitz  |
// | murmur3        | MurmurHash3_x64_128, first 64 bits    | 64   | 32-bit (folded) | murmur3   |
// | farmhash       | FarmHash Hash64WithSeed (farmhashna)  | 64   | 64-bit          | farmhash  |
// | superfasthash  | Paul Hsieh's SuperFastHash            | 32   | widening only   | superfast |
//   (file: hash_<file>.hpp next to this one, or the system's libxxhash)
//
// Selection without per-packet dispatch: every hash is a small struct (`Hasher`) with a static
// `hash(key, seed)`. `hashBatch<H>` instantiates the loop over a batch for one hasher, and the
// table keeps a single `HashBatchFn` pointer, chosen once at construction: one indirect call per
// batch of up to 64 packets, and inside it H::hash is inlined. A hasher may bring its own batch
// loop (`H::batch`, used by crc32c to test the CPU's SSE4.2 flag once per batch and run a loop
// compiled for it). Adding a hash function means one struct and one line in kHashFunctions
// below; the table and the option code do not change (the `hash` option's choices are
// kHashNames, and `-h cache` lists kHashFunctions with their summaries).
//
// 32-bit hashes (crc32c, toeplitz, superfasthash). The table takes the row from the low bits and
// the tag from the top 8 bits of one 64-bit value; a 32-bit value used directly would give the
// tag from bits that are always zero. hashKey<H> therefore widens it with murmur3's fmix64, a
// bijective 64-bit mixer, over (value | fold(seed) << 32): every output bit depends on every
// value bit, so low (row) and top (tag) bits behave as independent, and the seed moves rows and
// tags even for the unseeded algorithms. Decision on capacity: a 32-bit value carries 32 bits of
// entropy, so row and tag are fully independent while log2(rows) + 8 <= 32, i.e. up to 2^24 rows
// (2^28 records at L = 16). Larger tables are accepted (identity rests on the key compare, so
// results stay exact) but the tag then distinguishes fewer flows per row, costing extra key
// compares; use a 64-bit hash for them. Keys whose 32-bit values collide land in the same row
// with the same tag for every seed.
//
// Seeds: the table draws a random seed at start-up (std::random_device) unless `seed=` is
// given, so flows cannot be crafted to collide in one row (except through collisions of the
// unseeded 32-bit values, above), and a fixed seed reproduces a run exactly. XXH64 with seed 0
// is upstream ipfixprobe's hash (differential tests).
//
// Thread ownership: stateless functions; any thread. Costs per 40-byte key, inlined (x86-64,
// tools/policylab `--hash-bench`): xxh3 ≈ 4-6 ns, xxh64 ≈ 6-8, xxh3-128 ≈ 6, crc32c (SSE4.2)
// ≈ 3, toeplitz ≈ 3, murmur3 ≈ 6, farmhash ≈ 5, superfasthash ≈ 12.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "cache/hash_crc32c.hpp"
#include "cache/hash_farmhash.hpp"
#include "cache/hash_murmur3.hpp"
#include "cache/hash_superfast.hpp"
#include "cache/hash_toeplitz.hpp"
#include "rowprobe/packet.hpp"

#ifndef XXH_INLINE_ALL
// xxhash's own switch (compile XXH3 inline here); the name is xxhash.h's, not ours.
#define XXH_INLINE_ALL  // NOLINT(readability-identifier-naming)
#endif
#include <xxhash.h>

namespace rowprobe::storage {

/// Hashes every packet's key of a batch into out[0 .. pkts.size()).
using HashBatchFn = void (*)(std::span<const ParsedPacket> pkts, std::uint64_t seed,
                             std::uint64_t* out) noexcept;
/// Hashes one key (introspection, tests; not used on the packet path).
using HashKeyFn = std::uint64_t (*)(const FlowKey& key, std::uint64_t seed) noexcept;

/// XXH3-64 with a seed: the default.
struct Xxh3Hasher {
    static constexpr std::string_view kName = "xxh3";
    static constexpr std::string_view kSummary = "XXH3-64, seeded (default)";
    static constexpr unsigned kBits = 64;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t seed) noexcept {
        return XXH3_64bits_withSeed(&key, sizeof(FlowKey), seed);
    }
};

/// XXH64 with a seed (seed 0 = upstream ipfixprobe's hash).
struct Xxh64Hasher {
    static constexpr std::string_view kName = "xxh64";
    static constexpr std::string_view kSummary = "XXH64, seeded (seed=0 is ipfixprobe's)";
    static constexpr unsigned kBits = 64;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t seed) noexcept {
        return XXH64(&key, sizeof(FlowKey), seed);
    }
};

/// XXH3-128 with a seed, low 64 bits.
struct Xxh3x128Hasher {
    static constexpr std::string_view kName = "xxh3-128";
    static constexpr std::string_view kSummary = "XXH3-128, seeded, low 64 bits";
    static constexpr unsigned kBits = 64;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t seed) noexcept {
        return XXH3_128bits_withSeed(&key, sizeof(FlowKey), seed).low64;
    }
};

/// The 64-bit seed folded to the 32 bits the 32-bit-seeded algorithms take.
constexpr std::uint32_t foldSeed(std::uint64_t seed) noexcept {
    return static_cast<std::uint32_t>(seed ^ (seed >> 32));
}

/// CRC32C (hardware when the CPU has SSE4.2, else a table; identical values), 32 bits.
struct Crc32cHasher {
    static constexpr std::string_view kName = "crc32c";
    static constexpr std::string_view kSummary =
        "CRC32C (SSE4.2 or table, same values), 32 bits widened";
    static constexpr unsigned kBits = 32;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t seed) noexcept {
        return crc32c::compute(&key, sizeof(FlowKey), foldSeed(seed));
    }
    static void batch(std::span<const ParsedPacket> pkts, std::uint64_t seed,
                      std::uint64_t* out) noexcept;
};

/// Toeplitz with the symmetric RSS key: the NIC's RSS value, 32 bits.
struct ToeplitzHasher {
    static constexpr std::string_view kName = "toeplitz";
    static constexpr std::string_view kSummary =
        "Toeplitz RSS with the symmetric key 0x6d5a (the NIC's value): 16 bits of entropy, widened";
    static constexpr unsigned kBits = 32;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t) noexcept {
        return toeplitz::symmetric(key);
    }
};

/// MurmurHash3_x64_128, first 64 bits.
struct Murmur3Hasher {
    static constexpr std::string_view kName = "murmur3";
    static constexpr std::string_view kSummary = "MurmurHash3_x64_128, first 64 bits, 32-bit seed";
    static constexpr unsigned kBits = 64;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t seed) noexcept {
        return murmur3::x64_128(&key, sizeof(FlowKey), foldSeed(seed))[0];
    }
};

/// FarmHash Hash64WithSeed (farmhashna, platform-independent).
struct FarmHasher {
    static constexpr std::string_view kName = "farmhash";
    static constexpr std::string_view kSummary =
        "FarmHash Hash64WithSeed (Fingerprint64 family), seeded";
    static constexpr unsigned kBits = 64;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t seed) noexcept {
        return farmhash::hash64WithSeed(&key, sizeof(FlowKey), seed);
    }
};

/// Paul Hsieh's SuperFastHash, 32 bits.
struct SuperFastHasher {
    static constexpr std::string_view kName = "superfasthash";
    static constexpr std::string_view kSummary =
        "Paul Hsieh's SuperFastHash, 32 bits widened, seed in widening";
    static constexpr unsigned kBits = 32;
    static std::uint64_t hash(const FlowKey& key, std::uint64_t) noexcept {
        return superfast::hash(reinterpret_cast<const std::uint8_t*>(&key), sizeof(FlowKey));
    }
};

/// A hasher: a name, a width and a static hash(key, seed).
template <class H>
concept Hasher = requires(const FlowKey& k, std::uint64_t seed) {
    { H::kName } -> std::convertible_to<std::string_view>;
    { H::kSummary } -> std::convertible_to<std::string_view>;
    { H::kBits } -> std::convertible_to<unsigned>;
    { H::hash(k, seed) }
    noexcept->std::convertible_to<std::uint64_t>;
};

/// Spreads a 32-bit hash over 64 bits (murmur3's fmix64 over value | fold(seed) << 32), so the
/// tag (top bits) and the row (low bits) stay independent and the seed moves both.
constexpr std::uint64_t widenHash(std::uint64_t h, std::uint64_t seed) noexcept {
    return murmur3::fmix64((h & 0xFFFFFFFFULL) | (std::uint64_t{foldSeed(seed)} << 32));
}

template <Hasher H>
std::uint64_t hashKey(const FlowKey& key, std::uint64_t seed) noexcept {
    const std::uint64_t h = H::hash(key, seed);
    if constexpr (H::kBits < 64) {
        return widenHash(h, seed);
    } else {
        return h;
    }
}

template <Hasher H>
void hashBatch(std::span<const ParsedPacket> pkts, std::uint64_t seed,
               std::uint64_t* out) noexcept {
    for (std::size_t i = 0; i < pkts.size(); ++i) out[i] = hashKey<H>(pkts[i].key, seed);
}

#if ROWPROBE_HAVE_X86_CRC32C
namespace detail {
__attribute__((target("sse4.2"))) inline void crc32cBatchHardware(
    std::span<const ParsedPacket> pkts, std::uint64_t seed, std::uint64_t* out) noexcept {
    const std::uint32_t s32 = foldSeed(seed);
    for (std::size_t i = 0; i < pkts.size(); ++i) {
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(&pkts[i].key);
        out[i] = widenHash(crc32c::hardware(bytes, sizeof(FlowKey), s32), seed);
    }
}
}  // namespace detail
#endif

inline void Crc32cHasher::batch(std::span<const ParsedPacket> pkts, std::uint64_t seed,
                                std::uint64_t* out) noexcept {
#if ROWPROBE_HAVE_X86_CRC32C
    if (crc32c::hardwareAvailable()) {  // once per batch
        detail::crc32cBatchHardware(pkts, seed, out);
        return;
    }
#endif
    const std::uint32_t s32 = foldSeed(seed);
    for (std::size_t i = 0; i < pkts.size(); ++i) {
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(&pkts[i].key);
        out[i] = widenHash(crc32c::software(bytes, sizeof(FlowKey), s32), seed);
    }
}

/// One selectable hash function.
struct HashFunction {
    std::string_view name;
    std::string_view summary;
    HashBatchFn batch = nullptr;
    HashKeyFn key = nullptr;
};

template <Hasher H>
constexpr HashFunction makeHashFunction() noexcept {
    if constexpr (requires { &H::batch; }) {
        return HashFunction{H::kName, H::kSummary, &H::batch, &hashKey<H>};
    } else {
        return HashFunction{H::kName, H::kSummary, &hashBatch<H>, &hashKey<H>};
    }
}

/// Every hash the `hash=` option accepts; the first is the default.
inline constexpr std::array kHashFunctions = {
    makeHashFunction<Xxh3Hasher>(),     makeHashFunction<Xxh64Hasher>(),
    makeHashFunction<Xxh3x128Hasher>(), makeHashFunction<Crc32cHasher>(),
    makeHashFunction<ToeplitzHasher>(), makeHashFunction<Murmur3Hasher>(),
    makeHashFunction<FarmHasher>(),     makeHashFunction<SuperFastHasher>(),
};

/// The names of kHashFunctions, in the same order (the option's choices).
inline constexpr auto kHashNames = [] {
    std::array<std::string_view, kHashFunctions.size()> names{};
    for (std::size_t i = 0; i < kHashFunctions.size(); ++i) names[i] = kHashFunctions[i].name;
    return names;
}();

/// The hash function called `name`, or nullptr.
constexpr const HashFunction* findHashFunction(std::string_view name) noexcept {
    for (const auto& f : kHashFunctions) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

}  // namespace rowprobe::storage
