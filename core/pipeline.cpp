#include "pipeline.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <type_traits>

#include "distributor.hpp"
#include "failure.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/prefetch.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::core {

namespace {

constexpr std::size_t kBlocksPerQueue = 32;
constexpr std::size_t kExportRingRecords = 16 * 1024;
constexpr std::size_t kExpiryRingRecords = 4 * 1024;
/// Plugin data beside each export ring (only with -p): room for the ring's records at a few
/// hundred bytes each; a worker whose records carry more waits for the export thread.
constexpr std::size_t kExportExtBytes = std::size_t{8} << 20;
constexpr std::size_t kExpiryExtBytes = std::size_t{4} << 20;
constexpr std::size_t kExportBatch = 1024;
constexpr std::uint64_t kPublishEveryBatches = 256;
/// The export thread waits kExportGatherWait after a drain that found fewer records than
/// kExportGather: at most ~5 M records/s per worker, far less than the ring holds meanwhile.
constexpr std::size_t kExportGather = 256;
constexpr auto kExportGatherWait = std::chrono::microseconds(50);
/// How long a worker waits, after a stop request, for an input stuck in a blocking read (a
/// pcap file on a FIFO that nobody writes) before it flushes its flows without it.
constexpr double kInputGraceSeconds = 1.0;
/// A distributing reader sends every worker its packet time at least this often (and at the
/// end), so a worker that gets few packets does not lag behind the capture's clock.
constexpr TimeNs kTickNs = kNsPerSec;
/// Marks an empty block as a clock tick: packets[0].data points here, packets[0].ts is the time.
constexpr std::uint8_t kTickMarker = 0;

double monotonicSeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

TimeNs wallNowNs() {
    return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

/// Waits for `ready()`: spin briefly, then yield (hands the core to the queue's other thread
/// when the two share one), then sleep, 50 µs at first and twice as long after each sleep that
/// found nothing, up to `longest`. Returns false if `abort` turns true. A thread that is fed
/// steadily never sleeps beyond the first step; one that waits on an idle link backs off, so an
/// idle probe does not poll (a fixed 50 µs step cost an idle process a fifth of a core).
template <class Ready>
bool waitFor(Ready&& ready, const std::atomic<bool>& abort,
             std::chrono::microseconds longest = std::chrono::microseconds(50)) {
    std::chrono::microseconds step(50);
    for (unsigned i = 0;; ++i) {
        if (ready()) return true;
        if (abort.load(std::memory_order_relaxed)) return false;
        if (i < 64) continue;
        if (i < 256) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(step);
            step = std::min(step * 2, longest);
        }
    }
}

/// The longest sleep of a worker waiting for packets, and of the export thread waiting for
/// records, once idle: how late the first packet after a quiet spell is taken up (the blocks and
/// rings in between hold far more than arrives meanwhile).
constexpr std::chrono::microseconds kIdleWorkerSleep(1000);
constexpr std::chrono::microseconds kIdleExportSleep(2000);

/// A reader that found no free block waits until this many are free again, then refills them
/// in one go: the worker still has the other half queued, and the reader waits once per half
/// pool instead of spinning for every block (measured: a reader waiting block by block burnt
/// as much CPU as the worker, which the second worker of a 2-core machine then lacks).
constexpr std::size_t kResumeFreeBlocks = kBlocksPerQueue / 2;

/// The packets of one block, parsed. The worker parses its blocks itself unless the input
/// thread has done it: a single-queue input thread whose worker is behind (its ring holds at
/// least kParseAheadBlocks blocks) would otherwise only wait for free blocks, so it parses the
/// block before handing it on, and computes the packets' flow hashes (StoragePlugin::hashBatch,
/// 3 % of the worker's time on the 1 M-flow capture with flowstats), and the worker is left the
/// table and the plugins. A worker that keeps up gets raw blocks, so an input thread that is
/// itself the bottleneck (small packets, no plugins) is not slowed further.
struct ParsedBlock {
    std::array<ParsedPacket, kMaxBatch * kMaxLayers> packets;  ///< every layer: --tunnel both
    std::array<std::uint64_t, kMaxBatch * kMaxLayers> hashes;  ///< valid when `hashed`
    std::size_t count = 0;                                     ///< parsed packets
    std::size_t frames = 0;  ///< frames that gave at least one packet
    std::uint64_t ipBytes = 0;
    AnomalyCounters anomalies;
    bool ready = false;   ///< holds the block it travels with (reset by the worker)
    bool hashed = false;  ///< `hashes` holds the packets' flow hashes (with `ready`)
};

/// A queue's block: the raw packets an input fills and room for their parsed form. The rings
/// carry PacketBlock*, which is this object's first member, so the worker reaches the rest.
struct QueueBlock {
    PacketBlock raw;
    ParsedBlock parsed;
};
static_assert(std::is_standard_layout_v<QueueBlock> && offsetof(QueueBlock, raw) == 0);

ParsedBlock& parsedOf(PacketBlock& block) noexcept {
    return reinterpret_cast<QueueBlock&>(block).parsed;
}

constexpr std::size_t kParseAheadBlocks = kBlocksPerQueue / 4;

/// What an input thread waiting for free blocks makes present per StoragePlugin::prefault call
/// (16 pages, about 20 us of the kernel's work: the 384 MB flowstats pool of the 1 M-flow
/// capture took 0.11-0.13 s whole), so that it checks the free blocks again soon.
constexpr std::size_t kPrefaultStep = std::size_t{64} << 10;

/// The parser options of a run.
ParserConfig parserConfigOf(const Config& config) noexcept {
    ParserConfig parser;
    parser.vlanInKey = config.vlanInKey;
    parser.tunnels = config.tunnels;
    return parser;
}

/// How many packets ahead of the parse its output is fetched for writing.
constexpr std::size_t kParseWriteAhead = 8;

/// Fetches the lines of `p` for writing. The parsed packets' lines were last held by the
/// worker's core: without this, the parse's stores wait for each line to come over. With the
/// parser writing the key once (canonicalise, parser.cpp), measured on `small` with flowstats:
/// the input thread's parse fell from about 12 % of the run's samples to 4 %; without plugins
/// the whole run took about 10 % less CPU (docs/performance.md, session 18).
inline void prefetchForWrite(const ParsedPacket& p) noexcept {
    const auto* bytes = reinterpret_cast<const char*>(&p);
    for (std::size_t at = 0; at < sizeof(ParsedPacket); at += 64) prefetchWrite(bytes + at);
    prefetchWrite(bytes + sizeof(ParsedPacket) - 1);
}

/// Parses every frame of `block` into `out` (every layer of each with `--tunnel both`).
void parseBlock(const PacketBlock& block, const ParserConfig& config, ParsedBlock& out) noexcept {
    const bool everyLayer = config.tunnels == TunnelMode::Both;
    std::size_t n = 0;
    std::size_t frames = 0;
    std::uint64_t ipBytes = 0;
    out.anomalies = {};
    if (everyLayer) {  // one frame may feed several flows, in arrival order
        for (std::size_t i = 0; i < block.count; ++i) {
            prefetchForWrite(out.packets[std::min(n + kParseWriteAhead, out.packets.size() - 1)]);
            const std::size_t k = parsePacketLayers(
                block.packets[i], block.link, config,
                std::span<ParsedPacket, kMaxLayers>(out.packets.data() + n, kMaxLayers),
                out.anomalies);
            if (k != 0) {
                ipBytes += out.packets[n].ipLen;  // the outer packet's bytes, once
                ++frames;
            }
            n += k;
        }
    } else {
        for (std::size_t i = 0; i < block.count; ++i) {
            prefetchForWrite(out.packets[std::min(n + kParseWriteAhead, out.packets.size() - 1)]);
            if (parsePacket(block.packets[i], block.link, config, out.packets[n], out.anomalies)) {
                ipBytes += out.packets[n].ipLen;
                ++n;
            }
        }
        frames = n;
    }
    out.count = n;
    out.frames = frames;
    out.ipBytes = ipBytes;
}

/// -c: cuts `block` so that at most `limit` packets (0 = no limit) are delivered in all, and
/// counts them in `delivered`. True when this block reaches the limit: the input is done.
bool cutAtLimit(PacketBlock& block, std::uint64_t limit, std::uint64_t& delivered) noexcept {
    const bool reached = limit != 0 && delivered + block.count >= limit;
    if (reached) block.count = static_cast<std::size_t>(limit - delivered);
    delivered += block.count;
    return reached;
}

/// Queues the configuration asks for: -q N with one -i, else one per -i.
std::size_t queueCount(const Config& config) {
    if (config.queues > 1 && config.inputs.size() == 1) return config.queues;
    return config.inputs.size();
}

bool hasOption(const Registry::Entry& entry, std::string_view name) {
    for (const auto& o : entry.info.options) {
        if (o.name == name) return true;
    }
    return false;
}

bool mentions(const PluginString& ps, std::string_view longName, std::string_view shortName) {
    for (const auto& item : ps.items) {
        if (item.key == longName || (!shortName.empty() && item.key == shortName)) return true;
    }
    return false;
}

ConfigError queuesError(const std::string& input, std::string problem) {
    return ConfigError({.component = "command line",
                        .option = "-q",
                        .value = input,
                        .problem = std::move(problem),
                        .help = "rowprobe -h"});
}

/// -q N with one input: the input strings of N instances when the plugin can share its
/// interface (raw fanout, dpdk RSS queues); empty when a distributor must spread one instance.
std::vector<std::string> shareableInputs(const std::string& input, std::size_t queues) {
    const PluginString ps = splitPluginString(input, "input");
    const Registry::Entry* entry = Registry::instance().find(PluginKind::Input, ps.name);
    if (entry == nullptr) return {};  // the plugin's creation reports the unknown name
    std::vector<std::string> out;
    if (hasOption(*entry, "fanout")) {
        std::string text = input;
        if (!mentions(ps, "fanout", "F")) {
            // One group per process: every instance joins it, the kernel spreads the flows.
            text += ";fanout=" + std::to_string(1 + static_cast<unsigned>(getpid()) % 65535U);
        }
        out.assign(queues, text);
    } else if (hasOption(*entry, "queues") && hasOption(*entry, "queue")) {
        if (mentions(ps, "queue", "q")) {
            throw queuesError(input,
                              "-q " + std::to_string(queues) + " creates one '" + ps.name +
                                  "' input per queue: leave 'queue=' out of the input string");
        }
        const bool given = mentions(ps, "queues", "Q");
        for (std::size_t q = 0; q < queues; ++q) {
            out.push_back(input + (given ? "" : ";queues=" + std::to_string(queues)) +
                          ";queue=" + std::to_string(q));
        }
    }
    return out;
}

/// Names a thread for top -H, perf and gdb ("rp-worker/3"); the kernel keeps 15 characters.
void nameThread(std::thread& thread, const std::string& name) {
    pthread_setname_np(thread.native_handle(), name.substr(0, 15).c_str());
}

/// Pins the calling thread to `cpu`; false when the system refuses.
bool pinToCpu(std::thread& thread, unsigned cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(thread.native_handle(), sizeof set, &set) == 0;
}

}  // namespace

