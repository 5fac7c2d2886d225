// bench_classify: how many flows per second one core labels with a classify model alone
// (README.md). Features: a seeded sample of the sizes real flows have (the example training
// set's first packets when --flows is not given: sizes drawn uniformly from 1..1500 in either
// direction, a quarter of the positions absent), an array larger than the L2 cache, walked
// once per round; the median round is printed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "process/classify/classify_model.hpp"

namespace {

using rowprobe::classify::Features;
using rowprobe::classify::Model;

std::uint64_t g_state = 1;
std::uint64_t next() {
    std::uint64_t z = (g_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// Median over the rounds of the thread's CPU time (what one core spends, whatever else the
/// machine runs) and of the wall time.
template <typename F>
std::pair<double, double> median(int rounds, F&& f) {
    std::vector<double> cpu;
    std::vector<double> wall;
    for (int r = 0; r < rounds; ++r) {
        const auto a = std::chrono::steady_clock::now();
        const double c = threadCpuSeconds();
        f();
        cpu.push_back(threadCpuSeconds() - c);
        wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(cpu.begin(), cpu.end());
    std::sort(wall.begin(), wall.end());
    return {cpu[cpu.size() / 2], wall[wall.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: bench_classify MODEL [--flows N] [--rounds R]\n";
        return 2;
    }
    std::size_t flows = 1U << 20U;
    int rounds = 11;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--flows")
            flows = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--rounds")
            rounds = std::atoi(argv[i + 1]);
    }
    Model m;
    std::string error;
    if (!rowprobe::classify::loadModelFile(argv[1], m, error)) {
        std::cerr << "bench_classify: " << argv[1] << ": " << error << "\n";
        return 2;
    }
    std::vector<Features> fs(flows);
    for (Features& f : fs) {
        for (std::size_t i = 0; i < m.packets(); ++i) {
            const std::uint64_t r = next();
            if (r % 4 == 0) break;  // a shorter flow: the rest absent
            rowprobe::classify::addPacket(f, m.packets(),
                                          1 + static_cast<std::uint32_t>((r >> 8U) % 1500),
                                          ((r >> 4U) & 1U) != 0);
        }
    }
    volatile std::uint64_t sink = 0;
    const auto tClass = median(rounds, [&] {
        std::uint64_t s = 0;
        for (const Features& f : fs) s += m.predictClass(f);
        sink = sink + s;
    });
    const auto tFull = median(rounds, [&] {
        std::uint64_t s = 0;
        for (const Features& f : fs) {
            const auto p = m.predict(f);
            s += p.cls + static_cast<std::uint64_t>(p.score * 1000);
        }
        sink = sink + s;
    });
    const char* kind =
        m.kind() == rowprobe::classify::ModelKind::NaiveBayes ? "naive Bayes" : "tree";
    std::cout << "model " << argv[1] << ": " << kind << ", N = " << m.packets() << ", "
              << m.classes().size() << " classes";
    if (m.kind() == rowprobe::classify::ModelKind::Tree)
        std::cout << ", depth " << int(m.spec().depth);
    std::cout << "\nflows " << flows << ", rounds " << rounds << " (median)\n";
    const auto line = [&](const char* what, std::pair<double, double> t) {
        std::cout << what << double(flows) / t.first / 1e6 << " M classifications/s per core ("
                  << t.first / double(flows) * 1e9 << " ns of CPU each; wall clock "
                  << double(flows) / t.second / 1e6 << " M/s)\n";
    };
    line("class only:      ", tClass);
    line("class and score: ", tFull);
    return 0;
}
