// Reassembly of the client's CRYPTO stream (Initial packet number space) into a bounded buffer,
// until the first handshake message (the ClientHello) is whole.
//
//   CRYPTO frame (offset, data) ──add──▶ buffer[0, kCap) + up to kMaxRanges received ranges
//                                          (merged; bytes beyond kCap are dropped)
//   message()  ──▶ the handshake message [0, 4 + length) once every byte of it has arrived,
//                  else empty
//
// * Frames may come in any order, split over several Initial packets (Chrome's ClientHello with
//   post-quantum key shares spans two or three), repeated (Initial retransmissions carry the
//   same offsets again: the bytes are simply written again) or overlapping.
// * Trivially copyable, no allocation: it lives in a plugin's tier-2 record. A ClientHello
//   longer than kCap - 4 bytes is never complete (the plugin then reports it unparsed).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace rowprobe::quic {

template <std::size_t kCap>
struct CryptoAssembly {
    static constexpr std::size_t kMaxRanges = 8;
    struct Range {
        std::uint16_t begin;
        std::uint16_t end;
    };
    static_assert(kCap <= 0xffff);

    std::array<Range, kMaxRanges> ranges;
    std::uint8_t rangeCount;
    std::array<std::uint8_t, kCap> data;

    void clear() noexcept { rangeCount = 0; }

    /// Adds a CRYPTO frame's bytes. Returns false when nothing of it could be kept (beyond the
    /// buffer, or too many disjoint ranges).
    bool add(std::uint64_t offset, std::span<const std::uint8_t> bytes) noexcept {
        if (offset >= kCap || bytes.empty()) return false;
        const std::size_t len = std::min<std::size_t>(bytes.size(), kCap - offset);
        auto b = static_cast<std::uint16_t>(offset);
        auto e = static_cast<std::uint16_t>(offset + len);
        // merge with every range it touches
        std::uint8_t out = 0;
        std::array<Range, kMaxRanges> kept{};
        for (std::uint8_t i = 0; i < rangeCount; ++i) {
            const Range r = ranges[i];
            if (r.end < b || r.begin > e) {
                kept[out++] = r;
            } else {
                b = std::min(b, r.begin);
                e = std::max(e, r.end);
            }
        }
        if (out == kMaxRanges) return false;
        std::memcpy(data.data() + offset, bytes.data(), len);
        kept[out++] = Range{b, e};
        ranges = kept;
        rangeCount = out;
        return true;
    }

    /// Bytes received contiguously from offset 0.
    std::size_t prefix() const noexcept {
        for (std::uint8_t i = 0; i < rangeCount; ++i)
            if (ranges[i].begin == 0) return ranges[i].end;
        return 0;
    }

    /// The bytes received contiguously from offset 0 (a gQUIC CHLO's length is read from them).
    std::span<const std::uint8_t> received() const noexcept {
        return std::span<const std::uint8_t>(data.data(), prefix());
    }

    /// The first TLS handshake message when all of it has arrived, else an empty span.
    std::span<const std::uint8_t> message() const noexcept {
        const std::size_t have = prefix();
        if (have < 4) return {};
        const std::size_t need =
            4 + (std::size_t{data[1]} << 16 | std::size_t{data[2]} << 8 | data[3]);
        if (need > have) return {};
        return std::span<const std::uint8_t>(data.data(), need);
    }
};

}  // namespace rowprobe::quic
