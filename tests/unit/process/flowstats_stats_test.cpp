// flowstats' arithmetic (process/flowstats/flowstats_stats.hpp): the running statistics against
// two-pass definitions, NFStream's conventions (sample standard deviation, the first packet's
// gap, -1 SPLT padding, 16-bit sizes), the accounting modes on parsed frames, and the overflow
// cases of issue 24 (65535-byte packets, 0 s gaps, 255 SPLT packets, one-packet flows, a
// million packets), and short flows kept as their packets and replayed, bit for bit.
#include "process/flowstats/flowstats_stats.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tests/unit/process/flow_driver.hpp"

namespace rowprobe::flowstats {
namespace {

constexpr std::uint64_t kMs = 1000000;  // ns

struct Splt {
    std::array<SpltEntry, kMaxSplt> e{};
    SpltView view(std::size_t n) { return {e.data(), n}; }
};

/// Sample mean and standard deviation by the two-pass textbook formula, in long double.
std::pair<double, double> twoPass(const std::vector<double>& v) {
    long double sum = 0;
    for (const double x : v) sum += x;
    const long double mean = sum / static_cast<long double>(v.size());
    long double sq = 0;
    for (const double x : v) sq += (x - mean) * (x - mean);
    const long double var = v.size() > 1 ? sq / static_cast<long double>(v.size() - 1) : 0;
    return {static_cast<double>(mean), static_cast<double>(std::sqrt(var))};
}

void expectRel(double got, double want) {
    EXPECT_LE(std::fabs(got - want), 1e-9 * std::max(1.0, std::fabs(want)))
        << got << " vs " << want;
}

TEST(FlowstatsStats, SizesAndGapsMatchTwoPassDefinitions) {
    FlowStats s;
    start(s);
    Splt sp;
    // (size, time ms, forward)
    const std::vector<std::tuple<std::uint16_t, std::uint64_t, bool>> pkts = {
        {74, 1000, true},    {74, 1030, false}, {66, 1031, true},    {583, 1032, true},
        {1514, 1100, false}, {66, 1101, true},  {1514, 1102, false}, {66, 1500, true}};
    std::vector<double> all, fwd, back, gAll, gFwd, gBack;
    std::uint64_t lastAll = 0, lastF = 0, lastB = 0;
    for (const auto& [size, ms, forward] : pkts) {
        add(s, size, ms * kMs + 999999, forward, 0, sp.view(0));  // sub-ms part is truncated
        all.push_back(size);
        if (!gAll.empty() || lastAll != 0) gAll.push_back(static_cast<double>(ms - lastAll));
        lastAll = ms;
        auto& v = forward ? fwd : back;
        auto& g = forward ? gFwd : gBack;
        auto& last = forward ? lastF : lastB;
        if (!v.empty()) g.push_back(static_cast<double>(ms - last));
        last = ms;
        v.push_back(size);
    }
    const struct {
        const Series& series;
        const std::vector<double>& sizes;
        const std::vector<double>& gaps;
    } cases[] = {{s.both, all, gAll}, {s.dir[0].s, fwd, gFwd}, {s.dir[1].s, back, gBack}};
    for (const auto& c : cases) {
        const SeriesResult r = finish(c.series);
        const auto [mean, sd] = twoPass(c.sizes);
        expectRel(r.meanPs, mean);
        expectRel(r.stddevPs, sd);
        const auto [gmean, gsd] = twoPass(c.gaps);
        expectRel(r.meanPiat, gmean);
        expectRel(r.stddevPiat, gsd);
        EXPECT_EQ(r.minPs, *std::min_element(c.sizes.begin(), c.sizes.end()));
        EXPECT_EQ(r.maxPs, *std::max_element(c.sizes.begin(), c.sizes.end()));
        EXPECT_EQ(static_cast<double>(r.minPiat), *std::min_element(c.gaps.begin(), c.gaps.end()));
        EXPECT_EQ(static_cast<double>(r.maxPiat), *std::max_element(c.gaps.begin(), c.gaps.end()));
    }
}

TEST(FlowstatsStats, OnePacketFlowIsAllZeroNotNaN) {
    FlowStats s;
    start(s);
    Splt sp;
    add(s, 1500, 5 * kMs, true, 0x02, sp.view(4));
    const SeriesResult both = finish(s.both);
    EXPECT_EQ(both.minPs, 1500);
    EXPECT_EQ(both.maxPs, 1500);
    EXPECT_EQ(both.meanPs, 1500.0);
    EXPECT_EQ(both.stddevPs, 0.0);  // NFStream: stddev needs two packets, gaps three
    EXPECT_EQ(both.meanPiat, 0.0);
    EXPECT_EQ(both.stddevPiat, 0.0);
    const SeriesResult back = finish(s.dir[1].s);  // no packet back: every value 0
    EXPECT_EQ(back.maxPs, 0);
    EXPECT_EQ(back.meanPs, 0.0);
    EXPECT_EQ(s.dir[0].flags[0], 1U);  // SYN
    EXPECT_EQ(sp.e[0].piat(), 0U);     // the first packet's gap is 0
    EXPECT_EQ(sp.e[0].ps, 1500);
    EXPECT_EQ(sp.e[0].direction(), 0);
}

TEST(FlowstatsStats, TwoPacketsHaveOneGapAndNoGapDeviation) {
    FlowStats s;
    start(s);
    Splt sp;
    add(s, 60, 10 * kMs, true, 0, sp.view(0));
    add(s, 60, 25 * kMs, true, 0, sp.view(0));
    const SeriesResult r = finish(s.both);
    EXPECT_EQ(r.minPiat, 15U);
    EXPECT_EQ(r.maxPiat, 15U);
    EXPECT_EQ(r.meanPiat, 15.0);
    EXPECT_EQ(r.stddevPiat, 0.0);
    EXPECT_EQ(r.stddevPs, 0.0);
}

TEST(FlowstatsStats, FlagCountsPerDirectionInNfstreamOrder) {
    FlowStats s;
    start(s);
    Splt sp;
    add(s, 60, 0, true, 0x02, sp.view(0));          // SYN
    add(s, 60, 0, false, 0x12, sp.view(0));         // SYN ACK
    add(s, 60, 0, true, 0x10, sp.view(0));          // ACK
    add(s, 60, 0, true, 0xFF, sp.view(0));          // every flag
    add(s, 60, 0, false, 0x04 | 0x10, sp.view(0));  // RST ACK
    // SYN, CWR, ECE, URG, ACK, PSH, RST, FIN
    EXPECT_EQ(s.dir[0].flags, (std::array<std::uint32_t, 8>{2, 1, 1, 1, 2, 1, 1, 1}));
    EXPECT_EQ(s.dir[1].flags, (std::array<std::uint32_t, 8>{1, 0, 0, 0, 2, 0, 1, 0}));
}

TEST(FlowstatsStats, SpltStopsAtCapacityAndRecordsGapsBothWays) {
    FlowStats s;
    start(s);
    Splt sp;
    for (std::uint64_t i = 0; i < 300; ++i) {
        add(s, static_cast<std::uint16_t>(i), i * 3 * kMs, i % 2 == 0, 0, sp.view(kMaxSplt));
    }
    EXPECT_EQ(s.both.packets, 300U);
    for (std::size_t i = 0; i < kMaxSplt; ++i) {
        EXPECT_EQ(sp.e[i].ps, i);
        EXPECT_EQ(sp.e[i].piat(), i == 0 ? 0U : 3U);
        EXPECT_EQ(sp.e[i].direction(), i % 2 == 0 ? 0 : 1);
    }
}

TEST(FlowstatsStats, MaximalSizesZeroGapsAndAMillionPacketsStayFinite) {
    FlowStats s;
    start(s);
    Splt sp;
    for (int i = 0; i < 1000000; ++i) {
        add(s, 65535, 42 * kMs, i % 3 != 0, 0x10, sp.view(kMaxSplt));  // all at the same time
    }
    for (const Series* x : {&s.both, &s.dir[0].s, &s.dir[1].s}) {
        const SeriesResult r = finish(*x);
        EXPECT_EQ(r.minPs, 65535);
        EXPECT_EQ(r.maxPs, 65535);
        EXPECT_EQ(r.meanPs, 65535.0);
        EXPECT_EQ(r.stddevPs, 0.0);
        EXPECT_EQ(r.maxPiat, 0U);
        EXPECT_EQ(r.meanPiat, 0.0);
        EXPECT_EQ(r.stddevPiat, 0.0);
    }
    // Alternating extremes: the running M2 must not lose the variance (a sum of squares in
    // float would; Welford in double keeps 1e-9).
    start(s);
    std::vector<double> v;
    for (int i = 0; i < 1000000; ++i) {
        const std::uint16_t x = i % 2 == 0 ? 0 : 65535;
        add(s, x, static_cast<std::uint64_t>(i) * kMs, true, 0, sp.view(0));
        v.push_back(x);
    }
    const auto [mean, sd] = twoPass(v);
    const SeriesResult r = finish(s.both);
    expectRel(r.meanPs, mean);
    expectRel(r.stddevPs, sd);
    EXPECT_TRUE(std::isfinite(r.stddevPiat));
}

/// A flow's statistics, SPLT entries and Volume as the plugin exports them when its packets go
/// through addPacket: the record's own when full, else its Pending replayed into scratch copies.
struct Exported {
    FlowStats stats;
    Splt splt;
    Volume volume{};
};
Exported exportedFrom(const Record& r, std::uint8_t form, const Exported& full,
                      std::size_t capacity) {
    if (form == kFull) return {r.stats, full.splt, full.volume};
    Exported x;
    replay(r.pending, form, x.stats, x.splt.view(std::min(capacity, kPendingPackets)), &x.volume);
    return x;
}

void expectSameBits(const Exported& got, const Exported& want, std::size_t capacity) {
    EXPECT_EQ(std::memcmp(&got.stats, &want.stats, sizeof got.stats), 0);
    const std::size_t n = std::min<std::size_t>(want.stats.both.packets, capacity);
    EXPECT_EQ(std::memcmp(got.splt.e.data(), want.splt.e.data(), n * sizeof(SpltEntry)), 0);
    EXPECT_EQ(got.volume.bytes, want.volume.bytes);
    EXPECT_EQ(got.volume.firstMs, want.volume.firstMs);
}

// Short flows (addPacket): the first 9 packets kept as they came and replayed series by series
// on the 10th, on a gap of 2^23 ms or more, or at export give bit for bit the statistics, SPLT
// entries and Volume of adding each packet as it came. Random flows of 0-40 packets: gaps of
// 0 ms to past 2^23 ms, times going backwards, both directions, any flag byte, sizes up to
// 65535, SPLT capacities on both sides of the buffer's 9.
TEST(FlowstatsStats, ShortFlowsReplayToTheSameBitsAsAddingEachPacket) {
    std::mt19937_64 rng(24);
    constexpr std::uint64_t kBigGap = PendingPacket::kMaxGap;
    std::size_t replayedEarly = 0;
    for (int flow = 0; flow < 20000; ++flow) {
        const std::size_t n = rng() % 41;
        const std::size_t capacity = std::array<std::size_t, 4>{0, 3, 10, 255}[rng() % 4];
        Exported direct;  // add() packet by packet
        start(direct.stats);
        Record r;
        std::memset(&r, 0xA5, sizeof r);  // a pool record is not cleared
        std::uint8_t form = 0;
        Exported full;  // the SPLT entries and Volume addPacket writes once the record is full
        std::uint64_t t = 1'700'000'000'000ULL * kMs + rng() % kMs;
        for (std::size_t i = 0; i < n; ++i) {
            switch (rng() % 8) {
                case 0:
                    break;  // the same time
                case 1:
                    t -= std::min<std::uint64_t>(t, rng() % (50 * kMs));  // earlier
                    break;
                case 2:  // around the buffer's largest gap
                    t += (kBigGap - 1 + rng() % 3) * kMs + rng() % kMs;
                    break;
                default:
                    t += rng() % (200 * kMs);
            }
            const auto size = static_cast<std::uint16_t>(rng() % 4 == 0 ? 65535 : rng() % 1600);
            const bool forward = rng() % 3 != 0;
            const auto flags = static_cast<std::uint8_t>(rng() % 2 == 0 ? 0 : rng());
            const std::uint8_t before = form;
            add(direct.stats, size, t, forward, flags, direct.splt.view(capacity), &direct.volume);
            addPacket(r, form, size, t, forward, flags, full.splt.view(capacity), &full.volume);
            if (before < kPendingPackets && form == kFull) replayedEarly += i < kPendingPackets;
            ASSERT_TRUE(form == kFull || form == i + 1) << i;
        }
        SCOPED_TRACE(testing::Message() << "flow " << flow << ", " << n << " packets");
        expectSameBits(exportedFrom(r, form, full, capacity), direct, capacity);
        if (testing::Test::HasFailure()) return;
    }
    EXPECT_GT(replayedEarly, 100U);  // the gap rule was exercised
}

// Where the buffer ends: 9 packets stay short, the 10th replays them; a gap of 2^23 - 1 ms is
// kept, one of 2^23 ms replays at once.
TEST(FlowstatsStats, ShortFlowBufferEndsAtTheTenthPacketOrA23BitGap) {
    Record r;
    std::uint8_t form = 0;
    Splt sp;
    for (std::uint64_t i = 0; i < kPendingPackets; ++i) {
        addPacket(r, form, 60, (1000 + i) * kMs, true, 0, sp.view(10));
    }
    EXPECT_EQ(form, kPendingPackets);
    addPacket(r, form, 60, 1100 * kMs, false, 0, sp.view(10));
    EXPECT_EQ(form, kFull);
    EXPECT_EQ(r.stats.both.packets, 10U);
    EXPECT_EQ(sp.e[8].piat(), 1U);
    EXPECT_EQ(sp.e[9].piat(), 92U);

    form = 0;
    addPacket(r, form, 60, 0, true, 0, sp.view(10));
    addPacket(r, form, 60, PendingPacket::kMaxGap * kMs, true, 0, sp.view(10));
    EXPECT_EQ(form, 2);
    addPacket(r, form, 60, (2 * PendingPacket::kMaxGap + 1) * kMs, true, 0, sp.view(10));
    EXPECT_EQ(form, kFull);
    EXPECT_EQ(r.stats.both.packets, 3U);
    EXPECT_EQ(r.stats.both.maxPiat, PendingPacket::kMaxGap + 1);
    EXPECT_EQ(r.stats.both.minPiat, PendingPacket::kMaxGap);
}

TEST(FlowstatsStats, EarlierPacketTakesTheFlowsLatestTime) {
    FlowStats s;
    start(s);
    Splt sp;
    add(s, 60, 100 * kMs, true, 0, sp.view(4));
    add(s, 60, 90 * kMs, false, 0, sp.view(4));  // 10 ms before: counts at 100 ms
    add(s, 60, 130 * kMs, false, 0, sp.view(4));
    EXPECT_EQ(sp.e[1].piat(), 0U);
    EXPECT_EQ(sp.e[2].piat(), 30U);
    EXPECT_EQ(finish(s.dir[1].s).maxPiat, 30U);
}

// The 6-byte entry: the gap's 31 bits and the direction bit do not disturb each other, at the
// cap (2³¹ − 1 ms) and past it, in either direction, and the size keeps its 16 bits.
TEST(FlowstatsStats, SpltEntryKeepsGapDirectionAndSizeApart) {
    FlowStats s;
    start(s);
    Splt sp;
    const std::uint64_t cap = 0x7FFFFFFFULL;
    add(s, 65535, 0, true, 0, sp.view(5));
    add(s, 1, cap * kMs, false, 0, sp.view(5));           // exactly the cap
    add(s, 2, (2 * cap + 5) * kMs, true, 0, sp.view(5));  // past it: capped
    add(s, 65535, (2 * cap + 5) * kMs, false, 0, sp.view(5));
    add(s, 0, (6 * cap) * kMs, false, 0, sp.view(5));  // past 2^32 ms too
    const std::uint32_t gaps[] = {0, 0x7FFFFFFFU, 0x7FFFFFFFU, 0, 0x7FFFFFFFU};
    const std::uint8_t dirs[] = {0, 1, 0, 1, 1};
    const std::uint16_t sizes[] = {65535, 1, 2, 65535, 0};
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(sp.e[i].piat(), gaps[i]) << i;
        EXPECT_EQ(sp.e[i].direction(), dirs[i]) << i;
        EXPECT_EQ(sp.e[i].ps, sizes[i]) << i;
    }
    static_assert(sizeof(SpltEntry) == 6);
}

TEST(FlowstatsStats, AccountingModesOnParsedFrames) {
    using test::frame;
    AnomalyCounters anomalies;
    auto parse = [&](const test::Bytes& f) {
        ParsedPacket p;
        const RawPacket raw{f.data(), static_cast<std::uint32_t>(f.size()),
                            static_cast<std::uint32_t>(f.size()), 0};
        EXPECT_TRUE(parsePacket(raw, LinkType::Ethernet, ParserConfig{}, p, anomalies));
        return p;
    };
    const test::Bytes payload(100, 'x');
    const auto tcpFrame = frame(6, {10, 0, 0, 1}, 1234, {10, 0, 0, 2}, 80, payload);
    const ParsedPacket tcp = parse(tcpFrame);
    EXPECT_EQ(packetSize(tcp, Accounting::Link), 14 + 20 + 20 + 100);
    EXPECT_EQ(packetSize(tcp, Accounting::Ip), 20 + 20 + 100);
    EXPECT_EQ(packetSize(tcp, Accounting::Transport), 20 + 100);
    EXPECT_EQ(packetSize(tcp, Accounting::Payload), 100);
    const auto udpFrame = frame(17, {10, 0, 0, 1}, 53, {10, 0, 0, 2}, 53, payload);
    const ParsedPacket udp = parse(udpFrame);
    EXPECT_EQ(packetSize(udp, Accounting::Transport), 8 + 100);
    EXPECT_EQ(packetSize(udp, Accounting::Payload), 100);
    // An IP protocol other than TCP/UDP/ICMP: NFStream counts no transport or payload.
    test::Bytes esp = udpFrame;
    esp[14 + 9] = 50;  // ESP
    const ParsedPacket other = parse(esp);
    EXPECT_EQ(packetSize(other, Accounting::Ip), 20 + 8 + 100);
    EXPECT_EQ(packetSize(other, Accounting::Transport), 0);
    EXPECT_EQ(packetSize(other, Accounting::Payload), 0);
    // ICMP: the 8-byte header is not payload.
    test::Bytes icmp = udpFrame;
    icmp[14 + 9] = 1;
    const ParsedPacket ic = parse(icmp);
    EXPECT_EQ(packetSize(ic, Accounting::Transport), 108);
    EXPECT_EQ(packetSize(ic, Accounting::Payload), 100);
    // Sizes are NFStream's 16 bits: a 65549-byte frame (TSO capture) wraps as its raw_size.
    ParsedPacket big = tcp;
    big.wireLen = 65549;
    big.ipLen = 65535;
    EXPECT_EQ(packetSize(big, Accounting::Link), 13);
    EXPECT_EQ(packetSize(big, Accounting::Ip), 65535);
}

TEST(FlowstatsStats, NonFirstIpv4FragmentsAreNotMetered) {
    ParsedPacket p;
    p.key.ipVersion = 4;
    p.frag.isFragment = true;
    p.frag.offset = 0;
    EXPECT_FALSE(skippedByNfstream(p));  // the first fragment counts
    p.frag.offset = 185;
    EXPECT_TRUE(skippedByNfstream(p));
}

// The basic columns' first-packet times and bytes: per direction from that direction's first
// packet, the bytes summed in 64 bits, and a packet earlier than the flow's latest taking the
// latest time, as the statistics do.
TEST(FlowstatsStats, VolumeKeepsFirstTimesAndBytesPerDirection) {
    FlowStats s;
    start(s);
    Volume v;
    v.firstMs = {7, 7, 7};  // garbage: add() writes before anything reads
    v.bytes = {7, 7};
    const SpltView none{};
    add(s, 100, 1000 * kMs + 5, true, 0, none, &v);
    add(s, 65535, 1003 * kMs, true, 0, none, &v);
    EXPECT_EQ(v.firstMs[0], 1000U);
    EXPECT_EQ(v.firstMs[1], 1000U);
    EXPECT_EQ(v.bytes[0], 65635U);
    EXPECT_EQ(v.bytes[1], 0U);
    EXPECT_EQ(s.dir[1].s.packets, 0U);  // firstMs[2] is not valid until a packet comes back
    add(s, 40, 1001 * kMs, false, 0, none, &v);  // earlier than the flow's latest (1003)
    EXPECT_EQ(v.firstMs[2], 1003U);
    EXPECT_EQ(v.bytes[1], 40U);
    EXPECT_EQ(s.dir[1].s.lastMs, 1003U);
    for (int i = 0; i < 70000; ++i) add(s, 65535, 2000 * kMs, false, 0, none, &v);
    EXPECT_EQ(v.bytes[1], 40U + 70000ULL * 65535U);  // beyond 32 bits
}

TEST(FlowstatsPlugin, OptionsSizeTheRecordAndSelectTheFields) {
    const test::FlowDriver off("flowstats");
    EXPECT_EQ(off.plugin().fields().size(), 48U);  // no SPLT columns without splt=N
    EXPECT_EQ(off.plugin().hooks().extSize, sizeof(FlowStats));
    const test::FlowDriver full("flowstats;splt=255;accounting=payload;pen=32473");
    EXPECT_EQ(full.plugin().fields().size(), 51U);
    EXPECT_EQ(full.plugin().hooks().extSize, sizeof(FlowStats) + 255 * sizeof(SpltEntry));
    EXPECT_EQ(full.plugin().fields()[0].ipfix.pen, 32473U);
    EXPECT_EQ(full.plugin().fields()[50].ipfixItem.id, 51);
    EXPECT_FALSE(off.plugin().fields()[0].ipfix.exported());
    // basic: 17 more columns first (NFStream's order), elements 52-68; the statistics keep 1-51,
    // and a Volume sits between the statistics and SPLT.
    const test::FlowDriver basic("flowstats;basic;splt=10;pen=32473");
    ASSERT_EQ(basic.plugin().fields().size(), 68U);
    EXPECT_EQ(basic.plugin().fields()[0].name, "protocol");
    EXPECT_EQ(basic.plugin().fields()[0].ipfix.id, 52);
    EXPECT_EQ(basic.plugin().fields()[16].name, "dst2src_bytes");
    EXPECT_EQ(basic.plugin().fields()[16].ipfix.id, 68);
    EXPECT_EQ(basic.plugin().fields()[17].name, "bidirectional_min_ps");
    EXPECT_EQ(basic.plugin().fields()[17].ipfix.id, 1);
    EXPECT_EQ(basic.plugin().fields()[67].ipfixItem.id, 51);
    EXPECT_EQ(basic.plugin().hooks().extSize,
              sizeof(FlowStats) + sizeof(Volume) + 10 * sizeof(SpltEntry));
    EXPECT_EQ(test::FlowDriver("flowstats;basic").plugin().fields().size(), 65U);
    EXPECT_THROW(test::FlowDriver("flowstats;splt=256"), std::exception);
    EXPECT_THROW(test::FlowDriver("flowstats;accounting=wire"), std::exception);
}

TEST(FlowstatsPlugin, SpltPaddedWithMinusOne) {
    test::FlowDriver d("flowstats;splt=5");
    const test::Bytes payload(10, 'x');
    d.packet(test::frame(6, {10, 0, 0, 1}, 1234, {10, 0, 0, 2}, 80, payload));
    d.packet(test::frame(6, {10, 0, 0, 2}, 80, {10, 0, 0, 1}, 1234, payload));
    const auto out = d.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("splt_direction"), "[0|1|-1|-1|-1]");
    EXPECT_EQ(out[0].at("splt_ps"), "[64|64|-1|-1|-1]");  // int32 arrays, as NFStream's ints
    EXPECT_EQ(out[0].at("splt_piat_ms"), "[0|0|-1|-1|-1]");
    EXPECT_EQ(out[0].at("bidirectional_min_ps"), "64");
    EXPECT_EQ(out[0].at("bidirectional_psh_packets"), "2");
    EXPECT_EQ(out[0].at("src2dst_ack_packets"), "1");
}

