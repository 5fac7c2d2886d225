#include "cli.hpp"

#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include "manpage.hpp"
#include "metrics.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace po = boost::program_options;

namespace rowprobe::core {

namespace {

// Joins the parts of an error message (one allocation, no temporaries).
std::string concat(std::initializer_list<std::string_view> parts) {
    std::string out;
    for (const std::string_view p : parts) out += p;
    return out;
}

po::options_description describeOptions() {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("input,i", po::value<std::vector<std::string>>()->composing(),
            "input plugin string, e.g. 'pcap;file=trace.pcap' (repeat for more queues)")
        ("queues,q", po::value<std::string>(),
            "workers (queues); with one -i, N readers of a shared interface (raw fanout, dpdk "
            "RSS) or one reader spreading flows over N workers by a symmetric flow hash")
        ("cpus", po::value<std::string>(),
            "pin worker q to the q-th CPU of LIST, e.g. '0,1' or '2-5'")
        ("input-thread", po::value<std::string>(),
            "who reads a file or the generator of one queue: 'yes' a thread of its own, 'no' "
            "the queue's worker, 'auto' (default) a thread when there are 2 CPUs per queue")
        ("storage,s", po::value<std::string>(), "storage plugin string (default 'cache')")
        ("process,p", po::value<std::vector<std::string>>()->composing(),
            "process plugin string (repeatable)")
        ("output,o", po::value<std::string>(), "output plugin string (default 'text')")
        ("count,c", po::value<std::string>(), "stop after N packets on each input")
        ("stats-interval,t", po::value<std::string>(), "print statistics every SECONDS")
        ("stats-json", po::value<std::string>(), "write the final statistics as JSON to FILE")
        ("pid-file", po::value<std::string>(), "write the process id to FILE")
        ("quiet,Q", "do not print statistics to stderr at exit")
        ("no-vlan-key", "leave the VLAN id out of the flow key")
        ("metrics", po::value<std::string>(),
            "serve Prometheus metrics (HTTP GET /metrics) on ADDR:PORT, e.g. 127.0.0.1:9464")
        ("metrics-linger", po::value<std::string>(),
            "after the input ends, keep serving the final metrics for SECONDS before exit")
        ("tunnel", po::value<std::string>(),
            "tunnels: 'ipfixprobe' (default) as ipfixprobe 5.7, only GRE over IPv4 opened; "
            "'outer' nothing opened, one flow per outer packet; 'inner' every kind (GRE, "
            "ERSPAN, VXLAN, Geneve, GTP-U, Teredo, AYIYA, CAPWAP, IP-in-IP) opened; 'both' the "
            "inner flows and the outer tunnel flow")
        ("config", po::value<std::string>(),
            "read options from FILE (same names, one 'name = value' per line)")
        ("help,h",
            "show help; '-h input|storage|process|output' lists plugins, '-h NAME' shows a plugin")
        ("version,V", "show the version");
    // clang-format on
    return d;
}

std::vector<std::string> longOptionNames(const po::options_description& d) {
    std::vector<std::string> names;
    for (const auto& o : d.options()) names.push_back("--" + o->long_name());
    return names;
}

ConfigError cliError(std::string option, std::string value, std::string problem,
                     std::vector<std::string> choices = {}) {
    return ConfigError({.component = "command line",
                        .option = std::move(option),
                        .value = std::move(value),
                        .problem = std::move(problem),
                        .choices = std::move(choices),
                        .help = "rowprobe -h"});
}

std::uint64_t parseCount(const std::string& text) {
    std::uint64_t v = 0;
    std::size_t used = 0;
    try {
        if (!text.empty() && text[0] != '-') v = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size()) {
        throw cliError("-c", text,
                       "must be a whole number of packets (0 = no limit), got '" + text + "'");
    }
    return v;
}

unsigned parseQueues(const std::string& text) {
    unsigned v = 0;
    std::size_t used = 0;
    try {
        if (!text.empty() && text[0] != '-') v = static_cast<unsigned>(std::stoul(text, &used));
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || v < 1 || v > 255) {
        throw cliError("-q", text, "must be a number of queues in [1, 255], got '" + text + "'");
    }
    return v;
}

/// "0,1" or "2-5,7" -> the CPU numbers in order.
std::vector<unsigned> parseCpus(const std::string& text) {
    std::vector<unsigned> cpus;
    auto bad = [&] {
        return cliError("--cpus", text,
                        "must be CPU numbers or ranges separated by commas, e.g. '0,1' or "
                        "'2-5', got '" +
                            text + "'");
    };
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t end = std::min(text.find(',', pos), text.size());
        const std::string item = text.substr(pos, end - pos);
        const std::size_t dash = item.find('-');
        auto number = [&](const std::string& t) {
            std::size_t used = 0;
            unsigned long v = 0;
            try {
                if (!t.empty() && t[0] != '-' && t[0] != '+') v = std::stoul(t, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == 0 || used != t.size() || v > 4095) throw bad();
            return static_cast<unsigned>(v);
        };
        const unsigned first = number(dash == std::string::npos ? item : item.substr(0, dash));
        const unsigned last = dash == std::string::npos ? first : number(item.substr(dash + 1));
        if (last < first) throw bad();
        for (unsigned c = first; c <= last; ++c) cpus.push_back(c);
        pos = end + 1;
    }
    return cpus;
}

/// Longest line a configuration file may have (a plugin string with a long Kafka conf= fits).
constexpr std::size_t kMaxConfigLine = 64 * 1024;

std::string trim(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

std::vector<std::string> configFileArguments(const std::string& path, std::istream& in) {
    const po::options_description desc = describeOptions();
    std::vector<std::string> args;
    std::string line;
    for (unsigned number = 1; std::getline(in, line); ++number) {
        const std::string where = path + ":" + std::to_string(number);
        if (line.size() > kMaxConfigLine) {
            throw cliError("--config", path,
                           where + ": the line is " + std::to_string(line.size()) +
                               " bytes long, at most " + std::to_string(kMaxConfigLine) +
                               " are allowed");
        }
        line = trim(line);
        // Only a line that starts with '#' is a comment: a '#' inside a value (a path, a
        // password) is part of it.
        if (line.empty() || line.front() == '#') continue;
        const std::size_t eq = line.find('=');
        if (line.front() == '[' || eq == std::string::npos) {
            throw cliError("--config", line,
                           concat({where, ": expected 'name = value' (e.g. 'output = json'), got '",
                                   line, "'"}));
        }
        const std::string name = trim(line.substr(0, eq));
        const std::string value = trim(line.substr(eq + 1));
        const po::option_description* o = nullptr;  // exact long names only, no prefixes
        for (const auto& d : desc.options()) {
            if (d->long_name() == name) o = d.get();
        }
        if (o == nullptr || name == "config" || name == "help") {
            std::vector<std::string> choices;
            for (const auto& d : desc.options()) {
                if (d->long_name() != "config" && d->long_name() != "help")
                    choices.push_back(d->long_name());
            }
            throw cliError("--config", name,
                           concat({where, ": unknown option '", name, "' in a configuration file"}),
                           choices);
        }
        if (o->semantic()->max_tokens() == 0) {
            // An on/off option: its value says which, and nothing else is accepted.
            if (value == "true" || value == "yes" || value == "on" || value == "1") {
                args.push_back("--" + name);
            } else if (value != "false" && value != "no" && value != "off" && value != "0") {
                throw cliError("--config", value,
                               concat({where, ": '", name, "' is on or off, got '", value, "'"}),
                               {"true", "false", "yes", "no", "on", "off", "1", "0"});
            }
            continue;
        }
        if (value.empty())
            throw cliError("--config", name, concat({where, ": '", name, "' needs a value"}));
        args.push_back(concat({"--", name, "=", value}));  // one token: a value may start with '-'
    }
    if (in.bad()) throw cliError("--config", path, "cannot read '" + path + "'");
    return args;
}

namespace {

double parseSeconds(const std::string& text) {
    std::uint64_t ns = 0;
    if (!parseDuration(text, ns) || ns > 86400ULL * kNsPerSec) {
        throw cliError("-t", text, "must be a number of seconds in [0, 86400], got '" + text + "'");
    }
    return static_cast<double>(ns) / 1e9;
}

}  // namespace

CliResult parseCommandLine(int argc, const char* const* argv) {
    CliResult result;
    // -h takes an optional topic as the next word, which Program_options cannot express for
    // short options: handle it before the parser.
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            result.action = CliResult::Action::Help;
            if (i + 1 < argc && argv[i + 1][0] != '-') result.helpTopic = argv[i + 1];
            return result;
        }
        if (a == "--help-markdown") {
            result.action = CliResult::Action::Help;
            result.helpTopic = "markdown";
            return result;
        }
        if (a == "--man") {
            result.action = CliResult::Action::Help;
            const std::string section = i + 1 < argc ? argv[i + 1] : "";
            if (section != "8" && section != "5")
                throw cliError("--man", section, "must be followed by the section, 8 or 5",
                               {"8", "5"});
            result.helpTopic = "man" + section;
            return result;
        }
        if (a.rfind("--help=", 0) == 0) {
            result.action = CliResult::Action::Help;
            result.helpTopic = a.substr(7);
            return result;
        }
    }

