#include "unirec_output.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "rowprobe/errors.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::output {

namespace {

/// The group name of the tunnel fields in `p=` (a rowprobe extension; not a process plugin).
constexpr std::string_view kTunnelGroup = "tunnel";

// Names follow ipfixprobe's unirec output (output/unirec/README.md).
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
     .help = "field groups per interface, e.g. basic or http,(pstats,phists); one per interface; "
             "tunnel: flows out of tunnels (--tunnel) with TUNNEL_TYPE, TUNNEL_ID, TUNNEL_SRC_IP, "
             "TUNNEL_DST_IP; default: basic, or the only -p plugin"},
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

UnirecOutput::UnirecOutput(const Options& o) : m_options(o) {
    try {
        m_specs = parseTrapIfcSpecs(o.getString("ifc"));
    } catch (const std::invalid_argument& e) {
        o.fail("ifc", e.what());
    }
    try {
        m_groups = parseGroups(o.getString("plugins"));
    } catch (const std::invalid_argument& e) {
        o.fail("plugins", e.what());
    }
    if (m_groups.size() != m_specs.size()) {
        o.fail("plugins", "names " + std::to_string(m_groups.size()) +
                              " interface group(s) but ifc has " + std::to_string(m_specs.size()) +
                              " interface(s); give one group per interface");
    }
    std::vector<std::string> seen;
    for (const auto& g : m_groups) {
        for (const auto& name : g) {
            if (name == "basic" && g.size() > 1) {
                o.fail("plugins", "'basic' is a group of its own (every flow, no plugin fields)",
                       {}, name);
            }
            if (name == kTunnelGroup) {  // once per group, in any number of groups
                if (std::count(g.begin(), g.end(), name) > 1)
                    o.fail("plugins", "'tunnel' may appear only once in a group", {}, name);
                continue;
            }
            for (const auto& prev : seen) {
                if (prev == name)
                    o.fail("plugins", "'" + name + "' may appear only once", {}, name);
            }
            seen.push_back(name);
        }
    }

    m_odid = o.getFlag("odid");
    m_constants.linkBitField = static_cast<std::uint64_t>(o.getInt("id"));
    m_constants.odid = static_cast<std::uint32_t>(o.getInt("id"));
    m_constants.dirBitField = static_cast<std::uint32_t>(o.getInt("dir"));
    m_eof = o.getFlag("eof");
    m_legacy = o.getFlag("legacy");
    m_interfaces.resize(m_specs.size());
    // Basic interfaces open now; interfaces of plugin groups once the plugins are known.
    for (std::size_t i = 0; i < m_specs.size(); ++i) {
        if (m_groups[i].size() == 1 && m_groups[i][0] == "basic") open(i, {});
    }
}

void UnirecOutput::open(std::size_t index, std::vector<UnirecPluginFields> plugins, bool tunnel) {
    Interface& ifc = m_interfaces[index];
    ifc.trap.reset();  // a re-opened interface releases its port / file first
    ifc.plugins.clear();
    ifc.mask = 0;
    ifc.tunnel = tunnel;
    for (const auto& p : plugins) {
        ifc.plugins.push_back(p.plugin);
        ifc.mask |= std::uint64_t{1} << p.plugin;
    }
    std::vector<const FieldSpec*> core = fieldSpecs(unirecBasicFields(m_odid));
    if (tunnel) {
        for (const FieldId id :
             {FieldId::TunnelType, FieldId::TunnelId, FieldId::TunnelSrc, FieldId::TunnelDst})
            core.push_back(&fieldSpec(id));
    }
    try {
        ifc.encoder = std::make_unique<UnirecEncoder>(core, m_constants, plugins);
    } catch (const std::invalid_argument& e) {
        m_options.fail("plugins", e.what());
    }
    TrapIfcSpec spec = m_specs[index];
    std::string specifier = ifc.encoder->layout().specifier();
    const std::string text = spec.text;
    try {
        switch (spec.type) {
            case 't':
            case 'u':
                ifc.trap = std::make_unique<TrapStreamServer>(std::move(spec), std::move(specifier),
                                                              m_legacy);
                break;
            case 'f':
                ifc.trap = std::make_unique<TrapFileOutput>(std::move(spec), std::move(specifier));
                break;
            default:
                ifc.trap = std::make_unique<TrapBlackhole>(std::move(spec), std::move(specifier));
                break;
        }
    } catch (const std::runtime_error& e) {
        // A file that cannot be created is a start-up error like any output file (exit 2).
        if (text.rfind("f:", 0) == 0)
            m_options.fail("ifc", "interface '" + text + "': " + e.what());
        throw RuntimeError("output 'unirec'", "interface '" + text + "': " + e.what());
    }
    // Fixed part plus the largest variable part of a UniRec record.
    m_record.resize(std::max(m_record.size(), ifc.encoder->recordSize() + 65536));
}

