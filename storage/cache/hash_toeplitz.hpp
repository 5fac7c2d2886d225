// Toeplitz hash (Microsoft RSS) with the symmetric key 0x6d5a repeated: the value a NIC's RSS
// (or DPDK's rte_softrss with that key) computes for the same packet, in either direction.
//
//   NIC input (network byte order):  src addr | dst addr | src port | dst port
//                                    4+4+2+2 bytes (IPv4) or 16+16+2+2 (IPv6); ports only for
//                                    TCP, UDP and SCTP (other protocols: addresses only, as
//                                    RSS's "IPv4"/"IPv6" hash types)
//   Toeplitz:  h = XOR over every set input bit j (MSB first) of key bits [j, j + 32)
//
// Why the fast path is a 16-bit fold. With a key whose bit string repeats every 16 bits, the
// 32-bit window at bit j equals the window at j + 16, so input bits 16 apart contribute the same
// value: h(input) = h(fold16(input)), where fold16 XORs all big-endian 16-bit words. Every field
// starts on a 16-bit boundary, so swapping source and destination (addresses and ports) leaves
// the fold — and the hash — unchanged: that is what makes the key symmetric, and why the order of
// the canonical key's sides does not matter. The fast path therefore XORs the key's words into
// one 16-bit value (64-bit XORs of the addresses, then two folding shifts) and looks its two
// bytes up in two 256-entry tables (2 KiB, compile time): ~20 instructions, no loop.
//
// The price of symmetry (documented, not fixable without losing it): the hash only sees the XOR
// of the 16-bit words, so e.g. (a, b) and (a ^ x, b ^ x) collide, and an attacker can craft
// colliding flows. The key is fixed (a seeded key would no longer equal the NIC's value); the
// table's seed enters only in the 32→64-bit widening of hash.hpp, which moves rows and tags per
// seed but cannot separate flows whose Toeplitz values are equal. Prefer xxh3 unless the row
// mapping must follow the NIC's RSS value.
//
// `generic` is the textbook bit-serial algorithm for any key; tests check it against
// Microsoft's RSS verification suite and the fast path against it.
//
// Thread ownership: stateless; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "rowprobe/packet.hpp"

namespace rowprobe::storage::toeplitz {

/// 40 bytes of 0x6d 0x5a: the symmetric RSS key (Woo & Park), as used with DPDK and most NICs.
inline constexpr std::array<std::uint8_t, 40> kSymmetricKey = [] {
    std::array<std::uint8_t, 40> k{};
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = (i % 2 == 0) ? 0x6d : 0x5a;
    return k;
}();

/// Bit-serial Toeplitz hash of `input` under `key` (key.size() >= input.size() + 4).
constexpr std::uint32_t generic(std::span<const std::uint8_t> key,
                                std::span<const std::uint8_t> input) noexcept {
    std::uint32_t window = (std::uint32_t{key[0]} << 24) | (std::uint32_t{key[1]} << 16) |
                           (std::uint32_t{key[2]} << 8) | std::uint32_t{key[3]};
    std::uint32_t result = 0;
    for (std::size_t i = 0; i < input.size(); ++i) {
        const std::uint8_t next = i + 4 < key.size() ? key[i + 4] : 0;
        for (int b = 7; b >= 0; --b) {
            if (((input[i] >> b) & 1U) != 0) result ^= window;
            window = (window << 1) | ((next >> b) & 1U);
        }
    }
    return result;
}

/// True for the protocols whose ports RSS hashes (TCP, UDP, SCTP).
constexpr bool hashesPorts(std::uint8_t proto) noexcept {
    return proto == 6 || proto == 17 || proto == 132;
}

/// The bytes a NIC hashes for `key`, side A as the source. Returns the length (8, 12, 32 or 36).
inline std::size_t nicInput(const FlowKey& key, std::array<std::uint8_t, 36>& out) noexcept {
    std::size_t n = 0;
    const std::size_t from = key.ipVersion == 4 ? 12 : 0;
    for (std::size_t i = from; i < 16; ++i) out[n++] = key.addrA[i];
    for (std::size_t i = from; i < 16; ++i) out[n++] = key.addrB[i];
    if (hashesPorts(key.proto)) {
        out[n++] = static_cast<std::uint8_t>(key.portA >> 8);
        out[n++] = static_cast<std::uint8_t>(key.portA);
        out[n++] = static_cast<std::uint8_t>(key.portB >> 8);
        out[n++] = static_cast<std::uint8_t>(key.portB);
    }
    return n;
}

namespace detail {

/// Window of the symmetric key starting at bit j (0..15).
constexpr std::uint32_t symmetricWindow(unsigned j) noexcept {
    const std::uint64_t bits = 0x6d5a6d5a6d5a6d5aULL;  // 64 bits of the repeating key
    return static_cast<std::uint32_t>(bits >> (32 - j));
}

/// Contribution of one byte of the folded word: kFold[0] for its high byte, kFold[1] for its low.
inline constexpr std::array<std::array<std::uint32_t, 256>, 2> kFold = [] {
    std::array<std::array<std::uint32_t, 256>, 2> t{};
    for (unsigned half = 0; half < 2; ++half) {
        for (unsigned v = 0; v < 256; ++v) {
            std::uint32_t h = 0;
            for (unsigned b = 0; b < 8; ++b) {
                if (((v >> (7 - b)) & 1U) != 0) h ^= symmetricWindow(half * 8 + b);
            }
            t[half][v] = h;
        }
    }
    return t;
}();

}  // namespace detail

/// The NIC's symmetric-key RSS value of `key` (fast path; equals generic(kSymmetricKey, ...)).
/// The 16-bit fold is computed with 64-bit XORs of the addresses loaded little-endian (XOR
/// commutes with the byte order: the result is the fold of the big-endian words, byte-swapped).
inline std::uint32_t symmetric(const FlowKey& key) noexcept {
    std::uint64_t a[2];
    std::uint64_t b[2];
    std::memcpy(a, key.addrA.data(), sizeof a);
    std::memcpy(b, key.addrB.data(), sizeof b);
    std::uint64_t x = key.ipVersion == 4 ? (a[1] ^ b[1]) >> 32 : a[0] ^ a[1] ^ b[0] ^ b[1];
    x ^= x >> 32;
    x ^= x >> 16;
    auto fold =
        static_cast<std::uint32_t>(((x & 0xFFU) << 8) | ((x >> 8) & 0xFFU));  // to big-endian
    if (hashesPorts(key.proto)) fold ^= std::uint32_t{key.portA} ^ std::uint32_t{key.portB};
    return detail::kFold[0][(fold >> 8) & 0xFFU] ^ detail::kFold[1][fold & 0xFFU];
}

}  // namespace rowprobe::storage::toeplitz