    const po::options_description desc = describeOptions();
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
        if (vm.count("config") != 0) {
            // Command-line values win: they were stored first.
            const std::string path = vm["config"].as<std::string>();
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                throw cliError("--config", path, "'" + path + "' is a directory, not a file");
            std::ifstream file(path);
            if (!file) {
                throw cliError("--config", path,
                               "cannot read the configuration file '" + path +
                                   "': " + std::strerror(errno ? errno : ENOENT));
            }
            const std::vector<std::string> args = configFileArguments(path, file);
            po::store(po::command_line_parser(args).options(desc).run(), vm);
        }
        po::notify(vm);
    } catch (const po::unknown_option& e) {
        const std::string name = e.get_option_name();
        std::vector<std::string> choices = longOptionNames(desc);
        throw cliError({}, name, "unknown option '" + name + "'", choices);
    } catch (const po::error& e) {
        throw cliError({}, {}, e.what());
    }

    if (vm.count("version") != 0) {
        result.action = CliResult::Action::Version;
        return result;
    }
    Config& c = result.config;
    if (vm.count("input") != 0) c.inputs = vm["input"].as<std::vector<std::string>>();
    if (vm.count("queues") != 0) c.queues = parseQueues(vm["queues"].as<std::string>());
    if (vm.count("cpus") != 0) c.cpus = parseCpus(vm["cpus"].as<std::string>());
    if (vm.count("storage") != 0) c.storage = vm["storage"].as<std::string>();
    if (vm.count("process") != 0) c.process = vm["process"].as<std::vector<std::string>>();
    if (vm.count("output") != 0) c.output = vm["output"].as<std::string>();
    if (vm.count("count") != 0) c.packetLimit = parseCount(vm["count"].as<std::string>());
    if (vm.count("stats-interval") != 0)
        c.statsInterval = parseSeconds(vm["stats-interval"].as<std::string>());
    if (vm.count("stats-json") != 0) c.statsJson = vm["stats-json"].as<std::string>();
    if (vm.count("pid-file") != 0) c.pidFile = vm["pid-file"].as<std::string>();
    c.quiet = vm.count("quiet") != 0;
    c.vlanInKey = vm.count("no-vlan-key") == 0;
    if (vm.count("input-thread") != 0) {
        const std::string mode = vm["input-thread"].as<std::string>();
        if (mode == "yes") {
            c.inputThread = InputThreadMode::Yes;
        } else if (mode == "no") {
            c.inputThread = InputThreadMode::No;
        } else if (mode != "auto") {
            throw cliError("--input-thread", mode,
                           "must be 'auto', 'yes' or 'no', got '" + mode + "'",
                           {"auto", "yes", "no"});
        }
    }
    if (vm.count("metrics") != 0) {
        c.metrics = vm["metrics"].as<std::string>();
        parseMetricsAddress(c.metrics);  // throws ConfigError for a bad address
    }
    if (vm.count("metrics-linger") != 0) {
        std::uint64_t ns = 0;
        const std::string text = vm["metrics-linger"].as<std::string>();
        if (!parseDuration(text, ns) || ns > 3600ULL * kNsPerSec) {
            throw cliError("--metrics-linger", text,
                           "must be a number of seconds in [0, 3600], got '" + text + "'");
        }
        c.metricsLinger = static_cast<double>(ns) / 1e9;
    }
    if (vm.count("tunnel") != 0) {
        const std::string mode = vm["tunnel"].as<std::string>();
        if (mode == "outer") {
            c.tunnels = TunnelMode::Outer;
        } else if (mode == "inner") {
            c.tunnels = TunnelMode::Inner;
        } else if (mode == "both") {
            c.tunnels = TunnelMode::Both;
        } else if (mode == "ipfixprobe") {
            c.tunnels = TunnelMode::Ipfixprobe;
        } else {
            throw cliError("--tunnel", mode,
                           "must be 'ipfixprobe', 'outer', 'inner' or 'both', got '" + mode + "'",
                           {"ipfixprobe", "outer", "inner", "both"});
        }
    }
    if (c.inputs.empty()) {
        throw cliError(
            "-i", {},
            "an input is required, e.g. -i 'pcap;file=trace.pcap' (see rowprobe -h input)");
    }
    if (c.inputs.size() > 255)
        throw cliError("-i", {}, "at most 255 inputs (queues) are supported");
    if (c.queues > 1 && c.inputs.size() > 1 && c.queues != c.inputs.size()) {
        throw cliError("-q", std::to_string(c.queues),
                       "-q " + std::to_string(c.queues) + " with " +
                           std::to_string(c.inputs.size()) +
                           " inputs: give one -i to spread over the queues, or one -i per queue");
    }
    return result;
}

