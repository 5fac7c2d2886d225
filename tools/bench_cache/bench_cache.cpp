// rowprobe-bench-cache: the flow table alone, fed by the `gen` traffic model, next to what the
// machine allows for random memory access.
//
//   TrafficModel ──toParsed──▶ window of ParsedPackets (built once, untimed)
//        │                          │ timed: processBatch(64) per batch, export ring drained
//        │                          ▼
//        └─ warm-up: every flow inserted once   FlowTable<policy, line> (created by name through
//                                               the plugin registry: "cache;policy=..;hash=..")
//
// * No frames and no parser: only StoragePlugin::processBatch is timed (one virtual call per 64
//   packets, as in a worker), with the time stamp counter around each call (fenced; the cost of
//   an empty pair is subtracted). Each batch is first copied from the window into a 64-packet
//   array that stays in L1, as a worker's parsed packets do; the export ring is drained between
//   batches, untimed (the export thread's job).
// * The window (default 2^20 packets, ~112 MiB) is replayed for `--packets` with every timestamp
//   shifted by the window's span per pass, so flows stay alive across passes; the measurement
//   starts after all `flows` flows were inserted and one untimed pass.
// * Memory probe: dependent pointer chasing (latency), independent random line reads and
//   read-modify-writes, and prefetched batches of 64 "row line + 128-byte record" touches (the
//   table's access pattern) over a buffer as large as the table, allocated like the table
//   (2 MiB aligned, MADV_HUGEPAGE).
// * Results: a Markdown table on stdout (copied into docs/performance.md).
#include <sched.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cache/hash.hpp"
#include "cache/policy_registry.hpp"
#include "input/gen/traffic_model.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace {

using namespace rowprobe;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kUsage =
    "usage: rowprobe-bench-cache [options]\n"
    "\n"
    "Times the flow table alone (StoragePlugin::processBatch over pre-generated ParsedPackets "
    "from\n"
    "the gen traffic model, one thread) and probes random memory access on this machine.\n"
    "\n"
    "  --scenario LIST    deterministic,random,zipf (default: all three)\n"
    "  --gen NAME=OPTS    an extra scenario from gen options, e.g. 'scan=pattern=netscan'\n"
    "  --policy LIST      row policies (default: every registered policy)\n"
    "  --hash LIST        hash functions, or 'all' (default: xxh3)\n"
    "  --size N           log2 of the table's records (default 22)\n"
    "  --line L           slots per row (default 16)\n"
    "  --flows N          concurrent flows of random and zipf (default 1048576 = 2^20)\n"
    "  --skew S           Zipf exponent (default 1.0)\n"
    "  --packets N        timed packets per run (default 33554432 = 2^25)\n"
    "  --window N         pre-generated packets replayed (default 1048576)\n"
    "  --repeat N         runs per configuration; the table shows the median and the best (default "
    "3)\n"
    "  --cpu N            pin the thread to CPU N\n"
    "  --no-memprobe      skip the memory probe\n"
    "  --memprobe-only    only the memory probe\n"
    "  --probe-bytes N    memory probe buffer (default: the table's record bytes, 2^size * 128)\n";

[[noreturn]] void usageError(const std::string& what) {
    std::cerr << "rowprobe-bench-cache: error: " << what << "\n\n" << kUsage;
    std::exit(2);
}

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

struct Scenario {
    std::string name;
    std::string gen;
};

struct Args {
    std::vector<std::string> scenarios = {"deterministic", "random", "zipf"};
    std::vector<Scenario> extra;
    std::vector<std::string> policies;
    std::vector<std::string> hashes = {"xxh3"};
    unsigned size = 22;
    unsigned line = 16;
    std::uint64_t flows = 1 << 20;
    std::string skew = "1.0";
    std::uint64_t packets = std::uint64_t{1} << 25;
    std::uint64_t window = 1 << 20;
    unsigned repeat = 3;
    int cpu = -1;
    bool memprobe = true;
    bool tables = true;
    std::uint64_t probeBytes = 0;
};

std::uint64_t parseCount(const std::string& flag, const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long long v = std::stoull(text, &used, 0);
        if (used != text.size()) throw std::invalid_argument(text);
        return v;
    } catch (const std::exception&) {
        usageError(flag + " needs a non-negative integer, got '" + text + "'");
    }
}

