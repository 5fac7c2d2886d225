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
    if (tcpFlags != 0) {
        for (std::size_t i = 0; i < kFlagBits.size(); ++i) {
            d.flags[i] += (tcpFlags & kFlagBits[i]) != 0 ? 1U : 0U;
        }
    }
    if (index < splt.capacity) {
        const std::uint64_t piat = index == 0 || ms <= previous ? 0 : ms - previous;
        splt.entries[index].set(piat, size, !forward);
    }
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
