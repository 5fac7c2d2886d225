#include "text_output.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
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
    {.name = "fields",
     .shortName = "F",
     .type = OptionType::String,
     .help = "comma-separated field names (as in json), one column each, in this order; "
             "src_ip,src_port side by side print as one address:port column, likewise dst "
             "(default: times, proto, src and dst address:port, packets, bytes, packets_rev, "
             "bytes_rev, tcp_flags, tcp_flags_rev, end_reason)"},
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
     .help = "size the address columns for IPv4 (15 wide, 21 with the port); longer IPv6 "
             "values then push the rest of their line right"},
    kFormatThreadsOption,
};

/// The default columns: times, protocol, the two endpoints, counters and flags per direction,
/// end reason.
std::vector<const FieldSpec*> defaultFields() {
    std::vector<const FieldSpec*> fields;
    for (FieldId id :
         {FieldId::TimeFirst, FieldId::TimeLast, FieldId::Proto, FieldId::SrcIp, FieldId::SrcPort,
          FieldId::DstIp, FieldId::DstPort, FieldId::Packets, FieldId::Bytes, FieldId::PacketsRev,
          FieldId::BytesRev, FieldId::TcpFlags, FieldId::TcpFlagsRev, FieldId::EndReason}) {
        fields.push_back(&fieldSpec(id));
    }
    return fields;
}

/// Longest text of one cell: an Endpoint, `[` kIpTextMax `]:65535`.
constexpr std::size_t kCellMax = kIpTextMax + 8;

// Column widths per field type. A number column covers its type's range except Unsigned64
// (bytes), sized for 10^13; a wider value pushes the rest of its line right.
constexpr std::size_t kWidthU8 = 3;
constexpr std::size_t kWidthU16 = 5;
constexpr std::size_t kWidthU32 = 10;
constexpr std::size_t kWidthU64 = 13;
constexpr std::size_t kWidthIpv6 = 39;       ///< RFC 5952 text of any non-embedded-IPv4 address
constexpr std::size_t kWidthIpv4 = 15;       ///< 255.255.255.255
constexpr std::size_t kWidthEndpoint6 = 47;  ///< [39]:65535
constexpr std::size_t kWidthEndpoint4 = 21;  ///< 255.255.255.255:65535
constexpr std::size_t kWidthProtocol = 5;    ///< "icmp6"
constexpr std::size_t kWidthEndReason = 9;   ///< "resources"

std::size_t numberWidth(FieldType type) noexcept {
    switch (type) {
        case FieldType::Unsigned8:
            return kWidthU8;
        case FieldType::Unsigned16:
            return kWidthU16;
        case FieldType::Unsigned32:
            return kWidthU32;
        default:
            return kWidthU64;
    }
}

char* put(char* out, std::string_view text) noexcept {
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
}

/// Copies `text` into the line at `line + column`, or one space after `p` when the line has
/// already passed that point, padding with spaces; returns the new end of the line.
char* place(char* line, char* p, std::size_t column, std::string_view text) noexcept {
    char* at = std::max(line + column, p == line ? p : p + 1);
    std::memset(p, ' ', static_cast<std::size_t>(at - p));
    return put(at, text);
}

/// Where a cell of `length` characters starts in column `c`.
std::size_t cellStart(const TextColumn& c, std::size_t length) noexcept {
    if (!c.right) return c.start;
    return c.start + c.width > length ? c.start + c.width - length : 0;
}

}  // namespace

TextLayout::TextLayout(Style style, const std::vector<const FieldSpec*>& fields) : m_style(style) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const FieldSpec* spec = fields[i];
        const FieldSpec* port = nullptr;
        if (i + 1 < fields.size()) {
            const FieldSpec* next = fields[i + 1];
            if ((spec == &fieldSpec(FieldId::SrcIp) && next == &fieldSpec(FieldId::SrcPort)) ||
                (spec == &fieldSpec(FieldId::DstIp) && next == &fieldSpec(FieldId::DstPort))) {
                port = next;
            }
        }
        add(*spec, port);
        if (port != nullptr) ++i;
    }
    finish();
}

