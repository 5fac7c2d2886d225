// ParallelFormat: a text output's helper threads, which format part of a large batch of flow
// records while the export thread formats the rest. For the outputs whose formatting is
// the export thread's whole cost (json, text): in a backlog (a mass expiry, the final flush at
// shutdown, when the worker hands over every cached flow at once) the export thread alone
// decides how long the process takes, while the worker waits for room in its ring.
//
//   write(batch of n >= kMinSplit records, cut into chunks of kChunk), T = threads:
//     export thread ─ claims chunks from the front ─▶ OutputFile (as without helpers)
//     helper k ────── claims chunks from the back ──▶ helper k's own buffer, record ends noted
//     where the claims meet: wait for every helper, then hand their chunks' text to the
//     OutputFile in order (OutputFile::appendRecords: one write(2) per chunk, no copy),
//     formatting on the export thread whatever did not fit in a helper's buffer
//
// * The file's bytes are those one thread would write, in the same order: each record is
//   formatted by one thread, by the same code (the output's Formatter).
// * Claims: one atomic word holds the unclaimed chunks [front, back); a claim is one
//   compare-and-swap per chunk. Whoever runs more formats more: a helper that gets no CPU
//   leaves its share to the export thread, which then waits for at most the chunk the helper
//   is in. A fixed split (the helper took the batch's second half) left the export thread
//   waiting for a helper that the worker kept off its CPU, with a CPU idle: the final flush
//   of 1 M flows with flowstats took 0.41 s with it, 0.33 s with chunks (docs/performance.md,
//   "Session 21"). On 2 CPUs, with the worker and the export thread both busy at that flush,
//   the helper now formats little and `threads=1` takes as long; the helpers pay where a CPU
//   is free (bench_format: 1.5x with one helper).
// * Threads: a helper sleeps on an atomic (a futex) between batches. A split batch costs one
//   wake and one wait per helper, nothing per record; batches below kMinSplit (the steady
//   state: the export thread gathers a few records at a time) never wake a helper.
// * Helpers run in the idle scheduling class (SCHED_IDLE): they take a core nobody else wants
//   and never the worker's or the input thread's. Measured on 2 CPUs at the final flush of
//   1 M flows with flowstats: as normal threads the helpers took CPU from the worker and the
//   flush grew from 0.43 to 0.46 s; at idle priority it shrank to 0.39 s (docs/performance.md,
//   "Session 20").
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
//   alive until the batch's write() returns. Should prepare throw on a helper, the helper
//   stops and the export thread formats the rest of its chunk.
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
    /// Records per chunk, the unit the threads claim: small enough that the export thread,
    /// once the claims meet, waits for at most one chunk per helper; large enough that a claim
    /// (one compare-and-swap) and a helper chunk's write(2) are noise (16 flowstats records
    /// are about 30 KiB of JSON).
    static constexpr std::size_t kChunk = 16;
    /// A helper formats at most this many records of a batch and this many bytes (the export
    /// thread formats the rest of the helper's last chunk and takes the chunks the helper
    /// left): the export thread's batches are 1024 records, with flowstats' lines of about
    /// 2.6 KiB at most 2.6 MiB in all.
    static constexpr std::size_t kHelperRecords = 1024;
    static constexpr std::size_t kBufferBytes = std::size_t{2} << 20;

    /// `threads`: formatting threads including the caller (1 = no helper). The helpers are
    /// named `name`/1, /2, ... (top -H, perf).
    ParallelFormat(const Formatter& formatter, unsigned threads, const std::string& name)
        : m_own(formatter) {
        for (unsigned k = 1; k < threads; ++k) {
            auto h = std::make_unique<Helper>(formatter, m_shared, k - 1);
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
        const std::size_t chunks = (n + kChunk - 1) / kChunk;
        if (m_shared.chunks.size() < chunks) m_shared.chunks.resize(chunks);
        m_shared.batch = records;
        m_shared.claims.store(std::uint64_t{chunks} << 32, std::memory_order_relaxed);
        for (auto& h : m_helpers) h->start();
        // Every started helper is waited for, even when the file throws, so none still reads
        // the batch after write() returns.
        bool waited = false;
        auto waitAll = [&] {
            for (auto& h : m_helpers) h->wait();
            waited = true;
        };
        try {
            // From the front, chunk by chunk, straight into the file, while the helpers take
            // chunks from the back; then the helpers' chunks, in order.
            std::size_t c = 0;
            while ((c = m_shared.claimFront()) != Shared::kNone) {
                for (const FlowRecord& r : chunkOf(records, c)) single(r);
            }
            waitAll();
            for (c = m_shared.front(); c < chunks; ++c) {
                const Chunk& ch = m_shared.chunks[c];
                const Helper& h = *m_helpers[ch.helper];
                if (ch.done != 0)
                    file.appendRecords(h.buffer.get() + ch.text,
                                       {h.ends.get() + ch.firstEnd, ch.done});
                for (const FlowRecord& r : chunkOf(records, c).subspan(ch.done)) single(r);
            }
        } catch (...) {
            if (!waited) waitAll();
            throw;
        }
    }

private:
    static constexpr std::uint32_t kIdle = 0;
    static constexpr std::uint32_t kBusy = 1;
    static constexpr std::uint32_t kDone = 2;
    static constexpr std::uint32_t kStop = 3;

    /// Where a helper left chunk c's text: `done` records from `text` bytes into its buffer,
    /// their ends (relative to the chunk's first byte) from ends[firstEnd]. Written by the
    /// helper that claimed the chunk, read by the export thread after that helper's kDone.
    struct Chunk {
        std::uint32_t helper = 0;
        std::uint32_t text = 0;
        std::uint32_t firstEnd = 0;
        std::uint32_t done = 0;
    };

    /// The batch being written and its claims: chunks [front, back) are unclaimed; the export
    /// thread takes the front one, helpers the back one.
    struct Shared {
        static constexpr std::size_t kNone = ~std::size_t{0};
        std::span<const FlowRecord> batch;  ///< written before the helpers' kBusy
        std::vector<Chunk> chunks;
        std::atomic<std::uint64_t> claims{0};  ///< back << 32 | front

        std::size_t front() const noexcept {
            return claims.load(std::memory_order_relaxed) & 0xFFFFFFFFU;
        }
        std::size_t claimFront() noexcept {
            std::uint64_t w = claims.load(std::memory_order_relaxed);
            while ((w & 0xFFFFFFFFU) < (w >> 32)) {
                if (claims.compare_exchange_weak(w, w + 1, std::memory_order_relaxed))
                    return w & 0xFFFFFFFFU;
            }
            return kNone;
        }
        std::size_t claimBack() noexcept {
            std::uint64_t w = claims.load(std::memory_order_relaxed);
            while ((w & 0xFFFFFFFFU) < (w >> 32)) {
                if (claims.compare_exchange_weak(w, w - (std::uint64_t{1} << 32),
                                                 std::memory_order_relaxed))
                    return (w >> 32) - 1;
            }
            return kNone;
        }
    };

    static std::span<const FlowRecord> chunkOf(std::span<const FlowRecord> records,
                                               std::size_t c) noexcept {
        const std::size_t from = c * kChunk;
        return records.subspan(from, std::min(kChunk, records.size() - from));
    }

    struct Helper {
        Helper(const Formatter& f, Shared& s, std::size_t index)
            : formatter(f),
              shared(s),
              self(static_cast<std::uint32_t>(index)),
              buffer(std::make_unique_for_overwrite<char[]>(kBufferBytes)),
              ends(std::make_unique_for_overwrite<std::uint32_t[]>(kHelperRecords)) {}

        void start() noexcept {
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
                formatChunks();
                state.store(kDone, std::memory_order_release);
                state.notify_one();
            }
        }

        /// Claims chunks from the back and formats each whole into the buffer, the records'
        /// ends noted; stops when none is left or at the first record that might not fit (or
        /// whose scratch memory cannot be had): the export thread formats the rest.
        void formatChunks() noexcept {
            char* const base = buffer.get();
            char* p = base;
            char* const end = base + kBufferBytes;
            std::size_t used = 0;  // entries of `ends`
            for (std::size_t c; (c = shared.claimBack()) != Shared::kNone;) {
                Chunk& ch = shared.chunks[c];
                ch = {.helper = self,
                      .text = static_cast<std::uint32_t>(p - base),
                      .firstEnd = static_cast<std::uint32_t>(used),
                      .done = 0};
                const char* const first = p;
                for (const FlowRecord& r : chunkOf(shared.batch, c)) {
                    std::size_t bound = 0;
                    std::size_t lines = 0;
                    try {
                        lines = formatter.prepare(r, bound);
                    } catch (...) {  // (no memory for scratch)
                        return;
                    }
                    if (used == kHelperRecords || static_cast<std::size_t>(end - p) / bound < lines)
                        return;
                    for (std::size_t k = 0; k < lines; ++k) p = formatter.line(p, r, k);
                    ends[used++] = static_cast<std::uint32_t>(p - first);
                    ++ch.done;
                }
            }
        }

        Formatter formatter;
        Shared& shared;
        const std::uint32_t self;  ///< index among the helpers
        std::unique_ptr<char[]> buffer;
        std::unique_ptr<std::uint32_t[]> ends;
        std::atomic<std::uint32_t> state{kIdle};
        std::thread thread;
    };

    Formatter m_own;  ///< the calling (export) thread's
    Shared m_shared;
    std::vector<std::unique_ptr<Helper>> m_helpers;
};

}  // namespace rowprobe::output