namespace {

// The fields a process plugin exports, as `rowprobe -h NAME` lists them: JSON/text key, UniRec
// type and name, IPFIX element (scripts/compare-ipfixprobe.sh reads this table to map
// ipfixprobe's UniRec columns to rowprobe's keys). Made with the default options.
std::string processFieldHelp(const Registry& reg, std::string_view name) {
    std::unique_ptr<ProcessPlugin> plugin;
    try {
        plugin = reg.createAs<ProcessPlugin>(PluginKind::Process, name, "-p");
    } catch (const std::exception&) {
        return {};
    }
    if (plugin == nullptr || plugin->fields().empty()) return {};
    std::ostringstream out;
    out << "\nFields (JSON/text key, UniRec type and name, IPFIX PEN/element):\n";
    std::size_t width = 0;
    for (const FieldSpec& f : plugin->fields()) width = std::max(width, f.name.size());
    for (const FieldSpec& f : plugin->fields()) {
        out << "  " << f.name << std::string(width - f.name.size() + 2, ' ') << f.unirec.type << ' '
            << f.unirec.name << "  " << f.ipfix.pen << '/' << f.ipfix.id << '\n';
    }
    return out.str();
}

}  // namespace

std::string helpText(const std::string& topic) {
    const Registry& reg = Registry::instance();
    std::ostringstream out;
    if (topic == "markdown") return pluginReferenceMarkdown();
    if (topic == "man8") return manPage(8);
    if (topic == "man5") return manPage(5);
    if (topic.empty()) {
        out << "Usage: rowprobe -i INPUT [-s STORAGE] [-p PROCESS]... [-o OUTPUT] [options]\n\n"
            << "A flow exporter: packets from INPUT become bidirectional flow records in the\n"
            << "STORAGE flow cache and leave through OUTPUT. Plugin strings: "
               "'name;opt=value;flag'.\n\n"
            << "Example:\n"
            << "  rowprobe -i 'pcap;file=trace.pcap' -s 'cache;size=17;policy=lru' -o "
               "'json;file=flows.json'\n\n"
            << describeOptions() << '\n'
            << "Plugins: rowprobe -h input | storage | process | output; one plugin: rowprobe -h "
               "NAME\n";
        return out.str();
    }
    for (PluginKind kind :
         {PluginKind::Input, PluginKind::Storage, PluginKind::Process, PluginKind::Output}) {
        if (topic != pluginKindName(kind)) continue;
        const auto entries = reg.list(kind);
        out << topic << " plugins:\n";
        if (entries.empty()) out << "  (none built in)\n";
        std::size_t width = 0;
        for (const auto* e : entries) width = std::max(width, e->info.name.size());
        for (const auto* e : entries) {
            out << "  " << e->info.name << std::string(width - e->info.name.size() + 2, ' ')
                << e->info.summary << '\n';
        }
        return out.str();
    }
    const Registry::Entry* e = reg.findAny(topic);
    if (e == nullptr) {
        std::vector<std::string> topics = {"input", "storage", "process", "output"};
        for (PluginKind kind :
             {PluginKind::Input, PluginKind::Storage, PluginKind::Process, PluginKind::Output}) {
            for (auto& n : reg.names(kind)) topics.push_back(n);
        }
        throw ConfigError({.component = "help",
                           .value = topic,
                           .problem = "no plugin or topic named '" + topic + "'",
                           .choices = topics});
    }
    out << pluginKindName(e->info.kind) << " plugin '" << e->info.name << "': " << e->info.summary
        << "\n\nOptions ('name;opt=value;flag', long or short names):\n"
        << formatOptionHelp(e->info.options);
    if (e->info.kind == PluginKind::Process) out << processFieldHelp(reg, e->info.name);
    if (e->info.extraHelp != nullptr) out << '\n' << e->info.extraHelp();
    return out.str();
}

