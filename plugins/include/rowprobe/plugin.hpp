// The four plugin kinds and the contracts between them and the core.
//
//   InputPlugin::read ──PacketBlock──▶ worker: parsePacket ──▶ StoragePlugin::processBatch
//                                                                  │ FlowRecord (ExportRing)
//                                                                  ▼
//                                            export thread: OutputPlugin::write(span)
//
// Virtual calls happen once per block of up to 64 packets (input, storage) or once per batch
// of exported records (output), never per packet. Process plugins (rowprobe/process.hpp) run
// inside the storage's update step through hook arrays resolved at start-up.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/spsc_ring.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe {

enum class PluginKind : std::uint8_t { Input, Storage, Process, Output };

/// Base of every plugin instance; the registry's factories return it.
class Plugin {
public:
    virtual ~Plugin() = default;
};

/// Reads packets. One instance per queue, used by one thread only (the queue's input thread, or
/// its worker when `neverBlocks`), except `stop` and `stats`, which other threads may call at
/// any time.
class InputPlugin : public Plugin {
public:
    enum class Status : std::uint8_t {
        Ok,       ///< `block` holds at least one packet
        Timeout,  ///< live input had nothing within its read timeout (block empty): lets the
                  ///< worker expire flows on wall-clock time
        End,      ///< no more packets, ever (end of file, or stopped)
    };
    /// Fills `block` (cleared by the caller) with up to kMaxBatch packets and sets block.link.
    /// May block up to the plugin's read timeout. Throws RuntimeError on an I/O failure.
    virtual Status read(PacketBlock& block) = 0;
    /// Any thread: make a blocking read return End soon (SIGINT, SIGTERM, -c reached).
    virtual void stop() noexcept {}
    /// Any thread: counters of the capture itself (e.g. kernel drops). Must be thread-safe.
    virtual InputStats stats() const { return {}; }
    /// True for live sources: the worker then expires idle flows on wall-clock time.
    virtual bool live() const noexcept { return false; }
    /// True when `read` never waits for packets to arrive (a regular file, a generator). Fixed
    /// after construction. The core may then call `read` (and `stats`) from the queue's worker
    /// thread instead of giving the input a thread of its own.
    virtual bool neverBlocks() const noexcept { return false; }
    /// The system's index of the network interface this input captures on (if_nametoindex),
    /// or 0 when it has none (a file, a generator). Fixed after construction.
    virtual std::uint32_t interfaceIndex() const noexcept { return 0; }
};

/// The ring that carries finished records from a worker to the export thread.
using ExportRing = SpscRing<FlowRecord>;

class ExtRing;
class ProcessPlugin;

/// Where a storage plugin sends finished records. `ring` is owned by the core; `abandon` turns
/// true only if the export thread failed, so a full ring never deadlocks the worker.
struct ExportTarget {
    ExportRing* ring = nullptr;
    const std::atomic<bool>* abandon = nullptr;
    std::uint8_t queue = 0;
    /// Process plugins: the bytes of the records pushed into `ring` (FlowRecord::ext), and of
    /// those the export thread pushes into its own ring under expiry=thread. Owned by the core.
    ExtRing* ext = nullptr;
    ExtRing* sweepExt = nullptr;
};

