#include "manpage.hpp"

#include <sstream>
#include <vector>

#include "cli.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::core {

namespace {

/// The date in the pages' title lines: the last time their prose (not the tables) changed.
constexpr const char* kManDate = "2026-11-24";

constexpr PluginKind kKinds[] = {PluginKind::Input, PluginKind::Storage, PluginKind::Process,
                                 PluginKind::Output};

/// "--input" -> "\-\-input" (roff: a minus sign, not a hyphen, so it can be copied).
std::string dashes(const std::string& name) {
    std::string out;
    for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

/// The placeholder of an option's value.
std::string metavar(const std::string& longName) {
    static const std::pair<const char*, const char*> kNames[] = {
        {"input", "PLUGIN"},
        {"storage", "PLUGIN"},
        {"process", "PLUGIN"},
        {"output", "PLUGIN"},
        {"queues", "N"},
        {"cpus", "LIST"},
        {"input-thread", "MODE"},
        {"count", "N"},
        {"stats-interval", "SECONDS"},
        {"stats-json", "FILE"},
        {"pid-file", "FILE"},
        {"config", "FILE"},
        {"metrics", "ADDR:PORT"},
        {"metrics-linger", "SECONDS"},
        {"man", "SECTION"},
        {"help", "TOPIC"},
    };
    for (const auto& [name, var] : kNames) {
        if (longName == name) return var;
    }
    return "VALUE";
}

/// The text of one plugin option: help, choices or range, default, required.
std::string optionMeaning(const OptionSpec& o) {
    std::string meaning(o.help);
    if (o.type == OptionType::Choice && !o.choices.empty()) {
        meaning += "; one of";
        for (std::size_t c = 0; c < o.choices.size(); ++c)
            meaning += (c ? ", " : " ") + std::string(o.choices[c]);
    } else if (o.min <= o.max && o.type != OptionType::String) {
        meaning += "; in [" + formatNumber(o.min) + ", " + formatNumber(o.max) + "]";
    }
    if (!o.defaultValue.empty()) meaning += "; default " + std::string(o.defaultValue);
    if (o.required) meaning += "; required";
    return meaning + ".";
}

/// A plugin's extra help (lists of policies, hash functions, notes): one output line per
/// input line, leading blanks dropped, long lines wrapped by wrapText.
void literalBlock(std::ostringstream& out, const std::string& text) {
    out << ".PP\n";
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const std::size_t start = line.find_first_not_of(' ');
        if (start == std::string::npos) continue;
        out << roffEscape(line.substr(start)) << "\n.br\n";
    }
}

/// Source lines of at most 80 bytes (mandoc -Tlint's style limit): text lines are broken at
/// blanks, which fill mode joins again; request lines are left alone. Runs of blanks inside a
/// text line become one (roff would keep them).
std::string wrapText(const std::string& page) {
    std::ostringstream out;
    std::istringstream lines(page);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.size() <= 80 || line[0] == '.') {
            out << line << '\n';
            continue;
        }
        std::istringstream words(line);
        std::string word;
        std::string current;
        while (words >> word) {
            if (!current.empty() && current.size() + 1 + word.size() > 80) {
                out << current << '\n';
                current.clear();
            }
            if (current.empty() && (word[0] == '.' || word[0] == '\'')) current = "\\&";
            current += (current.empty() || current == "\\&" ? "" : " ") + word;
        }
        if (!current.empty()) out << current << '\n';
    }
    return out.str();
}

void pluginSections(std::ostringstream& out) {
    const Registry& reg = Registry::instance();
    for (PluginKind kind : kKinds) {
        for (const auto* e : reg.list(kind)) {
            out << ".SS \"" << e->info.name << " (" << pluginKindName(kind) << ")\"\n"
                << roffEscape(std::string(e->info.summary)) << ".\n";
            if (e->info.options.empty()) out << "No options.\n";
            for (const OptionSpec& o : e->info.options) {
                out << ".TP\n\\fB" << dashes(std::string(o.name)) << "\\fR";
                if (!o.shortName.empty())
                    out << ", \\fB" << dashes(std::string(o.shortName)) << "\\fR";
                if (o.type != OptionType::Flag) out << "=\\fI" << optionTypeName(o.type) << "\\fR";
                out << '\n' << roffEscape(optionMeaning(o)) << '\n';
            }
            if (e->info.extraHelp != nullptr) literalBlock(out, e->info.extraHelp());
        }
    }
}

