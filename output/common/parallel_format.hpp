// ParallelFormat: a text output's helper threads, which format the tail of a large batch of
// flow records while the export thread formats its head. For the outputs whose formatting is
// the export thread's whole cost (json, text): in a backlog (a mass expiry, the final flush at
// shutdown, when the worker hands over every cached flow at once) the export thread alone
// decides how long the process takes, while the worker waits for room in its ring.
//
//   write(batch of n >= kMinSplit records), T = threads:
//     slice 0 ─ export thread ─▶ OutputFile (as without helpers)
//     slice k ─ helper k ──────▶ helper k's own buffer, record ends noted
//     then, slice by slice in order: wait for helper k, hand its text to the OutputFile
//     (OutputFile::appendRecords: one write(2), no copy), and format on the export thread
//     whatever did not fit in the helper's buffer
//
// * The file's bytes are those one thread would write, in the same order: each record is
//   formatted by one thread, by the same code (the output's Formatter).
// * Threads: a helper sleeps on an atomic (a futex) between batches. A split batch costs one
//   wake and one wait per helper, nothing per record; batches below kMinSplit (the steady
//   state: the export thread gathers a few records at a time) never wake a helper.
// * Helpers run in the idle scheduling class (SCHED_IDLE): they take a core nobody else wants
//   and never the worker's or the input thread's. With no core free, the export thread's wait
//   for its helper frees its own core, on which the helper then runs: the batch then takes as
//   long as without helpers. Measured on 2 CPUs at the final flush of 1 M flows with
//   flowstats: as normal threads the helpers took CPU from the worker and the flush grew from
//   0.43 to 0.46 s; at idle priority it shrank to 0.39 s (docs/performance.md, "Session 20").
// * Memory: each helper owns a buffer of kBufferBytes and room for a batch's record ends,
//   allocated at construction (not zeroed: written before read).
// * Formatter: a copyable type with
//     std::size_t prepare(const FlowRecord& r, std::size_t& bound);
//     char* line(char* out, const FlowRecord& r, std::size_t k) noexcept;
//   prepare says how many lines (at least one) record r takes and sets an upper bound of each
//   line's bytes; line writes line k (0 <= k < lines) at out and returns its end. Both run
//   for one record after the other, on the thread that owns that copy: each thread has its
//   own, so scratch state (InstanceGroups) in it is private to that thread; shared layouts are
//   read only. They read the records and their plugin data, which the export thread keeps
//   alive until the batch's write() returns. Should prepare throw on a helper, the export
//   thread formats the helper's whole slice.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/options.hpp"

namespace rowprobe::output {

/// The value of an output's formatting-threads option `option`: as given, or its default
/// capped at the CPUs the process may run on (a helper on a single CPU only waits its turn).
unsigned formatThreads(const Options& options, std::string_view option);

/// The `threads` option of the outputs that format with ParallelFormat.
inline constexpr OptionSpec kFormatThreadsOption = {
    .name = "threads",
    .type = OptionType::Int,
    .defaultValue = "2",
    .help =
        "threads that format a large batch of records (a mass expiry, the final flush), the "
        "export thread included; 1 = the export thread alone. The default is 1 on a single "
        "CPU",
    .min = 1,
    .max = 16};

template <class Formatter>
class ParallelFormat {
public:
    /// Batches smaller than this are formatted by the calling thread alone: below it the wake
    /// and the wait (about 10 us) cost more than half the batch's formatting saves.
    static constexpr std::size_t kMinSplit = 256;
    /// A helper formats at most this many records of a batch and this many bytes (the export
    /// thread formats the rest of its slice): the export thread's batches are 1024 records,
    /// half of which, with flowstats' lines of about 2.6 KiB, fill 1.3 MiB.
    static constexpr std::size_t kHelperRecords = 1024;
    static constexpr std::size_t kBufferBytes = std::size_t{2} << 20;

    /// `threads`: formatting threads including the caller (1 = no helper). The helpers are
    /// named `name`/1, /2, ... (top -H, perf).
    ParallelFormat(const Formatter& formatter, unsigned threads, const std::string& name)
        : m_own(formatter) {
        for (unsigned k = 1; k < threads; ++k) {
            auto h = std::make_unique<Helper>(formatter);
            h->thread = std::thread([p = h.get()] { p->run(); });
            const std::string title = name + "/" + std::to_string(k);
            pthread_setname_np(h->thread.native_handle(), title.substr(0, 15).c_str());
            m_helpers.push_back(std::move(h));
        }
    }
    ~ParallelFormat() {
        for (auto& h : m_helpers) {
            h->state.store(kStop, std::memory_order_release);
            h->state.notify_one();
            h->thread.join();
        }
    }
    ParallelFormat(const ParallelFormat&) = delete;
    ParallelFormat& operator=(const ParallelFormat&) = delete;

