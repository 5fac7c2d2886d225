#include "output/netflow9/netflow9_output.hpp"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "output/common/export_field_list.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr std::size_t kMaxUdpPayload = 65507;

constexpr OptionSpec kOptions[] = {
    {.name = "host",
     .shortName = "h",
     .type = OptionType::String,
     .defaultValue = "127.0.0.1",
     .help = "collector address: name, IPv4 or IPv6"},
    {.name = "port",
     .shortName = "p",
     .type = OptionType::Int,
     .defaultValue = "2055",
     .help = "collector UDP port (file: the destination port of the datagrams)",
     .min = 1,
     .max = 65535},
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .help = "write the export packets as UDP datagrams in a pcap file instead of sending"},
    {.name = "mtu",
     .shortName = "m",
     .type = OptionType::Int,
     .defaultValue = "1458",
     .help = "largest export packet in bytes incl. the 20-byte header",
     .min = 17,
     .max = 65507},
    {.name = "id",
     .shortName = "I",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "source id (the v9 header's observation domain)",
     .min = 0,
     .max = 4294967295.0},
    {.name = "template",
     .shortName = "t",
     .type = OptionType::Duration,
     .defaultValue = "600",
     .help = "re-send templates after this long; 0 disables",
     .min = 0,
     .max = 86400},
    {.name = "template-packets",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "re-send templates after this many export packets; 0 disables",
     .min = 0,
     .max = 1e9},
    {.name = "pace",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "send at most this many packets per second (the final flush too: N packets take "
             "N/pace s at exit), so a collector with a default socket buffer keeps up; 0: unpaced",
     .min = 0,
     .max = 10000000},
    {.name = "fields",
     .type = OptionType::String,
     .help = "comma-separated fields the templates carry, in the output's own order: 'basic' "
             "(the default template) and core field names as the json output's fields= (also "
             "vlan, icmp_type_code); default: basic"},
};

void putLe32(std::uint8_t* p, std::uint32_t v) { std::memcpy(p, &v, 4); }

}  // namespace

Netflow9PcapFile::Netflow9PcapFile(const std::string& path, std::uint16_t port) : m_port(port) {
    m_file = std::fopen(path.c_str(), "wb");
    if (m_file == nullptr) {
        throw RuntimeError("output 'netflow9'",
                           "cannot open '" + path + "': " + std::strerror(errno));
    }
    std::array<std::uint8_t, 24> header{};
    putLe32(header.data(), 0xa1b2c3d4);
    header[4] = 2;  // version 2.4
    header[6] = 4;
    putLe32(header.data() + 16, 65535);  // snaplen
    putLe32(header.data() + 20, 101);    // LINKTYPE_RAW
    std::fwrite(header.data(), 1, header.size(), m_file);
}

Netflow9PcapFile::~Netflow9PcapFile() { finish(); }

bool Netflow9PcapFile::sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                                   bool /*templates*/) {
    const std::size_t ipLength = 20 + 8 + message.size();
    std::array<std::uint8_t, 16 + 28> head{};
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    putLe32(head.data(), static_cast<std::uint32_t>(now.tv_sec));
    putLe32(head.data() + 4, static_cast<std::uint32_t>(now.tv_nsec / 1000));
    putLe32(head.data() + 8, static_cast<std::uint32_t>(ipLength));
    putLe32(head.data() + 12, static_cast<std::uint32_t>(ipLength));
    std::uint8_t* ip = head.data() + 16;
    ip[0] = 0x45;
    ip[2] = static_cast<std::uint8_t>(ipLength >> 8);
    ip[3] = static_cast<std::uint8_t>(ipLength);
    ip[8] = 64;
    ip[9] = 17;
    ip[12] = ip[16] = 127;
    ip[15] = ip[19] = 1;
    std::uint32_t sum = 0;  // IPv4 header checksum
    for (int i = 0; i < 20; i += 2) sum += static_cast<std::uint32_t>(ip[i] << 8 | ip[i + 1]);
    while (sum > 0xFFFF) sum = (sum & 0xFFFF) + (sum >> 16);
    ip[10] = static_cast<std::uint8_t>(~sum >> 8);
    ip[11] = static_cast<std::uint8_t>(~sum);
    std::uint8_t* udp = ip + 20;
    udp[0] = 40000 >> 8;
    udp[1] = 40000 & 0xFF;
    udp[2] = static_cast<std::uint8_t>(m_port >> 8);
    udp[3] = static_cast<std::uint8_t>(m_port);
    udp[4] = static_cast<std::uint8_t>((8 + message.size()) >> 8);
    udp[5] = static_cast<std::uint8_t>(8 + message.size());
    const bool ok = std::fwrite(head.data(), 1, head.size(), m_file) == head.size() &&
                    std::fwrite(message.data(), 1, message.size(), m_file) == message.size();
    (ok ? m_records : m_dropped).fetch_add(dataRecords, std::memory_order_relaxed);
    if (ok) m_bytes.fetch_add(message.size(), std::memory_order_relaxed);
    return ok;
}

