#include "kafka_output.hpp"

#include <librdkafka/rdkafka.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <thread>

#include "ipfix_encoder.hpp"
#include "ipfix_output.hpp"
#include "output/json/json_output.hpp"
#include "rowprobe/byte_order.hpp"
#include "rowprobe/community_id.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"
#include "rowprobe/secrets.hpp"

namespace rowprobe::output {

namespace {

constexpr std::string_view kFormats[] = {"json", "ipfix"};
constexpr std::string_view kKeys[] = {"none", "flow", "community-id"};
constexpr std::string_view kCompressions[] = {"none", "gzip", "snappy", "lz4", "zstd"};
constexpr std::string_view kAcks[] = {"all", "1", "0"};

constexpr OptionSpec kOptions[] = {
    {.name = "brokers",
     .shortName = "b",
     .type = OptionType::String,
     .defaultValue = "127.0.0.1:9092",
     .help = "bootstrap brokers, host:port[,host:port...] (librdkafka bootstrap.servers)"},
    {.name = "topic",
     .shortName = "t",
     .type = OptionType::String,
     .defaultValue = "flows",
     .help = "topic to produce to (letters, digits, '.', '_', '-'; at most 249)"},
    {.name = "format",
     .shortName = "f",
     .type = OptionType::Choice,
     .defaultValue = "json",
     .help = "message value: json (the json output's object, no newline) or ipfix (one "
             "self-contained IPFIX message with its templates)",
     .choices = kFormats},
    {.name = "fields",
     .shortName = "F",
     .type = OptionType::String,
     .help = "json: comma-separated field names, in this order (default: the json output's)"},
    {.name = "key",
     .shortName = "k",
     .type = OptionType::Choice,
     .defaultValue = "none",
     .help = "message key for partition affinity: none, flow (16 hex digits of a 5-tuple hash, "
             "same both ways) or community-id (Community ID v1); ipfix with a key: one record "
             "per message",
     .choices = kKeys},
    {.name = "community-id-seed",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "seed of key=community-id",
     .min = 0,
     .max = 65535},
    {.name = "compression",
     .shortName = "c",
     .type = OptionType::Choice,
     .defaultValue = "lz4",
     .help = "batch compression (librdkafka compression.codec)",
     .choices = kCompressions},
    {.name = "acks",
     .shortName = "a",
     .type = OptionType::Choice,
     .defaultValue = "all",
     .help = "broker acknowledgements: all (in-sync replicas; idempotent producer, no "
             "duplicates on retries), 1 (leader) or 0 (none: records count as delivered once sent)",
     .choices = kAcks},
    {.name = "batch-delay",
     .type = OptionType::Duration,
     .defaultValue = "0.02",
     .help = "how long librdkafka gathers messages into a batch (librdkafka linger.ms)",
     .min = 0,
     .max = 900},
    {.name = "buffer",
     .type = OptionType::Int,
     .defaultValue = "1024",
     .help = "MiB of messages queued locally while brokers are slow or down (librdkafka's default)",
     .min = 1,
     .max = 2047},
    {.name = "block",
     .type = OptionType::Duration,
     .defaultValue = "1",
     .help = "longest wait of the export thread for room in a full local queue before a record "
             "is dropped (counted); 0 drops at once",
     .min = 0,
     .max = 3600},
    {.name = "timeout",
     .type = OptionType::Duration,
     .defaultValue = "300",
     .help = "how long librdkafka retries a message (brokers down) before it counts as dropped "
             "(librdkafka message.timeout.ms)",
     .min = 0.001,
     .max = 2147483},
    {.name = "linger",
     .shortName = "l",
     .type = OptionType::Duration,
     .defaultValue = "5",
     .help = "at exit, how long to keep delivering queued records; the rest counts as dropped",
     .min = 0,
     .max = 3600},
    {.name = "mtu",
     .shortName = "m",
     .type = OptionType::Int,
     .defaultValue = "8192",
     .help = "ipfix: largest data part of a message in bytes incl. the 16-byte header (the "
             "templates come on top)",
     .min = 17,
     .max = 65535},
    {.name = "id",
     .shortName = "I",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "ipfix: observation domain id",
     .min = 0,
     .max = 4294967295.0},
    {.name = "tunnel-pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "ipfix: enterprise number under which inner flows (--tunnel) carry their tunnel's "
             "type, id and outer addresses, as the ipfix output's tunnel-pen; 0: not exported",
     .min = 0,
     .max = 4294967295.0},
    {.name = "probe",
     .shortName = "p",
     .type = OptionType::String,
     .help = "name of this probe, sent as the Kafka header 'probe' of every message (default: "
             "no header)"},
    {.name = "conf",
     .type = OptionType::String,
     .help = "librdkafka properties, prop=value[,prop=value...], applied last (checked at "
             "start-up)"},
};

std::string millis(std::chrono::nanoseconds ns) {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(ns + std::chrono::microseconds(999))
            .count());
}

/// librdkafka properties conf= refuses, with the reason: they run code of the configuration's
/// choosing (a library's constructor runs inside rowprobe, a shell command), or break the
/// accounting (with only errors reported, every delivered record would count as dropped).
struct RefusedProperty {
    std::string_view name;
    std::string_view why;
};
constexpr RefusedProperty kRefusedProperties[] = {
    {"plugin.library.paths", "it loads shared libraries into rowprobe, whose code runs at once"},
    {"sasl.kerberos.kinit.cmd",
     "it runs a shell command; use a keytab (sasl.kerberos.keytab) and principal instead"},
    {"ssl.engine.location", "it loads an OpenSSL engine library into rowprobe"},
    {"delivery.report.only.error",
     "rowprobe counts a record as written from its delivery report: without the reports every "
     "delivered record would count as dropped"},
};

/// Every global and topic property librdkafka knows, for "did you mean".
std::vector<std::string> knownProperties() {
    std::vector<std::string> names;
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    std::size_t n = 0;
    const char** dump = rd_kafka_conf_dump(conf, &n);
    for (std::size_t i = 0; i + 1 < n; i += 2) names.emplace_back(dump[i]);
    rd_kafka_conf_dump_free(dump, n);
    rd_kafka_conf_destroy(conf);
    rd_kafka_topic_conf_t* topic = rd_kafka_topic_conf_new();
    dump = rd_kafka_topic_conf_dump(topic, &n);
    for (std::size_t i = 0; i + 1 < n; i += 2) names.emplace_back(dump[i]);
    rd_kafka_conf_dump_free(dump, n);
    rd_kafka_topic_conf_destroy(topic);
    // Aliases are accepted but not dumped; these are the ones Java-client users type.
    for (const char* alias : {"linger.ms", "acks", "bootstrap.servers", "compression.type",
                              "retries", "retry.backoff.ms", "batch.size", "delivery.timeout.ms",
                              "max.in.flight", "queue.buffering.max.ms"})
        names.emplace_back(alias);
    return names;
}

bool validTopic(const std::string& t) {
    if (t.empty() || t.size() > 249 || t == "." || t == "..") return false;
    return std::all_of(t.begin(), t.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
    });
}