    /// Writes `records` to `file` in order, splitting a large batch over the helpers. Throws
    /// what the file throws; the helpers are idle again by then.
    void write(OutputFile& file, std::span<const FlowRecord> records) {
        auto single = [&](const FlowRecord& r) {
            std::size_t bound = 0;
            const std::size_t lines = m_own.prepare(r, bound);
            for (std::size_t k = 0; k < lines; ++k)
                file.commit(m_own.line(file.reserve(bound), r, k));
            file.endRecord();
        };
        const std::size_t n = records.size();
        if (m_helpers.empty() || n < kMinSplit) {
            for (const FlowRecord& r : records) single(r);
            return;
        }
        const std::size_t parts = m_helpers.size() + 1;
        auto from = [&](std::size_t k) { return n * k / parts; };
        for (std::size_t k = 1; k < parts; ++k)
            m_helpers[k - 1]->start(records.subspan(from(k), from(k + 1) - from(k)));
        // Every started helper is waited for once, even when the file throws, so none still
        // reads the batch after write() returns.
        std::size_t waited = 0;
        try {
            for (const FlowRecord& r : records.first(from(1))) single(r);
            while (waited < m_helpers.size()) {
                Helper& h = *m_helpers[waited];
                h.wait();
                ++waited;
                if (h.done != 0) file.appendRecords(h.buffer.get(), {h.ends.get(), h.done});
                for (const FlowRecord& r : h.job.subspan(h.done)) single(r);
            }
        } catch (...) {
            for (; waited < m_helpers.size(); ++waited) m_helpers[waited]->wait();
            throw;
        }
    }

private:
    static constexpr std::uint32_t kIdle = 0;
    static constexpr std::uint32_t kBusy = 1;
    static constexpr std::uint32_t kDone = 2;
    static constexpr std::uint32_t kStop = 3;

    struct Helper {
        explicit Helper(const Formatter& f)
            : formatter(f),
              buffer(std::make_unique_for_overwrite<char[]>(kBufferBytes)),
              ends(std::make_unique_for_overwrite<std::uint32_t[]>(kHelperRecords)) {}

        void start(std::span<const FlowRecord> records) noexcept {
            job = records;
            done = 0;
            state.store(kBusy, std::memory_order_release);
            state.notify_one();
        }
        void wait() noexcept {
            for (unsigned spin = 0; spin < 256; ++spin) {
                if (state.load(std::memory_order_acquire) == kDone) break;
            }
            for (std::uint32_t s; (s = state.load(std::memory_order_acquire)) != kDone;)
                state.wait(s, std::memory_order_acquire);
            state.store(kIdle, std::memory_order_relaxed);
        }
        void run() noexcept {
            sched_param param{};
            pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
            for (;;) {
                std::uint32_t s = state.load(std::memory_order_acquire);
                while (s != kBusy && s != kStop) {
                    state.wait(s, std::memory_order_acquire);
                    s = state.load(std::memory_order_acquire);
                }
                if (s == kStop) return;
                try {
                    done = formatSlice();
                } catch (...) {  // (no memory for scratch) the caller formats the slice itself
                    done = 0;
                }
                state.store(kDone, std::memory_order_release);
                state.notify_one();
            }
        }

        /// The job's records from the first into the buffer, each whole, their ends noted;
        /// stops before the first that might not fit. Returns how many it formatted.
        std::size_t formatSlice() {
            char* p = buffer.get();
            char* const end = p + kBufferBytes;
            const std::size_t n = std::min(job.size(), kHelperRecords);
            std::size_t i = 0;
            for (; i < n; ++i) {
                std::size_t bound = 0;
                const std::size_t lines = formatter.prepare(job[i], bound);
                if (static_cast<std::size_t>(end - p) / bound < lines) break;
                for (std::size_t k = 0; k < lines; ++k) p = formatter.line(p, job[i], k);
                ends[i] = static_cast<std::uint32_t>(p - buffer.get());
            }
            return i;
        }

        Formatter formatter;
        std::unique_ptr<char[]> buffer;
        std::unique_ptr<std::uint32_t[]> ends;
        std::span<const FlowRecord> job;  ///< written by the caller before kBusy
        std::size_t done = 0;             ///< written by the helper before kDone
        std::atomic<std::uint32_t> state{kIdle};
        std::thread thread;
    };

    Formatter m_own;  ///< the calling (export) thread's
    std::vector<std::unique_ptr<Helper>> m_helpers;
};

}  // namespace rowprobe::output
