// TableBase: the part of every FlowTable<P, L> that knows neither the policy nor the row
// length, compiled once (table_base.cpp) instead of per policy × line size.
//
//   CacheTable            the non-template face of a table (StoragePlugin + introspection)
//   TableBase : CacheTable
//     geometry            rows, row mask, blocks of kRowsPerBlock rows
//     m_blockDeadline[]   min of each block's row deadlines (the sweep skips blocks not due);
//                         atomics because the export thread rewrites them in expiry=thread
//                         (relaxed loads and stores otherwise, i.e. plain moves)
//     m_tunnels[]         FlowTunnel per record (slot index), beside the records: written on
//                         create and read on export only for tunnelled flows
//     m_pace              the inline sweep's credit scheme (expiry.hpp)
//     m_locks, m_clock, m_sweeper     expiry=thread: row locks, the worker's published clock,
//                         the export thread's scan state and counters
//     m_admission         flood detector and admission (admission.hpp)
//     m_proc              process-plugin dispatch (process_dispatch.hpp)
//     m_stats, m_now, m_target, hash, seed, fragment cache
//   the StoragePlugin calls that need no policy: attach, enableProcessPlugins, stats,
//   sweepsInExportThread, rowOf, config, rowCount.
//
// FlowTable<P, L> (flow_table.hpp) adds the rows and records, whose layout depends on P and L,
// and everything that reads them: the packet path, expireRow, the sweeps and the flush.
//
// Thread ownership: the worker's, except m_sweeper (export thread; its counters are atomics
// the worker reads), m_clock (worker writes, export thread reads), m_locks and the block
// deadlines (both), and the prefaulter's state (prefault: the queue's input thread reads
// m_occupancy, which the worker publishes, and maps in record pages with madvise; it reads and
// writes nothing else of the table). Nothing here is called per packet except inline accessors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/admission.hpp"
#include "cache/expiry.hpp"
#include "cache/frag_cache.hpp"
#include "cache/hash.hpp"
#include "cache/process_dispatch.hpp"
#include "cache/row.hpp"
#include "cache/slot.hpp"
#include "cache/table_array.hpp"
#include "cache/table_config.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::storage {

/// One slot as seen by tests and tools (never used on the packet path).
struct SlotView {
    Slot slot = 0;
    bool occupied = false;
    unsigned position = 0;  ///< the policy's 0-based position (rank) of the slot
    char segment = ' ';     ///< the policy's segment letter (optional hook segmentOf), else ' '
    FlowKey key;
    std::uint32_t packets = 0;  ///< both directions
    TimeNs timeFirst = 0;
    TimeNs timeLast = 0;
};

/// The non-template face of every FlowTable<P, L>: the StoragePlugin surface plus
/// introspection for tests and tools. None of the extra functions is used on the packet path.
class CacheTable : public StoragePlugin {
public:
    virtual std::string_view policyName() const noexcept = 0;
    virtual const TableConfig& config() const noexcept = 0;
    virtual std::size_t rowCount() const noexcept = 0;
    virtual unsigned line() const noexcept = 0;
    /// The row a key maps to under this table's hash and seed.
    virtual std::size_t rowOf(const FlowKey& key) const noexcept = 0;
    virtual std::vector<SlotView> inspectRow(std::size_t row) const = 0;
    /// Empty when every structural invariant holds, else a description of the first violation.
    virtual std::string checkInvariants() const = 0;
};

class TableBase : public CacheTable {
public:
    bool enableProcessPlugins(std::span<ProcessPlugin* const> plugins) override;
    void attach(const ExportTarget& target) override;
    CacheStats stats() const noexcept override;
    bool sweepsInExportThread() const noexcept override { return m_locks.enabled(); }
    /// The input thread, while it waits for the worker: the plugins' pools first
    /// (ProcessDispatch::prefault), then the record planes the table is about to reach
    /// (prefaultPlanes).
    std::size_t prefault(std::size_t maxBytes) noexcept override;
    /// The planes prefaultPlanes wants present for `flows` flows in `rows` rows, of `planes`.
    static unsigned planesAhead(std::uint64_t flows, std::size_t rows, unsigned planes) noexcept;
    /// Tests: where plane 0 starts (null for a table on heap memory) and a plane's bytes.
    const std::byte* recordPlanes() const noexcept { return m_planes.base; }
    std::size_t planeBytes() const noexcept { return m_planes.planeBytes; }
    const TableConfig& config() const noexcept override { return m_config; }
    std::size_t rowCount() const noexcept override { return m_rowCount; }
    std::size_t rowOf(const FlowKey& key) const noexcept override {
        return m_config.hash->key(key, m_seed) & m_rowMask;
    }

protected:
    static constexpr std::size_t kRowsPerBlock = 64;

    /// Lays out `2^sizeLog2` records in rows of `line` slots; allocates the block deadlines,
    /// the tunnel facts, the locks (expiry=thread) and the admission filters. `rowBytes` is
    /// the derived table's row size, for the out-of-memory message.
    TableBase(const TableConfig& config, unsigned line, std::size_t rowBytes);

    /// ConfigError naming `size` and the MiB the table needed.
    [[noreturn]] static void throwNoMemory(const TableConfig& config, std::size_t rowBytes);

    /// The index of slot s of row r in the records, m_tunnels and the plugin areas:
    /// slot-major (row.hpp), so a sparsely filled table touches a few planes, not every page.
    std::size_t slotIndex(std::size_t r, Slot s) const noexcept {
        return static_cast<std::size_t>(s) * m_rowCount + r;
    }
    bool threaded() const noexcept { return m_locks.enabled(); }

