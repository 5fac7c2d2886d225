#include "json_output.hpp"

#include <cstring>
#include <string_view>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .defaultValue = "-",
     .help = "file to write, truncated at start ('-' = standard output)"},
};

/// Appends a literal (the field separators and names); the length is a compile-time constant.
template <std::size_t N>
char* put(char* out, const char (&text)[N]) noexcept {
    std::memcpy(out, text, N - 1);
    return out + (N - 1);
}

char* put(char* out, std::string_view text) noexcept {
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
}

}  // namespace

JsonOutput::JsonOutput(const Options& options) : m_file(options, "file") {}

char* JsonOutput::formatRecord(char* p, const FlowRecord& r) noexcept {
    const bool v4 = r.isIpv4();
    p = put(p, "{\"src_ip\":\"");
    p = formatIp(p, r.srcAddr, v4);
    p = put(p, "\",\"dst_ip\":\"");
    p = formatIp(p, r.dstAddr, v4);
    p = put(p, "\",\"src_port\":");
    p = formatUint(p, r.srcPort);
    p = put(p, ",\"dst_port\":");
    p = formatUint(p, r.dstPort);
    p = put(p, ",\"proto\":");
    p = formatUint(p, r.proto);
    p = put(p, ",\"ip_version\":");
    p = formatUint(p, r.ipVersion);
    p = put(p, ",\"vlan\":");
    p = formatUint(p, r.vlan);
    p = put(p, ",\"src_mac\":\"");
    p = formatMac(p, r.srcMac);
    p = put(p, "\",\"dst_mac\":\"");
    p = formatMac(p, r.dstMac);
    p = put(p, "\",\"time_first\":\"");
    p = formatTimeIso(p, r.timeFirst, 9);
    p = put(p, "\",\"time_last\":\"");
    p = formatTimeIso(p, r.timeLast, 9);
    p = put(p, "\",\"packets\":");
    p = formatUint(p, r.packets[kForward]);
    p = put(p, ",\"bytes\":");
    p = formatUint(p, r.bytes[kForward]);
    p = put(p, ",\"packets_rev\":");
    p = formatUint(p, r.packets[kReverse]);
    p = put(p, ",\"bytes_rev\":");
    p = formatUint(p, r.bytes[kReverse]);
    p = put(p, ",\"tcp_flags\":");
    p = formatUint(p, r.tcpFlags[kForward]);
    p = put(p, ",\"tcp_flags_rev\":");
    p = formatUint(p, r.tcpFlags[kReverse]);
    p = put(p, ",\"ttl\":");
    p = formatUint(p, r.ttl[kForward]);
    p = put(p, ",\"ttl_rev\":");
    p = formatUint(p, r.ttl[kReverse]);
    p = put(p, ",\"icmp_type_code\":");
    p = formatUint(p, r.icmpTypeCode[kForward]);
    p = put(p, ",\"icmp_type_code_rev\":");
    p = formatUint(p, r.icmpTypeCode[kReverse]);
    p = put(p, ",\"end_reason\":\"");
    p = put(p, endReasonName(r.endReason));
    p = put(p, "\",\"queue\":");
    p = formatUint(p, r.queue);
    return put(p, "}\n");
}

void JsonOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    for (const FlowRecord& r : records) m_file.commit(formatRecord(m_file.reserve(kMaxLine), r));
    m_records.fetch_add(records.size(), std::memory_order_relaxed);
    m_bytes.fetch_add(m_file.bytes() - before, std::memory_order_relaxed);
}

void JsonOutput::flush() { m_file.flush(); }

OutputStats JsonOutput::stats() const {
    return {.records = m_records.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, JsonOutput,
                         {.name = "json",
                          .summary = "one JSON object per flow and line (JSON Lines)",
                          .options = kOptions});

}  // namespace rowprobe::output
