// FlowTable<P, L>: the flow cache of one worker, a row-divided hash table whose replacement
// policy P is a template parameter (docs/design/flow-cache.md, docs/style.md).
//
//   processBatch(≤64 packets)                      one virtual call per batch
//   ├ 0  fragment cache: fill ports of non-first fragments (changes keys, so before hashing)
//   ├ 1  hash every key (one HashBatchFn call)
//   ├ 2  grouped loads: prefetch every packet's row; then per packet read its row's tags and
//   │    load both lines of the candidate record (a hint: the tag match, else the slot a miss
//   │    would take), all 64 packets' loads in flight together (expiry=inline)
//   ├ 3  strictly in arrival order: update packet i (full lookup again, never the hint)
//   └ 4  incremental sweep: a few blocks of 64 rows, skipping blocks and rows not yet due;
//        a due block's records are prefetched two due rows ahead of the one being expired
//
//   h = hash(canonical key)      row = h & (rows-1)      tag = top 8 bits of h (0 → 1)
//
//   m_rows[rows]           tags[L] | RowState | deadline      (row.hpp)
//   m_records[L * rows]    CachedFlow, 128 B, never moves, slot-major: s*rows + r (row.hpp)
//   m_blockDeadline[rows/64]  min of the 64 rows' deadlines   (sweep skip, Suricata style)
//   m_tunnels[rows * L]    FlowTunnel, 40 B, beside m_records: outer addresses, type, id of an
//                          inner flow (--tunnel inner|both); written on create and read on
//                          export only when CachedFlow::tunnelled, so never touched otherwise
//
// Per packet (update):
//   1. tag match (SIMD) → full key compare → slot s, or none.
//   2. Found: the flow ends *before* this packet joins it if (ipfixprobe v5.7 order)
//        a. a SYN (SYN-ACK too) arrives in a direction whose flags hold FIN or RST → EndOfFlow;
//        b. ts - last >= inactive → InactiveTimeout (EndOfFlow if FIN/RST was seen);
//        c. ts - first >= active  → ActiveTimeout.
//      Then it is exported and erased (policy.onErase) and the packet takes the miss path.
//      Checked before promotion, so an ended flow is never moved to the front.
//   3. Hit: statistics (1-based position = policy position + 1), policy.onHit, counters.
//   4. Miss: policy.pickFree; if the row is full, every expired record of the row is exported
//      with its timeout reason (reclaim, missReclaim) and pickFree asked again; only if none
//      expired is policy.victim exported with LackOfResources (exactly one per new flow).
//      create(s), policy.onInsert(s, vacancy).
//   Nothing on this path allocates, locks, throws, logs or makes a virtual call.
//
// Expiry and its lateness bound. Flows are ended exactly on their own packets (step 2), and the
// reclaim of step 4 uses the packet's time too. Idle flows are found by the sweep, which runs on
// packet time: the timestamp of the latest batch's last packet (advanceTime sets it explicitly),
// the time ipfixprobe's per-packet sweep would use at that point. The clock follows the capture
// even when it steps back (concatenated pcaps, e.g. ipfixprobe's tls.pcap, interleave 2015 and
// 2020 sessions): a packet with a bogus future timestamp costs at most one early sweep (none
// unless it ends a batch) instead of poisoning the clock for the rest of the run, and a capture
// replayed in pieces keeps its flows together as ipfixprobe does. Not the batch's newest time: a
// batch of tls.pcap holding 2020 packets but ending in 2015 would expire a live 2015
// connection there (24 + 8 packets where ipfixprobe has one flow of 32).
// Every batch the sweep visits max(sweepMinBlocks, blocks × Δt / sweepPeriod) blocks of 64 rows,
// Δt being the packet time since the previous batch. A block whose deadline is in the future costs one
// compare; a row whose deadline is in the future costs one compare; only due rows touch
// records. Hence a full pass over the table completes within
//     min( ⌈blocks / sweepMinBlocks⌉ batches,  sweepPeriod of packet time + one batch )
// (defaults: 2^17 records, L = 16 → 128 blocks → ≤ 128 batches or ≤ 1 s), which bounds how
// late an expired flow is exported. Lateness never changes flow boundaries or reasons: a late
// packet of an expired flow is caught by step 2, a full row reclaims expired records first,
// and advanceTime(now) / flushAll run a complete pass, so everything due is exported with its
// timeout reason before forced ends.
//
// Deadlines are lower bounds: create lowers the row's and the block's deadline to the new
// flow's earliest expiry; a hit only delays its own flow's expiry, so bounds stay valid; the
// sweep and the reclaim recompute a row exactly, the sweep recomputes a block exactly.
//
// Export: a finished flow becomes an oriented FlowRecord (src = initiator) and is pushed into
// the ExportRing with waitPush (spins, then yields, while the ring is full; gives up only when
// the export thread abandoned it). Counted per reason, and as exportedBySweep / exportedAtEnd.
//
// Thread ownership, `expiry=inline` (default): single writer. Every member is touched only by
// the worker that owns the table (processBatch, advanceTime, flushAll, stats); the export thread
// sees only the ring. No lock anywhere.
//
// `expiry=thread` (docs/design/flow-cache.md, "Expiry modes"): the export thread finds expired
// flows instead of the worker's sweep, through sweepFromExportThread, while the worker keeps
// running.
//   m_locks[rows]   one std::atomic<uint8_t> per row (0 free, 1 held), a separate array so the
//                   row layout does not change; 64 locks per cache line.
//   worker          locks a row BEFORE its lookup and unlocks after the update (spin with pause,
//                   yield after 128 spins: the other holder may have been preempted), so no
//                   slot index survives an unlock. It still ends flows on their own packets and
//                   reclaims expired records of a full row, under that lock. Its incremental
//                   sweep is off; it publishes its clock (m_clock, release) after every batch and
//                   in advanceTime, which otherwise expires nothing.
//   export thread   try-locks (never waits): a busy row is skipped and its block stays due for
//                   the next pass. Under the lock it DETACHES the expired records of the row:
//                   builds their FlowRecords into its own buffer, frees the tags, calls the
//                   policy's onErase, recomputes the row deadline, and counts the records in its
//                   own atomic counters, still under the lock (so flushAll, which locks every
//                   row, returns with them counted); stats() adds them to the worker's
//                   (flowsInCache is the worker's count minus the export thread's removals).
//                   After unlocking it pushes the records into its own ring (never the
//                   worker's, so each ring keeps one producer). It never touches m_stats, the frag cache or the flood detector.
//   block deadlines are atomics: the worker lowers one with a CAS loop (fetch-min); the export
//                   thread replaces the value it read only if nobody lowered it meanwhile (CAS),
//                   else takes the minimum, so a deadline stays a lower bound.
//   Policies: onErase may then run on the export thread under the row lock; a policy must keep
//   all mutable state in its RowState / SlotMeta (as the contract already says) and must not
//   evict from onErase.
// The pace of the export thread's scan follows the worker's clock: max(blocks × Δclock /
// sweepPeriod) per call, a full pass per sweepPeriod of packet time, so an idle flow leaves at
// most sweepPeriod (default 1 s) of packet time late, plus the export thread's own delay. Flow
// boundaries and end reasons are the same as inline: both decide with the same expiryAt at a
// clock the worker has reached, and a late packet of an expired flow is caught by step 2.
// Introspection (CacheTable) is for tests and tools on the worker's thread, export thread idle.
//
// Flood detector (flood_detector.hpp): after every batch the worker hands its clock and its
// count of new-flow attempts (flows created + first packets refused by admission) to the
// detector; at each interval boundary the alarm state lands in CacheStats. While an alarm is on,
// `flood-admission` protects established flows: both act only where a new flow would evict a
// live one (full row, nothing expired): `second-packet` evicts for a flow only when a second packet of
// it arrives (a 64 Ki-entry filter of hash fingerprints remembers the first; that first packet
// is counted in admissionDeferred and in no record), `back` evicts a flow that has had no hit
// yet (the one furthest back in the policy's order) before asking the policy for its victim:
// new flows go first, established ones stay. `back` keeps that per-row bitmask of hitless
// flows always up to date (one OR per insert, one AND per hit, 4 bytes per row), so it is
// exact when the alarm rises; a flow evicted before the alarm is new again when it returns.
// The second-packet filter is forgotten when the alarm ends. A flow that
// continues after a timeout or TCP end always finds a free slot and is never refused.
//
// Costs: a hit touches the row line and the record's two adjacent lines, all loaded in stage 2
// (expiry=thread: prefetched a few packets ahead, as rows may change under the worker).
// Grouping matters when the table is beyond the caches: with 2^20 live flows in 2^22 records,
// uniform random, tools/bench_cache measures ~18 Mpps against ~10 with per-packet prefetches
// 8 packets ahead (docs/performance.md, "Cache alone with the gen generator"). Before grouping,
// tools/bench_table (L = 16, lru, xxh3, 2^17 records, random 5-tuples, batches of 64, on the
// shared 2-core development VM) gave: 10k flows uniform ≈ 46 ns per packet of CPU time (21.5 Mpps
// per CPU-second; 24 Mpps wall when the host was idle), Zipf ≈ 41 ns; 500k flows (working set
// beyond L2, 2^21 records) ≈ 130 ns. The hash is ~5% of it, the SWAR rank update ~25
// instructions.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cache/flood_detector.hpp"
#include "cache/frag_cache.hpp"
#include "cache/hash.hpp"
#include "cache/prefetch.hpp"
#include "cache/process_dispatch.hpp"
#include "cache/row.hpp"
#include "cache/row_policy.hpp"
#include "cache/slot.hpp"
#include "cache/table_array.hpp"
#include "cache/table_config.hpp"
#include "cache/tag_match.hpp"
#include "rowprobe/errors.hpp"
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