void TextLayout::add(const FieldSpec& field, const FieldSpec* port) {
    TextColumn c;
    c.field = &field;
    c.port = port;
    c.title = std::string(field.name);
    if (field.type == FieldType::IpAddress) {
        if (port != nullptr) {
            c.render = TextRender::Endpoint;
            c.title += ':';
            c.title += port->name;
            c.width = m_style.narrow ? kWidthEndpoint4 : kWidthEndpoint6;
            c.maxLen = kCellMax;
        } else {
            c.render = TextRender::Address;
            c.width = m_style.narrow ? kWidthIpv4 : kWidthIpv6;
            c.maxLen = kIpTextMax;
        }
    } else if (field.type == FieldType::MacAddress) {
        c.render = TextRender::Mac;
        c.width = c.maxLen = kMacTextLen;
    } else if (field.type == FieldType::Timestamp) {
        c.render = TextRender::Time;
        c.width = c.maxLen = 20 + (m_style.decimals == 0 ? 0 : m_style.decimals + 1);
    } else if (&field == &fieldSpec(FieldId::Proto)) {
        c.render = TextRender::Protocol;
        c.width = c.maxLen = kWidthProtocol;
    } else if (&field == &fieldSpec(FieldId::TcpFlags) ||
               &field == &fieldSpec(FieldId::TcpFlagsRev)) {
        c.render = TextRender::TcpFlags;
        c.width = c.maxLen = kTcpFlagsTextLen;
    } else if (&field == &fieldSpec(FieldId::EndReason)) {
        c.render = TextRender::EndReason;
        c.width = c.maxLen = kWidthEndReason;
    } else {
        c.render = TextRender::Number;
        c.right = true;
        c.width = numberWidth(field.type);
        c.maxLen = kUintTextMax;
    }
    c.width = std::max(c.width, c.title.size());
    m_columns.push_back(std::move(c));
}

void TextLayout::finish() {
    std::size_t start = 0;
    m_maxLine = 1;  // the newline
    for (TextColumn& c : m_columns) {
        c.start = start;
        start += c.width + 1;
        // formatTimeIso writes all nine fraction digits before its 'Z' whatever the precision.
        const std::size_t written =
            c.render == TextRender::Time ? std::max(c.maxLen, kTimeIsoMax) : c.maxLen;
        m_maxLine += std::max(c.width, written) + 1;
    }
}

char* TextLayout::formatHeader(char* out) const noexcept {
    char* p = out;
    for (const TextColumn& c : m_columns) p = place(out, p, cellStart(c, c.title.size()), c.title);
    *p++ = '\n';
    return p;
}

namespace {

/// A number column's value (the field's width, read at its offset).
std::uint64_t loadNumber(const FlowRecord& r, const FieldSpec& f) noexcept {
    static const ExportConstants kNoConstants{};
    if (f.origin != FieldOrigin::Record) return readUnsigned(f, r, kNoConstants);
    switch (f.type) {
        case FieldType::Unsigned8:
            return loadRecordField<std::uint8_t>(r, f.offset);
        case FieldType::Unsigned16:
            return loadRecordField<std::uint16_t>(r, f.offset);
        case FieldType::Unsigned32:
            return loadRecordField<std::uint32_t>(r, f.offset);
        case FieldType::Unsigned64:
        case FieldType::Timestamp:
            return loadRecordField<std::uint64_t>(r, f.offset);
        default:
            return 0;
    }
}

}  // namespace

char* TextLayout::formatRecord(char* out, const FlowRecord& r) const noexcept {
    // Each cell is written in place: where its column starts (or one space after the text so
    // far, when an earlier value overflowed), the gap filled with spaces first. Right-aligned
    // numbers know their length up front (decimalDigits); every other cell is left-aligned.
    const bool v4 = r.isIpv4();
    char* p = out;
    for (const TextColumn& c : m_columns) {
        char* const earliest = p == out ? p : p + 1;
        const FieldSpec& f = *c.field;
        if (c.render == TextRender::Number) {
            const std::uint64_t v = loadNumber(r, f);
            char* const at = std::max(out + cellStart(c, decimalDigits(v)), earliest);
            putSpaces(p, static_cast<std::size_t>(at - p));
            p = formatUint(at, v);
            continue;
        }
        char* const at = std::max(out + c.start, earliest);
        putSpaces(p, static_cast<std::size_t>(at - p));
        p = at;
        switch (c.render) {
            case TextRender::Number:  // above
                break;
            case TextRender::Time:
                p = formatTimeIso(p, loadRecordField<TimeNs>(r, f.offset), m_style.decimals);
                break;
            case TextRender::Address:
            case TextRender::Endpoint: {
                const bool brackets = c.render == TextRender::Endpoint && !v4;
                if (brackets) *p++ = '[';
                p = formatIp(p, loadRecordField<std::array<std::uint8_t, 16>>(r, f.offset),
                             addressIsIpv4(f, r));
                if (brackets) *p++ = ']';
                if (c.render == TextRender::Endpoint) {
                    *p++ = ':';
                    p = formatUint(p, loadNumber(r, *c.port));
                }
                break;
            }
            case TextRender::Mac:
                p = formatMac(p, loadRecordField<std::array<std::uint8_t, 6>>(r, f.offset));
                break;
            case TextRender::Protocol: {
                const std::string_view name = protoName(r.proto);
                p = name.empty() ? formatUint(p, r.proto) : putShort(p, name);
                break;
            }
            case TextRender::TcpFlags:
                p = r.proto == 6 ? formatTcpFlags(p, static_cast<std::uint8_t>(loadNumber(r, f)))
                                 : putShort(p, "-");
                break;
            case TextRender::EndReason:
                p = putShort(p, endReasonName(r.endReason));
                break;
        }
    }
    *p++ = '\n';
    return p;
}