void logLine(const rd_kafka_t* /*rk*/, int /*level*/, const char* facility, const char* text) {
    std::fprintf(stderr, "rowprobe: output 'kafka': %s: %s\n", facility, text);
}

/// Errors are already in the log (logLine); only a fatal one (e.g. the idempotent producer's
/// state lost) needs a line of its own.
void errorLine(rd_kafka_t* /*rk*/, int err, const char* reason, void* /*opaque*/) {
    if (err == RD_KAFKA_RESP_ERR__FATAL)
        std::fprintf(stderr, "rowprobe: output 'kafka': fatal: %s\n", reason);
}

}  // namespace

/// Turns each data message of the IPFIX encoder into a self-contained Kafka message: the
/// header, one template set with the templates of the data sets present, then those sets.
class KafkaIpfixSink final : public MessageSink {
public:
    explicit KafkaIpfixSink(KafkaOutput& out) : m_out(out) {}

    /// The bytes of every template the encoder has now (they grow with process plugins:
    /// one pair per set of plugins present, created as records need them).
    std::size_t templateBytes() const {
        std::size_t total = 0;
        for (const IpfixTemplate& t : m_out.m_encoder->templates()) total += t.record.size();
        return total;
    }

    bool sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                     bool templates) override {
        if (templates || dataRecords == 0) return true;  // every data message carries its own
        const std::span<const IpfixTemplate> known = m_out.m_encoder->templates();
        m_buffer.resize(message.size() + kIpfixSetHeaderSize + templateBytes());
        std::uint8_t* out = m_buffer.data();
        std::memcpy(out, message.data(), kIpfixHeaderSize);
        std::size_t at = kIpfixHeaderSize + kIpfixSetHeaderSize;
        // Template records for the data sets present, in the order of the sets.
        m_done.clear();
        for (std::size_t p = kIpfixHeaderSize; p + kIpfixSetHeaderSize <= message.size();) {
            const auto id = static_cast<std::uint16_t>((message[p] << 8) | message[p + 1]);
            const std::size_t length = (std::size_t{message[p + 2]} << 8) | message[p + 3];
            if (length < kIpfixSetHeaderSize) break;
            if (std::find(m_done.begin(), m_done.end(), id) == m_done.end()) {
                for (const IpfixTemplate& t : known) {
                    if (t.id != id) continue;
                    std::memcpy(out + at, t.record.data(), t.record.size());
                    at += t.record.size();
                    m_done.push_back(id);
                }
            }
            p += length;
        }
        const std::size_t setLength = at - kIpfixHeaderSize;
        const std::size_t data = message.size() - kIpfixHeaderSize;
        if (at + data > 65535) {
            // Only with process plugins and an mtu near 65535: the templates do not fit on top.
            m_out.m_rejected.fetch_add(dataRecords, std::memory_order_relaxed);
            if (m_out.m_rejectReports++ == 0) {
                std::fprintf(stderr,
                             "rowprobe: output 'kafka': an IPFIX message with its templates "
                             "would exceed 65535 bytes; lower mtu (counted as dropped)\n");
            }
            return true;
        }
        storeBe16(out + kIpfixHeaderSize, kTemplateSetId);
        storeBe16(out + kIpfixHeaderSize + 2, static_cast<std::uint16_t>(setLength));
        std::memcpy(out + at, message.data() + kIpfixHeaderSize, data);
        at += data;
        storeBe16(out + 2, static_cast<std::uint16_t>(at));
        return m_out.produceMessage(out, at, dataRecords);
    }

