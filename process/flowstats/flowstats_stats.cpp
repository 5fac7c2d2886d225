#include "process/flowstats/flowstats_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rowprobe::flowstats {

namespace {

constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kUdp = 17;
constexpr std::uint8_t kIcmp = 1;
constexpr std::uint8_t kIcmpv6 = 58;
constexpr std::uint32_t kIcmpHeader = 8;  // NFStream's sizeof(struct ndpi_icmphdr / icmp6hdr)
constexpr std::uint64_t kNsPerMs = 1000000;

std::uint16_t low16(std::uint32_t v) noexcept { return static_cast<std::uint16_t>(v & 0xFFFF); }

std::uint32_t transportBytes(const ParsedPacket& p) noexcept {
    const std::uint8_t proto = p.key.proto;
    if (proto != kTcp && proto != kUdp && proto != kIcmp && proto != kIcmpv6) return 0;
    const std::uint32_t header =
        p.l4Offset > p.l3Offset ? static_cast<std::uint32_t>(p.l4Offset - p.l3Offset) : 0;
    return p.ipLen - std::min(p.ipLen, header);
}

/// The first value of a series of one: NFStream's "init" functions (min = mean = max = x).
void first(Running& r, double x) noexcept {
    r.mean = x;
    r.m2 = 0;
}

/// NFStream's update: mean += (x - mean) / n; M2 += (x - old mean) · (x - new mean).
void welford(Running& r, double x, std::uint64_t n) noexcept {
    const double before = r.mean;
    r.mean += (x - before) / static_cast<double>(n);
    r.m2 += (x - before) * (x - r.mean);
}

void addToSeries(Series& s, std::uint16_t size, std::uint64_t ms) noexcept {
    if (s.packets == 0) {
        s.packets = 1;
        s.minPs = s.maxPs = size;
        first(s.ps, size);
        s.lastMs = ms;
        return;
    }
    if (s.packets != UINT32_MAX) ++s.packets;
    const std::uint64_t piat = ms > s.lastMs ? ms - s.lastMs : 0;
    s.lastMs = std::max(s.lastMs, ms);
    s.minPs = std::min(s.minPs, size);
    s.maxPs = std::max(s.maxPs, size);
    welford(s.ps, size, s.packets);
    if (s.packets == 2) {
        s.minPiat = s.maxPiat = piat;
        first(s.piat, static_cast<double>(piat));
    } else {
        s.minPiat = std::min(s.minPiat, piat);
        s.maxPiat = std::max(s.maxPiat, piat);
        welford(s.piat, static_cast<double>(piat), s.packets - 1);
    }
}

/// One packet's TCP flags into its direction's counts (kFlagBits' order).
void countFlags(Direction& d, std::uint8_t tcpFlags) noexcept {
    if (tcpFlags == 0) return;
    for (std::size_t i = 0; i < kFlagBits.size(); ++i) {
        d.flags[i] += (tcpFlags & kFlagBits[i]) != 0 ? 1U : 0U;
    }
}

/// `s` (zeroed) over the `n` packets of `sizes` and `times` (ms, in arrival order, never
/// decreasing): what addToSeries makes of them one by one, the same operations in the same
/// order, with the running values in registers instead of the record.
void replaySeries(Series& s, const std::uint16_t* sizes, const std::uint64_t* times,
                  std::size_t n) noexcept {
    if (n == 0) return;
    s.packets = static_cast<std::uint32_t>(n);
    std::uint16_t minPs = sizes[0];
    std::uint16_t maxPs = sizes[0];
    Running ps{.mean = static_cast<double>(sizes[0]), .m2 = 0};
    Running piat{.mean = 0, .m2 = 0};
    std::uint64_t minPiat = 0;
    std::uint64_t maxPiat = 0;
    for (std::size_t k = 1; k < n; ++k) {
        const std::uint64_t gap = times[k] - times[k - 1];
        minPs = std::min(minPs, sizes[k]);
        maxPs = std::max(maxPs, sizes[k]);
        welford(ps, sizes[k], k + 1);
        if (k == 1) {
            minPiat = maxPiat = gap;
            first(piat, static_cast<double>(gap));
        } else {
            minPiat = std::min(minPiat, gap);
            maxPiat = std::max(maxPiat, gap);
            welford(piat, static_cast<double>(gap), k);
        }
    }
    s.ps = ps;
    s.piat = piat;
    s.minPiat = minPiat;
    s.maxPiat = maxPiat;
    s.lastMs = times[n - 1];
    s.minPs = minPs;
    s.maxPs = maxPs;
}

}  // namespace

std::uint16_t packetSize(const ParsedPacket& p, Accounting mode) noexcept {
    switch (mode) {
        case Accounting::Link:
            return low16(p.wireLen);
        case Accounting::Ip:
            return low16(p.ipLen);
        case Accounting::Transport:
            return low16(transportBytes(p));
        case Accounting::Payload: {
            const std::uint8_t proto = p.key.proto;
            if (proto == kTcp || proto == kUdp) return low16(p.payloadWireLen);
            if (proto == kIcmp || proto == kIcmpv6) {
                const std::uint32_t t = transportBytes(p);
                return low16(t - std::min(t, kIcmpHeader));
            }
            return 0;
        }
    }
    return 0;
}

bool skippedByNfstream(const ParsedPacket& p) noexcept {
    return p.key.ipVersion == 4 && p.frag.isFragment && p.frag.offset != 0;
}

