// The `json` output: one flat JSON object per flow record and line (JSON Lines), for jq, log
// shippers and tests. Field names are a stable interface, listed in README.md.
//
// * Threads: the export thread calls write / flush; stats() may be called from any thread and
//   reads atomics updated once per batch.
// * Costs: hand-formatted into one reused buffer (no snprintf, libc call or allocation per
//   record): one switch per column on a kind resolved at start-up, keys copied with fixed-size
//   moves, about 0.25 us per record with the 27 default fields (tools/bench_format,
//   docs/performance.md).
// * Process-plugin fields (rowprobe/plugin_data.hpp) follow the record's fields, keyed by their
//   FieldSpec name: strings escaped (control characters and bytes >= 0x80 as \u00XX), binary
//   data as lowercase hex, arrays as JSON arrays (timestamps as ISO strings), floats in their
//   shortest exact form. A record with several instances of a plugin is written once per
//   instance.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "output/common/json_layout.hpp"
#include "output/common/parallel_format.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe::output {

/// Formats records as JSON lines for ParallelFormat (one copy per formatting thread, each
/// with its own instance grouping and the output's shared, read-only layouts): a record with
/// plugin data is one object per instance line (docs/design/process-runtime.md), each with the
/// record's fields and that instance's fields plus, for every other plugin with exactly one
/// instance, its fields; one without is one object of the record's fields.
class JsonFormatter {
public:
    JsonFormatter(const JsonLayout& layout, const JsonPluginColumns& plugins)
        : m_layout(&layout), m_plugins(&plugins), m_groups(plugins.plugins()) {}
    std::size_t prepare(const FlowRecord& r, std::size_t& bound);
    char* line(char* out, const FlowRecord& r, std::size_t k) noexcept;

private:
    const JsonLayout* m_layout;
    const JsonPluginColumns* m_plugins;
    InstanceGroups m_groups;
    bool m_withPlugins = false;  ///< the record prepared last has instance lines
};

class JsonOutput final : public OutputPlugin {
public:
    /// Upper bound of one record with the default fields, including its newline.
    static constexpr std::size_t kMaxLine = 768;
    /// Field lists whose lines could be longer are refused at start-up.
    static constexpr std::size_t kLineLimit = kJsonLineLimit;

    /// Opens `file` ("-" = stdout). Throws ConfigError when it cannot be opened.
    explicit JsonOutput(const Options& options);

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    void reopen() override;  ///< SIGHUP: OutputPlugin::reopen
    OutputStats stats() const override;
    void setProcessPlugins(std::span<const ProcessPlugin* const> plugins) override;

    /// Writes one record with the default fields as a JSON object followed by '\n' (at most
    /// kMaxLine bytes) and returns the end. Pure; used by tests and benchmarks.
    static char* formatRecord(char* out, const FlowRecord& record) noexcept;

private:
    OutputFile m_file;
    JsonLayout m_layout;
    JsonPluginColumns m_plugins;
    unsigned m_threads = 1;
    /// Made by setProcessPlugins, once the layouts are final.
    std::unique_ptr<ParallelFormat<JsonFormatter>> m_parallel;
    std::atomic<std::uint64_t> m_bytes{0};
};

}  // namespace rowprobe::output
