// The ssadetector plugin's per-flow record (tier-2, taken at the flow's 30th packet): it looks
// for TCP handshakes carried inside the flow — a tunnel or VPN shows them as "SYN, SYN-ACK,
// ACK"-sized packets (60-150 bytes of payload) going back and forth within 3 seconds — and at
// export turns the count of such triples ("suspects") into a confidence: ipfixprobe 5.7's
// ssaDetector (SSA = SYN, SYN-ACK, ACK).
//
//   each packet from the 30th on, payload length len in [60, 150], direction d:
//     a packet of the other direction, length in [len - 12, len], within 3 s in `seen`?
//         yes: a suspect — remember len (first 100), clear `seen`
//         no:  seen[len][d] = now
//   export (more than 30 packets): possible VPN (1) when suspects ≥ 3, packets/suspects ≤ 2500
//     and the suspects' distinct lengths / suspects ≤ 0.6 (< 15 suspects), 0.4 (< 40), else 0.2
//
// ipfixprobe also keeps a second table ("SYN-ACK" times, filled when a packet matches the
// `seen` table within 10 lengths) that nothing ever reads; it has no effect on the output and is
// left out. Times are µs; an entry of 0 was never set.
#pragma once

#include <array>
#include <cstdint>

namespace rowprobe::ssadetector {

inline constexpr std::uint32_t kMinPackets = 30;  ///< flows of at most this many: no instance
inline constexpr std::uint16_t kMinLen = 60;
inline constexpr std::uint16_t kMaxLen = 150;
inline constexpr std::size_t kLengths = kMaxLen - kMinLen + 1;
inline constexpr std::size_t kMaxSamples = 100;

struct SsaRecord {
    std::array<std::array<std::int64_t, 2>, kLengths> seen;  ///< [len - 60][direction] time, µs
    std::uint64_t suspects;
    std::array<std::uint8_t, kMaxSamples> samples;  ///< the suspects' lengths (first 100)
    std::uint8_t sampleCount;
    std::uint8_t confidence;  ///< set by ssaFinalise
};

/// One packet of the flow (`reverse`: it goes responder → initiator), `payloadLen` its
/// captured payload, `timeUs` its time.
void ssaUpdate(SsaRecord& r, bool reverse, std::uint16_t payloadLen, std::int64_t timeUs) noexcept;

/// The confidence (0 or 1) for a flow of `packets` packets; also stored in r.confidence.
std::uint8_t ssaFinalise(SsaRecord& r, std::uint64_t packets) noexcept;

}  // namespace rowprobe::ssadetector