void page8(std::ostringstream& out) {
    out << ".TH ROWPROBE 8 " << kManDate << " \""
        << versionText().substr(0, versionText().find(" (")) << "\" \"System Manager's Manual\"\n"
        << ".SH NAME\nrowprobe \\- flow exporter for network monitoring probes\n"
        << ".SH SYNOPSIS\n.B rowprobe\n\\fB\\-i\\fR \\fIINPUT\\fR ...\n"
        << "[\\fB\\-s\\fR \\fISTORAGE\\fR]\n[\\fB\\-p\\fR \\fIPROCESS\\fR] ...\n"
        << "[\\fB\\-o\\fR \\fIOUTPUT\\fR]\n[\\fIOPTIONS\\fR]\n.br\n"
        << ".B rowprobe\n\\fB\\-\\-config\\fR \\fIFILE\\fR\n"
        << ".SH DESCRIPTION\n"
        << ".B rowprobe\nturns packets into bidirectional flow records.\n"
        << "Packets come from an input plugin (a pcap file or live interface, an AF_PACKET ring,\n"
        << "a DPDK port, a generator), one queue per input: each queue has a worker thread with\n"
        << "its own flow cache (the storage plugin).\n"
        << "Finished flows leave through one output plugin (text, JSON lines, IPFIX, UniRec)\n"
        << "from a separate export thread.\n"
        << "A flow ends on the inactive timeout, the active timeout, TCP FIN or RST, when the\n"
        << "cache evicts it, or at the end of the input or on shutdown.\n"
        << ".PP\n"
        << "Each plugin is chosen by a plugin string\n"
        << ".IR name ; option = value ; flag ,\n"
        << "with the long or short option names listed under\n.B PLUGINS\nbelow.\n"
        << "A mistake in an option or plugin string stops start-up with exit status 2 and one\n"
        << "message naming the plugin, the option, the value and what is allowed.\n"
        << ".SH OPTIONS\n"
        << "Every option can also be given in a configuration file (\\fB\\-\\-config\\fR,\n"
        << ".BR rowprobe.conf (5)).\n";
    for (const CliOptionDoc& o : commandLineOptions()) {
        out << ".TP\n";
        if (!o.shortName.empty()) out << "\\fB\\-" << dashes(o.shortName) << "\\fR, ";
        out << "\\fB\\-\\-" << dashes(o.longName) << "\\fR";
        if (o.takesValue) out << " \\fI" << metavar(o.longName) << "\\fR";
        out << '\n' << roffEscape(o.help) << ".\n";
    }
    out << ".SH PLUGINS\n"
        << "Plugin strings follow ipfixprobe: \\fIname\\fR;\\fIoption\\fR=\\fIvalue\\fR;"
           "\\fIflag\\fR;...\n"
        << "A flag alone means true; it also takes true, false, 1, 0, yes or no.\n"
        << "Durations accept 30, 1.5s, 500ms, 2m.\n"
        << "\\fBrowprobe \\-h\\fR \\fINAME\\fR shows one plugin's options.\n";
    pluginSections(out);
    out << ".SH SIGNALS\n"
        << ".TP\n.BR SIGTERM \", \" SIGINT\n"
        << "Stop the inputs and export every cached flow (end reason forced), then write the\n"
        << "statistics and exit 0.\n"
        << "A second signal exits at once with status 130.\n"
        << ".TP\n.B SIGHUP\n"
        << "Reopen the file outputs for log rotation: the output writes out what it buffered\n"
        << "and, when its file was renamed or removed, opens the configured path anew\n"
        << "(text and json \\fBfile=\\fR, ipfix \\fBfile=\\fR with its templates first, unirec\n"
        << "\\fBf:\\fR with its header).\n"
        << "No record is lost or written twice.\n"
        << ".SH EXIT STATUS\n"
        << ".TP\n.B 0\nsuccess\n"
        << ".TP\n.B 1\nrun-time failure (input or output I/O, metrics address in use)\n"
        << ".TP\n.B 2\nconfiguration error (bad option or plugin string)\n"
        << ".TP\n.B 130\na second SIGINT or SIGTERM during shutdown\n"
        << ".SH ENVIRONMENT\n"
        << ".TP\n.B ROWPROBE_POLICY_PATH\n"
        << "Colon-separated directories searched for row policy libraries after the cache's\n"
        << "\\fBpolicy\\-dir\\fR and before the installed plugin directory.\n"
        << ".SH FILES\n"
        << ".TP\n.I /etc/rowprobe/NAME.conf\n"
        << "configuration of the service instance \\fBrowprobe@NAME.service\\fR\n"
        << ".TP\n.I /usr/lib/<multiarch>/rowprobe/\n"
        << "installed plugin directory (row policy libraries "
           "\\fBlibrowprobe\\-policy\\-NAME.so\\fR)\n"
        << ".TP\n.I /lib/systemd/system/rowprobe@.service\n"
        << "the service, one instance per link; \\fBrowprobe.target\\fR starts and stops them all\n"
        << ".SH EXAMPLES\n"
        << "A capture file to aligned text on standard output:\n"
        << ".PP\n.nf\n.RS\nrowprobe \\-i 'pcap;file=trace.pcap'\n.RE\n.fi\n"
        << ".PP\n"
        << "A live interface to an IPFIX collector, with Prometheus metrics:\n"
        << ".PP\n.nf\n.RS\nrowprobe \\-i 'raw;ifc=eth0' \\-o 'ipfix;host=192.0.2.1;port=4739' "
           "\\e\n    \\-\\-metrics 127.0.0.1:9464\n.RE\n.fi\n"
        << ".SH SEE ALSO\n"
        << ".BR rowprobe.conf (5),\n.BR pcap\\-filter (7),\n.BR systemctl (1)\n";
}

