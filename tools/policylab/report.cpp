#include "report.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

namespace rowprobe::lab {

std::string ReportRow::combo() const {
    return hash + " size=" + std::to_string(sizeLog2) + " L=" + std::to_string(line);
}

ReportRow rowOf(const RunResult& r) {
    ReportRow row;
    row.label = r.spec.label;
    row.hash = r.spec.hash;
    row.sizeLog2 = r.spec.sizeLog2;
    row.line = r.spec.line;
    row.packets = r.packets;
    row.hits = r.stats.hits;
    row.missFree = r.stats.missFree;
    row.missEvict = r.stats.missEvict;
    row.missReclaim = r.stats.missReclaim;
    row.exported = r.stats.exportedTotal();
    row.evicted = r.stats.exported[static_cast<std::size_t>(EndReason::LackOfResources)];
    row.posMean = r.stats.hitPositionMean();
    row.posVariance = r.stats.hitPositionVariance();
    row.sweep = r.stats.exportedBySweep;
    row.atEnd = r.stats.exportedAtEnd;
    row.recreated = r.recreated;
    row.cutEvict = r.cutEvict;
    row.hhEvict = r.hhEvict;
    row.bigEvict = r.bigEvict;
    row.nsPerPacket = r.nsPerPacket;
    return row;
}

ReportRow rowOf(const BeladyResult& b, const std::string& hash, unsigned sizeLog2, unsigned line,
                std::uint64_t packets) {
    ReportRow row;
    row.label = "belady (OPT)";
    row.hash = hash;
    row.sizeLog2 = sizeLog2;
    row.line = line;
    row.bound = true;
    row.packets = packets;
    row.hits = b.hits;
    row.missFree = b.missFree;
    row.missEvict = b.missEvict;
    row.exported = b.missFree + b.missEvict;
    row.evicted = b.missEvict;
    row.recreated = b.recreated;
    row.cutEvict = b.cutEvict;
    row.hhEvict = b.hhEvict;
    row.bigEvict = b.bigEvict;
    return row;
}

namespace {

std::string fixed(double v, int digits) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v;
    return s.str();
}

struct Column {
    const char* name;
    bool left;
};

constexpr Column kColumns[] = {
    {"policy", true},     {"hash", true},      {"size", false},      {"L", false},
    {"packets", false},   {"hits", false},     {"hit%", false},      {"empty", false},
    {"not_empty", false}, {"reclaim", false},  {"exported", false},  {"evicted", false},
    {"pos_avg", false},   {"pos_var", false},  {"sweep", false},     {"end", false},
    {"recreated", false}, {"hh_evict", false}, {"big_evict", false}, {"ns/pkt", false},
};

std::vector<std::string> cells(const ReportRow& r) {
    const std::string dash = "-";
    return {r.label,
            r.hash,
            std::to_string(r.sizeLog2),
            std::to_string(r.line),
            std::to_string(r.packets),
            std::to_string(r.hits),
            fixed(r.hitRate(), 2),
            std::to_string(r.missFree),
            std::to_string(r.missEvict),
            r.bound ? dash : std::to_string(r.missReclaim),
            std::to_string(r.exported),
            std::to_string(r.evicted),
            r.bound ? dash : fixed(r.posMean, 3),
            r.bound ? dash : fixed(r.posVariance, 3),
            r.bound ? dash : std::to_string(r.sweep),
            r.bound ? dash : std::to_string(r.atEnd),
            std::to_string(r.recreated),
            std::to_string(r.hhEvict),
            std::to_string(r.bigEvict),
            r.bound ? dash : fixed(r.nsPerPacket, 1)};
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string gnuplotString(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

}  // namespace

void printTable(std::ostream& out, const std::vector<ReportRow>& rows) {
    constexpr std::size_t kColumnCount = std::size(kColumns);
    std::vector<std::vector<std::string>> all;
    all.reserve(rows.size());
    std::vector<std::size_t> width(kColumnCount);
    for (std::size_t c = 0; c < kColumnCount; ++c)
        width[c] = std::string_view(kColumns[c].name).size();
    for (const auto& r : rows) {
        all.push_back(cells(r));
        for (std::size_t c = 0; c < kColumnCount; ++c)
            width[c] = std::max(width[c], all.back()[c].size());
    }
    auto line = [&](auto get) {
        for (std::size_t c = 0; c < kColumnCount; ++c) {
            const std::string v = get(c);
            if (c != 0) out << "  ";
            if (kColumns[c].left) {
                out << v << std::string(width[c] - v.size(), ' ');
            } else {
                out << std::string(width[c] - v.size(), ' ') << v;
            }
        }
        out << '\n';
    };
    line([&](std::size_t c) { return std::string(kColumns[c].name); });
    std::string previous;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i != 0 && rows[i].combo() != previous) out << '\n';
        previous = rows[i].combo();
        line([&](std::size_t c) { return all[i][c]; });
    }
}

