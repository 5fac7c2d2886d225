// Command line and configuration file (Boost.Program_options).
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe::core {

/// Who reads an input whose reads never wait (a regular file, the generator) for one queue:
/// a thread of its own, or the queue's worker (core/pipeline.hpp, "Who reads an input").
enum class InputThreadMode : std::uint8_t {
    Auto,  ///< a thread when the process may use at least 2 CPUs per queue
    Yes,   ///< always a thread
    No,    ///< always the worker
};

/// Everything the command line (and an optional --config file) asks for.
struct Config {
    std::vector<std::string> inputs;  ///< -i, one per queue (or one for all with -q)
    /// -q: queues (workers). 0 = one per -i. With a single -i and N > 1: N instances of a
    /// plugin that can share an interface (raw fanout, dpdk RSS queues), else one reader and a
    /// software distributor spreading flows over N workers by a symmetric flow hash.
    unsigned queues = 0;
    std::vector<unsigned> cpus;        ///< --cpus: worker q runs on cpus[q % size]; empty = any
    std::string storage = "cache";     ///< -s
    std::vector<std::string> process;  ///< -p, repeatable
    std::string output = "text";       ///< -o
    std::uint64_t packetLimit = 0;     ///< -c, per input; 0 = no limit
    double statsInterval = 0;          ///< -t seconds; 0 = only at exit
    std::string statsJson;             ///< --stats-json FILE
    std::string pidFile;               ///< --pid-file FILE
    bool quiet = false;                ///< -Q: no statistics on stderr at exit
    bool vlanInKey = true;             ///< --no-vlan-key clears it
    InputThreadMode inputThread = InputThreadMode::Auto;  ///< --input-thread
    std::string metrics;       ///< --metrics ADDR:PORT (Prometheus /metrics); empty = off
    double metricsLinger = 0;  ///< --metrics-linger: keep serving the final values this long
    TunnelMode tunnels = TunnelMode::Ipfixprobe;  ///< --tunnel ipfixprobe|outer|inner|both
};

/// What main should do after parsing.
struct CliResult {
    enum class Action { Run, Help, Version } action = Action::Run;
    /// for Help: "", "input", "storage", "process", "output", a plugin, "markdown", "man8" or
    /// "man5" (--man 8|5: the man pages, core/manpage.hpp)
    std::string helpTopic;
    Config config;
};

/// Parses argv. Throws ConfigError for anything wrong (unknown option with "did you mean",
/// bad value, missing -i, unreadable --config file).
CliResult parseCommandLine(int argc, const char* const* argv);

/// The options of a --config file (`name = value` lines, `#` comments) as command-line
/// arguments. On/off options take true/false/yes/no/on/off/1/0 and nothing else. Throws
/// ConfigError naming the file and line for anything wrong.
std::vector<std::string> configFileArguments(const std::string& path, std::istream& in);

/// The text for `-h` (general usage) or `-h TOPIC`; throws ConfigError for an unknown topic.
std::string helpText(const std::string& topic);

/// Every plugin's option table as Markdown (docs/plugin-strings.md is this text).
std::string pluginReferenceMarkdown();

/// One command-line option, as the man pages document it (every option the parser knows,
/// including the hidden --help-markdown and --man).
struct CliOptionDoc {
    std::string longName;   ///< without "--"
    std::string shortName;  ///< without "-", may be empty
    bool takesValue = false;
    std::string help;
};
std::vector<CliOptionDoc> commandLineOptions();

/// "rowprobe 0.1.0 (...build features...)".
std::string versionText();

}  // namespace rowprobe::core
