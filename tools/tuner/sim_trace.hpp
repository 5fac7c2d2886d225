// The packet sequence the tuner evaluates candidates on, and its compact file form.
//
//   capture ──lab::loadCapture──▶ per packet: ts, table hash of the canonical key, key id,
//                                 adaptive class, TCP flags, direction, block boundaries
//   compact trace file (--extract), 16 bytes per packet, little-endian:
//     header (64 B): "RPTRACE1" | u64 packets | u64 seed | u64 tsBase | char hash[16] |
//                    u8 classifier | u8[15] zero
//     record (16 B): u64 w0 = ts - tsBase (bits 0-47) | TCP flags (48-55) | fromA (56)
//                             | ends a block of 64 frames (57) | empty blocks after it (58-63)
//                    u64 w1 = table hash (bits 0-55) | class (56-63)
//
// What the compact form keeps and loses. It keeps everything the `adaptive` table's behaviour
// depends on: the row (low hash bits: rows <= 2^56), packet time, class, the TCP flags and
// direction of the flow-end rules, and the batch boundaries that drive the expiry sweep — so a
// replay of the compact trace gives the same counters as the capture. It loses the keys:
// identity becomes the 56-bit hash (two of 10^6 flows collide with probability ~7e-6), and the
// hash function and seed are fixed at extraction (recorded in the header). Traces longer than
// 2^48 ns (3.2 days) cannot be extracted.
//
// Thread ownership: built once, read by every evaluation thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaptive_config.hpp"
#include "trace.hpp"

namespace rowprobe::tuner {

struct SimPacket {
    TimeNs ts = 0;
    std::uint64_t hash = 0;  ///< the table's hash (only the low 56 bits from a compact file)
    std::uint32_t key = 0;   ///< dense key id
    std::uint8_t cls = 0;    ///< PacketClass under `classifier`
    std::uint8_t tcpFlags = 0;
    bool fromA = true;
};

struct SimTrace {
    std::string source;
    std::string hash = "xxh3";  ///< hash function of SimPacket::hash
    std::uint64_t seed = 1;     ///< its seed
    storage::AdaptiveClassifier classifier = storage::AdaptiveClassifier::None;
    std::vector<SimPacket> packets;
    std::vector<std::uint32_t> blockEnds;  ///< as lab::Trace::blockEnds
    std::uint32_t keys = 0;
};

/// From a decoded capture: hashes every key with `hash` and `seed` (throws std::runtime_error
/// for an unknown hash) and classifies every packet with `classifier`.
SimTrace fromCapture(const lab::Trace& trace, const std::string& hash, std::uint64_t seed,
                     storage::AdaptiveClassifier classifier);

/// Writes / reads the compact form. Throw std::runtime_error naming the file.
void writeCompact(const SimTrace& trace, const std::string& path);
SimTrace readCompact(const std::string& path);

/// True when `path` starts with the compact trace magic.
bool isCompact(const std::string& path);

/// Sessions (flow boundaries of an unbounded table) of the trace.
lab::Sessions sessionsOf(const SimTrace& trace, TimeNs inactive, TimeNs active);

}  // namespace rowprobe::tuner
