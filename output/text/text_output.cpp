#include "text_output.hpp"

#include <cstring>
#include <string_view>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr std::string_view kPrecisions[] = {"s", "ms", "us", "ns"};

constexpr OptionSpec kOptions[] = {
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .defaultValue = "-",
     .help = "file to write, truncated at start ('-' = standard output)"},
    {.name = "header",
     .type = OptionType::Flag,
     .defaultValue = "true",
     .help = "print the column header line first; 'header=false' omits it"},
    {.name = "precision",
     .shortName = "P",
     .type = OptionType::Choice,
     .defaultValue = "us",
     .help = "fraction of a second shown in times (truncated)",
     .choices = kPrecisions},
    {.name = "narrow",
     .shortName = "n",
     .type = OptionType::Flag,
     .help = "size the address columns for IPv4 (21 wide); longer IPv6 values then shift the "
             "rest of their line"},
};

// Fixed column widths besides the times and addresses. A value wider than its column shifts
// the rest of its line; the widths cover 10^10 packets and 10^13 bytes.
constexpr std::size_t kProtoWidth = 5;
constexpr std::size_t kPacketsWidth = 10;
constexpr std::size_t kBytesWidth = 13;
constexpr std::size_t kPacketsRevWidth = 11;
constexpr std::size_t kBytesRevWidth = 13;
constexpr std::size_t kFlagsWidth = 9;
constexpr std::size_t kFlagsRevWidth = 13;

char* put(char* out, std::string_view text) noexcept {
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
}

char* spaces(char* out, std::size_t n) noexcept {
    std::memset(out, ' ', n);
    return out + n;
}

/// Pads the text written since `start` with spaces to `width`, then adds the column gap.
char* padLeftAligned(char* start, char* end, std::size_t width) noexcept {
    const auto used = static_cast<std::size_t>(end - start);
    return spaces(end, (used < width ? width - used : 0) + 1);
}

/// Writes `text` left-aligned in `width`, then the column gap.
char* leftAligned(char* out, std::string_view text, std::size_t width) noexcept {
    return padLeftAligned(out, put(out, text), width);
}

/// Writes `text` right-aligned in `width`, then the column gap.
char* rightAligned(char* out, std::string_view text, std::size_t width) noexcept {
    if (text.size() < width) out = spaces(out, width - text.size());
    out = put(out, text);
    *out++ = ' ';
    return out;
}

char* number(char* out, std::uint64_t v, std::size_t width) noexcept {
    char digits[kUintTextMax];
    const char* end = formatUint(digits, v);
    return rightAligned(out, {digits, static_cast<std::size_t>(end - digits)}, width);
}

char* endpoint(char* out, const std::array<std::uint8_t, 16>& addr, std::uint16_t port,
               bool ipv4) noexcept {
    if (!ipv4) *out++ = '[';
    out = formatIp(out, addr, ipv4);
    if (!ipv4) *out++ = ']';
    *out++ = ':';
    return formatUint(out, port);
}

char* flags(char* out, const FlowRecord& r, std::size_t direction) noexcept {
    if (r.proto != 6) return put(out, "-");
    return formatTcpFlags(out, r.tcpFlags[direction]);
}

}  // namespace

TextOutput::TextOutput(const Options& options) : m_file(options, "file") {
    const std::string precision = options.getString("precision");
    m_decimals = precision == "s" ? 0 : precision == "ms" ? 3 : precision == "us" ? 6 : 9;
    m_timeWidth = 20 + (m_decimals == 0 ? 0 : m_decimals + 1);
    m_addrWidth = options.getFlag("narrow") ? 21 : 47;
    if (options.getFlag("header")) m_file.commit(formatHeader(m_file.reserve(kMaxLine)));
}

char* TextOutput::formatHeader(char* p) const noexcept {
    p = leftAligned(p, "time_first", m_timeWidth);
    p = leftAligned(p, "time_last", m_timeWidth);
    p = leftAligned(p, "proto", kProtoWidth);
    p = leftAligned(p, "src", m_addrWidth);
    p = leftAligned(p, "dst", m_addrWidth);
    p = rightAligned(p, "packets", kPacketsWidth);
    p = rightAligned(p, "bytes", kBytesWidth);
    p = rightAligned(p, "packets_rev", kPacketsRevWidth);
    p = rightAligned(p, "bytes_rev", kBytesRevWidth);
    p = leftAligned(p, "tcp_flags", kFlagsWidth);
    p = leftAligned(p, "tcp_flags_rev", kFlagsRevWidth);
    p = put(p, "end_reason");
    *p++ = '\n';
    return p;
}

char* TextOutput::formatRecord(char* p, const FlowRecord& r) const noexcept {
    const bool v4 = r.isIpv4();
    char* start = p;
    p = padLeftAligned(start, formatTimeIso(start, r.timeFirst, m_decimals), m_timeWidth);
    start = p;
    p = padLeftAligned(start, formatTimeIso(start, r.timeLast, m_decimals), m_timeWidth);
    start = p;
    const std::string_view name = protoName(r.proto);
    p = padLeftAligned(start, name.empty() ? formatUint(start, r.proto) : put(start, name),
                       kProtoWidth);
    start = p;
    p = padLeftAligned(start, endpoint(start, r.srcAddr, r.srcPort, v4), m_addrWidth);
    start = p;
    p = padLeftAligned(start, endpoint(start, r.dstAddr, r.dstPort, v4), m_addrWidth);
    p = number(p, r.packets[kForward], kPacketsWidth);
    p = number(p, r.bytes[kForward], kBytesWidth);
    p = number(p, r.packets[kReverse], kPacketsRevWidth);
    p = number(p, r.bytes[kReverse], kBytesRevWidth);
    start = p;
    p = padLeftAligned(start, flags(start, r, kForward), kFlagsWidth);
    start = p;
    p = padLeftAligned(start, flags(start, r, kReverse), kFlagsRevWidth);
    p = put(p, endReasonName(r.endReason));
    *p++ = '\n';
    return p;
}

void TextOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    for (const FlowRecord& r : records) m_file.commit(formatRecord(m_file.reserve(kMaxLine), r));
    m_records.fetch_add(records.size(), std::memory_order_relaxed);
    m_bytes.fetch_add(m_file.bytes() - before, std::memory_order_relaxed);
}

void TextOutput::flush() { m_file.flush(); }

OutputStats TextOutput::stats() const {
    return {.records = m_records.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, TextOutput,
                         {.name = "text",
                          .summary = "human-readable flows in aligned columns",
                          .options = kOptions});

}  // namespace rowprobe::output