private:
    KafkaOutput& m_out;
    std::vector<std::uint16_t> m_done;  ///< template ids already in the message being built
    std::vector<std::uint8_t> m_buffer;
};

char* kafkaFlowKey(char* out, const FlowRecord& r) noexcept {
    // Direction-independent: the smaller (address, port) endpoint first, then the protocol.
    const int cmp = std::memcmp(r.srcAddr.data(), r.dstAddr.data(), 16);
    const bool swap = cmp > 0 || (cmp == 0 && r.srcPort > r.dstPort);
    const std::uint16_t pa = swap ? r.dstPort : r.srcPort;
    const std::uint16_t pb = swap ? r.srcPort : r.dstPort;
    std::uint8_t bytes[37];
    std::memcpy(bytes, (swap ? r.dstAddr : r.srcAddr).data(), 16);
    std::memcpy(bytes + 16, (swap ? r.srcAddr : r.dstAddr).data(), 16);
    bytes[32] = static_cast<std::uint8_t>(pa >> 8);
    bytes[33] = static_cast<std::uint8_t>(pa);
    bytes[34] = static_cast<std::uint8_t>(pb >> 8);
    bytes[35] = static_cast<std::uint8_t>(pb);
    bytes[36] = r.proto;
    std::uint64_t h = XXH3_64bits(bytes, sizeof bytes);
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; --i) {
        out[i] = kHex[h & 15];
        h >>= 4;
    }
    return out + 16;
}

