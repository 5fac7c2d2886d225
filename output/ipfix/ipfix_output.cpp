#include "ipfix_output.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "output/common/export_field_list.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr std::string_view kPrecisions[] = {"s", "ms", "us", "ns"};
constexpr std::string_view kYesNo[] = {"yes", "no"};
constexpr std::size_t kMaxUdpPayload = 65507;

// Names and defaults follow ipfixprobe's ipfix output (output/ipfix/README.md) where it has the
// option; the rest are rowprobe's.
constexpr OptionSpec kOptions[] = {
    {.name = "host",
     .shortName = "h",
     .type = OptionType::String,
     .defaultValue = "127.0.0.1",
     .help = "collector address: name, IPv4 or IPv6"},
    {.name = "port",
     .shortName = "p",
     .type = OptionType::Int,
     .defaultValue = "4739",
     .help = "collector port",
     .min = 1,
     .max = 65535},
    {.name = "udp",
     .shortName = "u",
     .type = OptionType::Flag,
     .help = "send over UDP (default: TCP)"},
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .help = "write an IPFIX file (RFC 5655) instead of sending; '-' is stdout"},
    {.name = "mtu",
     .shortName = "m",
     .type = OptionType::Int,
     .defaultValue = "1458",
     .help = "largest message in bytes incl. the 16-byte header (file: 65535 unless given)",
     .min = 17,
     .max = 65535},
    {.name = "id",
     .shortName = "I",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "observation domain id",
     .min = 0,
     .max = 4294967295.0},
    {.name = "dir",
     .shortName = "d",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "value exported as flowDirection (IE 61): 0 ingress, 1 egress",
     .min = 0,
     .max = 255},
    {.name = "template",
     .shortName = "t",
     .type = OptionType::Duration,
     .defaultValue = "600",
     .help = "UDP: re-send templates after this long; 0 disables",
     .min = 0,
     .max = 86400},
    {.name = "template-packets",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "UDP: re-send templates after this many data messages; 0 disables",
     .min = 0,
     .max = 1e9},
    {.name = "timestamps",
     .type = OptionType::Choice,
     .defaultValue = "us",
     .help = "precision of flowStart/End: s (150/151), ms (152/153), us (154/155), ns (156/157)",
     .choices = kPrecisions},
    {.name = "buffer",
     .shortName = "b",
     .type = OptionType::Int,
     .defaultValue = "16",
     .help = "TCP: MiB of messages kept while the collector is unreachable",
     .min = 1,
     .max = 4096},
    {.name = "reconnect",
     .shortName = "r",
     .type = OptionType::Duration,
     .defaultValue = "5",
     .help = "TCP: longest wait between reconnect attempts (from 0.1 s, doubling)",
     .min = 0.1,
     .max = 3600},
    {.name = "linger",
     .shortName = "l",
     .type = OptionType::Duration,
     .defaultValue = "5",
     .help = "TCP: at exit, how long to keep delivering buffered records",
     .min = 0,
     .max = 3600},
    {.name = "non-blocking-tcp",
     .shortName = "n",
     .type = OptionType::Flag,
     .help = "accepted for ipfixprobe compatibility: connects never block the export thread"},
    {.name = "verbose",
     .shortName = "v",
     .type = OptionType::Flag,
     .help = "log every connect attempt and disconnect"},
    {.name = "pace",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "UDP: send at most this many messages per second (the final flush too: N messages "
             "take N/pace s at exit), so a collector with a default socket buffer keeps up; "
             "0: unpaced",
     .min = 0,
     .max = 10000000},
    {.name = "uniflow",
     .shortName = "U",
     .type = OptionType::Flag,
     .help = "send each biflow as two uniflow records (forward, then reverse when it has reverse "
             "packets) with IANA elements only, flowDirection 0/1: for collectors that ignore "
             "RFC 5103 reverse elements (GoFlow2, Akvorado, nfdump)"},
    {.name = "tunnel-pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "enterprise number (yours) under which inner flows (--tunnel) carry tunnelType (1), "
             "tunnelId (2), outer IPv4 (3, 4) or IPv6 (5, 6) addresses; 0: not exported",
     .min = 0,
     .max = 4294967295.0},
    {.name = "fields",
     .type = OptionType::String,
     .help = "comma-separated fields the templates carry, in the output's own order: 'basic' "
             "(the default template), core field names as the json output's fields= (vlan, ttl, "
             "icmp_type_code, ...), a -p plugin's name (all its fields) or one of its field "
             "names; default: basic and every plugin field"},
    {.name = "iana-only",
     .type = OptionType::Flag,
     .help = "leave out every enterprise element (RFC 5103 reverse counters and flags, CESNET "
             "and Flowmon plugin fields), for collectors that drop records with unknown "
             "elements; with uniflow no flow counter is lost"},
    {.name = "type-info",
     .type = OptionType::Choice,
     .defaultValue = "yes",
     .help = "send RFC 5610 type records (name, type) for every enterprise element of the "
             "templates but RFC 5103 reverse ones, with the templates: libfixbuf and Wireshark "
             "then name them without an element file; none are sent for the default template",
     .choices = kYesNo},
};

