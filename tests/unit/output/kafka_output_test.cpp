// The `kafka` output against librdkafka's mock cluster (in-process brokers on 127.0.0.1):
// every record arrives exactly once and is read back by an independent consumer, values are
// the json output's objects or self-contained IPFIX messages, keys and partitions follow
// `key=`, injected broker errors and a leader change are recovered without loss, a full local
// queue and a dead cluster are counted as drops within the configured bounds, and option
// mistakes are start-up errors.
#ifdef ROWPROBE_HAVE_KAFKA

#include "output/kafka/kafka_output.hpp"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ipfix_test_decoder.hpp"
#include "output/json/json_output.hpp"
#include "rowprobe/community_id.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/registry.hpp"
#include "rowprobe/secrets.hpp"
#include "test_support.hpp"

namespace rowprobe::output {
namespace {

using Clock = std::chrono::steady_clock;
namespace dec = rowprobe::test::ipfix;
using test::rowprobeBinary;
using test::runCommand;
using test::sourceDir;
using test::tempDir;
using test::testdataDir;

constexpr int kPartitions = 4;

// Under ThreadSanitizer the threads librdkafka starts (C11 thrd_create, which GCC 12's TSan does
// not intercept) have no TSan state and crash in their first malloc: nothing to learn there.
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() GTEST_SKIP() << "librdkafka's threads are invisible to TSan"
#else
#define SKIP_UNDER_TSAN() static_cast<void>(0)
#endif

/// A mock cluster of `brokers` brokers with topic "flows" of kPartitions partitions.
class MockCluster {
public:
    explicit MockCluster(int brokers = 3, const char* topic = "flows") {
        char err[256];
        rd_kafka_conf_t* conf = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
        m_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        m_cluster = rd_kafka_mock_cluster_new(m_rk, brokers);
        rd_kafka_mock_topic_create(m_cluster, topic, kPartitions, std::min(brokers, 3));
    }
    ~MockCluster() {
        rd_kafka_mock_cluster_destroy(m_cluster);
        rd_kafka_destroy(m_rk);
    }
    MockCluster(const MockCluster&) = delete;
    MockCluster& operator=(const MockCluster&) = delete;
    std::string bootstraps() const { return rd_kafka_mock_cluster_bootstraps(m_cluster); }
    rd_kafka_mock_cluster_t* get() const { return m_cluster; }

private:
    rd_kafka_t* m_rk = nullptr;
    rd_kafka_mock_cluster_t* m_cluster = nullptr;
};

struct Consumed {
    int partition = 0;
    std::int64_t offset = 0;
    std::string key;
    std::string value;
    std::string probe;  ///< the "probe" header, if any
};

/// Reads every partition of `topic` from the beginning until `done(messages)` holds and nothing
/// more came for 0.3 s (duplicates would show), or `seconds` passed.
template <typename Done>
std::vector<Consumed> consumeUntil(const std::string& bootstraps, Done done, double seconds = 20,
                                   const char* topic = "flows") {
    char err[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps.c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "group.id", "rowprobe-test", err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
    rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    EXPECT_NE(rk, nullptr) << err;
    rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(kPartitions);
    for (int p = 0; p < kPartitions; ++p)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(rk, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    std::vector<Consumed> out;
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    auto quietSince = Clock::now();
    while (Clock::now() < deadline) {
        rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 50);
        if (m == nullptr) {
            if (done(out) && Clock::now() - quietSince > std::chrono::milliseconds(300)) break;
            continue;
        }
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            Consumed c;
            c.partition = m->partition;
            c.offset = m->offset;
            if (m->key != nullptr) c.key.assign(static_cast<const char*>(m->key), m->key_len);
            c.value.assign(static_cast<const char*>(m->payload), m->len);
            rd_kafka_headers_t* headers = nullptr;
            const void* probe = nullptr;
            std::size_t probeSize = 0;
            if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR &&
                rd_kafka_header_get_last(headers, "probe", &probe, &probeSize) ==
                    RD_KAFKA_RESP_ERR_NO_ERROR)
                c.probe.assign(static_cast<const char*>(probe), probeSize);
            out.push_back(std::move(c));
            quietSince = Clock::now();
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return out;
}

std::vector<Consumed> consumeAll(const std::string& bootstraps, std::size_t expected) {
    return consumeUntil(bootstraps, [expected](const std::vector<Consumed>& got) {
        return got.size() >= expected;
    });
}

/// The IPFIX messages among `values`, each decoded with a fresh decoder (so each must carry
/// its own templates).
std::vector<dec::Message> decodeEach(const std::vector<Consumed>& values) {
    std::vector<dec::Message> all;
    for (const Consumed& c : values) {
        dec::Decoder d;
        std::vector<dec::Message> msgs;
        std::string error;
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(c.value.data());
        EXPECT_TRUE(d.decode(std::span<const std::uint8_t>(bytes, c.value.size()), msgs, error))
            << error;
        EXPECT_EQ(msgs.size(), 1U);
        all.insert(all.end(), msgs.begin(), msgs.end());
    }
    return all;
}

std::size_t recordCount(const std::vector<dec::Message>& msgs) {
    std::size_t n = 0;
    for (const auto& m : msgs) n += m.records.size();
    return n;
}

std::unique_ptr<KafkaOutput> makeOutput(const std::string& text) {
    auto plugin = Registry::instance().createAs<OutputPlugin>(PluginKind::Output, text, "-o");
    auto* kafka = dynamic_cast<KafkaOutput*>(plugin.get());
    EXPECT_NE(kafka, nullptr);
    plugin.release();
    return std::unique_ptr<KafkaOutput>(kafka);
}

/// Record i: a distinct flow (source port and address from i), i in its forward octets;
/// every 5th is IPv6.
FlowRecord numbered(std::uint64_t i) {
    FlowRecord r;
    const bool v6 = i % 5 == 0;
    r.ipVersion = v6 ? 6 : 4;
    if (v6) {
        r.srcAddr = {0x20, 0x01, 0x0d, 0xb8};
        r.dstAddr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
        r.srcAddr[14] = static_cast<std::uint8_t>(i >> 8);
        r.srcAddr[15] = static_cast<std::uint8_t>(i);
        r.dstAddr[15] = 1;
    } else {
        r.srcAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 0};
        r.srcAddr[14] = static_cast<std::uint8_t>(i >> 8);
        r.srcAddr[15] = static_cast<std::uint8_t>(i);
        r.dstAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 0, 1};
    }
    r.srcPort = static_cast<std::uint16_t>(1024 + i % 60000);
    r.dstPort = 443;
    r.proto = 6;
    r.bytes = {i, 2 * i};
    r.packets = {1, 2};
    r.timeFirst = 1700000000ULL * kNsPerSec + i * 1000;
    r.timeLast = r.timeFirst + kNsPerSec;
    return r;
}

void writeRange(OutputPlugin& out, std::uint64_t from, std::uint64_t to, std::size_t batch = 64) {
    std::vector<FlowRecord> records;
    for (std::uint64_t i = from; i < to; ++i) {
        records.push_back(numbered(i));
        if (records.size() == batch) {
            out.write(records);
            records.clear();
        }
    }
    if (!records.empty()) out.write(records);
    out.flush();
}

std::string jsonOf(const FlowRecord& r) {
    std::string s(JsonOutput::kMaxLine, '\0');
    char* end = JsonOutput::formatRecord(s.data(), r);
    s.resize(static_cast<std::size_t>(end - s.data()) - 1);  // no newline in a message
    return s;
}

std::string flowKey(const FlowRecord& r) {
    std::string s(16, '\0');
    kafkaFlowKey(s.data(), r);
    return s;
}

/// CRC-32 (IEEE, zlib's): librdkafka's default partitioner, consistent_random, puts a keyed
/// message on partition crc32(key) % partitions.
std::uint32_t crc32(const std::string& data) {
    std::uint32_t crc = 0xFFFFFFFFU;
    for (const char ch : data) {
        crc ^= static_cast<std::uint8_t>(ch);
        for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1U)));
    }
    return ~crc;
}

