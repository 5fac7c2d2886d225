// Small pieces several row policies share: ghost fragments and their bounded FIFO, segment
// ratios from options, and order-preserving renormalisation of per-row logical clocks.
//
// * Ghost fragment: 16 bits of a flow's 64-bit hash, bits 32..47. The row index comes from the
//   low bits and the tag from the top 8, so the fragment is independent of both: two flows of
//   one row share a fragment with probability 2^-16. A ghost is a hint (a false match promotes a
//   new flow early), never an identity.
// * GhostFifo<N>: at most N fragments, oldest first; push drops the oldest when `cap` is reached;
//   take removes a match. N <= 8, so the linear scans are a handful of compares on the row line.
// * Logical clocks: policies that order by "time of last access" use a per-row counter bumped on
//   every access of that row. Before it would wrap, renormalise() replaces every live stamp by
//   its rank (an order-preserving map), so comparisons stay exact forever; amortised cost nil.
//
// Thread ownership: plain data inside RowState / SlotMeta, touched by the row's owner only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rowprobe/options.hpp"

namespace rowprobe::storage::policy {

/// The ghost fragment of a flow hash (bits 32..47).
constexpr std::uint16_t ghostFragment(std::uint64_t hash) noexcept {
    return static_cast<std::uint16_t>(hash >> 32);
}

/// A bounded FIFO of ghost fragments (oldest at index 0).
template <unsigned N>
struct GhostFifo {
    std::array<std::uint16_t, N> frag{};
    std::uint8_t count = 0;

    /// Appends `f`, dropping the oldest entry when `cap` (<= N) entries are held.
    constexpr void push(std::uint16_t f, unsigned cap) noexcept {
        if (cap == 0) return;
        if (count >= cap) {
            for (unsigned i = 1; i < count; ++i) frag[i - 1] = frag[i];
            --count;
        }
        frag[count++] = f;
    }
    /// Removes the oldest entry equal to `f`; true if there was one.
    constexpr bool take(std::uint16_t f) noexcept {
        for (unsigned i = 0; i < count; ++i) {
            if (frag[i] == f) {
                for (unsigned j = i + 1; j < count; ++j) frag[j - 1] = frag[j];
                --count;
                return true;
            }
        }
        return false;
    }
};

/// Reads option `name` as `parts` positive integers separated by ':' ("1:2:1"). Throws
/// ConfigError naming the option, with `what` describing the parts.
inline std::vector<unsigned> parseRatio(const Options& options, std::string_view name,
                                        std::size_t parts, std::string_view what) {
    const std::string text = options.getString(name);
    std::vector<unsigned> out;
    std::size_t start = 0;
    bool ok = true;
    while (ok) {
        const std::size_t end = text.find(':', start);
        const std::string item =
            text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        ok = !item.empty() && item.size() <= 4 &&
             std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (ok) out.push_back(static_cast<unsigned>(std::stoul(item)));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    ok = ok && out.size() == parts &&
         std::all_of(out.begin(), out.end(), [](unsigned v) { return v > 0; });
    if (!ok) {
        options.fail(name, "must be " + std::to_string(parts) +
                               " positive integers separated by ':' (" + std::string(what) +
                               "), got '" + text + "'");
    }
    return out;
}

/// Splits `line` slots in proportion to `ratio`, every part at least `minPart`, summing to
/// `line` (largest remainders first; ties to the earlier part).
inline std::vector<unsigned> splitSlots(unsigned line, const std::vector<unsigned>& ratio,
                                        unsigned minPart) {
    unsigned total = 0;
    for (unsigned r : ratio) total += r;
    std::vector<unsigned> out(ratio.size());
    unsigned used = 0;
    for (std::size_t i = 0; i < ratio.size(); ++i) {
        out[i] = std::max(minPart, line * ratio[i] / total);
        used += out[i];
    }
    for (std::size_t i = 0; used < line; i = (i + 1) % out.size(), ++used) ++out[i];
    for (std::size_t i = 0; used > line; i = (i + 1) % out.size()) {
        if (out[i] > minPart) {
            --out[i];
            --used;
        }
    }
    return out;
}

/// Order-preserving compaction of logical-clock stamps: every value in `stamps` (pointers to
/// the live stamps, all non-zero) is replaced by 1 + the number of distinct smaller values.
/// Returns the largest new value (the clock continues from there).
template <class T, std::size_t N>
std::uint32_t renormalise(const std::array<T*, N>& stamps, std::size_t count) noexcept {
    std::array<std::pair<T, std::uint8_t>, N> byValue{};
    for (std::size_t i = 0; i < count; ++i) byValue[i] = {*stamps[i], static_cast<std::uint8_t>(i)};
    std::sort(byValue.begin(), byValue.begin() + static_cast<std::ptrdiff_t>(count));
    std::uint32_t rank = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (i == 0 || byValue[i].first != byValue[i - 1].first) ++rank;
        *stamps[byValue[i].second] = static_cast<T>(rank);
    }
    return rank;
}

}  // namespace rowprobe::storage::policy