void page5(std::ostringstream& out) {
    out << ".TH ROWPROBE.CONF 5 " << kManDate << " \""
        << versionText().substr(0, versionText().find(" (")) << "\" \"File Formats Manual\"\n"
        << ".SH NAME\nrowprobe.conf \\- rowprobe configuration file\n"
        << ".SH SYNOPSIS\n.I /etc/rowprobe/NAME.conf\n"
        << ".SH DESCRIPTION\n"
        << "A configuration file holds the options of one\n.BR rowprobe (8)\n"
        << "process, read with \\fBrowprobe \\-\\-config\\fR \\fIFILE\\fR.\n"
        << "The service \\fBrowprobe@NAME.service\\fR runs\n"
        << "\\fBrowprobe \\-\\-config /etc/rowprobe/\\fR\\fINAME\\fR\\fB.conf\\fR,\n"
        << "one instance per link; \\fBrowprobe.target\\fR starts and stops them together.\n"
        << ".PP\n"
        << "Each line is \\fIname\\fR = \\fIvalue\\fR with the long name of a command-line\n"
        << "option, without its dashes; lines starting with # are comments.\n"
        << "An option that may be repeated on the command line (\\fBinput\\fR, \\fBprocess\\fR)\n"
        << "may be repeated here.\n"
        << "An option given both on the command line and in the file takes the command line's\n"
        << "value; a repeatable one adds up.\n"
        << "A flag (an option without a value on the command line) is written\n"
        << "\\fIname\\fR = true.\n"
        << "Plugin strings (\\fIname\\fR;\\fIoption\\fR=\\fIvalue\\fR;\\fIflag\\fR) are written as "
           "on the\n"
        << "command line, without quotes; the plugins and their options are listed in\n"
        << ".BR rowprobe (8).\n"
        << ".SH OPTIONS\n";
    for (const CliOptionDoc& o : commandLineOptions()) {
        if (o.longName == "help" || o.longName == "version" || o.longName == "config" ||
            o.longName == "help-markdown" || o.longName == "man")
            continue;  // actions of the command line, not settings
        out << ".TP\n\\fB" << dashes(o.longName) << "\\fR = ";
        out << (o.takesValue ? "\\fI" + metavar(o.longName) + "\\fR" : std::string("true"));
        out << '\n' << roffEscape(o.help) << ".\n";
    }
    out << ".SH EXAMPLES\n"
        << "/etc/rowprobe/eth0.conf for \\fBsystemctl enable \\-\\-now rowprobe@eth0\\fR:\n"
        << ".PP\n.nf\n.RS\n"
        << "# the link: an AF_PACKET ring (the unit grants CAP_NET_RAW)\n"
        << "input = raw;ifc=eth0\n"
        << "storage = cache;size=20;active=300;inactive=30\n"
        << "output = ipfix;host=192.0.2.1;port=4739\n"
        << "metrics = 127.0.0.1:9464\n"
        << ".RE\n.fi\n"
        << ".PP\n"
        << "JSON lines into a file that logrotate rotates (\\fBsystemctl reload\\fR sends "
           "SIGHUP):\n"
        << ".PP\n.nf\n.RS\n"
        << "input = pcap;ifc=eth1;filter=not port 22\n"
        << "output = json;file=/var/log/rowprobe/eth1.json\n"
        << ".RE\n.fi\n"
        << ".SH FILES\n"
        << ".TP\n.I /etc/rowprobe/example.conf\n"
        << "the example shipped with the package\n"
        << ".SH SEE ALSO\n.BR rowprobe (8),\n.BR systemd.unit (5)\n";
}

}  // namespace

std::string roffEscape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\\')
            out += "\\e";
        else
            out += c;
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
    return out;
}

std::string manPage(int section) {
    std::ostringstream out;
    out << ".\\\" Generated by `rowprobe --man " << section
        << "` from the option tables; do not edit.\n";
    if (section == 5)
        page5(out);
    else
        page8(out);
    return wrapText(out.str());
}

}  // namespace rowprobe::core
