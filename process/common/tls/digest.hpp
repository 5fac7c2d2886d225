// Incremental MD5 (RFC 1321) and SHA-256 (FIPS 180-4) for the TLS fingerprints.
//
// JA3/JA3S are MD5 and JA4 truncated SHA-256 of short strings built from one hello. The
// fingerprint code feeds the pieces straight into these hashers instead of building the string
// first, so computing a fingerprint allocates nothing and its cost is bounded by the hello's
// size. Both are plain value types (no heap, no library state); they are not meant for anything
// security-relevant — they only name a fingerprint.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rowprobe::tls {

class Md5 {
public:
    void update(const std::uint8_t* data, std::size_t len) noexcept;
    void update(std::string_view s) noexcept {
        update(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    }
    /// Finishes the hash; the object must not be updated afterwards.
    std::array<std::uint8_t, 16> finish() noexcept;

private:
    void block(const std::uint8_t* p) noexcept;

    std::array<std::uint32_t, 4> m_state{0x67452301U, 0xefcdab89U, 0x98badcfeU, 0x10325476U};
    std::array<std::uint8_t, 64> m_buf{};
    std::uint64_t m_total = 0;  ///< bytes hashed so far
};

class Sha256 {
public:
    void update(const std::uint8_t* data, std::size_t len) noexcept;
    void update(std::string_view s) noexcept {
        update(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    }
    std::array<std::uint8_t, 32> finish() noexcept;

private:
    void block(const std::uint8_t* p) noexcept;

    std::array<std::uint32_t, 8> m_state{0x6a09e667U, 0xbb67ae85U, 0x3c6ef372U, 0xa54ff53aU,
                                         0x510e527fU, 0x9b05688cU, 0x1f83d9abU, 0x5be0cd19U};
    std::array<std::uint8_t, 64> m_buf{};
    std::uint64_t m_total = 0;
};

}  // namespace rowprobe::tls
