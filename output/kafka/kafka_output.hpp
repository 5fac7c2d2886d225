// The `kafka` output: one Kafka message per record (json) or per IPFIX message (ipfix), produced
// with librdkafka, keyed for partition affinity. Options and guarantees in README.md.
//
//   export thread                         librdkafka (its own threads)
//   write(records) ──format──▶ produce() ──▶ [local queue, bounded: buffer MiB / messages] ──▶ broker
//        ▲                                                                  │
//        └──── poll(): delivery reports ◀── acked / failed / purged ◀───────┘
//
// * Values: json = the `json` output's object (its JsonLayout and, with process plugins,
//   JsonPluginColumns: one message per object), without the newline; ipfix =
//   one self-contained IPFIX message: header, a template set holding the template of every
//   data set in the message, the data sets (the ipfix output's IpfixEncoder and, with process
//   plugins, its IpfixPluginFields: templates per set of plugins present). A consumer can
//   decode any message on its own, from any partition and offset.
// * Keys: none (librdkafka spreads messages), flow (16 hex digits of a 64-bit hash of the
//   direction-independent 5-tuple: both directions and all active-timeout pieces of a flow get
//   one key, so one partition) or community-id (Community ID v1). With a key, an IPFIX message
//   carries one record.
// * Counting: every record handed to write() ends in exactly one of `records` (delivery report
//   OK), `dropped` (delivery failed after librdkafka's retries, local queue still full after
//   `block`, purged at the end of `linger`) or, until its report arrives, in flight.
// * Never stuck: produce() into a full queue waits at most `block` (serving delivery reports)
//   and then drops the record; while the queue stays full further records are dropped without
//   waiting, until one fits again. finish() waits at most `linger` for outstanding deliveries,
//   then purges and counts what is left as dropped.
//
// Threads: write/flush/finish on the export thread, which runs the delivery-report callback
// (rd_kafka_poll) as it writes; stats(), from any thread, serves reports that arrived while the
// export thread is idle (never waiting: a try-lock around polling) and reads atomics. The
// callback touches atomics only.
// Costs: one produce() (a copy of the value into librdkafka's queue) per message; json about
// as fast as the json output plus ~1 us per record of librdkafka, ipfix one produce per up to
// `mtu` bytes of records (docs/performance.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"

struct rd_kafka_s;
struct rd_kafka_topic_s;
struct rd_kafka_message_s;

namespace rowprobe::output {

class JsonLayout;
class JsonPluginColumns;
class IpfixEncoder;
class IpfixPluginFields;
struct EncoderConfig;
class KafkaIpfixSink;

/// 16 lower-case hex digits of a direction-independent 64-bit hash of (addresses, ports,
/// protocol): the key of `key=flow`. Returns the end of the 16 characters.
char* kafkaFlowKey(char* out, const FlowRecord& record) noexcept;

class KafkaOutput final : public OutputPlugin {
public:
    enum class Format : std::uint8_t { Json, Ipfix };
    enum class Key : std::uint8_t { None, Flow, CommunityId };

    /// Validates every option and every `conf=` property against librdkafka (ConfigError for
    /// an unknown property or a value librdkafka refuses) and creates the producer. A broker
    /// that is down is not an error: librdkafka connects in the background.
    explicit KafkaOutput(const Options& options);
    ~KafkaOutput() override;

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    void finish() override;
    OutputStats stats() const override;
    /// json: the plugin fields follow the record's, as in the json output (one message per
    /// object: a record with several instances gives several messages, each with the record's
    /// key). ipfix: the ipfix output's extensions (IpfixPluginFields), templates per set of
    /// plugins present carried in every message that uses them.
    void setProcessPlugins(std::span<const ProcessPlugin* const> plugins) override;

    /// Records produced whose delivery report has not arrived yet.
    std::uint64_t inFlight() const noexcept;
    /// The producer handle (tests: mock cluster, metadata).
    rd_kafka_s* handle() const noexcept { return m_rk; }

private:
    friend class KafkaIpfixSink;
    using Clock = std::chrono::steady_clock;

    /// Queues one message with the pending key; false (records counted as dropped) when the
    /// queue stayed full beyond `block` or librdkafka refused it.
    bool produceMessage(const void* value, std::size_t length, std::uint32_t records);
    /// json, a record with plugin data: one message per object (JsonPluginColumns).
    void writeJsonWithPlugins(const FlowRecord& r);
    void addIpfix(const FlowRecord& r);  ///< ipfix: one record (with its plugin data, if any)
    std::size_t keyOf(const FlowRecord& r, char* out) const noexcept;
    void servePoll(int timeoutMs);  ///< rd_kafka_poll under m_pollMutex
    static void deliveryReport(rd_kafka_s* rk, const rd_kafka_message_s* message, void* opaque);

    Format m_format = Format::Json;
    Key m_key = Key::None;
    std::uint16_t m_seed = 0;
    std::chrono::nanoseconds m_block{};
    std::chrono::nanoseconds m_linger{};
    std::string m_topicName;
    std::string m_probe;  ///< value of the "probe" header; empty = no header

    rd_kafka_s* m_rk = nullptr;
    rd_kafka_topic_s* m_topic = nullptr;

    std::unique_ptr<JsonLayout> m_layout;
    std::unique_ptr<JsonPluginColumns> m_pluginColumns;  ///< json with -p; null otherwise
    InstanceGroups m_groups;                             ///< json with -p: instance lines
    std::vector<char> m_buffer;
    std::unique_ptr<KafkaIpfixSink> m_sink;
    std::unique_ptr<IpfixEncoder> m_encoder;
    std::unique_ptr<IpfixPluginFields> m_ipfixPlugins;  ///< ipfix with -p; null otherwise
    std::uint32_t m_tunnelPen = 0;                 ///< ipfix: `tunnel-pen`, 0 = no tunnel elements
    std::unique_ptr<EncoderConfig> m_ipfixConfig;  ///< ipfix: to rebuild the encoder for -p
    const char* m_pendingKey = nullptr;  ///< ipfix with a key: the key of the record being sent
    std::size_t m_pendingKeyLength = 0;

    bool m_queueStalled = false;  ///< the last produce found the queue full beyond `block`
    bool m_finished = false;
    mutable std::mutex m_pollMutex;        ///< one poller at a time; finish() holds it
    std::atomic<bool> m_finishing{false};  ///< stats() polls no more

    std::atomic<std::uint64_t> m_produced{0};   ///< records queued in librdkafka
    std::atomic<std::uint64_t> m_delivered{0};  ///< ... acknowledged (delivery report OK)
    std::atomic<std::uint64_t> m_failed{0};     ///< ... failed, purged or never reported
    std::atomic<std::uint64_t> m_rejected{0};   ///< never queued (full queue, refused)
    std::atomic<std::uint64_t> m_bytes{0};      ///< values delivered
    std::atomic<std::uint64_t> m_oversized{0};  ///< ipfix: records larger than a message
    std::atomic<std::uint64_t> m_failedReports{0};
    std::uint64_t m_rejectReports = 0;
};

}  // namespace rowprobe::output
