#include "process/ssadetector/ssadetector_record.hpp"

#include <algorithm>

namespace rowprobe::ssadetector {

namespace {

constexpr std::int64_t kWindowUs = 3'000'000;
constexpr std::size_t kLookBack = 12;  // lengths below this one that still match
constexpr std::uint64_t kMinSuspects = 3;
constexpr double kMaxPacketsPerSuspect = 2500;

// Distinct lengths among the samples / their count.
double classesRatio(const SsaRecord& r) noexcept {
    std::array<bool, 256> seen{};
    unsigned distinct = 0;
    for (std::size_t i = 0; i < r.sampleCount; ++i) {
        if (!seen[r.samples[i]]) {
            seen[r.samples[i]] = true;
            ++distinct;
        }
    }
    return static_cast<double>(distinct) / static_cast<double>(r.sampleCount);
}

}  // namespace

void ssaUpdate(SsaRecord& r, bool reverse, std::uint16_t payloadLen, std::int64_t timeUs) noexcept {
    if (payloadLen < kMinLen || payloadLen > kMaxLen) return;
    const std::size_t idx = payloadLen - kMinLen;
    const std::size_t dir = reverse ? 1 : 0;
    const std::size_t other = 1 - dir;
    for (std::size_t i = idx >= kLookBack ? idx - kLookBack : 0; i <= idx; ++i) {
        if (timeUs - r.seen[i][other] <= kWindowUs) {  // never set (0): far outside the window
            r.seen = {};
            if (r.sampleCount < kMaxSamples)
                r.samples[r.sampleCount++] = static_cast<std::uint8_t>(payloadLen);
            ++r.suspects;
            return;
        }
    }
    r.seen[idx][dir] = timeUs;
}

std::uint8_t ssaFinalise(SsaRecord& r, std::uint64_t packets) noexcept {
    r.confidence = 0;
    const std::uint64_t s = r.suspects;
    if (s < kMinSuspects || r.sampleCount == 0) return 0;
    if (static_cast<double>(packets) / static_cast<double>(s) > kMaxPacketsPerSuspect) return 0;
    const double maxRatio = s < 15 ? 0.6 : s < 40 ? 0.4 : 0.2;
    if (classesRatio(r) > maxRatio) return 0;
    r.confidence = 1;
    return 1;
}

}  // namespace rowprobe::ssadetector
