// rowprobe-train: learns a classify model (naive Bayes tables or a decision tree) from flows
// that rowprobe exported with pstats, labelled by nDPI or a CSV; prints per-class precision,
// recall and F1 on held-out flows and writes the model file. Usage: README.md.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tools/train/train.hpp"

namespace {

using namespace rowprobe::classify;
using namespace rowprobe::classify::train;

constexpr const char* kUsage =
    R"(usage: rowprobe-train [options] --flows FILE [LABELS] [--flows FILE [LABELS]]...

Inputs (each --flows starts a capture; the label options after it apply to it):
  --flows FILE          rowprobe JSON lines with pstats (-p pstats -o json); its ndpi_app keys
                        label it when no label file follows
  --ndpi-out FILE       labels from an nDPI .out file (ndpiReader -v 2 flow lines)
  --ndpi-json FILE      labels from the ndpi plugin's JSON (ndpi_app, ndpi_category)
  --labels-csv FILE     labels from proto,src_ip,src_port,dst_ip,dst_port,label lines
  --label PART          full (TLS.Google), master (TLS), app (Google), category [full]
  --ndpi-guesses        also take nDPI's labels by port or IP (default: DPI matches only, by
                        the .out file's Confidence or the JSON's ndpi_confidence)
Model:
  --model KIND          nb (Gaussian naive Bayes tables) or tree (C4.5-style) [nb]
  --packets N           packets with payload per flow, 1..8 [4]
  --min-packets M       flows with fewer are 'unknown' (0..N) [1]
  --bin-width W         nb: bytes per size bin [4]
  --bins B              nb: bins per direction, 1..4096 [384]
  --max-depth D         tree: 1..16 [10]
  --min-leaf L          tree: fewest flows in a leaf [2]
  --confidence CF       tree: pruning confidence, 0 = no pruning [0.25]
Classes and evaluation:
  --min-samples S       classes with fewer flows are merged into 'other' (or dropped) [10]
  --small merge|drop    what happens to them [merge]
  --test-fraction F     hold back this share of the flows for the report [0.3]
  --folds K             k-fold cross-validation instead (the model is then trained on all)
  --seed S              shuffle seed [1]
Output:
  --out FILE            the model file
  --report FILE         also write the report there
)";

[[noreturn]] void usageError(const std::string& msg) {
    std::cerr << "rowprobe-train: error: " << msg << "\n(rowprobe-train --help for the options)\n";
    std::exit(2);
}

long long intArg(const std::string& opt, const std::string& v, long long lo, long long hi) {
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || x < lo || x > hi)
        usageError(opt + " '" + v + "': must be an integer in [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
    return x;
}

double doubleArg(const std::string& opt, const std::string& v, double lo, double hi) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x >= lo && x <= hi))
        usageError(opt + " '" + v + "': must be a number in [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
    return x;
}

struct Capture {
    std::string flows;
    std::vector<std::pair<std::string, std::string>> labels;  ///< kind, file
};

}  // namespace

