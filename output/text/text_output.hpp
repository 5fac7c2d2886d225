// The `text` output: human-readable flows in aligned columns, one header line then one line per
// record, for terminals and quick checks (`rowprobe -i 'pcap;file=x.pcap' -o text | less -S`).
// The layout is documented in README.md.
//
// Columns come from the field schema (fields.hpp), like the json output's keys: `fields=` picks
// them by name; the default shows times, protocol, both endpoints, packets, bytes and TCP flags
// per direction and the end reason. Each column is built once at start-up:
//
// clang-format off
//   TextColumn "bytes_rev"
//     field       FieldSpec bytes_rev (u64 at FlowRecord::bytes[kReverse])
//     render      Number               how the value becomes text
//     start       195                  where the column starts in the line
//     width       13                   max(title, value width of the field's type)
//     right       true                 numbers right-aligned, text left-aligned
// clang-format on
//
// Widths depend only on the field type (and `precision` / `narrow`), never on the records, so
// lines align without buffering. A value wider than its column pushes the following text
// right until a later column's padding absorbs it; every cell keeps at least one space before.
// `src_ip,src_port` (and `dst_ip,dst_port`) next to each other in the list print as one
// `address:port` column (`[2001:db8::1]:443` for IPv6).
//
// * Threads: the export thread calls write / flush; stats() may be called from any thread and
//   reads atomics updated once per batch.
// * Process-plugin fields follow the columns as `  key=value` pairs (not aligned; values in the
//   JSON form of plugin_data.hpp), one line per plugin instance.
// * Costs: one pass over the columns per record, each cell hand-formatted in place in
//   OutputFile's reused buffer (padding first, right-aligned numbers placed by their digit
//   count); no allocation, lookup, libc call or virtual call per record.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "output/common/parallel_format.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"

namespace rowprobe::output {

/// How a column turns its field into text.
enum class TextRender : std::uint8_t {
    Number,     ///< decimal (ports, counters, ttl, vlan, ...)
    Time,       ///< UTC ISO 8601 with the configured fraction digits
    Address,    ///< IP address alone: dotted quad or RFC 5952
    Endpoint,   ///< address and the following port field: `a.b.c.d:p`, `[v6]:p`
    Mac,        ///< aa:bb:cc:dd:ee:ff
    Protocol,   ///< short name ("tcp") or the number
    TcpFlags,   ///< nfdump letters ("...AP.S."), "-" outside TCP
    EndReason,  ///< "inactive", "active", "end", "forced", "resources"
};

/// One column of the text layout. Plain data, built at start-up.
struct TextColumn {
    const FieldSpec* field = nullptr;
    const FieldSpec* port = nullptr;  ///< the port field of an Endpoint column
    TextRender render = TextRender::Number;
    bool right = false;      ///< right-aligned (numbers)
    std::size_t start = 0;   ///< first character of the column in the line
    std::size_t width = 0;   ///< characters the column reserves
    std::size_t maxLen = 0;  ///< longest text a value can have
    std::string title;
};

/// The columns of a text line, built once from field names.
class TextLayout {
public:
    struct Style {
        unsigned decimals = 6;  ///< fraction digits of the times
        bool narrow = false;    ///< address columns sized for IPv4
    };

    /// The columns of `fields` (FieldOrigin::Record), in that order; `src_ip` directly followed
    /// by `src_port` (and `dst_ip`, `dst_port`) make one `address:port` column.
    TextLayout(Style style, const std::vector<const FieldSpec*>& fields);

    /// Writes the header line (with '\n') and returns the end.
    char* formatHeader(char* out) const noexcept;
    /// Writes one record's line (with '\n', at most maxLine() bytes) and returns the end.
    char* formatRecord(char* out, const FlowRecord& record) const noexcept;

    /// Upper bound of one line (header or record) including its newline.
    std::size_t maxLine() const noexcept { return m_maxLine; }
    std::span<const TextColumn> columns() const noexcept { return m_columns; }

private:
    void add(const FieldSpec& field, const FieldSpec* port);
    void finish();

    Style m_style;
    std::vector<TextColumn> m_columns;
    std::size_t m_maxLine = 1;
};

/// Formats records as text lines for ParallelFormat (one copy per formatting thread, each with
/// its own instance grouping and the output's shared, read-only layout and plugin fields): a
/// record with plugin data is one line per instance (docs/design/process-runtime.md), the
/// aligned columns followed by `  key=value` for each plugin field (values in their JSON form).
class TextFormatter {
public:
    TextFormatter(const TextLayout& layout,
                  std::span<const std::span<const FieldSpec>> pluginFields);
    std::size_t prepare(const FlowRecord& r, std::size_t& bound);
    char* line(char* out, const FlowRecord& r, std::size_t k) noexcept;

private:
    const TextLayout* m_layout;
    std::span<const std::span<const FieldSpec>> m_pluginFields;
    InstanceGroups m_groups;
    std::size_t m_pluginKeyBytes = 0;
    std::size_t m_pluginFieldCount = 0;
    bool m_withPlugins = false;  ///< the record prepared last carries plugin data
};

class TextOutput final : public OutputPlugin {
public:
    /// Opens `file` ("-" = stdout), builds the columns from `fields` (default: README.md)
    /// and buffers the header line unless `header=false`. Throws ConfigError when the file cannot
    /// be opened or a field name is unknown.
    explicit TextOutput(const Options& options);

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    /// SIGHUP: a new file (the old one was rotated away) starts with the header line again.
    void reopen() override;
    OutputStats stats() const override;
    void setProcessPlugins(std::span<const ProcessPlugin* const> plugins) override;

    const TextLayout& layout() const noexcept { return m_layout; }

private:
    std::vector<std::span<const FieldSpec>> m_pluginFields;
    TextLayout m_layout;  ///< built first: a bad `fields` must not truncate the file
    OutputFile m_file;
    unsigned m_threads = 1;
    /// Made by setProcessPlugins, once the plugin fields are known.
    std::unique_ptr<ParallelFormat<TextFormatter>> m_parallel;
    std::atomic<std::uint64_t> m_bytes{0};
    bool m_header = false;  ///< header=true: a reopened, empty file gets the header line too
};

}  // namespace rowprobe::output
