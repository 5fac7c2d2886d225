// Big-endian (network order) loads and stores of 16, 32 and 64-bit integers on raw bytes.
//
// Every wire format rowprobe reads or writes (IPv4/IPv6/TCP headers, IPFIX, the TRAP framing of
// UniRec, the Kafka protocol, the capture generator's packets) keeps integers big-endian. These
// helpers are the one definition of those accesses: plugins and outputs include this header
// instead of writing their own shift-and-mask functions.
//
// * Byte-wise shifts, so they are constexpr, independent of the host's byte order and of the
//   pointer's alignment; GCC and Clang compile them to one load or store plus a byte swap.
// * No bounds checks: the caller has checked that the bytes exist (parsers work on spans and
//   test the length first, writers size their buffers).
#pragma once

#include <cstdint>

namespace rowprobe {

[[nodiscard]] constexpr std::uint16_t loadBe16(const std::uint8_t* p) noexcept {
    return static_cast<std::uint16_t>(std::uint16_t{p[0]} << 8 | std::uint16_t{p[1]});
}

[[nodiscard]] constexpr std::uint32_t loadBe32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
           std::uint32_t{p[3]};
}

[[nodiscard]] constexpr std::uint64_t loadBe64(const std::uint8_t* p) noexcept {
    return std::uint64_t{loadBe32(p)} << 32 | std::uint64_t{loadBe32(p + 4)};
}

constexpr void storeBe16(std::uint8_t* p, std::uint16_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}

constexpr void storeBe32(std::uint8_t* p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}

constexpr void storeBe64(std::uint8_t* p, std::uint64_t v) noexcept {
    storeBe32(p, static_cast<std::uint32_t>(v >> 32));
    storeBe32(p + 4, static_cast<std::uint32_t>(v));
}

}  // namespace rowprobe