namespace detail {

/// The body of a spin-wait loop (x86 `pause`).
inline void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace detail

template <class P, unsigned L>
class FlowTable final : public CacheTable {
    static_assert(isSupportedLine(L), "L must be 4, 8, 16 or 32");
    static_assert(RowPolicy<P, L>, "P does not satisfy RowPolicy<P, L> (see row_policy.hpp)");

public:
    using RowType = Row<P, L>;

    /// Reads the `cache` options (throws ConfigError) and builds the table and the policy.
    explicit FlowTable(const Options& options) : FlowTable(parseTableConfig(options), options) {}

    FlowTable(const TableConfig& config, const Options& policyOptions)
        : m_config(config), m_policy(policyOptions) {
        if (config.line != L) {
            throw ConfigError({.component = "storage 'cache'",
                               .option = "line",
                               .value = std::to_string(config.line),
                               .problem = "internal: table built for line " + std::to_string(L)});
        }
        const std::size_t records = std::size_t{1} << config.sizeLog2;
        m_rowCount = records / L;
        m_rowMask = m_rowCount - 1;
        m_rowsPerBlock = std::min<std::size_t>(kRowsPerBlock, m_rowCount);
        m_blockShift = static_cast<unsigned>(std::countr_zero(m_rowsPerBlock));
        m_blockCount = m_rowCount / m_rowsPerBlock;
        try {
            m_rows = detail::TableArray<RowType>(m_rowCount);
            std::uninitialized_value_construct_n(m_rows.data(), m_rowCount);
            m_records = detail::TableArray<CachedFlow>(records, m_rowCount * kHugePlanes);
            // Large tables are mapped zero pages, faulted in as rows are first used; small ones
            // are zeroed here. The first kHugePlanes planes, which every row with a few flows
            // reaches, take huge pages; the sparse planes beyond them 4 KiB pages until the
            // table holds enough flows to fill them too (promoteHugePages).
            if (!m_records.zeroed())
                std::memset(static_cast<void*>(m_records.data()), 0, records * sizeof(CachedFlow));
            // Tunnel facts of inner flows, beside the records (CachedFlow has no room for 40
            // bytes): written and read only for flows whose `tunnelled` is set, so the pages
            // of a capture without tunnels are never touched.
            m_tunnels = detail::TableArray<FlowTunnel>(records);
            m_blockDeadline = std::make_unique<std::atomic<TimeNs>[]>(m_blockCount);
            for (std::size_t b = 0; b < m_blockCount; ++b)
                m_blockDeadline[b].store(kNever, std::memory_order_relaxed);
            if (config.expiryThread)
                m_locks = std::make_unique<std::atomic<std::uint8_t>[]>(m_rowCount);
            if (config.flood.admission == FloodAdmission::SecondPacket)
                m_seenOnce.assign(kSeenOnceSize, 0);
            if (config.flood.admission == FloodAdmission::Back) m_probation.assign(m_rowCount, 0);
        } catch (const std::bad_alloc&) {
            throw ConfigError(
                {.component = "storage 'cache'",
                 .option = "size",
                 .value = std::to_string(config.sizeLog2),
                 .problem =
                     "cannot allocate " +
                     std::to_string((records * sizeof(CachedFlow) + m_rowCount * sizeof(RowType)) >>
                                    20) +
                     " MiB for 2^" + std::to_string(config.sizeLog2) + " records"});
        }
        m_hashBatch = config.hash->batch;
        m_seed = config.seed;
        if (config.fragEnabled) m_frag.emplace(config.fragSize, config.fragTimeout, config.seed);
        if (config.flood.enabled) m_flood.emplace(config.flood);
        m_threaded = config.expiryThread;
        m_stats.capacity = records;
        m_promoteAt = m_rowCount * kHugePlanes;
    }

    // --- StoragePlugin ----------------------------------------------------------------------

    bool enableProcessPlugins(std::span<ProcessPlugin* const> plugins) override {
        if (!plugins.empty()) m_proc.configure(plugins, m_rowCount * L);
        return true;
    }

    void attach(const ExportTarget& target) override {
        m_target = target;
        if (m_target.abandon == nullptr) m_target.abandon = &kNeverAbandon;
    }

    void processBatch(std::span<ParsedPacket> batch) noexcept override {
        m_batchLast = m_now;
        if (m_threaded && m_proc.enabled()) m_proc.drainReturned();
        for (std::size_t off = 0; off < batch.size(); off += kMaxBatch) {
            processPart(batch.subspan(off, std::min(kMaxBatch, batch.size() - off)));
        }
        m_now = m_batchLast;  // the clock follows the capture, even backwards
        if (m_stats.flowsInCache >= m_promoteAt) [[unlikely]]
            promoteHugePages();
        if (m_threaded) {
            m_clock.store(m_now, std::memory_order_release);
        } else {
            sweepIncremental();
        }
        observeFlood();
    }

    void advanceTime(TimeNs now) noexcept override {
        m_now = now;
        observeFlood();
        if (m_threaded) {  // the export thread sweeps, on this clock
            m_clock.store(now, std::memory_order_release);
            return;
        }
        sweepBlocks(m_blockCount);
        m_lastSweep = m_now;
        m_sweepCredit = 0;
    }

