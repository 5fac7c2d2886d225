#include "json_output.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .defaultValue = "-",
     .help = "file to write, truncated at start ('-' = standard output)"},
    {.name = "fields",
     .shortName = "F",
     .type = OptionType::String,
     .help = "comma-separated field names to write, in this order (default: all core fields)"},
};

/// The default object: every core field except the exporter constants, in a reading order.
constexpr FieldId kDefaultFields[] = {
    FieldId::SrcIp,
    FieldId::DstIp,
    FieldId::SrcPort,
    FieldId::DstPort,
    FieldId::Proto,
    FieldId::IpVersion,
    FieldId::Vlan,
    FieldId::SrcMac,
    FieldId::DstMac,
    FieldId::TimeFirst,
    FieldId::TimeLast,
    FieldId::Packets,
    FieldId::Bytes,
    FieldId::PacketsRev,
    FieldId::BytesRev,
    FieldId::TcpFlags,
    FieldId::TcpFlagsRev,
    FieldId::Ttl,
    FieldId::TtlRev,
    FieldId::IcmpTypeCode,
    FieldId::IcmpTypeCodeRev,
    FieldId::EndReason,
    FieldId::Queue,
    // Tunnel of an inner flow (--tunnel inner|both); zero / :: for other flows.
    FieldId::TunnelType,
    FieldId::TunnelId,
    FieldId::TunnelSrc,
    FieldId::TunnelDst,
};

/// Appends a literal (the field separators and names); the length is a compile-time constant.
template <std::size_t N>
char* put(char* out, const char (&text)[N]) noexcept {
    std::memcpy(out, text, N - 1);
    return out + (N - 1);
}

}  // namespace

JsonLayout::JsonLayout(std::span<const FieldId> ids) {
    for (FieldId id : ids) add(fieldSpec(id));
}

void JsonLayout::add(const FieldSpec& spec) {
    Column c;
    c.spec = &spec;
    const bool endReason = &spec == &fieldSpec(FieldId::EndReason);
    c.quoted = !isNumeric(spec.type) || spec.type == FieldType::Timestamp || endReason;
    c.key = std::string(m_columns.empty() ? "{\"" : ",\"") + std::string(spec.name) +
            "\":" + (c.quoted ? "\"" : "");
    c.offset = spec.offset;
    if (spec.origin != FieldOrigin::Record) {
        c.kind = Kind::Other;
    } else if (endReason) {
        c.kind = Kind::EndReason;
    } else {
        switch (spec.type) {
            case FieldType::Unsigned8:
                c.kind = Kind::U8;
                break;
            case FieldType::Unsigned16:
                c.kind = Kind::U16;
                break;
            case FieldType::Unsigned32:
                c.kind = Kind::U32;
                break;
            case FieldType::Unsigned64:
                c.kind = Kind::U64;
                break;
            case FieldType::Timestamp:
                c.kind = Kind::Time;
                break;
            case FieldType::IpAddress:
                c.kind = Kind::Address;
                break;
            case FieldType::MacAddress:
                c.kind = Kind::Mac;
                break;
            default:
                c.kind = Kind::Other;
                break;
        }
    }
    m_maxLine += c.key.size() + kMaxValue + 1;  // + the closing quote
    m_columns.push_back(std::move(c));
}

char* JsonLayout::format(char* p, const FlowRecord& r) const noexcept {
    p = formatOpen(p, r);
    return put(p, "}\n");
}

char* JsonLayout::formatOpen(char* p, const FlowRecord& r) const noexcept {
    static const ExportConstants kNoConstants{};
    for (const Column& c : m_columns) {
        p = putShort(p, c.key);
        switch (c.kind) {
            case Kind::U8:
                p = formatUint(p, loadRecordField<std::uint8_t>(r, c.offset));
                break;
            case Kind::U16:
                p = formatUint(p, loadRecordField<std::uint16_t>(r, c.offset));
                break;
            case Kind::U32:
                p = formatUint(p, loadRecordField<std::uint32_t>(r, c.offset));
                break;
            case Kind::U64:
                p = formatUint(p, loadRecordField<std::uint64_t>(r, c.offset));
                break;
            case Kind::Time:
                p = formatTimeIso(p, loadRecordField<TimeNs>(r, c.offset), 9);
                break;
            case Kind::Address:
                p = formatIp(p, loadRecordField<std::array<std::uint8_t, 16>>(r, c.offset),
                             addressIsIpv4(*c.spec, r));
                break;
            case Kind::Mac:
                p = formatMac(p, loadRecordField<std::array<std::uint8_t, 6>>(r, c.offset));
                break;
            case Kind::EndReason:
                p = putShort(p, endReasonName(r.endReason));
                break;
            case Kind::Other:
                p = formatUint(p, readUnsigned(*c.spec, r, kNoConstants));
                break;
        }
        if (c.quoted) *p++ = '"';
    }
    if (m_columns.empty()) *p++ = '{';
    return p;
}

