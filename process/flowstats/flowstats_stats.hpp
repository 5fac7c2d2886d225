// NFStream 6.6's statistical and early flow features ("post-mortem" statistics and SPLT), as
// its C engine (nfstream/engine/lib_engine.c) and its Python sync (nfstream/flow.py) compute
// them, in one pass over a flow's packets with no allocation.
//
//   per packet (after the accounting mode turned it into a size, below):
//     time      ms = ns / 1e6, truncated (NFStream: tv_sec·1000 + tv_usec/1000)
//     piat      time - the previous packet's time, in the same direction or in both; the first
//               packet of a direction has none. A packet earlier than the flow's latest takes
//               the latest time (NFStream forces arrival order with the capture's latest time;
//               a plugin sees only its flow's)
//     sizes     min, max, and Welford's running mean and M2 per direction and for both
//                 n += 1; d = x - mean; mean += d / n; M2 += d · (x - mean)
//               (no sum of squares: NFStream's own recurrence, operation for operation, in
//               double, so the results are bit-identical to its engine's; compiled with
//               -ffp-contract=off, as -march=native would otherwise fuse M2's multiply-add)
//     piats     the same over the n - 1 gaps of each direction and of both
//     flags     TCP packets with SYN, CWR, ECE, URG, ACK, PSH, RST, FIN, per direction
//     SPLT      direction (0 src→dst, 1 dst→src), size and bidirectional piat of the first N
//               packets (the first piat is 0, gaps capped at 2^31 - 1 ms as the exported
//               int32 column is); export pads to N with -1
//   export (flow.py's sync):
//     stddev of sizes = sqrt(M2 / (n - 1)) for n > 1, else 0 (sample standard deviation)
//     stddev of piats = sqrt(M2 / (n - 2)) for n > 2, else 0 (n - 1 gaps, sample)
//     a direction without packets (or gaps) reports 0 for all of its values
//
// Accounting modes (NFStream's accounting_mode 0-3), from the headers, not the captured bytes:
//   link       the frame's length on the wire (16 bits, as NFStream's raw_size)
//   ip         IPv4 total length; IPv6 payload length + the 40-byte fixed header (what NFStream
//              6.6's wheel reports, measured: its source reads only the payload length)
//   transport  the IP payload after the IP header and IPv6 extension headers, for TCP, UDP,
//              ICMP and ICMPv6; 0 for other protocols
//   payload    the transport payload: after the TCP header (data offset), the UDP header or
//              ICMP's 8 bytes; 0 for other protocols
//
//   volume    (only with the plugin's `basic` columns) the time of each series' first packet
//               (ms, as above) and the bytes (sizes summed) of each direction: NFStream's
//               *_first_seen_ms and *_bytes; its *_last_seen_ms are the series' lastMs and its
//               *_packets their packet counts
//
// Memory: FlowStats is 256 bytes (four cache lines: both-directions line, then 96 bytes per
// direction); with `basic` a 40-byte Volume follows it; then the SPLT entries, 6 bytes per
// packet of N (piat in 31 bits with the direction bit, size u16), written only up to the
// packets seen. With N = 10 the record is 316 bytes: five lines in the pool (320-byte slots),
// where 8-byte entries made it 336 and six lines.
//
// Short flows in one line (Record, addPacket): a flow's first kPendingPackets (9) packets are
// kept as they came, in a Pending that overlays FlowStats' first line: the latest time and,
// per packet, its gap since the previous one (23 bits of ms), TCP flags, direction and size,
// 6 bytes. A packet of such a flow writes that one line, not the four to five of the running
// statistics, SPLT entry and Volume (most flows are short: on the 1 M-flow benchmark capture
// every flow has 7 packets). The flow's tier-1 state byte says which form its record is in.
// The 10th packet (or a gap of 2^23 ms, 2.3 hours, or more) replays the buffered packets into
// the statistics, with their exact times in ms, then adds itself. The replay runs each series'
// recurrence over that series' packets in order: the same operations on the same values as
// add() packet by packet, so the statistics are bit-identical (the six series' chains of
// divisions then overlap). A flow exported while still short is replayed into scratch copies.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "rowprobe/packet.hpp"

namespace rowprobe::flowstats {

/// NFStream's accounting_mode values.
enum class Accounting : std::uint8_t { Link = 0, Ip = 1, Transport = 2, Payload = 3 };

/// The largest SPLT length (NFStream's splt_analysis is a uint16 but the N is up to 255).
inline constexpr std::size_t kMaxSplt = 255;

/// The packet's size under `mode` (16 bits, as NFStream keeps it).
std::uint16_t packetSize(const ParsedPacket& p, Accounting mode) noexcept;

/// True for packets NFStream does not meter: IPv4 fragments after the first.
bool skippedByNfstream(const ParsedPacket& p) noexcept;

/// Welford's running mean and sum of squared deviations of `n` values.
struct Running {
    double mean;
    double m2;
};

/// Sizes and gaps of one direction (or of both).
struct Series {
    Running ps;
    Running piat;
    std::uint64_t minPiat;
    std::uint64_t maxPiat;
    std::uint64_t lastMs;  ///< time of the previous packet, ms
    std::uint32_t packets;
    std::uint16_t minPs;
    std::uint16_t maxPs;
};
static_assert(sizeof(Series) == 64);

/// One direction: its series and its TCP flag counts (SYN, CWR, ECE, URG, ACK, PSH, RST, FIN).
struct Direction {
    Series s;
    std::array<std::uint32_t, 8> flags;
};
static_assert(sizeof(Direction) == 96);

/// Index of each flag in Direction::flags (NFStream's column order) and its TCP header bit.
inline constexpr std::array<std::uint8_t, 8> kFlagBits = {0x02, 0x80, 0x40, 0x20,
                                                          0x10, 0x08, 0x04, 0x01};

/// One SPLT packet in 6 bytes (a record of ten, with the statistics, fits five cache lines):
/// the gap since the flow's previous packet in the low 31 bits of `gap` (capped at 2^31 - 1 ms,
/// 24.8 days, which is where the exported int32 column stops anyway) and the direction in its
/// top bit, then the size. Packed: the 4-byte word is read and written unaligned.
struct [[gnu::packed]] SpltEntry {
    std::uint32_t gap;  ///< piat ms (31 bits) | direction << 31
    std::uint16_t ps;

