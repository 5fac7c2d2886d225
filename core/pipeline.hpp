// The running exporter: per queue an input thread and a worker thread, and one export thread.
//
//   queue q:  input thread ──full blocks (SPSC)──▶ worker ──FlowRecord (SPSC ExportRing)──┐
//                 ▲                                  │                                  │
//                 └──────────free blocks (SPSC)──────┘                                  ▼
//                                                        export thread ── OutputPlugin::write
//
// Thread protocol:
// * A queue owns a fixed pool of PacketBlocks that circulate between its input and worker
//   through two SPSC rings; a null block on the full ring means "input ended". An empty block
//   (count 0) means "live input idle": the worker expires flows on wall-clock time.
// * The worker is the only thread touching its StoragePlugin. At the end marker it calls
//   flushAll (every cached flow leaves as ForcedEnd), publishes its statistics and sets
//   `workerDone` (release).
// * The export thread drains every ExportRing; after seeing all `workerDone` flags (acquire) it
//   drains once more and finishes, so no record is lost at EOF or on SIGINT/SIGTERM.
// * If the output fails, `m_abandon` is set so no worker blocks forever on a full ring.
// * After a stop request a worker waits at most kInputGraceSeconds for its input's end marker;
//   an input still blocked in read() then is detached, and the flows are flushed without it.
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

private:
    struct Queue;
    void inputLoop(Queue& q);
    void workerLoop(Queue& q, std::size_t index);
    void exportLoop();
    void fail(const std::string& what);
    void stopInputs();
    bool inputOverdue() const;

    Config m_config;
    std::vector<std::unique_ptr<Queue>> m_queues;
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
    double m_startSeconds = 0;
};

}  // namespace rowprobe::core
