// The `adaptive` row policy's configuration: the position table (docs/policies.md), its
// versioned text file, validation, and the packet classes it keys on. A small unit shared by
// the policy (storage/policies/adaptive.cpp) and the offline tuner (tools/), which writes the
// files the policy loads: link the static library rp_adaptive_config.
//
// File format (text, '#' starts a comment, blank lines ignored, keys in any order once each):
//
//   rowprobe-adaptive 1                 version line, first
//   line 16                             L, must equal the table's `line`
//   tuples 2:0:0 2:1:0 1:2:0 3:4:1 ...   tuples count:target:increment, Σcount = L (the tuner
//                                       and the thesis use L/4 tuples; 1..L are accepted)
//   insert 8 8 8 8                      insert position per class SHORT MEDIUM LONG NEVER
//   offsets 0 0 0 0                     signed per-class offsets, non-decreasing, in [-L/2, L/2]
//   classifier none                     or j48-v1
//   fitness 12345                       optional: forced evictions measured by the tuner
//
// Semantics. The tuples unpack into T[p] for p < L: a tuple covers `count` consecutive
// positions with `target` (or target, target+1, ... when `increment` is 1). A hit at position p
// of a packet of class c moves the flow to
//     hitTo[c][p] = min(p, clamp(T[p] + offset[c], 0, L-1))
// A new flow in a full row enters at insert[c]. All targets 0 with insert L/2 is ipfixprobe's
// LRU (the built-in default when no file is given).
//
// Validity (checked on load, and by the tuner after each mutation): Σcount = L; the first tuple
// targets 0; targets never decrease along p (an incrementing tuple raises the next minimum);
// each later tuple's target is at most (positions covered by earlier tuples) - 1, so T[p] <= p
// and a hit never moves a flow backwards; insert positions in [0, L-1]; offsets in
// [-L/2, L/2] with SHORT <= MEDIUM <= LONG <= NEVER.
//
// Errors are ConfigError naming the file and the line: "adaptive.cfg:3: ...".
// Thread ownership: plain values, built at start-up; classifyPacket is pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe::storage {

/// Packet-distance classes (a J48-style classifier's): how soon the flow's next packet comes.
enum class PacketClass : std::uint8_t { Short, Medium, Long, Never };
inline constexpr std::size_t kPacketClassCount = 4;

/// The packet-header classifier a configuration was tuned with.
enum class AdaptiveClassifier : std::uint8_t {
    None,   ///< every packet is SHORT (offsets[0] and insert[0] apply)
    J48v1,  ///< the header tree of classifyPacket (protocol, TCP flags, window, IP length)
};

struct AdaptiveTuple {
    unsigned count = 0;
    unsigned target = 0;
    bool increment = false;
    friend bool operator==(const AdaptiveTuple&, const AdaptiveTuple&) = default;
};

struct AdaptiveConfig {
    unsigned line = 16;
    std::vector<AdaptiveTuple> tuples;  ///< 1..line of them (the tuner writes line / 4)
    std::array<unsigned, kPacketClassCount> insert{};
    std::array<int, kPacketClassCount> offsets{};
    AdaptiveClassifier classifier = AdaptiveClassifier::None;
    std::optional<std::uint64_t> fitness;  ///< metadata only

    friend bool operator==(const AdaptiveConfig&, const AdaptiveConfig&) = default;

    /// ipfixprobe's LRU for `line`: all targets 0 (L/4 tuples of 4), insert L/2, offsets 0.
    static AdaptiveConfig lruEquivalent(unsigned line);

    /// T[p] for p < line (meaningful only for a valid configuration).
    std::vector<unsigned> targets() const;
    /// Empty when valid, else what is wrong ("tuple 3 targets 9, beyond ...").
    std::string validate() const;
    /// Which file line a validate() problem belongs to: "tuples", "insert" or "offsets".
    static std::string_view keyOf(std::string_view problem);
};

/// Parses a configuration; `fileName` only labels errors. Throws ConfigError (component
/// "storage 'cache'", option "adaptive-config") with "FILE:LINE: problem".
AdaptiveConfig parseAdaptiveConfig(std::string_view text, std::string_view fileName);

/// Reads and parses `path`; also checks that the configuration is for `line` slots (0 = any).
AdaptiveConfig loadAdaptiveConfig(const std::string& path, unsigned line);

/// The file text for `config` (what the tuner writes); parseAdaptiveConfig reads it back equal.
std::string formatAdaptiveConfig(const AdaptiveConfig& config);

std::string_view classifierName(AdaptiveClassifier c) noexcept;

/// The class of one packet under classifier `c` (pure; identical in the policy and the tuner).
PacketClass classifyPacket(AdaptiveClassifier c, const ParsedPacket& packet) noexcept;

}  // namespace rowprobe::storage
