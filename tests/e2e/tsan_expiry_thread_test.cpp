// expiry=thread under real concurrency, in-process: a worker thread feeds a table while an
// export thread scans it and drains both rings, as the pipeline does. The records must be
// exactly those of the inline mode on the same packets (each flow once, same counters, times
// and reasons), the statistics must add up, and a ThreadSanitizer build (CI: build/tsan, label
// e2e) must report nothing: the row locks, the atomic block deadlines and the counters are the
// whole synchronisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <sstream>
#include <thread>

#include "../unit/storage/table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

/// Packets of `flows` UDP/TCP flows over `seconds` of packet time: a flow sends a burst, goes
/// quiet, comes back (some after their inactive timeout, some within it), some close with FIN.
std::vector<ParsedPacket> workload(std::size_t flows, double seconds, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> when(0, seconds);
    std::vector<ParsedPacket> pkts;
    for (std::size_t f = 0; f < flows; ++f) {
        const std::string src = "10." + std::to_string(f >> 16 & 255) + "." +
                                std::to_string(f >> 8 & 255) + "." + std::to_string(f & 255);
        const auto sport = static_cast<std::uint16_t>(1024 + f % 50000);
        const bool tcp = f % 3 == 0;
        double t = when(rng);
        const int bursts = 1 + static_cast<int>(rng() % 3);
        for (int b = 0; b < bursts; ++b) {
            const int n = 1 + static_cast<int>(rng() % 6);
            for (int i = 0; i < n; ++i) {
                const bool fwd = i % 2 == 0;
                std::uint8_t flags = 0;
                if (tcp)
                    flags =
                        i == 0 ? 0x02 : (i == n - 1 && b == bursts - 1 && f % 2 == 0 ? 0x11 : 0x10);
                pkts.push_back(
                    fwd ? packet(src, sport, "192.0.2.1", 443, at(t), flags, 100, tcp ? 6 : 17)
                        : packet("192.0.2.1", 443, src, sport, at(t), flags, 1400, tcp ? 6 : 17));
                t += 0.001 * static_cast<double>(1 + rng() % 20);
            }
            t += static_cast<double>(rng() % 5);  // 0-4 s of silence: inactive=2 splits some
        }
    }
    std::stable_sort(pkts.begin(), pkts.end(),
                     [](const auto& a, const auto& b) { return a.ts < b.ts; });
    return pkts;
}

std::vector<std::string> describe(const std::vector<FlowRecord>& records) {
    std::vector<std::string> out;
    for (const FlowRecord& r : records) {
        std::ostringstream s;
        s << addressText(r.srcAddr) << ':' << r.srcPort << '>' << addressText(r.dstAddr) << ':'
          << r.dstPort << " p" << int(r.proto) << ' ' << r.packets[0] << '/' << r.packets[1] << ' '
          << r.bytes[0] << '/' << r.bytes[1] << ' ' << int(r.tcpFlags[0]) << '/'
          << int(r.tcpFlags[1]) << ' ' << r.timeFirst << ".." << r.timeLast << ' '
          << int(r.endReason);
        out.push_back(s.str());
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Runs `pkts` through a table built from `storage`: one worker thread, and (for expiry=thread)
/// an export thread scanning and draining concurrently. Returns every record and the stats.
std::vector<FlowRecord> run(const std::string& storage, const std::vector<ParsedPacket>& pkts,
                            CacheStats& stats) {
    auto plugin = Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, storage, "-s");
    ExportRing workerRing(1 << 10);  // small rings: the worker must also wait for room
    ExportRing expiryRing(1 << 8);
    std::atomic<bool> abandon{false};
    std::atomic<bool> workerDone{false};
    plugin->attach(ExportTarget{&workerRing, &abandon, 0});
    std::vector<FlowRecord> records;
    std::thread exporter([&] {
        FlowRecord r;
        for (;;) {
            const bool done = workerDone.load(std::memory_order_acquire);
            if (!done) plugin->sweepFromExportThread(expiryRing);
            bool any = false;
            while (workerRing.tryPop(r)) {
                records.push_back(r);
                any = true;
            }
            while (expiryRing.tryPop(r)) {
                records.push_back(r);
                any = true;
            }
            if (done && !any) break;
            if (!any) std::this_thread::yield();
        }
    });
    std::thread worker([&] {
        std::vector<ParsedPacket> batch;
        for (std::size_t i = 0; i < pkts.size(); i += kMaxBatch) {
            batch.assign(
                pkts.begin() + static_cast<std::ptrdiff_t>(i),
                pkts.begin() + static_cast<std::ptrdiff_t>(std::min(pkts.size(), i + kMaxBatch)));
            plugin->processBatch(batch);
            if (i % (kMaxBatch * 64) == 0)
                static_cast<void>(plugin->stats());  // as the pipeline publishes
        }
        plugin->flushAll();
        stats = plugin->stats();
        workerDone.store(true, std::memory_order_release);
    });
    worker.join();
    exporter.join();
    return records;
}

TEST(TsanExpiryThread, ConcurrentScanExportsExactlyTheInlineFlows) {
    const std::vector<ParsedPacket> pkts = workload(20000, 30, 5);
    // Room for every flow (no eviction): which flows leave when then depends only on packet
    // time, not on when a scan happened to run, so both modes must agree record for record.
    const std::string common = "cache;size=15;line=8;seed=9;inactive=2;active=6";
    CacheStats inlineStats;
    CacheStats threadStats;
    const std::vector<FlowRecord> inlineRecords = run(common + ";expiry=inline", pkts, inlineStats);
    const std::vector<FlowRecord> threadRecords = run(common + ";expiry=thread", pkts, threadStats);

    std::uint64_t packets = 0;
    for (const FlowRecord& r : threadRecords) packets += r.packets[0] + r.packets[1];
    EXPECT_EQ(packets, pkts.size());
    EXPECT_EQ(threadStats.flowsInCache, 0U);
    EXPECT_EQ(threadStats.exportedTotal(), threadRecords.size());
    EXPECT_GT(threadStats.exportedBySweep, threadRecords.size() / 4)
        << "the export thread did the scanning";
    EXPECT_EQ(threadStats.missEvict, 0U);
    EXPECT_EQ(inlineStats.missEvict, 0U);
    EXPECT_EQ(threadStats.flowsCreated, inlineStats.flowsCreated);
    // Same flows, reasons included, whatever the interleaving.
    EXPECT_EQ(describe(inlineRecords), describe(threadRecords));
}

TEST(TsanExpiryThread, RepeatedRunsUnderContentionStayConsistent) {
    const std::vector<ParsedPacket> pkts = workload(3000, 10, 17);
    const std::string storage = "cache;size=13;line=16;seed=2;inactive=1;active=3;expiry=thread";
    CacheStats first;
    const std::vector<std::string> reference = describe(run(storage, pkts, first));
    for (int i = 0; i < 5; ++i) {
        CacheStats stats;
        EXPECT_EQ(describe(run(storage, pkts, stats)), reference) << "run " << i;
        EXPECT_EQ(stats.flowsInCache, 0U);
    }
}

}  // namespace
}  // namespace rowprobe::storage