/// Every key maps to exactly one partition, the one librdkafka's default partitioner assigns
/// (so another producer of the same keys agrees), and more than one partition is used.
void expectKeyAffinity(const std::vector<Consumed>& got) {
    std::map<std::string, std::set<int>> partitionsOf;
    std::set<int> used;
    for (const Consumed& c : got) {
        partitionsOf[c.key].insert(c.partition);
        EXPECT_EQ(static_cast<std::uint32_t>(c.partition), crc32(c.key) % kPartitions) << c.key;
        used.insert(c.partition);
    }
    for (const auto& [key, parts] : partitionsOf) EXPECT_EQ(parts.size(), 1U) << key;
    EXPECT_GT(used.size(), 1U);
}

TEST(KafkaOutput, JsonEveryRecordOnceKeyedByFlow) {
    SKIP_UNDER_TSAN();
    MockCluster cluster;
    constexpr std::uint64_t kCount = 3000;
    {
        auto out = makeOutput("kafka;brokers=" + cluster.bootstraps() + ";key=flow;probe=edge-1");
        writeRange(*out, 0, kCount);
        // Both directions and a later piece of the same flow share the flow's key.
        FlowRecord back = numbered(7);
        std::swap(back.srcAddr, back.dstAddr);
        std::swap(back.srcPort, back.dstPort);
        back.bytes = {kCount + 1, 0};
        out->write(std::span<const FlowRecord>(&back, 1));
        out->finish();
        const OutputStats s = out->stats();
        EXPECT_EQ(s.records, kCount + 1);
        EXPECT_EQ(s.dropped, 0U);
        EXPECT_EQ(out->inFlight(), 0U);
    }
    const auto got = consumeAll(cluster.bootstraps(), kCount + 1);
    ASSERT_EQ(got.size(), kCount + 1);
    std::map<std::string, std::string> expected;  // value -> key
    for (std::uint64_t i = 0; i < kCount; ++i) expected[jsonOf(numbered(i))] = flowKey(numbered(i));
    std::set<std::string> seen;
    std::string backKey;
    for (const Consumed& c : got) {
        EXPECT_TRUE(seen.insert(c.value).second) << "twice: " << c.value;
        EXPECT_EQ(c.probe, "edge-1");
        if (c.value.find("\"bytes\":" + std::to_string(kCount + 1)) != std::string::npos) {
            backKey = c.key;
            continue;
        }
        auto it = expected.find(c.value);
        ASSERT_NE(it, expected.end()) << "unexpected message " << c.value;
        EXPECT_EQ(c.key, it->second);
    }
    EXPECT_EQ(backKey, flowKey(numbered(7)));
    expectKeyAffinity(got);
}