struct Pipeline::Source {
    std::unique_ptr<InputPlugin> input;
    std::vector<std::size_t> queues;  ///< the queues it feeds: one, or all with a distributor
    std::thread thread;
    std::atomic<bool> finished{false};
    /// Read by the worker of its queue, without a thread of its own: an input whose reads never
    /// wait (a file, the generator) feeding one queue, as --input-thread decides.
    bool inWorker = false;
};

struct Pipeline::Queue {
    std::unique_ptr<StoragePlugin> storage;
    Source* source = nullptr;  ///< reports its input statistics (the first queue of a source)
    std::vector<std::unique_ptr<QueueBlock>> blocks;
    SpscRing<PacketBlock*> freeBlocks{kBlocksPerQueue};
    SpscRing<PacketBlock*> fullBlocks{kBlocksPerQueue + 1};
    ExportRing exportRing{kExportRingRecords};
    std::unique_ptr<ExportRing> expiryRing;  ///< expiry=thread: the export thread's own ring
    std::unique_ptr<ExtRing> exportExt;      ///< -p: plugin data of exportRing's records
    std::unique_ptr<ExtRing> expiryExt;      ///< -p and expiry=thread: of expiryRing's records
    std::atomic<bool> workerDone{false};
    /// When the worker's final flush ended: written before workerDone (release), read by the
    /// export thread after it (acquire), for export.finish_ns.
    std::chrono::steady_clock::time_point flushEnd{};
    std::thread workerThread;
};

