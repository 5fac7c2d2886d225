#include "output/common/ipfix_plugin_fields.hpp"

#include <string>

#include "rowprobe/errors.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"

namespace rowprobe::output {

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
            if (isSigned(f.element) && f.ipfixItem.length > fieldTypeSize(f.element)) {
                problem = "is a signed array whose basicList element is wider than its values";
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
            // Reduced-size signed values keep their low bytes (still two's complement); a wider
            // element would need the sign extended, which the encoder does not do.
            if (isSigned(f.type) && f.ipfix.length > fieldTypeSize(f.type)) {
                problem = "is a signed number with IPFIX length " + std::to_string(f.ipfix.length) +
                          " (wider than its " + std::to_string(fieldTypeSize(f.type)) + " bytes)";
                return c;
            }
            c.kind = K::Scalar;
            c.sourceWidth = static_cast<std::uint8_t>(fieldTypeSize(f.type));
            c.timeNsToMs = f.type == FieldType::Timestamp;
            return c;
    }
}

/// True for the types whose value is one fixed-size number at the field's offset; the others
/// (strings, bytes, arrays, addresses) are read through the plugin-data read API.
constexpr bool isFixedNumber(FieldType t) noexcept {
    switch (t) {
        case FieldType::String:
        case FieldType::Binary:
        case FieldType::Array:
        case FieldType::IpAddress:
        case FieldType::MacAddress:
            return false;
        default:
            return true;
    }
}

/// The number whose bytes are [offset, end) of an instance, absent when the instance is
/// shorter.
FieldValue numberAt(std::size_t offset, std::size_t end,
                    std::span<const std::uint8_t> data) noexcept {
    if (end > data.size()) return {};
    return {data.data() + offset, 1};
}

/// The value of plugin field `f` in one instance, as the encoder takes it.
FieldValue valueOf(const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    if (isFixedNumber(f.type)) return numberAt(f.offset, f.offset + fieldTypeSize(f.type), data);
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
            return {};
    }
}

IpfixDataType unsignedOfLength(std::uint16_t length) {
    if (length <= 1) return IpfixDataType::Unsigned8;
    if (length <= 2) return IpfixDataType::Unsigned16;
    if (length <= 4) return IpfixDataType::Unsigned32;
    return IpfixDataType::Unsigned64;
}

/// Adds a type record for `e` unless it is IANA's, a reverse twin or already listed.
void addTypeInfo(std::vector<IpfixTypeInfo>& out, const IpfixElement& e, IpfixDataType type,
                 std::string_view name, std::string_view description) {
    if (!e.enterprise() || e.pen == kPenReverse) return;
    for (const IpfixTypeInfo& t : out) {
        if (t.pen == e.pen && t.id == e.id) return;
    }
    out.push_back({.pen = e.pen,
                   .id = e.id,
                   .dataType = type,
                   .name = std::string(name),
                   .description = std::string(description)});
}

}  // namespace

IpfixDataType ipfixDataTypeOf(const FieldSpec& f, bool item) {
    const IpfixElement& e = item ? f.ipfixItem : f.ipfix;
    const FieldType type = item ? f.element : f.type;
    switch (type) {
        case FieldType::String:
            return IpfixDataType::String;
        case FieldType::Binary:
        case FieldType::Array:
            return IpfixDataType::OctetArray;
        case FieldType::IpAddress:
            return e.length == 4    ? IpfixDataType::Ipv4Address
                   : e.length == 16 ? IpfixDataType::Ipv6Address
                                    : IpfixDataType::OctetArray;
        case FieldType::MacAddress:
            return e.length == 6 ? IpfixDataType::MacAddress : IpfixDataType::OctetArray;
        case FieldType::Timestamp:
            // Encoded as dateTimeMilliseconds (codecFor: timeNsToMs), which has 8 bytes.
            return e.length == 8 ? IpfixDataType::DateTimeMilliseconds : unsignedOfLength(e.length);
        case FieldType::Int8:
        case FieldType::Int16:
        case FieldType::Int32:
            // Reduced-size encoding (RFC 7011 §6.2) keeps the signed type of the element's
            // length.
            return e.length <= 1   ? IpfixDataType::Signed8
                   : e.length <= 2 ? IpfixDataType::Signed16
                                   : IpfixDataType::Signed32;
        case FieldType::Float32:
            return e.length == 4 ? IpfixDataType::Float32 : IpfixDataType::OctetArray;
        default:
            // Reduced-size encoding is allowed for unsigned types, so the element's length
            // decides (a u32 value sent in 2 bytes is an unsigned16 element).
            return unsignedOfLength(e.length);
    }
}

