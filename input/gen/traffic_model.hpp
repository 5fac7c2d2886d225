// The synthetic traffic model shared by the `gen` input, rowprobe-tracegen (pcap + truth) and
// bench_cache (the flow table alone). One seed, one option string, the same packets everywhere.
//
//   GenConfig ──▶ TrafficModel::next(GenPacket&)        one packet: flow serial, direction,
//                   │                                    flags, lengths, synthetic timestamp
//                   ├─▶ writeFrame(pkt, dst)  Ethernet + IPv4/IPv6 + TCP/UDP bytes (gen, tracegen)
//                   └─▶ toParsed(pkt, out)    the ParsedPacket the parser would build (bench)
//
// * Flow slots. The model keeps `flows` concurrent flow slots; each holds a flow serial (a
//   dense counter, 0, 1, 2 ...) and the packets sent so far (16 bytes per slot). A packet
//   picks a slot by pattern: deterministic = slot 0; random = uniform; netscan / portscan =
//   round robin; zipf = rank k with probability ∝ 1/k^skew (Hörmann & Derflinger's
//   rejection-inversion sampler: O(1), no table). With packets-per-flow N, a slot whose flow
//   has sent N packets takes the next serial: the old flow never appears again.
// * Tuples are a pure function of (pattern, seed, serial), computed when needed, never stored:
//     random / zipf / deterministic  IPv4 src 10.x.y.z:port from a keyed bijection on 40 bits
//                                    of the serial; IPv6 src fd00::/64 + a keyed bijection on
//                                    64 bits; destination address and port random per flow,
//                                    never inside the source range
//     netscan                        one source; destination address = base + serial
//     portscan                       one address pair; destination port = 1 + serial % 65535
//   Sources and destinations come from disjoint ranges and the source part is injective in the
//   serial, so two serials never share a canonical (direction-free) key: 2^40 IPv4 flows,
//   2^64 IPv6 flows, 2^40 scan targets, 65535 * 65536 scanned ports before any repeat.
// * Direction: a flow's first packet always goes forward (src -> dst), later ones go back with
//   probability `reverse`. TCP flags: SYN first, SYN|ACK on the first reverse packet, ACK
//   otherwise, FIN|ACK on the last packet with `fin`.
// * Time: the k-th packet has ts = start + k / pps (integer nanoseconds, Bresenham stepping),
//   so inactive / active timeouts behave as on a link of that rate.
// * Determinism: only integer arithmetic and two private xoshiro256** streams (slot choice,
//   direction; no std:: distributions, whose output is implementation-defined); the Zipf
//   sampler uses log/exp from libm. Same seed and options -> the same packets, bit for bit, on
//   one build.
//
// Thread ownership: a TrafficModel belongs to one thread. Costs (2.3 GHz KVM guest, 64-byte
// frames, next() + writeFrame): 21 ns per packet for one flow, 47 ns for 1024 random flows,
// 82 ns for 2^20 random flows (their 16 MiB of slots miss the cache). Memory: 16 bytes per flow
// slot plus a 4096-entry tuple cache (~200 KiB), allocated once in the constructor.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "rowprobe/options.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::gen {

enum class Pattern : std::uint8_t { Deterministic, Random, NetScan, PortScan, Zipf };

/// Names as written in option strings ("deterministic", "random", "netscan", "portscan", "zipf").
std::string_view patternName(Pattern p) noexcept;

/// Validated generator settings (see genOptionSpecs for the meaning and bounds of each).
struct GenConfig {
    Pattern pattern = Pattern::Random;
    std::uint64_t flows = 1024;          ///< concurrent flow slots (1 for deterministic)
    std::uint64_t packets = 10'000'000;  ///< packets in total; 0 = no limit
    TimeNs duration = 0;                 ///< packet time in total; 0 = no limit
    std::uint64_t packetsPerFlow = 0;    ///< 0 = a flow lives until the end
    std::uint32_t size = 64;        ///< frame length without FCS, raised to the headers' length
    std::uint32_t snaplen = 65535;  ///< bytes of each frame written (never cuts headers)
    std::uint64_t seed = 1;
    double tcpShare = 0.5;          ///< share of flows that are TCP (the rest UDP)
    double ipv6Share = 0.0;         ///< share of flows that are IPv6
    double reverseShare = 0.0;      ///< share of later packets sent dst -> src
    double skew = 1.0;              ///< Zipf exponent
    std::uint64_t pps = 1'000'000;  ///< packet-time rate
    TimeNs start = 1'700'000'000ULL * kNsPerSec;
    bool fin = false;  ///< TCP flows end with FIN|ACK at packetsPerFlow
};