Args parseArgs(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string opt = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usageError(opt + " needs a value");
            return argv[++i];
        };
        if (opt == "-h" || opt == "--help") {
            std::cout << kUsage;
            std::exit(0);
        } else if (opt == "--scenario") {
            a.scenarios = splitList(value());
        } else if (opt == "--gen") {
            const std::string v = value();
            const auto eq = v.find('=');
            if (eq == std::string::npos || eq == 0)
                usageError("--gen needs NAME=OPTIONS, got '" + v + "'");
            a.extra.push_back({v.substr(0, eq), v.substr(eq + 1)});
        } else if (opt == "--policy") {
            a.policies = splitList(value());
        } else if (opt == "--hash") {
            a.hashes = splitList(value());
        } else if (opt == "--size") {
            a.size = static_cast<unsigned>(parseCount(opt, value()));
        } else if (opt == "--line") {
            a.line = static_cast<unsigned>(parseCount(opt, value()));
        } else if (opt == "--flows") {
            a.flows = parseCount(opt, value());
        } else if (opt == "--skew") {
            a.skew = value();
        } else if (opt == "--packets") {
            a.packets = parseCount(opt, value());
        } else if (opt == "--window") {
            a.window = parseCount(opt, value());
        } else if (opt == "--repeat") {
            a.repeat = static_cast<unsigned>(std::max<std::uint64_t>(1, parseCount(opt, value())));
        } else if (opt == "--cpu") {
            a.cpu = static_cast<int>(parseCount(opt, value()));
        } else if (opt == "--no-memprobe") {
            a.memprobe = false;
        } else if (opt == "--memprobe-only") {
            a.tables = false;
        } else if (opt == "--probe-bytes") {
            a.probeBytes = parseCount(opt, value());
        } else {
            usageError("unknown option '" + opt + "'");
        }
    }
    if (a.policies.empty()) a.policies = storage::rowPolicyNames();
    if (a.hashes.size() == 1 && a.hashes[0] == "all") {
        a.hashes.clear();
        for (auto h : storage::kHashNames) a.hashes.emplace_back(h);
    }
    if (a.window < kMaxBatch) usageError("--window must be at least 64");
    if (a.probeBytes == 0) a.probeBytes = (std::uint64_t{1} << a.size) * 128;
    return a;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---- memory probe ----------------------------------------------------------------------------

struct alignas(64) Line {
    std::uint64_t word[8];
};

// A buffer allocated like the flow table's arrays: 2 MiB aligned, transparent huge pages.
class HugeBuffer {
public:
    explicit HugeBuffer(std::size_t bytes) : m_bytes(bytes) {
        constexpr std::size_t kAlign = std::size_t{2} << 20;
        const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
        m_data = std::aligned_alloc(kAlign, rounded);
        if (m_data == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        ::madvise(m_data, rounded, MADV_HUGEPAGE);
#endif
        std::memset(m_data, 0, rounded);
    }
    ~HugeBuffer() { std::free(m_data); }
    HugeBuffer(const HugeBuffer&) = delete;
    HugeBuffer& operator=(const HugeBuffer&) = delete;
    Line* lines() { return static_cast<Line*>(m_data); }
    std::size_t lineCount() const { return m_bytes / sizeof(Line); }

private:
    void* m_data = nullptr;
    std::size_t m_bytes = 0;
};

struct ProbeResult {
    double chaseNs = 0;     // dependent loads: ns per load
    double readM = 0;       // independent random line loads, M/s
    double rmwM = 0;        // independent random line read-modify-writes, M/s
    double tableLikeM = 0;  // prefetched batches of 64 × (row line + 128-byte record), M/s
};

std::uint64_t probeSink = 0;  // keeps the probes' loads alive

ProbeResult memoryProbe(std::size_t bytes) {
    ProbeResult r;
    HugeBuffer buf(bytes);
    Line* lines = buf.lines();
    const std::size_t n = std::bit_floor(buf.lineCount());
    const std::size_t mask = n - 1;

    {  // Sattolo's cycle: one random cycle through every line, followed by dependent loads.
        std::vector<std::uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0U);
        gen::Xoshiro256 rng(7);
        for (std::size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i)]);
        for (std::size_t i = 0; i < n; ++i) lines[order[i]].word[0] = order[(i + 1) % n];
        const std::size_t steps = 4'000'000;  // the cycle repeats when the buffer is small
        std::uint64_t p = order[0];
        for (std::size_t i = 0; i < std::min<std::size_t>(n, steps); ++i) p = lines[p].word[0];
        const auto t0 = Clock::now();
        for (std::size_t i = 0; i < steps; ++i) p = lines[p].word[0];
        r.chaseNs = seconds(Clock::now() - t0) * 1e9 / static_cast<double>(steps);
        probeSink += p;
    }
    constexpr std::size_t kOps = 20'000'000;
    auto lcg = [](std::uint64_t& x) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return x >> 20;
    };
    {
        std::uint64_t x = 1;
        std::uint64_t sum = 0;
        const auto t0 = Clock::now();
        for (std::size_t i = 0; i < kOps; ++i) sum += lines[lcg(x) & mask].word[1];
        r.readM = static_cast<double>(kOps) / seconds(Clock::now() - t0) / 1e6;
        probeSink += sum;
    }
    {
        std::uint64_t x = 2;
        const auto t0 = Clock::now();
        for (std::size_t i = 0; i < kOps; ++i) ++lines[lcg(x) & mask].word[1];
        r.rmwM = static_cast<double>(kOps) / seconds(Clock::now() - t0) / 1e6;
    }
    {
        // The table's pattern for one packet: one random "row" line in a region 1/32 of the
        // table (32-byte rows of 16 slots beside 16 × 128-byte records), then both lines of a
        // random 128-byte "record", prefetched for a batch of 64 before being updated.
        const std::size_t rowLines = std::max<std::size_t>(1, n / 64);
        const std::size_t recordPairs = n / 2;
        std::uint64_t x = 3;
        std::size_t rowIdx[kMaxBatch];
        std::size_t recIdx[kMaxBatch];
        const auto t0 = Clock::now();
        for (std::size_t done = 0; done < kOps; done += kMaxBatch) {
            for (std::size_t i = 0; i < kMaxBatch; ++i) {
                rowIdx[i] = lcg(x) % rowLines;
                recIdx[i] = 2 * (lcg(x) % recordPairs);
                __builtin_prefetch(&lines[rowIdx[i]], 0, 3);
                __builtin_prefetch(&lines[recIdx[i]], 1, 3);
                __builtin_prefetch(&lines[recIdx[i] + 1], 1, 3);
            }
            for (std::size_t i = 0; i < kMaxBatch; ++i) {
                const std::uint64_t tag = lines[rowIdx[i]].word[0];
                lines[recIdx[i]].word[0] += tag + 1;
                lines[recIdx[i] + 1].word[0] += 1;
            }
        }
        r.tableLikeM = static_cast<double>(kOps) / seconds(Clock::now() - t0) / 1e6;
    }
    return r;
}

