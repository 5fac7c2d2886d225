// check_float_text: rowprobe's float writer (formatFloatShortest, rowprobe/format.hpp) against
// std::to_chars, which it must match byte for byte.
//
//   check_float_text [--threads N] [--first HEX] [--last HEX]
//       compares the two texts for every bit pattern from --first to --last (default: all
//       2^32, NaNs and infinities included) on N threads (default 2), prints the first
//       mismatches (bits and both texts), their count, the longest text and the time taken;
//       exits 1 on any mismatch.
//   check_float_text --bench [--cpu N] [--rounds R]
//       ns per call of both writers (median and minimum of R rounds, default 15, by the
//       thread's CPU time) over two sets of 65 536 values: a realistic mix of NFStream-style
//       statistics (means and sample deviations of packet sizes and of inter-arrival times in
//       ms, whole values left out as the json writer formats those as integers) and random
//       finite bit patterns. Each call writes where the previous one ended, as the writers do.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rowprobe/format.hpp"

namespace {

using rowprobe::formatFloatShortest;
using rowprobe::kFloatTextMax;

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: check_float_text [--threads N] [--first HEX] [--last HEX]\n"
                 "       check_float_text --bench [--cpu N] [--rounds R]\n");
    std::exit(2);
}

struct Mismatch {
    std::uint32_t bits;
    std::string ours;
    std::string theirs;
};

int checkAll(unsigned threads, std::uint64_t first, std::uint64_t last) {
    constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
    std::atomic<std::uint64_t> next{first};
    std::atomic<std::uint64_t> mismatches{0};
    std::atomic<std::size_t> longest{0};
    std::mutex lock;
    std::vector<Mismatch> shown;  // the lowest bit patterns that differ, at most 20
    const auto work = [&] {
        char ours[64];
        char theirs[64];
        for (;;) {
            const std::uint64_t from = next.fetch_add(kChunk);
            if (from > last) return;
            const std::uint64_t to = std::min(last, from + kChunk - 1);
            std::uint64_t bad = 0;
            std::size_t most = 0;
            for (std::uint64_t b = from; b <= to; ++b) {
                const float v = std::bit_cast<float>(static_cast<std::uint32_t>(b));
                const char* end = formatFloatShortest(ours, v);
                const char* theirEnd = std::to_chars(theirs, theirs + sizeof theirs, v).ptr;
                const auto n = static_cast<std::size_t>(end - ours);
                most = std::max(most, n);
                if (n == static_cast<std::size_t>(theirEnd - theirs) &&
                    std::memcmp(ours, theirs, n) == 0) {
                    continue;
                }
                ++bad;
                const std::lock_guard<std::mutex> guard(lock);
                shown.push_back({static_cast<std::uint32_t>(b), std::string(ours, n),
                                 std::string(theirs, static_cast<std::size_t>(theirEnd - theirs))});
                std::sort(shown.begin(), shown.end(),
                          [](const Mismatch& x, const Mismatch& y) { return x.bits < y.bits; });
                if (shown.size() > 20) shown.pop_back();
            }
            mismatches += bad;
            std::size_t seen = longest.load();
            while (most > seen && !longest.compare_exchange_weak(seen, most)) {
            }
        }
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const Mismatch& m : shown) {
        std::printf("mismatch: bits 0x%08x  formatFloatShortest \"%s\"  std::to_chars \"%s\"\n",
                    m.bits, m.ours.c_str(), m.theirs.c_str());
    }
    const unsigned long long count = last - first + 1;
    std::printf(
        "bit patterns 0x%08llx..0x%08llx (%llu), %u threads: %llu mismatches, longest text %zu "
        "(kFloatTextMax %zu), %.1f s\n",
        static_cast<unsigned long long>(first), static_cast<unsigned long long>(last), count,
        threads, static_cast<unsigned long long>(mismatches.load()), longest.load(), kFloatTextMax,
        seconds);
    return mismatches.load() == 0 && longest.load() <= kFloatTextMax ? 0 : 1;
}

