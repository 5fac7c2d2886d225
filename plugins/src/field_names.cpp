// The start-up check that the fields of the enabled process plugins have unique names
// (rowprobe/process.hpp: checkFieldNames).
#include <string>

#include "rowprobe/errors.hpp"
#include "rowprobe/process.hpp"

namespace rowprobe {

namespace {

[[noreturn]] void clash(std::string_view first, std::string_view second, std::string_view what,
                        std::string_view name) {
    throw ConfigError({.component = "process plugins",
                       .option = "-p",
                       .value = std::string(second),
                       .problem = "plugin '" + std::string(second) + "' and " + std::string(first) +
                                  " both export the " + std::string(what) + " '" +
                                  std::string(name) +
                                  "'; field names must be unique across plugins",
                       .help = "rowprobe -h process"});
}

}  // namespace

void checkFieldNames(std::span<const ProcessPlugin* const> plugins) {
    for (std::size_t i = 0; i < plugins.size(); ++i) {
        for (const FieldSpec& f : plugins[i]->fields()) {
            for (const FieldSpec& core : coreFields()) {
                if (core.name == f.name)
                    clash("the core fields", plugins[i]->name(), "key", f.name);
            }
            for (std::size_t j = 0; j < i; ++j) {
                if (plugins[j]->name() == plugins[i]->name()) {
                    throw ConfigError({.component = "process plugins",
                                       .option = "-p",
                                       .value = std::string(plugins[i]->name()),
                                       .problem = "plugin '" + std::string(plugins[i]->name()) +
                                                  "' is given twice; its fields would repeat",
                                       .help = "rowprobe -h process"});
                }
                for (const FieldSpec& g : plugins[j]->fields()) {
                    const std::string other = "plugin '" + std::string(plugins[j]->name()) + "'";
                    if (g.name == f.name) clash(other, plugins[i]->name(), "key", f.name);
                    if (!f.unirec.name.empty() && g.unirec.name == f.unirec.name &&
                        g.unirec.type != f.unirec.type) {
                        clash(other, plugins[i]->name(), "UniRec field (with another type)",
                              f.unirec.name);
                    }
                }
            }
        }
    }
}

}  // namespace rowprobe