KafkaOutput::KafkaOutput(const Options& o) {
    const std::string format = o.getString("format");
    m_format = format == "ipfix" ? Format::Ipfix : Format::Json;
    const std::string key = o.getString("key");
    m_key = key == "flow" ? Key::Flow : key == "community-id" ? Key::CommunityId : Key::None;
    m_seed = static_cast<std::uint16_t>(o.getInt("community-id-seed"));
    if (o.explicitlySet("community-id-seed") && m_key != Key::CommunityId)
        o.fail("community-id-seed", "applies to key=community-id only");
    m_block = std::chrono::nanoseconds(o.getDurationNs("block"));
    m_linger = std::chrono::nanoseconds(o.getDurationNs("linger"));
    m_topicName = o.getString("topic");
    m_probe = o.getString("probe");
    if (o.explicitlySet("probe") && m_probe.empty()) o.fail("probe", "needs a name");
    if (!validTopic(m_topicName)) {
        o.fail("topic",
               "is not a valid Kafka topic name: 1 to 249 of a-z A-Z 0-9 . _ - "
               "(and not '.' or '..')");
    }
    const std::string brokers = o.getString("brokers");
    if (brokers.empty()) o.fail("brokers", "needs at least one host:port");
    if (m_format == Format::Ipfix) {
        if (o.explicitlySet("fields"))
            o.fail("fields", "applies to format=json only (ipfix sends ipfixprobe's templates)");
    } else {
        for (const char* ipfixOnly : {"mtu", "id", "tunnel-pen"}) {
            if (o.explicitlySet(ipfixOnly)) o.fail(ipfixOnly, "applies to format=ipfix only");
        }
    }

    // Producer configuration: rowprobe's options first, then conf= so it can override them.
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char err[512];
    auto set = [&](const std::string& name, const std::string& value, const char* option) {
        const rd_kafka_conf_res_t res =
            rd_kafka_conf_set(conf, name.c_str(), value.c_str(), err, sizeof err);
        if (res == RD_KAFKA_CONF_OK) return;
        rd_kafka_conf_destroy(conf);
        if (res == RD_KAFKA_CONF_UNKNOWN) {
            std::string problem = "unknown librdkafka property '" + name + "'";
            if (const std::string guess = closestMatch(name, knownProperties()); !guess.empty())
                problem += " (did you mean '" + guess + "'?)";
            problem += "; the properties are listed in librdkafka's CONFIGURATION.md";
            o.fail(option, problem, {}, name);
        }
        // A secret's value is not repeated in the message (it would end up in the journal).
        const bool secret = isSecretProperty(name);
        o.fail(option,
               "librdkafka refuses " + name + "=" + (secret ? "(secret not shown)" : value) + ": " +
                   err,
               {},
               std::string_view(option) == "conf" && !secret ? std::string_view(value)
                                                             : std::string_view());
    };
    set("bootstrap.servers", brokers, "brokers");
    set("compression.codec", o.getString("compression"), "compression");
    const std::string acks = o.getString("acks");
    set("acks", acks == "all" ? "-1" : acks, "acks");
    set("enable.idempotence", acks == "all" ? "true" : "false", "acks");
    set("linger.ms", millis(std::chrono::nanoseconds(o.getDurationNs("batch-delay"))),
        "batch-delay");
    set("queue.buffering.max.kbytes", std::to_string(o.getInt("buffer") * 1024), "buffer");
    set("queue.buffering.max.messages", "0", "buffer");  // bounded by bytes only
    set("message.timeout.ms", millis(std::chrono::nanoseconds(o.getDurationNs("timeout"))),
        "timeout");
    set("client.id", "rowprobe", "conf");
    if (o.explicitlySet("conf")) {
        const std::string text = o.getString("conf");
        std::size_t start = 0;
        while (start <= text.size()) {
            std::size_t end = text.find(',', start);
            if (end == std::string::npos) end = text.size();
            const std::string item = text.substr(start, end - start);
            const std::size_t eq = item.find('=');
            if (item.empty() || eq == 0 || eq == std::string::npos) {
                rd_kafka_conf_destroy(conf);
                o.fail("conf", "expects prop=value[,prop=value...], got '" + item + "'", {},
                       item.empty() ? std::string_view() : std::string_view(item));
            }
            const std::string name = item.substr(0, eq);
            for (const RefusedProperty& r : kRefusedProperties) {
                if (name == r.name) {
                    rd_kafka_conf_destroy(conf);
                    o.fail("conf", "property '" + name + "' is not allowed: " + std::string(r.why),
                           {}, name);
                }
            }
            set(name, item.substr(eq + 1), "conf");
            start = end + 1;
        }
    }
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t* rk, const rd_kafka_message_t* m, void* op) {
        deliveryReport(rk, m, op);
    });
    rd_kafka_conf_set_log_cb(conf, logLine);
    rd_kafka_conf_set_error_cb(conf, errorLine);
    rd_kafka_conf_set_opaque(conf, this);
    m_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (m_rk == nullptr) {
        rd_kafka_conf_destroy(conf);
        o.fail(o.explicitlySet("conf") ? "conf" : "acks",
               std::string("librdkafka cannot create a producer: ") + err);
    }
    m_topic = rd_kafka_topic_new(m_rk, m_topicName.c_str(), nullptr);
    if (m_topic == nullptr) {
        const std::string why = rd_kafka_err2str(rd_kafka_last_error());
        rd_kafka_destroy(m_rk);
        m_rk = nullptr;
        o.fail("topic", "librdkafka cannot use it: " + why);
    }

    try {
        if (m_format == Format::Json) {
            if (o.explicitlySet("fields")) {
                m_layout = std::make_unique<JsonLayout>(std::span<const FieldId>());
                for (const FieldSpec* spec : parseRecordFieldList(o, "fields"))
                    m_layout->add(*spec);
                if (m_layout->maxLine() > JsonOutput::kLineLimit)
                    o.fail("fields", "too many fields: a message could exceed " +
                                         std::to_string(JsonOutput::kLineLimit) + " bytes");
            } else {
                m_layout = std::make_unique<JsonLayout>(JsonLayout::defaults());
            }
            m_buffer.resize(m_layout->maxLine());
        } else {
            EncoderConfig config;
            config.observationDomain = static_cast<std::uint32_t>(o.getInt("id"));
            config.maxMessageSize = static_cast<std::size_t>(o.getInt("mtu"));
            const auto fields = ipfixBasicFields();
            const bool tunnel = o.getInt("tunnel-pen") != 0;
            const std::size_t minimum =
                IpfixEncoder::minMessageSize(fields) + (tunnel ? kIpfixTunnelBytes : 0);
            if (config.maxMessageSize < minimum) {
                o.fail("mtu", "must be at least " + std::to_string(minimum) +
                                  " bytes to hold one IPv6 record" +
                                  (tunnel ? " with its tunnel's fields" : "") +
                                  " and one template, got " +
                                  std::to_string(config.maxMessageSize));
            }
            m_tunnelPen = static_cast<std::uint32_t>(o.getInt("tunnel-pen"));
            if (m_tunnelPen != 0) {
                m_ipfixPlugins = std::make_unique<IpfixPluginFields>(
                    std::span<const ProcessPlugin* const>{}, "kafka", m_tunnelPen);
                config.extensions = m_ipfixPlugins->extensions();
            }
            m_sink = std::make_unique<KafkaIpfixSink>(*this);
            m_encoder = std::make_unique<IpfixEncoder>(config, fields, *m_sink);
            m_ipfixConfig = std::make_unique<EncoderConfig>(config);
            const std::size_t templateBytes = m_sink->templateBytes();
            const std::size_t limit = 65535 - kIpfixSetHeaderSize - templateBytes;
            if (config.maxMessageSize > limit) {
                o.fail("mtu", "must be at most " + std::to_string(limit) +
                                  " bytes: the templates (" + std::to_string(templateBytes) +
                                  " bytes) come on top and an IPFIX message holds 65535");
            }
        }
    } catch (...) {
        rd_kafka_topic_destroy(m_topic);
        rd_kafka_destroy(m_rk);
        m_rk = nullptr;
        throw;
    }
}

