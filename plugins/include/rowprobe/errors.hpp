// Errors of the start-up and I/O paths. The packet path never throws (it counts Anomaly).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace rowprobe {

/// A configuration mistake found at start-up: bad plugin string, unknown plugin or option, value
/// out of range. Thrown by option parsing and plugin constructors, rendered once by `main`
/// (exit code 2). Fields:
///   component  "storage 'cache'", "input 'pcap'", "option -c" ...
///   option     the option name, empty when the plugin name itself is wrong
///   value      the offending text
///   problem    what is wrong, with the bounds ("must be in [4, 30] (2^size records), got 31")
///   choices    allowed names, if a closed set (rendered with a "did you mean" when one is close)
///   source     the whole string the user typed, with `column` the 0-based start of `value`
class ConfigError : public std::runtime_error {
public:
    struct Details {
        std::string component;
        std::string option;
        std::string value;
        std::string problem;
        std::vector<std::string> choices;
        std::string source;
        std::size_t column = std::string::npos;
        std::string help;  ///< e.g. "rowprobe -h cache"
        std::string flag;  ///< command-line flag that carried `source`, e.g. "-s"
    };
    explicit ConfigError(Details d);
    const Details& details() const noexcept { return m_details; }
    /// The multi-line message shown to the user (without the "rowprobe: error: " prefix).
    std::string render() const;

private:
    Details m_details;
};

/// Failure at run time with a named plugin and the system's reason (exit code 1).
class RuntimeError : public std::runtime_error {
public:
    RuntimeError(const std::string& component, const std::string& what)
        : std::runtime_error(component + ": " + what) {}
};

/// Edit distance with adjacent transpositions (optimal string alignment), for "did you mean".
std::size_t editDistance(std::string_view a, std::string_view b);

/// The closest candidate to `word` when it is plausibly a typo (distance <= max(1, len/3)),
/// else an empty string.
std::string closestMatch(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace rowprobe