TEST(KafkaOutput, IpfixMessagesAreSelfContainedAndHoldEveryRecordOnce) {
    SKIP_UNDER_TSAN();
    MockCluster cluster;
    constexpr std::uint64_t kCount = 5000;
    {
        auto out = makeOutput("kafka;brokers=" + cluster.bootstraps() +
                              ";format=ipfix;mtu=1400;id=77;compression=zstd");
        writeRange(*out, 0, kCount, 100);
        out->finish();
        EXPECT_EQ(out->stats().records, kCount);
        EXPECT_EQ(out->stats().dropped, 0U);
    }
    const auto got = consumeUntil(cluster.bootstraps(), [](const std::vector<Consumed>& v) {
        return recordCount(decodeEach(v)) >= kCount;
    });
    ASSERT_GT(got.size(), 10U);  // 1400-byte messages: many of them
    for (const Consumed& c : got) {
        EXPECT_TRUE(c.key.empty());
        EXPECT_TRUE(c.probe.empty());  // no probe= option: no header
    }
    std::multiset<std::uint64_t> ids;
    for (const dec::Message& m : decodeEach(got)) {
        EXPECT_EQ(m.domain, 77U);
        EXPECT_FALSE(m.templates.empty());
        EXPECT_LE(m.length, 1400U + 4U + 2U * 120U);
        for (const auto& r : m.records) ids.insert(*r.number(0, 1));  // octetDeltaCount
    }
    std::multiset<std::uint64_t> want;
    for (std::uint64_t i = 0; i < kCount; ++i) want.insert(i);
    EXPECT_EQ(ids, want);
}

