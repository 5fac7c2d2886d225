// The SDK's formatters' two-digit table: "00" "01" ... "99", 200 characters, so that a number
// is written two digits per lookup (format.cpp's formatUint, format_float.cpp). Internal to the
// SDK library.
#pragma once

#include <array>
#include <cstddef>

namespace rowprobe::detail {

inline constexpr std::array<char, 200> kDigitPairs = [] {
    std::array<char, 200> t{};
    for (std::size_t i = 0; i < 100; ++i) {
        t[2 * i] = static_cast<char>('0' + i / 10);
        t[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
    return t;
}();

}  // namespace rowprobe::detail
