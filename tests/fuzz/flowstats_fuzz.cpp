// libFuzzer target for flowstats' arithmetic on arbitrary packets: the input is a sequence of
// records [u16 length][u32 time step, may go backwards][frame bytes], each frame parsed as
// Ethernet and, when it parses, sized in all four accounting modes and added to one flow's
// statistics with SPLT 255. Besides memory errors it aborts when a result is NaN or infinite, a
// deviation is negative, a minimum exceeds its maximum or a mean leaves [min, max], or when
// the plugin's path (short flows buffered, then replayed) ends in other bits than add()'s.
//
//   ./flowstats_fuzz -max_total_time=60
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "process/flowstats/flowstats_stats.hpp"
#include "rowprobe/packet.hpp"

namespace {

using namespace rowprobe;
using namespace rowprobe::flowstats;

void check(const Series& s) {
    const SeriesResult r = finish(s);
    for (const double v : {r.meanPs, r.stddevPs, r.meanPiat, r.stddevPiat}) {
        if (!std::isfinite(v) || v < 0) std::abort();
    }
    if (s.packets == 0) return;
    if (r.minPs > r.maxPs || r.meanPs < r.minPs - 1e-6 || r.meanPs > r.maxPs + 1e-6) std::abort();
    if (s.packets >= 2 &&
        (r.minPiat > r.maxPiat || r.meanPiat < static_cast<double>(r.minPiat) - 1e-6 ||
         r.meanPiat > static_cast<double>(r.maxPiat) + 1e-6))
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::array<FlowStats, 4> stats;
    for (FlowStats& s : stats) start(s);
    std::array<Volume, 4> volumes{};
    std::array<std::uint64_t, 4> sizes{};  // the sizes summed here, against the Volume's bytes
    static std::array<SpltEntry, kMaxSplt> entries;
    const SpltView splt{entries.data(), kMaxSplt};
    // The plugin's path (addPacket: short flows buffered, then replayed) beside add()'s, in the
    // link mode: it must end in the same bits.
    Record record;
    std::memset(&record, 0xA5, sizeof record);
    std::uint8_t form = 0;
    static std::array<SpltEntry, kMaxSplt> bufferedEntries;
    const SpltView bufferedSplt{bufferedEntries.data(), kMaxSplt};
    Volume bufferedVolume{};
    std::uint64_t t = 1700000000ULL * 1000000000ULL;
    bool haveFirst = false;
    bool firstFromA = true;
    std::size_t at = 0;
    while (at + 6 <= size) {
        const std::size_t len =
            static_cast<std::size_t>(data[at]) | (std::size_t{data[at + 1]} << 8);
        std::int32_t step;
        std::memcpy(&step, data + at + 2, 4);
        at += 6;
        const std::size_t n = len < size - at ? len : size - at;
        std::vector<std::uint8_t> frame(data + at,
                                        data + at + n);  // exact size: ASan sees overreads
        at += n;
        t += static_cast<std::uint64_t>(static_cast<std::int64_t>(step) * 1000);
        ParsedPacket p;
        AnomalyCounters anomalies;
        const RawPacket raw{frame.data(), static_cast<std::uint32_t>(frame.size()),
                            static_cast<std::uint32_t>(frame.size()), t};
        if (!parsePacket(raw, LinkType::Ethernet, ParserConfig{}, p, anomalies)) continue;
        if (skippedByNfstream(p)) continue;
        if (!haveFirst) {
            firstFromA = p.fromA;
            haveFirst = true;
        }
        for (std::size_t m = 0; m < stats.size(); ++m) {
            const std::uint16_t ps = packetSize(p, static_cast<Accounting>(m));
            add(stats[m], ps, p.ts, p.fromA == firstFromA, p.key.proto == 6 ? p.tcpFlags : 0,
                m == 0 ? splt : SpltView{}, &volumes[m]);
            sizes[m] += ps;
            if (m == 0) {
                addPacket(record, form, ps, p.ts, p.fromA == firstFromA,
                          p.key.proto == 6 ? p.tcpFlags : 0, bufferedSplt, &bufferedVolume);
            }
        }
    }
    if (form != kFull) {
        replay(record.pending, form, record.stats, bufferedSplt, &bufferedVolume);
    }
    const std::size_t recorded = std::min<std::size_t>(stats[0].both.packets, kMaxSplt);
    if (std::memcmp(&record.stats, &stats[0], sizeof(FlowStats)) != 0 ||
        std::memcmp(bufferedEntries.data(), entries.data(), recorded * sizeof(SpltEntry)) != 0 ||
        (stats[0].both.packets != 0 && (bufferedVolume.bytes != volumes[0].bytes ||
                                        bufferedVolume.firstMs != volumes[0].firstMs)))
        std::abort();
    for (std::size_t m = 0; m < stats.size(); ++m) {
        const FlowStats& s = stats[m];
        check(s.both);
        check(s.dir[0].s);
        check(s.dir[1].s);
        if (s.dir[0].s.packets + s.dir[1].s.packets != s.both.packets) std::abort();
        // The basic columns: bytes add up, and no series' last packet precedes its first.
        const Volume& v = volumes[m];
        if (s.both.packets != 0 && v.bytes[0] + v.bytes[1] != sizes[m]) std::abort();
        if (s.both.packets != 0 && s.both.lastMs < v.firstMs[0]) std::abort();
        for (std::size_t d = 0; d < 2; ++d) {
            if (s.dir[d].s.packets != 0 && s.dir[d].s.lastMs < v.firstMs[1 + d]) std::abort();
        }
    }
    return 0;
}