double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Means and sample standard deviations of one flow's packet sizes and inter-arrival times
/// (whole milliseconds, as flowstats keeps them), as float32, the whole ones left out.
std::vector<float> statisticsMix(std::size_t count) {
    std::mt19937_64 rng(2024);
    std::vector<float> values;
    std::vector<double> sizes;
    std::vector<double> gaps;
    while (values.size() < count) {
        const auto packets =
            static_cast<std::size_t>(2 + std::exponential_distribution<>(0.05)(rng));
        const double meanGapMs = std::pow(10.0, std::uniform_real_distribution<>(-1, 3)(rng));
        sizes.clear();
        gaps.clear();
        for (std::size_t i = 0; i < packets; ++i) {
            const unsigned kind = static_cast<unsigned>(rng() % 3);
            sizes.push_back(kind == 0   ? 54 + static_cast<double>(rng() % 13)
                            : kind == 1 ? 1400 + static_cast<double>(rng() % 115)
                                        : 60 + static_cast<double>(rng() % 1400));
            if (i > 0)
                gaps.push_back(std::floor(std::exponential_distribution<>(1 / meanGapMs)(rng)));
        }
        for (const std::vector<double>* series : {&sizes, &gaps}) {
            const auto n = static_cast<double>(series->size());
            double sum = 0;
            for (double x : *series) sum += x;
            const double mean = sum / n;
            double squares = 0;
            for (double x : *series) squares += (x - mean) * (x - mean);
            for (const double stat : {mean, n > 1 ? std::sqrt(squares / (n - 1)) : 0.0}) {
                const auto f = static_cast<float>(stat);
                if (f != std::floor(f) && values.size() < count) values.push_back(f);
            }
        }
    }
    return values;
}

std::vector<float> randomFinite(std::size_t count) {
    std::mt19937 rng(7);
    std::vector<float> values;
    while (values.size() < count) {
        const float v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
        if (std::isfinite(v)) values.push_back(v);
    }
    return values;
}

struct Timing {
    double median;
    double best;
};

template <typename Write>
Timing timeCalls(const std::vector<float>& values, unsigned rounds, Write write) {
    std::vector<char> buffer(values.size() * kFloatTextMax + 64);
    std::vector<double> ns;
    for (unsigned r = 0; r < rounds; ++r) {
        char* p = buffer.data();
        const double t0 = threadCpuSeconds();
        for (const float v : values) p = write(p, v);
        const double t1 = threadCpuSeconds();
        asm volatile("" : : "r"(p) : "memory");
        ns.push_back((t1 - t0) * 1e9 / static_cast<double>(values.size()));
    }
    std::sort(ns.begin(), ns.end());
    return {ns[ns.size() / 2], ns.front()};
}

int bench(unsigned rounds) {
    const std::vector<float> mix = statisticsMix(65536);
    const std::vector<float> random = randomFinite(65536);
    const auto ours = [](char* p, float v) { return formatFloatShortest(p, v); };
    const auto theirs = [](char* p, float v) { return std::to_chars(p, p + kFloatTextMax, v).ptr; };
    std::printf("ns per call, median (min) of %u rounds of 65536 values\n", rounds);
    std::printf("%-34s %16s %16s %8s\n", "values", "formatFloat...", "std::to_chars", "ratio");
    const struct {
        const char* name;
        const std::vector<float>* values;
    } sets[] = {{"NFStream-style statistics", &mix}, {"random finite bit patterns", &random}};
    for (const auto& set : sets) {
        // Interleaved, so that a slow spell of a shared machine hits both.
        std::vector<double> a;
        std::vector<double> b;
        double bestA = 1e9;
        double bestB = 1e9;
        for (unsigned r = 0; r < rounds; ++r) {
            const Timing x = timeCalls(*set.values, 1, ours);
            const Timing y = timeCalls(*set.values, 1, theirs);
            a.push_back(x.median);
            b.push_back(y.median);
            bestA = std::min(bestA, x.best);
            bestB = std::min(bestB, y.best);
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        const double ma = a[a.size() / 2];
        const double mb = b[b.size() / 2];
        std::printf("%-34s %8.1f (%5.1f) %8.1f (%5.1f) %7.2fx\n", set.name, ma, bestA, mb, bestB,
                    mb / ma);
    }
    char sample[kFloatTextMax];
    std::printf("sample of the mix:");
    for (std::size_t i = 0; i < 6; ++i) {
        std::printf(" %.*s", static_cast<int>(formatFloatShortest(sample, mix[i]) - sample),
                    sample);
    }
    std::printf("\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    unsigned threads = 2;
    unsigned rounds = 15;
    std::uint64_t first = 0;
    std::uint64_t last = 0xFFFFFFFF;
    int cpu = -1;
    bool timing = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--bench") {
            timing = true;
            continue;
        }
        if (i + 1 >= argc) usage();
        const char* v = argv[++i];
        if (a == "--threads")
            threads = std::max(1U, static_cast<unsigned>(std::strtoul(v, nullptr, 10)));
        else if (a == "--first")
            first = std::strtoull(v, nullptr, 16);
        else if (a == "--last")
            last = std::strtoull(v, nullptr, 16);
        else if (a == "--cpu")
            cpu = std::atoi(v);
        else if (a == "--rounds")
            rounds = std::max(1U, static_cast<unsigned>(std::strtoul(v, nullptr, 10)));
        else
            usage();
    }
    if (first > last || last > 0xFFFFFFFF) usage();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
    }
    return timing ? bench(rounds) : checkAll(threads, first, last);
}