    void flushAll() noexcept override {
        if (m_threaded && m_proc.enabled()) m_proc.drainReturned();
        if (m_threaded) {
            flushLocked();
            return;
        }
        advanceTime(m_now);  // everything due leaves with its timeout reason first
        for (std::size_t r = 0; r < m_rowCount; ++r) {
            // Row after row, each exported flow's record and plugin data would be a miss
            // waited for alone: records are prefetched 2·kFlushAhead rows ahead, plugin data
            // (found through the records' handles) kFlushAhead rows ahead.
            if (r + 2 * kFlushAhead < m_rowCount) prefetchRecords(r + 2 * kFlushAhead);
            if (m_proc.hasExt() && r + kFlushAhead < m_rowCount)
                prefetchPluginData(r + kFlushAhead);
            RowType& row = m_rows[r];
            if (m_proc.hasExt()) loadPluginData(r, occupiedMask(row));
            for (std::uint32_t m = occupiedMask(row); m != 0; m &= m - 1) {
                retire(r, static_cast<Slot>(std::countr_zero(m)), EndReason::ForcedEnd);
                ++m_stats.exportedAtEnd;
            }
            row.deadline = kNever;
        }
        for (std::size_t b = 0; b < m_blockCount; ++b)
            m_blockDeadline[b].store(kNever, std::memory_order_relaxed);
    }

    CacheStats stats() const noexcept override {
        CacheStats out = m_stats;
        if (m_threaded) {
            for (std::size_t i = 0; i < kEndReasonSlots; ++i) {
                out.exported[i] += m_sweeper.exported[i].load(std::memory_order_relaxed);
            }
            out.exportedBySweep += m_sweeper.bySweep.load(std::memory_order_relaxed);
            out.flowsInCache -= m_sweeper.removed.load(std::memory_order_relaxed);
            out.pluginDataDropped += m_sweeper.pluginDropped.load(std::memory_order_relaxed);
        }
        if (m_proc.enabled()) out.extPoolExhausted = m_proc.poolExhausted();
        return out;
    }

    bool sweepsInExportThread() const noexcept override { return m_threaded; }

    /// expiry=thread, export thread only: see the essay above. Visits as many blocks as the
    /// worker's clock advance asks for (credit scheme of sweepIncremental), stops at a block
    /// when `ring` cannot take a whole row and resumes there on the next call.
    std::size_t sweepFromExportThread(ExportRing& ring) noexcept override {
        if (!m_threaded) return 0;
        const TimeNs now = m_clock.load(std::memory_order_acquire);
        Sweeper& sw = m_sweeper;
        if (now == 0) return 0;  // no packet yet
        if (!sw.started) {       // the first call makes a full pass
            sw.started = true;
            sw.lastClock = now;
            sw.owed = m_blockCount;
        }
        const TimeNs dt = now > sw.lastClock ? now - sw.lastClock : 0;
        sw.lastClock = now;
        if (dt >= m_config.sweepPeriod) {
            sw.owed = m_blockCount;
            sw.credit = 0;
        } else {
            sw.credit += dt * m_blockCount;
            const std::size_t add = static_cast<std::size_t>(sw.credit / m_config.sweepPeriod);
            sw.credit -= static_cast<TimeNs>(add) * m_config.sweepPeriod;
            sw.owed = std::min(m_blockCount, sw.owed + add);
        }
        std::size_t pushed = 0;
        while (sw.owed > 0) {
            const std::size_t b = sw.cursor;
            std::atomic<TimeNs>& block = m_blockDeadline[b];
            TimeNs seen = block.load(std::memory_order_relaxed);
            if (seen <= now) {
                TimeNs earliest = kNever;
                const std::size_t first = b << m_blockShift;
                for (std::size_t r = first; r < first + m_rowsPerBlock; ++r) {
                    if (ring.capacity() - ring.size() < L) return pushed;  // resume at this block
                    if (m_proc.enabled() && m_target.sweepExt != nullptr &&
                        m_target.sweepExt->freeBytes() < 2 * L * kMaxPluginData)
                        return pushed;  // room for a whole row's plugin data, wrap included
                    pushed += sweepRowLocked(r, now, seen, earliest, ring);
                }
                if (!block.compare_exchange_strong(seen, earliest, std::memory_order_relaxed)) {
                    lowerDeadline(block, earliest);  // the worker lowered it meanwhile
                }
            }
            sw.cursor = (b + 1) & (m_blockCount - 1);
            --sw.owed;
        }
        return pushed;
    }

    // --- CacheTable (tests, tools) ----------------------------------------------------------

    std::string_view policyName() const noexcept override { return P::kName; }
    const TableConfig& config() const noexcept override { return m_config; }
    std::size_t rowCount() const noexcept override { return m_rowCount; }
    unsigned line() const noexcept override { return L; }
    std::size_t rowOf(const FlowKey& key) const noexcept override {
        return m_config.hash->key(key, m_seed) & m_rowMask;
    }

    std::vector<SlotView> inspectRow(std::size_t r) const override {
        std::vector<SlotView> out;
        const ConstRowRef<P, L> row = constRef(r);
        for (Slot s = 0; s < Slot{L}; ++s) {
            SlotView v;
            v.slot = s;
            v.occupied = row.occupied(s);
            v.position = m_policy.position(row, s);
            if constexpr (requires { m_policy.segmentOf(row, s); })
                v.segment = m_policy.segmentOf(row, s);
            if (v.occupied) {
                const CachedFlow& f = row.rec(s);
                v.key = f.key;
                v.packets = f.packets[0] + f.packets[1];
                v.timeFirst = f.timeFirst;
                v.timeLast = f.timeLast;
            }
            out.push_back(v);
        }
        return out;
    }

    std::string checkInvariants() const override {
        std::uint64_t occupied = 0;
        for (std::size_t r = 0; r < m_rowCount; ++r) {
            const RowType& row = m_rows[r];
            const std::string where = "row " + std::to_string(r);
            if constexpr (requires { row.state.order.valid(); }) {
                if (!row.state.order.valid()) return where + ": ranks are not a permutation";
            }
            if constexpr (requires { m_policy.checkRow(constRef(r)); }) {
                const std::string broken = m_policy.checkRow(constRef(r));
                if (!broken.empty()) {
                    std::string problem = where;
                    problem.append(": policy '").append(P::kName).append("': ").append(broken);
                    return problem;
                }
            }
            TimeNs earliest = kNever;
            for (Slot s = 0; s < Slot{L}; ++s) {
                if (row.tags[s] == kEmptyTag) continue;
                ++occupied;
                const CachedFlow& f = recordAt(r, s);
                const std::uint64_t h = m_config.hash->key(f.key, m_seed);
                if (f.hashHi != h >> 32) return where + ": stale hash";
                if ((h & m_rowMask) != r) return where + ": flow in the wrong row";
                if (tagOf(h) != row.tags[s]) return where + ": tag does not match the flow";
                earliest = std::min(earliest, f.deadline(m_config.inactive, m_config.active));
            }
            if (row.deadline > earliest) return where + ": deadline later than a flow's expiry";
            if (m_blockDeadline[r >> m_blockShift].load(std::memory_order_relaxed) > row.deadline) {
                return where + ": block deadline later than the row's";
            }
        }
        if (occupied != stats().flowsInCache) {
            return "flowsInCache " + std::to_string(stats().flowsInCache) + " but " +
                   std::to_string(occupied) + " occupied slots";
        }
        return {};
    }

private:
    friend class RowRef<P, L>;

