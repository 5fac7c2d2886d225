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
    {.name = "threads",
     .type = OptionType::Int,
     .defaultValue = "2",
     .help = "threads that format a large batch of records (a mass expiry, the final flush), the "
             "export thread included; 1 = the export thread alone. The default is 1 on a single "
             "CPU",
     .min = 1,
     .max = 16},
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
    m_formatter = std::make_unique<JsonFormatter>(m_layout, m_plugins);
    m_parallel =
        std::make_unique<ParallelFormat<JsonFormatter>>(*m_formatter, m_threads, "rp-json");
}

namespace {

/// One object of a record (its instance line k when it has plugin data) and its newline.
char* formatObject(char* out, const JsonLayout& layout, const JsonPluginColumns& plugins,
                   const InstanceGroups& groups, const FlowRecord& r, std::size_t k) noexcept {
    char* p = layout.formatOpen(out, r);
    p = plugins.writeFields(p, groups, k);
    return put(p, "}\n");
}

}  // namespace

void JsonFormatter::write(OutputFile& file, const FlowRecord& r) {
    if (r.extLen != 0 && !m_plugins->empty()) {
        // One object per instance (docs/design/process-runtime.md), each with the record's
        // fields and that instance's fields plus, for every other plugin with exactly one
        // instance, its fields.
        m_groups.load(r);
        if (m_groups.lines() != 0) {
            const std::size_t bound = m_plugins->maxObject(*m_layout, m_groups);
            for (std::size_t k = 0; k < m_groups.lines(); ++k)
                file.commit(
                    formatObject(file.reserve(bound), *m_layout, *m_plugins, m_groups, r, k));
            file.endRecord();
            return;
        }
    }
    file.commit(m_layout->format(file.reserve(m_layout->maxLine()), r));
    file.endRecord();
}

std::size_t JsonFormatter::format(std::span<const FlowRecord> records, char* out, char* end,
                                  std::uint32_t* ends) {
    char* p = out;
    std::size_t i = 0;
    for (; i < records.size(); ++i) {
        const FlowRecord& r = records[i];
        const auto room = static_cast<std::size_t>(end - p);
        if (r.extLen != 0 && !m_plugins->empty()) {
            m_groups.load(r);
            if (m_groups.lines() != 0) {
                const std::size_t bound = m_plugins->maxObject(*m_layout, m_groups);
                if (room / bound < m_groups.lines()) break;
                for (std::size_t k = 0; k < m_groups.lines(); ++k)
                    p = formatObject(p, *m_layout, *m_plugins, m_groups, r, k);
                ends[i] = static_cast<std::uint32_t>(p - out);
                continue;
            }
        }
        if (room < m_layout->maxLine()) break;
        p = m_layout->format(p, r);
        ends[i] = static_cast<std::uint32_t>(p - out);
    }
    return i;
}

void JsonOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    m_parallel->write(m_file, records,
                      [this](const FlowRecord& r) { m_formatter->write(m_file, r); });
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
