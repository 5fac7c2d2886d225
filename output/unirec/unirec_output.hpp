// The `unirec` output plugin: UniRec records (unirec_record.hpp) over TRAP output interfaces
// (trap_output.hpp), configured like ipfixprobe's unirec output (README.md).
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"
#include "trap_output.hpp"
#include "unirec_record.hpp"

namespace rowprobe::output {

class UnirecOutput final : public OutputPlugin {
public:
    /// Parses `ifc` and `plugins` (ConfigError on mistakes), opens every interface
    /// (RuntimeError when a port or socket cannot be bound, or a file cannot be opened).
    explicit UnirecOutput(const Options& options);
    ~UnirecOutput() override;

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    void finish() override;
    void reopen() override;  ///< SIGHUP: every f: interface whose file was moved away
    OutputStats stats() const override;
    void requestStop() override;
    /// Resolves the `plugins` groups against the process plugins and opens the interfaces
    /// that carry plugin fields or the tunnel group (`tunnel`: TUNNEL_TYPE, TUNNEL_ID,
    /// TUNNEL_SRC_IP, TUNNEL_DST_IP, for flows that came out of a tunnel). ConfigError (exit 2) when a group names a plugin that is not
    /// running, a plugin without UniRec fields, or when plugins run without a `plugins` map
    /// that ipfixprobe's default rule could resolve.
    void setProcessPlugins(std::span<const ProcessPlugin* const> plugins) override;

    std::size_t interfaceCount() const noexcept { return m_interfaces.size(); }
    TrapOutput& interface(std::size_t i) { return *m_interfaces[i].trap; }
    const UnirecLayout& layout(std::size_t i) const { return m_interfaces[i].encoder->layout(); }

private:
    struct Interface {
        std::unique_ptr<TrapOutput> trap;
        std::unique_ptr<UnirecEncoder> encoder;
        std::vector<std::size_t> plugins;  ///< -p indices of the group; empty = basic
        std::uint64_t mask = 0;            ///< the same as bits
        bool tunnel = false;  ///< the group has `tunnel`: TUNNEL_* fields, flows out of tunnels
    };
    void open(std::size_t index, std::vector<UnirecPluginFields> plugins, bool tunnel = false);
    void publish() noexcept;

    Options m_options;
    std::vector<TrapIfcSpec> m_specs;
    std::vector<std::vector<std::string>> m_groups;
    ExportConstants m_constants;
    bool m_odid = false;
    bool m_legacy = false;
    std::vector<Interface> m_interfaces;
    std::vector<std::uint8_t> m_record;
    InstanceGroups m_pluginRecords;
    std::vector<std::span<const std::uint8_t>> m_instances;
    bool m_eof = false;
    bool m_finished = false;
    std::uint64_t m_oversizedCount = 0;
    std::atomic<std::uint64_t> m_records{0};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_bytes{0};
    std::atomic<std::uint64_t> m_discarded{0};
};

}  // namespace rowprobe::output
