// The `ipfix` output plugin: the encoder (ipfix_encoder.hpp) in front of one transport
// (ipfix_transport.hpp), configured by ipfixprobe-compatible options (README.md).
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "../plugin_records.hpp"
#include "ipfix_encoder.hpp"
#include "ipfix_transport.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe::output {

/// The tunnel elements (`tunnel-pen=`): rowprobe's element ids under the operator's enterprise
/// number. IANA has none for a tunnel's type or outer addresses (README.md, and the
/// top-level README.md, "Link types and tunnels").
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
///     one encoder record per output record of PluginRecords;
///   * the tunnel of an inner flow (`tunnel-pen=N`, N != 0): two more extensions after the
///     plugins, "tunnel4" (outer IPv4) and "tunnel6" (outer IPv6), each tunnelType, tunnelId,
///     and the outer source and destination address under enterprise number N. A record whose
///     FlowRecord::tunnel.type is not None carries exactly one of them, so plain flows keep
///     the basic (or plugin) templates byte for byte.
class IpfixPluginFields {
public:
    IpfixPluginFields() = default;
    /// Throws ConfigError (naming `output`, e.g. "ipfix") for more than 64 extensions (plugins,
    /// plus 2 with a tunnel PEN) or a field the encoder cannot send. `tunnelPen` 0: no tunnel
    /// elements.
    IpfixPluginFields(std::span<const ProcessPlugin* const> plugins, std::string_view output,
                      std::uint32_t tunnelPen = 0);

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
    std::vector<std::vector<const FieldSpec*>> m_fields;  ///< per plugin, codec order
    PluginRecords m_records;
    std::vector<FieldValue> m_values;
    std::uint32_t m_tunnelPen = 0;
};

/// The two tunnel extensions ("tunnel4", "tunnel6") under enterprise number `pen`.
std::vector<IpfixExtension> ipfixTunnelExtensions(std::uint32_t pen);

class IpfixOutput final : public OutputPlugin {
public:
    /// Validates the options, resolves the collector (ConfigError when the name does not
    /// resolve) and opens the transport. A TCP collector that is down is not an error: the
    /// transport connects in the background.
    explicit IpfixOutput(const Options& options);
    ~IpfixOutput() override;

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    void finish() override;
    void reopen() override;  ///< SIGHUP: file= moved away -> new file, templates first
    OutputStats stats() const override;
    void requestStop() override { m_transport->requestStop(); }
    /// Rebuilds the encoder with ingressInterface in its templates when an input knows its
    /// interface (before the first record; nothing has been sent yet).
    void setInputInterfaces(std::span<const std::uint32_t> byQueue) override;
    /// Compiles the plugins' fields (those with an IPFIX element) into encoder extensions:
    /// plugin i is extension i. Throws ConfigError for a field the encoder cannot send.
    void setProcessPlugins(std::span<const ProcessPlugin* const> plugins) override;

    const IpfixEncoder& encoder() const { return *m_encoder; }
    IpfixTransport& transport() { return *m_transport; }

private:
    void noticeTunnels(std::span<const FlowRecord> records);

    std::unique_ptr<IpfixTransport> m_transport;
    std::unique_ptr<IpfixEncoder> m_encoder;
    EncoderConfig m_config;
    IpfixPluginFields m_plugins;
    std::atomic<std::uint64_t> m_oversized{0};
    std::uint32_t m_tunnelPen = 0;   ///< `tunnel-pen`; 0 = tunnel fields not exported
    bool m_tunnelNoticeDue = false;  ///< log once that tunnelled flows lack tunnel-pen
    bool m_finished = false;
};

}  // namespace rowprobe::output
