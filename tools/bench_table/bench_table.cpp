// bench_table: feeds synthetic ParsedPackets (N flows, seeded) through the `cache` storage plugin
// exactly as a worker does (batches of 64, one processBatch call each) and reports the table's
// throughput. No parsing and no output: the flow table alone.
//
//   bench_table [--flows N] [--packets M] [--storage 'cache;...'] [--seed S] [--zipf]
//               [--process 'PLUGIN;...']...
//
// Default: 10 000 flows, 20 M packets, `cache;seed=1` (2^17 records, line 16, lru, xxh3),
// uniformly random flow per packet (the cache-unfriendly case), 1 µs of packet time per packet.
// --process (repeatable) enables process plugins on the table, as `-p` does: the worker's cost
// of a plugin's hooks, alone on one thread, without the input and export threads beside it
// (their plugin data is written and then dropped: the table has no plugin-data ring here).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace {

using namespace rowprobe;

struct Args {
    std::size_t flows = 10000;
    std::size_t packets = 20'000'000;
    std::string storage = "cache;seed=1";
    std::vector<std::string> process;
    std::uint64_t seed = 1;
    bool zipf = false;
};

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: bench_table [--flows N] [--packets M] [--storage 'cache;...'] [--seed S] "
                 "[--zipf] [--process 'PLUGIN;...']...\n");
    std::exit(2);
}

Args parseArgs(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string opt = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (opt == "--flows") {
            a.flows = std::stoull(value());
        } else if (opt == "--packets") {
            a.packets = std::stoull(value());
        } else if (opt == "--storage") {
            a.storage = value();
        } else if (opt == "--seed") {
            a.seed = std::stoull(value());
        } else if (opt == "--zipf") {
            a.zipf = true;
        } else if (opt == "--process") {
            a.process.push_back(value());
        } else {
            usage();
        }
    }
    if (a.flows == 0 || a.packets == 0) usage();
    return a;
}

/// One packet per flow: random IPv4 5-tuples, canonical key, random direction bit per use.
std::vector<ParsedPacket> makeFlows(std::size_t n, std::mt19937_64& rng) {
    std::vector<ParsedPacket> flows(n);
    for (auto& p : flows) {
        p.key.addrA[10] = 0xff;
        p.key.addrA[11] = 0xff;
        p.key.addrB = p.key.addrA;
        const auto a = static_cast<std::uint32_t>(rng());
        const auto b = static_cast<std::uint32_t>(rng());
        std::memcpy(p.key.addrA.data() + 12, &a, 4);
        std::memcpy(p.key.addrB.data() + 12, &b, 4);
        p.key.portA = static_cast<std::uint16_t>(rng());
        p.key.portB = static_cast<std::uint16_t>(rng());
        p.key.proto = rng() % 2 ? 6 : 17;
        p.key.ipVersion = 4;
        if (std::memcmp(p.key.addrA.data(), p.key.addrB.data(), 16) > 0)
            std::swap(p.key.addrA, p.key.addrB);
        p.ipLen = static_cast<std::uint32_t>(64 + rng() % 1400);
        p.wireLen = p.ipLen + 14;
        p.ttl = 64;
        p.hasPorts = true;
        p.tcpFlags = p.key.proto == 6 ? 0x10 : 0;
    }
    return flows;
}

