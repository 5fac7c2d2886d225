// rowprobe-tuner: offline tuning of the `adaptive` row policy's configuration on a capture or a
// compact trace; writes the versioned text file `-s 'cache;policy=adaptive;adaptive-config=F'`
// loads. See README.md.
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "adaptive_config.hpp"
#include "adaptive_sim.hpp"
#include "cache/hash.hpp"
#include "parallel.hpp"
#include "replay.hpp"
#include "rowprobe/errors.hpp"
#include "search.hpp"
#include "sim_trace.hpp"
#include "trace.hpp"

namespace po = boost::program_options;

namespace rowprobe::tuner {
namespace {

ConfigError usage(const std::string& option, const std::string& value, const std::string& problem,
                  std::vector<std::string> choices = {}) {
    return ConfigError({.component = "tuner",
                        .option = option,
                        .value = value,
                        .problem = problem,
                        .choices = std::move(choices)});
}

/// "30" or "1.5": a duration the cache's option parser reads back as seconds.
std::string durationText(double s) {
    std::ostringstream out;
    out.precision(12);
    out << s;
    return out.str();
}

TimeNs seconds(double s, const char* option) {
    if (!(s >= 0) || s > 31536000)
        throw usage(option, std::to_string(s), "must be in [0, 31536000] seconds");
    return static_cast<TimeNs>(std::llround(s * 1e9));
}

enum class Fitness { Evictions, Recreated, HeavyHitters };

int run(int argc, char** argv) {
    std::string input, output = "adaptive.cfg", extract, algorithmText = "ga",
                       fitnessText = "evictions";
    std::string hash = "xxh3", classifierText = "none", startFile;
    unsigned sizeLog2 = 17, line = 16, generations = 30, lambda = 16, threads = 0;
    std::uint64_t seed = 1, hashSeed = 1;
    double inactiveSec = 30, activeSec = 300;
    std::size_t hhTop = 100;

    po::options_description visible(
        "rowprobe-tuner [options] INPUT\n"
        "Tunes the `adaptive` row policy (position table, insert position, class offsets) on "
        "INPUT, a capture\n"
        "(pcap/pcapng/.gz) or a compact trace written by --extract, and writes its configuration "
        "file.\nOptions");
    visible.add_options()("help,h", "this help")(
        "output,o", po::value(&output), "configuration file to write (default adaptive.cfg)")(
        "extract", po::value(&extract),
        "write INPUT (a capture) as a compact trace (16 B/packet) to FILE and exit")(
        "algorithm,a", po::value(&algorithmText),
        "ga (tournament, crossover, mutation), es ((1+lambda) evolution "
        "strategy) or sa (hill climbing / annealing with a taboo list); default ga")(
        "generations,g", po::value(&generations), "generations (default 30)")(
        "lambda,n", po::value(&lambda), "candidates per generation (default 16)")(
        "seed", po::value(&seed), "search seed (default 1): same seed, same output")(
        "fitness,f", po::value(&fitnessText),
        "evictions (forced evictions, default), recreated (re-created flows) "
        "or heavy-hitters (evictions cutting a top-N flow)")(
        "size,s", po::value(&sizeLog2), "table size exponent to tune for (default 17)")(
        "line,l", po::value(&line), "slots per row (default 16)")(
        "hash,H", po::value(&hash), "hash function (capture input; default xxh3)")(
        "hash-seed", po::value(&hashSeed), "hash seed (capture input; default 1)")(
        "inactive", po::value(&inactiveSec), "inactive timeout, seconds (default 30)")(
        "active", po::value(&activeSec), "active timeout, seconds (default 300)")(
        "classifier", po::value(&classifierText),
        "none or j48-v1 (capture input; a compact trace has its own)")(
        "start", po::value(&startFile), "start from this configuration file")(
        "hh-top", po::value(&hhTop),
        "heavy hitters = the N keys with the most packets (default 100)")(
        "threads,j", po::value(&threads), "parallel evaluations (0 = one per core; default 0)")(
        "verify", "capture input: replay the result through the real `adaptive` table and compare")(
        "quiet,q", "no per-generation lines");
    po::options_description all;
    all.add(visible).add_options()("input", po::value(&input));
    po::positional_options_description pos;
    pos.add("input", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help") != 0) {
        std::cout << visible;
        return 0;
    }
    if (input.empty())
        throw usage("input", "", "no capture or compact trace given (rowprobe-tuner --help)");

    Algorithm algorithm = Algorithm::Ga;
    if (algorithmText == "es") {
        algorithm = Algorithm::Es;
    } else if (algorithmText == "sa") {
        algorithm = Algorithm::Sa;
    } else if (algorithmText != "ga") {
        throw usage("algorithm", algorithmText, "unknown algorithm", {"ga", "es", "sa"});
    }
    Fitness fitness = Fitness::Evictions;
    if (fitnessText == "recreated") {
        fitness = Fitness::Recreated;
    } else if (fitnessText == "heavy-hitters") {
        fitness = Fitness::HeavyHitters;
    } else if (fitnessText != "evictions") {
        throw usage("fitness", fitnessText, "unknown fitness",
                    {"evictions", "recreated", "heavy-hitters"});
    }
    if (line != 4 && line != 8 && line != 16 && line != 32)
        throw usage("line", std::to_string(line), "must be 4, 8, 16 or 32");
    if (sizeLog2 > 30 || (std::size_t{1} << sizeLog2) < line) {
        throw usage("size", std::to_string(sizeLog2), "must be in [log2(line), 30]");
    }
    if (generations == 0 || lambda == 0)
        throw usage("generations", "0", "generations and lambda must be positive");
    storage::AdaptiveClassifier classifier = storage::AdaptiveClassifier::None;
    if (classifierText == "j48-v1") {
        classifier = storage::AdaptiveClassifier::J48v1;
    } else if (classifierText != "none") {
        throw usage("classifier", classifierText, "unknown classifier", {"none", "j48-v1"});
    }
    if (storage::findHashFunction(hash) == nullptr) {
        throw usage(
            "hash", hash, "unknown hash function",
            std::vector<std::string>(storage::kHashNames.begin(), storage::kHashNames.end()));
    }
    const TimeNs inactive = seconds(inactiveSec, "inactive");
    const TimeNs active = seconds(activeSec, "active");
    std::optional<storage::AdaptiveConfig> start;
    if (!startFile.empty()) start = storage::loadAdaptiveConfig(startFile, line);

    // --- the trace ---
    const bool compact = isCompact(input);
    if (compact && !extract.empty())
        throw usage("extract", extract, "INPUT is already a compact trace");
    if (compact && vm.count("verify") != 0)
        throw usage("verify", "", "needs a capture (the table needs the keys)");
    std::optional<lab::Trace> capture;
    SimTrace trace;
    if (compact) {
        trace = readCompact(input);
        if ((vm.count("hash") != 0 && hash != trace.hash) ||
            (vm.count("hash-seed") != 0 && hashSeed != trace.seed)) {
            throw usage("hash", hash + " seed " + std::to_string(hashSeed),
                        "the compact trace was extracted with hash '" + trace.hash + "' seed " +
                            std::to_string(trace.seed) + " (re-extract it from the capture)");
        }
        if (vm.count("classifier") != 0 && trace.classifier != classifier) {
            throw usage("classifier", classifierText,
                        "the compact trace was extracted with classifier '" +
                            std::string(storage::classifierName(trace.classifier)) + "'");
        }
    } else {
        capture = lab::loadCapture(input);
        trace = fromCapture(*capture, hash, hashSeed, classifier);
    }
    if (!extract.empty()) {
        writeCompact(trace, extract);
        std::cout << "wrote " << extract << ": " << trace.packets.size() << " packets, "
                  << std::filesystem::file_size(extract) << " bytes (hash " << trace.hash
                  << ", seed " << trace.seed << ", classifier "
                  << storage::classifierName(trace.classifier) << ")\n";
        return 0;
    }

    const lab::Sessions sessions = sessionsOf(trace, inactive, active);
    std::vector<std::uint32_t> perKey(trace.keys, 0);
    for (const auto& p : trace.packets) ++perKey[p.key];
    const std::vector<std::uint8_t> top = lab::topKeysOf(perKey, hhTop);
    SimParams params;
    params.sizeLog2 = sizeLog2;
    params.line = line;
    params.inactive = inactive;
    params.active = active;
    params.sessions = &sessions;
    params.topKey = &top;
    auto fitnessOf = [&](const SimResult& r) {
        switch (fitness) {
            case Fitness::Recreated:
                return r.recreated;
            case Fitness::HeavyHitters:
                return r.hhEvict;
            case Fitness::Evictions:
                break;
        }
        return r.missEvict;
    };
    const Evaluate evaluate = [&](const std::vector<storage::AdaptiveConfig>& configs) {
        std::vector<std::uint64_t> f(configs.size());
        lab::runParallel(configs.size(), threads, [&](std::size_t i) {
            f[i] = fitnessOf(simulate(trace, configs[i], params));
        });
        return f;
    };

    storage::AdaptiveConfig lru = storage::AdaptiveConfig::lruEquivalent(line);
    lru.classifier = trace.classifier;
    const SimResult lruResult = simulate(trace, lru, params);
    std::cout << "trace " << trace.source << ": " << trace.packets.size() << " packets, "
              << trace.keys << " keys, " << sessions.flows << " flows; table 2^" << sizeLog2
              << " records, line " << line << ", hash " << trace.hash << " seed " << trace.seed
              << ", classifier " << storage::classifierName(trace.classifier) << "\nfitness "
              << fitnessText << " (lower is better); lru-equivalent table: " << fitnessOf(lruResult)
              << " (forced evictions " << lruResult.missEvict << ", re-created "
              << lruResult.recreated << ")\n";

    SearchOptions so;
    so.algorithm = algorithm;
    so.generations = generations;
    so.lambda = lambda;
    so.seed = seed;
    so.start = start;
    if (vm.count("quiet") == 0) so.log = &std::cout;
    const SearchResult res = search(so, line, trace.classifier, evaluate);
    const SimResult best = simulate(trace, res.best, params);

    std::ofstream out(output);
    out << "# rowprobe adaptive row policy, written by rowprobe-tuner\n"
        << "# trace " << std::filesystem::path(trace.source).filename().string() << ", "
        << algorithmText << ", seed " << seed << ", " << generations << " generations x " << lambda
        << ", fitness " << fitnessText << " (lru-equivalent " << fitnessOf(lruResult) << ")\n"
        << "# table: size=" << sizeLog2 << " line=" << line << " hash=" << trace.hash
        << " seed=" << trace.seed << "\n"
        << storage::formatAdaptiveConfig(res.best);
    out.close();
    if (!out) throw std::runtime_error("cannot write '" + output + "'");
    // The file must load exactly as the policy loads it.
    const storage::AdaptiveConfig reread = storage::loadAdaptiveConfig(output, line);
    if (!(stripped(reread) == stripped(res.best)))
        throw std::runtime_error("'" + output + "' does not read back equal");

    const auto pct = [](std::uint64_t a, std::uint64_t b) {
        return b == 0 ? 0.0
                      : 100.0 * (static_cast<double>(a) - static_cast<double>(b)) /
                            static_cast<double>(b);
    };
    std::cout << "best: " << res.fitness << " (" << std::showpos
              << pct(res.fitness, fitnessOf(lruResult)) << std::noshowpos
              << " % vs lru-equivalent), forced evictions " << best.missEvict << ", re-created "
              << best.recreated << ", hits " << best.hits << "; " << res.evaluations
              << " configurations evaluated\n"
              << "wrote " << output << "\n";

    if (vm.count("verify") != 0) {
        int status = 0;
        const lab::LabInputs in = lab::makeLabInputs(*capture, sessions, hhTop, 20);
        std::vector<std::tuple<std::string, std::string, SimResult>> checks = {
            {"lru-equivalent", "", lruResult}, {"tuned", output, best}};
        // Four random configurations too (seeded: reproducible), written next to the output.
        Rng rng(seed ^ 0x5eedULL);
        for (int k = 0; k < 4; ++k) {
            const storage::AdaptiveConfig c = randomConfig(line, trace.classifier, rng);
            const std::string file = output + ".verify" + std::to_string(k);
            std::ofstream(file) << storage::formatAdaptiveConfig(c);
            checks.emplace_back("random " + std::to_string(k + 1), file,
                                simulate(trace, c, params));
        }
        for (const auto& [label, cfg, sim] : checks) {
            lab::RunSpec spec{label,
                              "adaptive",
                              trace.hash,
                              sizeLog2,
                              line,
                              trace.seed,
                              "inactive=" + durationText(inactiveSec) +
                                  ";active=" + durationText(activeSec) +
                                  (cfg.empty() ? "" : ";adaptive-config=" + cfg)};
            const lab::RunResult r = lab::replay(in, spec);
            if (!r.error.empty()) throw std::runtime_error("verify: " + r.error);
            const bool same = r.stats.hits == sim.hits && r.stats.missEvict == sim.missEvict &&
                              r.stats.missFree == sim.missFree &&
                              r.stats.missReclaim == sim.missReclaim &&
                              r.stats.exportedBySweep == sim.exportedBySweep;
            std::cout << "verify " << label << ": table hits " << r.stats.hits << " forced "
                      << r.stats.missEvict << " free " << r.stats.missFree << " reclaim "
                      << r.stats.missReclaim << " sweep " << r.stats.exportedBySweep
                      << (same ? " = model\n" : " != model (hits ");
            if (!same) {
                std::cout << sim.hits << " forced " << sim.missEvict << " free " << sim.missFree
                          << " reclaim " << sim.missReclaim << " sweep " << sim.exportedBySweep
                          << ")\n";
                status = 1;
            }
            if (cfg != output && !cfg.empty()) std::filesystem::remove(cfg);
        }
        return status;
    }
    return 0;
}

}  // namespace
}  // namespace rowprobe::tuner

int main(int argc, char** argv) {
    try {
        return rowprobe::tuner::run(argc, argv);
    } catch (const rowprobe::ConfigError& e) {
        std::cerr << "rowprobe-tuner: error: " << e.render() << '\n';
        return 2;
    } catch (const po::error& e) {
        std::cerr << "rowprobe-tuner: error: " << e.what() << " (see --help)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "rowprobe-tuner: error: " << e.what() << '\n';
        return 1;
    }
}
