// The idpcontent plugin's per-flow record: the first bytes of the first packet with payload in
// each direction (ipfixprobe 5.7: IDPCONTENT_SIZE = 100 bytes). Header-only; the plugin glue
// calls update() for every packet until both directions are filled.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>

namespace rowprobe::idpcontent {

inline constexpr std::size_t kContentSize = 100;

struct IdpContentRecord {
    std::array<std::array<std::uint8_t, kContentSize>, 2> data{};  ///< [0] src→dst, [1] reverse
    std::array<std::uint8_t, 2> size{};
    std::array<bool, 2> filled{};

    /// Records the payload of one packet (`reverse`: it went dst→src of the flow). Only the
    /// first packet with a non-empty captured payload of each direction counts. Returns true
    /// once both directions are filled (nothing later can change the record).
    bool update(bool reverse, std::span<const std::uint8_t> payload) noexcept {
        const std::size_t d = reverse ? 1 : 0;
        if (!filled[d] && !payload.empty()) {
            const std::size_t n = std::min(payload.size(), kContentSize);
            std::memcpy(data[d].data(), payload.data(), n);
            size[d] = static_cast<std::uint8_t>(n);
            filled[d] = true;
        }
        return filled[0] && filled[1];
    }
};

}  // namespace rowprobe::idpcontent
