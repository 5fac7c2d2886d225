#include "process/mpls/mpls_label.hpp"

#include <array>
#include <cstddef>

namespace rowprobe::mpls {

namespace {

constexpr std::uint16_t kEtherVlan = 0x8100;
constexpr std::uint16_t kEtherQinQ = 0x88A8;
constexpr std::uint16_t kEtherQinQOld = 0x9100;
constexpr std::uint16_t kEtherMplsUnicast = 0x8847;
constexpr std::uint16_t kEtherMplsMulticast = 0x8848;
constexpr std::size_t kMaxHeaders = 16;  // VLAN tags plus label entries

std::uint16_t load16(std::span<const std::uint8_t> b, std::size_t at) noexcept {
    return static_cast<std::uint16_t>(b[at] << 8 | b[at + 1]);
}

// EtherType at `at`, its header ending at `headerEnd`: VLAN tags, then the label stack.
std::uint32_t walk(std::span<const std::uint8_t> b, std::size_t at,
                   std::size_t headerEnd) noexcept {
    if (headerEnd > b.size() || at + 2 > headerEnd) return 0;
    std::uint16_t type = load16(b, at);
    std::size_t off = headerEnd;
    for (std::size_t depth = 0; depth < kMaxHeaders; ++depth) {
        if (type == kEtherVlan || type == kEtherQinQ || type == kEtherQinQOld) {
            if (off + 4 > b.size()) return 0;
            type = load16(b, off + 2);
            off += 4;
            continue;
        }
        if (type != kEtherMplsUnicast && type != kEtherMplsMulticast) return 0;
        const std::size_t top = off;
        for (; depth < kMaxHeaders; ++depth) {
            if (off + 4 > b.size()) return 0;
            const bool bottom = (b[off + 2] & 0x01) != 0;
            off += 4;
            if (bottom) {
                if (off != b.size()) return 0;  // the stack must end where IP starts
                return static_cast<std::uint32_t>(b[top]) << 24 |
                       static_cast<std::uint32_t>(b[top + 1]) << 16 |
                       static_cast<std::uint32_t>(b[top + 2]) << 8 | b[top + 3];
            }
        }
        return 0;
    }
    return 0;
}

}  // namespace

std::uint32_t topLabelEntry(std::span<const std::uint8_t> beforeIp) noexcept {
    // (EtherType offset, end of the link header): Ethernet, Linux SLL, Linux SLL2.
    constexpr std::array<std::array<std::size_t, 2>, 3> kLinks{{{12, 14}, {14, 16}, {0, 20}}};
    for (const auto& [at, end] : kLinks) {
        const std::uint32_t top = walk(beforeIp, at, end);
        if (top != 0) return top;
    }
    return 0;
}

}  // namespace rowprobe::mpls
