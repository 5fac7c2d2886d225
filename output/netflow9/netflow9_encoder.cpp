#include "output/netflow9/netflow9_encoder.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

#include "rowprobe/byte_order.hpp"

namespace rowprobe::output {

namespace {

std::uint64_t defaultMonotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * kNsPerSec +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

constexpr std::size_t padded(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

constexpr FieldId kVocabulary[] = {
    FieldId::Bytes,     FieldId::Packets,     FieldId::TimeFirst, FieldId::TimeLast,
    FieldId::IpVersion, FieldId::Proto,       FieldId::TcpFlags,  FieldId::SrcPort,
    FieldId::DstPort,   FieldId::DirBitField, FieldId::SrcIp,     FieldId::DstIp,
    FieldId::SrcMac,    FieldId::DstMac,      FieldId::Vlan,      FieldId::IcmpTypeCode};
constexpr std::span<const FieldId> kDefault{kVocabulary, 14};

/// The v9 field type and length of a core field (RFC 3954 §8).
Netflow9Encoder::Field v9Field(FieldId id, bool v6) {
    switch (id) {
        case FieldId::Bytes:
            return {1, 8, id};  // IN_BYTES
        case FieldId::Packets:
            return {2, 8, id};  // IN_PKTS
        case FieldId::TimeFirst:
            return {22, 4, id};  // FIRST_SWITCHED
        case FieldId::TimeLast:
            return {21, 4, id};  // LAST_SWITCHED
        case FieldId::IpVersion:
            return {60, 1, id};  // IP_PROTOCOL_VERSION
        case FieldId::Proto:
            return {4, 1, id};  // PROTOCOL
        case FieldId::TcpFlags:
            return {6, 1, id};  // TCP_FLAGS
        case FieldId::SrcPort:
            return {7, 2, id};  // L4_SRC_PORT
        case FieldId::DstPort:
            return {11, 2, id};  // L4_DST_PORT
        case FieldId::DirBitField:
            return {61, 1, id};  // DIRECTION
        case FieldId::SrcIp:
            return v6 ? Netflow9Encoder::Field{27, 16, id} : Netflow9Encoder::Field{8, 4, id};
        case FieldId::DstIp:
            return v6 ? Netflow9Encoder::Field{28, 16, id} : Netflow9Encoder::Field{12, 4, id};
        case FieldId::SrcMac:
            return {56, 6, id};  // IN_SRC_MAC
        case FieldId::DstMac:
            return {80, 6, id};  // IN_DST_MAC
        case FieldId::Vlan:
            return {58, 2, id};  // SRC_VLAN
        case FieldId::IcmpTypeCode:
            return v6 ? Netflow9Encoder::Field{139, 2, id}  // ICMP_IPV6_TYPE
                      : Netflow9Encoder::Field{32, 2, id};  // ICMP_TYPE
        default:
            return {0, 0, id};
    }
}

std::size_t writeTemplate(std::uint8_t* out, std::uint16_t id,
                          const Netflow9Encoder::Layout& layout) noexcept {
    storeBe16(out, id);
    storeBe16(out + 2, static_cast<std::uint16_t>(layout.fields.size()));
    std::size_t at = 4;
    for (const auto& f : layout.fields) {
        storeBe16(out + at, f.type);
        storeBe16(out + at + 2, f.length);
        at += 4;
    }
    return at;
}

std::size_t templateFlowsetSize(const Netflow9Encoder::Layout& v4,
                                const Netflow9Encoder::Layout& v6) noexcept {
    return 4 + (4 + 4 * v4.fields.size()) + (4 + 4 * v6.fields.size());
}

}  // namespace

std::span<const FieldId> netflow9FieldVocabulary() noexcept { return kVocabulary; }
std::span<const FieldId> netflow9DefaultFields() noexcept { return kDefault; }

Netflow9Encoder::Layout Netflow9Encoder::compile(std::span<const FieldId> fields, bool v6) {
    Layout l;
    for (FieldId id : fields.empty() ? kDefault : fields) {
        const Field f = v9Field(id, v6);
        if (f.type == 0) {
            throw std::invalid_argument("field '" + std::string(fieldSpec(id).name) +
                                        "' has no NetFlow v9 field type");
        }
        l.fields.push_back(f);
        l.recordLength += f.length;
    }
    l.isDefault = std::equal(l.fields.begin(), l.fields.end(), kDefault.begin(), kDefault.end(),
                             [](const Field& f, FieldId id) { return f.id == id; });
    return l;
}

std::size_t Netflow9Encoder::minPacketSize(std::span<const FieldId> fields) {
    const Layout v4 = compile(fields, false);
    const Layout v6 = compile(fields, true);
    return kNetflow9HeaderSize + templateFlowsetSize(v4, v6) + 4 +
           padded(std::max(v4.recordLength, v6.recordLength));
}

Netflow9Encoder::Netflow9Encoder(const Netflow9Config& config, MessageSink& sink)
    : m_config(config), m_sink(sink) {
    if (m_config.monotonicNs == nullptr) m_config.monotonicNs = &defaultMonotonicNs;
    if (m_config.maxPacketSize > 65535) {
        throw std::invalid_argument("NetFlow v9 packets are at most 65535 bytes");
    }
    m_v4 = compile(m_config.fields, false);
    m_v6 = compile(m_config.fields, true);
    m_templateFlowsetSize = templateFlowsetSize(m_v4, m_v6);
    const std::size_t minimum = minPacketSize(m_config.fields);
    if (m_config.maxPacketSize < minimum) {
        throw std::invalid_argument("packet size " + std::to_string(m_config.maxPacketSize) +
                                    " is below the minimum " + std::to_string(minimum));
    }
    m_packet.assign(m_config.maxPacketSize, 0);
}

std::size_t Netflow9Encoder::encodeRecord(const FlowRecord& r, bool reverse, std::uint64_t bootMs,
                                          std::uint8_t* out) noexcept {
    return encodeDefault(r, reverse, bootMs, out);
}

std::size_t Netflow9Encoder::encodeDefault(const FlowRecord& r, bool reverse, std::uint64_t bootMs,
                                           std::uint8_t* out) noexcept {
    // The default template's 14 fields written straight (no switch per field): the common case
    // costs what it did before `fields=` existed.
    const int d = reverse ? 1 : 0;
    storeBe64(out, r.bytes[d]);
    storeBe64(out + 8, r.packets[d]);
    storeBe32(out + 16, static_cast<std::uint32_t>(r.timeFirst / 1'000'000 - bootMs));
    storeBe32(out + 20,
              static_cast<std::uint32_t>(std::max(r.timeLast, r.timeFirst) / 1'000'000 - bootMs));
    out[24] = r.ipVersion;
    out[25] = r.proto;
    out[26] = r.tcpFlags[d];
    storeBe16(out + 27, reverse ? r.dstPort : r.srcPort);
    storeBe16(out + 29, reverse ? r.srcPort : r.dstPort);
    out[31] = static_cast<std::uint8_t>(d);
    const auto& src = reverse ? r.dstAddr : r.srcAddr;
    const auto& dst = reverse ? r.srcAddr : r.dstAddr;
    std::size_t at = 32;
    if (r.ipVersion == 6) {
        std::memcpy(out + at, src.data(), 16);
        std::memcpy(out + at + 16, dst.data(), 16);
        at += 32;
    } else {
        std::memcpy(out + at, src.data() + 12, 4);
        std::memcpy(out + at + 4, dst.data() + 12, 4);
        at += 8;
    }
    std::memcpy(out + at, (reverse ? r.dstMac : r.srcMac).data(), 6);
    std::memcpy(out + at + 6, (reverse ? r.srcMac : r.dstMac).data(), 6);
    return at + 12;
}

std::size_t Netflow9Encoder::encode(const Layout& layout, const FlowRecord& r, bool reverse,
                                    std::uint64_t bootMs, std::uint8_t* out) noexcept {
    if (layout.isDefault) return encodeDefault(r, reverse, bootMs, out);
    const int d = reverse ? 1 : 0;
    std::uint8_t* p = out;
    for (const Field& f : layout.fields) {
        switch (f.id) {
            case FieldId::Bytes:
                storeBe64(p, r.bytes[d]);
                break;
            case FieldId::Packets:
                storeBe64(p, r.packets[d]);
                break;
            case FieldId::TimeFirst:
                storeBe32(p, static_cast<std::uint32_t>(r.timeFirst / 1'000'000 - bootMs));
                break;
            case FieldId::TimeLast:
                storeBe32(p, static_cast<std::uint32_t>(
                                 std::max(r.timeLast, r.timeFirst) / 1'000'000 - bootMs));
                break;
            case FieldId::IpVersion:
                *p = r.ipVersion;
                break;
            case FieldId::Proto:
                *p = r.proto;
                break;
            case FieldId::TcpFlags:
                *p = r.tcpFlags[d];
                break;
            case FieldId::SrcPort:
                storeBe16(p, reverse ? r.dstPort : r.srcPort);
                break;
            case FieldId::DstPort:
                storeBe16(p, reverse ? r.srcPort : r.dstPort);
                break;
            case FieldId::DirBitField:
                *p = static_cast<std::uint8_t>(d);
                break;
            case FieldId::SrcIp:
            case FieldId::DstIp: {
                const bool src = (f.id == FieldId::SrcIp) != reverse;
                const auto& a = src ? r.srcAddr : r.dstAddr;
                std::memcpy(p, a.data() + (f.length == 4 ? 12 : 0), f.length);
                break;
            }
            case FieldId::SrcMac:
            case FieldId::DstMac: {
                const bool src = (f.id == FieldId::SrcMac) != reverse;
                std::memcpy(p, (src ? r.srcMac : r.dstMac).data(), 6);
                break;
            }
            case FieldId::Vlan:
                storeBe16(p, r.vlan);
                break;
            case FieldId::IcmpTypeCode:
                storeBe16(p, r.icmpTypeCode[d]);
                break;
            default:
                std::memset(p, 0, f.length);
                break;
        }
        p += f.length;
    }
    return static_cast<std::size_t>(p - out);
}

bool Netflow9Encoder::refreshDue() const {
    if (m_config.templateRefreshPackets != 0 &&
        m_packetsSinceTemplates >= m_config.templateRefreshPackets) {
        return true;
    }
    return m_config.templateRefreshNs != 0 &&
           m_config.monotonicNs() - m_lastTemplatesNs >= m_config.templateRefreshNs;
}

void Netflow9Encoder::startPacket() {
    m_used = kNetflow9HeaderSize;
    m_count = 0;
    m_dataRecords = 0;
    m_maxLastMs = 0;
    m_flowsetStart = 0;
    m_templatesInPacket = false;
    if (m_templatesOwed || refreshDue()) {
        std::uint8_t* p = m_packet.data() + m_used;
        storeBe16(p, 0);
        storeBe16(p + 2, static_cast<std::uint16_t>(m_templateFlowsetSize));
        std::size_t at = 4;
        at += writeTemplate(p + at, kNetflow9TemplateV4, m_v4);
        at += writeTemplate(p + at, kNetflow9TemplateV6, m_v6);
        m_used += at;
        m_count += 2;
        m_templatesOwed = false;
        m_templatesInPacket = true;
        m_lastTemplatesNs = m_config.monotonicNs();
        m_packetsSinceTemplates = 0;
    }
}

void Netflow9Encoder::closeFlowset() {
    if (m_flowsetStart == 0) return;
    const std::size_t end = padded(m_used);
    std::memset(m_packet.data() + m_used, 0, end - m_used);
    m_used = end;
    storeBe16(m_packet.data() + m_flowsetStart + 2,
              static_cast<std::uint16_t>(m_used - m_flowsetStart));
    m_flowsetStart = 0;
}

void Netflow9Encoder::send() {
    closeFlowset();
    // The header's instant: the latest flow end rounded up to a whole second, so that
    // unix_secs * 1000 - sysUptime is exactly the boot time.
    const std::uint64_t seconds = (m_maxLastMs + 999) / 1000;
    std::uint8_t* h = m_packet.data();
    storeBe16(h, kNetflow9Version);
    storeBe16(h + 2, static_cast<std::uint16_t>(m_count));
    storeBe32(h + 4, static_cast<std::uint32_t>(seconds * 1000 - m_bootMs));
    storeBe32(h + 8, static_cast<std::uint32_t>(seconds));
    storeBe32(h + 12, m_sequence);
    storeBe32(h + 16, m_config.sourceId);
    m_sink.sendMessage({m_packet.data(), m_used}, m_dataRecords, m_dataRecords == 0);
    ++m_sequence;  // packets sent, delivered or not: a lost one shows as a gap
    ++m_packets;
    ++m_packetsSinceTemplates;
    if (m_templatesInPacket) ++m_templatePackets;
    m_used = 0;
}

void Netflow9Encoder::addOne(const FlowRecord& r, bool reverse) {
    const std::uint64_t firstMs = r.timeFirst / 1'000'000;
    const std::uint64_t lastMs = std::max(r.timeLast / 1'000'000, firstMs);
    if (!m_haveBoot || firstMs < m_bootMs || lastMs - m_bootMs >= kNetflow9MaxUptimeMs) {
        if (m_used != 0 && m_dataRecords != 0) send();
        if (m_haveBoot) ++m_rebases;
        const std::uint64_t second = firstMs / 1000 * 1000;
        m_bootMs = second > kNetflow9BootSlackMs ? second - kNetflow9BootSlackMs : 0;
        m_haveBoot = true;
    }
    const bool v6 = r.ipVersion == 6;
    const std::uint16_t id = v6 ? kNetflow9TemplateV6 : kNetflow9TemplateV4;
    const Layout& layout = v6 ? m_v6 : m_v4;
    const std::size_t length = layout.recordLength;
    if (m_used == 0) startPacket();
    const std::size_t flowsetHeader = m_flowsetId == id && m_flowsetStart != 0 ? 0 : 4;
    if (padded(m_used + flowsetHeader + length) > m_config.maxPacketSize) {
        send();
        startPacket();
    }
    if (m_flowsetStart == 0 || m_flowsetId != id) {
        closeFlowset();
        m_flowsetStart = m_used;
        m_flowsetId = id;
        storeBe16(m_packet.data() + m_used, id);
        m_used += 4;
    }
    m_used += encode(layout, r, reverse, m_bootMs, m_packet.data() + m_used);
    ++m_count;
    ++m_dataRecords;
    m_maxLastMs = std::max(m_maxLastMs, lastMs);
}

void Netflow9Encoder::add(const FlowRecord& record) {
    addOne(record, false);
    if (record.packets[1] != 0) addOne(record, true);
}

void Netflow9Encoder::flush() {
    if (m_used != 0 && m_dataRecords != 0) send();
}

}  // namespace rowprobe::output
