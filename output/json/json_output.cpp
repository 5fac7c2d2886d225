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
};

/// Appends a literal (the field separators and names); the length is a compile-time constant.
template <std::size_t N>
char* put(char* out, const char (&text)[N]) noexcept {
    std::memcpy(out, text, N - 1);
    return out + (N - 1);
}

}  // namespace

JsonOutput::JsonOutput(const Options& options)
    : m_file(options, "file"), m_layout(JsonLayout::defaults()) {
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
    m_plugins = JsonPluginColumns(plugins);
    m_groups = InstanceGroups(plugins.size());
}

void JsonOutput::writeWithPlugins(const FlowRecord& r) {
    InstanceGroups& groups = m_groups;
    groups.load(r);
    if (groups.lines() == 0) {
        m_file.commit(m_layout.format(m_file.reserve(m_layout.maxLine()), r));
        m_file.endRecord();
        return;
    }
    const std::size_t bound = m_plugins.maxObject(m_layout, groups);
    for (std::size_t k = 0; k < groups.lines(); ++k) {
        char* p = m_layout.formatOpen(m_file.reserve(bound), r);
        p = m_plugins.writeFields(p, groups, k);
        m_file.commit(put(p, "}\n"));
    }
    m_file.endRecord();
}

void JsonOutput::write(std::span<const FlowRecord> records) {
    const std::uint64_t before = m_file.bytes();
    for (const FlowRecord& r : records) {
        if (r.extLen != 0 && !m_plugins.empty()) {
            writeWithPlugins(r);
            continue;
        }
        m_file.commit(m_layout.format(m_file.reserve(m_layout.maxLine()), r));
        m_file.endRecord();
    }
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
