#include "json_output.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .defaultValue = "-",
     .help = "file to write, truncated at start ('-' = standard output)"},
    {.name = "fields",
     .shortName = "F",
     .type = OptionType::String,
     .help = "comma-separated field names to write, in this order (default: all core fields)"},
    kFormatThreadsOption,
};

/// Appends a literal (the field separators and names); the length is a compile-time constant.
template <std::size_t N>
char* put(char* out, const char (&text)[N]) noexcept {
    std::memcpy(out, text, N - 1);
    return out + (N - 1);
}

}  // namespace

JsonOutput::JsonOutput(const Options& options)
    : m_file(options, "file"),
      m_layout(JsonLayout::defaults()),
      m_threads(formatThreads(options, "threads")) {
    setProcessPlugins({});
    if (!options.explicitlySet("fields")) return;
    m_layout = JsonLayout({});
    const std::vector<const FieldSpec*> fields = parseRecordFieldList(options, "fields");
    for (const FieldSpec* spec : fields) m_layout.add(*spec);
    if (m_layout.maxLine() > kLineLimit) {
        options.fail("fields", "too many fields: a line could exceed " +
                                   std::to_string(kLineLimit) + " bytes");
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (fields[j] == fields[i]) {
                options.fail("fields", "field '" + std::string(fields[i]->name) +
                                           "' is listed twice (a JSON object has each key once)");
            }
        }
    }
}

char* JsonOutput::formatRecord(char* out, const FlowRecord& record) noexcept {
    return JsonLayout::defaults().format(out, record);
}

void JsonOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    m_parallel.reset();  // its helpers hold the old layouts
    m_plugins = JsonPluginColumns(plugins);
    m_parallel = std::make_unique<ParallelFormat<JsonFormatter>>(JsonFormatter(m_layout, m_plugins),
                                                                 m_threads, "rp-json");
}

std::size_t JsonFormatter::prepare(const FlowRecord& r, std::size_t& bound) {
    m_withPlugins = false;
    if (r.extLen != 0 && !m_plugins->empty()) {
        m_groups.load(r);
        if (m_groups.lines() != 0) {
            m_withPlugins = true;
            bound = m_plugins->maxObject(*m_layout, m_groups);
            return m_groups.lines();
        }
    }
    bound = m_layout->maxLine();
    return 1;
}

char* JsonFormatter::line(char* out, const FlowRecord& r, std::size_t k) noexcept {
    if (!m_withPlugins) return m_layout->format(out, r);
    char* p = m_layout->formatOpen(out, r);
    p = m_plugins->writeFields(p, m_groups, k);
    return put(p, "}\n");
}

void JsonOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    m_parallel->write(m_file, records);
    m_bytes.fetch_add(m_file.bytes() - before, std::memory_order_relaxed);
}

void JsonOutput::flush() { m_file.flush(); }

void JsonOutput::reopen() { m_file.reopen(); }

OutputStats JsonOutput::stats() const {
    return {.records = m_file.records(), .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, JsonOutput,
                         {.name = "json",
                          .summary = "one JSON object per flow and line (JSON Lines)",
                          .options = kOptions});

}  // namespace rowprobe::output
