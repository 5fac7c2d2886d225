#include "rowprobe/registry.hpp"

#include <algorithm>

#include "rowprobe/errors.hpp"
#include "rowprobe/process_plugin_library.hpp"

namespace rowprobe {

std::string_view pluginKindName(PluginKind kind) noexcept {
    switch (kind) {
        case PluginKind::Input:
            return "input";
        case PluginKind::Storage:
            return "storage";
        case PluginKind::Process:
            return "process";
        case PluginKind::Output:
            return "output";
    }
    return "plugin";
}

Registry& Registry::instance() {
    static Registry registry;
    return registry;
}

bool Registry::add(PluginInfo info, PluginFactory factory) {
    if (find(info.kind, info.name) != nullptr) {
        m_duplicates.push_back(std::string(pluginKindName(info.kind)) + " plugin '" +
                               std::string(info.name) + "' is registered twice (" +
                               std::string(find(info.kind, info.name)->info.summary) + " / " +
                               std::string(info.summary) + ")");
        return false;
    }
    m_entries.push_back({info, factory});
    return true;
}

void Registry::checkConsistent() const {
    if (!m_duplicates.empty()) {
        throw ConfigError({.component = "plugin registry", .problem = m_duplicates.front()});
    }
}

const Registry::Entry* Registry::find(PluginKind kind, std::string_view name) const {
    for (const auto& e : m_entries) {
        if (e.info.kind == kind && e.info.name == name) return &e;
    }
    return nullptr;
}

const Registry::Entry* Registry::findAny(std::string_view name) const {
    for (const auto& e : m_entries) {
        if (e.info.name == name) return &e;
    }
    return nullptr;
}

std::vector<const Registry::Entry*> Registry::list(PluginKind kind) const {
    std::vector<const Entry*> out;
    for (const auto& e : m_entries) {
        if (e.info.kind == kind) out.push_back(&e);
    }
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->info.name < b->info.name; });
    return out;
}

std::vector<std::string> Registry::names(PluginKind kind) const {
    std::vector<std::string> out;
    for (const auto* e : list(kind)) out.emplace_back(e->info.name);
    return out;
}

std::unique_ptr<Plugin> Registry::create(PluginKind kind, std::string_view text,
                                         std::string_view flag) const {
    const std::string kindName(pluginKindName(kind));
    const PluginString ps = splitPluginString(text, kindName);
    const Entry* entry = find(kind, ps.name);
    if (entry == nullptr && kind == PluginKind::Process && isPluginLibraryName(ps.name)) {
        // A process plugin in a shared object: registered under its path on first use.
        const ProcessPluginDescriptor& d = loadProcessPluginLibrary(ps.name);
        Registry& self = instance();
        self.m_libraryNames.push_back(std::make_unique<std::string>(ps.name));
        self.m_entries.push_back(
            {PluginInfo{.kind = PluginKind::Process,
                        .name = *self.m_libraryNames.back(),
                        .summary = d.summary != nullptr ? d.summary : d.name,
                        .options = std::span<const OptionSpec>(d.options, d.optionCount)},
             d.factory});
        entry = &self.m_entries.back();
    }
    if (entry == nullptr) {
        std::vector<std::string> available = names(kind);
        std::string problem = "unknown " + kindName + " plugin '" + ps.name + "'";
        if (available.empty()) problem += " (no " + kindName + " plugins are built in)";
        throw ConfigError({.component = kindName,
                           .value = ps.name,
                           .problem = std::move(problem),
                           .choices = std::move(available),
                           .source = ps.source,
                           .column = 0,
                           .help = "rowprobe -h " + kindName,
                           .flag = std::string(flag)});
    }
    const std::string component = kindName + " '" + ps.name + "'";
    Options options =
        parseOptions(component, ps, entry->info.options, "rowprobe -h " + ps.name, flag);
    try {
        return entry->factory(options);
    } catch (ConfigError& e) {
        ConfigError::Details d = e.details();
        if (d.flag.empty()) d.flag = std::string(flag);
        if (d.help.empty()) d.help = "rowprobe -h " + ps.name;
        if (d.source.empty()) d.source = ps.source;
        throw ConfigError(std::move(d));
    }
}

}  // namespace rowprobe