    static constexpr std::size_t kRowsPerBlock = 64;
    /// Due rows between the one the sweep expires and the one whose records it prefetches.
    static constexpr std::size_t kSweepAhead = 2;
    /// Rows between the one flushAll exports and the one whose plugin data it prefetches.
    static constexpr std::size_t kFlushAhead = 4;
    static constexpr std::size_t kLookAhead = 8;
    /// Planes of m_records on huge pages from the start (row.hpp): L/4 holds every row's first
    /// four flows, which a table at a quarter of its capacity has in most rows.
    static constexpr std::size_t kHugePlanes = std::max(1U, L / 4);
    static constexpr EndReason kAlive = static_cast<EndReason>(0);  ///< "no reason to end"
    static constexpr std::uint8_t kFin = 0x01;
    static constexpr std::uint8_t kSyn = 0x02;
    static constexpr std::uint8_t kRst = 0x04;
    static constexpr std::uint8_t kAck = 0x10;
    static inline const std::atomic<bool> kNeverAbandon{false};
    /// Entries of the second-packet admission filter (4 bytes each: 256 KiB).
    static constexpr std::size_t kSeenOnceSize = std::size_t{1} << 16;
    static constexpr unsigned kSpinsBeforeYield = 128;

    /// The index of slot s of row r in m_records, m_tunnels and the plugin areas: slot-major
    /// (row.hpp), so a sparsely filled table touches a few planes, not every page.
    std::size_t slotIndex(std::size_t r, Slot s) const noexcept {
        return static_cast<std::size_t>(s) * m_rowCount + r;
    }
    CachedFlow& recordAt(std::size_t r, Slot s) noexcept { return m_records[slotIndex(r, s)]; }
    const CachedFlow& recordAt(std::size_t r, Slot s) const noexcept {
        return m_records[slotIndex(r, s)];
    }
    RowRef<P, L> rowRef(std::size_t r) noexcept {
        return RowRef<P, L>(m_rows[r], &m_records[r], m_rowCount, *this, r);
    }
    ConstRowRef<P, L> constRef(std::size_t r) const noexcept {
        return ConstRowRef<P, L>(m_rows[r], &m_records[r], m_rowCount);
    }
    static std::uint32_t occupiedMask(const RowType& row) noexcept {
        constexpr std::uint32_t kAll = L == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << L) - 1;
        return ~TagMatch::template match<L>(row.tags.data(), kEmptyTag) & kAll;
    }

    // --- packet path ------------------------------------------------------------------------

    void processPart(std::span<ParsedPacket> part) noexcept {
        if (m_frag) {
            for (ParsedPacket& pkt : part) {
                if (pkt.frag.isFragment) m_frag->process(pkt, m_stats);
            }
        }
        std::array<std::uint64_t, kMaxBatch> hashes;  // stage 1: hash every key
        m_hashBatch(part, m_seed, hashes.data());
        const std::size_t n = part.size();
        if (m_threaded) {  // rows may change under us between lookups: prefetch addresses only
            for (std::size_t i = 0; i < std::min(n, 2 * kLookAhead); ++i) prefetchLocked(hashes[i]);
            for (std::size_t i = 0; i < n; ++i) {
                if (i + 2 * kLookAhead < n) prefetchLocked(hashes[i + 2 * kLookAhead]);
                const std::size_t r = hashes[i] & m_rowMask;
                lockRow(r);
                update(part[i], hashes[i]);
                unlockRow(r);
            }
            return;
        }
        // Stage 2, grouped: every row of the part in flight at once, then per packet its row's
        // tags and a demand load of both lines of its candidate record. Issued back to back, the
        // independent loads overlap in the out-of-order window; software prefetches one packet
        // at a time did not (docs/performance.md, "What limits it"). A repeated hash (one busy
        // flow) needs no second load.
        for (std::size_t i = 0; i < n; ++i) prefetchRow(hashes[i]);
        if (m_proc.enabled()) {
            // The hooks read the payload's first bytes (http scans 32 for its method, tls reads
            // the record header): lines the parser has not touched past the headers.
            for (const ParsedPacket& pkt : part) {
                const auto payload = pkt.payload();
                if (payload.empty()) continue;
                detail::prefetchRead(payload.data());
                detail::prefetchRead(payload.data() + std::min<std::size_t>(payload.size(), 32) -
                                     1);
            }
        }
        std::uint64_t touched = 0;
        if (m_proc.hasExt()) {
            // Plugins with tier-2 records: a second pass reads each candidate's handles (in its
            // record, loaded by the first) and loads the lines of the tier-2 records the hooks
            // will write, so those misses overlap too.
            std::array<std::uint32_t, kMaxBatch> slots;
            for (std::size_t i = 0; i < n; ++i) {
                if (i == 0 || hashes[i] != hashes[i - 1]) {
                    touched ^= loadCandidate(hashes[i], &slots[i]);
                } else {
                    slots[i] = slots[i - 1];
                }
            }
            for (std::size_t i = 0; i < n; ++i) {
                if (i == 0 || slots[i] != slots[i - 1])
                    touched ^= m_proc.touchExt(slots[i], m_records[slots[i]],
                                               m_records[slots[i]].pluginWants);
            }
        } else {
            for (std::size_t i = 0; i < n; ++i) {
                if (i == 0 || hashes[i] != hashes[i - 1]) touched ^= loadCandidate(hashes[i]);
            }
        }
        keepLoaded(touched);
        // Stage 3, strictly in arrival order. The candidates of stage 2 were hints: an earlier
        // packet of the part may have inserted or evicted in the same row since, so update()
        // looks the flow up from scratch (tag match + key compare).
        for (std::size_t i = 0; i < n; ++i) update(part[i], hashes[i]);
    }

    /// Per-slot metadata of more than a line (fdrc, lru-2: 16 × 8 bytes) is prefetched one
    /// slot's line at a time, once loadCandidate knows the slot: a hit reads that slot's only.
    /// Smaller arrays (heap-lru, lirs: 16 × 4 bytes) come whole with the row; heap-lru's hit
    /// sifts through other slots' stamps. Measured with rowprobe-bench-cache (random, 2^20
    /// flows): fdrc +10 %, lru-2 +13 %; prefetching one slot's line for heap-lru lost 3 %.
    static constexpr bool kMetaBySlot =
        sizeof(typename P::SlotMeta) * L > 64 && !std::is_empty_v<typename P::SlotMeta>;

    /// The row's lines a hit reads: all of them, or with kMetaBySlot those before the per-slot
    /// metadata (tags, policy state, deadline).
    void prefetchRow(std::uint64_t h) const noexcept {
        const RowType& row = m_rows[h & m_rowMask];
        const char* base = reinterpret_cast<const char*>(&row);
        std::size_t head = sizeof(RowType);
        if constexpr (kMetaBySlot)
            head = static_cast<std::size_t>(reinterpret_cast<const char*>(&row.meta[0]) - base);
        for (std::size_t off = 0; off < head; off += 64) detail::prefetchRead(base + off);
    }

    void prefetchLocked(std::uint64_t h) const noexcept {
        detail::prefetchWrite(&m_locks[h & m_rowMask]);
        detail::prefetchWrite(&m_rows[h & m_rowMask]);
    }

    // --- row locks (expiry=thread) ----------------------------------------------------------

    void lockRow(std::size_t r) noexcept {
        std::atomic<std::uint8_t>& lock = m_locks[r];
        unsigned spins = 0;
        while (lock.exchange(1, std::memory_order_acquire) != 0) {
            while (lock.load(std::memory_order_relaxed) != 0) {
                if (++spins < kSpinsBeforeYield) {
                    detail::cpuRelax();
                } else {
                    std::this_thread::yield();  // the holder may have been preempted
                }
            }
        }
    }
    void unlockRow(std::size_t r) noexcept { m_locks[r].store(0, std::memory_order_release); }
    bool tryLockRow(std::size_t r) noexcept {
        std::atomic<std::uint8_t>& lock = m_locks[r];
        return lock.load(std::memory_order_relaxed) == 0 &&
               lock.exchange(1, std::memory_order_acquire) == 0;
    }
    static void lowerDeadline(std::atomic<TimeNs>& deadline, TimeNs due) noexcept {
        TimeNs current = deadline.load(std::memory_order_relaxed);
        while (due < current &&
               !deadline.compare_exchange_weak(current, due, std::memory_order_relaxed)) {
        }
    }