/// The option table of the `gen` input (also accepted by rowprobe-tracegen and bench_cache).
std::span<const OptionSpec> genOptionSpecs() noexcept;

/// Reads and cross-checks the options; throws ConfigError naming the option and the bounds.
GenConfig parseGenConfig(const Options& options);

/// Parses "pattern=zipf;flows=1000" (optionally prefixed "gen;") against genOptionSpecs, for
/// tools. Throws ConfigError naming `flag`.
GenConfig parseGenString(std::string_view text, std::string_view flag);

/// A flow's addresses and ports, oriented as the flow was opened (src sent the first packet).
/// IPv4 addresses use the first 4 bytes of the arrays.
struct FlowTuple {
    std::array<std::uint8_t, 16> src{};
    std::array<std::uint8_t, 16> dst{};
    std::uint16_t srcPort = 0;
    std::uint16_t dstPort = 0;
    std::uint8_t proto = 0;      ///< 6 (TCP) or 17 (UDP)
    std::uint8_t ipVersion = 4;  ///< 4 or 6
};

/// One generated packet.
struct GenPacket {
    FlowTuple tuple;
    std::uint64_t serial = 0;  ///< flow serial (unique per flow of one model)
    TimeNs ts = 0;
    std::uint32_t frameLen = 0;  ///< wire length of the frame (no FCS)
    std::uint32_t capLen = 0;    ///< bytes writeFrame writes (frameLen cut to snaplen)
    std::uint32_t index = 0;     ///< 0-based packet number within the flow
    std::uint8_t tcpFlags = 0;   ///< 0 for UDP
    bool forward = true;         ///< src -> dst of `tuple`
    bool last = false;           ///< the flow reached packetsPerFlow with this packet

    std::uint32_t ipLen() const noexcept { return frameLen - kEthHeaderLen; }
    static constexpr std::uint32_t kEthHeaderLen = 14;
};

/// Length of the Ethernet + IP + transport headers of a packet of `tuple`.
constexpr std::uint32_t headerLength(const FlowTuple& t) noexcept {
    return GenPacket::kEthHeaderLen + (t.ipVersion == 6 ? 40U : 20U) + (t.proto == 6 ? 20U : 8U);
}

/// Writes the frame of `pkt` (pkt.capLen bytes) at `dst`: Ethernet (locally administered MACs
/// 02:00:00:00:00:01 / :02), IPv4 with header checksum and DF or IPv6, TCP or UDP with a valid
/// checksum over a zero payload. Returns pkt.capLen. No allocation, no per-packet branch on
/// the layout beyond one dispatch over (IPv4/IPv6, TCP/UDP); the payload is zeroed.
std::uint32_t writeFrame(const GenPacket& pkt, std::uint8_t* dst) noexcept;

/// Fills `out` exactly as parsePacket would for writeFrame's frame (Ethernet link, VLAN 0),
/// except that out.frame is null. Used by benchmarks that bypass frames and the parser.
void toParsed(const GenPacket& pkt, ParsedPacket& out) noexcept;

/// The tuple of flow `serial` under `config` (what next() reports for that flow).
FlowTuple flowTuple(const GenConfig& config, std::uint64_t serial) noexcept;