TimePrecision precisionFrom(const std::string& text) {
    if (text == "s") return TimePrecision::Seconds;
    if (text == "ms") return TimePrecision::Milliseconds;
    if (text == "ns") return TimePrecision::Nanoseconds;
    return TimePrecision::Microseconds;
}

}  // namespace

IpfixOutput::IpfixOutput(const Options& o) {
    const bool toFile = o.explicitlySet("file");
    const bool udp = o.getFlag("udp");
    if (toFile) {
        for (const char* net : {"host", "port", "udp"}) {
            if (o.explicitlySet(net))
                o.fail(net, "does not apply with 'file' (the output is a file)");
        }
        if (o.getString("file").empty()) o.fail("file", "needs a path, or '-' for stdout");
    }
    if (!udp && o.explicitlySet("pace")) {
        o.fail("pace", std::string("applies to UDP only (this output uses ") +
                           (toFile ? "a file)" : "TCP, which the collector paces itself)"));
    }
    if (toFile || udp) {
        for (const char* tcp : {"buffer", "reconnect", "linger"}) {
            if (o.explicitlySet(tcp)) {
                o.fail(tcp, std::string("applies to TCP only (this output uses ") +
                                (toFile ? "a file)" : "UDP)"));
            }
        }
    }

    const bool uniflow = o.getFlag("uniflow");
    if (uniflow && o.explicitlySet("dir")) {
        o.fail("dir",
               "does not apply with 'uniflow' (flowDirection is then 0 for a flow's "
               "forward record and 1 for its reverse record)");
    }
    EncoderConfig config;
    config.uniflow = uniflow;
    config.observationDomain = static_cast<std::uint32_t>(o.getInt("id"));
    config.constants.dirBitField = static_cast<std::uint32_t>(o.getInt("dir"));
    config.timePrecision = precisionFrom(o.getString("timestamps"));
    config.maxMessageSize = static_cast<std::size_t>(o.getInt("mtu"));
    if (toFile && !o.explicitlySet("mtu")) config.maxMessageSize = 65535;
    const bool ianaOnly = o.getFlag("iana-only");
    if (ianaOnly && o.getInt("tunnel-pen") != 0) {
        o.fail("tunnel-pen",
               "does not apply with 'iana-only' (the tunnel elements are enterprise elements)");
    }
    const auto basic = uniflow ? ipfixUniflowFields() : ipfixBasicFields();
    if (o.explicitlySet("fields")) {
        ExportFieldList chosen =
            parseExportFieldList(o.getString("fields"), ipfixFieldVocabulary(uniflow), basic, true);
        if (!chosen.error.empty()) {
            o.fail("fields", chosen.error, chosen.known,
                   chosen.offending == o.getString("fields") ? std::string_view{}
                                                             : std::string_view(chosen.offending));
        }
        m_fieldStore = std::move(chosen.core);
        m_filter.all = false;
        m_filter.names = std::move(chosen.others);
    } else {
        m_fieldStore.assign(basic.begin(), basic.end());
    }
    if (ianaOnly) {
        // RFC 5103 reverse elements (PEN 29305) are enterprise elements too.
        std::erase_if(m_fieldStore, [](FieldId id) { return fieldSpec(id).ipfix.enterprise(); });
        if (m_fieldStore.empty()) {
            o.fail("fields",
                   "leaves no field with 'iana-only' (every one is an enterprise element)");
        }
    }
    m_filter.ianaOnly = ianaOnly;
    m_typeInfo = o.getString("type-info") == "yes";
    m_fields = m_fieldStore;
    const auto fields = m_fields;
    const bool tunnel = o.getInt("tunnel-pen") != 0;
    const std::size_t minimum =
        IpfixEncoder::minMessageSize(fields) + (tunnel ? kIpfixTunnelBytes : 0);
    if (config.maxMessageSize < minimum) {
        o.fail("mtu", "must be at least " + std::to_string(minimum) +
                          " bytes to hold one IPv6 record" +
                          (tunnel ? " with its tunnel's fields" : "") + " and one template, got " +
                          std::to_string(config.maxMessageSize));
    }
    if (udp && config.maxMessageSize > kMaxUdpPayload) {
        o.fail("mtu", "must be at most " + std::to_string(kMaxUdpPayload) +
                          " bytes over UDP (largest datagram), got " +
                          std::to_string(config.maxMessageSize));
    }
    if (udp) {
        config.templateRefreshNs = o.getDurationNs("template");
        config.templateRefreshMessages = static_cast<std::uint64_t>(o.getInt("template-packets"));
    }
    m_tunnelPen = static_cast<std::uint32_t>(o.getInt("tunnel-pen"));
    m_tunnelNoticeDue = m_tunnelPen == 0;
    m_config = config;
    if (m_tunnelPen != 0) {
        m_plugins = IpfixPluginFields({}, "ipfix", m_tunnelPen, m_filter);
        m_config.extensions = m_plugins.extensions();
        applyTypeInfo();
        config = m_config;
    }

    if (toFile) {
        try {
            m_transport = std::make_unique<FileTransport>(o.getString("file"));
        } catch (const RuntimeError& e) {
            o.fail("file", e.what());  // like every output file: a start-up error (exit 2)
        }
        m_encoder = std::make_unique<IpfixEncoder>(config, fields, *m_transport);
        return;
    }

    const std::string host = o.getString("host");
    const auto port = static_cast<std::uint16_t>(o.getInt("port"));
    std::string error;
    auto addresses = resolveAddress(host, port, udp ? SOCK_DGRAM : SOCK_STREAM, error);
    if (addresses.empty()) o.fail("host", "cannot resolve '" + host + "': " + error);

    if (udp) {
        UdpPacing pacing;
        pacing.messagesPerSecond = static_cast<std::uint32_t>(o.getInt("pace"));
        m_transport = std::make_unique<UdpTransport>(std::move(addresses), pacing);
        m_encoder = std::make_unique<IpfixEncoder>(config, fields, *m_transport);
        return;
    }
    // TCP: the transport needs the template messages for every new connection, so the encoder
    // is built first against a placeholder and the templates are handed over.
    struct NullSink final : MessageSink {
        bool sendMessage(std::span<const std::uint8_t>, std::uint32_t, bool) override {
            return true;
        }
    } nullSink;
    std::vector<std::uint32_t> typeRecords;
    auto templates = IpfixEncoder(config, fields, nullSink).templateMessages(&typeRecords);
    TcpTransport::Config tcp;
    tcp.addresses = std::move(addresses);
    tcp.bufferBytes = static_cast<std::size_t>(o.getInt("buffer")) << 20;
    tcp.reconnectMax = std::chrono::nanoseconds(o.getDurationNs("reconnect"));
    tcp.linger = std::chrono::nanoseconds(o.getDurationNs("linger"));
    tcp.verbose = o.getFlag("verbose");
    tcp.name = "output 'ipfix'";
    m_transport = std::make_unique<TcpTransport>(std::move(tcp), std::move(templates),
                                                 std::move(typeRecords));
    m_encoder = std::make_unique<IpfixEncoder>(config, fields, *m_transport);
}