Pipeline::Pipeline(const Config& config) : m_config(config), m_board(queueCount(config)) {
    m_startSeconds = monotonicSeconds();  // stats() before run() (--metrics): time since start-up
    Registry& reg = Registry::instance();
    reg.checkConsistent();
    const std::size_t queues = queueCount(config);
    std::vector<std::string> inputs = config.inputs;
    bool distribute = false;
    if (queues > config.inputs.size()) {
        inputs = shareableInputs(config.inputs[0], queues);
        distribute = inputs.empty();
        if (distribute) inputs = config.inputs;
    }
    for (std::size_t i = 0; i < queues; ++i) {
        const AllocationScope scope("queue " + std::to_string(i) + " (its rings and the -s '" +
                                    config.storage + "' flow table)");
        auto q = std::make_unique<Queue>();
        q->storage = reg.createAs<StoragePlugin>(PluginKind::Storage, config.storage, "-s");
        if (q->storage->sweepsInExportThread())
            q->expiryRing = std::make_unique<ExportRing>(kExpiryRingRecords);
        m_queues.push_back(std::move(q));
    }
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    sched_getaffinity(0, sizeof allowed, &allowed);
    // A reader thread per file pays off only with a core of its own beside its worker's.
    const bool readerThreads = config.inputThread == InputThreadMode::Yes ||
                               (config.inputThread == InputThreadMode::Auto &&
                                static_cast<std::size_t>(CPU_COUNT(&allowed)) >= 2 * queues);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const AllocationScope scope("the input -i '" + inputs[i] + "'");
        auto s = std::make_unique<Source>();
        s->input = reg.createAs<InputPlugin>(PluginKind::Input, inputs[i], "-i");
        if (distribute) {
            for (std::size_t q = 0; q < queues; ++q) s->queues.push_back(q);
        } else {
            s->queues.push_back(i);
        }
        s->inWorker = !readerThreads && !distribute && s->input->neverBlocks();
        m_queues[s->queues.front()]->source = s.get();
        m_sources.push_back(std::move(s));
    }
    for (auto& q : m_queues) {
        // A worker that reads its own input needs one block, and no rings.
        const bool own = q->source != nullptr && q->source->inWorker;
        const AllocationScope scope("the packet blocks (" + std::to_string(sizeof(QueueBlock)) +
                                    " bytes each)");
        for (std::size_t b = 0; b < (own ? 1 : kBlocksPerQueue); ++b) {
            // Default-initialised, not value-initialised: every member but the 256 KiB packet
            // arena has an initialiser; the arena is written before it is read, and zeroing it
            // for 40 blocks cost start-up 10 MiB of page faults.
            q->blocks.push_back(std::make_unique_for_overwrite<QueueBlock>());
            q->freeBlocks.tryPush(&q->blocks.back()->raw);
        }
    }
    for (const auto& p : config.process) {
        const AllocationScope scope("the process plugin -p '" + p + "'");
        m_process.push_back(reg.createAs<ProcessPlugin>(PluginKind::Process, p, "-p"));
    }
    {
        std::vector<const ProcessPlugin*> plugins;
        for (const auto& p : m_process) plugins.push_back(p.get());
        checkFieldNames(plugins);
    }
    const AllocationScope outputScope("the output -o '" + config.output + "'");
    m_output = reg.createAs<OutputPlugin>(PluginKind::Output, config.output, "-o");
    {
        // The interface each queue captures on, for outputs that export ingressInterface.
        std::vector<std::uint32_t> interfaces(queues, 0);
        for (const auto& s : m_sources) {
            for (const std::size_t q : s->queues) interfaces[q] = s->input->interfaceIndex();
        }
        m_output->setInputInterfaces(interfaces);
    }
    if (!m_process.empty()) {
        std::vector<ProcessPlugin*> plugins;
        for (const auto& p : m_process) plugins.push_back(p.get());
        for (auto& q : m_queues) {
            if (!q->storage->enableProcessPlugins(plugins)) {
                throw ConfigError(
                    {.component = "command line",
                     .option = "-p",
                     .value = config.process.front(),
                     .problem = "storage '" + config.storage + "' cannot run process plugins",
                     .help = "rowprobe -h storage"});
            }
            q->exportExt = std::make_unique<ExtRing>(kExportExtBytes);
            if (q->expiryRing) q->expiryExt = std::make_unique<ExtRing>(kExpiryExtBytes);
        }
        m_output->setProcessPlugins(
            std::span<const ProcessPlugin* const>(plugins.data(), plugins.size()));
    } else {
        m_output->setProcessPlugins({});  // outputs check their plugin groups against none
    }
    for (const unsigned cpu : config.cpus) {
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
            throw ConfigError({.component = "command line",
                               .option = "--cpus",
                               .value = std::to_string(cpu),
                               .problem = "CPU " + std::to_string(cpu) +
                                          " is not available to this process (" +
                                          std::to_string(CPU_COUNT(&allowed)) + " CPUs allowed)",
                               .help = "rowprobe -h"});
        }
    }
    m_floodAlarmsLogged.assign(queues, 0);
    m_floodActiveLogged.assign(queues, false);
}

