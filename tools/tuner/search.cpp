#include "search.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <numeric>

namespace rowprobe::tuner {

// --- Rng ----------------------------------------------------------------------------------------

namespace {
std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
}  // namespace

Rng::Rng(std::uint64_t seed) noexcept {
    for (auto& s : m_s) s = splitmix64(seed);
}

std::uint64_t Rng::next() noexcept {  // xoshiro256** (Blackman & Vigna)
    const std::uint64_t result = std::rotl(m_s[1] * 5, 7) * 9;
    const std::uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = std::rotl(m_s[3], 45);
    return result;
}

std::uint64_t Rng::below(std::uint64_t n) noexcept {
    const std::uint64_t limit = (0 - n) % n;  // values below it would bias the modulo
    std::uint64_t x = next();
    while (x < limit) x = next();
    return x % n;
}

int Rng::range(int lo, int hi) noexcept {
    if (hi <= lo) return lo;
    return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo) + 1));
}

bool Rng::chance(double p) noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

// --- operators ----------------------------------------------------------------------------------

namespace {

std::size_t classesUsed(const AdaptiveConfig& c) {
    return c.classifier == storage::AdaptiveClassifier::None ? 1 : storage::kPacketClassCount;
}

unsigned maxCount(const AdaptiveConfig& c) {
    return c.line - static_cast<unsigned>(c.tuples.size() - 1);
}

}  // namespace

AdaptiveConfig stripped(AdaptiveConfig c) {
    c.fitness.reset();
    return c;
}

void repair(AdaptiveConfig& c, Rng& rng) {
    const int half = static_cast<int>(c.line / 2);
    const unsigned hi = maxCount(c);
    unsigned sum = 0;
    for (auto& t : c.tuples) {
        t.count = std::clamp(t.count, 1U, hi);
        sum += t.count;
    }
    while (sum < c.line) {
        auto& t = c.tuples[rng.below(c.tuples.size())];
        if (t.count < hi) {
            ++t.count;
            ++sum;
        }
    }
    while (sum > c.line) {
        auto& t = c.tuples[rng.below(c.tuples.size())];
        if (t.count > 1) {
            --t.count;
            --sum;
        }
    }
    unsigned covered = 0;
    unsigned minTarget = 0;
    for (std::size_t k = 0; k < c.tuples.size(); ++k) {
        auto& t = c.tuples[k];
        t.target = k == 0 ? 0 : std::clamp(t.target, minTarget, covered - 1);
        covered += t.count;
        minTarget = t.target + (t.increment ? t.count - 1 : 0);
    }
    for (std::size_t cl = 0; cl < storage::kPacketClassCount; ++cl) {
        c.insert[cl] = std::min(c.insert[cl], c.line - 1);
        c.offsets[cl] = std::clamp(c.offsets[cl], -half, half);
    }
    if (classesUsed(c) == 1) {
        for (std::size_t cl = 1; cl < storage::kPacketClassCount; ++cl) {
            c.insert[cl] = c.insert[0];
            c.offsets[cl] = c.offsets[0];
        }
    }
    std::sort(c.offsets.begin(), c.offsets.end());
    c.fitness.reset();
}

AdaptiveConfig randomConfig(unsigned line, storage::AdaptiveClassifier classifier, Rng& rng) {
    AdaptiveConfig c;
    c.line = line;
    c.classifier = classifier;
    c.tuples.resize(std::max(1U, line / 4));
    const int half = static_cast<int>(line / 2);
    for (auto& t : c.tuples) {
        t.count = static_cast<unsigned>(rng.range(1, static_cast<int>(std::max(1U, line / 4))));
        t.increment = rng.chance(0.1);
    }
    repair(c, rng);  // counts first: targets depend on them
    unsigned covered = 0;
    unsigned minTarget = 0;
    for (std::size_t k = 0; k < c.tuples.size(); ++k) {
        auto& t = c.tuples[k];
        t.target = k == 0 ? 0
                          : static_cast<unsigned>(rng.range(static_cast<int>(minTarget),
                                                            static_cast<int>(covered - 1)));
        covered += t.count;
        minTarget = t.target + (t.increment ? t.count - 1 : 0);
    }
    for (std::size_t cl = 0; cl < classesUsed(c); ++cl) {
        c.insert[cl] = static_cast<unsigned>(rng.range(0, static_cast<int>(line) - 1));
        c.offsets[cl] = rng.range(-half, half);
    }
    repair(c, rng);
    return c;
}