IpfixOutput::~IpfixOutput() {
    try {
        finish();
    } catch (const std::exception&) {
        // A destructor cannot report; finish() is called explicitly by the pipeline.
    }
}

void IpfixOutput::setInputInterfaces(std::span<const std::uint32_t> byQueue) {
    if (std::none_of(byQueue.begin(), byQueue.end(), [](std::uint32_t i) { return i != 0; }))
        return;
    m_config.interfaceByQueue.assign(byQueue.begin(), byQueue.end());
    m_encoder = std::make_unique<IpfixEncoder>(m_config, m_fields, *m_transport);
}

void IpfixOutput::applyTypeInfo() {
    m_config.typeInfo = m_typeInfo ? m_plugins.typeInfo() : std::vector<IpfixTypeInfo>{};
    if (!m_config.typeInfo.empty() && m_config.maxMessageSize < kTypeInfoMinMessage) {
        throw ConfigError({.component = "output 'ipfix'",
                           .option = "mtu",
                           .value = std::to_string(m_config.maxMessageSize),
                           .problem = "must be at least " + std::to_string(kTypeInfoMinMessage) +
                                      " bytes to carry the RFC 5610 type records of the "
                                      "enterprise elements; or give type-info=no",
                           .help = "rowprobe -h ipfix"});
    }
}