    /// Loads one word of each cache line of the record packet `h` will most likely touch: its
    /// tag candidate, else the slot a miss would take. A hint only: earlier packets of the batch
    /// may still change the row. Returns the words, for keepLoaded.
    /// A free slot's record is written instead (it holds nothing until create overwrites it):
    /// on a page never touched before, a read would map the kernel's zero page and create's
    /// write would then replace it, a second fault whose TLB flush interrupts every CPU running
    /// the process (the input thread's): 10 % of the worker's time on the 1 M-flow capture.
    std::uint64_t loadCandidate(std::uint64_t h, std::uint32_t* slot = nullptr) noexcept {
        const std::size_t r = h & m_rowMask;
        const RowType& row = m_rows[r];
        Slot s = kNoSlot;
        bool fresh = false;
        const std::uint32_t m = TagMatch::template match<L>(row.tags.data(), tagOf(h));
        if (m != 0) {
            s = static_cast<Slot>(std::countr_zero(m));
            if constexpr (kMetaBySlot) detail::prefetchWrite(&row.meta[s]);
        } else {
            const PacketContext ctx{.hash = h};
            s = m_policy.pickFree(constRef(r), ctx);
            fresh = s != kNoSlot;
            if (!fresh) s = m_policy.victim(constRef(r), ctx);
        }
        const std::size_t index = slotIndex(r, s);
        if (slot != nullptr) *slot = static_cast<std::uint32_t>(index);
        CachedFlow& f = m_records[index];
        if (fresh) {
            f.timeLast = 0;
            f.pluginWants = 0;  // line 1; and stage 2 loads no tier-2 record for it
            if (m_proc.needsArea()) m_proc.prepareArea(index);
            return 0;
        }
        // The hooks and postCreate use the slot's plugin area (needsArea: some plugin keeps
        // state or a handle there; never without plugins).
        const std::uint64_t area = m_proc.needsArea() ? m_proc.touch(index) : 0;
        return f.timeLast ^ f.bytes[0] ^ area;  // line 0 and line 1
    }

    /// Makes the loads that produced `v` observable, so the compiler keeps them (no code).
    static void keepLoaded(std::uint64_t v) noexcept { asm volatile("" : : "r"(v)); }

    void update(const ParsedPacket& pkt, std::uint64_t h) noexcept {
        const std::size_t r = h & m_rowMask;
        RowType& row = m_rows[r];
        const Tag tag = tagOf(h);
        m_batchLast = pkt.ts;

        Slot s = kNoSlot;
        for (std::uint32_t m = TagMatch::template match<L>(row.tags.data(), tag); m != 0;
             m &= m - 1) {
            const auto c = static_cast<Slot>(std::countr_zero(m));
            if (recordAt(r, c).key == pkt.key) {  // never trust the tag alone
                s = c;
                break;
            }
        }

        PacketContext ctx{.hash = h,
                          .ts = pkt.ts,
                          .cls = 0,
                          .tcpFlags = pkt.tcpFlags,
                          .forward = true,
                          .packet = &pkt};
        m_policy.classify(ctx);
        if (s != kNoSlot) {
            CachedFlow& f = recordAt(r, s);
            ctx.forward = pkt.fromA == f.initiatorIsA;
            const EndReason why = endBefore(f, pkt, ctx.forward);
            if (why == kAlive) {
                const std::uint64_t pos = m_policy.position(constRef(r), s) + 1U;
                ++m_stats.hits;
                m_stats.positionSum += pos;
                m_stats.positionSqSum += pos * pos;
                m_policy.onHit(rowRef(r), s, ctx);
                if (!m_probation.empty()) offProbation(r, s);
                if (m_proc.enabled()) {
                    updateWithPlugins(r, s, pkt, ctx.forward);
                } else {
                    addPacket(f, pkt, ctx.forward ? 0 : 1);
                }
                return;
            }
            retire(r, s, why);  // ended before this packet: it starts a new flow
            ctx.forward = true;
        }

        Vacancy vacancy = Vacancy::Free;
        s = m_policy.pickFree(constRef(r), ctx);
        if (s == kNoSlot) {
            s = reclaimExpired(r, ctx);
            if (s != kNoSlot) {
                vacancy = Vacancy::Expired;
                ++m_stats.missReclaim;
            } else if (m_admission && !admit(h)) {
                ++m_stats.admissionDeferred;  // flood: wait for a second packet rather than evict
                return;
            } else {
                vacancy = Vacancy::Evicted;
                ++m_stats.missEvict;
                s = m_admission ? probationVictim(r) : kNoSlot;
                if (s == kNoSlot) {
                    s = m_policy.victim(constRef(r), ctx);
                } else {
                    ++m_stats.admissionEvicted;
                }
                retire(r, s, EndReason::LackOfResources);
            }
        } else {
            ++m_stats.missFree;
        }
        create(r, s, tag, pkt, h);
        m_policy.onInsert(rowRef(r), s, ctx, vacancy);
        if (!m_probation.empty()) m_probation[r] |= std::uint32_t{1} << s;  // `back`: new until hit
        if (m_proc.enabled()) createWithPlugins(r, s, pkt);
    }

    // --- process plugins (process_dispatch.hpp; flush semantics in rowprobe/process.hpp) ----

    void createWithPlugins(std::size_t r, Slot s, const ParsedPacket& pkt) noexcept {
        const HookResult res = m_proc.postCreate(slotIndex(r, s), recordAt(r, s), pkt, true);
        if ((res & kFlush) != 0) {  // ipfixprobe: post_create's flush exports the new flow now
            ++m_stats.pluginFlushes;
            retire(r, s, EndReason::ForcedEnd, true);
        }
    }

    void updateWithPlugins(std::size_t r, Slot s, const ParsedPacket& pkt, bool forward) noexcept {
        CachedFlow& f = recordAt(r, s);
        const std::size_t slot = slotIndex(r, s);
        const std::size_t dir = forward ? 0 : 1;
        if (!ProcessDispatch::wantsAny(f)) {
            addPacket(f, pkt, dir);
            return;
        }
        HookResult res = m_proc.update(slot, f, pkt, forward, true);
        if ((res & kFlush) != 0) {
            ++m_stats.pluginFlushes;
            if (res == kFlushReinsert) {  // export without the packet, continue in this slot
                exportRecord(r, s, EndReason::ForcedEnd, true);
                reinsert(r, s, pkt, dir);
            } else {  // ipfixprobe: exported without the packet, which is dropped
                retire(r, s, EndReason::ForcedEnd, true);
            }
            return;
        }
        addPacket(f, pkt, dir);
        res = m_proc.update(slot, f, pkt, forward, false);
        if ((res & kFlush) != 0) {
            ++m_stats.pluginFlushes;
            if (res == kFlushReinsert) {  // ipfixprobe counts the packet in both records
                exportRecord(r, s, EndReason::ForcedEnd, true);
                reinsert(r, s, pkt, dir);
            } else {
                retire(r, s, EndReason::ForcedEnd, true);
            }
        }
    }

