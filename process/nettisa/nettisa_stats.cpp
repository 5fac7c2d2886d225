#include "process/nettisa/nettisa_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rowprobe::nettisa {

void nettisaUpdate(NettisaState& s, std::uint16_t payloadLen, std::uint16_t frameLen,
                   std::uint64_t timeUs, std::uint64_t firstUs, std::uint32_t n) noexcept {
    if (!s.started) {  // ipfixprobe's constructor values, the previous time = this packet's
        s.min = std::numeric_limits<std::uint16_t>::max();
        s.minDifftimes = std::numeric_limits<float>::max();
        s.prevTime = timeUs;
        s.started = true;
    }
    if (n == 0) return;
    const float variation = static_cast<float>(payloadLen) - s.mean;
    // uint64 difference (wraps for a packet older than the previous one, as in ipfixprobe)
    const auto diff = static_cast<float>(std::fmax(static_cast<double>(timeUs - s.prevTime), 0.0));
    s.sumPayload += payloadLen;
    s.prevTime = timeUs;
    s.mean += variation / static_cast<float>(n);
    s.min = std::min(s.min, payloadLen);
    s.max = std::max(s.max, payloadLen);
    s.rootMeanSquare = static_cast<float>(static_cast<double>(s.rootMeanSquare) +
                                          static_cast<double>(payloadLen) * payloadLen);
    s.averageDispersion += std::abs(variation);
    // pow(v, 4) without the libm call: v² is exact in double (a float has 24 bits), so v²·v²
    // is the exact v⁴ rounded once, the value pow returns.
    const double v2 = static_cast<double>(variation) * static_cast<double>(variation);
    s.kurtosis = static_cast<float>(static_cast<double>(s.kurtosis) + v2 * v2);
    s.meanScaledTime +=
        (static_cast<float>(timeUs - firstUs) - s.meanScaledTime) / static_cast<float>(n);
    s.meanDifftimes += (diff - s.meanDifftimes) / static_cast<float>(n);
    s.minDifftimes = std::fmin(s.minDifftimes, diff);
    s.maxDifftimes = std::fmax(s.maxDifftimes, diff);
    s.timeDistribution += std::abs(s.meanDifftimes - diff);
    if (s.prevFrameLen != frameLen) {
        s.switchingRatio += 1;
        s.prevFrameLen = frameLen;
    }
}

bool nettisaFinalise(NettisaState& s, std::uint32_t n) noexcept {
    if (n < 2) return false;
    if (s.finalised) return true;
    const auto nf = static_cast<float>(n);
    s.switchingRatio /= nf;
    // ipfixprobe divides the sums as integers here
    const auto meanInt =
        static_cast<double>(s.sumPayload / n);  // NOLINT(bugprone-integer-division)
    s.stdev = static_cast<float>(
        std::pow(static_cast<double>(s.rootMeanSquare / nf) - std::pow(meanInt, 2), 0.5));
    if (s.stdev == 0) {
        s.kurtosis = 0;
    } else {
        s.kurtosis = static_cast<float>(
            static_cast<double>(s.kurtosis) /
            (static_cast<double>(n) * std::pow(static_cast<double>(s.stdev), 4)));
    }
    s.timeDistribution = (s.timeDistribution / static_cast<float>(n - 1)) /
                         (s.maxDifftimes - static_cast<float>(s.min));
    s.rootMeanSquare =
        static_cast<float>(std::pow(static_cast<double>(s.rootMeanSquare / nf), 0.5));
    s.averageDispersion /= nf;
    s.finalised = true;
    return true;
}

}  // namespace rowprobe::nettisa