void IpfixOutput::checkFieldNames(std::span<const ProcessPlugin* const> plugins) const {
    for (const std::string& name : m_filter.names) {
        bool found = false;
        std::vector<std::string> known = exportFieldNames(ipfixFieldVocabulary(m_config.uniflow));
        for (const ProcessPlugin* p : plugins) {
            known.emplace_back(p->name());
            found = found || p->name() == name;
            for (const FieldSpec& f : p->fields()) {
                if (!f.ipfix.exported()) continue;
                known.emplace_back(f.name);
                found = found || f.name == name;
            }
        }
        if (found) continue;
        throw ConfigError({.component = "output 'ipfix'",
                           .option = "fields",
                           .value = name,
                           .problem = "unknown field '" + name +
                                      "': not a field this output sends, nor a -p plugin or one "
                                      "of its IPFIX fields",
                           .choices = std::move(known),
                           .help = "rowprobe -h ipfix"});
    }
}

void IpfixOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    checkFieldNames(plugins);
    if (plugins.empty()) return;
    m_plugins = IpfixPluginFields(plugins, "ipfix", m_tunnelPen, m_filter);
    m_config.extensions = m_plugins.extensions();
    applyTypeInfo();
    m_encoder = std::make_unique<IpfixEncoder>(m_config, m_fields, *m_transport);
}

void IpfixOutput::write(std::span<const FlowRecord> records) {
    if (m_tunnelNoticeDue) noticeTunnels(records);
    if (m_plugins.empty()) {
        m_encoder->add(records);
        return;
    }
    for (const FlowRecord& r : records) {
        if (!m_plugins.extended(r)) {
            m_encoder->add(r);
        } else {
            m_plugins.add(*m_encoder, r);
        }
    }
    m_oversized.store(m_encoder->oversized(), std::memory_order_relaxed);
}

void IpfixOutput::noticeTunnels(std::span<const FlowRecord> records) {
    for (const FlowRecord& r : records) {
        if (r.tunnel.type == 0) continue;
        m_tunnelNoticeDue = false;
        std::fprintf(stderr,
                     "rowprobe: output 'ipfix': flows from tunnels are exported without their "
                     "tunnel's type, id and outer addresses; give tunnel-pen=N (your "
                     "enterprise number) to add them (output/ipfix/README.md)\n");
        return;
    }
}

void IpfixOutput::flush() {
    m_encoder->flush();
    m_transport->flush();
}

void IpfixOutput::reopen() {
    // Everything encoded so far goes to the old file; the new file starts with the templates
    // (RFC 5655: templates before the data they describe, in every file).
    m_encoder->flush();
    if (m_transport->reopen()) m_encoder->resendTemplates();
}

void IpfixOutput::finish() {
    if (m_finished) return;
    m_finished = true;
    m_encoder->flush();
    m_transport->finish();
}

OutputStats IpfixOutput::stats() const {
    OutputStats s = m_transport->stats();
    s.dropped += m_oversized.load(std::memory_order_relaxed);  // larger than one message
    return s;
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, IpfixOutput,
                         {.name = "ipfix",
                          .summary = "IPFIX (RFC 7011, RFC 5103 biflows) to a collector over TCP "
                                     "or UDP, or to a file; ipfixprobe's templates",
                          .options = kOptions});

}  // namespace rowprobe::output