AdaptiveConfig mutate(const AdaptiveConfig& parent, Rng& rng) {
    const AdaptiveConfig base = stripped(parent);
    const int half = static_cast<int>(parent.line / 2);
    for (int attempt = 0; attempt < 1000; ++attempt) {
        AdaptiveConfig c = base;
        for (std::size_t k = 0; k < c.tuples.size(); ++k) {
            auto& t = c.tuples[k];
            if (rng.chance(0.2))
                t.count = static_cast<unsigned>(rng.range(1, static_cast<int>(maxCount(c))));
            if (rng.chance(0.4))
                t.count = rng.chance(0.5) ? t.count + 1 : (t.count > 1 ? t.count - 1 : t.count);
            if (k > 0 && rng.chance(0.3)) t.increment = !t.increment;
            if (rng.chance(0.2))
                t.target = static_cast<unsigned>(rng.range(0, static_cast<int>(c.line) - 1));
            if (rng.chance(0.4))
                t.target = rng.chance(0.5) ? t.target + 1 : (t.target > 0 ? t.target - 1 : 0);
        }
        for (std::size_t cl = 0; cl < classesUsed(c); ++cl) {
            if (rng.chance(0.2))
                c.insert[cl] = static_cast<unsigned>(rng.range(0, static_cast<int>(c.line) - 1));
            if (rng.chance(0.2)) c.offsets[cl] = rng.range(-half, half);
        }
        repair(c, rng);
        if (!(c == base)) return c;
    }
    AdaptiveConfig c = base;  // nothing else moved: shift the insert position
    c.insert[0] = (c.insert[0] + 1) % c.line;
    repair(c, rng);
    return c;
}

AdaptiveConfig crossover(const AdaptiveConfig& a, const AdaptiveConfig& b, Rng& rng) {
    AdaptiveConfig c = stripped(a);
    const std::size_t n = c.tuples.size();
    if (n >= 2) {
        const std::size_t cut = 1 + rng.below(n - 1);  // tuples [cut, n) from b
        for (std::size_t k = cut; k < n; ++k) c.tuples[k] = b.tuples[k];
    }
    for (std::size_t cl = 0; cl < storage::kPacketClassCount; ++cl) {
        if (rng.chance(0.5)) c.insert[cl] = b.insert[cl];
        if (rng.chance(0.5)) c.offsets[cl] = b.offsets[cl];
    }
    repair(c, rng);
    return c;
}

unsigned distance(const AdaptiveConfig& a, const AdaptiveConfig& b) {
    auto absDiff = [](long x, long y) { return static_cast<unsigned>(std::labs(x - y)); };
    unsigned d = 0;
    for (std::size_t k = 0; k < std::min(a.tuples.size(), b.tuples.size()); ++k) {
        d += absDiff(a.tuples[k].target, b.tuples[k].target) +
             absDiff(a.tuples[k].count, b.tuples[k].count) +
             (a.tuples[k].increment != b.tuples[k].increment ? 1U : 0U);
    }
    for (std::size_t cl = 0; cl < classesUsed(a); ++cl) {
        d += absDiff(a.offsets[cl], b.offsets[cl]) + absDiff(a.insert[cl], b.insert[cl]);
    }
    return d;
}

// --- search -------------------------------------------------------------------------------------

namespace {

struct Scored {
    AdaptiveConfig config;
    std::uint64_t fitness = 0;
};

/// Evaluates through a cache, so a configuration met twice is simulated once.
class Evaluator {
public:
    explicit Evaluator(const Evaluate& evaluate) : m_evaluate(evaluate) {}

