#include "ipfix_output.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "rowprobe/errors.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr std::string_view kPrecisions[] = {"s", "ms", "us", "ns"};
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
    {.name = "tunnel-pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "enterprise number (yours) under which inner flows (--tunnel) carry tunnelType (1), "
             "tunnelId (2), outer IPv4 (3, 4) or IPv6 (5, 6) addresses; 0: not exported",
     .min = 0,
     .max = 4294967295.0},
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
    if (toFile || udp) {
        for (const char* tcp : {"buffer", "reconnect", "linger"}) {
            if (o.explicitlySet(tcp)) {
                o.fail(tcp, std::string("applies to TCP only (this output uses ") +
                                (toFile ? "a file)" : "UDP)"));
            }
        }
    }

    EncoderConfig config;
    config.observationDomain = static_cast<std::uint32_t>(o.getInt("id"));
    config.constants.dirBitField = static_cast<std::uint32_t>(o.getInt("dir"));
    config.timePrecision = precisionFrom(o.getString("timestamps"));
    config.maxMessageSize = static_cast<std::size_t>(o.getInt("mtu"));
    if (toFile && !o.explicitlySet("mtu")) config.maxMessageSize = 65535;
    const auto fields = ipfixBasicFields();
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
    if (m_tunnelPen != 0) {
        m_plugins = IpfixPluginFields({}, "ipfix", m_tunnelPen);
        config.extensions = m_plugins.extensions();
    }
    m_config = config;

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
        m_transport = std::make_unique<UdpTransport>(std::move(addresses));
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
    auto templates = IpfixEncoder(config, fields, nullSink).templateMessages();
    TcpTransport::Config tcp;
    tcp.addresses = std::move(addresses);
    tcp.bufferBytes = static_cast<std::size_t>(o.getInt("buffer")) << 20;
    tcp.reconnectMax = std::chrono::nanoseconds(o.getDurationNs("reconnect"));
    tcp.linger = std::chrono::nanoseconds(o.getDurationNs("linger"));
    tcp.verbose = o.getFlag("verbose");
    tcp.name = "output 'ipfix'";
    m_transport = std::make_unique<TcpTransport>(std::move(tcp), std::move(templates));
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
    m_encoder = std::make_unique<IpfixEncoder>(m_config, ipfixBasicFields(), *m_transport);
}

namespace {

/// The encoding of one plugin field, or a message saying why it cannot be sent.
IpfixFieldCodec codecFor(const FieldSpec& f, std::string& problem) {
    using K = IpfixFieldCodec::Kind;
    IpfixFieldCodec c;
    c.element = f.ipfix;
    switch (f.type) {
        case FieldType::Array:
            if (!f.ipfixItem.exported() || f.ipfixItem.length == 0 || f.ipfixItem.length > 8 ||
                isVariable(f.element)) {
                problem = "is an array without a fixed-size basicList element";
                return c;
            }
            c.kind = K::List;
            c.element = {kPenIana, kIpfixBasicList, kIpfixVarLen};
            c.inner = f.ipfixItem;
            c.sourceWidth = static_cast<std::uint8_t>(fieldTypeSize(f.element));
            c.timeNsToMs = f.element == FieldType::Timestamp;
            return c;
        case FieldType::String:
        case FieldType::Binary:
        case FieldType::IpAddress:
        case FieldType::MacAddress:
            c.kind = K::Bytes;
            return c;
        default:
            if (f.ipfix.length == kIpfixVarLen || f.ipfix.length == 0 || f.ipfix.length > 8) {
                problem = "is a number with IPFIX length " + std::to_string(f.ipfix.length);
                return c;
            }
            c.kind = K::Scalar;
            c.sourceWidth = static_cast<std::uint8_t>(fieldTypeSize(f.type));
            c.timeNsToMs = f.type == FieldType::Timestamp;
            return c;
    }
}

/// The value of plugin field `f` in one instance, as the encoder takes it.
FieldValue valueOf(const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    switch (f.type) {
        case FieldType::String:
        case FieldType::Binary:
        case FieldType::Array: {
            const auto b = readPluginBytes(f, data);
            const std::size_t unit = f.type == FieldType::Array ? fieldTypeSize(f.element) : 1;
            return {b.data(), static_cast<std::uint32_t>(b.size() / unit)};
        }
        case FieldType::IpAddress: {
            const auto b = readPluginBytes(f, data);
            if (b.size() != 16) return {};
            // IPv4-mapped -> the 4 IPv4 bytes (variable-length element, as ipfixprobe sends
            // DNS_RDATA of passivedns); a fixed 16-byte element gets the whole address.
            if (isIpv4Mapped(b) && f.ipfix.length != 16) return {b.data() + 12, 4};
            return {b.data(), 16};
        }
        case FieldType::MacAddress: {
            const auto b = readPluginBytes(f, data);
            return {b.data(), static_cast<std::uint32_t>(b.size())};
        }
        default:
            if (f.offset + fieldTypeSize(f.type) > data.size()) return {};
            return {data.data() + f.offset, 1};
    }
}

}  // namespace

