// The `ipfix` output plugin: the encoder (ipfix_encoder.hpp) in front of one transport
// (ipfix_transport.hpp), configured by ipfixprobe-compatible options (README.md).
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "output/common/ipfix_encoder.hpp"
#include "output/common/ipfix_plugin_fields.hpp"
#include "output/common/ipfix_transport.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe::output {

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
    /// m_config.typeInfo from the extensions when `type-info=yes` (ConfigError: mtu too small).
    void applyTypeInfo();
    /// ConfigError for a `fields=` name that is neither a core field nor a -p plugin or field.
    void checkFieldNames(std::span<const ProcessPlugin* const> plugins) const;

    std::unique_ptr<IpfixTransport> m_transport;
    std::unique_ptr<IpfixEncoder> m_encoder;
    EncoderConfig m_config;
    std::vector<FieldId> m_fieldStore;  ///< the chosen core fields (`fields=`, `iana-only`)
    std::span<const FieldId> m_fields;  ///< = m_fieldStore: the basic template's fields
    IpfixFieldFilter m_filter;          ///< which plugin fields go out
    bool m_typeInfo = true;             ///< `type-info=yes`
    IpfixPluginFields m_plugins;
    std::atomic<std::uint64_t> m_oversized{0};
    std::uint32_t m_tunnelPen = 0;   ///< `tunnel-pen`; 0 = tunnel fields not exported
    bool m_tunnelNoticeDue = false;  ///< log once that tunnelled flows lack tunnel-pen
    bool m_finished = false;
};

}  // namespace rowprobe::output