TEST(KafkaOutput, IpfixKeyedByCommunityIdOneRecordPerMessage) {
    SKIP_UNDER_TSAN();
    MockCluster cluster;
    constexpr std::uint64_t kCount = 400;
    {
        auto out = makeOutput("kafka;brokers=" + cluster.bootstraps() +
                              ";format=ipfix;key=community-id;community-id-seed=7");
        writeRange(*out, 0, kCount);
        out->finish();
        EXPECT_EQ(out->stats().records, kCount);
    }
    const auto got = consumeAll(cluster.bootstraps(), kCount);
    ASSERT_EQ(got.size(), kCount);
    std::set<std::uint64_t> ids;
    for (const Consumed& c : got) {
        dec::Decoder d;
        std::vector<dec::Message> msgs;
        std::string error;
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(c.value.data());
        ASSERT_TRUE(d.decode(std::span<const std::uint8_t>(bytes, c.value.size()), msgs, error))
            << error;
        ASSERT_EQ(msgs.size(), 1U);
        ASSERT_EQ(msgs[0].records.size(), 1U);
        EXPECT_EQ(msgs[0].templates.size(), 1U);  // only the template the record uses
        const std::uint64_t id = *msgs[0].records[0].number(0, 1);
        EXPECT_TRUE(ids.insert(id).second);
        EXPECT_EQ(c.key, communityId(numbered(id), 7));
    }
    expectKeyAffinity(got);
}

TEST(KafkaOutput, BrokerErrorsAndLeaderChangesRecoverWithoutLoss) {
    SKIP_UNDER_TSAN();
    MockCluster cluster(3);
    constexpr std::uint64_t kCount = 6000;
    auto out = makeOutput("kafka;brokers=" + cluster.bootstraps() + ";key=flow;batch-delay=0.005");
    writeRange(*out, 0, 1000);
    // Produce requests fail: timeouts, leader gone, then the leaders move between brokers.
    rd_kafka_mock_push_request_errors(
        cluster.get(), 0 /* Produce */, 6, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT);
    writeRange(*out, 1000, 2500);
    for (int p = 0; p < kPartitions; ++p)
        rd_kafka_mock_partition_set_leader(cluster.get(), "flows", p, 1 + (p + 1) % 3);
    writeRange(*out, 2500, 4000);
    // A broker goes down for a while and comes back.
    rd_kafka_mock_broker_set_down(cluster.get(), 2);
    writeRange(*out, 4000, 5000);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    rd_kafka_mock_broker_set_up(cluster.get(), 2);
    writeRange(*out, 5000, kCount);
    out->finish();
    EXPECT_EQ(out->stats().records, kCount);
    EXPECT_EQ(out->stats().dropped, 0U);
    const auto got = consumeAll(cluster.bootstraps(), kCount);
    std::set<std::string> values;
    for (const Consumed& c : got)
        EXPECT_TRUE(values.insert(c.value).second) << "twice: " << c.value;
    EXPECT_EQ(got.size(), kCount);
    for (std::uint64_t i = 0; i < kCount; i += 97)
        EXPECT_EQ(values.count(jsonOf(numbered(i))), 1U) << i;
}

TEST(KafkaOutput, FullQueueCountsDropsWithinTheBlockBound) {
    SKIP_UNDER_TSAN();
    MockCluster cluster(1);
    // The only broker is down: nothing leaves the 200-message local queue.
    rd_kafka_mock_broker_set_down(cluster.get(), 1);
    auto out = makeOutput("kafka;brokers=" + cluster.bootstraps() +
                          ";block=0.2;linger=0.3;conf=queue.buffering.max.messages=200");
    const auto t0 = Clock::now();
    writeRange(*out, 0, 5000);
    const double writeSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    // One wait of `block`, then drops without waiting while the queue stays full.
    EXPECT_LT(writeSeconds, 2.0);
    EXPECT_GE(out->stats().dropped, 5000U - 200U);
    const auto t1 = Clock::now();
    out->finish();
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t1).count(), 2.0);  // linger bound
    const OutputStats s = out->stats();
    EXPECT_EQ(s.records, 0U);
    EXPECT_EQ(s.dropped, 5000U);  // every record accounted for
    EXPECT_EQ(out->inFlight(), 0U);
}