    /// ipfixprobe's flush-with-reinsert: the slot's flow (already exported) starts again with
    /// the same key and orientation, counters cleared, TIME_FIRST = its TIME_LAST; `pkt` is
    /// counted in direction `dir` of the old record and postCreate runs again. The deadline
    /// only moves later, so the row's and block's bounds stay valid.
    void reinsert(std::size_t r, Slot s, const ParsedPacket& pkt, std::size_t dir) noexcept {
        CachedFlow& f = recordAt(r, s);
        f.timeFirst = f.timeLast;
        f.packets = {0, 0};
        f.bytes = {0, 0};
        f.tcpFlags = {0, 0};
        addPacket(f, pkt, dir);
        ++m_stats.flowsCreated;
        const HookResult res = m_proc.postCreate(slotIndex(r, s), f, pkt, dir == 0);
        if ((res & kFlush) != 0) {
            ++m_stats.pluginFlushes;
            retire(r, s, EndReason::ForcedEnd, true);
        }
    }

    // --- flood detector and admission -------------------------------------------------------

    void observeFlood() noexcept {
        if (!m_flood || !m_flood->observe(m_now, m_stats.flowsCreated + m_stats.admissionDeferred))
            return;
        const FloodDetector& d = *m_flood;
        m_stats.floodIntervals = d.intervals();
        m_stats.floodAlarms = d.alarms();
        m_stats.floodActive = d.alarm() ? 1 : 0;
        m_stats.floodLastAlarm = d.alarmTime();
        m_stats.floodLastCount = static_cast<std::uint64_t>(std::max(0.0, d.alarmCount()));
        m_stats.floodBaseline = static_cast<std::uint64_t>(std::max(0.0, d.alarmBaseline()));
        const bool admission = d.alarm() && m_config.flood.admission != FloodAdmission::Off;
        if (admission == m_admission) return;
        m_admission = admission;
        if (!admission) {  // the flood is over: forget who was new during it
            std::fill(m_seenOnce.begin(), m_seenOnce.end(), 0);
        }
    }

    /// Admission of a new flow while a flood is on; true to insert it now.
    bool admit(std::uint64_t h) noexcept {
        if (m_seenOnce.empty()) return true;  // `back` admits everybody
        std::uint32_t& seen = m_seenOnce[(h >> 24) & (kSeenOnceSize - 1)];
        const std::uint32_t print = static_cast<std::uint32_t>(h >> 32) | 1U;
        if (seen == print) {
            seen = 0;
            return true;
        }
        seen = print;
        return false;
    }

    void offProbation(std::size_t r, Slot s) noexcept {
        m_probation[r] &= ~(std::uint32_t{1} << s);
    }

    /// `back` admission: the flow without a hit yet that is furthest back in the policy's
    /// order, or kNoSlot.
    Slot probationVictim(std::size_t r) const noexcept {
        if (m_probation.empty()) return kNoSlot;
        Slot best = kNoSlot;
        unsigned bestPosition = 0;
        for (std::uint32_t m = m_probation[r] & occupiedMask(m_rows[r]); m != 0; m &= m - 1) {
            const auto s = static_cast<Slot>(std::countr_zero(m));
            const unsigned position = m_policy.position(constRef(r), s);
            if (best == kNoSlot || position > bestPosition) {
                best = s;
                bestPosition = position;
            }
        }
        return best;
    }

    /// The reason the stored flow `f` ends before packet `pkt` joins it, or kAlive.
    EndReason endBefore(const CachedFlow& f, const ParsedPacket& pkt, bool forward) const noexcept {
        const std::uint8_t seen = f.tcpFlags[forward ? 0 : 1];
        // Any SYN, a SYN-ACK included (ipfixprobe 5.7's cache: `tcp_flags & 0x02`).
        if ((pkt.tcpFlags & kSyn) != 0 && (seen & (kFin | kRst)) != 0) {
            return EndReason::EndOfFlow;  // a new connection on a finished 5-tuple
        }
        return expiryAt(f, pkt.ts);
    }

    /// Whether `f` has expired at time `now`, and why: the timeout whose deadline came first
    /// (inactive on a tie), so the reason is the same whenever the flow is looked at after it
    /// expired: by its next packet, the inline sweep, the export thread or the final flush.
    EndReason expiryAt(const CachedFlow& f, TimeNs now) const noexcept {
        const TimeNs idle = saturatingAdd(f.timeLast, m_config.inactive);
        const TimeNs old = saturatingAdd(f.timeFirst, m_config.active);
        const bool idleDue = now >= idle;
        const bool oldDue = now >= old;
        if (idleDue && (!oldDue || idle <= old)) {
            return ((f.tcpFlags[0] | f.tcpFlags[1]) & (kFin | kRst)) != 0
                       ? EndReason::EndOfFlow
                       : EndReason::InactiveTimeout;
        }
        return oldDue ? EndReason::ActiveTimeout : kAlive;
    }

    static void addPacket(CachedFlow& f, const ParsedPacket& pkt, std::size_t dir) noexcept {
        if (f.packets[dir] == 0) {
            f.ttl[dir] = pkt.ttl;
            f.icmpTypeCode[dir] = pkt.icmpTypeCode;
        }
        ++f.packets[dir];
        f.bytes[dir] += pkt.ipLen;
        f.tcpFlags[dir] |= pkt.tcpFlags;
        f.timeLast = std::max(f.timeLast, pkt.ts);
    }

    void create(std::size_t r, Slot s, Tag tag, const ParsedPacket& pkt, std::uint64_t h) noexcept {
        RowType& row = m_rows[r];
        CachedFlow& f = recordAt(r, s);
        f.key = pkt.key;
        f.timeFirst = pkt.ts;
        f.timeLast = pkt.ts;
        f.packets = {1, 0};
        f.bytes = {pkt.ipLen, 0};
        f.hashHi = static_cast<std::uint32_t>(h >> 32);
        f.icmpTypeCode = {pkt.icmpTypeCode, 0};
        f.tcpFlags = {pkt.tcpFlags, 0};
        f.ttl = {pkt.ttl, 0};
        f.srcMac = pkt.srcMac;
        f.dstMac = pkt.dstMac;
        f.initiatorIsA = pkt.fromA;
        f.tunnelled = pkt.tunnel.type != TunnelType::None;
        if (f.tunnelled) [[unlikely]] {
            m_tunnels[static_cast<std::size_t>(&f - m_records.data())] =
                FlowTunnel{pkt.tunnel.outerSrc, pkt.tunnel.outerDst, pkt.tunnel.id,
                           static_cast<std::uint8_t>(pkt.tunnel.type)};
        }
        row.tags[s] = tag;
        const TimeNs due = f.deadline(m_config.inactive, m_config.active);
        row.deadline = std::min(row.deadline, due);
        std::atomic<TimeNs>& block = m_blockDeadline[r >> m_blockShift];
        if (m_threaded) {
            lowerDeadline(block, due);
        } else if (due < block.load(std::memory_order_relaxed)) {
            block.store(due, std::memory_order_relaxed);
        }
        ++m_stats.flowsCreated;
        ++m_stats.flowsInCache;
    }

    /// Full row: exports every record expired at the packet's time (as its timeout) and returns
    /// the free slot the policy picks then, or kNoSlot if nothing had expired. Recomputes the
    /// row's deadline.
    Slot reclaimExpired(std::size_t r, const PacketContext& ctx) noexcept {
        RowType& row = m_rows[r];
        if (row.deadline > ctx.ts) return kNoSlot;
        if (!expireRow(r, ctx.ts)) return kNoSlot;
        return m_policy.pickFree(constRef(r), ctx);
    }