    std::vector<std::uint64_t> operator()(const std::vector<AdaptiveConfig>& configs) {
        std::vector<AdaptiveConfig> fresh;
        std::vector<std::string> freshKeys;
        for (const auto& c : configs) {
            const std::string k = storage::formatAdaptiveConfig(stripped(c));
            if (m_cache.count(k) == 0 &&
                std::find(freshKeys.begin(), freshKeys.end(), k) == freshKeys.end()) {
                fresh.push_back(stripped(c));
                freshKeys.push_back(k);
            }
        }
        if (!fresh.empty()) {
            const std::vector<std::uint64_t> f = m_evaluate(fresh);
            for (std::size_t i = 0; i < fresh.size(); ++i) m_cache[freshKeys[i]] = f[i];
            m_evaluations += fresh.size();
        }
        std::vector<std::uint64_t> out;
        out.reserve(configs.size());
        for (const auto& c : configs)
            out.push_back(m_cache.at(storage::formatAdaptiveConfig(stripped(c))));
        return out;
    }
    std::uint64_t evaluations() const { return m_evaluations; }

private:
    const Evaluate& m_evaluate;
    std::map<std::string, std::uint64_t> m_cache;
    std::uint64_t m_evaluations = 0;
};

bool contains(const std::vector<Scored>& pool, const AdaptiveConfig& c) {
    return std::any_of(pool.begin(), pool.end(), [&](const Scored& s) { return s.config == c; });
}
bool contains(const std::vector<AdaptiveConfig>& pool, const AdaptiveConfig& c) {
    return std::find(pool.begin(), pool.end(), c) != pool.end();
}

void logGeneration(const SearchOptions& o, unsigned g, std::uint64_t best, std::uint64_t current,
                   std::uint64_t evaluations) {
    if (o.log == nullptr) return;
    *o.log << "generation " << g << ": best " << best;
    if (current != best) *o.log << " (current " << current << ")";
    *o.log << ", " << evaluations << " configurations evaluated\n";
}

}  // namespace

