// NetTiSA flow statistics (Koumar et al., "NetTiSA: Extended IP Flow with Time-series Features
// for Universal Bandwidth-constrained High-speed Network Traffic Classification") as ipfixprobe
// 5.7's nettisa plugin computes them: running sums over every packet's payload length (on the
// wire, after the TCP/UDP header) and arrival time (µs), finalised when the flow is exported.
//
//   every packet (the flow's n counted packets, this one included):
//     mean += (len - mean) / n              min, max of len
//     sum of len, of len², of |len - mean_before|, of (len - mean_before)^4
//     gap = t - t_prev (0 for the first)    mean_gap += (gap - mean_gap) / n; min, max of gap
//     mean_scaled_time += (t - t_first - mean_scaled_time) / n
//     time_distribution += |mean_gap - gap|
//     switching += 1 when the frame length differs from the previous frame's
//   export (n ≥ 2; a one-packet flow gets no instance):
//     stdev = sqrt(sum_len² / n - (sum_len / n)²)     (sum_len / n in integers)
//     kurtosis = sum_dev4 / (n · stdev⁴), 0 when stdev = 0
//     rms = sqrt(sum_len² / n)   average_dispersion = sum_|dev| / n   switching /= n
//     time_distribution = time_distribution / (n - 1) / (max_gap - min_len)
//
// The arithmetic is ipfixprobe's, float for float: single-precision accumulators, the double
// intermediates its expressions produce, the integer division in stdev, and min_len (not
// min_gap) in time_distribution's denominator — so the values agree with its output to float
// precision. State: 72 bytes.
#pragma once

#include <cstdint>

namespace rowprobe::nettisa {

struct NettisaState {
    float mean;
    float kurtosis;           ///< sum of (len - mean)^4 until finalised
    float rootMeanSquare;     ///< sum of len² until finalised
    float averageDispersion;  ///< sum of |len - mean| until finalised
    float meanScaledTime;
    float meanDifftimes;
    float minDifftimes;
    float maxDifftimes;
    float timeDistribution;
    float switchingRatio;  ///< switch count until finalised
    float stdev;
    std::uint64_t prevTime;  ///< previous packet's time, µs
    std::uint64_t sumPayload;
    std::uint16_t min;
    std::uint16_t max;
    std::uint16_t prevFrameLen;
    bool started;
    bool finalised;
};
static_assert(sizeof(NettisaState) <= 72);

/// One packet: `payloadLen` (on the wire, after the TCP/UDP header), `frameLen` (frame on the
/// wire), `timeUs` its time and `firstUs` the flow's first packet's time (µs), `n` the packets
/// counted so far including this one.
void nettisaUpdate(NettisaState& s, std::uint16_t payloadLen, std::uint16_t frameLen,
                   std::uint64_t timeUs, std::uint64_t firstUs, std::uint32_t n) noexcept;

/// At export of a flow of `n` packets: the final values in place. Returns false for n < 2
/// (ipfixprobe drops the extension of one-packet flows).
bool nettisaFinalise(NettisaState& s, std::uint32_t n) noexcept;

}  // namespace rowprobe::nettisa