KafkaOutput::~KafkaOutput() {
    if (m_rk == nullptr) return;
    try {
        finish();
    } catch (const std::exception&) {
        // A destructor cannot report; finish() is called explicitly by the pipeline.
    }
    rd_kafka_topic_destroy(m_topic);
    rd_kafka_destroy(m_rk);
}

void KafkaOutput::deliveryReport(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
    auto* self = static_cast<KafkaOutput*>(opaque);
    const auto records = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(m->_private));
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        self->m_delivered.fetch_add(records, std::memory_order_relaxed);
        self->m_bytes.fetch_add(m->len, std::memory_order_relaxed);
    } else {
        self->m_failed.fetch_add(records, std::memory_order_relaxed);
        if (self->m_failedReports++ == 0) {
            std::fprintf(stderr,
                         "rowprobe: output 'kafka': delivery failed: %s (counted as dropped)\n",
                         rd_kafka_err2str(m->err));
        }
    }
}

bool KafkaOutput::produceMessage(const void* value, std::size_t length, std::uint32_t records) {
    Clock::time_point deadline{};
    for (;;) {
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
        // The delivery report gets the message's record count back as its opaque pointer.
        void* opaque =
            reinterpret_cast<void*>(std::uintptr_t{records});  // NOLINT(performance-no-int-to-ptr)
        if (m_probe.empty()) {
            if (rd_kafka_produce(m_topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                                 const_cast<void*>(value), length, m_pendingKey, m_pendingKeyLength,
                                 opaque) != 0)
                e = rd_kafka_last_error();
        } else {
            rd_kafka_vu_t vu[6] = {};
            vu[0].vtype = RD_KAFKA_VTYPE_RKT;
            vu[0].u.rkt = m_topic;
            vu[1].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
            vu[1].u.i = RD_KAFKA_MSG_F_COPY;
            vu[2].vtype = RD_KAFKA_VTYPE_VALUE;
            vu[2].u.mem = {const_cast<void*>(value), length};
            vu[3].vtype = RD_KAFKA_VTYPE_KEY;
            vu[3].u.mem = {const_cast<char*>(m_pendingKey), m_pendingKeyLength};
            vu[4].vtype = RD_KAFKA_VTYPE_HEADER;
            vu[4].u.header = {"probe", m_probe.data(), static_cast<ssize_t>(m_probe.size())};
            vu[5].vtype = RD_KAFKA_VTYPE_OPAQUE;
            vu[5].u.ptr = opaque;
            if (rd_kafka_error_t* error = rd_kafka_produceva(m_rk, vu, std::size(vu))) {
                e = rd_kafka_error_code(error);
                rd_kafka_error_destroy(error);
            }
        }
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
            m_produced.fetch_add(records, std::memory_order_relaxed);
            m_queueStalled = false;
            return true;
        }
        if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL && !m_queueStalled) {
            const Clock::time_point now = Clock::now();
            if (deadline == Clock::time_point{}) deadline = now + m_block;
            if (now < deadline) {
                // Serve delivery reports (they free queue room) while waiting.
                servePoll(5);
                continue;
            }
            m_queueStalled = true;
        }
        m_rejected.fetch_add(records, std::memory_order_relaxed);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL && m_rejectReports++ == 0) {
            std::fprintf(stderr,
                         "rowprobe: output 'kafka': cannot queue a message: %s (counted "
                         "as dropped)\n",
                         rd_kafka_err2str(e));
        }
        return false;
    }
}