    /// Exports every record of row r expired at `now`; sets the row's exact deadline. Returns
    /// the number exported.
    std::size_t expireRow(std::size_t r, TimeNs now) noexcept {
        RowType& row = m_rows[r];
        TimeNs next = kNever;
        std::array<EndReason, L> why{};
        std::uint32_t expired = 0;
        for (std::uint32_t m = occupiedMask(row); m != 0; m &= m - 1) {
            const auto s = static_cast<Slot>(std::countr_zero(m));
            why[s] = expiryAt(recordAt(r, s), now);
            if (why[s] != kAlive) {
                expired |= std::uint32_t{1} << s;
            } else {
                next = std::min(next, recordAt(r, s).deadline(m_config.inactive, m_config.active));
            }
        }
        // The expired flows' plugin data first, their misses together.
        if (m_proc.hasExt()) loadPluginData(r, expired);
        for (std::uint32_t m = expired; m != 0; m &= m - 1) {
            const auto s = static_cast<Slot>(std::countr_zero(m));
            retire(r, s, why[s]);
        }
        row.deadline = next;
        return static_cast<std::size_t>(std::popcount(expired));
    }

    /// Before the flows of `slots` (a mask of row r) are exported: their plugin areas, then
    /// their tier-2 records, as demand loads issued together (the write hooks read them; the
    /// records lie anywhere in the pools, so each is a miss). On 1 M flows with pstats, the
    /// write hook's misses were a tenth of the run (docs/performance.md).
    void loadPluginData(std::size_t r, std::uint32_t slots) noexcept {
        std::uint64_t touched = 0;
        if (m_proc.needsArea()) {
            for (std::uint32_t m = slots; m != 0; m &= m - 1)
                touched ^= m_proc.touch(slotIndex(r, static_cast<Slot>(std::countr_zero(m))));
        }
        for (std::uint32_t m = slots; m != 0; m &= m - 1) {
            const auto s = static_cast<Slot>(std::countr_zero(m));
            touched ^= m_proc.touchForExport(slotIndex(r, s), recordAt(r, s));
        }
        keepLoaded(touched);
    }

    /// Exports the flow in slot s of row r with `why`, frees the slot, tells the policy.
    /// `flushed`: a plugin ended it (its plugins' preExport hooks are skipped).
    void retire(std::size_t r, Slot s, EndReason why, bool flushed = false) noexcept {
        RowType& row = m_rows[r];
        exportRecord(r, s, why, flushed);
        row.tags[s] = kEmptyTag;
        --m_stats.flowsInCache;
        m_policy.onErase(rowRef(r), s, why);
    }

    void exportRecord(std::size_t r, Slot s, EndReason why, bool flushed = false) noexcept {
        ++m_stats.exported[static_cast<std::size_t>(why)];
        CachedFlow& f = recordAt(r, s);
        if (m_target.ring == nullptr) {
            if (m_proc.enabled()) m_proc.releaseAll(slotIndex(r, s), f, false);
            return;
        }
        FlowRecord rec = makeRecord(f, why);
        if (m_proc.enabled()) {
            InstanceWriter out = m_proc.workerWriter();
            m_proc.serialize(slotIndex(r, s), f, why, flushed, out, false);
            m_stats.pluginDataDropped += out.dropped();
            if (out.size() != 0 && m_target.ext != nullptr) {
                rec.ext = m_target.ext->waitPush(out.data(), out.size(), *m_target.abandon);
                rec.extLen = rec.ext != nullptr ? static_cast<std::uint32_t>(out.size()) : 0;
            }
        }
        m_target.ring->waitPush(rec, *m_target.abandon);
    }

    /// The oriented FlowRecord of a cached flow ending with `why`.
    FlowRecord makeRecord(const CachedFlow& f, EndReason why) const noexcept {
        FlowRecord out;
        const bool a = f.initiatorIsA;
        out.srcAddr = a ? f.key.addrA : f.key.addrB;
        out.dstAddr = a ? f.key.addrB : f.key.addrA;
        out.srcPort = a ? f.key.portA : f.key.portB;
        out.dstPort = a ? f.key.portB : f.key.portA;
        out.timeFirst = f.timeFirst;
        out.timeLast = f.timeLast;
        out.bytes = f.bytes;
        out.packets = f.packets;
        out.vlan = f.key.vlan;
        out.icmpTypeCode = f.icmpTypeCode;
        out.srcMac = f.srcMac;
        out.dstMac = f.dstMac;
        out.tcpFlags = f.tcpFlags;
        out.ttl = f.ttl;
        out.proto = f.key.proto;
        out.ipVersion = f.key.ipVersion;
        out.endReason = why;
        out.queue = m_target.queue;
        if (f.tunnelled) out.tunnel = m_tunnels[static_cast<std::size_t>(&f - m_records.data())];
        return out;
    }

    // --- expiry=thread ----------------------------------------------------------------------

    /// Export thread: try-locks row r; if it is due, detaches its expired records into the
    /// sweeper's buffer under the lock and pushes them into `ring` after unlocking. Lowers
    /// `earliest` to the row's deadline, or to `unknown` when the row was busy.
    std::size_t sweepRowLocked(std::size_t r, TimeNs now, TimeNs unknown, TimeNs& earliest,
                               ExportRing& ring) noexcept {
        if (!tryLockRow(r)) {
            earliest = std::min(earliest, unknown);  // busy: keep the block due
            return 0;
        }
        RowType& row = m_rows[r];
        std::size_t n = 0;
        if (row.deadline <= now) {
            TimeNs next = kNever;
            for (std::uint32_t m = occupiedMask(row); m != 0; m &= m - 1) {
                const auto s = static_cast<Slot>(std::countr_zero(m));
                const EndReason why = expiryAt(recordAt(r, s), now);
                if (why == kAlive) {
                    next =
                        std::min(next, recordAt(r, s).deadline(m_config.inactive, m_config.active));
                    continue;
                }
                FlowRecord& rec = m_sweeper.detached[n++];
                rec = makeRecord(recordAt(r, s), why);
                if (m_proc.enabled()) sweepPluginData(r, s, why, rec);
                row.tags[s] = kEmptyTag;
                m_policy.onErase(rowRef(r), s, why);
            }
            row.deadline = next;
        }
        earliest = std::min(earliest, row.deadline);
        // Counted before the row is unlocked: the worker's flushAll takes every row's lock, so
        // when it returns, each record a racing scan took off the table is counted (its final
        // statistics are read right after; counting after the unlock lost one now and then).
        for (std::size_t i = 0; i < n; ++i) {
            m_sweeper.exported[static_cast<std::size_t>(m_sweeper.detached[i].endReason)].fetch_add(
                1, std::memory_order_relaxed);
        }
        if (n != 0) {
            m_sweeper.bySweep.fetch_add(n, std::memory_order_relaxed);
            m_sweeper.removed.fetch_add(n, std::memory_order_relaxed);
        }
        unlockRow(r);
        // after unlocking; the caller made room for L
        for (std::size_t i = 0; i < n; ++i) ring.tryPush(m_sweeper.detached[i]);
        return n;
    }

    /// Export thread, under row r's lock: the plugin data of the record it detaches, copied
    /// into the export thread's ExtRing (room for a whole row was checked before the row).
    void sweepPluginData(std::size_t r, Slot s, EndReason why, FlowRecord& rec) noexcept {
        InstanceWriter out = m_proc.sweepWriter();
        m_proc.serialize(slotIndex(r, s), recordAt(r, s), why, false, out, true);
        if (out.dropped() != 0)
            m_sweeper.pluginDropped.fetch_add(out.dropped(), std::memory_order_relaxed);
        if (out.size() != 0 && m_target.sweepExt != nullptr) {
            rec.ext = m_target.sweepExt->tryPush(out.data(), out.size());
            rec.extLen = rec.ext != nullptr ? static_cast<std::uint32_t>(out.size()) : 0;
        }
    }

