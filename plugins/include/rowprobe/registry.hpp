// The plugin registry. Built-in plugins register from a static initializer in their own .cpp
// (ROWPROBE_REGISTER_PLUGIN); the registry lives in a function-local static so registration
// order does not matter. The core looks names up only after main() starts.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe {

std::string_view pluginKindName(PluginKind kind) noexcept;  ///< "input", "storage", ...

struct PluginInfo {
    PluginKind kind = PluginKind::Input;
    std::string_view name;
    std::string_view summary;  ///< one line for `-h input`
    std::span<const OptionSpec> options{};
    /// Optional extra text for `-h NAME` (e.g. the list of row policies); may be null.
    std::string (*extraHelp)() = nullptr;
};

using PluginFactory = std::unique_ptr<Plugin> (*)(const Options&);

class Registry {
public:
    struct Entry {
        PluginInfo info;
        PluginFactory factory;
    };

    /// The process-wide registry (function-local static).
    static Registry& instance();

    /// Called from static initializers. A duplicate (kind, name) is remembered and reported by
    /// `checkConsistent` at start-up, naming both registrations.
    bool add(PluginInfo info, PluginFactory factory);
    /// Throws ConfigError if two plugins registered the same name.
    void checkConsistent() const;

    const Entry* find(PluginKind kind, std::string_view name) const;
    std::vector<const Entry*> list(PluginKind kind) const;  ///< sorted by name
    std::vector<std::string> names(PluginKind kind) const;
    /// Finds a plugin of any kind by name (for `-h NAME`).
    const Entry* findAny(std::string_view name) const;

    /// Parses `text` ("name;opt=value;...") for a plugin of `kind`, validates the options and
    /// constructs the plugin. Throws ConfigError (unknown plugin with "did you mean", bad
    /// option) naming `flag` (e.g. "-s").
    std::unique_ptr<Plugin> create(PluginKind kind, std::string_view text,
                                   std::string_view flag) const;

    template <class T>
    std::unique_ptr<T> createAs(PluginKind kind, std::string_view text,
                                std::string_view flag) const {
        auto p = create(kind, text, flag);
        return std::unique_ptr<T>(static_cast<T*>(p.release()));
    }

private:
    std::vector<Entry> m_entries;
    std::vector<std::string> m_duplicates;
    std::vector<std::unique_ptr<std::string>> m_libraryNames;  ///< names of loaded libraries
};

namespace detail {
template <class T>
std::unique_ptr<Plugin> makePlugin(const Options& o) {
    return std::make_unique<T>(o);
}
}  // namespace detail

#define ROWPROBE_CONCAT_INNER(a, b) a##b
#define ROWPROBE_CONCAT(a, b) ROWPROBE_CONCAT_INNER(a, b)

/// Registers plugin class TYPE (constructible from `const Options&`) of kind KIND.
/// Usage: ROWPROBE_REGISTER_PLUGIN(PluginKind::Output, TextOutput,
///            {.name = "text", .summary = "...", .options = kOptions});
/// The .kind member of the info is overwritten with KIND.
#define ROWPROBE_REGISTER_PLUGIN(KIND, TYPE, ...)                                                 \
    namespace {                                                                                   \
    [[maybe_unused]] const bool ROWPROBE_CONCAT(kRowprobeRegistered, __LINE__) = [] {             \
        ::rowprobe::PluginInfo info = ::rowprobe::PluginInfo __VA_ARGS__;                         \
        info.kind = KIND;                                                                         \
        return ::rowprobe::Registry::instance().add(info, &::rowprobe::detail::makePlugin<TYPE>); \
    }();                                                                                          \
    }

}  // namespace rowprobe
