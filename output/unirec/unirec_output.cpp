#include "unirec_output.hpp"

#include <stdexcept>
#include <string>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

// Names follow ipfixprobe's unirec output (wire-formats.md §3.1).
constexpr OptionSpec kOptions[] = {
    {.name = "ifc",
     .shortName = "i",
     .type = OptionType::String,
     .help = "TRAP interfaces, comma-separated: t:[ADDR:]PORT, u:NAME, f:PATH[:w|:a], b:",
     .required = true},
    {.name = "plugins",
     .shortName = "p",
     .type = OptionType::String,
     .defaultValue = "basic",
     .help = "field groups per interface, e.g. basic or http,(pstats,phists); one per interface"},
    {.name = "odid",
     .shortName = "o",
     .type = OptionType::Flag,
     .help = "export uint32 ODID instead of uint64 LINK_BIT_FIELD"},
    {.name = "eof",
     .shortName = "e",
     .type = OptionType::Flag,
     .help = "send the end-of-stream message (one zero byte) on every interface at exit"},
    {.name = "id",
     .shortName = "I",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "value of LINK_BIT_FIELD, or of ODID (truncated to 32 bits) with odid",
     .min = 0,
     .max = 9223372036854775807.0},
    {.name = "dir",
     .shortName = "d",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "value of DIR_BIT_FIELD",
     .min = 0,
     .max = 255},
    {.name = "legacy",
     .type = OptionType::Flag,
     .help = "4-byte container header of libtrap <= 1.16 on t: and u: (default: 14-byte, >= 1.17)"},
};

/// Splits ipfixprobe's `p=` map into groups: "http,(pstats,phists),basic" ->
/// {{http}, {pstats, phists}, {basic}}.
std::vector<std::vector<std::string>> parseGroups(const std::string& text) {
    std::vector<std::vector<std::string>> groups;
    std::size_t i = 0;
    while (i <= text.size()) {
        std::vector<std::string> group;
        if (i < text.size() && text[i] == '(') {
            const std::size_t close = text.find(')', i);
            if (close == std::string::npos) throw std::invalid_argument("missing ')'");
            std::string inner = text.substr(i + 1, close - i - 1);
            std::size_t p = 0;
            while (p <= inner.size()) {
                const std::size_t c = inner.find(',', p);
                group.push_back(
                    inner.substr(p, c == std::string::npos ? std::string::npos : c - p));
                if (c == std::string::npos) break;
                p = c + 1;
            }
            i = close + 1;
            if (i < text.size() && text[i] != ',')
                throw std::invalid_argument("expected ',' after ')'");
        } else {
            const std::size_t c = text.find(',', i);
            group.push_back(text.substr(i, c == std::string::npos ? std::string::npos : c - i));
            i = c == std::string::npos ? text.size() : c;
        }
        for (const auto& name : group) {
            if (name.empty()) throw std::invalid_argument("empty plugin name");
        }
        groups.push_back(std::move(group));
        if (i >= text.size()) break;
        ++i;  // the ','
    }
    return groups;
}

}  // namespace