IpfixPluginFields::IpfixPluginFields(std::span<const ProcessPlugin* const> plugins,
                                     std::string_view output, std::uint32_t tunnelPen)
    : m_tunnelPen(tunnelPen) {
    const std::string component = "output '" + std::string(output) + "'";
    const std::size_t limit = tunnelPen != 0 ? 62 : 64;
    if (plugins.size() > limit) {
        throw ConfigError(
            {.component = component,
             .option = "-p",
             .value = std::to_string(plugins.size()),
             .problem = "at most " + std::to_string(limit) +
                        " process plugins can be exported over IPFIX" +
                        (tunnelPen != 0 ? " with tunnel-pen (the tunnel fields take 2 sets)" : ""),
             .help = "rowprobe -h " + std::string(output)});
    }
    m_fields.assign(plugins.size(), {});
    for (std::size_t i = 0; i < plugins.size(); ++i) {
        IpfixExtension ext;
        ext.name = std::string(plugins[i]->name());
        for (const FieldSpec& f : plugins[i]->fields()) {
            if (!f.ipfix.exported()) continue;  // a field without an IPFIX element
            std::string problem;
            IpfixFieldCodec c = codecFor(f, problem);
            if (!problem.empty()) {
                throw ConfigError({.component = component,
                                   .option = "-p",
                                   .value = ext.name,
                                   .problem = "field '" + std::string(f.name) + "' " + problem,
                                   .help = "rowprobe -h " + ext.name});
            }
            ext.fields.push_back(c);
            m_fields[i].push_back(&f);
        }
        m_extensions.push_back(std::move(ext));
    }
    if (tunnelPen != 0) {
        for (auto& ext : ipfixTunnelExtensions(tunnelPen)) m_extensions.push_back(std::move(ext));
    }
    m_records = PluginRecords(plugins.size());
}

std::vector<IpfixExtension> ipfixTunnelExtensions(std::uint32_t pen) {
    using K = IpfixFieldCodec::Kind;
    auto scalar = [pen](std::uint16_t id, std::uint16_t length) {
        IpfixFieldCodec c;
        c.kind = K::Scalar;
        c.element = {pen, id, length};
        c.sourceWidth = static_cast<std::uint8_t>(length);
        return c;
    };
    auto address = [pen](std::uint16_t id, std::uint16_t length) {
        IpfixFieldCodec c;
        c.kind = K::Bytes;
        c.element = {pen, id, length};
        return c;
    };
    return {
        {.name = "tunnel4",
         .fields = {scalar(kTunnelTypeId, 1), scalar(kTunnelIdId, 4), address(kTunnelSrc4Id, 4),
                    address(kTunnelDst4Id, 4)}},
        {.name = "tunnel6",
         .fields = {scalar(kTunnelTypeId, 1), scalar(kTunnelIdId, 4), address(kTunnelSrc6Id, 16),
                    address(kTunnelDst6Id, 16)}},
    };
}

void IpfixPluginFields::addTunnel(const FlowRecord& r, std::uint64_t& mask) {
    if (m_tunnelPen == 0 || r.tunnel.type == 0) return;
    // The outer header's family picks the extension: both addresses come from one IP header.
    const bool v4 = isIpv4Mapped(r.tunnel.src);
    mask |= std::uint64_t{1} << (m_fields.size() + (v4 ? 0 : 1));
    m_values.push_back({&r.tunnel.type, 1});
    m_values.push_back({&r.tunnel.id, 1});
    const std::size_t skip = v4 ? 12 : 0;
    m_values.push_back({r.tunnel.src.data() + skip, static_cast<std::uint32_t>(16 - skip)});
    m_values.push_back({r.tunnel.dst.data() + skip, static_cast<std::uint32_t>(16 - skip)});
}

void IpfixPluginFields::add(IpfixEncoder& encoder, const FlowRecord& r) {
    std::size_t n = 0;
    if (r.extLen != 0) {
        m_records.load(r);
        n = m_records.records();
    }
    if (n == 0) {
        std::uint64_t mask = 0;
        m_values.clear();
        addTunnel(r, mask);
        if (mask == 0) {
            encoder.add(r);
        } else {
            encoder.add(r, mask, m_values);
        }
        return;
    }
    for (std::size_t k = 0; k < n; ++k) {
        std::uint64_t mask = 0;
        m_values.clear();
        for (std::size_t p = 0; p < m_fields.size(); ++p) {
            if (!m_records.present(p, k) || m_fields[p].empty()) continue;
            mask |= std::uint64_t{1} << p;
            const auto data = m_records.instance(p, k);
            for (const FieldSpec* f : m_fields[p]) m_values.push_back(valueOf(*f, data));
        }
        addTunnel(r, mask);
        encoder.add(r, mask, m_values);
    }
}

void IpfixOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    if (plugins.empty()) return;
    m_plugins = IpfixPluginFields(plugins, "ipfix", m_tunnelPen);
    m_config.extensions = m_plugins.extensions();
    m_encoder = std::make_unique<IpfixEncoder>(m_config, ipfixBasicFields(), *m_transport);
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