/// Keys of the tuple functions for a seed (flowTuple derives them on every call; the model once).
struct TupleKeys {
    std::uint64_t perm = 0;
    std::uint64_t attr = 0;
};
TupleKeys tupleKeys(std::uint64_t seed) noexcept;
FlowTuple flowTuple(const GenConfig& config, const TupleKeys& keys, std::uint64_t serial) noexcept;

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64. Fixed output on every platform.
class Xoshiro256 {
public:
    explicit Xoshiro256(std::uint64_t seed) noexcept;
    std::uint64_t next() noexcept {
        const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const std::uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }
    /// Uniform in [0, n) (Lemire's multiply-high; bias < n / 2^64).
    std::uint64_t below(std::uint64_t n) noexcept {
        __extension__ using U128 = unsigned __int128;
        return static_cast<std::uint64_t>((static_cast<U128>(next()) * n) >> 64);
    }
    /// Uniform in [0, 1) with 53 random bits.
    double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }
    std::array<std::uint64_t, 4> m_s{};
};

/// Zipf over ranks 1..n with exponent s > 0 by rejection-inversion (W. Hörmann, G. Derflinger,
/// "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS
/// 1996; as in Apache Commons RNG). O(1) per sample, about 1.1 PRNG draws on average.
class ZipfSampler {
public:
    ZipfSampler(std::uint64_t n, double s) noexcept;
    std::uint64_t sample(Xoshiro256& rng) const noexcept;  ///< a rank in [1, n]

private:
    double h(double x) const noexcept { return std::exp(-m_s * std::log(x)); }
    double hIntegral(double x) const noexcept;
    double hIntegralInverse(double x) const noexcept;

    double m_n;
    double m_s;
    double m_hIntegralX1;
    double m_hIntegralN;
    double m_cut;
};

/// The packet source. Construct once (allocates the flow slots), then call next() per packet.
class TrafficModel {
public:
    explicit TrafficModel(const GenConfig& config);

    /// The next packet, or false when `packets` or `duration` is reached.
    bool next(GenPacket& out) noexcept;

    const GenConfig& config() const noexcept { return m_config; }
    /// Packets produced so far.
    std::uint64_t emitted() const noexcept { return m_emitted; }
    /// Flow serials handed out so far (flows that may have appeared).
    std::uint64_t serialsUsed() const noexcept { return m_nextSerial; }

private:
    struct Slot {
        std::uint64_t serial = 0;
        std::uint32_t sent = 0;
        std::uint32_t sentReverse = 0;
    };
    /// Slots are chosen kAhead packets in advance (the choice never depends on slot state), so
    /// the slot of a later packet is prefetched while this one is built: with 2^20 flows the
    /// slot array (16 MiB) does not stay in cache.
    static constexpr std::size_t kAhead = 16;
    std::size_t pickSlot() noexcept;

    /// Tuples of recent serials, direct-mapped (a hit saves the ~15 ns of flowTuple): one
    /// deterministic flow or the popular Zipf ranks always hit, uniform 2^20 flows mostly miss.
    static constexpr std::size_t kTupleCache = 4096;
    struct CachedTuple {
        std::uint64_t serial = 0;
        FlowTuple tuple;
    };

    GenConfig m_config;
    TupleKeys m_keys;      ///< derived from the seed once
    Xoshiro256 m_pickRng;  ///< slot choice
    Xoshiro256 m_dirRng;   ///< packet direction
    ZipfSampler m_zipf;
    std::vector<Slot> m_slots;
    std::unique_ptr<CachedTuple[]> m_tupleCache;
    std::array<std::size_t, kAhead> m_ahead{};
    std::size_t m_aheadPos = 0;
    std::size_t m_roundRobin = 0;
    std::uint64_t m_nextSerial = 0;
    std::uint64_t m_emitted = 0;
    std::uint64_t m_limit = 0;  ///< packets, or UINT64_MAX
    TimeNs m_endTs = 0;         ///< start + duration, or UINT64_MAX
    TimeNs m_ts = 0;
    TimeNs m_stepNs = 0;          ///< 1e9 / pps, integer part
    std::uint64_t m_stepRem = 0;  ///< 1e9 % pps
    std::uint64_t m_acc = 0;      ///< Bresenham accumulator of the remainders
};

}  // namespace rowprobe::gen