Pipeline::~Pipeline() {
    m_stopInputs = true;
    m_abandon = true;
    if (m_inputsDetached) {
        // A detached input thread may still be blocked inside its plugin: keep the queues and
        // sources alive until the process exits rather than free memory under it.
        for (auto& q : m_queues) {
            if (q->workerThread.joinable()) q->workerThread.join();
            static_cast<void>(q.release());
        }
        for (auto& s : m_sources) static_cast<void>(s.release());
        return;
    }
    for (auto& s : m_sources) {
        if (s->thread.joinable()) s->thread.join();
    }
    for (auto& q : m_queues) {
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
    for (auto& s : m_sources) s->input->stop();
}

void Pipeline::inputLoop(Source& source) {
    if (source.queues.size() > 1) {
        distributeLoop(source);
        return;
    }
    Queue& q = *m_queues[source.queues.front()];
    std::uint64_t delivered = 0;
    const std::uint64_t limit = m_config.packetLimit;
    const ParserConfig parserConfig = parserConfigOf(m_config);
    try {
        // After a stop request the input is read on until it ends: it hands over what it
        // captured before the request (the raw input's ring), then returns End; the grace
        // period bounds an input that does not.
        while (!inputOverdue()) {
            PacketBlock* block = nullptr;
            if (!q.freeBlocks.tryPop(block)) {
                // The worker is behind: while it frees blocks, make the memory it is about to
                // write for the first time present, so that it takes no page fault there.
                while (q.freeBlocks.size() < kResumeFreeBlocks &&
                       q.fullBlocks.size() >= kParseAheadBlocks &&
                       q.storage->prefault(kPrefaultStep) != 0) {
                }
                if (!waitFor([&] { return q.freeBlocks.size() >= kResumeFreeBlocks; }, m_abandon))
                    break;
                q.freeBlocks.tryPop(block);
            }
            block->clear();
            const bool end = source.input->read(*block) == InputPlugin::Status::End;
            const bool reached = cutAtLimit(*block, limit, delivered);
            if (end && block->count == 0) break;
            if (block->count != 0 && q.fullBlocks.size() >= kParseAheadBlocks) {
                ParsedBlock& parsed = parsedOf(*block);  // the worker is behind: see ParsedBlock
                parseBlock(*block, parserConfig, parsed);
                parsed.hashed = q.storage->hashBatch(
                    std::span<const ParsedPacket>(parsed.packets.data(), parsed.count),
                    parsed.hashes.data());
                parsed.ready = true;
            }
            // The full ring holds every block of the pool plus the end marker: never full here.
            // An empty block that is not the end tells the worker the live input is idle.
            q.fullBlocks.tryPush(block);
            if (end || reached) break;
        }
    } catch (const std::exception& e) {
        fail(describeFailure(e));
    }
    waitFor([&] { return q.fullBlocks.tryPush(nullptr); }, m_abandon);
    source.finished.store(true, std::memory_order_release);
}

void Pipeline::distributeLoop(Source& source) {
    const std::size_t n = source.queues.size();
    FlowDistributor distributor(n, parserConfigOf(m_config));
    auto scratch = std::make_unique<PacketBlock>();
    std::vector<PacketBlock*> open(n, nullptr);
    std::uint64_t delivered = 0;
    const std::uint64_t limit = m_config.packetLimit;
    // A free block of queue q (waits while its worker is behind); false once abandoned.
    auto take = [&](std::size_t q) {
        PacketBlock* block = nullptr;
        SpscRing<PacketBlock*>& free = m_queues[q]->freeBlocks;
        if (!free.tryPop(block)) {
            if (!waitFor([&] { return free.size() >= kResumeFreeBlocks; }, m_abandon)) return false;
            free.tryPop(block);
        }
        block->clear();
        block->link = scratch->link;
        open[q] = block;
        return true;
    };
    auto handOn = [&](std::size_t q) {
        m_queues[q]->fullBlocks.tryPush(open[q]);  // room for the whole pool: never full
        open[q] = nullptr;
    };
    auto handOnAll = [&] {
        for (std::size_t q = 0; q < n; ++q) {
            if (open[q] != nullptr && open[q]->count > 0) handOn(q);
        }
    };
    TimeNs newest = 0;
    TimeNs lastTick = 0;
    // Every worker's clock to `newest`, after the packets already routed to it.
    auto tick = [&] {
        handOnAll();
        for (std::size_t q = 0; q < n; ++q) {
            if (open[q] == nullptr && !take(q)) return false;
            open[q]->packets[0] = RawPacket{&kTickMarker, 0, 0, newest};
            handOn(q);
        }
        lastTick = newest;
        return true;
    };
    // Returns early only when the export thread gave up (m_abandon) while it waited for a block.
    auto pump = [&] {
        bool more = true;
        while (more && !inputOverdue()) {  // read on after a stop request, as inputLoop
            scratch->clear();
            const InputPlugin::Status status = source.input->read(*scratch);
            const bool reached = cutAtLimit(*scratch, limit, delivered);
            more = status != InputPlugin::Status::End && !reached;
            if (status == InputPlugin::Status::Timeout && scratch->count == 0) {
                handOnAll();  // live input idle: every worker expires flows on wall time
                for (std::size_t q = 0; q < n; ++q) {
                    if (open[q] == nullptr && !take(q)) return;
                    open[q]->packets[0].data = nullptr;  // not a tick left in a recycled block
                    handOn(q);
                }
                continue;
            }
            for (std::size_t i = 0; i < scratch->count; ++i) {
                const RawPacket& raw = scratch->packets[i];
                const std::size_t q = distributor.pick(raw, scratch->link);
                PacketBlock* block = open[q];
                if (block != nullptr && block->link != scratch->link) {
                    handOn(q);  // a block carries one link type (pcapng: per interface)
                    block = nullptr;
                }
                if (block == nullptr) {
                    if (!take(q)) return;
                    block = open[q];
                }
                if (!block->append(raw.data, raw.capLen, raw.wireLen, raw.ts)) {
                    handOn(q);  // arena full
                    if (!take(q)) return;
                    open[q]->append(raw.data, raw.capLen, raw.wireLen, raw.ts);
                }
                if (open[q]->full()) handOn(q);
                newest = std::max(newest, raw.ts);
            }
            if (newest >= lastTick + kTickNs && !tick()) return;
            if (scratch->count < kMaxBatch) handOnAll();  // not saturated: latency over batching
        }
        if (newest != 0) tick();  // all workers end at the capture's clock, as one queue would
        handOnAll();
    };
    try {
        pump();
    } catch (const std::exception& e) {
        fail(describeFailure(e));
    }
    // An empty block still open stays out of circulation (this thread only consumes the free
    // rings); the queue owns it and frees it.
    for (std::size_t q = 0; q < n; ++q) {
        waitFor([&] { return m_queues[q]->fullBlocks.tryPush(nullptr); }, m_abandon);
    }
    source.finished.store(true, std::memory_order_release);
}

bool Pipeline::inputOverdue() const {
    if (!m_stopInputs.load(std::memory_order_relaxed)) return false;
    return monotonicSeconds() > m_stopSeconds.load() + kInputGraceSeconds;
}

void Pipeline::workerLoop(Queue& q, std::size_t index) {
    WorkerStats ws;
    const ParserConfig parserConfig = parserConfigOf(m_config);
    q.storage->attach(ExportTarget{&q.exportRing, &m_abandon, static_cast<std::uint8_t>(index),
                                   q.exportExt.get(), q.expiryExt.get()});
    auto publish = [&] {
        ws.cache = q.storage->stats();
        // The fragment cache counts orphan fragments; report them with the parser's anomalies.
        ws.anomalies.count[static_cast<std::size_t>(Anomaly::FragmentNoPorts)] =
            ws.cache.fragmentsNoPorts;
        if (q.source != nullptr) ws.input = q.source->input->stats();
        m_board.publish(index, ws);
    };
    // The next block, or null at the end: from the input thread's ring, or read right here
    // when the queue's input never blocks (Source::inWorker).
    const std::atomic<bool> never{false};
    Source* own = q.source != nullptr && q.source->inWorker ? q.source : nullptr;
    PacketBlock* ownBlock = &q.blocks.front()->raw;
    std::uint64_t delivered = 0;
    bool ownEnded = false;
    auto readOwn = [&]() -> PacketBlock* {
        if (ownEnded || inputOverdue()) return nullptr;  // read on after a stop until End
        InputPlugin::Status status = InputPlugin::Status::End;
        try {
            do {  // an input that never blocks has no idle periods to report
                ownBlock->clear();
                status = own->input->read(*ownBlock);
            } while (status == InputPlugin::Status::Timeout && ownBlock->count == 0 &&
                     !m_stopInputs.load(std::memory_order_relaxed));
        } catch (const std::exception& e) {
            fail(describeFailure(e));
            return nullptr;
        }
        const bool reached = cutAtLimit(*ownBlock, m_config.packetLimit, delivered);
        ownEnded = reached || status == InputPlugin::Status::End;
        if (ownEnded && ownBlock->count == 0) return nullptr;
        return ownBlock;
    };
    auto next = [&]() -> PacketBlock* {
        if (own != nullptr) return readOwn();
        PacketBlock* block = nullptr;
        // An input that ignores stop() (blocked in a read) must not keep the flows hostage.
        waitFor([&] { return q.fullBlocks.tryPop(block) || inputOverdue(); }, never,
                kIdleWorkerSleep);
        return block;
    };
    for (;;) {
        PacketBlock* block = next();
        if (block == nullptr) break;
        if (block->count == 0) {  // live input idle, or a distributor's tick of packet time
            const RawPacket& mark = block->packets[0];
            q.storage->advanceTime(mark.data == &kTickMarker ? mark.ts : wallNowNs());
            publish();
        } else {
            const auto t0 = std::chrono::steady_clock::now();
            ParsedBlock& parsed = parsedOf(*block);
            if (!parsed.ready) {
                parseBlock(*block, parserConfig, parsed);
                parsed.hashed = false;
            }
            parsed.ready = false;
            ws.anomalies += parsed.anomalies;
            ws.ipBytes += parsed.ipBytes;
            ws.packets += block->count;
            ws.parsed += parsed.frames;
            const std::span<ParsedPacket> packets(parsed.packets.data(), parsed.count);
            if (parsed.hashed) {
                q.storage->processHashedBatch(packets, parsed.hashes.data());
            } else {
                q.storage->processBatch(packets);
            }
            ws.busyNs +=
                static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::steady_clock::now() - t0)
                                               .count());
            if (++ws.batches % kPublishEveryBatches == 0) publish();
        }
        // The free ring holds the whole pool: never full.
        if (own == nullptr) q.freeBlocks.tryPush(block);
    }
    if (own != nullptr) own->finished.store(true, std::memory_order_release);
    const auto flushStart = std::chrono::steady_clock::now();
    q.storage->flushAll();
    q.flushEnd = std::chrono::steady_clock::now();
    ws.flushNs = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(q.flushEnd - flushStart).count());
    publish();
    q.workerDone.store(true, std::memory_order_release);
}