UnirecOutput::UnirecOutput(const Options& o) {
    std::vector<TrapIfcSpec> specs;
    try {
        specs = parseTrapIfcSpecs(o.getString("ifc"));
    } catch (const std::invalid_argument& e) {
        o.fail("ifc", e.what());
    }
    std::vector<std::vector<std::string>> groups;
    try {
        groups = parseGroups(o.getString("plugins"));
    } catch (const std::invalid_argument& e) {
        o.fail("plugins", e.what());
    }
    if (groups.size() != specs.size()) {
        o.fail("plugins", "names " + std::to_string(groups.size()) +
                              " interface group(s) but ifc has " + std::to_string(specs.size()) +
                              " interface(s); give one group per interface");
    }
    std::vector<std::string> seen;
    for (const auto& g : groups) {
        for (const auto& name : g) {
            if (name != "basic") {
                o.fail(
                    "plugins",
                    "'" + name + "' exports no UniRec fields (no process plugin adds fields yet)",
                    {"basic"});
            }
            for (const auto& s : seen) {
                if (s == name) o.fail("plugins", "'" + name + "' may appear only once");
            }
            seen.push_back(name);
        }
    }

    const bool odid = o.getFlag("odid");
    ExportConstants constants;
    constants.linkBitField = static_cast<std::uint64_t>(o.getInt("id"));
    constants.odid = static_cast<std::uint32_t>(o.getInt("id"));
    constants.dirBitField = static_cast<std::uint32_t>(o.getInt("dir"));
    m_eof = o.getFlag("eof");
    const bool legacy = o.getFlag("legacy");
    const auto fields = fieldSpecs(unirecBasicFields(odid));

    for (auto& spec : specs) {
        Interface ifc;
        ifc.encoder = std::make_unique<UnirecEncoder>(fields, constants);
        std::string specifier = ifc.encoder->layout().specifier();
        const std::string text = spec.text;
        try {
            switch (spec.type) {
                case 't':
                case 'u':
                    ifc.trap = std::make_unique<TrapStreamServer>(std::move(spec),
                                                                  std::move(specifier), legacy);
                    break;
                case 'f':
                    ifc.trap =
                        std::make_unique<TrapFileOutput>(std::move(spec), std::move(specifier));
                    break;
                default:
                    ifc.trap =
                        std::make_unique<TrapBlackhole>(std::move(spec), std::move(specifier));
                    break;
            }
        } catch (const std::runtime_error& e) {
            // A file that cannot be created is a start-up error like any output file (exit 2).
            if (text.rfind("f:", 0) == 0) o.fail("ifc", "interface '" + text + "': " + e.what());
            throw RuntimeError("output 'unirec'", "interface '" + text + "': " + e.what());
        }
        m_record.resize(std::max(m_record.size(), ifc.encoder->recordSize()));
        m_interfaces.push_back(std::move(ifc));
    }
}

UnirecOutput::~UnirecOutput() {
    try {
        finish();
    } catch (const std::exception&) {
        // finish() is called explicitly by the pipeline, which reports errors.
    }
}

void UnirecOutput::write(std::span<const FlowRecord> records) {
    try {
        for (const FlowRecord& r : records) {
            for (auto& ifc : m_interfaces) {
                ifc.encoder->encode(r, m_record.data());
                ifc.trap->send({m_record.data(), ifc.encoder->recordSize()});
            }
        }
    } catch (const std::runtime_error& e) {
        throw RuntimeError("output 'unirec'", e.what());
    }
    publish();
}

void UnirecOutput::flush() {
    try {
        for (auto& ifc : m_interfaces) ifc.trap->flush();
    } catch (const std::runtime_error& e) {
        throw RuntimeError("output 'unirec'", e.what());
    }
    publish();
}

void UnirecOutput::reopen() {
    try {
        for (auto& ifc : m_interfaces) ifc.trap->reopen();
    } catch (const std::runtime_error& e) {
        publish();
        throw RuntimeError("output 'unirec'", e.what());
    }
    publish();
}

void UnirecOutput::finish() {
    if (m_finished) return;
    m_finished = true;
    try {
        for (auto& ifc : m_interfaces) ifc.trap->finish(m_eof);
    } catch (const std::runtime_error& e) {
        publish();
        throw RuntimeError("output 'unirec'", e.what());
    }
    publish();
}

void UnirecOutput::publish() noexcept {
    OutputStats total;
    for (const auto& ifc : m_interfaces) {
        const OutputStats s = ifc.trap->stats();
        total.records += s.records;
        total.dropped += s.dropped;
        total.bytes += s.bytes;
        total.discarded += s.discarded;
    }
    m_records.store(total.records, std::memory_order_relaxed);
    m_dropped.store(total.dropped, std::memory_order_relaxed);
    m_bytes.store(total.bytes, std::memory_order_relaxed);
    m_discarded.store(total.discarded, std::memory_order_relaxed);
}

void UnirecOutput::requestStop() {
    for (auto& ifc : m_interfaces) ifc.trap->requestStop();
}

OutputStats UnirecOutput::stats() const {
    return {m_records.load(std::memory_order_relaxed), m_dropped.load(std::memory_order_relaxed),
            m_bytes.load(std::memory_order_relaxed), m_discarded.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(
    PluginKind::Output, UnirecOutput,
    {.name = "unirec",
     .summary = "NEMEA UniRec records over TRAP: t: TCP, u: UNIX socket, f: file",
     .options = kOptions});

}  // namespace rowprobe::output