    /// expiry=thread, worker: flushAll with every row locked in turn (the export thread may be
    /// sweeping at the same time). Per row: what is due leaves with its timeout reason, the
    /// rest as forced end.
    void flushLocked() noexcept {
        for (std::size_t r = 0; r < m_rowCount; ++r) {
            lockRow(r);
            RowType& row = m_rows[r];
            if (row.deadline <= m_now) m_stats.exportedBySweep += expireRow(r, m_now);
            for (std::uint32_t m = occupiedMask(row); m != 0; m &= m - 1) {
                retire(r, static_cast<Slot>(std::countr_zero(m)), EndReason::ForcedEnd);
                ++m_stats.exportedAtEnd;
            }
            row.deadline = kNever;
            unlockRow(r);
        }
        for (std::size_t b = 0; b < m_blockCount; ++b)
            m_blockDeadline[b].store(kNever, std::memory_order_relaxed);
    }

    // --- sweep ------------------------------------------------------------------------------

    void sweepIncremental() noexcept {
        if (!m_sweepStarted) {
            m_sweepStarted = true;
            m_lastSweep = m_now;
        }
        const TimeNs dt = m_now > m_lastSweep ? m_now - m_lastSweep : 0;  // time may step back
        m_lastSweep = m_now;
        std::size_t blocks = m_blockCount;
        if (dt < m_config.sweepPeriod) {
            m_sweepCredit += dt * m_blockCount;
            blocks = static_cast<std::size_t>(m_sweepCredit / m_config.sweepPeriod);
            m_sweepCredit -= static_cast<TimeNs>(blocks) * m_config.sweepPeriod;
        } else {
            m_sweepCredit = 0;
        }
        blocks = std::clamp(blocks, std::min(m_config.sweepMinBlocks, m_blockCount), m_blockCount);
        sweepBlocks(blocks);
    }

    /// Visits `count` blocks from the cursor, exporting what has expired at m_now. A due row's
    /// records are read cold (a full row is L × 128 bytes, beyond what the hardware prefetcher
    /// fetches at page boundaries), so the due rows of a block are listed first and the records
    /// of the row kSweepAhead places on are prefetched while the current one is expired.
    void sweepBlocks(std::size_t count) noexcept {
        const TimeNs now = m_now;
        std::array<std::uint32_t, kRowsPerBlock> due{};
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t b = m_sweepCursor;
            m_sweepCursor = (b + 1) & (m_blockCount - 1);
            if (m_blockDeadline[b].load(std::memory_order_relaxed) > now) continue;
            const std::size_t first = b << m_blockShift;
            std::size_t n = 0;
            for (std::size_t r = first; r < first + m_rowsPerBlock; ++r) {
                if (m_rows[r].deadline <= now) due[n++] = static_cast<std::uint32_t>(r);
            }
            for (std::size_t i = 0; i < std::min(n, kSweepAhead); ++i) prefetchRecords(due[i]);
            for (std::size_t i = 0; i < n; ++i) {
                if (i + kSweepAhead < n) prefetchRecords(due[i + kSweepAhead]);
                if (m_proc.hasExt() && i + 1 < n) prefetchPluginData(due[i + 1]);
                m_stats.exportedBySweep += expireRow(due[i], now);
            }
            TimeNs earliest = kNever;
            for (std::size_t r = first; r < first + m_rowsPerBlock; ++r)
                earliest = std::min(earliest, m_rows[r].deadline);
            m_blockDeadline[b].store(earliest, std::memory_order_relaxed);
        }
    }

    /// The table holds as many flows as its huge-page planes have slots, so the planes beyond
    /// them are no longer sparse: they take huge pages from now on (fewer TLB misses on a full
    /// table: ~4 % on 2^20 random flows in 2^22 records). Once per run.
    void promoteHugePages() noexcept {
        m_records.adviseHugeRest();
        m_promoteAt = std::numeric_limits<std::uint64_t>::max();
    }

    /// The plugin data of every occupied slot of row r, as prefetches (its records must have
    /// been prefetched earlier: their handles are read).
    void prefetchPluginData(std::size_t r) const noexcept {
        for (std::uint32_t m = occupiedMask(m_rows[r]); m != 0; m &= m - 1) {
            const auto s = static_cast<Slot>(std::countr_zero(m));
            m_proc.prefetchForExport(slotIndex(r, s), recordAt(r, s));
        }
    }

    /// Both cache lines of every occupied record of row r (expiryAt reads times and flags).
    void prefetchRecords(std::size_t r) const noexcept {
        for (std::uint32_t m = occupiedMask(m_rows[r]); m != 0; m &= m - 1) {
            const auto* rec = reinterpret_cast<const std::uint8_t*>(
                &recordAt(r, static_cast<Slot>(std::countr_zero(m))));
            for (std::size_t line = 0; line < sizeof(CachedFlow); line += 64)
                detail::prefetchWrite(rec + line);
        }
    }

    TableConfig m_config;
    P m_policy;
    std::size_t m_rowCount = 0;
    std::size_t m_rowMask = 0;
    std::size_t m_rowsPerBlock = 0;
    unsigned m_blockShift = 0;
    std::size_t m_blockCount = 0;
    detail::TableArray<RowType> m_rows;
    detail::TableArray<CachedFlow> m_records;
    /// flowsInCache at which the sparse planes take huge pages too (promoteHugePages).
    std::uint64_t m_promoteAt = 0;
    detail::TableArray<FlowTunnel> m_tunnels;  ///< per record, valid where `tunnelled`
    /// Min of each block's row deadlines; atomics because the export thread rewrites them in
    /// expiry=thread (relaxed loads and stores otherwise, i.e. plain moves).
    std::unique_ptr<std::atomic<TimeNs>[]> m_blockDeadline;
    HashBatchFn m_hashBatch = nullptr;
    std::uint64_t m_seed = 0;
    std::optional<FragCache> m_frag;
    ExportTarget m_target;
    CacheStats m_stats;
    TimeNs m_now = 0;        ///< the sweep's clock: time of the last batch's last packet
    TimeNs m_batchLast = 0;  ///< timestamp of the last packet of the batch being processed
    TimeNs m_lastSweep = 0;
    TimeNs m_sweepCredit = 0;  ///< ns × blocks owed to the sweep, below one block's worth
    std::size_t m_sweepCursor = 0;
    bool m_sweepStarted = false;
    // Flood detector and admission (worker only).
    std::optional<FloodDetector> m_flood;
    bool m_admission = false;                ///< an admission mode is active (flood detected)
    std::vector<std::uint32_t> m_seenOnce;   ///< second-packet filter: hash fingerprints
    std::vector<std::uint32_t> m_probation;  ///< `back`: per row, flows without a hit yet
    // expiry=thread.
    bool m_threaded = false;
    std::unique_ptr<std::atomic<std::uint8_t>[]> m_locks;  ///< one per row, 0 = free
    std::atomic<TimeNs> m_clock{0};  ///< the worker's m_now, for the export thread
    /// State of the export thread's scan: plain fields are the export thread's own; the atomic
    /// counters are read by the worker in stats().
    struct Sweeper {
        alignas(64) TimeNs lastClock = 0;
        TimeNs credit = 0;
        std::size_t owed = 0;    ///< blocks still to visit
        std::size_t cursor = 0;  ///< next block
        bool started = false;
        std::array<FlowRecord, L> detached{};
        std::array<std::atomic<std::uint64_t>, kEndReasonSlots> exported{};
        std::atomic<std::uint64_t> bySweep{0};
        std::atomic<std::uint64_t> removed{0};
        std::atomic<std::uint64_t> pluginDropped{0};
    } m_sweeper;
    ProcessDispatch m_proc;
};

template <class P, unsigned L>
void RowRef<P, L>::evict(Slot s, EndReason why) const noexcept {
    m_table->retire(m_index, s, why);
}

}  // namespace rowprobe::storage