std::size_t KafkaOutput::keyOf(const FlowRecord& r, char* out) const noexcept {
    switch (m_key) {
        case Key::Flow:
            return static_cast<std::size_t>(kafkaFlowKey(out, r) - out);
        case Key::CommunityId:
            return static_cast<std::size_t>(communityId(out, r, m_seed) - out);
        case Key::None:
            break;
    }
    return 0;
}

void KafkaOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    if (plugins.empty()) return;
    m_pluginColumns.reset();
    if (m_format == Format::Ipfix) {
        // The ipfix output's extensions: plugin i is extension i (the tunnel's follow);
        // templates per set present are created as records need them and go into each message
        // that uses them.
        m_ipfixPlugins = std::make_unique<IpfixPluginFields>(plugins, "kafka", m_tunnelPen);
        m_ipfixConfig->extensions = m_ipfixPlugins->extensions();
        m_encoder = std::make_unique<IpfixEncoder>(*m_ipfixConfig, ipfixBasicFields(), *m_sink);
        return;
    }
    m_pluginColumns = std::make_unique<JsonPluginColumns>(plugins);
}

void KafkaOutput::writeJsonWithPlugins(const FlowRecord& r) {
    const InstanceGroups groups(r, m_pluginColumns->plugins());
    if (groups.lines() == 0) {
        char* end = m_layout->format(m_buffer.data(), r);
        produceMessage(m_buffer.data(), static_cast<std::size_t>(end - m_buffer.data()) - 1, 1);
        return;
    }
    const std::size_t bound = m_pluginColumns->maxObject(*m_layout, groups);
    if (m_buffer.size() < bound) m_buffer.resize(bound);  // grows to the largest record seen
    for (std::size_t k = 0; k < groups.lines(); ++k) {
        char* p = m_layout->formatOpen(m_buffer.data(), r);
        p = m_pluginColumns->writeFields(p, groups, k);
        *p++ = '}';
        // Each message counts as one record in the statistics, like each line of the json
        // output.
        produceMessage(m_buffer.data(), static_cast<std::size_t>(p - m_buffer.data()), 1);
    }
}