// ---- table runs ------------------------------------------------------------------------------

struct RunResult {
    std::vector<double> passMpps;
    double mpps = 0;  // timed packets / time inside processBatch
    CacheStats before;
    CacheStats after;
    std::uint64_t timedPackets = 0;
    std::uint64_t drained = 0;
    std::uint64_t preemptedBatches = 0;  // left out of the timing
};

gen::GenPacket firstPacketOf(const gen::GenConfig& c, std::uint64_t serial, TimeNs ts) {
    gen::GenPacket p;
    p.tuple = gen::flowTuple(c, serial);
    p.serial = serial;
    p.ts = ts;
    const std::uint32_t headers = gen::headerLength(p.tuple);
    p.frameLen = std::max(c.size, headers);
    p.capLen = std::min(p.frameLen, std::max(c.snaplen, headers));
    p.tcpFlags = p.tuple.proto == 6 ? 0x02 : 0;
    return p;
}

// Time stamp counter reads fenced so the timed region neither starts early nor ends late.
inline std::uint64_t tscBegin() noexcept {
    _mm_lfence();
    return __rdtsc();
}
inline std::uint64_t tscEnd() noexcept {
    unsigned aux = 0;
    const std::uint64_t t = __rdtscp(&aux);
    _mm_lfence();
    return t;
}

// Cost of an empty tscBegin/tscEnd pair (subtracted from every timed batch).
std::uint64_t tscOverhead() {
    std::uint64_t best = ~std::uint64_t{0};
    for (int i = 0; i < 10000; ++i) {
        const std::uint64_t t0 = tscBegin();
        const std::uint64_t t1 = tscEnd();
        best = std::min(best, t1 - t0);
    }
    return best;
}

// TSC ticks per second, against the steady clock over ~200 ms.
double tscHz() {
    const auto w0 = Clock::now();
    const std::uint64_t t0 = tscBegin();
    while (Clock::now() - w0 < std::chrono::milliseconds(200)) {
    }
    const std::uint64_t t1 = tscEnd();
    return static_cast<double>(t1 - t0) / seconds(Clock::now() - w0);
}