const JsonLayout& JsonLayout::defaults() {
    static const JsonLayout kLayout(kDefaultFields);
    return kLayout;
}

JsonOutput::JsonOutput(const Options& options)
    : m_file(options, "file"), m_layout(JsonLayout::defaults()) {
    if (!options.explicitlySet("fields")) return;
    m_layout = JsonLayout({});
    const std::vector<const FieldSpec*> fields = parseRecordFieldList(options, "fields");
    for (const FieldSpec* spec : fields) m_layout.add(*spec);
    if (m_layout.maxLine() > kLineLimit) {
        options.fail("fields", "too many fields: a line could exceed " +
                                   std::to_string(kLineLimit) + " bytes");
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (fields[j] == fields[i]) {
                options.fail("fields", "field '" + std::string(fields[i]->name) +
                                           "' is listed twice (a JSON object has each key once)");
            }
        }
    }
}

char* JsonOutput::formatRecord(char* out, const FlowRecord& record) noexcept {
    return JsonLayout::defaults().format(out, record);
}

JsonPluginColumns::JsonPluginColumns(std::span<const ProcessPlugin* const> plugins) {
    for (const ProcessPlugin* plugin : plugins) {
        Plugin c;
        c.fields = plugin->fields();
        for (const FieldSpec& f : c.fields) {
            c.keys.push_back(",\"" + std::string(f.name) + "\":");
            m_keyBytes += c.keys.back().size();
        }
        m_fieldCount += c.fields.size();
        m_plugins.push_back(std::move(c));
    }
}

std::size_t JsonPluginColumns::maxObject(const JsonLayout& layout,
                                         const InstanceGroups& groups) const noexcept {
    // Each value: at most 6 characters per byte of its instance plus a constant (plugin_data.hpp).
    return layout.maxLine() + m_keyBytes + 6 * groups.bytes() +
           pluginValueMaxChars(0) * m_fieldCount;
}

char* JsonPluginColumns::writeFields(char* p, const InstanceGroups& groups,
                                     std::size_t line) const noexcept {
    for (std::size_t pl = 0; pl < m_plugins.size(); ++pl) {
        const PluginInstance* i = groups.at(pl, line);
        if (i == nullptr) continue;
        const Plugin& c = m_plugins[pl];
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            p = putShort(p, c.keys[f]);
            p = formatPluginValueJson(p, c.fields[f], i->data);
        }
    }
    return p;
}

void JsonOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    m_plugins = JsonPluginColumns(plugins);
}

void JsonOutput::writeWithPlugins(const FlowRecord& r) {
    const InstanceGroups groups(r, m_plugins.plugins());
    if (groups.lines() == 0) {
        m_file.commit(m_layout.format(m_file.reserve(m_layout.maxLine()), r));
        m_file.endRecord();
        return;
    }
    const std::size_t bound = m_plugins.maxObject(m_layout, groups);
    for (std::size_t k = 0; k < groups.lines(); ++k) {
        char* p = m_layout.formatOpen(m_file.reserve(bound), r);
        p = m_plugins.writeFields(p, groups, k);
        m_file.commit(put(p, "}\n"));
    }
    m_file.endRecord();
}

void JsonOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    for (const FlowRecord& r : records) {
        if (r.extLen != 0 && !m_plugins.empty()) {
            writeWithPlugins(r);
            continue;
        }
        m_file.commit(m_layout.format(m_file.reserve(m_layout.maxLine()), r));
        m_file.endRecord();
    }
    m_bytes.fetch_add(m_file.bytes() - before, std::memory_order_relaxed);
}

void JsonOutput::flush() { m_file.flush(); }

void JsonOutput::reopen() { m_file.reopen(); }

OutputStats JsonOutput::stats() const {
    return {.records = m_file.records(), .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, JsonOutput,
                         {.name = "json",
                          .summary = "one JSON object per flow and line (JSON Lines)",
                          .options = kOptions});

}  // namespace rowprobe::output