bool IpfixFieldFilter::keeps(std::string_view plugin, const FieldSpec& f) const {
    if (ianaOnly &&
        (f.ipfix.enterprise() || (f.type == FieldType::Array && f.ipfixItem.enterprise()))) {
        return false;
    }
    if (all) return true;
    for (const std::string& n : names) {
        if (n == plugin || n == f.name) return true;
    }
    return false;
}

/// How add() reads `f` (IpfixPluginFields::FieldRead): a fixed-size number gets its bytes'
/// end, the others 0.
IpfixPluginFields::FieldRead IpfixPluginFields::fieldRead(const FieldSpec& f) noexcept {
    if (!isFixedNumber(f.type)) return {.spec = &f};
    return {.spec = &f,
            .offset = f.offset,
            .end = static_cast<std::uint32_t>(f.offset + fieldTypeSize(f.type))};
}

IpfixPluginFields::IpfixPluginFields(std::span<const ProcessPlugin* const> plugins,
                                     std::string_view output, std::uint32_t tunnelPen,
                                     const IpfixFieldFilter& filter)
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
            if (!filter.keeps(ext.name, f)) continue;
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
            m_fields[i].push_back(fieldRead(f));
            if (c.kind == IpfixFieldCodec::Kind::List) {
                addTypeInfo(m_typeInfo, c.inner, ipfixDataTypeOf(f, true), f.name, f.description);
            } else {
                addTypeInfo(m_typeInfo, c.element, ipfixDataTypeOf(f, false), f.name,
                            f.description);
            }
        }
        m_extensions.push_back(std::move(ext));
    }
    if (tunnelPen != 0) {
        for (auto& ext : ipfixTunnelExtensions(tunnelPen)) m_extensions.push_back(std::move(ext));
        // The names and types of output/ipfix/README.md's table.
        using T = IpfixDataType;
        const struct {
            std::uint16_t id;
            T type;
            const char* name;
            const char* description;
        } kTunnel[] = {
            {kTunnelTypeId, T::Unsigned8, "tunnelType",
             "tunnel of an inner flow: 1 GRE, 2 ERSPAN, 3 VXLAN, 4 Geneve, 5 GTP-U, 6 Teredo, "
             "7 AYIYA, 8 CAPWAP, 9 IP-in-IP, 10 MPLS over UDP"},
            {kTunnelIdId, T::Unsigned32, "tunnelId",
             "VXLAN/Geneve VNI, GTP-U TEID, GRE key or ERSPAN session id of an inner flow's "
             "tunnel"},
            {kTunnelSrc4Id, T::Ipv4Address, "tunnelSourceIPv4Address",
             "outer IPv4 source of an inner flow's tunnel"},
            {kTunnelDst4Id, T::Ipv4Address, "tunnelDestinationIPv4Address",
             "outer IPv4 destination of an inner flow's tunnel"},
            {kTunnelSrc6Id, T::Ipv6Address, "tunnelSourceIPv6Address",
             "outer IPv6 source of an inner flow's tunnel"},
            {kTunnelDst6Id, T::Ipv6Address, "tunnelDestinationIPv6Address",
             "outer IPv6 destination of an inner flow's tunnel"},
        };
        for (const auto& t : kTunnel) {
            m_typeInfo.push_back({.pen = tunnelPen,
                                  .id = t.id,
                                  .dataType = t.type,
                                  .semantics = 0,
                                  .units = 0,
                                  .name = t.name,
                                  .description = t.description});
        }
    }
    m_records = InstanceGroups(plugins.size());
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
        n = m_records.lines();
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
            const PluginInstance* inst = m_records.at(p, k);
            if (inst == nullptr || m_fields[p].empty()) continue;
            mask |= std::uint64_t{1} << p;
            const auto data = inst->data;
            for (const FieldRead& f : m_fields[p]) {
                m_values.push_back(f.end != 0 ? numberAt(f.offset, f.end, data)
                                              : valueOf(*f.spec, data));
            }
        }
        addTunnel(r, mask);
        encoder.add(r, mask, m_values);
    }
}

}  // namespace rowprobe::output