void writeCsv(const std::string& path, const std::vector<ReportRow>& rows) {
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
    f << "policy,hash,size,line,packets,hits,hit_rate,empty,not_empty,reclaim,exported,evicted,pos_"
         "avg,pos_var,"
         "sweep,end,recreated,hh_evict,big_evict,ns_per_packet,bound\n";
    for (const auto& r : rows) {
        f << csvField(r.label) << ',' << r.hash << ',' << r.sizeLog2 << ',' << r.line << ','
          << r.packets << ',' << r.hits << ',' << fixed(r.hitRate(), 4) << ',' << r.missFree << ','
          << r.missEvict << ',' << r.missReclaim << ',' << r.exported << ',' << r.evicted << ','
          << fixed(r.posMean, 4) << ',' << fixed(r.posVariance, 4) << ',' << r.sweep << ','
          << r.atEnd << ',' << r.recreated << ',' << r.hhEvict << ',' << r.bigEvict << ','
          << fixed(r.nsPerPacket, 2) << ',' << (r.bound ? 1 : 0) << '\n';
    }
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
}

void writePlot(const std::string& pngPath, const std::string& title,
               const std::vector<ReportRow>& rows) {
    // Rows = labels in first-seen order; columns = configurations.
    std::vector<std::string> labels, combos;
    std::map<std::pair<std::string, std::string>, const ReportRow*> at;
    for (const auto& r : rows) {
        if (std::find(labels.begin(), labels.end(), r.label) == labels.end())
            labels.push_back(r.label);
        if (std::find(combos.begin(), combos.end(), r.combo()) == combos.end())
            combos.push_back(r.combo());
        at[{r.label, r.combo()}] = &r;
    }
    if (labels.empty()) throw std::runtime_error("nothing to plot");
    const std::filesystem::path data =
        std::filesystem::temp_directory_path() /
        ("rowprobe-policylab-" + std::to_string(::getpid()) + ".dat");
    struct Metric {
        const char* axis;
        double (*value)(const ReportRow&);
    };
    const Metric metrics[] = {
        {"hit rate (%)", [](const ReportRow& r) { return r.hitRate(); }},
        {"forced evictions (lack of resources)",
         [](const ReportRow& r) { return static_cast<double>(r.evicted); }},
        {"re-created flows", [](const ReportRow& r) { return static_cast<double>(r.recreated); }},
    };
    double lowest = 100, highest = 0;
    {
        std::ofstream f(data);
        if (!f) throw std::runtime_error("cannot write '" + data.string() + "'");
        f << "policy";
        for (std::size_t m = 0; m < std::size(metrics); ++m) {
            for (const auto& c : combos) f << '\t' << c;
        }
        f << '\n';
        for (const auto& l : labels) {
            f << l;
            for (const auto& metric : metrics) {
                for (const auto& c : combos) {
                    const auto it = at.find({l, c});
                    f << '\t'
                      << (it == at.end() ? std::string("?") : fixed(metric.value(*it->second), 4));
                    if (it != at.end()) {
                        lowest = std::min(lowest, it->second->hitRate());
                        highest = std::max(highest, it->second->hitRate());
                    }
                }
            }
            f << '\n';
        }
    }
    std::ostringstream gp;
    const std::size_t n = combos.size();
    gp << "set terminal pngcairo size "
       << std::max<std::size_t>(900, 160 + labels.size() * (50 + 22 * n))
       << ",1200 noenhanced font ',10'\n"
       << "set output " << gnuplotString(pngPath) << "\n"
       << "set datafile separator '\\t'\n"
       << "set datafile missing '?'\n"
       << "set multiplot layout " << std::size(metrics) << ",1 title " << gnuplotString(title)
       << "\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset grid ytics\n"
       << "set xtics rotate by -25 nomirror\nset key outside right top\n";
    for (std::size_t m = 0; m < std::size(metrics); ++m) {
        gp << "set ylabel " << gnuplotString(metrics[m].axis) << "\n";
        if (m == 0) {
            const double span = std::max(0.5, highest - lowest);
            gp << "set yrange [" << std::max(0.0, lowest - span) << ":"
               << std::min(100.0, highest + span / 2) << "]\n";
        } else {
            gp << "set yrange [0:*]\n";
        }
        gp << "plot ";
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t col = 2 + m * n + i;
            gp << (i == 0 ? gnuplotString(data.string()) : "''") << " using " << col
               << (i == 0 ? ":xtic(1)" : "") << " title columnheader(" << col << ")"
               << (i + 1 < n ? ", " : "\n");
        }
    }
    gp << "unset multiplot\n";

    FILE* pipe = ::popen("gnuplot", "w");
    if (pipe == nullptr) {
        std::filesystem::remove(data);
        throw std::runtime_error("cannot run gnuplot (install gnuplot-nox)");
    }
    const std::string script = gp.str();
    std::fwrite(script.data(), 1, script.size(), pipe);
    const int status = ::pclose(pipe);
    std::filesystem::remove(data);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw std::runtime_error(WIFEXITED(status) && WEXITSTATUS(status) == 127
                                     ? "gnuplot not found (install gnuplot-nox)"
                                     : "gnuplot failed to write '" + pngPath + "'");
    }
    if (!std::filesystem::exists(pngPath))
        throw std::runtime_error("gnuplot did not write '" + pngPath + "'");
}

}  // namespace rowprobe::lab