    /// The records' planes (row.hpp), set by the derived table once it has mapped them: plane
    /// p holds every row's slot p, `planeBytes` long.
    struct Planes {
        std::byte* base = nullptr;  ///< null: heap memory (a small table), never prefaulted
        std::size_t planeBytes = 0;
        unsigned count = 0;
    };
    void setPlanes(const Planes& planes) noexcept { m_planes = planes; }
    /// One plane's bytes: a record per row.
    std::size_t rowBytes() const noexcept { return m_rowCount * sizeof(CachedFlow); }
    /// Worker, after each batch with prefault on: how many flows the table holds, for
    /// prefaultPlanes, and the pools' frontiers (relaxed stores).
    void publishForPrefault() noexcept {
        m_occupancy.store(m_stats.flowsInCache, std::memory_order_relaxed);
        if (m_proc.hasExt()) m_proc.publishFrontiers();
    }
    /// The prefaulter (one thread other than the worker): maps in, in order from plane 0 and at
    /// most `maxBytes` per call, the planes that the published occupancy says rows are about to
    /// write: plane p is first written by a row's (p+1)-th flow, and with flows spread over the
    /// rows as Poisson(m), m flows per row, a 4 KiB page of it (32 rows) is written once
    /// 32 · P(X > p) nears one; the planes up to the last with 32 · P(X > p) >= 1/2 and one
    /// more. Returns the bytes mapped in, 0 when there is nothing to do.
    std::size_t prefaultPlanes(std::size_t maxBytes) noexcept;

    /// A new flow in row r may expire at `due`: lowers its block's deadline (fetch-min when the
    /// export thread may rewrite it).
    void lowerBlockDeadline(std::size_t r, TimeNs due) noexcept {
        std::atomic<TimeNs>& block = m_blockDeadline[r >> m_blockShift];
        if (threaded()) {
            lowerDeadline(block, due);
        } else if (due < block.load(std::memory_order_relaxed)) {
            block.store(due, std::memory_order_relaxed);
        }
    }
    TimeNs blockDeadline(std::size_t b) const noexcept {
        return m_blockDeadline[b].load(std::memory_order_relaxed);
    }
    void setBlockDeadline(std::size_t b, TimeNs t) noexcept {
        m_blockDeadline[b].store(t, std::memory_order_relaxed);
    }
    /// The export thread replaces block b's deadline `seen` by `earliest` unless the worker
    /// lowered it meanwhile (then it takes the minimum), so it stays a lower bound.
    void replaceBlockDeadline(std::size_t b, TimeNs seen, TimeNs earliest) noexcept {
        if (!m_blockDeadline[b].compare_exchange_strong(seen, earliest, std::memory_order_relaxed))
            lowerDeadline(m_blockDeadline[b], earliest);
    }
    void clearBlockDeadlines() noexcept {
        for (std::size_t b = 0; b < m_blockCount; ++b) setBlockDeadline(b, kNever);
    }

    /// expiry=inline, after a batch: the blocks the sweep visits now (SweepPace, at least
    /// sweepMinBlocks).
    std::size_t inlineSweepBlocks() noexcept;
    /// expiry=thread, export thread: adds the blocks owed for the worker's clock advance to
    /// `now` (a full pass on the first call). False before the first packet.
    bool owePass(TimeNs now) noexcept;
    /// Whether the export thread has room for a whole row in its rings (else it stops at the
    /// current block and resumes there on the next call).
    bool sweepHasRoom(const ExportRing& ring, unsigned line) const noexcept;

    TableConfig m_config;
    std::size_t m_rowCount = 0;
    std::size_t m_rowMask = 0;
    std::size_t m_rowsPerBlock = 0;
    unsigned m_blockShift = 0;
    std::size_t m_blockCount = 0;
    std::unique_ptr<std::atomic<TimeNs>[]> m_blockDeadline;
    detail::TableArray<FlowTunnel> m_tunnels;  ///< per record, valid where `tunnelled`
    HashBatchFn m_hashBatch = nullptr;
    std::uint64_t m_seed = 0;
    std::optional<FragCache> m_frag;
    ExportTarget m_target;
    CacheStats m_stats;
    TimeNs m_now = 0;        ///< the sweep's clock: time of the last batch's last packet
    TimeNs m_batchLast = 0;  ///< timestamp of the last packet of the batch being processed
    SweepPace m_pace;        ///< expiry=inline
    std::size_t m_sweepCursor = 0;
    Admission m_admission;
    // expiry=thread.
    RowLocks m_locks;                ///< one per row; disabled in expiry=inline
    std::atomic<TimeNs> m_clock{0};  ///< the worker's m_now, for the export thread
    /// State of the export thread's scan (its own) and its counters (read by the worker).
    struct Sweeper {
        alignas(64) SweepPace pace;
        std::size_t owed = 0;    ///< blocks still to visit
        std::size_t cursor = 0;  ///< next block
        SweepCounters counters;
    } m_sweeper;
    ProcessDispatch m_proc;
    // prefault: the worker publishes, the prefaulter (the input thread) maps in.
    Planes m_planes;
    std::atomic<std::uint64_t> m_occupancy{0};  ///< worker → prefaulter: flowsInCache
    std::size_t m_planesPopulated = 0;          ///< prefaulter only: bytes from plane 0
    bool m_planesRefused = false;               ///< prefaulter only: the kernel said EINVAL
};

}  // namespace rowprobe::storage