/// The flow of each packet, precomputed so the timed loop only copies packets.
std::vector<std::uint32_t> makeSequence(const Args& a, std::mt19937_64& rng) {
    const std::size_t n = std::min<std::size_t>(a.packets, 1 << 22);  // replayed cyclically
    std::vector<std::uint32_t> seq(n);
    if (a.zipf) {
        std::vector<double> cdf(a.flows);
        double sum = 0;
        for (std::size_t i = 0; i < a.flows; ++i) cdf[i] = sum += 1.0 / static_cast<double>(i + 1);
        std::uniform_real_distribution<double> u(0, sum);
        for (auto& s : seq) {
            s = static_cast<std::uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) -
                                           cdf.begin());
        }
    } else {
        for (auto& s : seq) s = static_cast<std::uint32_t>(rng() % a.flows);
    }
    return seq;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parseArgs(argc, argv);
    std::vector<std::unique_ptr<ProcessPlugin>> process;  // outlive the table
    std::unique_ptr<StoragePlugin> table;
    try {
        table = Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, args.storage,
                                                             "--storage");
        for (const std::string& p : args.process) {
            process.push_back(
                Registry::instance().createAs<ProcessPlugin>(PluginKind::Process, p, "--process"));
        }
        std::vector<ProcessPlugin*> enabled;
        for (auto& p : process) enabled.push_back(p.get());
        if (!enabled.empty() && !table->enableProcessPlugins(enabled)) {
            std::fprintf(stderr, "bench_table: '%s' takes no process plugins\n",
                         args.storage.c_str());
            return 2;
        }
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "bench_table: %s\n", e.render().c_str());
        return 2;
    }
    // The export side: a thread draining the ring, as the pipeline's export thread does.
    ExportRing ring(1 << 16);
    std::atomic<bool> abandon{false};
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> exported{0};
    // The plugin data travels as in the pipeline (written by the plugins' write hooks, copied
    // into an ExtRing, released by the consumer), so the flush's cost includes it.
    ExtRing ext(std::size_t{16} << 20);
    table->attach(ExportTarget{.ring = &ring, .abandon = &abandon, .queue = 0, .ext = &ext});
    std::thread exporter([&] {
        FlowRecord rec;
        std::uint64_t n = 0;
        auto take = [&] {
            if (rec.extLen != 0) ext.releaseThrough(rec.ext, rec.extLen);
            ++n;
        };
        for (;;) {
            if (ring.tryPop(rec)) {
                take();
            } else if (done.load(std::memory_order_acquire)) {
                while (ring.tryPop(rec)) take();
                break;
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        }
        exported = n;
    });

    std::mt19937_64 rng(args.seed);
    const std::vector<ParsedPacket> flows = makeFlows(args.flows, rng);
    const std::vector<std::uint32_t> seq = makeSequence(args, rng);
    std::vector<std::uint8_t> dirs(seq.size());
    for (auto& d : dirs) d = static_cast<std::uint8_t>(rng() & 1);

    std::array<ParsedPacket, kMaxBatch> batch;
    TimeNs ts = 1'700'000'000ULL * kNsPerSec;
    auto run = [&](std::size_t packets) {
        std::size_t at = 0;
        for (std::size_t sent = 0; sent < packets;) {
            const std::size_t n = std::min(kMaxBatch, packets - sent);
            for (std::size_t i = 0; i < n; ++i) {
                // The driver's own random read of the flow pool is prefetched, so the benchmark
                // measures the table rather than the generator.
                __builtin_prefetch(&flows[seq[(at + 16) % seq.size()]]);
                ParsedPacket& p = batch[i];
                p = flows[seq[at]];
                p.fromA = dirs[at] != 0;
                p.ts = ts += 1000;  // 1 µs per packet
                at = at + 1 == seq.size() ? 0 : at + 1;
            }
            table->processBatch(std::span<ParsedPacket>(batch.data(), n));
            sent += n;
        }
    };

    auto cpuNow = [] {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
    };
    run(std::min<std::size_t>(args.packets, 1'000'000));  // warm up: fill the table, fault pages in
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpuNow();
    run(args.packets);
    const double c1 = cpuNow();
    const auto t1 = std::chrono::steady_clock::now();
    const std::uint64_t cached = table->stats().flowsInCache;
    const auto f0 = std::chrono::steady_clock::now();
    const double fc0 = cpuNow();
    table->flushAll();
    const double flushCpu = cpuNow() - fc0;
    const double flushWall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    done.store(true, std::memory_order_release);
    exporter.join();

    const double sec = std::chrono::duration<double>(t1 - t0).count();
    const CacheStats st = table->stats();
    std::printf("storage   %s\n", args.storage.c_str());
    for (const std::string& p : args.process) std::printf("process   %s\n", p.c_str());
    std::printf("flows     %zu (%s)\n", args.flows, args.zipf ? "zipf" : "uniform");
    std::printf("packets   %zu in %.3f s\n", args.packets, sec);
    const double cpu = c1 - c0;
    const auto packets = static_cast<double>(args.packets);
    std::printf(
        "rate      %.2f Mpps wall (%.1f ns/packet), %.2f Mpps per CPU-second (%.1f ns/packet)\n",
        packets / sec / 1e6, sec * 1e9 / packets, packets / cpu / 1e6, cpu * 1e9 / packets);
    std::printf(
        "          (the CPU-time rate excludes time the thread was descheduled on a busy host)\n");
    std::printf(
        "hits      %llu  missFree %llu  missEvict %llu  missReclaim %llu  mean position %.2f\n",
        static_cast<unsigned long long>(st.hits), static_cast<unsigned long long>(st.missFree),
        static_cast<unsigned long long>(st.missEvict),
        static_cast<unsigned long long>(st.missReclaim), st.hitPositionMean());
    std::printf("exported  %llu records\n", static_cast<unsigned long long>(exported.load()));
    const double flushed = static_cast<double>(std::max<std::uint64_t>(cached, 1));
    std::printf("flush     %llu flows in %.3f s wall, %.3f s CPU (%.1f ns/flow CPU)\n",
                static_cast<unsigned long long>(cached), flushWall, flushCpu,
                flushCpu * 1e9 / flushed);
    return 0;
}
