// rowprobe-policylab: replays a capture through policies × hash functions × table sizes × row
// lengths and prints the thesis table columns per configuration, plus re-created flows,
// heavy-hitter evictions and Belady's offline bound for the same rows. See README.md.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "belady.hpp"
#include "cache/hash.hpp"
#include "cache/policy_registry.hpp"
#include "parallel.hpp"
#include "replay.hpp"
#include "report.hpp"
#include "rowprobe/errors.hpp"
#include "trace.hpp"

namespace po = boost::program_options;

namespace rowprobe::lab {
namespace {

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, ',')) {
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

std::vector<unsigned> splitNumbers(const std::string& text, const char* what) {
    std::vector<unsigned> out;
    for (const auto& s : splitList(text)) {
        std::size_t used = 0;
        unsigned long v = 0;
        try {
            v = std::stoul(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size())
            throw ConfigError(
                {.component = "policylab", .option = what, .value = s, .problem = "not a number"});
        out.push_back(static_cast<unsigned>(v));
    }
    if (out.empty())
        throw ConfigError({.component = "policylab", .option = what, .problem = "empty list"});
    return out;
}

struct Variant {
    std::string label;
    std::string policy;
    std::string options;
};

/// "LABEL=POLICY;opt=v;..." → variant.
Variant parseVariant(const std::string& text) {
    const auto eq = text.find('=');
    const auto semi = text.find(';');
    if (eq == std::string::npos || eq == 0 || (semi != std::string::npos && semi < eq)) {
        throw ConfigError({.component = "policylab",
                           .option = "variant",
                           .value = text,
                           .problem = "expected LABEL=POLICY[;option=value...], e.g. "
                                      "tuned=adaptive;adaptive-config=t.cfg"});
    }
    Variant v;
    v.label = text.substr(0, eq);
    const std::string rest = text.substr(eq + 1);
    const auto s = rest.find(';');
    v.policy = rest.substr(0, s);
    v.options = s == std::string::npos ? "" : rest.substr(s + 1);
    return v;
}

/// ns per key of every hash function: 512 of the capture's packets (cache-resident, so the
/// number is the hash's cost, not the memory's), hashed in batches of 64, best of 7 rounds.
void hashBench(const Trace& trace) {
    const std::size_t n = std::min<std::size_t>(512, trace.packets.size());
    if (n == 0) return;
    const std::vector<ParsedPacket> sample(trace.packets.begin(),
                                           trace.packets.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<std::uint64_t> out(kMaxBatch);
    constexpr int kPasses = 2000;
    std::cout << "hash            ns/key  (" << n << " keys of the capture x " << kPasses
              << ", batches of 64, best of 7)\n";
    std::uint64_t sink = 0;
    for (const auto& h : storage::kHashFunctions) {
        double best = 1e30;
        for (int rep = 0; rep < 7; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int pass = 0; pass < kPasses; ++pass) {
                for (std::size_t i = 0; i < n; i += kMaxBatch) {
                    const std::size_t m = std::min(kMaxBatch, n - i);
                    h.batch(std::span<const ParsedPacket>(sample.data() + i, m),
                            static_cast<std::uint64_t>(pass), out.data());
                    sink += out[m - 1];
                }
            }
            const double ns =
                std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                    .count();
            best = std::min(best, ns / (static_cast<double>(n) * kPasses));
        }
        std::printf("%-14s %7.2f\n", std::string(h.name).c_str(), best);
    }
    if (sink == 42) std::printf(" \n");  // keeps the loop from being optimised away
}

int run(int argc, char** argv) {
    std::string capture, policiesText, hashesText, sizesText, linesText, cacheOptions, csv, plot;
    std::vector<std::string> variantTexts;
    std::uint64_t seed = 1;
    unsigned threads = 0;
    std::size_t hhTop = 100;
    std::uint32_t bigPackets = 20;

    po::options_description visible(
        "rowprobe-policylab [options] CAPTURE\n"
        "Replays CAPTURE (pcap/pcapng, or .gz) through every combination of policies x hashes x "
        "sizes x "
        "lines and prints hits, empty, not empty (forced evictions), exports, lookup positions, "
        "sweep and "
        "end exports, re-created flows, heavy-hitter evictions, time, and Belady's offline "
        "bound.\nOptions");
    visible.add_options()("help,h", "this help")(
        "policies,p", po::value(&policiesText)->default_value("all"),
        "comma list of row policies, or 'all' (every registered one)")(
        "variant,V", po::value(&variantTexts),
        "extra configuration LABEL=POLICY;opt=v;... (repeatable), e.g. "
        "'tuned=adaptive;adaptive-config=t.cfg'")("hashes,H",
                                                  po::value(&hashesText)->default_value("xxh3"),
                                                  "comma list of hash functions, or 'all'")(
        "sizes,s", po::value(&sizesText)->default_value("17"),
        "comma list of size exponents (2^size records)")(
        "lines,l", po::value(&linesText)->default_value("16"),
        "comma list of row lengths (4, 8, 16, 32)")("seed", po::value(&seed)->default_value(1),
                                                    "hash seed (fixed: runs are reproducible)")(
        "cache,c", po::value(&cacheOptions)->default_value(""),
        "extra cache options for every run, e.g. 'inactive=30;active=300'")(
        "csv", po::value(&csv), "write the table as CSV to FILE")(
        "plot", po::value(&plot),
        "write a PNG plot (hit rate, forced evictions per policy) to FILE (needs gnuplot)")(
        "threads,j", po::value(&threads)->default_value(0),
        "parallel configurations (0 = one per core)")(
        "hh-top", po::value(&hhTop)->default_value(100),
        "heavy hitters = the N keys with the most packets")(
        "hh-packets", po::value(&bigPackets)->default_value(20),
        "big_evict counts evicted records holding >= K packets")("no-belady",
                                                                 "skip the offline bound")(
        "hash-bench", "time every hash function over the capture's keys and exit")(
        "quiet,q", "no table on stdout");
    po::options_description all;
    all.add(visible).add_options()("capture", po::value(&capture));
    po::positional_options_description pos;
    pos.add("capture", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help") != 0) {
        std::cout << visible << "\nregistered policies:";
        for (const auto& n : storage::rowPolicyNames()) std::cout << ' ' << n;
        std::cout << "\nhash functions:";
        for (const auto& h : storage::kHashFunctions) std::cout << ' ' << h.name;
        std::cout << '\n';
        return 0;
    }
    if (capture.empty())
        throw ConfigError(
            {.component = "policylab", .problem = "no capture given (rowprobe-policylab --help)"});

    storage::RowPolicyRegistry::instance().checkConsistent();
    std::vector<std::string> policies =
        policiesText == "all" ? storage::rowPolicyNames() : splitList(policiesText);
    std::vector<std::string> hashes;
    if (hashesText == "all") {
        for (const auto& h : storage::kHashFunctions) hashes.emplace_back(h.name);
    } else {
        hashes = splitList(hashesText);
    }
    for (const auto& h : hashes) {
        if (storage::findHashFunction(h) == nullptr) {
            throw ConfigError({.component = "policylab",
                               .option = "hashes",
                               .value = h,
                               .problem = "unknown hash function",
                               .choices = std::vector<std::string>(storage::kHashNames.begin(),
                                                                   storage::kHashNames.end())});
        }
    }
    const std::vector<unsigned> sizes = splitNumbers(sizesText, "sizes");
    const std::vector<unsigned> lines = splitNumbers(linesText, "lines");
    for (const char* owned : {"policy=", "size=", "line=", "hash=", "seed="}) {
        if ((";" + cacheOptions).find(std::string(";") + owned) != std::string::npos) {
            throw ConfigError({.component = "policylab",
                               .option = "cache",
                               .value = cacheOptions,
                               .problem = std::string("'") + owned +
                                          "' is a lab axis: use the lab's own option"});
        }
    }
    std::vector<Variant> variants;
    variants.reserve(policies.size() + variantTexts.size());
    for (const auto& p : policies) variants.push_back({p, p, ""});
    for (const auto& t : variantTexts) variants.push_back(parseVariant(t));
    for (auto& v : variants) {
        if (!cacheOptions.empty())
            v.options = v.options.empty() ? cacheOptions : cacheOptions + ";" + v.options;
    }

    // Every configuration is validated before the capture is read: errors come first and fast.
    std::vector<RunSpec> specs;
    for (const auto& h : hashes) {
        for (unsigned size : sizes) {
            for (unsigned line : lines) {
                for (const auto& v : variants) {
                    specs.push_back(RunSpec{v.label, v.policy, h, size, line, seed, v.options});
                }
            }
        }
    }
    TimeNs inactive = 0, active = 0;
    for (const auto& s : specs) {
        const auto t = makeTable(s);  // throws ConfigError exactly as rowprobe would
        inactive = t->config().inactive;
        active = t->config().active;
    }

    const auto t0 = std::chrono::steady_clock::now();
    const Trace trace = loadCapture(capture);
    const Sessions sessions = computeSessions(trace, inactive, active);
    if (vm.count("hash-bench") != 0) {
        hashBench(trace);
        return 0;
    }
    const LabInputs inputs = makeLabInputs(trace, sessions, hhTop, bigPackets);
    const double loadSec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    struct Combo {
        std::string hash;
        unsigned size;
        unsigned line;
    };
    std::vector<Combo> combos;
    for (const auto& h : hashes) {
        for (unsigned size : sizes) {
            for (unsigned line : lines) combos.push_back({h, size, line});
        }
    }
    const bool belady = vm.count("no-belady") == 0;
    std::vector<RunResult> results(specs.size());
    std::vector<BeladyResult> bounds(belady ? combos.size() : 0);
    const std::size_t jobs = specs.size() + bounds.size();
    const auto t1 = std::chrono::steady_clock::now();
    runParallel(jobs, threads, [&](std::size_t i) {
        if (i < specs.size()) {
            results[i] = replay(inputs, specs[i]);
            return;
        }
        const Combo& c = combos[i - specs.size()];
        const storage::HashFunction* hf = storage::findHashFunction(c.hash);
        BeladyInput in;
        in.trace = &trace;
        in.sessions = &sessions;
        in.rows = (std::size_t{1} << c.size) / c.line;
        in.line = c.line;
        in.inactive = inactive;
        in.active = active;
        in.topKey = &inputs.topKey;
        in.bigPackets = bigPackets;
        in.rowOfKey.resize(trace.keys.size());
        for (std::size_t k = 0; k < trace.keys.size(); ++k) {
            in.rowOfKey[k] =
                static_cast<std::uint32_t>(hf->key(trace.keys[k], seed) & (in.rows - 1));
        }
        bounds[i - specs.size()] = simulateBelady(in);
    });
    const double runSec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

    int status = 0;
    std::vector<ReportRow> rows;
    for (std::size_t ci = 0; ci < combos.size(); ++ci) {
        const Combo& c = combos[ci];
        for (const auto& r : results) {
            if (r.spec.hash != c.hash || r.spec.sizeLog2 != c.size || r.spec.line != c.line)
                continue;
            if (!r.error.empty()) {
                std::cerr << "policylab: " << r.spec.label << " (" << pluginString(r.spec)
                          << "): " << r.error << '\n';
                status = 1;
                continue;
            }
            rows.push_back(rowOf(r));
        }
        if (!belady) continue;
        rows.push_back(rowOf(bounds[ci], c.hash, c.size, c.line, trace.packets.size()));
        const ReportRow& bound = rows.back();
        for (const auto& r : rows) {
            if (r.bound || r.combo() != bound.combo()) continue;
            if (r.hits > bound.hits || r.evicted < bound.evicted) {
                std::cerr << "policylab: note: " << r.label << " beats the Belady bound on "
                          << r.combo() << " (hits " << r.hits << " vs " << bound.hits
                          << ", evicted " << r.evicted << " vs " << bound.evicted
                          << "): record-level rules, see tools/policylab/README.md\n";
            }
        }
    }

    if (vm.count("quiet") == 0) {
        std::cout << "capture " << trace.source << ": " << trace.frames << " frames, "
                  << trace.packets.size() << " packets, " << trace.keys.size() << " keys, "
                  << sessions.flows << " flows (inactive " << static_cast<double>(inactive) / 1e9
                  << " s, active " << static_cast<double>(active) / 1e9 << " s); seed " << seed
                  << "; heavy hitters = top " << hhTop << " keys\n";
        std::cout << "decoded in " << loadSec << " s; " << jobs << " runs in " << runSec
                  << " s\n\n";
        printTable(std::cout, rows);
    }
    if (!csv.empty()) writeCsv(csv, rows);
    if (!plot.empty()) {
        writePlot(plot,
                  "rowprobe policy lab: " + std::filesystem::path(capture).filename().string(),
                  rows);
    }
    return status;
}

}  // namespace
}  // namespace rowprobe::lab

int main(int argc, char** argv) {
    try {
        return rowprobe::lab::run(argc, argv);
    } catch (const rowprobe::ConfigError& e) {
        std::cerr << "rowprobe-policylab: error: " << e.render() << '\n';
        return 2;
    } catch (const po::error& e) {
        std::cerr << "rowprobe-policylab: error: " << e.what() << " (see --help)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "rowprobe-policylab: error: " << e.what() << '\n';
        return 1;
    }
}
