// Plugin options: one declarative table per plugin drives parsing of the plugin string,
// `-h PLUGIN`, the README tables and the error hints.
//
// Plugin string syntax (ipfixprobe's): `name;opt=value;flag;opt2=value`. Values may contain
// '=' and ':' but not ';'. Options are matched by long or short name. Only start-up code parses
// options; nothing here runs on the packet path.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rowprobe {

enum class OptionType : std::uint8_t {
    Flag,      ///< present or absent; `opt` alone, or `opt=true|false|1|0|yes|no`
    Int,       ///< signed integer within [min, max]
    Double,    ///< decimal number within [min, max]
    Duration,  ///< seconds, decimal allowed, suffixes s/ms/us/m (e.g. "30", "1.5s", "500ms")
    String,    ///< any text
    Choice,    ///< one of `choices`
};

struct OptionSpec {
    std::string_view name;
    std::string_view shortName;  ///< may be empty
    OptionType type = OptionType::String;
    std::string_view defaultValue;  ///< empty = no default (optional or required)
    std::string_view help;
    double min = 0;  ///< bounds for Int / Double / Duration (ignored when min > max)
    double max = -1;
    std::span<const std::string_view> choices{};
    bool required = false;
};

/// Parsed, validated option values of one plugin instance.
class Options {
public:
    Options() = default;
    Options(std::string component, std::span<const OptionSpec> specs,
            std::map<std::string, std::string> values, std::string source);

    bool has(std::string_view name) const;  ///< set explicitly or has a default
    bool explicitlySet(std::string_view name) const;
    std::string getString(std::string_view name) const;
    std::int64_t getInt(std::string_view name) const;
    double getDouble(std::string_view name) const;
    bool getFlag(std::string_view name) const;
    /// A Duration in nanoseconds.
    std::uint64_t getDurationNs(std::string_view name) const;

    /// Throws ConfigError for this plugin and option with `problem` (used by constructors for
    /// checks that span several options or depend on the system).
    /// `part`, when given, is the offending piece of a list value ("byts" in "src_ip,byts"): the
    /// caret and the "did you mean" then refer to it alone.
    [[noreturn]] void fail(std::string_view name, std::string problem,
                           std::vector<std::string> choices = {}, std::string_view part = {}) const;

    const std::string& component() const noexcept { return m_component; }
    const std::string& source() const noexcept { return m_source; }

private:
    const OptionSpec* spec(std::string_view name) const;
    std::string m_component;
    std::span<const OptionSpec> m_specs;
    std::map<std::string, std::string> m_values;  ///< long name -> raw text (explicit only)
    std::string m_source;
};

/// A plugin string split into its name and `opt=value` items, with column positions kept for
/// error carets.
struct PluginString {
    struct Item {
        std::string key;
        std::string value;
        bool hasValue = false;
        std::size_t keyColumn = 0;
        std::size_t valueColumn = 0;
    };
    std::string name;
    std::vector<Item> items;
    std::string source;
};

/// Splits `text` (throws ConfigError on an empty name or an empty item like `a;;b`).
PluginString splitPluginString(std::string_view text, std::string_view kindName);

/// Validates every item against `specs` and returns the options. Throws ConfigError naming the
/// component, the option, the value, the allowed range or choices, and a "did you mean".
Options parseOptions(std::string_view component, const PluginString& ps,
                     std::span<const OptionSpec> specs, std::string_view helpHint,
                     std::string_view flag);

/// Parses a Duration text ("30", "1.5s", "500ms", "2m", "100us") into nanoseconds; false if
/// malformed.
bool parseDuration(std::string_view text, std::uint64_t& ns);

/// A bound or default for messages: integers without exponent ("268435456"), else shortest form.
std::string formatNumber(double v);

/// Renders the option table as aligned text for `-h PLUGIN`.
std::string formatOptionHelp(std::span<const OptionSpec> specs);

/// The name of an option type in help and references: "flag", "integer", "number", "duration",
/// "text" or "choice".
std::string optionTypeName(OptionType t);

}  // namespace rowprobe