namespace {

TextLayout::Style styleOf(const Options& options) {
    const std::string precision = options.getString("precision");
    return {.decimals = precision == "s"    ? 0U
                        : precision == "ms" ? 3U
                        : precision == "us" ? 6U
                                            : 9U,
            .narrow = options.getFlag("narrow")};
}

std::vector<const FieldSpec*> fieldList(const Options& options) {
    if (!options.explicitlySet("fields")) return defaultFields();
    return parseRecordFieldList(options, "fields");
}

/// Lines longer than this are refused at start-up (OutputFile reserves one line at a time).
constexpr std::size_t kLineLimit = std::size_t{64} << 10;

}  // namespace

TextOutput::TextOutput(const Options& options)
    : m_layout(styleOf(options), fieldList(options)),
      m_file(options, "file"),
      m_threads(formatThreads(options, "threads")) {
    setProcessPlugins({});
    if (m_layout.maxLine() > kLineLimit) {
        options.fail("fields", "too many columns: a line could exceed " +
                                   std::to_string(kLineLimit) + " bytes");
    }
    m_header = options.getFlag("header");
    if (m_header) {
        m_file.commit(m_layout.formatHeader(m_file.reserve(m_layout.maxLine())));
        m_file.endText();
    }
}

void TextOutput::reopen() {
    if (m_file.reopen() && m_header) {
        const std::uint64_t before = m_file.bytes();
        m_file.commit(m_layout.formatHeader(m_file.reserve(m_layout.maxLine())));
        m_file.endText();
        m_bytes.fetch_add(m_file.bytes() - before, std::memory_order_relaxed);
    }
}

void TextOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    m_parallel.reset();  // its helpers hold the old plugin fields
    m_pluginFields.clear();
    for (const ProcessPlugin* plugin : plugins) m_pluginFields.push_back(plugin->fields());
    m_parallel = std::make_unique<ParallelFormat<TextFormatter>>(
        TextFormatter(m_layout, m_pluginFields), m_threads, "rp-text");
}

TextFormatter::TextFormatter(const TextLayout& layout,
                             std::span<const std::span<const FieldSpec>> pluginFields)
    : m_layout(&layout), m_pluginFields(pluginFields), m_groups(pluginFields.size()) {
    for (const std::span<const FieldSpec> fields : pluginFields) {
        for (const FieldSpec& f : fields) m_pluginKeyBytes += f.name.size() + 3;
        m_pluginFieldCount += fields.size();
    }
}

std::size_t TextFormatter::prepare(const FlowRecord& r, std::size_t& bound) {
    m_withPlugins = r.extLen != 0 && !m_pluginFields.empty();
    if (!m_withPlugins) {
        bound = m_layout->maxLine();
        return 1;
    }
    m_groups.load(r);
    bound = m_layout->maxLine() + m_pluginKeyBytes + 6 * m_groups.bytes() +
            pluginValueMaxChars(0) * m_pluginFieldCount;
    return std::max<std::size_t>(m_groups.lines(), 1);
}

char* TextFormatter::line(char* out, const FlowRecord& r, std::size_t k) noexcept {
    if (!m_withPlugins) return m_layout->formatRecord(out, r);
    char* p = m_layout->formatRecord(out, r) - 1;  // without its '\n'
    for (std::size_t pl = 0; pl < m_pluginFields.size(); ++pl) {
        const PluginInstance* i = m_groups.at(pl, k);
        if (i == nullptr) continue;
        for (const FieldSpec& f : m_pluginFields[pl]) {
            *p++ = ' ';
            *p++ = ' ';
            p = putShort(p, f.name);
            *p++ = '=';
            p = formatPluginValueJson(p, f, i->data);
        }
    }
    *p++ = '\n';
    return p;
}

void TextOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    m_parallel->write(m_file, records);
    m_bytes.fetch_add(m_file.bytes() - before, std::memory_order_relaxed);
}

void TextOutput::flush() { m_file.flush(); }

OutputStats TextOutput::stats() const {
    return {.records = m_file.records(), .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, TextOutput,
                         {.name = "text",
                          .summary = "human-readable flows in aligned columns",
                          .options = kOptions});

}  // namespace rowprobe::output