// One table, warmed up, then `passes` timed passes over the window. Each batch of 64 is copied
// from the window into an array that stays in L1 (as a worker's parsed packets do), with its
// timestamps moved forward by one window span per pass; only processBatch is timed. The
// export ring is drained between batches, outside the timed region (the export thread's job).
RunResult runTable(const Args& args, const gen::GenConfig& config, const std::string& storage,
                   const std::vector<ParsedPacket>& window, TimeNs span, double hz,
                   std::uint64_t overhead) {
    RunResult res;
    auto table =
        Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, storage, "--storage");
    ExportRing ring(1 << 16);
    const std::atomic<bool> abandon{false};
    table->attach(ExportTarget{&ring, &abandon, 0});
    FlowRecord rec;
    auto drain = [&] {
        while (ring.tryPop(rec)) ++res.drained;
    };

    // Warm-up 1: every flow once, just before the window starts (for flows that live for the
    // whole run, i.e. packets-per-flow = 0).
    std::array<ParsedPacket, kMaxBatch> batch;
    if (config.packetsPerFlow == 0) {
        std::size_t n = 0;
        for (std::uint64_t s = 0; s < config.flows; ++s) {
            gen::toParsed(firstPacketOf(config, s, window.front().ts - 1), batch[n++]);
            if (n == kMaxBatch || s + 1 == config.flows) {
                table->processBatch(std::span<ParsedPacket>(batch.data(), n));
                drain();
                n = 0;
            }
        }
    }
    // A batch of 64 packets takes microseconds; one that takes longer than this was preempted
    // (the machine is shared) and is left out of the timing, not out of the table.
    const auto preempted = static_cast<std::uint64_t>(hz * 500e-6);
    // Pass k replays the window k spans later; adds the TSC ticks spent in processBatch and the
    // packets they cover.
    auto pass = [&](std::uint64_t k, std::uint64_t& ticks, std::uint64_t& packets) {
        const TimeNs offset = span * k;
        for (std::size_t i = 0; i < window.size(); i += kMaxBatch) {
            const std::size_t n = std::min(kMaxBatch, window.size() - i);
            std::memcpy(static_cast<void*>(batch.data()), window.data() + i,
                        n * sizeof(ParsedPacket));
            for (std::size_t j = 0; j < n; ++j) batch[j].ts += offset;
            const std::uint64_t t0 = tscBegin();
            table->processBatch(std::span<ParsedPacket>(batch.data(), n));
            const std::uint64_t t = tscEnd() - t0;
            if (t < preempted) {
                ticks += t > overhead ? t - overhead : 0;
                packets += n;
            } else {
                ++res.preemptedBatches;
            }
            drain();
        }
    };
    std::uint64_t ticks = 0;
    std::uint64_t packets = 0;
    pass(0, ticks, packets);  // warm-up 2: one untimed pass
    res.preemptedBatches = 0;

    res.before = table->stats();
    const std::uint64_t passes = std::max<std::uint64_t>(1, args.packets / window.size());
    std::uint64_t totalTicks = 0;
    std::uint64_t totalPackets = 0;
    for (std::uint64_t k = 1; k <= passes; ++k) {
        ticks = 0;
        packets = 0;
        pass(k, ticks, packets);
        totalTicks += ticks;
        totalPackets += packets;
        res.passMpps.push_back(static_cast<double>(packets) * hz / static_cast<double>(ticks) /
                               1e6);
    }
    res.after = table->stats();
    res.timedPackets = passes * window.size();
    res.mpps = static_cast<double>(totalPackets) * hz / static_cast<double>(totalTicks) / 1e6;
    // No flushAll: it would push every cached flow into the ring this thread drains (a full ring
    // blocks the producer). The table is simply destroyed.
    return res;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

std::string fmt(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string loadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string a;
    in >> a;
    return a.empty() ? "?" : a;
}

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string l;
    while (std::getline(in, l)) {
        if (l.rfind("model name", 0) == 0) return l.substr(l.find(':') + 2);
    }
    return "?";
}

std::string scenarioOptions(const Args& args, const std::string& name) {
    const std::string flows = std::to_string(args.flows);
    if (name == "deterministic") return "pattern=deterministic;tcp=1";
    if (name == "random") return "pattern=random;flows=" + flows;
    if (name == "zipf") return "pattern=zipf;flows=" + flows + ";skew=" + args.skew;
    usageError("unknown scenario '" + name +
               "' (deterministic, random, zipf, or --gen NAME=OPTIONS)");
}

