// Hash functions of the flow table, selectable by name (`hash=` option of the cache plugin).
//
//   FlowKey (40 bytes, canonical, direction-free)
//        │  Hasher::hash(key, seed)        ── one 64-bit value per packet
//        ▼
//   h:  [ 63 .. 56 | 55 ............ log2(rows) | log2(rows)-1 .. 0 ]
//         tag (8 bits)       unused                  row index
//
// Selection without per-packet dispatch: every hash is a small struct (`Hasher`) with a static
// `hash(key, seed)`. `hashBatch<H>` instantiates the loop over a batch for one hasher, and the
// table keeps a single `HashBatchFn` pointer, chosen once at construction: one indirect call per
// batch of up to 64 packets, and inside it H::hash is inlined. Adding a hash function (xxh3-128,
// crc32c, toeplitz, murmur3, farmhash, superfasthash ...) means one struct and one line in
// kHashFunctions below; the table and the option code do not change (the `hash` option's
// choices are kHashNames).
//
// Hashers narrower than 64 bits declare kBits; hashBatch widens their value with a 64-bit
// finaliser so the tag (top bits) and the row (low bits) stay independent. Identity never rests
// on the hash: the table always compares full keys.
//
// Seeds: the table draws a random seed at start-up (std::random_device) unless `seed=` is
// given, so flows cannot be crafted to collide in one row, and a fixed seed reproduces a run
// exactly. XXH64 with seed 0 is upstream ipfixprobe's hash (differential tests).
//
// Thread ownership: stateless functions; any thread. Costs (x86-64, 40-byte key): XXH3-64
// ≈ 4-6 ns, XXH64 ≈ 6-8 ns per key, inlined (XXH_INLINE_ALL).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "rowprobe/packet.hpp"

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
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

/// A hasher: a name, a width and a static hash(key, seed).
template <class H>
concept Hasher = requires(const FlowKey& k, std::uint64_t seed) {
    { H::kName } -> std::convertible_to<std::string_view>;
    { H::kSummary } -> std::convertible_to<std::string_view>;
    { H::kBits } -> std::convertible_to<unsigned>;
    { H::hash(k, seed) } noexcept -> std::convertible_to<std::uint64_t>;
};

/// Spreads a narrow hash over 64 bits (murmur3's fmix64), so tag and row bits stay independent.
constexpr std::uint64_t widenHash(std::uint64_t h) noexcept {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

template <Hasher H>
std::uint64_t hashKey(const FlowKey& key, std::uint64_t seed) noexcept {
    const std::uint64_t h = H::hash(key, seed);
    if constexpr (H::kBits < 64) {
        return widenHash(h);
    } else {
        return h;
    }
}

template <Hasher H>
void hashBatch(std::span<const ParsedPacket> pkts, std::uint64_t seed, std::uint64_t* out) noexcept {
    for (std::size_t i = 0; i < pkts.size(); ++i) out[i] = hashKey<H>(pkts[i].key, seed);
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
    return HashFunction{H::kName, H::kSummary, &hashBatch<H>, &hashKey<H>};
}

/// Every hash the `hash=` option accepts; the first is the default.
inline constexpr std::array kHashFunctions = {
    makeHashFunction<Xxh3Hasher>(),
    makeHashFunction<Xxh64Hasher>(),
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
