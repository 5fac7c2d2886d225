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

/// The process plugins' fields as encoder extensions (plugin i = extension i; fields without
/// an IPFIX element are left out) and the encoding of a record with plugin data (one encoder
/// record per output record of PluginRecords). Shared by the ipfix and kafka outputs.
class IpfixPluginFields {
public:
    IpfixPluginFields() = default;
    /// Throws ConfigError (naming `output`, e.g. "ipfix") for more than 64 plugins or a field
    /// the encoder cannot send.
    IpfixPluginFields(std::span<const ProcessPlugin* const> plugins, std::string_view output);

    bool empty() const noexcept { return m_fields.empty(); }
    const std::vector<IpfixExtension>& extensions() const noexcept { return m_extensions; }
    /// Encodes `r` (which carries plugin data) into `encoder`, built with extensions().
    void add(IpfixEncoder& encoder, const FlowRecord& r);

private:
    std::vector<IpfixExtension> m_extensions;
    std::vector<std::vector<const FieldSpec*>> m_fields;  ///< per plugin, codec order
    PluginRecords m_records;
    std::vector<FieldValue> m_values;
};

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
    std::unique_ptr<IpfixTransport> m_transport;
    std::unique_ptr<IpfixEncoder> m_encoder;
    EncoderConfig m_config;
    IpfixPluginFields m_plugins;
    std::atomic<std::uint64_t> m_oversized{0};
    bool m_finished = false;
};

}  // namespace rowprobe::output