// With `basic`: NFStream's basic columns next to SPLT, which moves behind the Volume; a
// direction without packets reports 0 in all five of its columns.
TEST(FlowstatsPlugin, BasicColumnsPerSeriesAndSpltBehindThem) {
    test::FlowDriver d("flowstats;basic;splt=3;accounting=ip");
    const test::Bytes payload(10, 'x');
    const TimeNs t0 = 1'700'000'000ULL * kNsPerSec;
    d.packet(test::frame(17, {10, 0, 0, 1}, 1234, {10, 0, 0, 2}, 53, payload), t0);
    d.packet(test::frame(17, {10, 0, 0, 1}, 1234, {10, 0, 0, 2}, 53, payload), t0 + 7 * kMs);
    d.packet(test::frame(17, {10, 0, 0, 2}, 53, {10, 0, 0, 1}, 1234, payload), t0 + 9 * kMs);
    auto out = d.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("protocol"), "17");
    EXPECT_EQ(out[0].at("vlan_id"), "0");
    EXPECT_EQ(out[0].at("bidirectional_first_seen_ms"), "1700000000000");
    EXPECT_EQ(out[0].at("bidirectional_last_seen_ms"), "1700000000009");
    EXPECT_EQ(out[0].at("bidirectional_duration_ms"), "9");
    EXPECT_EQ(out[0].at("bidirectional_packets"), "3");
    EXPECT_EQ(out[0].at("bidirectional_bytes"), "114");  // 3 × 38: IP lengths (ip mode)
    EXPECT_EQ(out[0].at("src2dst_duration_ms"), "7");
    EXPECT_EQ(out[0].at("src2dst_bytes"), "76");
    EXPECT_EQ(out[0].at("dst2src_first_seen_ms"), "1700000000009");
    EXPECT_EQ(out[0].at("dst2src_duration_ms"), "0");
    EXPECT_EQ(out[0].at("dst2src_packets"), "1");
    EXPECT_EQ(out[0].at("splt_ps"), "[38|38|38]");
    EXPECT_EQ(out[0].at("splt_piat_ms"), "[0|7|2]");

    test::FlowDriver one("flowstats;basic");
    one.packet(test::frame(17, {10, 0, 0, 1}, 1234, {10, 0, 0, 2}, 53, payload), t0);
    out = one.write();
    ASSERT_EQ(out.size(), 1U);
    for (const char* c : {"dst2src_first_seen_ms", "dst2src_last_seen_ms", "dst2src_duration_ms",
                          "dst2src_packets", "dst2src_bytes"}) {
        EXPECT_EQ(out[0].at(c), "0") << c;
    }
    EXPECT_EQ(out[0].at("src2dst_packets"), "1");
}

// A gap beyond int32 (here 3·10⁹ ms, 35 days; the entry keeps 31 bits) is exported saturated
// at 2³¹ − 1 ms, never as a negative number; the largest size, 65535, fits int32.
TEST(FlowstatsPlugin, SpltGapSaturatesAtInt32Max) {
    test::FlowDriver d("flowstats;splt=3");
    const test::Bytes payload(10, 'x');
    const TimeNs t0 = 1'700'000'000ULL * kNsPerSec;
    d.packet(test::frame(17, {10, 0, 0, 1}, 1234, {10, 0, 0, 2}, 53, payload), t0);
    d.packet(test::frame(17, {10, 0, 0, 2}, 53, {10, 0, 0, 1}, 1234, payload),
             t0 + 3'000'000'000ULL * 1'000'000ULL);
    const auto out = d.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("splt_piat_ms"), "[0|2147483647|-1]");
    EXPECT_EQ(out[0].at("bidirectional_max_piat_ms"), "3000000000");
}

}  // namespace
}  // namespace rowprobe::flowstats