void UnirecOutput::setProcessPlugins(std::span<const ProcessPlugin* const> plugins) {
    std::vector<std::string> names;
    for (const ProcessPlugin* p : plugins) names.emplace_back(p->name());
    auto fieldsOf = [&](std::size_t i) {
        UnirecPluginFields f;
        f.plugin = i;
        for (const FieldSpec& s : plugins[i]->fields()) {
            if (!s.unirec.name.empty()) f.fields.push_back(&s);
        }
        if (f.fields.empty()) {
            m_options.fail("plugins", "process plugin '" + names[i] + "' exports no UniRec fields",
                           {}, names[i]);
        }
        return f;
    };
    if (!m_options.explicitlySet("plugins")) {
        // ipfixprobe's rule without a map: no plugin -> basic; one interface and exactly one
        // plugin -> that plugin's fields; anything else needs the map.
        if (plugins.empty()) return;
        if (plugins.size() == 1 && m_interfaces.size() == 1) {
            open(0, {fieldsOf(0)});
            m_pluginRecords = InstanceGroups(plugins.size());
            return;
        }
        std::string example;
        for (const auto& n : names) example += (example.empty() ? "" : ",") + n;
        m_options.fail("plugins",
                       "is needed with " + std::to_string(plugins.size()) +
                           " process plugins and " + std::to_string(m_interfaces.size()) +
                           " interface(s): map each interface to a group, e.g. plugins=(" +
                           example + ") for one interface with all of them");
    }
    std::vector<std::string> allowed = names;
    allowed.emplace_back("basic");
    allowed.emplace_back(kTunnelGroup);
    for (std::size_t i = 0; i < m_groups.size(); ++i) {
        if (m_groups[i].size() == 1 && m_groups[i][0] == "basic") continue;
        std::vector<UnirecPluginFields> group;
        bool tunnel = false;
        for (const auto& name : m_groups[i]) {
            if (name == kTunnelGroup) {
                tunnel = true;
                continue;
            }
            const auto it = std::find(names.begin(), names.end(), name);
            if (it == names.end()) {
                m_options.fail("plugins",
                               "'" + name + "' is not a process plugin of this run" +
                                   (names.empty() ? " (no -p given)" : "") +
                                   "; each group names plugins given with -p, basic or tunnel",
                               allowed, name);
            }
            group.push_back(fieldsOf(static_cast<std::size_t>(it - names.begin())));
            // One UniRec record holds each name once: plugins that share ipfixprobe's names
            // (dns and passivedns: DNS_ID, DNS_NAME, DNS_RR_TTL) go to separate interfaces.
            for (std::size_t g = 0; g + 1 < group.size(); ++g) {
                for (const FieldSpec* a : group[g].fields) {
                    for (const FieldSpec* b : group.back().fields) {
                        if (a->unirec.name != b->unirec.name) continue;
                        m_options.fail("plugins",
                                       "group " + std::to_string(i + 1) + ": plugins '" +
                                           names[group[g].plugin] + "' and '" + name +
                                           "' both export the UniRec field " +
                                           std::string(a->unirec.name) +
                                           "; put them on separate interfaces, e.g. plugins=" +
                                           names[group[g].plugin] + "," + name,
                                       {}, name);
                    }
                }
            }
        }
        open(i, std::move(group), tunnel);
    }
    m_pluginRecords = InstanceGroups(plugins.size());
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
            bool loaded = false;
            for (auto& ifc : m_interfaces) {
                if (!ifc.trap) continue;  // a plugin group never resolved (no pipeline)
                // A flow goes to a group's interface only if it carries at least one of the
                // group's plugins, or the group has `tunnel` and the flow came out of one.
                const bool tunnelled = ifc.tunnel && r.tunnel.type != 0;
                if (ifc.plugins.empty()) {
                    if (ifc.tunnel && !tunnelled) continue;
                    ifc.encoder->encode(r, m_record.data());
                    ifc.trap->send({m_record.data(), ifc.encoder->recordSize()});
                    continue;
                }
                // One record per instance line (InstanceGroups, rowprobe/plugin_data.hpp).
                std::size_t n = 0;
                if (r.extLen != 0) {
                    if (!loaded) {
                        m_pluginRecords.load(r);
                        loaded = true;
                    }
                    n = m_pluginRecords.lines(ifc.mask);
                }
                const bool withPlugins = n != 0;
                if (!withPlugins) {
                    if (!tunnelled) continue;
                    n = 1;  // the tunnel fields, the group's plugins absent
                }
                for (std::size_t k = 0; k < n; ++k) {
                    m_instances.clear();
                    for (const std::size_t p : ifc.plugins) {
                        const PluginInstance* inst =
                            withPlugins ? m_pluginRecords.at(p, k) : nullptr;
                        m_instances.push_back(inst != nullptr ? inst->data
                                                              : std::span<const std::uint8_t>{});
                    }
                    const std::size_t size = ifc.encoder->encode(r, m_instances, m_record.data());
                    if (size == 0) {
                        ++m_oversizedCount;  // plugin data beyond a UniRec record's 65535 bytes
                        continue;
                    }
                    ifc.trap->send({m_record.data(), size});
                }
            }
        }
    } catch (const std::runtime_error& e) {
        throw RuntimeError("output 'unirec'", e.what());
    }
    publish();
}

