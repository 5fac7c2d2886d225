// Runs independent jobs on a fixed number of threads (the lab's configurations, the tuner's
// candidates). Jobs are claimed in index order from one atomic counter, so the set of results
// never depends on the thread count or on scheduling; only the wall time does.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace rowprobe::lab {

/// Calls job(i) for every i in [0, count) on up to `threads` threads (0 = one per core) and
/// returns when all have finished. job must not throw.
template <class Job>
void runParallel(std::size_t count, unsigned threads, Job&& job) {
    if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
    if (threads <= 1) {
        for (std::size_t i = 0; i < count; ++i) job(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) job(i);
        });
    }
    for (auto& th : pool) th.join();
}

}  // namespace rowprobe::lab
