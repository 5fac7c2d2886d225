// Helpers for the protocol-parser tests: byte spans from text, and exact-size heap copies so
// that a read past a (truncated) payload is caught by AddressSanitizer in sanitized builds.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace rowprobe::test {

inline std::span<const std::uint8_t> bytesOf(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

inline std::vector<std::uint8_t> vecOf(std::string_view s) { return {s.begin(), s.end()}; }

/// Calls f(span) with every prefix of `msg` (0 .. size bytes), each in its own exact-size buffer.
template <class F>
void forEachPrefix(const std::vector<std::uint8_t>& msg, F&& f) {
    for (std::size_t n = 0; n <= msg.size(); ++n) {
        const std::vector<std::uint8_t> cut(msg.begin(), msg.begin() + static_cast<long>(n));
        f(std::span<const std::uint8_t>(cut.data(), cut.size()));
    }
}

/// Calls f(span) with `rounds` random mutations of `msg` (bytes overwritten, cut, extended).
template <class F>
void forEachMutation(const std::vector<std::uint8_t>& msg, int rounds, F&& f) {
    std::mt19937 rng(2026);
    for (int i = 0; i < rounds; ++i) {
        std::vector<std::uint8_t> m = msg;
        const int edits = 1 + static_cast<int>(rng() % 8);
        for (int e = 0; e < edits && !m.empty(); ++e)
            m[rng() % m.size()] = static_cast<std::uint8_t>(rng());
        if (rng() % 3 == 0 && !m.empty()) m.resize(rng() % m.size());
        if (rng() % 5 == 0) m.resize(m.size() + rng() % 16, static_cast<std::uint8_t>(rng()));
        f(std::span<const std::uint8_t>(m.data(), m.size()));
    }
}

}  // namespace rowprobe::test
