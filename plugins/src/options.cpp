#include "rowprobe/options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "rowprobe/errors.hpp"

namespace rowprobe {

namespace {}  // namespace

std::string formatNumber(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    std::ostringstream s;
    s << v;
    return s.str();
}

namespace {

bool parseInt(std::string_view text, std::int64_t& out) {
    if (text.empty()) return false;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && p == end;
}

/// A plain decimal: [-]digits[.digits] or [-].digits. No sign '+', no spaces, no hexadecimal,
/// no exponent, no inf/nan (strtod accepts all of these; 1e-400 would silently become 0).
bool isPlainDecimal(std::string_view text) {
    if (!text.empty() && text.front() == '-') text.remove_prefix(1);
    std::size_t digits = 0;
    bool dot = false;
    for (const char c : text) {
        if (c >= '0' && c <= '9') {
            ++digits;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            return false;
        }
    }
    return digits != 0 && text.back() != '.';
}

bool parseDouble(std::string_view text, double& out) {
    if (!isPlainDecimal(text)) return false;
    std::string copy(text);
    char* end = nullptr;
    out = std::strtod(copy.c_str(), &end);
    return end == copy.c_str() + copy.size() && std::isfinite(out);
}

bool parseFlagValue(std::string_view text, bool& out) {
    if (text == "true" || text == "1" || text == "yes" || text == "on") {
        out = true;
        return true;
    }
    if (text == "false" || text == "0" || text == "no" || text == "off") {
        out = false;
        return true;
    }
    return false;
}

bool hasRange(const OptionSpec& s) { return s.min <= s.max; }

std::vector<std::string> optionNames(std::span<const OptionSpec> specs) {
    std::vector<std::string> names;
    for (const auto& s : specs) names.emplace_back(s.name);
    return names;
}

}  // namespace

bool parseDuration(std::string_view text, std::uint64_t& ns) {
    double scale = 1e9;
    std::string_view number = text;
    auto endsWith = [&](std::string_view suffix) {
        return number.size() > suffix.size() &&
               number.substr(number.size() - suffix.size()) == suffix;
    };
    if (endsWith("ns")) {
        scale = 1;
        number.remove_suffix(2);
    } else if (endsWith("us")) {
        scale = 1e3;
        number.remove_suffix(2);
    } else if (endsWith("ms")) {
        scale = 1e6;
        number.remove_suffix(2);
    } else if (endsWith("s")) {
        number.remove_suffix(1);
    } else if (endsWith("m")) {
        scale = 60e9;
        number.remove_suffix(1);
    } else if (endsWith("h")) {
        scale = 3600e9;
        number.remove_suffix(1);
    }
    double v = 0;
    if (!parseDouble(number, v) || v < 0 || v * scale > 1e19) return false;
    ns = static_cast<std::uint64_t>(std::llround(v * scale));
    return true;
}

PluginString splitPluginString(std::string_view text, std::string_view kindName) {
    PluginString ps;
    ps.source = std::string(text);
    std::size_t pos = 0;
    std::size_t index = 0;
    while (pos <= text.size()) {
        std::size_t end = text.find(';', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view part = text.substr(pos, end - pos);
        if (index == 0) {
            if (part.empty()) {
                throw ConfigError({.component = std::string(kindName),
                                   .problem = "the plugin string must start with a plugin name",
                                   .source = ps.source,
                                   .column = 0});
            }
            ps.name = std::string(part);
        } else if (part.empty()) {
            if (end != text.size()) {  // a trailing ';' is tolerated, "a;;b" is not
                throw ConfigError({.component = std::string(kindName) + " '" + ps.name + "'",
                                   .problem = "empty option between ';;'",
                                   .source = ps.source,
                                   .column = pos});
            }
        } else {
            PluginString::Item item;
            const std::size_t eq = part.find('=');
            item.keyColumn = pos;
            if (eq == std::string_view::npos) {
                item.key = std::string(part);
                item.valueColumn = pos;
            } else {
                item.key = std::string(part.substr(0, eq));
                item.value = std::string(part.substr(eq + 1));
                item.hasValue = true;
                item.valueColumn = pos + eq + 1;
            }
            ps.items.push_back(std::move(item));
        }
        ++index;
        pos = end + 1;
    }
    return ps;
}

Options parseOptions(std::string_view component, const PluginString& ps,
                     std::span<const OptionSpec> specs, std::string_view helpHint,
                     std::string_view flag) {
    std::map<std::string, std::string> values;
    auto error = [&](const PluginString::Item& item, std::string option, std::string problem,
                     std::vector<std::string> choices, bool atKey) {
        return ConfigError({.component = std::string(component),
                            .option = std::move(option),
                            .value = atKey ? item.key : item.value,
                            .problem = std::move(problem),
                            .choices = std::move(choices),
                            .source = ps.source,
                            .column = atKey ? item.keyColumn : item.valueColumn,
                            .help = std::string(helpHint),
                            .flag = std::string(flag)});
    };
    for (const auto& item : ps.items) {
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs) {
            if (item.key == s.name || (!s.shortName.empty() && item.key == s.shortName)) spec = &s;
        }
        if (spec == nullptr) {
            std::vector<std::string> names = optionNames(specs);
            if (names.empty()) {
                throw error(item, {},
                            "unknown option '" + item.key + "' (this plugin has no options)", {},
                            true);
            }
            throw error(item, {}, "unknown option '" + item.key + "'", names, true);
        }
        const std::string name(spec->name);
        if (values.count(name) != 0) {
            throw error(item, name, "given twice", {}, true);
        }
        std::string value = item.value;
        switch (spec->type) {
            case OptionType::Flag: {
                bool b = true;
                if (item.hasValue && !parseFlagValue(item.value, b)) {
                    throw error(
                        item, name,
                        "is a flag: give it alone or as true/false, got '" + item.value + "'", {},
                        false);
                }
                value = b ? "true" : "false";
                break;
            }
            case OptionType::Int: {
                std::int64_t v = 0;
                if (!parseInt(item.value, v)) {
                    throw error(item, name,
                                "must be an integer" +
                                    (hasRange(*spec) ? " in [" + formatNumber(spec->min) + ", " +
                                                           formatNumber(spec->max) + "]"
                                                     : std::string()) +
                                    ", got '" + item.value + "'",
                                {}, false);
                }
                if (hasRange(*spec) &&
                    (static_cast<double>(v) < spec->min || static_cast<double>(v) > spec->max)) {
                    throw error(item, name,
                                "must be in [" + formatNumber(spec->min) + ", " +
                                    formatNumber(spec->max) + "] (" + std::string(spec->help) +
                                    "), got " + item.value,
                                {}, false);
                }
                break;
            }
            case OptionType::Double: {
                double v = 0;
                if (!parseDouble(item.value, v)) {
                    throw error(item, name, "must be a number, got '" + item.value + "'", {},
                                false);
                }
                if (hasRange(*spec) && (v < spec->min || v > spec->max)) {
                    throw error(item, name,
                                "must be in [" + formatNumber(spec->min) + ", " +
                                    formatNumber(spec->max) + "], got " + item.value,
                                {}, false);
                }
                break;
            }
            case OptionType::Duration: {
                std::uint64_t ns = 0;
                if (!parseDuration(item.value, ns)) {
                    throw error(item, name,
                                "must be a duration such as 30, 1.5s, 500ms or 2m, got '" +
                                    item.value + "'",
                                {}, false);
                }
                const double sec = static_cast<double>(ns) / 1e9;
                if (hasRange(*spec) && (sec < spec->min || sec > spec->max)) {
                    throw error(item, name,
                                "must be between " + formatNumber(spec->min) + " s and " +
                                    formatNumber(spec->max) + " s, got " + item.value,
                                {}, false);
                }
                break;
            }
            case OptionType::String:
                if (!item.hasValue)
                    throw error(item, name, "needs a value: " + name + "=...", {}, true);
                break;
            case OptionType::Choice: {
                bool ok = false;
                std::vector<std::string> choices;
                for (auto c : spec->choices) {
                    choices.emplace_back(c);
                    ok = ok || c == item.value;
                }
                if (!ok) {
                    throw error(item, name, "unknown value '" + item.value + "'", choices, false);
                }
                break;
            }
        }
        values[name] = value;
    }
    for (const auto& s : specs) {
        if (s.required && values.count(std::string(s.name)) == 0) {
            throw ConfigError({.component = std::string(component),
                               .option = std::string(s.name),
                               .problem = "is required (" + std::string(s.help) + ")",
                               .source = ps.source,
                               .help = std::string(helpHint),
                               .flag = std::string(flag)});
        }
    }
    return Options(std::string(component), specs, std::move(values), ps.source);
}

Options::Options(std::string component, std::span<const OptionSpec> specs,
                 std::map<std::string, std::string> values, std::string source)
    : m_component(std::move(component)),
      m_specs(specs),
      m_values(std::move(values)),
      m_source(std::move(source)) {}

const OptionSpec* Options::spec(std::string_view name) const {
    for (const auto& s : m_specs) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

bool Options::explicitlySet(std::string_view name) const {
    return m_values.count(std::string(name)) != 0;
}

bool Options::has(std::string_view name) const {
    if (explicitlySet(name)) return true;
    const OptionSpec* s = spec(name);
    return s != nullptr && !s->defaultValue.empty();
}

std::string Options::getString(std::string_view name) const {
    auto it = m_values.find(std::string(name));
    if (it != m_values.end()) return it->second;
    const OptionSpec* s = spec(name);
    if (s == nullptr) throw std::logic_error("option '" + std::string(name) + "' is not declared");
    return std::string(s->defaultValue);
}

std::int64_t Options::getInt(std::string_view name) const {
    std::int64_t v = 0;
    if (!parseInt(getString(name), v))
        throw std::logic_error("option '" + std::string(name) + "' has no integer value");
    return v;
}

double Options::getDouble(std::string_view name) const {
    double v = 0;
    if (!parseDouble(getString(name), v))
        throw std::logic_error("option '" + std::string(name) + "' has no numeric value");
    return v;
}

bool Options::getFlag(std::string_view name) const {
    bool b = false;
    const std::string text = getString(name);
    return !text.empty() && parseFlagValue(text, b) && b;
}

std::uint64_t Options::getDurationNs(std::string_view name) const {
    std::uint64_t ns = 0;
    if (!parseDuration(getString(name), ns))
        throw std::logic_error("option '" + std::string(name) + "' has no duration value");
    return ns;
}

void Options::fail(std::string_view name, std::string problem, std::vector<std::string> choices,
                   std::string_view part) const {
    ConfigError::Details d{.component = m_component,
                           .option = std::string(name),
                           .problem = std::move(problem),
                           .choices = std::move(choices),
                           .source = m_source};
    auto it = m_values.find(std::string(name));
    if (it != m_values.end()) {
        d.value = it->second;
        // Point at the value inside the source string when it can be found unambiguously.
        const OptionSpec* s = spec(name);
        for (std::string_view key : {s ? s->name : name, s ? s->shortName : std::string_view()}) {
            if (key.empty()) continue;
            const std::string needle = std::string(key) + "=" + it->second;
            const std::size_t at = m_source.find(needle);
            if (at != std::string::npos) {
                d.column = at + key.size() + 1;
                break;
            }
        }
        const std::size_t inValue = part.empty() ? std::string::npos : it->second.find(part);
        if (inValue != std::string::npos) {
            d.value = std::string(part);
            if (d.column != std::string::npos) d.column += inValue;
        }
    }
    throw ConfigError(std::move(d));
}

std::string formatOptionHelp(std::span<const OptionSpec> specs) {
    if (specs.empty()) return "  (no options)\n";
    std::size_t width = 0;
    std::vector<std::string> heads;
    for (const auto& s : specs) {
        std::string h = std::string(s.name);
        if (!s.shortName.empty()) h += ", " + std::string(s.shortName);
        h += " <" + optionTypeName(s.type) + ">";
        width = std::max(width, h.size());
        heads.push_back(std::move(h));
    }
    std::ostringstream out;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const auto& s = specs[i];
        out << "  " << heads[i] << std::string(width - heads[i].size() + 2, ' ') << s.help;
        if (s.type == OptionType::Choice && !s.choices.empty()) {
            out << " (";
            for (std::size_t c = 0; c < s.choices.size(); ++c)
                out << (c ? ", " : "") << s.choices[c];
            out << ")";
        } else if (hasRange(s) && s.type != OptionType::String) {
            out << " [" << formatNumber(s.min) << ", " << formatNumber(s.max) << "]";
        }
        if (s.required)
            out << " (required)";
        else if (!s.defaultValue.empty())
            out << " (default " << s.defaultValue << ")";
        out << '\n';
    }
    return out.str();
}

std::string optionTypeName(OptionType t) {
    switch (t) {
        case OptionType::Flag:
            return "flag";
        case OptionType::Int:
            return "integer";
        case OptionType::Double:
            return "number";
        case OptionType::Duration:
            return "duration";
        case OptionType::String:
            return "text";
        case OptionType::Choice:
            return "choice";
    }
    return "?";
}

}  // namespace rowprobe