std::string pluginReferenceMarkdown() {
    const Registry& reg = Registry::instance();
    std::ostringstream out;
    out << "# Plugin-string reference\n\n"
        << "Generated by `rowprobe --help-markdown` from the plugins' option tables (the same "
           "tables\n"
        << "drive parsing, `rowprobe -h NAME` and the error messages); a test keeps this file in\n"
        << "step with the code. Syntax: `name;option=value;flag;...`, long or short option names.\n"
        << "Durations accept `30`, `1.5s`, `500ms`, `2m`.\n";
    for (PluginKind kind :
         {PluginKind::Input, PluginKind::Storage, PluginKind::Process, PluginKind::Output}) {
        out << "\n## " << pluginKindName(kind) << " plugins\n";
        const auto entries = reg.list(kind);
        if (entries.empty()) out << "\nNone built in yet.\n";
        for (const auto* e : entries) {
            out << "\n### `" << e->info.name << "`\n\n" << e->info.summary << "\n\n";
            if (e->info.options.empty()) {
                out << "No options.\n";
            } else {
                out << "| option | short | type | default | meaning |\n|---|---|---|---|---|\n";
                for (const auto& o : e->info.options) {
                    std::string meaning(o.help);
                    if (o.type == OptionType::Choice && !o.choices.empty()) {
                        meaning += " (";
                        for (std::size_t c = 0; c < o.choices.size(); ++c) {
                            meaning += (c ? ", " : "") + std::string(o.choices[c]);
                        }
                        meaning += ")";
                    } else if (o.min <= o.max && o.type != OptionType::String) {
                        meaning += " [" + formatNumber(o.min) + ", " + formatNumber(o.max) + "]";
                    }
                    if (o.required) meaning += "; required";
                    out << "| `" << o.name << "` | "
                        << (o.shortName.empty() ? "" : "`" + std::string(o.shortName) + "`")
                        << " | " << optionTypeName(o.type) << " | "
                        << (o.defaultValue.empty() ? "" : "`" + std::string(o.defaultValue) + "`")
                        << " | " << meaning << " |\n";
                }
            }
            if (e->info.extraHelp != nullptr)
                out << "\n```text\n" << e->info.extraHelp() << "```\n";
        }
    }
    return out.str();
}

