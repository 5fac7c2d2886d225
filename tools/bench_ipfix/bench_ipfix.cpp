// bench_ipfix: measures the IPFIX encoder (ipfixprobe basic template) in M records/s on one
// core, by thread CPU time (robust on a shared machine) and by wall clock. Records are generated up
// front; the timed loop is IpfixEncoder::add + message assembly, with messages handed to a sink
// that only counts them (`--sink null`, default) or written to a file through the file transport
// (`--sink file`, default /dev/null). `--format` picks the encoding of each flow: `biflow`
// (ipfixprobe's RFC 5103 template, one record), `uniflow` (`ipfix;uniflow`: forward and, with
// reverse packets, reverse record) or `netflow9` (the netflow9 output's v9 uniflow records);
// figures are per flow, whatever the number of records it becomes.
//
//   bench_ipfix [--records N] [--rounds R] [--mtu BYTES] [--v6 PERCENT] [--sink null|file]
//               [--out PATH] [--cpu N] [--format biflow|uniflow|netflow9]
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "output/common/ipfix_encoder.hpp"
#include "output/common/ipfix_transport.hpp"
#include "output/netflow9/netflow9_encoder.hpp"

namespace {

using namespace rowprobe;
using namespace rowprobe::output;

struct CountingSink final : MessageSink {
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
    std::uint64_t records = 0;
    std::uint8_t checksum = 0;
    bool sendMessage(std::span<const std::uint8_t> m, std::uint32_t n, bool) override {
        ++messages;
        bytes += m.size();
        records += n;
        checksum = static_cast<std::uint8_t>(checksum ^ m[m.size() - 1]);  // touch the bytes
        return true;
    }
};

std::vector<FlowRecord> makeRecords(std::size_t n, unsigned v6Percent) {
    std::mt19937_64 rng(42);
    std::vector<FlowRecord> records(n);
    for (auto& r : records) {
        const bool v6 = rng() % 100 < v6Percent;
        r.ipVersion = v6 ? 6 : 4;
        for (auto* a : {&r.srcAddr, &r.dstAddr}) {
            const std::uint64_t x = rng();
            const std::uint64_t y = rng();
            std::memcpy(a->data(), &x, 8);
            std::memcpy(a->data() + 8, &y, 8);
            if (!v6) {
                std::memset(a->data(), 0, 10);
                (*a)[10] = 0xFF;
                (*a)[11] = 0xFF;
            }
        }
        r.srcPort = static_cast<std::uint16_t>(rng());
        r.dstPort = static_cast<std::uint16_t>(rng());
        r.proto = rng() % 2 ? 6 : 17;
        r.packets = {static_cast<std::uint32_t>(rng() % 1000),
                     static_cast<std::uint32_t>(rng() % 1000)};
        r.bytes = {rng() % 1000000, rng() % 1000000};
        r.timeFirst = 1700000000ULL * kNsPerSec + rng() % (100 * kNsPerSec);
        r.timeLast = r.timeFirst + rng() % (10 * kNsPerSec);
        r.tcpFlags = {static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng())};
        r.endReason = static_cast<EndReason>(1 + rng() % 5);
    }
    return records;
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: bench_ipfix [--records N] [--rounds R] [--mtu BYTES] [--v6 PERCENT]\n"
                 "                   [--sink null|file] [--out PATH] [--cpu N]\n"
                 "                   [--format biflow|uniflow|netflow9]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t count = 1'000'000;
    unsigned rounds = 10;
    std::size_t mtu = 1458;
    unsigned v6Percent = 10;
    std::string sinkName = "null";
    std::string out = "/dev/null";
    int cpu = -1;
    std::string format = "biflow";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage();
        const char* v = argv[++i];
        if (a == "--records")
            count = std::strtoull(v, nullptr, 10);
        else if (a == "--rounds")
            rounds = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
        else if (a == "--mtu")
            mtu = std::strtoull(v, nullptr, 10);
        else if (a == "--v6")
            v6Percent = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
        else if (a == "--sink")
            sinkName = v;
        else if (a == "--out")
            out = v;
        else if (a == "--cpu")
            cpu = std::atoi(v);
        else if (a == "--format")
            format = v;
        else
            usage();
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
    }
    const auto records = makeRecords(count, v6Percent);

    CountingSink counting;
    std::unique_ptr<FileTransport> file;
    MessageSink* sink = &counting;
    if (sinkName == "file") {
        file = std::make_unique<FileTransport>(out);
        sink = file.get();
    } else if (sinkName != "null") {
        usage();
    }
    if (format != "biflow" && format != "uniflow" && format != "netflow9") usage();
    EncoderConfig config;
    config.maxMessageSize = mtu;
    config.uniflow = format == "uniflow";
    IpfixEncoder encoder(config, config.uniflow ? ipfixUniflowFields() : ipfixBasicFields(), *sink);
    Netflow9Config v9config;
    v9config.maxPacketSize = mtu;
    Netflow9Encoder v9(v9config, *sink);
    const bool netflow9 = format == "netflow9";
    auto encodeAll = [&](std::span<const FlowRecord> flows) {
        if (netflow9) {
            for (const FlowRecord& r : flows) v9.add(r);
            v9.flush();
        } else {
            encoder.add(flows);
            encoder.flush();
        }
    };

    encodeAll(
        std::span<const FlowRecord>(records.data(), std::min<std::size_t>(records.size(), 10000)));

    // Wall time, and the CPU time of this thread: on a shared machine the second still says
    // what one core does when the encoder has it to itself.
    auto cpuSeconds = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
    };
    double best = 0;
    double total = 0;
    double cpuTotal = 0;
    for (unsigned r = 0; r < rounds; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpuSeconds();
        encodeAll(records);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cpuTotal += cpuSeconds() - c0;
        const double mps = static_cast<double>(records.size()) / s / 1e6;
        best = std::max(best, mps);
        total += s;
    }
    if (file) file->finish();
    const double n = static_cast<double>(records.size()) * rounds;
    const double mean = n / total / 1e6;
    const double perCpu = n / cpuTotal / 1e6;
    std::printf("%s encoder: %zu flows x %u rounds, mtu %zu, %u%% IPv6, sink %s\n", format.c_str(),
                count, rounds, mtu, v6Percent, sinkName.c_str());
    std::printf("  %.2f M flows per CPU-second on one core (%.1f ns/flow)\n", perCpu, 1e3 / perCpu);
    std::printf("  wall clock: mean %.2f M flows/s, best round %.2f M flows/s\n", mean, best);
    std::printf(
        "  %llu messages, %.1f MB\n",
        static_cast<unsigned long long>(netflow9 ? v9.packetsSent() : encoder.messagesSent()),
        static_cast<double>(counting.bytes + (file ? file->stats().bytes : 0)) / 1e6);
    return counting.checksum == 0xFF ? 3 : 0;  // keep the checksum observable
}
