// The running exporter: per queue a worker thread, per input that may block an input thread,
// one export thread.
//
//   queue q:  input thread ──full blocks (SPSC)──▶ worker ──FlowRecord (SPSC ExportRing)──┐
//                 ▲                                  │                                  │
//                 └──────────free blocks (SPSC)──────┘                                  ▼
//                                 export thread: [expiry sweep, expiry=thread] ── OutputPlugin
//   queue r:  worker: read ─▶ parse ─▶ table ──FlowRecord (SPSC ExportRing)──────────────┘
//
// Who reads an input:
// * An input whose reads never wait (InputPlugin::neverBlocks: a regular pcap file, the
//   generator) and that feeds one queue has a thread of its own only when the process may use
//   at least two CPUs per queue (--input-thread auto, the default): the reader then runs beside
//   its worker. With fewer, the queue's worker reads it, one block at a time, with no input
//   thread and no rings (queue r): a reader would only compete with the workers for the cores,
//   walking the file a core away from the worker that then reads every frame again
//   (docs/performance.md, "Queues"). --input-thread yes / no chooses either way.
// * Every other input (live capture, a pipe, a distributor) has an input thread (queue q).
//
// Queues and inputs ("sources"):
// * One -i per queue (default), or -q N with one -i: N instances of that input when the plugin
//   can share its interface (raw: `fanout=` group, one id for all; dpdk: `queues=N;queue=q`),
//   else ONE input thread that reads the input and spreads its frames over the N queues with a
//   FlowDistributor (distributor.hpp): it copies each frame into the open block of its queue,
//   and hands a block on when it is full, or at once when the input is not saturated (a short
//   read: low rate or live traffic, where latency matters more than batching).
// * --cpus pins worker q to the q-th listed CPU.
//
// Thread protocol:
// * A queue owns a fixed pool of PacketBlocks that circulate between its input thread and its
//   worker through two SPSC rings; a null block on the full ring means "input ended". An empty
//   block (count 0) means "live input idle": the worker expires flows on wall-clock time; or,
//   when its packets[0].data is the pipeline's tick marker, "packet time is now
//   packets[0].ts": a distributor sends one to every worker each second of packet time and at
//   the end, so every worker keeps the capture's clock (one queue would) however few packets
//   it gets, and ends with the same timeouts. A
//   distributing input thread is the producer of every queue's full ring and the consumer of
//   every queue's free ring, so each ring still has one producer and one consumer.
// * The worker is the only thread touching its StoragePlugin but for prefault(): the input
//   thread of a single queue, when it finds no free block while the worker has a quarter of the
//   pool queued, calls it in 64 KiB steps until half the pool is free again (it maps in pages
//   the worker is about to write first; it reads one atomic per pool and calls madvise).
//   At the end marker the worker calls flushAll (every cached flow leaves as ForcedEnd),
//   publishes its statistics and sets `workerDone` (release).
// * The export thread drains every ExportRing; after seeing all `workerDone` flags (acquire) it
//   drains once more and finishes, so no record is lost at EOF or on SIGINT/SIGTERM.
// * expiry=thread (StoragePlugin::sweepsInExportThread): the export thread also calls
//   sweepFromExportThread on every queue whose worker is not done, between drains, with a ring
//   of its own per queue (`expiryRing`, producer and consumer both the export thread).
// * Flood alarms: the main thread watches the published statistics and logs one line when a
//   queue's detector raises an alarm and one when it clears (never the packet path).
// * If the output fails, `m_abandon` is set so no worker blocks forever on a full ring.
// * After a stop request every input is read on until it returns End: an input may still
//   hold packets it captured before the request (the raw input's ring) and hands them over
//   first. A worker waits at most kInputGraceSeconds for its input's end marker; an input
//   still blocked in read() then is detached, and the flows are flushed without it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "rowprobe/plugin.hpp"
#include "stats.hpp"

namespace rowprobe::core {

class Pipeline {
public:
    /// Creates every plugin from the configuration. Throws ConfigError (exit 2).
    explicit Pipeline(const Config& config);
    ~Pipeline();
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    /// Runs until every input has ended (or `stopRequested` turns true, which stops the inputs
    /// and still exports every cached flow). Returns 0, or 1 after a runtime error whose text
    /// is in `error()`.
    int run(const std::atomic<bool>& stopRequested);
    const std::string& error() const noexcept { return m_error; }
    StatsSnapshot stats() const;
    /// True when an input thread did not return within the grace period after a stop request
    /// and was left behind; the caller should end the process without further cleanup.
    bool inputsDetached() const noexcept { return m_inputsDetached; }
    /// SIGHUP: whenever `flag` turns true the export thread clears it and calls
    /// OutputPlugin::reopen() between two batches (log rotation of file outputs). Call before
    /// run(); `flag` must outlive the pipeline.
    void reopenOutputsOn(std::atomic<bool>& flag) noexcept { m_reopen = &flag; }

private:
    struct Queue;
    struct Source;
    void inputLoop(Source& source);
    void distributeLoop(Source& source);
    void workerLoop(Queue& q, std::size_t index);
    void logFloods(const StatsSnapshot& now);
    void exportLoop();
    void fail(const std::string& what);
    void stopInputs();
    bool inputOverdue() const;

    Config m_config;
    std::vector<std::unique_ptr<Queue>> m_queues;
    std::vector<std::unique_ptr<Source>> m_sources;
    std::vector<std::uint64_t> m_floodAlarmsLogged;  ///< per queue, main thread only
    std::vector<bool> m_floodActiveLogged;
    std::vector<std::unique_ptr<ProcessPlugin>> m_process;
    std::unique_ptr<OutputPlugin> m_output;
    StatsBoard m_board;
    std::atomic<bool> m_abandon{false};
    std::atomic<bool> m_stopInputs{false};
    std::atomic<bool> m_exportDone{false};
    std::mutex m_doneMutex;  ///< with m_doneCv: wakes the main thread when the export ends
    std::condition_variable m_doneCv;
    std::atomic<double> m_stopSeconds{0};
    bool m_inputsDetached = false;
    std::mutex m_errorMutex;
    std::string m_error;
    std::atomic<double> m_startSeconds{0};  ///< atomic: --metrics reads stats() during run()
    std::atomic<bool>* m_reopen = nullptr;  ///< reopenOutputsOn
};

}  // namespace rowprobe::core
