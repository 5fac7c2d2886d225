#include "output/common/json_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/process.hpp"

namespace rowprobe::output {

namespace {

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

/// The value writeFields writes inline for a field of this type, if any.
JsonPluginColumns::Inline inlineKind(const FieldSpec& f) noexcept {
    using K = JsonPluginColumns::Inline;
    switch (f.type) {
        case FieldType::Unsigned8:
            return K::U8;
        case FieldType::Unsigned16:
            return K::U16;
        case FieldType::Unsigned32:
            return K::U32;
        case FieldType::Unsigned64:
            return K::U64;
        case FieldType::Float32:
            return K::F32;
        default:
            return K::None;
    }
}

/// A plugin value of type T at `offset`, 0 when the instance is too short (as the writers).
template <typename T>
T loadValue(std::span<const std::uint8_t> data, std::size_t offset) noexcept {
    T v{};
    if (offset + sizeof(T) <= data.size()) std::memcpy(&v, data.data() + offset, sizeof(T));
    return v;
}

/// A zero run's text is copied in blocks of this size (JsonPluginColumns::ZeroRun).
constexpr std::size_t kRunBlock = 32;

/// True when `data` holds [begin, end) and every byte of it is zero.
bool zeroSpan(std::span<const std::uint8_t> data, std::size_t begin, std::size_t end) noexcept {
    if (end > data.size()) return false;
    const std::uint8_t* p = data.data() + begin;
    std::size_t n = end - begin;
    std::uint64_t any = 0;
    for (; n >= 8; n -= 8, p += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p, 8);
        any |= w;
    }
    for (; n > 0; --n) any |= *p++;
    return any == 0;
}

/// formatUint with its one-digit case inline.
char* putUnsigned(char* p, std::uint64_t v) noexcept {
    if (v < 10) {
        *p = static_cast<char>('0' + v);
        return p + 1;
    }
    return formatUint(p, v);
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
                p = putUnsigned(p, loadRecordField<std::uint8_t>(r, c.offset));
                break;
            case Kind::U16:
                p = putUnsigned(p, loadRecordField<std::uint16_t>(r, c.offset));
                break;
            case Kind::U32:
                p = putUnsigned(p, loadRecordField<std::uint32_t>(r, c.offset));
                break;
            case Kind::U64:
                p = putUnsigned(p, loadRecordField<std::uint64_t>(r, c.offset));
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
                p = putUnsigned(p, readUnsigned(*c.spec, r, kNoConstants));
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

JsonPluginColumns::JsonPluginColumns(std::span<const ProcessPlugin* const> plugins) {
    for (const ProcessPlugin* plugin : plugins) {
        Plugin c;
        for (const FieldSpec& f : plugin->fields()) {
            Column col;
            const std::string key = ",\"" + std::string(f.name) + "\":";
            if (key.size() <= kShortKey) {
                std::memcpy(col.key.data(), key.data(), key.size());
            } else {
                col.longKey = key;
            }
            col.keyLength = key.size();
            col.write = jsonValueWriter(f);
            col.spec = &f;
            col.offset = f.offset;
            col.kind = inlineKind(f);
            m_keyBytes += key.size();
            c.columns.push_back(std::move(col));
        }
        findZeroRuns(c);
        m_fieldCount += c.columns.size();
        m_plugins.push_back(std::move(c));
    }
}

void JsonPluginColumns::findZeroRuns(Plugin& plugin) {
    constexpr std::size_t kMinColumns = 4;  // fewer: the check costs about what it saves
    constexpr std::size_t kMaxColumns = 8;  // more: the run is rarely all zero
    constexpr std::size_t kMaxSpan = 64;
    // A run's last block may write kRunBlock - 1 bytes past its text, into the room its values
    // did not take.
    static_assert(kRunBlock - 1 <= kMinColumns * (pluginValueMaxChars(0) - 1));
    std::vector<Column>& cols = plugin.columns;
    std::size_t k = 0;
    while (k < cols.size()) {
        std::size_t begin = SIZE_MAX;
        std::size_t end = 0;
        std::size_t j = k;
        for (; j < cols.size() && j - k < kMaxColumns && cols[j].kind != Inline::None; ++j) {
            const std::size_t lo = cols[j].offset;
            const std::size_t hi = lo + fieldTypeSize(cols[j].spec->type);
            if (std::max(end, hi) - std::min(begin, lo) > kMaxSpan) break;
            begin = std::min(begin, lo);
            end = std::max(end, hi);
        }
        if (j - k < kMinColumns) {
            k = std::max(j, k + 1);
            continue;
        }
        ZeroRun run{.begin = static_cast<std::uint16_t>(begin),
                    .end = static_cast<std::uint16_t>(end),
                    .columns = static_cast<std::uint16_t>(j - k)};
        for (std::size_t i = k; i < j; ++i) {
            const Column& c = cols[i];
            run.text.append(c.keyLength <= kShortKey ? c.key.data() : c.longKey.data(),
                            c.keyLength);
            run.text += '0';
        }
        run.length = static_cast<std::uint16_t>(run.text.size());
        run.text.resize((run.text.size() + kRunBlock - 1) / kRunBlock * kRunBlock, '\0');
        cols[k].run = static_cast<std::int16_t>(plugin.runs.size());
        plugin.runs.push_back(std::move(run));
        k = j;
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
        const Plugin& plugin = m_plugins[pl];
        const std::span<const std::uint8_t> data = i->data;
        for (std::size_t k = 0; k < plugin.columns.size(); ++k) {
            const Column& c = plugin.columns[k];
            if (c.run >= 0) {
                const ZeroRun& z = plugin.runs[static_cast<std::size_t>(c.run)];
                if (zeroSpan(data, z.begin, z.end)) {
                    for (std::size_t off = 0; off < z.length; off += kRunBlock)
                        std::memcpy(p + off, z.text.data() + off, kRunBlock);
                    p += z.length;
                    k += z.columns - 1;
                    continue;
                }
            }
            if (c.keyLength <= kShortKey) {
                std::memcpy(p, c.key.data(), kShortKey);  // room: maxObject's per-value constant
            } else {
                std::memcpy(p, c.longKey.data(), c.keyLength);
            }
            p += c.keyLength;
            switch (c.kind) {
                case Inline::U8:
                    p = putUnsigned(p, loadValue<std::uint8_t>(data, c.offset));
                    break;
                case Inline::U16:
                    p = putUnsigned(p, loadValue<std::uint16_t>(data, c.offset));
                    break;
                case Inline::U32:
                    p = putUnsigned(p, loadValue<std::uint32_t>(data, c.offset));
                    break;
                case Inline::U64:
                    p = putUnsigned(p, loadValue<std::uint64_t>(data, c.offset));
                    break;
                case Inline::F32:  // the float writer's own code, inline
                    p = formatFloatJson(p, loadValue<float>(data, c.offset));
                    break;
                case Inline::None:
                    p = c.write(p, *c.spec, data);
                    break;
            }
        }
    }
    return p;
}

}  // namespace rowprobe::output