    static constexpr std::uint32_t kMaxPiat = 0x7FFFFFFFU;
    std::uint32_t piat() const noexcept { return gap & kMaxPiat; }
    std::uint8_t direction() const noexcept { return static_cast<std::uint8_t>(gap >> 31); }
    void set(std::uint64_t piatMs, std::uint16_t size, bool reverse) noexcept {
        gap = static_cast<std::uint32_t>(std::min<std::uint64_t>(piatMs, kMaxPiat)) |
              (reverse ? 0x80000000U : 0U);
        ps = size;
    }
};
static_assert(sizeof(SpltEntry) == 6);

/// Where a flow's SPLT entries live (in its tier-2 record, after FlowStats); capacity 0 = off.
struct SpltView {
    SpltEntry* entries = nullptr;
    std::size_t capacity = 0;
};

/// A flow's running statistics. Zero-initialised by `start`, updated by `add`.
struct FlowStats {
    Series both;
    std::array<Direction, 2> dir;  ///< [0] src→dst (the flow's first packet's sender), [1] back
};
static_assert(sizeof(FlowStats) == 256);

/// First-packet times and byte counts (NFStream's basic columns), kept only when they are
/// exported. Written by `add` before it is read, so it needs no clearing.
struct Volume {
    std::array<std::uint64_t, 3> firstMs;  ///< both directions, src→dst, dst→src
    std::array<std::uint64_t, 2> bytes;    ///< src→dst, dst→src
};
static_assert(sizeof(Volume) == 40);

/// A short flow's packets as they came (see the top of this file): one cache line.
inline constexpr std::size_t kPendingPackets = 9;

/// One buffered packet in 6 bytes: the gap since the flow's previous packet (ms, low 23 bits),
/// its TCP flags (8 bits) and its direction (top bit), then its size.
struct [[gnu::packed]] PendingPacket {
    std::uint32_t word;
    std::uint16_t size;

    static constexpr std::uint32_t kMaxGap = (1U << 23) - 1;
    std::uint32_t gap() const noexcept { return word & kMaxGap; }
    std::uint8_t tcpFlags() const noexcept { return static_cast<std::uint8_t>(word >> 23); }
    bool reverse() const noexcept { return (word >> 31) != 0; }
};
static_assert(sizeof(PendingPacket) == 6);

/// A short flow: its latest time, then its packets in arrival order (`form` of them).
struct Pending {
    std::uint64_t lastMs;  ///< the latest packet's time, ms (after add()'s arrival-order rule)
    std::array<PendingPacket, kPendingPackets> packets;
};
static_assert(sizeof(Pending) <= 64, "one cache line");

/// A flow's statistics in one of two forms; its `form` byte (kept by the caller) says which.
union Record {
    FlowStats stats;  ///< form == kFull
    Pending pending;  ///< form == the number of packets in it (0 before the first)
};
static_assert(sizeof(Record) == sizeof(FlowStats));

/// The form of a Record whose packets went into its FlowStats.
inline constexpr std::uint8_t kFull = 0xFF;

/// Clears `s` (a flow's first packet then goes through `add`).
void start(FlowStats& s) noexcept;

/// One packet of `size` at `timeNs`, `forward` = from the flow's source; `tcpFlags` 0 for
/// non-TCP packets. Records the SPLT entry while fewer than `splt.capacity` packets were seen,
/// and, when `volume` is not null, the first-packet times and byte counts.
void add(FlowStats& s, std::uint16_t size, std::uint64_t timeNs, bool forward,
         std::uint8_t tcpFlags, const SpltView& splt, Volume* volume = nullptr) noexcept;

/// One packet into a record of form `form` (0 for a new flow's; updated): into its Pending
/// while that has room and the gap fits, else through add(), the Pending's packets replayed
/// first when the record was still short. The arguments are add()'s.
void addPacket(Record& r, std::uint8_t& form, std::uint16_t size, std::uint64_t timeNs,
               bool forward, std::uint8_t tcpFlags, const SpltView& splt,
               Volume* volume = nullptr) noexcept;

/// The statistics, SPLT entries and Volume of the first `count` packets of `p` into `s` (started
/// first), `splt` and `volume`: bit for bit what add() makes of them packet by packet, computed
/// series by series. `p` may overlay `s`.
void replay(const Pending& p, std::size_t count, FlowStats& s, const SpltView& splt,
            Volume* volume = nullptr) noexcept;

/// The exported values of one series (NFStream's sync).
struct SeriesResult {
    std::uint16_t minPs;
    std::uint16_t maxPs;
    double meanPs;
    double stddevPs;
    std::uint64_t minPiat;
    std::uint64_t maxPiat;
    double meanPiat;
    double stddevPiat;
};
SeriesResult finish(const Series& s) noexcept;

}  // namespace rowprobe::flowstats