void start(FlowStats& s) noexcept { std::memset(&s, 0, sizeof s); }

void add(FlowStats& s, std::uint16_t size, std::uint64_t timeNs, bool forward,
         std::uint8_t tcpFlags, const SpltView& splt, Volume* volume) noexcept {
    // A packet earlier than the flow's latest takes the latest time (NFStream forces arrival
    // order with its clock: the latest time of the whole capture, here of the flow).
    const std::uint64_t ms = std::max(timeNs / kNsPerMs, s.both.lastMs);
    const std::uint32_t index = s.both.packets;  // this packet's position in the flow
    const std::uint64_t previous = s.both.lastMs;
    const std::size_t dir = forward ? 0 : 1;
    Direction& d = s.dir[dir];
    if (volume != nullptr) {
        if (index == 0) {
            volume->firstMs[0] = ms;
            volume->bytes = {0, 0};
        }
        if (d.s.packets == 0) volume->firstMs[1 + dir] = ms;
        volume->bytes[dir] += size;
    }
    addToSeries(s.both, size, ms);
    addToSeries(d.s, size, ms);
    countFlags(d, tcpFlags);
    if (index < splt.capacity) {
        const std::uint64_t piat = index == 0 || ms <= previous ? 0 : ms - previous;
        splt.entries[index].set(piat, size, !forward);
    }
}

void replay(const Pending& p, std::size_t count, FlowStats& s, const SpltView& splt,
            Volume* volume) noexcept {
    const Pending copy = p;  // p may be s' first line, which start() clears
    start(s);
    if (count == 0) return;
    // The packets' times from the latest one back, gap by gap (at most 8 gaps of 23 bits),
    // and each series' packets: add()'s inputs, replayed series by series (each series depends
    // only on its own packets, so the six chains of divisions overlap). Flag counts, SPLT
    // entries and the Volume as add() writes them.
    std::array<std::uint64_t, kPendingPackets> ms;
    ms[count - 1] = copy.lastMs;
    for (std::size_t i = count - 1; i > 0; --i) ms[i - 1] = ms[i] - copy.packets[i].gap();
    std::array<std::uint16_t, kPendingPackets> sizes;
    std::array<std::array<std::uint16_t, kPendingPackets>, 2> dirSizes;
    std::array<std::array<std::uint64_t, kPendingPackets>, 2> dirMs;
    std::array<std::size_t, 2> dirCount = {0, 0};
    std::array<std::uint64_t, 2> bytes = {0, 0};
    for (std::size_t i = 0; i < count; ++i) {
        const PendingPacket& x = copy.packets[i];
        const std::size_t d = x.reverse() ? 1 : 0;
        sizes[i] = x.size;
        dirSizes[d][dirCount[d]] = x.size;
        dirMs[d][dirCount[d]++] = ms[i];
        bytes[d] += x.size;
        countFlags(s.dir[d], x.tcpFlags());
        if (i < splt.capacity) splt.entries[i].set(x.gap(), x.size, d == 1);
    }
    replaySeries(s.both, sizes.data(), ms.data(), count);
    for (std::size_t d = 0; d < 2; ++d) {
        replaySeries(s.dir[d].s, dirSizes[d].data(), dirMs[d].data(), dirCount[d]);
    }
    if (volume != nullptr) {
        volume->firstMs[0] = ms[0];
        for (std::size_t d = 0; d < 2; ++d) {
            if (dirCount[d] != 0) volume->firstMs[1 + d] = dirMs[d][0];
        }
        volume->bytes = bytes;
    }
}

void addPacket(Record& r, std::uint8_t& form, std::uint16_t size, std::uint64_t timeNs,
               bool forward, std::uint8_t tcpFlags, const SpltView& splt, Volume* volume) noexcept {
    if (form < kPendingPackets) {
        Pending& p = r.pending;
        // add()'s time: truncated to ms, never before the flow's latest packet.
        const std::uint64_t t = timeNs / kNsPerMs;
        const std::uint64_t ms = form == 0 ? t : std::max(t, p.lastMs);
        const std::uint64_t gap = form == 0 ? 0 : ms - p.lastMs;
        if (gap <= PendingPacket::kMaxGap) {
            p.lastMs = ms;
            p.packets[form] = {.word = static_cast<std::uint32_t>(gap) |
                                       (std::uint32_t{tcpFlags} << 23) |
                                       (forward ? 0U : 0x80000000U),
                               .size = size};
            ++form;
            return;
        }
    }
    if (form != kFull) {
        replay(r.pending, form, r.stats, splt, volume);
        form = kFull;
    }
    add(r.stats, size, timeNs, forward, tcpFlags, splt, volume);
}

SeriesResult finish(const Series& s) noexcept {
    SeriesResult r{};
    if (s.packets == 0) return r;
    r.minPs = s.minPs;
    r.maxPs = s.maxPs;
    r.meanPs = s.ps.mean;
    r.stddevPs = s.packets > 1 ? std::sqrt(s.ps.m2 / static_cast<double>(s.packets - 1)) : 0.0;
    if (s.packets < 2) return r;
    r.minPiat = s.minPiat;
    r.maxPiat = s.maxPiat;
    r.meanPiat = s.piat.mean;
    r.stddevPiat = s.packets > 2 ? std::sqrt(s.piat.m2 / static_cast<double>(s.packets - 2)) : 0.0;
    return r;
}

}  // namespace rowprobe::flowstats