int main(int argc, char** argv) {
    std::vector<Capture> captures;
    LabelPart part = LabelPart::Full;
    bool guesses = false;
    std::string kind = "nb";
    std::size_t packets = 4;
    std::size_t minPackets = 1;
    NbOptions nb;
    TreeOptions tree;
    DatasetOptions ds;
    double testFraction = 0.3;
    std::size_t folds = 0;
    std::uint64_t seed = 1;
    std::string out;
    std::string reportPath;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        }
        if (a == "--ndpi-guesses") {
            guesses = true;
            continue;
        }
        if (i + 1 >= argc) usageError(a + " needs a value");
        const std::string v = argv[++i];
        if (a == "--flows") {
            captures.push_back({v, {}});
        } else if (a == "--ndpi-out" || a == "--ndpi-json" || a == "--labels-csv") {
            if (captures.empty()) usageError(a + " must follow the --flows it labels");
            captures.back().labels.emplace_back(a, v);
        } else if (a == "--label") {
            if (v == "full")
                part = LabelPart::Full;
            else if (v == "master")
                part = LabelPart::Master;
            else if (v == "app")
                part = LabelPart::App;
            else if (v == "category")
                part = LabelPart::Category;
            else
                usageError("--label '" + v + "': must be full, master, app or category");
        } else if (a == "--model") {
            if (v != "nb" && v != "tree") usageError("--model '" + v + "': must be nb or tree");
            kind = v;
        } else if (a == "--packets") {
            packets = static_cast<std::size_t>(intArg(a, v, 1, kMaxPackets));
        } else if (a == "--min-packets") {
            minPackets = static_cast<std::size_t>(intArg(a, v, 0, kMaxPackets));
        } else if (a == "--bin-width") {
            nb.binWidth = static_cast<std::uint16_t>(intArg(a, v, 1, 65535));
        } else if (a == "--bins") {
            nb.binsPerDir = static_cast<std::uint16_t>(intArg(a, v, 1, 4096));
        } else if (a == "--max-depth") {
            tree.maxDepth = static_cast<std::size_t>(intArg(a, v, 1, kMaxTreeDepth));
        } else if (a == "--min-leaf") {
            tree.minLeaf = static_cast<std::size_t>(intArg(a, v, 1, 1000000));
        } else if (a == "--confidence") {
            tree.confidence = doubleArg(a, v, 0, 0.5);
        } else if (a == "--min-samples") {
            ds.minSamples = static_cast<std::size_t>(intArg(a, v, 1, 1000000000));
        } else if (a == "--small") {
            if (v != "merge" && v != "drop")
                usageError("--small '" + v + "': must be merge or drop");
            ds.mergeSmall = v == "merge";
        } else if (a == "--test-fraction") {
            testFraction = doubleArg(a, v, 0.01, 0.99);
        } else if (a == "--folds") {
            folds = static_cast<std::size_t>(intArg(a, v, 2, 100));
        } else if (a == "--seed") {
            seed = static_cast<std::uint64_t>(intArg(a, v, 0, 1LL << 62));
        } else if (a == "--out") {
            out = v;
        } else if (a == "--report") {
            reportPath = v;
        } else {
            usageError("unknown option '" + a + "'");
        }
    }
    if (captures.empty()) usageError("no --flows input");
    if (minPackets > packets)
        usageError("--min-packets " + std::to_string(minPackets) + " is above --packets " +
                   std::to_string(packets));
    ds.minPackets = minPackets;

    std::vector<Flow> all;
    try {
        for (const Capture& c : captures) {
            std::vector<Flow> flows = readRowprobeJson(c.flows, packets);
            if (!c.labels.empty()) {
                LabelMap labels;
                for (const auto& [what, file] : c.labels) {
                    const LabelMap m = what == "--ndpi-out"    ? readNdpiOut(file, part, guesses)
                                       : what == "--ndpi-json" ? readNdpiJson(file, part, guesses)
                                                               : readLabelCsv(file);
                    for (const auto& [key, label] : m) {
                        auto [it, inserted] = labels.emplace(key, label);
                        if (!inserted && it->second != label) it->second.clear();
                    }
                }
                for (Flow& f : flows) {
                    const auto it = labels.find(f.key);
                    f.label = it == labels.end() ? std::string() : it->second;
                }
            } else {
                for (Flow& f : flows)
                    f.label = guesses || dpiConfidence(f.confidence)
                                  ? labelOf(f.label, f.category, part)
                                  : std::string();
            }
            all.insert(all.end(), flows.begin(), flows.end());
        }
    } catch (const std::exception& e) {
        std::cerr << "rowprobe-train: error: " << e.what() << "\n";
        return 2;
    }
    const Dataset d = buildDataset(all, ds);
    std::ostringstream report;
    report << "flows read: " << all.size() << "; labelled and used: " << d.samples.size()
           << "; without a label: " << d.unlabelled << "; labelled but under " << minPackets
           << " packets with payload: " << d.tooShort << "\n";
    report << "classes (" << d.classes.size() << "):";
    for (const auto& c : d.classes) report << ' ' << c;
    report << "\nmerged into 'other' (under " << ds.minSamples << " flows):";
    for (const auto& c : d.merged) report << ' ' << c;
    report << "\ndropped:";
    for (const auto& c : d.dropped) report << ' ' << c;
    report << "\n\n";
    if (d.classes.empty() || d.samples.size() < 2) {
        std::cerr << report.str() << "rowprobe-train: error: not enough labelled flows\n";
        return 1;
    }
    const auto trainOn = [&](const std::vector<std::size_t>& rows) {
        return kind == "nb" ? trainNaiveBayes(d, rows, packets, minPackets, nb)
                            : trainTree(d, rows, packets, minPackets, tree);
    };
    const auto build = [&](const ModelSpec& spec) {
        Model m;
        std::string error;
        if (!buildModel(spec, m, error)) {
            std::cerr << "rowprobe-train: internal error: " << error << "\n";
            std::exit(1);
        }
        return m;
    };
    const std::vector<std::size_t> order = shuffledIndices(d.samples.size(), seed);
    Evaluation total;
    ModelSpec final;
    const std::string kindName = kind == "nb" ? "Gaussian naive Bayes" : "C4.5-style tree";
    if (folds == 0) {
        const auto nTest =
            std::max<std::size_t>(1, static_cast<std::size_t>(testFraction * double(order.size())));
        const std::vector<std::size_t> test(order.begin(),
                                            order.begin() + static_cast<std::ptrdiff_t>(nTest));
        const std::vector<std::size_t> trainRows(order.begin() + static_cast<std::ptrdiff_t>(nTest),
                                                 order.end());
        final = trainOn(trainRows);
        total = evaluate(build(final), d, trainRows, test);
        report << formatReport(d, total,
                               kindName + ", N = " + std::to_string(packets) + ", trained on " +
                                   std::to_string(trainRows.size()) + " flows, tested on " +
                                   std::to_string(test.size()) + " held-out flows (seed " +
                                   std::to_string(seed) + ")");
    } else {
        for (std::size_t f = 0; f < folds; ++f) {
            std::vector<std::size_t> test;
            std::vector<std::size_t> trainRows;
            for (std::size_t i = 0; i < order.size(); ++i)
                (i % folds == f ? test : trainRows).push_back(order[i]);
            total.add(evaluate(build(trainOn(trainRows)), d, trainRows, test));
        }
        std::vector<std::size_t> everything(order.begin(), order.end());
        final = trainOn(everything);
        report << formatReport(d, total,
                               kindName + ", N = " + std::to_string(packets) + ", " +
                                   std::to_string(folds) + "-fold cross-validation over " +
                                   std::to_string(order.size()) + " flows (seed " +
                                   std::to_string(seed) + "); the model written is trained on all");
    }
    std::cout << report.str();
    if (!reportPath.empty()) std::ofstream(reportPath) << report.str();
    if (!out.empty()) {
        const std::vector<std::uint8_t> bytes = encodeModel(final);
        std::ofstream o(out, std::ios::binary);
        o.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
        if (!o) {
            std::cerr << "rowprobe-train: error: cannot write " << out << "\n";
            return 1;
        }
        std::cout << "\nmodel written to " << out << " (" << bytes.size() << " bytes)\n";
    }
    return 0;
}
