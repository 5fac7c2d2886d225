// bench_kafka: records per second through the `kafka` output, one probe's export thread.
//
//   bench_kafka [--brokers HOST:PORT | --mock BROKERS] [--format json|ipfix]
//               [--key none|flow|community-id] [--records N] [--options 'opt=v;...']
//
// Records are generated up front (distinct flows, 20% IPv6). The timed part is the export
// thread's work: KafkaOutput::write in batches of 1024 records (the pipeline's export batch),
// which formats, keys and queues every message in librdkafka; reported by thread CPU time and
// by wall clock. Then finish() waits until the brokers acknowledged everything: records / (wall
// time from the first write to the last acknowledgement) is the delivered rate. `--mock` runs
// librdkafka's mock cluster in this process (its broker threads share the machine).
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "output/kafka/kafka_output.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace {

using namespace rowprobe;

double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

FlowRecord makeRecord(std::uint64_t i) {
    FlowRecord r;
    const bool v6 = i % 5 == 0;
    r.ipVersion = v6 ? 6 : 4;
    if (v6) {
        r.srcAddr = {0x20, 0x01, 0x0d, 0xb8};
        r.dstAddr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
    } else {
        r.srcAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10};
        r.dstAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 0, 1};
    }
    r.srcAddr[13] = static_cast<std::uint8_t>(i >> 16);
    r.srcAddr[14] = static_cast<std::uint8_t>(i >> 8);
    r.srcAddr[15] = static_cast<std::uint8_t>(i);
    r.srcPort = static_cast<std::uint16_t>(1024 + i % 60000);
    r.dstPort = 443;
    r.proto = i % 3 == 0 ? 17 : 6;
    r.bytes = {1500 * (i % 100) + 60, 800 * (i % 50)};
    r.packets = {static_cast<std::uint32_t>(i % 100 + 1), static_cast<std::uint32_t>(i % 50)};
    r.tcpFlags = {0x1b, 0x1b};
    r.ttl = {64, 57};
    r.timeFirst = 1700000000ULL * kNsPerSec + i * 1000;
    r.timeLast = r.timeFirst + 2 * kNsPerSec;
    r.endReason = EndReason::InactiveTimeout;
    return r;
}

int usage() {
    std::fprintf(stderr,
                 "usage: bench_kafka [--brokers HOST:PORT | --mock BROKERS] [--format json|ipfix]\n"
                 "                   [--key none|flow|community-id] [--records N] "
                 "[--options 'opt=v;...']\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string brokers;
    int mockBrokers = 0;
    std::string format = "ipfix";
    std::string key = "none";
    std::uint64_t count = 1000000;
    std::string extra;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        const std::string v = argv[++i];
        if (a == "--brokers") {
            brokers = v;
        } else if (a == "--mock") {
            mockBrokers = std::atoi(v.c_str());
        } else if (a == "--format") {
            format = v;
        } else if (a == "--key") {
            key = v;
        } else if (a == "--records") {
            count = std::strtoull(v.c_str(), nullptr, 10);
        } else if (a == "--options") {
            extra = v;
        } else {
            return usage();
        }
    }
    rd_kafka_t* mockHandle = nullptr;
    rd_kafka_mock_cluster_t* mock = nullptr;
    if (brokers.empty()) {
        char err[256];
        rd_kafka_conf_t* conf = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
        mockHandle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        mock = rd_kafka_mock_cluster_new(mockHandle, mockBrokers > 0 ? mockBrokers : 1);
        rd_kafka_mock_topic_create(mock, "bench", 4, 1);
        brokers = rd_kafka_mock_cluster_bootstraps(mock);
    }

    std::vector<FlowRecord> records;
    records.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) records.push_back(makeRecord(i));

    const std::string spec = "kafka;brokers=" + brokers + ";topic=bench;format=" + format +
                             ";key=" + key + ";buffer=2047;linger=600;timeout=600" +
                             (extra.empty() ? "" : ";" + extra);
    std::unique_ptr<OutputPlugin> out;
    try {
        out = Registry::instance().createAs<OutputPlugin>(PluginKind::Output, spec, "-o");
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "bench_kafka: %s\n", e.render().c_str());
        return 2;
    }

    constexpr std::size_t kBatch = 1024;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = threadCpuSeconds();
    for (std::size_t at = 0; at < records.size(); at += kBatch) {
        const std::size_t n = std::min(kBatch, records.size() - at);
        out->write(std::span<const FlowRecord>(records.data() + at, n));
    }
    out->flush();
    const double cpu = threadCpuSeconds() - c0;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out->finish();
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const OutputStats s = out->stats();
    std::printf("%s format=%s key=%s records=%llu\n", mock != nullptr ? "mock" : "broker",
                format.c_str(), key.c_str(), static_cast<unsigned long long>(count));
    std::printf("  export thread: %.2f M records/s by thread CPU (%.3f s), %.2f M/s by wall\n",
                static_cast<double>(count) / cpu / 1e6, cpu,
                static_cast<double>(count) / wall / 1e6);
    std::printf(
        "  delivered: %llu records, %llu dropped, %.1f MB values in %.2f s = %.2f M "
        "records/s\n",
        static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.dropped),
        static_cast<double>(s.bytes) / 1e6, total, static_cast<double>(s.records) / total / 1e6);
    out.reset();
    if (mock != nullptr) {
        rd_kafka_mock_cluster_destroy(mock);
        rd_kafka_destroy(mockHandle);
    }
    return s.dropped == 0 && s.records == count ? 0 : 1;
}