void UnirecOutput::flush() {
    try {
        for (auto& ifc : m_interfaces) {
            if (ifc.trap) ifc.trap->flush();
        }
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
        for (auto& ifc : m_interfaces) {
            if (ifc.trap) ifc.trap->finish(m_eof);
        }
    } catch (const std::runtime_error& e) {
        publish();
        throw RuntimeError("output 'unirec'", e.what());
    }
    publish();
}

void UnirecOutput::publish() noexcept {
    OutputStats total;
    for (const auto& ifc : m_interfaces) {
        if (!ifc.trap) continue;
        const OutputStats s = ifc.trap->stats();
        total.records += s.records;
        total.dropped += s.dropped;
        total.bytes += s.bytes;
        total.discarded += s.discarded;
    }
    m_records.store(total.records, std::memory_order_relaxed);
    m_dropped.store(total.dropped + m_oversizedCount, std::memory_order_relaxed);
    m_bytes.store(total.bytes, std::memory_order_relaxed);
    m_discarded.store(total.discarded, std::memory_order_relaxed);
}

void UnirecOutput::requestStop() {
    for (auto& ifc : m_interfaces) ifc.trap->requestStop();
}

OutputStats UnirecOutput::stats() const {
    return {.records = m_records.load(std::memory_order_relaxed),
            .dropped = m_dropped.load(std::memory_order_relaxed),
            .discarded = m_discarded.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(
    PluginKind::Output, UnirecOutput,
    {.name = "unirec",
     .summary = "NEMEA UniRec records over TRAP: t: TCP, u: UNIX socket, f: file",
     .options = kOptions});

}  // namespace rowprobe::output