/// Keeps flows. One instance per queue, owned and called by that queue's worker thread only.
class StoragePlugin : public Plugin {
public:
    /// Called once before the first batch.
    virtual void attach(const ExportTarget& target) = 0;
    /// The packet path: updates flows for every packet in arrival order and incrementally
    /// expires inactive flows. No allocation, lock (except the optional row lock), exception
    /// or log line.
    virtual void processBatch(std::span<ParsedPacket> batch) noexcept = 0;
    /// The flow hashes processBatch computes for `batch`, into `out` (one per packet), so that
    /// another thread can compute them ahead of the worker (the input thread of a queue whose
    /// worker is behind). Pure: reads only what start-up fixed, callable from any thread.
    /// False when the storage offers none (the default); processBatch then hashes itself.
    virtual bool hashBatch(std::span<const ParsedPacket> /*batch*/,
                           std::uint64_t* /*out*/) const noexcept {
        return false;
    }
    /// processBatch for a batch whose hashes hashBatch computed (the same packets, unchanged
    /// since). The default ignores them.
    virtual void processHashedBatch(std::span<ParsedPacket> batch,
                                    const std::uint64_t* /*hashes*/) noexcept {
        processBatch(batch);
    }
    /// Expires flows up to time `now` without packets (idle live input).
    virtual void advanceTime(TimeNs now) noexcept = 0;
    /// Exports every cached flow with EndReason::ForcedEnd (end of input, shutdown).
    virtual void flushAll() noexcept = 0;
    /// Snapshot of the table's counters (worker thread).
    virtual CacheStats stats() const noexcept = 0;
    /// True when this instance wants its expiry scan run by the export thread (the cache's
    /// `expiry=thread`). Fixed after construction; any thread. The core then calls
    /// sweepFromExportThread regularly, and advanceTime only moves the clock that scan uses.
    virtual bool sweepsInExportThread() const noexcept { return false; }
    /// Export thread only, and only when sweepsInExportThread(): scans a bounded part of the
    /// table for flows expired at the worker's latest clock and pushes them into `ring`, a ring
    /// the export thread owns and drains itself (never the worker's ring). Runs concurrently
    /// with processBatch / advanceTime / flushAll: rows are taken with try-locks, busy rows are
    /// skipped until a later call. Never waits for room: it stops early when `ring` cannot take
    /// a whole row. Returns the number of records pushed. No allocation, exception or log line.
    virtual std::size_t sweepFromExportThread(ExportRing& /*ring*/) noexcept { return 0; }
    /// Start-up, before attach: the process plugins (-p, in order; rowprobe/process.hpp) whose
    /// hooks this storage calls. Returns false when it cannot run them (the core then stops
    /// with a ConfigError). The plugins outlive the storage.
    virtual bool enableProcessPlugins(std::span<ProcessPlugin* const> plugins) {
        return plugins.empty();
    }
    /// Called by one thread other than the worker (the queue's input thread while it waits for
    /// the worker to free a block): makes up to `maxBytes` of memory that the worker is about
    /// to write for the first time present, so that the worker does not stop for those page
    /// faults. Returns the bytes it made present, 0 when nothing is due.
    virtual std::size_t prefault(std::size_t /*maxBytes*/) noexcept { return 0; }
};

/// Writes records. One instance, called by the export thread only.
class OutputPlugin : public Plugin {
public:
    /// Formats and writes a batch of records. May buffer. Throws RuntimeError on I/O failure.
    virtual void write(std::span<const FlowRecord> records) = 0;
    /// Pushes buffered data out (called when the export rings are idle, and at exit).
    virtual void flush() {}
    /// Called once by the export thread after the last write, before the final statistics are
    /// read: delivers everything still buffered and closes the output. May block for a bounded,
    /// plugin-configured time (e.g. the ipfix TCP `linger` while a collector is down); records
    /// it cannot deliver are counted in stats().dropped. The default flushes. Plugins must
    /// also behave when it is never called (their destructor then does the same work).
    virtual void finish() { flush(); }
    /// Log rotation (SIGHUP, `systemctl reload`): called by the export thread between batches.
    /// A plugin writing to a file writes out what it buffered, and when its path no longer names
    /// the file it has open (renamed or removed by logrotate) closes that file and opens the
    /// path anew, so records written after the call land in the new file and none is lost.
    /// Throws RuntimeError when the new file cannot be opened (the old one then stays in use).
    /// The default does nothing (network outputs, stdout).
    virtual void reopen() {}
    /// Thread-safe counters (records written, dropped).
    virtual OutputStats stats() const { return {}; }
    /// Called once from the main thread when a stop was requested (SIGINT/SIGTERM), while the
    /// export thread may be inside write()/flush(): an output that can wait for a peer (a
    /// client to connect, a stalled collector) stops waiting from now on, so that shutdown
    /// ends within the plugin's bounded time; what it then cannot deliver is counted in
    /// stats().dropped. Must be thread-safe. The default does nothing.
    virtual void requestStop() {}
    /// Called once after construction, before the first write: `byQueue[q]` is the interface
    /// index of the input feeding queue q (FlowRecord::queue), 0 where unknown. Outputs that
    /// export an ingress interface (ipfix) use it; the default ignores it.
    virtual void setInputInterfaces(std::span<const std::uint32_t> byQueue) { (void)byQueue; }
    /// Start-up, before the first write: the process plugins (-p, in order). A record's
    /// instances name their plugin by index into this list (rowprobe/plugin_data.hpp); each
    /// plugin's fields() describe them. Throws ConfigError when the output's configuration
    /// does not fit the plugins. The default ignores plugin data.
    virtual void setProcessPlugins(std::span<const ProcessPlugin* const> /*plugins*/) {}
};

}  // namespace rowprobe