TEST(KafkaOutput, OutageShorterThanTheQueueLosesNothing) {
    SKIP_UNDER_TSAN();
    MockCluster cluster(1);
    auto out = makeOutput("kafka;brokers=" + cluster.bootstraps() + ";linger=10");
    writeRange(*out, 0, 500);
    rd_kafka_mock_broker_set_down(cluster.get(), 1);
    writeRange(*out, 500, 2000);  // queued locally
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    EXPECT_EQ(out->stats().dropped, 0U);
    rd_kafka_mock_broker_set_up(cluster.get(), 1);
    writeRange(*out, 2000, 2500);
    out->finish();
    EXPECT_EQ(out->stats().records, 2500U);
    EXPECT_EQ(out->stats().dropped, 0U);
    EXPECT_EQ(consumeAll(cluster.bootstraps(), 2500).size(), 2500U);
}

TEST(KafkaOutput, StatisticsCatchUpWhileTheExportThreadIsIdle) {
    SKIP_UNDER_TSAN();
    MockCluster cluster(1);
    auto out = makeOutput("kafka;brokers=" + cluster.bootstraps());
    std::vector<FlowRecord> records;
    for (std::uint64_t i = 0; i < 500; ++i) records.push_back(numbered(i));
    out->write(records);  // then the export thread goes idle: no write, no flush
    // Another thread (the periodic statistics, --metrics) sees the acknowledgements arrive.
    std::uint64_t seen = 0;
    std::thread reader([&] {
        const auto end = Clock::now() + std::chrono::seconds(10);
        while (Clock::now() < end && (seen = out->stats().records) < records.size())
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    reader.join();
    EXPECT_EQ(seen, records.size());
    EXPECT_EQ(out->inFlight(), 0U);
    out->finish();
    EXPECT_EQ(out->stats().records, records.size());
    EXPECT_EQ(out->stats().dropped, 0U);
}

TEST(KafkaOutput, OptionMistakesAreStartUpErrors) {
    // Every mistake is caught before a producer (and its threads) exists: runs under TSan too.
    auto message = [](const std::string& text) -> std::string {
        try {
            makeOutput(text);
        } catch (const ConfigError& e) {
            return e.render();
        }
        return "(no error)";
    };
    std::string m = message("kafka;conf=linger.mss=5");
    EXPECT_NE(m.find("unknown librdkafka property 'linger.mss'"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'linger.ms'"), std::string::npos) << m;
    m = message("kafka;conf=compression.codec=brotli");
    EXPECT_NE(m.find("compression.codec=brotli"), std::string::npos) << m;
    m = message("kafka;conf=acks");
    EXPECT_NE(m.find("prop=value"), std::string::npos) << m;
    m = message("kafka;topic=a/b");
    EXPECT_NE(m.find("option 'topic'"), std::string::npos) << m;
    m = message("kafka;formt=ipfix");
    EXPECT_NE(m.find("did you mean 'format'"), std::string::npos) << m;
    m = message("kafka;key=comunity-id");
    EXPECT_NE(m.find("did you mean 'community-id'"), std::string::npos) << m;
    m = message("kafka;format=json;mtu=1400");
    EXPECT_NE(m.find("format=ipfix only"), std::string::npos) << m;
    m = message("kafka;format=json;tunnel-pen=32473");
    EXPECT_NE(m.find("format=ipfix only"), std::string::npos) << m;
    m = message("kafka;format=ipfix;fields=src_ip");
    EXPECT_NE(m.find("format=json only"), std::string::npos) << m;
    m = message("kafka;community-id-seed=3");
    EXPECT_NE(m.find("key=community-id only"), std::string::npos) << m;
}

// Issue 21 item 11: conf= refuses properties that run code (a library loaded, a shell command)
// or break the accounting, and a start-up error never shows a secret's value.
TEST(KafkaOutput, ConfRefusesPropertiesThatRunCodeAndHidesSecrets) {
    auto message = [](const std::string& text) -> std::string {
        try {
            makeOutput(text);
        } catch (const ConfigError& e) {
            return std::string(e.what()) + "\n" + e.render();
        }
        return "(no error)";
    };
    for (const char* refused :
         {"plugin.library.paths=/tmp/evil.so", "sasl.kerberos.kinit.cmd=touch /tmp/owned",
          "delivery.report.only.error=true", "ssl.engine.location=/tmp/engine.so"}) {
        const std::string name = std::string(refused).substr(0, std::string(refused).find('='));
        const std::string m = message(std::string("kafka;conf=") + refused);
        EXPECT_NE(m.find("property '" + name + "' is not allowed"), std::string::npos) << m;
    }
    // A mistake elsewhere in a string that carries a password: the password is masked.
    std::string m = message("kafka;conf=sasl.password=hunter2#x,linger.mss=5");
    EXPECT_NE(m.find("linger.mss"), std::string::npos) << m;
    EXPECT_EQ(m.find("hunter2"), std::string::npos) << m;
    EXPECT_NE(m.find("sasl.password=*********"), std::string::npos) << m;
    m = message("kafka;conf=ssl.key.password=s3cret;topic=a/b");
    EXPECT_NE(m.find("option 'topic'"), std::string::npos) << m;
    EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
    EXPECT_EQ(maskSecrets("a;sasl.oauthbearer.client.secret=xy;b=c"),
              "a;sasl.oauthbearer.client.secret=**;b=c");
}

TEST(KafkaOutput, RowprobeProcessProducesItsJsonOutputIntoTheMockCluster) {
    SKIP_UNDER_TSAN();
    MockCluster cluster;
    const std::string pcap = (sourceDir() / "pcaps" / "mixed.pcap").string();
    const auto json =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-o", "json"});
    ASSERT_EQ(json.exitCode, 0) << json.err;
    std::multiset<std::string> expected;
    std::size_t start = 0;
    while (start < json.out.size()) {
        std::size_t end = json.out.find('\n', start);
        if (end == std::string::npos) end = json.out.size();
        if (end > start) expected.insert(json.out.substr(start, end - start));
        start = end + 1;
    }
    ASSERT_FALSE(expected.empty());
    const auto run = runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-o",
                                 "kafka;brokers=" + cluster.bootstraps() + ";key=community-id"});
    ASSERT_EQ(run.exitCode, 0) << run.err;
    const auto got = consumeAll(cluster.bootstraps(), expected.size());
    std::multiset<std::string> values;
    for (const Consumed& c : got) {
        values.insert(c.value);
        EXPECT_EQ(c.key.size(), kCommunityIdLength);
        EXPECT_EQ(c.key.rfind("1:", 0), 0U);
    }
    EXPECT_EQ(values, expected);

    // A librdkafka property that does not exist stops start-up with exit code 2 and its name.
    const auto bad = runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-o",
                                 "kafka;brokers=" + cluster.bootstraps() +
                                     ";conf=linger.ms=5,queue.bufering.max.kbytes=10"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("unknown librdkafka property 'queue.bufering.max.kbytes'"),
              std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find("did you mean 'queue.buffering.max.kbytes'"), std::string::npos)
        << bad.err;
}

/// The lines of a json output run, in order.
std::vector<std::string> linesOf(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

/// Runs rowprobe on `pcap` with `plugins` (-p each) into the json output and into the kafka
/// output (format=json, key=flow) of a fresh mock cluster; returns the json lines and the
/// consumed messages.
std::pair<std::vector<std::string>, std::vector<Consumed>> jsonAndKafka(
    const std::string& pcap, const std::vector<std::string>& plugins) {
    MockCluster cluster;
    std::vector<std::string> args = {rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-Q"};
    for (const std::string& p : plugins) args.insert(args.end(), {"-p", p});
    std::vector<std::string> jsonArgs = args;
    jsonArgs.insert(jsonArgs.end(), {"-o", "json"});
    const auto json = runCommand(jsonArgs);
    EXPECT_EQ(json.exitCode, 0) << json.err;
    std::vector<std::string> kafkaArgs = args;
    kafkaArgs.insert(kafkaArgs.end(),
                     {"-o", "kafka;brokers=" + cluster.bootstraps() + ";format=json;key=flow"});
    const auto run = runCommand(kafkaArgs);
    EXPECT_EQ(run.exitCode, 0) << run.err;
    std::vector<std::string> lines = linesOf(json.out);
    return {lines, consumeAll(cluster.bootstraps(), lines.size())};
}

TEST(KafkaOutput, RowprobeWithProcessPluginsProducesTheJsonOutputsObjects) {
    SKIP_UNDER_TSAN();
    // http, pstats and passivedns on the generated mixed capture: every message is
    // byte-identical to one json line of the same run (plugin fields included), none missing.
    const std::string pcap = (sourceDir() / "pcaps" / "mixed.pcap").string();
    const auto [lines, got] = jsonAndKafka(pcap, {"http", "pstats", "passivedns"});
    ASSERT_FALSE(lines.empty());
    const std::multiset<std::string> expected(lines.begin(), lines.end());
    std::multiset<std::string> values;
    for (const Consumed& c : got) {
        values.insert(c.value);
        EXPECT_EQ(c.key.size(), 16U);
    }
    EXPECT_EQ(values, expected);
    const auto withHttp = std::count_if(values.begin(), values.end(), [](const std::string& v) {
        return v.find("\"http_host\":\"example.com\"") != std::string::npos;
    });
    EXPECT_GE(withHttp, 1) << "the capture's HTTP flow lost its plugin fields";
}

TEST(KafkaOutput, RecordWithSeveralInstancesGivesOneMessagePerObjectWithOneKey) {
    SKIP_UNDER_TSAN();
    // FlowTest's dns_a capture: one DNS flow whose passivedns data has two instances (answers),
    // written by the json output as two lines; kafka sends two messages, both keyed by the flow.
    const auto pcap = testdataDir() / "flowtest" / "pcap" / "dns_a.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const auto [lines, got] = jsonAndKafka(pcap.string(), {"passivedns"});
    ASSERT_EQ(lines.size(), 2U);
    EXPECT_NE(lines[0], lines[1]);
    ASSERT_EQ(got.size(), 2U);
    EXPECT_EQ(got[0].key, got[1].key);
    EXPECT_EQ(std::multiset<std::string>({got[0].value, got[1].value}),
              std::multiset<std::string>(lines.begin(), lines.end()));
}

/// A decoded data record as text: its elements (pen, id, length) and values, so records of
/// two decoders compare.
std::string recordText(const dec::DataRecord& r) {
    std::string s;
    for (std::size_t i = 0; i < r.elements.size(); ++i) {
        const dec::Element& e = r.elements[i];
        s += std::to_string(e.pen) + "/" + std::to_string(e.id) + "/" + std::to_string(e.length) +
             "=";
        for (const std::uint8_t b : r.values[i]) s += std::to_string(b) + ".";
        s += ' ';
    }
    return s;
}

/// Runs rowprobe with `args` and `-o OUTPUT` (an ipfix output that writes `file`) and returns
/// the file decoded; a failed run or an undecodable file is a test failure (and no messages).
std::vector<dec::Message> ipfixFileMessages(std::vector<std::string> args,
                                            const std::string& output,
                                            const std::filesystem::path& file) {
    args.insert(args.end(), {"-o", output});
    const auto run = runCommand(args);
    if (run.exitCode != 0) {
        ADD_FAILURE() << "exit " << run.exitCode << ": " << run.err;
        return {};
    }
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    dec::Decoder decoder;
    std::vector<dec::Message> messages;
    std::string error;
    if (!decoder.decode(
            std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), messages,
            error)) {
        ADD_FAILURE() << file << ": " << error;
    }
    return messages;
}

/// Runs rowprobe with `args` into kafka `format=ipfix` on `cluster` (with `options`) and returns
/// the messages consumed, decoded, once `want` records have arrived (or the wait ended).
std::vector<dec::Message> kafkaIpfixMessages(std::vector<std::string> args,
                                             const MockCluster& cluster, const std::string& options,
                                             std::size_t want) {
    args.insert(args.end(),
                {"-o", "kafka;brokers=" + cluster.bootstraps() + ";format=ipfix" + options});
    const auto run = runCommand(args);
    if (run.exitCode != 0) {
        ADD_FAILURE() << "exit " << run.exitCode << ": " << run.err;
        return {};
    }
    return decodeEach(consumeUntil(cluster.bootstraps(), [want](const std::vector<Consumed>& c) {
        return recordCount(decodeEach(c)) >= want;
    }));
}

TEST(KafkaOutput, IpfixFormatCarriesProcessPluginFieldsAsTheIpfixOutput) {
    SKIP_UNDER_TSAN();
    // The same run into the ipfix output (a file) and into kafka format=ipfix: every record of
    // the file, plugin elements included, is in exactly one Kafka message, and each message
    // decodes on its own (its templates, the plugin ones too, travel with it).
    const std::string pcap = (sourceDir() / "pcaps" / "mixed.pcap").string();
    const auto file = tempDir() / "plugins.ipfix";
    const std::vector<std::string> base = {
        rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-Q", "-p", "http", "-p", "pstats"};
    const auto fileMessages = ipfixFileMessages(base, "ipfix;file=" + file.string(), file);
    std::multiset<std::string> expected;
    std::size_t widest = 0;
    for (const auto& m : fileMessages) {
        for (const auto& r : m.records) {
            expected.insert(recordText(r));
            widest = std::max(widest, r.elements.size());
        }
    }
    ASSERT_FALSE(expected.empty());

    // Without a key (records packed up to mtu, templates of several plugin sets in one
    // message) and with one (one record per message).
    for (const char* key : {"none", "community-id"}) {
        SCOPED_TRACE(key);
        const MockCluster cluster;
        const auto got =
            kafkaIpfixMessages(base, cluster, std::string(";key=") + key, expected.size());
        std::multiset<std::string> records;
        std::size_t widestGot = 0;
        for (const auto& m : got) {
            for (const auto& r : m.records) {
                records.insert(recordText(r));
                widestGot = std::max(widestGot, r.elements.size());
            }
        }
        EXPECT_EQ(records, expected);
        EXPECT_EQ(widestGot, widest);
        if (std::string_view(key) == "community-id") {
            EXPECT_EQ(got.size(), expected.size());  // one record per message
        }
    }
    // pstats' lists and http's strings follow the basic fields.
    EXPECT_GT(widest, ipfixBasicFields().size());
}

TEST(KafkaOutput, IpfixFormatCarriesTunnelFieldsAsTheIpfixOutput) {
    SKIP_UNDER_TSAN();
    // Inner flows (--tunnel both) with tunnel-pen: the kafka ipfix format shares the ipfix
    // output's encoder, so every record of the ipfix file, tunnel elements (PEN 32473, RFC
    // 5612's documentation number) and pstats' lists included, is in a Kafka message.
    const std::string pcap = (sourceDir() / "pcaps" / "tunnels.pcap").string();
    const auto file = tempDir() / "tunnels.ipfix";
    const std::vector<std::string> base = {rowprobeBinary().string(),
                                           "-i",
                                           "pcap;file=" + pcap,
                                           "-Q",
                                           "--tunnel",
                                           "both",
                                           "-p",
                                           "pstats"};
    const auto fileMessages =
        ipfixFileMessages(base, "ipfix;file=" + file.string() + ";tunnel-pen=32473", file);
    std::multiset<std::string> expected;
    std::size_t tunnelled = 0;
    for (const auto& m : fileMessages) {
        for (const auto& r : m.records) {
            expected.insert(recordText(r));
            if (r.find(32473, 1) != nullptr && r.find(0, 291) != nullptr) ++tunnelled;
        }
    }
    EXPECT_GT(tunnelled, 0U) << "records with both pstats (basicLists) and the tunnel elements";

    const MockCluster cluster;
    const auto got = kafkaIpfixMessages(base, cluster, ";tunnel-pen=32473", expected.size());
    std::multiset<std::string> records;
    for (const auto& m : got) {
        for (const auto& r : m.records) records.insert(recordText(r));
    }
    EXPECT_EQ(records, expected);
}

TEST(KafkaOutput, RowprobeWithNoBrokerExitsWithinLingerAndCountsEveryRecordDropped) {
    SKIP_UNDER_TSAN();
    // Port 1 on loopback: nothing listens, every connect is refused.
    const std::string pcap = (sourceDir() / "pcaps" / "demo.pcap").string();
    const auto json =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-o", "json", "-Q"});
    const auto records = std::count(json.out.begin(), json.out.end(), '\n');
    ASSERT_GT(records, 0);
    const auto t0 = Clock::now();
    const auto run = runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-o",
                                 "kafka;brokers=127.0.0.1:1;linger=0.5"},
                                30);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    // Records dropped by the output: exit code 1 (README "Exit codes").
    EXPECT_EQ(run.exitCode, 1) << run.err;
    EXPECT_LT(seconds, 5.0);
    EXPECT_NE(run.err.find("output: 0 records written, " + std::to_string(records) + " dropped"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("Connection refused"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace rowprobe::output

#endif  // ROWPROBE_HAVE_KAFKA
