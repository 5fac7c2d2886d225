// Search over `adaptive` configurations (README.md): the genetic algorithm, the
// thesis's (1+λ) evolution strategy, and hill climbing / simulated annealing with a taboo list.
//
//   generation g:  candidates (drawn from the seeded RNG, in order, on one thread)
//                  ──evaluate (parallel, one simulation each)──▶ fitness (lower is better)
//                  ──select (ties: lower index first)──▶ next parents
//
// Reproducibility: every random decision comes from one Rng (xoshiro256**, seeded through
// splitmix64, with its own bounded draws rather than std::uniform_*_distribution, whose results
// differ between standard libraries). Candidates are generated before evaluation and results are
// consumed in candidate order, so the outcome depends on the seed only — not on the thread count
// or on timing.
//
// Operators (thesis gaelabcache / hcelabcache, rowprobe corrections):
//   * random configuration: counts a random composition of L into L/4 positive parts,
//     non-decreasing valid targets, increment with p 0.1, insert uniform, offsets sorted;
//   * mutation, per tuple: random count (p 0.2), count ±1 (p 0.4), flip increment (p 0.3, not the
//     first tuple), random target (p 0.2), target ±1 (p 0.4); insert re-drawn (p 0.2) and each
//     offset re-drawn (p 0.2); then repair (Σcount = L by moving the difference onto other
//     tuples, targets clamped into [previous minimum, covered − 1], offsets sorted); repeated
//     until the child differs from its parent;
//   * crossover (GA): one cut on a tuple boundary (tuples before it from A, after it from B),
//     insert position and offsets per class from either parent, then repair;
//   * distance: Σ|Δtarget| + Σ|Δcount| + #Δincrement + Σ|Δoffset| + Σ|Δinsert| over the classes
//     the classifier uses;
//   * with classifier `none` only class SHORT is ever used, so classes MEDIUM, LONG, NEVER mirror
//     it (their values would be dead genes).
//
// Thread ownership: the search runs on the calling thread; `Evaluate` may use threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "adaptive_config.hpp"

namespace rowprobe::tuner {

class Rng {
public:
    explicit Rng(std::uint64_t seed) noexcept;
    std::uint64_t next() noexcept;
    /// Uniform in [0, n) (n > 0), unbiased (rejection).
    std::uint64_t below(std::uint64_t n) noexcept;
    /// Uniform integer in [lo, hi].
    int range(int lo, int hi) noexcept;
    /// True with probability p.
    bool chance(double p) noexcept;

private:
    std::uint64_t m_s[4];
};

using storage::AdaptiveConfig;

AdaptiveConfig randomConfig(unsigned line, storage::AdaptiveClassifier classifier, Rng& rng);
/// Makes `c` valid (see the essay); uses rng only to place a Σcount difference.
void repair(AdaptiveConfig& c, Rng& rng);
AdaptiveConfig mutate(const AdaptiveConfig& parent, Rng& rng);
AdaptiveConfig crossover(const AdaptiveConfig& a, const AdaptiveConfig& b, Rng& rng);
unsigned distance(const AdaptiveConfig& a, const AdaptiveConfig& b);
/// The same configuration with the fitness metadata cleared (for comparisons).
AdaptiveConfig stripped(AdaptiveConfig c);

enum class Algorithm { Ga, Es, Sa };

struct SearchOptions {
    Algorithm algorithm = Algorithm::Ga;
    unsigned generations = 30;
    unsigned lambda = 16;        ///< candidates per generation (GA: population size)
    unsigned tournament = 3;     ///< GA tournament size
    double crossoverRate = 0.8;  ///< GA
    double mutationRate = 0.6;   ///< GA: probability a crossover child is also mutated
    std::uint64_t seed = 1;
    std::optional<AdaptiveConfig> start;  ///< initial parent / population member
    std::ostream* log = nullptr;          ///< one line per generation
};

struct SearchResult {
    AdaptiveConfig best;
    std::uint64_t fitness = 0;
    std::vector<std::uint64_t> bestPerGeneration;
    std::uint64_t evaluations = 0;  ///< distinct configurations simulated
};

/// Fitness of each configuration (same order). Called once per generation.
using Evaluate = std::function<std::vector<std::uint64_t>(const std::vector<AdaptiveConfig>&)>;

SearchResult search(const SearchOptions& options, unsigned line,
                    storage::AdaptiveClassifier classifier, const Evaluate& evaluate);

}  // namespace rowprobe::tuner
