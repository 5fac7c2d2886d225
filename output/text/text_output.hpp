// The `text` output: human-readable flows in aligned columns, one header line then one line per
// record, for terminals and quick checks (`rowprobe -i 'pcap;file=x.pcap' -o text | less -S`).
// The layout is documented in README.md.
//
// * Threads: the export thread calls write / flush; stats() may be called from any thread and
//   reads atomics updated once per batch.
// * Costs: hand-formatted into one reused buffer, no allocation per record.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "rowprobe/format.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe::output {

class TextOutput final : public OutputPlugin {
public:
    /// Upper bound of one formatted line including its newline.
    static constexpr std::size_t kMaxLine = 512;

    /// Opens `file` ("-" = stdout) and buffers the header line unless `header=false`. Throws
    /// ConfigError when the file cannot be opened.
    explicit TextOutput(const Options& options);

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    OutputStats stats() const override;

    /// Writes the header line (with '\n') and returns the end.
    char* formatHeader(char* out) const noexcept;
    /// Writes one record's line (with '\n', at most kMaxLine bytes) and returns the end.
    char* formatRecord(char* out, const FlowRecord& record) const noexcept;

private:
    OutputFile m_file;
    unsigned m_decimals = 6;       ///< fraction digits of the times
    std::size_t m_timeWidth = 27;  ///< width of a time column for m_decimals
    std::size_t m_addrWidth = 47;  ///< width of an address:port column
    std::atomic<std::uint64_t> m_records{0};
    std::atomic<std::uint64_t> m_bytes{0};
};

}  // namespace rowprobe::output
