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

struct V9Field {
    std::uint16_t type;
    std::uint16_t length;
};
// Template order; the address fields are per IP version (see the header's table).
constexpr V9Field kFieldsV4[] = {{1, 8}, {2, 8},  {22, 4}, {21, 4}, {60, 1}, {4, 1},  {6, 1},
                                 {7, 2}, {11, 2}, {61, 1}, {8, 4},  {12, 4}, {56, 6}, {80, 6}};
constexpr V9Field kFieldsV6[] = {{1, 8}, {2, 8},  {22, 4}, {21, 4},  {60, 1},  {4, 1},  {6, 1},
                                 {7, 2}, {11, 2}, {61, 1}, {27, 16}, {28, 16}, {56, 6}, {80, 6}};
constexpr std::size_t kFieldCount = std::size(kFieldsV4);
constexpr std::size_t kTemplateFlowsetSize = 4 + 2 * (4 + kFieldCount * 4);

constexpr std::size_t padded(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

constexpr std::size_t recordLength(const V9Field (&fields)[kFieldCount]) {
    std::size_t n = 0;
    for (const V9Field& f : fields) n += f.length;
    return n;
}
static_assert(recordLength(kFieldsV4) == kNetflow9RecordV4);
static_assert(recordLength(kFieldsV6) == kNetflow9RecordV6);

std::size_t writeTemplate(std::uint8_t* out, std::uint16_t id,
                          const V9Field (&fields)[kFieldCount]) noexcept {
    storeBe16(out, id);
    storeBe16(out + 2, static_cast<std::uint16_t>(kFieldCount));
    std::size_t at = 4;
    for (const V9Field& f : fields) {
        storeBe16(out + at, f.type);
        storeBe16(out + at + 2, f.length);
        at += 4;
    }
    return at;
}

}  // namespace

std::size_t Netflow9Encoder::minPacketSize() noexcept {
    return kNetflow9HeaderSize + kTemplateFlowsetSize + 4 + padded(kNetflow9RecordV6);
}

Netflow9Encoder::Netflow9Encoder(const Netflow9Config& config, MessageSink& sink)
    : m_config(config), m_sink(sink) {
    if (m_config.monotonicNs == nullptr) m_config.monotonicNs = &defaultMonotonicNs;
    if (m_config.maxPacketSize > 65535) {
        throw std::invalid_argument("NetFlow v9 packets are at most 65535 bytes");
    }
    if (m_config.maxPacketSize < minPacketSize()) {
        throw std::invalid_argument("packet size " + std::to_string(m_config.maxPacketSize) +
                                    " is below the minimum " + std::to_string(minPacketSize()));
    }
    m_packet.assign(m_config.maxPacketSize, 0);
}

std::size_t Netflow9Encoder::encodeRecord(const FlowRecord& r, bool reverse, std::uint64_t bootMs,
                                          std::uint8_t* out) noexcept {
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
        storeBe16(p + 2, static_cast<std::uint16_t>(kTemplateFlowsetSize));
        std::size_t at = 4;
        at += writeTemplate(p + at, kNetflow9TemplateV4, kFieldsV4);
        at += writeTemplate(p + at, kNetflow9TemplateV6, kFieldsV6);
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
    const std::size_t length = v6 ? kNetflow9RecordV6 : kNetflow9RecordV4;
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
    m_used += encodeRecord(r, reverse, m_bootMs, m_packet.data() + m_used);
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