int run(const Args& args) {
    if (args.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(args.cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
    }
    std::cout << "# rowprobe-bench-cache\n\nCPU: " << cpuModel() << ", load average at start "
              << loadAverage() << "\n\n";
    if (args.memprobe) {
        const ProbeResult p = memoryProbe(args.probeBytes);
        std::cout << "Memory probe over " << (args.probeBytes >> 20)
                  << " MiB (2 MiB aligned, THP advised):\n\n"
                  << "| access | result |\n|---|---|\n"
                  << "| dependent random loads (pointer chase) | " << fmt(p.chaseNs, 1)
                  << " ns per load |\n"
                  << "| independent random 64 B loads | " << fmt(p.readM, 1) << " M/s |\n"
                  << "| independent random 64 B read-modify-writes | " << fmt(p.rmwM, 1)
                  << " M/s |\n"
                  << "| table pattern: row line + 128 B record, prefetched by 64 | "
                  << fmt(p.tableLikeM, 1) << " M/s |\n\n";
    }
    if (!args.tables) return 0;

    const double hz = tscHz();
    const std::uint64_t overhead = tscOverhead();
    std::vector<Scenario> scenarios;
    for (const auto& s : args.scenarios) scenarios.push_back({s, scenarioOptions(args, s)});
    scenarios.insert(scenarios.end(), args.extra.begin(), args.extra.end());

    std::cout << "Timing: TSC at " << fmt(hz / 1e9, 3) << " GHz, " << overhead
              << " ticks per empty timer pair subtracted per batch\n\n";
    std::cout << "Table: 2^" << args.size << " records, line " << args.line << "; " << args.repeat
              << " runs of "
              << (std::max<std::uint64_t>(1, args.packets / args.window) * args.window)
              << " timed packets each (window " << args.window << ")\n\n"
              << "| scenario | policy | hash | flows in cache | Mpps median | Mpps best | ns/pkt | "
                 "hits | new flows | evictions | exports | preempted |\n"
              << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Scenario& sc : scenarios) {
        gen::GenConfig config =
            gen::parseGenString(sc.gen + ";packets=" + std::to_string(args.window), "--gen");
        std::vector<ParsedPacket> window;
        window.reserve(args.window);
        {
            gen::TrafficModel model(config);
            gen::GenPacket pkt;
            while (model.next(pkt)) {
                window.emplace_back();
                gen::toParsed(pkt, window.back());
            }
        }
        const TimeNs span = window.back().ts - window.front().ts + kNsPerSec / config.pps;
        for (const std::string& policy : args.policies) {
            for (const std::string& hash : args.hashes) {
                std::string storage = "cache;size=" + std::to_string(args.size);
                storage += ";line=" + std::to_string(args.line);
                storage += ";policy=";
                storage += policy;
                storage += ";hash=";
                storage += hash;
                storage += ";seed=1";
                std::vector<double> runs;
                double best = 0;
                std::uint64_t preemptedBatches = 0;
                RunResult last;
                for (unsigned r = 0; r < args.repeat; ++r) {
                    last = runTable(args, config, storage, window, span, hz, overhead);
                    runs.push_back(last.mpps);
                    preemptedBatches += last.preemptedBatches;
                    best = std::max(best,
                                    *std::max_element(last.passMpps.begin(), last.passMpps.end()));
                }
                const double med = median(runs);
                const double packets = static_cast<double>(last.timedPackets);
                const double hits = static_cast<double>(last.after.hits - last.before.hits);
                const double created =
                    static_cast<double>(last.after.flowsCreated - last.before.flowsCreated);
                const double evicted =
                    static_cast<double>(last.after.missEvict - last.before.missEvict);
                const double exported =
                    static_cast<double>(last.after.exportedTotal() - last.before.exportedTotal());
                std::cout << "| " << sc.name << " | " << policy << " | " << hash << " | "
                          << last.after.flowsInCache << " | " << fmt(med, 1) << " | "
                          << fmt(best, 1) << " | " << fmt(1e3 / med, 1) << " | "
                          << fmt(100 * hits / packets, 2) << "% | "
                          << fmt(100 * created / packets, 3) << "% | "
                          << fmt(100 * evicted / packets, 3) << "% | "
                          << fmt(100 * exported / packets, 3) << "% | " << preemptedBatches
                          << " |\n"
                          << std::flush;
            }
        }
    }
    std::cout << "\nload average at end " << loadAverage() << "\n";
    return probeSink == 42 ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parseArgs(argc, argv);
    try {
        return run(args);
    } catch (const ConfigError& e) {
        std::cerr << "rowprobe-bench-cache: error: " << e.render() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "rowprobe-bench-cache: error: " << e.what() << '\n';
        return 1;
    }
}