std::vector<CliOptionDoc> commandLineOptions() {
    std::vector<CliOptionDoc> docs;
    const po::options_description d = describeOptions();
    for (const auto& o : d.options()) {
        CliOptionDoc doc{.longName = o->long_name(),
                         .takesValue = o->semantic()->max_tokens() > 0,
                         .help = o->description()};
        const std::string shown =
            o->canonical_display_name(po::command_line_style::allow_dash_for_short);
        if (shown.size() == 2 && shown[0] == '-') doc.shortName = shown.substr(1);
        docs.push_back(std::move(doc));
    }
    docs.push_back({.longName = "help-markdown",
                    .help = "print every plugin's option table as Markdown "
                            "(docs/plugin-strings.md)"});
    docs.push_back({.longName = "man",
                    .takesValue = true,
                    .help = "print the man page of section 8 (rowprobe) or 5 (rowprobe.conf) "
                            "as roff (docs/man/)"});
    return docs;
}

std::string versionText() {
    std::string s = "rowprobe " ROWPROBE_VERSION;
    s += " (plugins:";
    const Registry& reg = Registry::instance();
    for (PluginKind kind :
         {PluginKind::Input, PluginKind::Storage, PluginKind::Process, PluginKind::Output}) {
        for (auto& n : reg.names(kind)) s += " " + n;
    }
    s += ")";
    return s;
}

}  // namespace rowprobe::core