void Netflow9PcapFile::flush() {
    if (m_file != nullptr) std::fflush(m_file);
}

void Netflow9PcapFile::finish() {
    if (m_file == nullptr) return;
    std::fclose(m_file);
    m_file = nullptr;
}

OutputStats Netflow9PcapFile::stats() const {
    return {.records = m_records.load(std::memory_order_relaxed),
            .dropped = m_dropped.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

Netflow9Output::Netflow9Output(const Options& o) {
    const bool toFile = o.explicitlySet("file");
    if (toFile) {
        for (const char* net : {"host", "pace"}) {
            if (o.explicitlySet(net))
                o.fail(net, "does not apply with 'file' (the output is a file)");
        }
        if (o.getString("file").empty()) o.fail("file", "needs a path");
    }
    Netflow9Config config;
    if (o.explicitlySet("fields")) {
        const std::string list = o.getString("fields");
        ExportFieldList chosen =
            parseExportFieldList(list, netflow9FieldVocabulary(), netflow9DefaultFields(), false);
        if (!chosen.error.empty()) {
            o.fail(
                "fields", chosen.error, chosen.known,
                chosen.offending == list ? std::string_view{} : std::string_view(chosen.offending));
        }
        config.fields = std::move(chosen.core);
    }
    config.sourceId = static_cast<std::uint32_t>(o.getInt("id"));
    config.maxPacketSize = static_cast<std::size_t>(o.getInt("mtu"));
    config.templateRefreshNs = o.getDurationNs("template");
    config.templateRefreshPackets = static_cast<std::uint64_t>(o.getInt("template-packets"));
    const std::size_t minimum = Netflow9Encoder::minPacketSize(config.fields);
    if (config.maxPacketSize < minimum) {
        o.fail("mtu", "must be at least " + std::to_string(minimum) +
                          " bytes to hold the templates and one IPv6 record, got " +
                          std::to_string(config.maxPacketSize));
    }
    if (config.maxPacketSize > kMaxUdpPayload) {
        o.fail("mtu", "must be at most " + std::to_string(kMaxUdpPayload) +
                          " bytes (largest UDP datagram), got " +
                          std::to_string(config.maxPacketSize));
    }
    const auto port = static_cast<std::uint16_t>(o.getInt("port"));
    if (toFile) {
        try {
            m_transport = std::make_unique<Netflow9PcapFile>(o.getString("file"), port);
        } catch (const RuntimeError& e) {
            o.fail("file", e.what());
        }
    } else {
        const std::string host = o.getString("host");
        std::string error;
        auto addresses = resolveAddress(host, port, SOCK_DGRAM, error);
        if (addresses.empty()) o.fail("host", "cannot resolve '" + host + "': " + error);
        UdpPacing pacing;
        pacing.messagesPerSecond = static_cast<std::uint32_t>(o.getInt("pace"));
        m_transport =
            std::make_unique<UdpTransport>(std::move(addresses), pacing, "output 'netflow9'");
    }
    m_encoder = std::make_unique<Netflow9Encoder>(config, *m_transport);
}

Netflow9Output::~Netflow9Output() {
    try {
        finish();
    } catch (const std::exception&) {
        // finish() is called explicitly by the pipeline, which reports errors.
    }
}

void Netflow9Output::write(std::span<const FlowRecord> records) {
    for (const FlowRecord& r : records) m_encoder->add(r);
}

void Netflow9Output::flush() {
    m_encoder->flush();
    m_transport->flush();
}

void Netflow9Output::finish() {
    if (m_finished) return;
    m_finished = true;
    m_encoder->flush();
    m_transport->finish();
}

OutputStats Netflow9Output::stats() const { return m_transport->stats(); }

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, Netflow9Output,
                         {.name = "netflow9",
                          .summary = "NetFlow v9 (RFC 3954) uniflow records to a collector over "
                                     "UDP, or to a pcap file of the datagrams",
                          .options = kOptions});

}  // namespace rowprobe::output
