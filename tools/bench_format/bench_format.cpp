// bench_format: the cost of the text outputs' formatting. Formats N flow records through the
// json and text output plugins (and the ipfix one as a yardstick) into files (default
// /dev/null) and prints, per output, ns/record and MB/s by the thread's CPU time (robust on a
// shared machine; wall time is printed too). Records are built up front, a realistic mix:
// IPv4 and IPv6 (addresses with and without zero runs), TCP, UDP and ICMP, half with MAC
// addresses, times that advance like a sweep's exports, and a share of records carrying
// process-plugin data (http strings, pstats-like arrays of 30 lengths, times and directions,
// passivedns names and addresses) the way the flow table exports them.
//
//   bench_format [--records N] [--rounds R] [--v6 PERCENT] [--plugins PERCENT]
//                [--outputs json,text,ipfix] [--out PATH] [--cpu N]
//   bench_format --process 'PLUGIN;...' [--process ...] [--records N] ...
//   bench_format --primitives [--cpu N]
//
// `--process` replaces the mix by records that a real flow table (`cache`) with those real
// process plugins exported at its final flush (as at the end of a capture): N IPv4 flows,
// half TCP with SYN/ACK/PSH/FIN flags, of 1-13 packets (7 on average; a third of them one-way)
// of 40-1500 bytes, 0-500 ms apart. Every record then carries each plugin's instance, so this
// times what the final flush of the NFStream benchmark (`flowstats;splt=10`) formats.
//
// Each round formats every record once through each output (outputs interleaved round by
// round); the median round is reported. `--primitives` instead times the formatting functions
// of rowprobe/format.hpp alone (ns per call, median of 9 rounds over 65 536 values each).
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fake_plugins.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace {

using namespace rowprobe;
using namespace rowprobe::test::plugins;

struct Workload {
    std::vector<FlowRecord> records;
    std::vector<std::uint8_t> arena;  ///< all records' plugin data, back to back
    std::size_t withPlugins = 0;
};

std::array<std::uint8_t, 16> ipv4(std::uint32_t a) {
    std::array<std::uint8_t, 16> x{};
    x[10] = x[11] = 0xFF;
    for (int i = 0; i < 4; ++i) x[12 + i] = static_cast<std::uint8_t>(a >> (24 - 8 * i));
    return x;
}

/// An IPv6 address as they come: global unicast with a zero run, link-local, or full.
std::array<std::uint8_t, 16> ipv6(std::mt19937_64& rng) {
    std::array<std::uint8_t, 16> x{};
    const std::uint64_t r = rng();
    const std::uint64_t s = rng();
    std::memcpy(x.data(), &r, 8);
    std::memcpy(x.data() + 8, &s, 8);
    switch (rng() % 3) {
        case 0:  // 2001:db8:xxxx::yy
            x[0] = 0x20, x[1] = 0x01, x[2] = 0x0d, x[3] = 0xb8;
            std::memset(x.data() + 6, 0, 9);
            break;
        case 1:  // fe80::xxxx:xxxx:xxxx:xxxx
            x[0] = 0xfe, x[1] = 0x80;
            std::memset(x.data() + 2, 0, 6);
            break;
        default:  // 2a00:xxxx:... with no zero run
            x[0] = 0x2a, x[1] = 0x00;
            break;
    }
    return x;
}

std::string hostName(std::mt19937_64& rng) {
    static const char* const kHosts[] = {"www.example.com", "cdn.example.net",
                                         "api.service.example.org", "a.b.c.d.example",
                                         "static.content.delivery.example.com"};
    return kHosts[rng() % std::size(kHosts)];
}

Workload makeWorkload(std::size_t n, unsigned v6Percent, unsigned pluginPercent) {
    std::mt19937_64 rng(42);
    Workload w;
    w.records.resize(n);
    std::vector<std::size_t> extAt(n);  // where a record's plugin data starts in the arena
    const TimeNs start = 1700000000ULL * kNsPerSec;
    for (std::size_t i = 0; i < n; ++i) {
        FlowRecord& r = w.records[i];
        const bool v6 = rng() % 100 < v6Percent;
        r.ipVersion = v6 ? 6 : 4;
        r.srcAddr = v6 ? ipv6(rng) : ipv4(static_cast<std::uint32_t>(rng()));
        r.dstAddr = v6 ? ipv6(rng) : ipv4(static_cast<std::uint32_t>(rng()));
        const auto kind = static_cast<unsigned>(rng() % 10);
        r.proto = kind < 6 ? 6 : kind < 9 ? 17 : (v6 ? 58 : 1);
        if (r.proto == 6 || r.proto == 17) {
            r.srcPort = static_cast<std::uint16_t>(1024 + rng() % 64000);
            r.dstPort = static_cast<std::uint16_t>(rng() % 2 ? 443 : rng() % 1024);
        } else {
            r.icmpTypeCode[0] = static_cast<std::uint16_t>(rng() % 2 ? 0x0800 : 0);
        }
        if (rng() % 2 != 0) {
            for (auto* m : {&r.srcMac, &r.dstMac}) {
                for (auto& b : *m) b = static_cast<std::uint8_t>(rng());
            }
        }
        r.vlan = static_cast<std::uint16_t>(rng() % 4 == 0 ? rng() % 4095 : 0);
        r.packets = {static_cast<std::uint32_t>(1 + rng() % 2000),
                     static_cast<std::uint32_t>(rng() % 2000)};
        r.bytes = {r.packets[0] * (40 + rng() % 1460), r.packets[1] * (40 + rng() % 1460)};
        // A sweep exports in time order, about 100 k records per second of traffic; flows
        // began up to 30 s earlier.
        r.timeLast = start + i * 10'000 + rng() % 10'000;
        r.timeFirst = r.timeLast - rng() % (30 * kNsPerSec);
        r.tcpFlags = {static_cast<std::uint8_t>(r.proto == 6 ? rng() : 0),
                      static_cast<std::uint8_t>(r.proto == 6 ? rng() : 0)};
        r.ttl = {static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng())};
        r.endReason = static_cast<EndReason>(1 + rng() % 5);
        if (rng() % 100 < pluginPercent) {
            auto inst = std::make_unique<Instances>();  // kMaxPluginData: copied out below
            if (r.proto == 6) {
                if (rng() % 2 != 0) inst->http(0, rng() % 4 ? "GET" : "POST", hostName(rng), 200);
                std::vector<std::uint16_t> lengths(30);
                std::vector<TimeNs> times(30);
                std::vector<std::int8_t> dirs(30);
                for (std::size_t k = 0; k < 30; ++k) {
                    lengths[k] = static_cast<std::uint16_t>(rng() % 1500);
                    times[k] = r.timeFirst + k * 1'000'000 + rng() % 1000;
                    dirs[k] = static_cast<std::int8_t>(rng() % 2 ? 1 : -1);
                }
                inst->stats(1, lengths, times, dirs);
            } else {
                inst->dns(2, ipv4(static_cast<std::uint32_t>(rng())),
                          static_cast<std::uint32_t>(rng() % 86400),
                          static_cast<std::uint16_t>(rng()), hostName(rng));
            }
            inst->attach(r);
            extAt[i] = w.arena.size();
            w.arena.insert(w.arena.end(), r.ext, r.ext + r.extLen);
            ++w.withPlugins;
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (w.records[i].extLen != 0) w.records[i].ext = w.arena.data() + extAt[i];
    }
    return w;
}

/// Records as a `cache` table with `plugins` exports them at its final flush: n synthetic IPv4
/// flows (see the header), their packets sent flow after flow. The plugin data is copied into
/// the workload's arena.
Workload tableWorkload(std::size_t n, std::span<ProcessPlugin* const> plugins) {
    std::unique_ptr<StoragePlugin> table = Registry::instance().createAs<StoragePlugin>(
        PluginKind::Storage,
        "cache;active=31536000;inactive=31536000;size=" + std::to_string(std::bit_width(n) + 1),
        "-s");
    if (!table->enableProcessPlugins(plugins)) {
        std::fprintf(stderr, "bench_format: the cache storage takes no process plugins\n");
        std::exit(2);
    }
    // A thread takes the records as the export thread would: copies each one's plugin data into
    // the arena, then releases it from the ring.
    ExportRing ring(std::size_t{1} << 16);
    ExtRing ext(std::size_t{16} << 20);
    const std::atomic<bool> abandon{false};
    std::atomic<bool> done{false};
    Workload w;
    std::vector<std::size_t> extAt;
    std::thread drain([&] {
        FlowRecord r;
        for (bool last = false; !last;) {
            last = done.load(std::memory_order_acquire);
            while (ring.tryPop(r)) {
                extAt.push_back(w.arena.size());
                w.arena.insert(w.arena.end(), r.ext, r.ext + r.extLen);
                if (r.extLen != 0) ext.releaseThrough(r.ext, r.extLen);
                w.withPlugins += r.extLen != 0 ? 1 : 0;
                w.records.push_back(r);
            }
            if (!last) std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    table->attach(ExportTarget{.ring = &ring, .abandon = &abandon, .queue = 0, .ext = &ext});
    std::mt19937_64 rng(7);
    TimeNs ts = 1700000000ULL * kNsPerSec;
    std::vector<ParsedPacket> batch;
    for (std::size_t f = 0; f < n; ++f) {
        ParsedPacket p{};
        p.key.ipVersion = 4;
        p.key.addrA = ipv4(static_cast<std::uint32_t>(rng()));
        p.key.addrB = ipv4(static_cast<std::uint32_t>(rng()));
        if (std::memcmp(p.key.addrA.data(), p.key.addrB.data(), 16) > 0)
            std::swap(p.key.addrA, p.key.addrB);
        p.key.portA = static_cast<std::uint16_t>(1024 + rng() % 60000);
        p.key.portB = static_cast<std::uint16_t>(rng() % 2 ? 443 : 53);
        p.key.proto = rng() % 2 ? 6 : 17;
        p.hasPorts = true;
        p.ttl = 64;
        const bool oneWay = rng() % 3 == 0;
        const std::size_t packets = 1 + rng() % 13;
        const bool initiator = rng() % 2 != 0;
        for (std::size_t k = 0; k < packets; ++k) {
            const bool forward = k == 0 || oneWay || rng() % 10 < 6;
            p.fromA = forward == initiator;
            p.ipLen = static_cast<std::uint32_t>(40 + rng() % 1461);
            p.wireLen = p.ipLen + 14;
            p.tcpFlags = p.key.proto != 6   ? 0
                         : k == 0           ? 0x02
                         : k + 1 == packets ? 0x11
                                            : static_cast<std::uint8_t>(rng() % 2 ? 0x10 : 0x18);
            ts += 1 + rng() % 500'000'000;
            p.ts = ts;
            batch.push_back(p);
            if (batch.size() == kMaxBatch) {
                table->processBatch(batch);
                batch.clear();
            }
        }
    }
    if (!batch.empty()) table->processBatch(batch);
    table->flushAll();
    done.store(true, std::memory_order_release);
    drain.join();
    for (std::size_t i = 0; i < w.records.size(); ++i) {
        FlowRecord& r = w.records[i];
        r.ext = r.extLen != 0 ? w.arena.data() + extAt[i] : nullptr;
    }
    return w;
}

double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/// ns per call of each formatting primitive on 65 536 varied values (CPU time, median of 9).
int benchPrimitives() {
    constexpr std::size_t kValues = 1 << 16;
    std::mt19937_64 rng(3);
    std::vector<std::array<std::uint8_t, 16>> v4(kValues);
    std::vector<std::array<std::uint8_t, 16>> v6(kValues);
    std::vector<std::array<std::uint8_t, 6>> macs(kValues);
    std::vector<TimeNs> times(kValues);
    std::vector<std::uint64_t> numbers(kValues);
    TimeNs t = 1700000000ULL * kNsPerSec;
    for (std::size_t i = 0; i < kValues; ++i) {
        v4[i] = ipv4(static_cast<std::uint32_t>(rng()));
        v6[i] = ipv6(rng);
        for (auto& b : macs[i]) b = static_cast<std::uint8_t>(rng());
        t += rng() % 20'000'000;  // ~100 k values per second of traffic
        times[i] = t;
        numbers[i] = rng() >> (rng() % 64);  // every digit count
    }
    char buf[64];
    std::size_t sink = 0;
    const auto bench = [&](const char* name, auto format) {
        std::vector<double> ns;
        for (int round = 0; round < 9; ++round) {
            const double c0 = threadCpuSeconds();
            for (std::size_t i = 0; i < kValues; ++i) sink += format(i) - buf;
            ns.push_back((threadCpuSeconds() - c0) * 1e9 / kValues);
        }
        std::printf("%-28s %6.1f ns\n", name, median(ns));
    };
    bench("formatIp IPv4", [&](std::size_t i) { return formatIp(buf, v4[i], true); });
    bench("formatIp IPv6", [&](std::size_t i) { return formatIp(buf, v6[i], false); });
    bench("formatTimeIso 9 decimals", [&](std::size_t i) { return formatTimeIso(buf, times[i]); });
    bench("formatUint", [&](std::size_t i) { return formatUint(buf, numbers[i]); });
    bench("formatMac", [&](std::size_t i) { return formatMac(buf, macs[i]); });
    return sink == 0 ? 1 : 0;  // (uses the results)
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: bench_format [--records N] [--rounds R] [--v6 PERCENT] "
                 "[--plugins PERCENT]\n"
                 "                    [--outputs json,text,ipfix] [--out PATH] [--cpu N]\n"
                 "                    [--threads N] [--batch N] [--process 'PLUGIN;...']...\n"
                 "       bench_format --primitives [--cpu N]\n");
    std::exit(2);
}

struct Bench {
    std::string name;
    std::unique_ptr<OutputPlugin> output;
    std::vector<double> cpu;
    std::vector<double> wall;
    std::uint64_t bytesPerRound = 0;
};

}  // namespace

int main(int argc, char** argv) {
    std::size_t count = 200'000;
    unsigned rounds = 7;
    unsigned v6Percent = 20;
    unsigned pluginPercent = 30;
    std::string outputs = "json,text,ipfix";
    std::string out = "/dev/null";
    int cpu = -1;
    unsigned threads = 1;
    std::size_t batch = 256;
    bool primitives = false;
    std::vector<std::string> process;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--primitives") {
            primitives = true;
            continue;
        }
        if (i + 1 >= argc) usage();
        const char* v = argv[++i];
        if (a == "--records")
            count = std::strtoull(v, nullptr, 10);
        else if (a == "--rounds")
            rounds = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
        else if (a == "--v6")
            v6Percent = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
        else if (a == "--plugins")
            pluginPercent = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
        else if (a == "--outputs")
            outputs = v;
        else if (a == "--out")
            out = v;
        else if (a == "--cpu")
            cpu = std::atoi(v);
        else if (a == "--threads")
            threads = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
        else if (a == "--batch")
            batch = std::max<std::size_t>(1, std::strtoull(v, nullptr, 10));
        else if (a == "--process")
            process.emplace_back(v);
        else
            usage();
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
    }
    if (primitives) return benchPrimitives();
    const FakePlugin http("http", kHttpFields);
    const FakePlugin stats("pstats", kStatsFields);
    const FakePlugin dns("passivedns", kDnsFields);
    std::vector<const ProcessPlugin*> plugins = {&http, &stats, &dns};
    std::vector<std::unique_ptr<ProcessPlugin>> real;  // --process: outlive the outputs
    Workload w;
    try {
        if (process.empty()) {
            w = makeWorkload(count, v6Percent, pluginPercent);
        } else {
            std::vector<ProcessPlugin*> enabled;
            for (const std::string& spec : process) {
                real.push_back(Registry::instance().createAs<ProcessPlugin>(PluginKind::Process,
                                                                            spec, "--process"));
                enabled.push_back(real.back().get());
            }
            plugins.assign(enabled.begin(), enabled.end());
            w = tableWorkload(count, enabled);
            count = w.records.size();
        }
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "bench_format: %s\n", e.render().c_str());
        return 2;
    }

    std::vector<Bench> benches;
    for (std::size_t pos = 0; pos <= outputs.size();) {
        const std::size_t comma = std::min(outputs.find(',', pos), outputs.size());
        const std::string name = outputs.substr(pos, comma - pos);
        pos = comma + 1;
        if (name != "json" && name != "text" && name != "ipfix") usage();
        Bench b;
        b.name = name;
        std::string spec = name;
        spec += ";file=";
        spec += out;
        if (name != "ipfix") spec += ";threads=" + std::to_string(threads);
        b.output = Registry::instance().createAs<OutputPlugin>(PluginKind::Output, spec, "-o");
        b.output->setProcessPlugins(plugins);
        b.output->write(std::span<const FlowRecord>(w.records).first(
            std::min<std::size_t>(count, 10'000)));  // warm-up
        b.output->flush();
        benches.push_back(std::move(b));
    }
    const std::span<const FlowRecord> records(w.records);
    for (unsigned round = 0; round < rounds; ++round) {
        for (Bench& b : benches) {
            const std::uint64_t bytes0 = b.output->stats().bytes;
            const auto t0 = std::chrono::steady_clock::now();
            const double c0 = threadCpuSeconds();
            for (std::size_t i = 0; i < records.size(); i += batch) {
                b.output->write(records.subspan(i, std::min(batch, records.size() - i)));
            }
            b.output->flush();
            b.cpu.push_back(threadCpuSeconds() - c0);
            b.wall.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            b.bytesPerRound = b.output->stats().bytes - bytes0;
        }
    }
    std::printf(
        "%zu records (%s, %zu with plugin data), batches of %zu, %u json/text "
        "thread(s), %u rounds, median round\n",
        count, process.empty() ? (std::to_string(v6Percent) + "% IPv6").c_str() : "from the table",
        w.withPlugins, batch, threads, rounds);
    if (threads > 1)
        std::printf(
            "(ns/rec and MB/s count the calling thread's CPU only: read the wall column)\n");
    std::printf("%-6s %10s %10s %10s %12s\n", "output", "ns/rec", "MB/s", "wall ns/rec",
                "bytes/rec");
    for (const Bench& b : benches) {
        const double c = median(b.cpu);
        const double n = static_cast<double>(count);
        std::printf("%-6s %10.1f %10.1f %10.1f %12.1f\n", b.name.c_str(), c * 1e9 / n,
                    static_cast<double>(b.bytesPerRound) / c / 1e6, median(b.wall) * 1e9 / n,
                    static_cast<double>(b.bytesPerRound) / n);
    }
    return 0;
}