void Pipeline::exportLoop() {
    std::vector<FlowRecord> batch(kExportBatch);
    std::uint64_t exported = 0;
    std::uint64_t abandoned = 0;  // taken off the rings after the output failed: dropped
    // Set when the output failed. The workers are not told (m_abandon stays false): this thread
    // keeps draining their rings until they are done, so every record they push is taken off,
    // counted in `exported` and, not being written, in `dropped` — none is lost uncounted.
    bool outputFailed = false;
    auto outputStats = [&] {
        OutputStats s = m_output->stats();
        s.dropped += abandoned;
        // After a failure every record taken off the rings and not written is lost, including
        // those of the batch the failing write() was given.
        if (outputFailed && s.records <= exported) s.dropped = exported - s.records;
        return s;
    };
    bool dirty = false;
    auto drainRing = [&](ExportRing& ring, ExtRing* ext) -> std::size_t {
        std::size_t n = 0;
        while (n < kExportBatch && ring.tryPop(batch[n])) ++n;
        if (n == 0) return 0;
        dirty = true;
        exported += n;
        if (!outputFailed) {
            m_output->write(std::span<const FlowRecord>(batch.data(), n));
        } else {
            abandoned += n;
        }
        // The plugin data of the batch was read: free it, in push order, up to the last.
        for (std::size_t i = n; ext != nullptr && i-- > 0;) {
            if (batch[i].extLen != 0) {
                ext->releaseThrough(batch[i].ext, batch[i].extLen);
                break;
            }
        }
        return n;
    };
    auto drain = [&]() -> std::size_t {
        std::size_t got = 0;
        for (auto& q : m_queues) {
            got += drainRing(q->exportRing, q->exportExt.get());
            if (q->expiryRing) {
                // expiry=thread: this thread is the table's second expirer, and its ring's only
                // producer and consumer. A finished worker has flushed everything.
                if (!q->workerDone.load(std::memory_order_acquire))
                    q->storage->sweepFromExportThread(*q->expiryRing);
                got += drainRing(*q->expiryRing, q->expiryExt.get());
            }
        }
        return got;
    };
    // The last reopen failure logged: a path that stays unopenable is logged once, not on every
    // SIGHUP (a reload storm would flood the journal); a success or a new reason logs again.
    std::string reopenFailure;
    std::uint64_t finishNs = 0;  // from the last worker's flush end to the output's finish
    try {
        unsigned idle = 0;
        for (;;) {
            if (m_reopen != nullptr && m_reopen->load(std::memory_order_relaxed) &&
                m_reopen->exchange(false)) {
                try {
                    m_output->reopen();
                    reopenFailure.clear();
                } catch (const RuntimeError& e) {
                    if (reopenFailure != e.what()) {
                        reopenFailure = e.what();
                        std::cerr << "rowprobe: warning: " << e.what()
                                  << " (logged once until a reopen succeeds)\n"
                                  << std::flush;
                    }
                }
            }
            if (const std::size_t got = drain(); got != 0) {
                idle = 0;
                // A few records at a time means this thread keeps up with the workers: let
                // records gather rather than take each one as it is published, which costs the
                // worker a cache line taken back from this core per record.
                if (got < kExportGather) std::this_thread::sleep_for(kExportGatherWait);
                continue;
            }
            bool allDone = true;
            for (auto& q : m_queues)
                allDone = allDone && q->workerDone.load(std::memory_order_acquire);
            if (allDone) {
                while (drain() != 0) {
                }
                break;
            }
            if (dirty) {
                m_output->flush();
                dirty = false;
                m_board.publishExport({.records = exported}, outputStats());
            }
            if (++idle < 64) {
                std::this_thread::yield();
            } else {  // 200 µs, doubling while nothing comes, up to kIdleExportSleep
                const unsigned doublings = std::min(idle - 64, 4U);
                std::this_thread::sleep_for(
                    std::min(std::chrono::microseconds(200) * (1U << doublings), kIdleExportSleep));
            }
        }
        m_output->finish();
        std::chrono::steady_clock::time_point lastFlush{};
        for (auto& q : m_queues) lastFlush = std::max(lastFlush, q->flushEnd);
        if (lastFlush != std::chrono::steady_clock::time_point{})
            finishNs = static_cast<std::uint64_t>(
                std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - lastFlush)
                                              .count()));
    } catch (const std::exception& e) {
        outputFailed = true;
        fail(describeFailure(e));
        // Keep draining so workers finish; those records are counted as dropped.
        for (;;) {
            bool allDone = true;
            for (auto& q : m_queues)
                allDone = allDone && q->workerDone.load(std::memory_order_acquire);
            const bool any = drain() != 0;
            if (allDone && !any) break;
            if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    m_board.publishExport({.records = exported, .finishNs = finishNs}, outputStats());
    {
        const std::lock_guard lock(m_doneMutex);
        m_exportDone.store(true, std::memory_order_release);
    }
    m_doneCv.notify_all();
}

void Pipeline::logFloods(const StatsSnapshot& now) {
    for (std::size_t q = 0; q < now.queues.size() && q < m_floodAlarmsLogged.size(); ++q) {
        const CacheStats& c = now.queues[q].cache;
        if (c.floodAlarms > m_floodAlarmsLogged[q]) {
            std::cerr << "rowprobe: flood detected on queue " << q << " at "
                      << formatTimeIso(c.floodLastAlarm, 0)
                      << " (packet time): " << c.floodLastCount << " new flows in one interval, "
                      << c.floodBaseline << " expected\n"
                      << std::flush;
            m_floodAlarmsLogged[q] = c.floodAlarms;
            m_floodActiveLogged[q] = true;
        }
        if (m_floodActiveLogged[q] && c.floodActive == 0) {
            std::cerr << "rowprobe: flood over on queue " << q << '\n' << std::flush;
            m_floodActiveLogged[q] = false;
        }
    }
}

int Pipeline::run(const std::atomic<bool>& stopRequested) {
    m_startSeconds = monotonicSeconds();
    // Every thread is created before any of them starts: when one cannot be created (a thread
    // or memory limit) the others return at once, nothing has been read, and the run ends with
    // exit 1 and the name of the thread (issue 10, defect 6).
    std::atomic<int> gate{0};  // 0 wait, 1 go, -1 cancelled
    auto gated = [&gate](auto body) {
        return [&gate, body] {
            gate.wait(0);
            if (gate.load() > 0) body();
        };
    };
    std::thread exporter;
    std::string creating = "rp-export";
    try {
        exporter = std::thread(gated([this] { exportLoop(); }));
        nameThread(exporter, creating);
        for (std::size_t i = 0; i < m_queues.size(); ++i) {
            Queue& q = *m_queues[i];
            creating = "rp-worker/" + std::to_string(i);
            q.workerThread = std::thread(gated([this, &q, i] { workerLoop(q, i); }));
            nameThread(q.workerThread, creating);
            if (!m_config.cpus.empty() &&
                !pinToCpu(q.workerThread, m_config.cpus[i % m_config.cpus.size()])) {
                std::cerr << "rowprobe: warning: cannot pin worker " << i << " to CPU "
                          << m_config.cpus[i % m_config.cpus.size()] << '\n';
            }
        }
        for (auto& s : m_sources) {
            Source& source = *s;
            if (source.inWorker) continue;
            creating = "rp-input/" + std::to_string(source.queues.front());
            source.thread = std::thread(gated([this, &source] { inputLoop(source); }));
            nameThread(source.thread, creating);
        }
    } catch (const std::exception& e) {
        const std::string why = describeFailure(e);
        gate.store(-1);
        gate.notify_all();
        if (exporter.joinable()) exporter.join();
        for (auto& q : m_queues) {
            if (q->workerThread.joinable()) q->workerThread.join();
        }
        for (auto& s : m_sources) {
            if (s->thread.joinable()) s->thread.join();
        }
        const std::lock_guard lock(m_errorMutex);
        m_error = "cannot create thread '" + creating + "': " + why +
                  "; nothing was processed (check ulimit -u and ulimit -v)";
        return 1;
    }
    gate.store(1);
    gate.notify_all();
    StatsSnapshot previous = stats();
    double nextReport = m_startSeconds + m_config.statsInterval;
    bool stopped = false;
    while (!m_exportDone.load(std::memory_order_acquire)) {
        {
            std::unique_lock lock(m_doneMutex);
            m_doneCv.wait_for(lock, std::chrono::milliseconds(20),
                              [this] { return m_exportDone.load(); });
        }
        if (!stopped && stopRequested.load()) {
            stopInputs();
            m_output->requestStop();  // an output waiting for a peer stops waiting
            stopped = true;
        }
        StatsSnapshot now = stats();
        logFloods(now);
        if (m_config.statsInterval > 0 && monotonicSeconds() >= nextReport) {
            std::cerr << formatStatsText(now, &previous) << std::flush;
            previous = std::move(now);
            nextReport += m_config.statsInterval;
        }
    }
    for (auto& q : m_queues) q->workerThread.join();
    for (auto& s : m_sources) {
        if (s->finished.load(std::memory_order_acquire)) {
            if (s->thread.joinable()) s->thread.join();
        } else {
            s->thread.detach();
            m_inputsDetached = true;
        }
    }
    exporter.join();
    logFloods(stats());
    return m_error.empty() ? 0 : 1;
}

StatsSnapshot Pipeline::stats() const {
    return m_board.snapshot(monotonicSeconds() - m_startSeconds);
}

}  // namespace rowprobe::core