void KafkaOutput::addIpfix(const FlowRecord& r) {
    if (m_ipfixPlugins && m_ipfixPlugins->extended(r)) {
        m_ipfixPlugins->add(*m_encoder, r);
    } else {
        m_encoder->add(r);
    }
}

void KafkaOutput::write(std::span<const FlowRecord> records) {
    std::array<char, 32> key{};
    if (m_format == Format::Json) {
        for (const FlowRecord& r : records) {
            if (r.extLen != 0 && m_pluginColumns) {
                m_pendingKeyLength = keyOf(r, key.data());
                m_pendingKey = m_pendingKeyLength != 0 ? key.data() : nullptr;
                writeJsonWithPlugins(r);
                continue;
            }
            char* end = m_layout->format(m_buffer.data(), r);
            const auto length = static_cast<std::size_t>(end - m_buffer.data()) - 1;  // no '\n'
            m_pendingKeyLength = keyOf(r, key.data());
            m_pendingKey = m_pendingKeyLength != 0 ? key.data() : nullptr;
            produceMessage(m_buffer.data(), length, 1);
        }
    } else if (m_key == Key::None) {
        m_pendingKey = nullptr;
        m_pendingKeyLength = 0;
        if (!m_ipfixPlugins) {
            m_encoder->add(records);
        } else {
            for (const FlowRecord& r : records) addIpfix(r);
        }
    } else {
        for (const FlowRecord& r : records) {
            m_pendingKeyLength = keyOf(r, key.data());
            m_pendingKey = key.data();
            addIpfix(r);
            m_encoder->flush();
        }
    }
    if (m_encoder) m_oversized.store(m_encoder->oversized(), std::memory_order_relaxed);
    m_pendingKey = nullptr;
    m_pendingKeyLength = 0;
    servePoll(0);
}

void KafkaOutput::flush() {
    if (m_encoder) m_encoder->flush();
    servePoll(0);
}

void KafkaOutput::finish() {
    if (m_finished || m_rk == nullptr) return;
    m_finished = true;
    if (m_encoder) m_encoder->flush();  // may wait for queue room through servePoll
    // Held to the end: stats() serves no delivery report while the final count is made.
    const std::lock_guard lock(m_pollMutex);
    m_finishing.store(true, std::memory_order_relaxed);
    const auto lingerMs = std::chrono::duration_cast<std::chrono::milliseconds>(m_linger).count();
    rd_kafka_flush(m_rk, static_cast<int>(std::min<std::int64_t>(lingerMs, 1 << 30)));
    if (inFlight() != 0) {
        // Past the linger: what librdkafka still holds is purged; its delivery reports (with
        // a purge error) count it as dropped.
        rd_kafka_purge(m_rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT |
                                 RD_KAFKA_PURGE_F_NON_BLOCKING);
        for (int i = 0; i < 100 && inFlight() != 0; ++i) rd_kafka_poll(m_rk, 10);
    }
    // Anything whose report never came is lost to us: count it rather than forget it.
    const std::uint64_t left = inFlight();
    if (left != 0) m_failed.fetch_add(left, std::memory_order_relaxed);
}

std::uint64_t KafkaOutput::inFlight() const noexcept {
    return m_produced.load(std::memory_order_relaxed) -
           m_delivered.load(std::memory_order_relaxed) - m_failed.load(std::memory_order_relaxed);
}

void KafkaOutput::servePoll(int timeoutMs) {
    const std::lock_guard lock(m_pollMutex);
    rd_kafka_poll(m_rk, timeoutMs);
}

OutputStats KafkaOutput::stats() const {
    // Serve delivery reports that arrived while the export thread is idle (it polls only when
    // it writes or flushes), so periodic statistics and --metrics are current. Never waits:
    // when the export thread is polling, it serves them.
    if (m_rk != nullptr && !m_finishing.load(std::memory_order_relaxed) && m_pollMutex.try_lock()) {
        rd_kafka_poll(m_rk, 0);
        m_pollMutex.unlock();
    }
    return {.records = m_delivered.load(std::memory_order_relaxed),
            .dropped = m_failed.load(std::memory_order_relaxed) +
                       m_rejected.load(std::memory_order_relaxed) +
                       m_oversized.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, KafkaOutput,
                         {.name = "kafka",
                          .summary = "one Kafka message per record (json) or per IPFIX message "
                                     "(ipfix), librdkafka producer with a bounded local queue",
                          .options = kOptions});

}  // namespace rowprobe::output
