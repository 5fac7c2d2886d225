#include "pipeline.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::core {

namespace {

constexpr std::size_t kBlocksPerQueue = 32;
constexpr std::size_t kExportRingRecords = 16 * 1024;
constexpr std::size_t kExportBatch = 1024;
constexpr std::uint64_t kPublishEveryBatches = 256;
/// How long a worker waits, after a stop request, for an input stuck in a blocking read (a
/// pcap file on a FIFO that nobody writes) before it flushes its flows without it.
constexpr double kInputGraceSeconds = 1.0;

double monotonicSeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TimeNs wallNowNs() {
    return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

/// Waits for `ready()` without burning a core shared with the other threads of the queue:
/// spin briefly, then yield, then sleep in short steps. Returns false if `abort` turns true.
template <class Ready>
bool waitFor(Ready&& ready, const std::atomic<bool>& abort) {
    for (unsigned i = 0;; ++i) {
        if (ready()) return true;
        if (abort.load(std::memory_order_relaxed)) return false;
        if (i < 64) continue;
        if (i < 256) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
}

}  // namespace

struct Pipeline::Queue {
    std::unique_ptr<InputPlugin> input;
    std::unique_ptr<StoragePlugin> storage;
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    SpscRing<PacketBlock*> freeBlocks{kBlocksPerQueue};
    SpscRing<PacketBlock*> fullBlocks{kBlocksPerQueue + 1};
    ExportRing exportRing{kExportRingRecords};
    std::atomic<bool> workerDone{false};
    std::atomic<bool> inputFinished{false};
    std::thread inputThread;
    std::thread workerThread;
};

Pipeline::Pipeline(const Config& config) : m_config(config), m_board(config.inputs.size()) {
    Registry& reg = Registry::instance();
    reg.checkConsistent();
    for (std::size_t i = 0; i < config.inputs.size(); ++i) {
        auto q = std::make_unique<Queue>();
        q->input = reg.createAs<InputPlugin>(PluginKind::Input, config.inputs[i], "-i");
        q->storage = reg.createAs<StoragePlugin>(PluginKind::Storage, config.storage, "-s");
        for (std::size_t b = 0; b < kBlocksPerQueue; ++b) {
            q->blocks.push_back(std::make_unique<PacketBlock>());
            q->freeBlocks.tryPush(q->blocks.back().get());
        }
        m_queues.push_back(std::move(q));
    }
    for (const auto& p : config.process) {
        m_process.push_back(reg.createAs<ProcessPlugin>(PluginKind::Process, p, "-p"));
    }
    m_output = reg.createAs<OutputPlugin>(PluginKind::Output, config.output, "-o");
}

Pipeline::~Pipeline() {
    m_stopInputs = true;
    m_abandon = true;
    if (m_inputsDetached) {
        // A detached input thread may still be blocked inside its plugin: keep the queues
        // alive until the process exits rather than free memory under it.
        for (auto& q : m_queues) {
            if (q->workerThread.joinable()) q->workerThread.join();
            static_cast<void>(q.release());
        }
        return;
    }
    for (auto& q : m_queues) {
        if (q->inputThread.joinable()) q->inputThread.join();
        if (q->workerThread.joinable()) q->workerThread.join();
    }
}

void Pipeline::fail(const std::string& what) {
    {
        const std::lock_guard lock(m_errorMutex);
        if (m_error.empty()) m_error = what;
    }
    stopInputs();
}

void Pipeline::stopInputs() {
    double expected = 0;
    m_stopSeconds.compare_exchange_strong(expected, monotonicSeconds());
    m_stopInputs.store(true);
    for (auto& q : m_queues) q->input->stop();
}

void Pipeline::inputLoop(Queue& q) {
    std::uint64_t delivered = 0;
    const std::uint64_t limit = m_config.packetLimit;
    try {
        while (!m_stopInputs.load(std::memory_order_relaxed)) {
            PacketBlock* block = nullptr;
            if (!waitFor([&] { return q.freeBlocks.tryPop(block); }, m_abandon)) break;
            block->clear();
            const InputPlugin::Status status = q.input->read(*block);
            if (status == InputPlugin::Status::End) {
                if (block->count > 0) {
                    q.fullBlocks.tryPush(block);  // a final partial block
                }
                break;
            }
            if (limit != 0 && delivered + block->count >= limit) {
                block->count = static_cast<std::size_t>(limit - delivered);
                delivered = limit;
                q.fullBlocks.tryPush(block);
                break;
            }
            delivered += block->count;
            // The full ring holds every block of the pool plus the end marker: never full here.
            q.fullBlocks.tryPush(block);
        }
    } catch (const std::exception& e) {
        fail(e.what());
    }
    waitFor([&] { return q.fullBlocks.tryPush(nullptr); }, m_abandon);
    q.inputFinished.store(true, std::memory_order_release);
}

bool Pipeline::inputOverdue() const {
    if (!m_stopInputs.load(std::memory_order_relaxed)) return false;
    return monotonicSeconds() > m_stopSeconds.load() + kInputGraceSeconds;
}

void Pipeline::workerLoop(Queue& q, std::size_t index) {
    std::array<ParsedPacket, kMaxBatch> parsed;
    WorkerStats ws;
    ParserConfig parserConfig;
    parserConfig.vlanInKey = m_config.vlanInKey;
    q.storage->attach(ExportTarget{&q.exportRing, &m_abandon, static_cast<std::uint8_t>(index)});
    auto publish = [&] {
        ws.cache = q.storage->stats();
        ws.input = q.input->stats();
        m_board.publish(index, ws);
    };
    const std::atomic<bool> never{false};
    for (;;) {
        PacketBlock* block = nullptr;
        // An input that ignores stop() (blocked in a read) must not keep the flows hostage.
        waitFor([&] { return q.fullBlocks.tryPop(block) || inputOverdue(); }, never);
        if (block == nullptr) break;
        if (block->count == 0) {
            q.storage->advanceTime(wallNowNs());
            publish();
        } else {
            const auto t0 = std::chrono::steady_clock::now();
            std::size_t n = 0;
            for (std::size_t i = 0; i < block->count; ++i) {
                if (parsePacket(block->packets[i], block->link, parserConfig, parsed[n], ws.anomalies)) {
                    ws.ipBytes += parsed[n].ipLen;
                    ++n;
                }
            }
            ws.packets += block->count;
            ws.parsed += n;
            q.storage->processBatch(std::span<ParsedPacket>(parsed.data(), n));
            ws.busyNs += static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
            if (++ws.batches % kPublishEveryBatches == 0) publish();
        }
        q.freeBlocks.tryPush(block);  // the free ring holds the whole pool: never full
    }
    q.storage->flushAll();
    publish();
    q.workerDone.store(true, std::memory_order_release);
}

void Pipeline::exportLoop() {
    std::vector<FlowRecord> batch(kExportBatch);
    std::uint64_t exported = 0;
    bool dirty = false;
    auto drain = [&]() -> bool {
        bool any = false;
        for (auto& q : m_queues) {
            std::size_t n = 0;
            while (n < kExportBatch && q->exportRing.tryPop(batch[n])) ++n;
            if (n == 0) continue;
            any = true;
            dirty = true;
            exported += n;
            if (!m_abandon.load(std::memory_order_relaxed)) {
                m_output->write(std::span<const FlowRecord>(batch.data(), n));
            }
        }
        return any;
    };
    try {
        unsigned idle = 0;
        for (;;) {
            if (drain()) {
                idle = 0;
                continue;
            }
            bool allDone = true;
            for (auto& q : m_queues) allDone = allDone && q->workerDone.load(std::memory_order_acquire);
            if (allDone) {
                while (drain()) {
                }
                break;
            }
            if (dirty) {
                m_output->flush();
                dirty = false;
                m_board.publishExport(exported, m_output->stats());
            }
            if (++idle < 64) {
                std::this_thread::yield();
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        }
        m_output->finish();
    } catch (const std::exception& e) {
        m_abandon = true;
        fail(e.what());
        // Keep draining so workers finish; records are counted as exported but not written.
        for (;;) {
            bool allDone = true;
            for (auto& q : m_queues) allDone = allDone && q->workerDone.load(std::memory_order_acquire);
            const bool any = drain();
            if (allDone && !any) break;
            if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    m_board.publishExport(exported, m_output->stats());
    {
        const std::lock_guard lock(m_doneMutex);
        m_exportDone.store(true, std::memory_order_release);
    }
    m_doneCv.notify_all();
}

int Pipeline::run(const std::atomic<bool>& stopRequested) {
    m_startSeconds = monotonicSeconds();
    std::thread exporter([this] { exportLoop(); });
    for (std::size_t i = 0; i < m_queues.size(); ++i) {
        Queue& q = *m_queues[i];
        q.workerThread = std::thread([this, &q, i] { workerLoop(q, i); });
        q.inputThread = std::thread([this, &q] { inputLoop(q); });
    }
    StatsSnapshot previous = stats();
    double nextReport = m_startSeconds + m_config.statsInterval;
    bool stopped = false;
    while (!m_exportDone.load(std::memory_order_acquire)) {
        {
            std::unique_lock lock(m_doneMutex);
            m_doneCv.wait_for(lock, std::chrono::milliseconds(20), [this] { return m_exportDone.load(); });
        }
        if (!stopped && stopRequested.load()) {
            stopInputs();
            stopped = true;
        }
        if (m_config.statsInterval > 0 && monotonicSeconds() >= nextReport) {
            StatsSnapshot now = stats();
            std::cerr << formatStatsText(now, &previous) << std::flush;
            previous = std::move(now);
            nextReport += m_config.statsInterval;
        }
    }
    for (auto& q : m_queues) {
        q->workerThread.join();
        if (q->inputFinished.load(std::memory_order_acquire)) {
            q->inputThread.join();
        } else {
            q->inputThread.detach();
            m_inputsDetached = true;
        }
    }
    exporter.join();
    return m_error.empty() ? 0 : 1;
}

StatsSnapshot Pipeline::stats() const { return m_board.snapshot(monotonicSeconds() - m_startSeconds); }

}  // namespace rowprobe::core
