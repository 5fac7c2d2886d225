// The extra fields of an IPFIX record beyond the basic template (process-plugin fields, the
// tunnel of an inner flow) as IpfixEncoder extensions, and the encoding of a record that has
// any. Shared by every output that encodes IPFIX (ipfix, kafka format=ipfix).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "output/common/ipfix_encoder.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"

namespace rowprobe::output {

/// The tunnel elements (`tunnel-pen=`): rowprobe's element ids under the operator's enterprise
/// number. IANA has none for a tunnel's type or outer addresses (output/ipfix/README.md, and
/// the top-level README.md, "Link types and tunnels").
inline constexpr std::uint16_t kTunnelTypeId = 1;  ///< unsigned8, TunnelType values
inline constexpr std::uint16_t kTunnelIdId = 2;    ///< unsigned32: VNI, TEID, GRE key, session
inline constexpr std::uint16_t kTunnelSrc4Id = 3;  ///< ipv4Address: outer source
inline constexpr std::uint16_t kTunnelDst4Id = 4;  ///< ipv4Address: outer destination
inline constexpr std::uint16_t kTunnelSrc6Id = 5;  ///< ipv6Address: outer source
inline constexpr std::uint16_t kTunnelDst6Id = 6;  ///< ipv6Address: outer destination

/// Bytes the tunnel elements add to a record at most (1 + 4 + 16 + 16, outer IPv6); their
/// template specifiers add less (4 x 8).
inline constexpr std::size_t kIpfixTunnelBytes = 37;

/// The extra fields of a record beyond the basic template, as encoder extensions, and the
/// encoding of a record that has any. Shared by the ipfix and kafka outputs.
///   * process plugins: plugin i = extension i (fields without an IPFIX element are left out);
///     one encoder record per output line of InstanceGroups (rowprobe/plugin_data.hpp);
///   * the tunnel of an inner flow (`tunnel-pen=N`, N != 0): two more extensions after the
///     plugins, "tunnel4" (outer IPv4) and "tunnel6" (outer IPv6), each tunnelType, tunnelId,
///     and the outer source and destination address under enterprise number N. A record whose
///     FlowRecord::tunnel.type is not None carries exactly one of them, so plain flows keep
///     the basic (or plugin) templates byte for byte.
///   * a field filter (the ipfix output's `fields=` and `iana-only`) keeps some plugin fields:
///     a plugin whose fields are all left out adds nothing to its flows' templates.
struct IpfixFieldFilter {
    bool all = true;                 ///< every plugin field (no `fields=`)
    std::vector<std::string> names;  ///< else: plugin names (all its fields) and field names
    bool ianaOnly = false;           ///< leave out every field with an enterprise element
    /// True when plugin `plugin`'s field `f` goes into the templates.
    bool keeps(std::string_view plugin, const FieldSpec& f) const;
};

class IpfixPluginFields {
public:
    IpfixPluginFields() = default;
    /// Throws ConfigError (naming `output`, e.g. "ipfix") for more than 64 extensions (plugins,
    /// plus 2 with a tunnel PEN) or a field the encoder cannot send. `tunnelPen` 0: no tunnel
    /// elements.
    IpfixPluginFields(std::span<const ProcessPlugin* const> plugins, std::string_view output,
                      std::uint32_t tunnelPen = 0, const IpfixFieldFilter& filter = {});

    /// RFC 5610 type records for every enterprise element these extensions send (plugin
    /// fields, the elements inside their basicLists, the tunnel elements), one per (PEN, id),
    /// named by the rowprobe field name (the JSON key). RFC 5103 reverse elements (PEN 29305)
    /// are left out: they are the IANA element's twins, which collectors derive themselves.
    const std::vector<IpfixTypeInfo>& typeInfo() const noexcept { return m_typeInfo; }

    bool empty() const noexcept { return m_extensions.empty(); }
    const std::vector<IpfixExtension>& extensions() const noexcept { return m_extensions; }
    /// True when `r` needs add() rather than the encoder's basic template.
    bool extended(const FlowRecord& r) const noexcept {
        return r.extLen != 0 || (m_tunnelPen != 0 && r.tunnel.type != 0);
    }
    /// Encodes `r` into `encoder`, built with extensions().
    void add(IpfixEncoder& encoder, const FlowRecord& r);

private:
    void addTunnel(const FlowRecord& r, std::uint64_t& mask);

    std::vector<IpfixExtension> m_extensions;
    /// A field as add() reads it from an instance: a fixed-size number straight from its
    /// bytes (`end`: its offset + size), anything else through the plugin-data read API.
    struct FieldRead {
        const FieldSpec* spec = nullptr;
        std::uint32_t offset = 0;
        std::uint32_t end = 0;  ///< 0: not a fixed-size number
    };
    static FieldRead fieldRead(const FieldSpec& f) noexcept;
    std::vector<std::vector<FieldRead>> m_fields;  ///< per plugin, codec order
    InstanceGroups m_records;
    std::vector<FieldValue> m_values;
    std::uint32_t m_tunnelPen = 0;
    std::vector<IpfixTypeInfo> m_typeInfo;
};

/// The RFC 5610 data type of a plugin field's element as rowprobe encodes it (`item`: the
/// element inside an Array field's basicList).
IpfixDataType ipfixDataTypeOf(const FieldSpec& f, bool item);

/// The two tunnel extensions ("tunnel4", "tunnel6") under enterprise number `pen`.
std::vector<IpfixExtension> ipfixTunnelExtensions(std::uint32_t pen);

}  // namespace rowprobe::output