SearchResult search(const SearchOptions& o, unsigned line, storage::AdaptiveClassifier classifier,
                    const Evaluate& evaluate) {
    Rng rng(o.seed);
    Evaluator eval(evaluate);
    const unsigned lambda = std::max(1U, o.lambda);
    AdaptiveConfig start = o.start ? stripped(*o.start) : AdaptiveConfig::lruEquivalent(line);
    start.classifier = classifier;
    repair(start, rng);
    SearchResult res;
    Scored best{start, eval({start})[0]};

    if (o.algorithm == Algorithm::Ga) {
        std::vector<Scored> pop{best};
        std::vector<AdaptiveConfig> fresh;
        for (unsigned tries = 0; pop.size() + fresh.size() < lambda && tries < 100 * lambda;
             ++tries) {
            AdaptiveConfig c = randomConfig(line, classifier, rng);
            if (!contains(pop, c) && !contains(fresh, c)) fresh.push_back(c);
        }
        const auto f = eval(fresh);
        for (std::size_t i = 0; i < fresh.size(); ++i) pop.push_back({fresh[i], f[i]});
        auto byFitness = [](const Scored& a, const Scored& b) { return a.fitness < b.fitness; };
        std::stable_sort(pop.begin(), pop.end(), byFitness);
        auto tournament = [&]() -> const Scored& {
            std::size_t pick = rng.below(pop.size());
            for (unsigned k = 1; k < o.tournament; ++k)
                pick = std::min<std::size_t>(pick, rng.below(pop.size()));
            return pop[pick];  // pop is sorted: the lowest index is the fittest
        };
        for (unsigned g = 1; g <= o.generations; ++g) {
            std::vector<AdaptiveConfig> children;
            for (unsigned tries = 0; children.size() < lambda && tries < 100 * lambda; ++tries) {
                const Scored& a = tournament();
                const Scored& b = tournament();
                AdaptiveConfig child = rng.chance(o.crossoverRate)
                                           ? crossover(a.config, b.config, rng)
                                           : stripped(a.config);
                if (rng.chance(o.mutationRate) || child == a.config || child == b.config)
                    child = mutate(child, rng);
                if (!contains(pop, child) && !contains(children, child)) children.push_back(child);
            }
            const auto cf = eval(children);
            for (std::size_t i = 0; i < children.size(); ++i) pop.push_back({children[i], cf[i]});
            std::stable_sort(pop.begin(), pop.end(), byFitness);  // (μ + λ): the best λ survive
            pop.resize(std::min<std::size_t>(pop.size(), lambda));
            best = pop.front();
            res.bestPerGeneration.push_back(best.fitness);
            logGeneration(o, g, best.fitness, best.fitness, eval.evaluations());
        }
    } else if (o.algorithm == Algorithm::Es) {
        Scored parent = best;
        for (unsigned g = 1; g <= o.generations; ++g) {
            std::vector<AdaptiveConfig> children;
            for (unsigned tries = 0; children.size() < lambda && tries < 100 * lambda; ++tries) {
                AdaptiveConfig child = mutate(parent.config, rng);
                if (!contains(children, child)) children.push_back(child);
            }
            const auto cf = eval(children);
            std::size_t bi = 0;
            for (std::size_t i = 1; i < children.size(); ++i) {
                if (cf[i] < cf[bi]) bi = i;
            }
            if (!children.empty() && cf[bi] <= parent.fitness)
                parent = {children[bi], cf[bi]};  // elitist
            if (parent.fitness < best.fitness) best = parent;
            res.bestPerGeneration.push_back(best.fitness);
            logGeneration(o, g, best.fitness, parent.fitness, eval.evaluations());
        }
    } else {
        Scored current = best;
        std::deque<AdaptiveConfig> taboo{current.config};
        double heat = 0;
        for (unsigned g = 1; g <= o.generations; ++g) {
            const double radius = std::max(0.0, 20.0 - 0.5 * heat);
            std::vector<AdaptiveConfig> children;
            for (unsigned tries = 0; children.size() < lambda && tries < 20 * lambda; ++tries) {
                AdaptiveConfig child = mutate(current.config, rng);
                // Outside every taboo entry's radius: keep mutating (growing the step) up to 64
                // times.
                auto near = [&](const AdaptiveConfig& c) {
                    return std::any_of(taboo.begin(), taboo.end(), [&](const AdaptiveConfig& t) {
                        return static_cast<double>(distance(c, t)) <= radius;
                    });
                };
                for (int step = 0; step < 64 && near(child); ++step) child = mutate(child, rng);
                if (!contains(children, child)) children.push_back(child);
            }
            const auto cf = eval(children);
            std::vector<std::size_t> order(children.size());
            std::iota(order.begin(), order.end(), 0U);
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return cf[a] < cf[b]; });
            bool accepted = false;
            if (!order.empty() && cf[order[0]] < current.fitness) {
                current = {children[order[0]], cf[order[0]]};
                accepted = true;
            } else {
                for (std::size_t rank = 0; rank < order.size() && !accepted; ++rank) {
                    const double d = distance(children[order[rank]], best.config);
                    const double p =
                        std::exp(d / (6.0 * (-2.0 - 0.075 * (heat + static_cast<double>(rank)))));
                    if (rng.chance(p)) {
                        current = {children[order[rank]], cf[order[rank]]};
                        accepted = true;
                    }
                }
            }
            if (accepted) {
                taboo.push_back(current.config);
                if (taboo.size() > lambda) taboo.pop_front();
                heat += 1;
            }
            if (current.fitness < best.fitness) best = current;
            res.bestPerGeneration.push_back(best.fitness);
            logGeneration(o, g, best.fitness, current.fitness, eval.evaluations());
        }
    }
    res.best = best.config;
    res.best.fitness = best.fitness;
    res.fitness = best.fitness;
    res.evaluations = eval.evaluations();
    return res;
}

}  // namespace rowprobe::tuner
