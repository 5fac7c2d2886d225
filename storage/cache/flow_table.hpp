// FlowTable<P, L>: the flow cache of one worker, a row-divided hash table whose replacement
// policy P is a template parameter (docs/design/flow-cache.md, docs/style.md). This header holds
// what must know P and L — the rows and records, the lookup and the policy calls — and
// declares the rest of the template, defined in
//   flow_table_expiry.hpp   expireRow (THE row expiry routine), the sweeps, the final flush
//   flow_table_export.hpp   retire, exportRecord, plugin flushes
//   flow_table_inspect.hpp  introspection for tests and tools
// and, outside the template: table_base.hpp (geometry, block deadlines, statistics, clock, the
// StoragePlugin calls needing no policy), expiry.hpp (expiryAt, the SweepPace credit scheme,
// row locks), admission.hpp (flood detector and admission), process_dispatch.hpp (the process
// plugins' hooks), cached_flow_ops.hpp (a record's creation, update and FlowRecord).
//
//   processBatch(≤64 packets)                      one virtual call per batch
//   ├ 0  fragment cache: fill ports of non-first fragments (changes keys, so before hashing)
//   ├ 1  hash every key (one HashBatchFn call)
//   ├ 2  grouped loads: prefetch every packet's row; then per packet read its row's tags and
//   │    load both lines of the candidate record (a hint: the tag match, else the slot a miss
//   │    would take), all 64 packets' loads in flight together (expiry=inline)
//   ├ 3  strictly in arrival order: update packet i (full lookup again, never the hint)
//   └ 4  incremental sweep (flow_table_expiry.hpp), paced by SweepPace
//
//   h = hash(canonical key)      row = h & (rows-1)      tag = top 8 bits of h (0 → 1)
//   m_rows[rows]           tags[L] | RowState | deadline      (row.hpp)
//   m_records[L * rows]    CachedFlow, 128 B, never moves, slot-major: s*rows + r (row.hpp)
//
// Per packet (update):
//   1. tag match (SIMD) → full key compare → slot s, or none.
//   2. Found: the flow ends *before* this packet joins it (endBefore, expiry.hpp: any SYN on a
//      finished direction, inactive, active, in ipfixprobe v5.7's order); it is exported and
//      erased and the packet takes the miss path. Checked before promotion.
//   3. Hit: statistics (1-based position = policy position + 1), policy.onHit, counters, and
//      the process plugins' hooks for a flow some plugin still wants.
//   4. Miss: policy.pickFree; if the row is full, every expired record of the row is exported
//      with its timeout reason (reclaim) and pickFree asked again; only if none expired is
//      policy.victim exported with LackOfResources (exactly one per new flow), unless flood
//      admission defers the flow or picks a hitless victim (admission.hpp).
//   Nothing on this path allocates, locks (expiry=inline), throws, logs or makes a virtual call.
//
// Time, expiry and the two expiry modes (threads): flow_table_expiry.hpp.
//
// Costs: a hit touches the row line and the record's two lines, all loaded in stage 2
// (expiry=thread: prefetched a few packets ahead). With 2^20 live flows in 2^22 records,
// uniform random, tools/bench_cache measures ~18 Mpps against ~10 with per-packet prefetches
// (docs/performance.md, "Cache alone with the gen generator").
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cache/cached_flow_ops.hpp"
#include "cache/expiry.hpp"
#include "cache/row.hpp"
#include "cache/row_policy.hpp"
#include "cache/slot.hpp"
#include "cache/table_array.hpp"
#include "cache/table_base.hpp"
#include "cache/tag_match.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/prefetch.hpp"

namespace rowprobe::storage {

template <class P, unsigned L>
class FlowTable final : public TableBase {
    static_assert(isSupportedLine(L), "L must be 4, 8, 16 or 32");
    static_assert(RowPolicy<P, L>, "P does not satisfy RowPolicy<P, L> (see row_policy.hpp)");

public:
    using RowType = Row<P, L>;

    /// Reads the `cache` options (throws ConfigError) and builds the table and the policy.
    explicit FlowTable(const Options& options) : FlowTable(parseTableConfig(options), options) {}

    FlowTable(const TableConfig& config, const Options& policyOptions)
        : TableBase(config, L, sizeof(RowType)), m_policy(policyOptions) {
        if (config.line != L) {
            throw ConfigError({.component = "storage 'cache'",
                               .option = "line",
                               .value = std::to_string(config.line),
                               .problem = "internal: table built for line " + std::to_string(L)});
        }
        const std::size_t records = std::size_t{1} << config.sizeLog2;
        try {
            m_rows = detail::TableArray<RowType>(m_rowCount);
            std::uninitialized_value_construct_n(m_rows.data(), m_rowCount);
            m_records = detail::TableArray<CachedFlow>(
                records, config.hugePlanes ? m_rowCount * kHugePlanes : 0);
            // Large tables are mapped zero pages, faulted in as rows first use them or ahead of
            // the worker (prefault); small ones are zeroed here. With `table-pages=huge` the
            // first kHugePlanes planes take huge pages, the sparser ones 4 KiB until flows fill
            // them; else all take 4 KiB pages until promoteHugePages (TableConfig::hugePlanes).
            if (m_records.zeroed())
                setPlanes({reinterpret_cast<std::byte*>(m_records.data()), rowBytes(), L});
            else
                std::memset(static_cast<void*>(m_records.data()), 0, records * sizeof(CachedFlow));
        } catch (const std::bad_alloc&) {
            throwNoMemory(config, sizeof(RowType));
        }
        m_promoteAt = m_rowCount * kHugePlanes;
    }

    // --- StoragePlugin ----------------------------------------------------------------------

    void processBatch(std::span<ParsedPacket> batch) noexcept override {
        processHashedBatch(batch, nullptr);
    }
    bool hashBatch(std::span<const ParsedPacket> batch, std::uint64_t* out) const noexcept override;
    void processHashedBatch(std::span<ParsedPacket> batch,
                            const std::uint64_t* hashes) noexcept override;

    void advanceTime(TimeNs now) noexcept override {
        m_now = now;
        m_admission.observe(m_now, m_stats);
        if (threaded()) {  // the export thread sweeps, on this clock
            m_clock.store(now, std::memory_order_release);
            return;
        }
        sweepBlocks(m_blockCount);
        m_pace.restart(m_now);
    }

    /// Everything due leaves with its timeout reason (inline: a full sweep first, in its
    /// order; thread: per row under its lock), then the rest with a forced end, row by row.
    void flushAll() noexcept override;

    /// expiry=thread, export thread only (see the essay above). Visits the blocks SweepPace
    /// owes for the worker's clock, stops at a block when its rings cannot take a whole row and
    /// resumes there on the next call.
    std::size_t sweepFromExportThread(ExportRing& ring) noexcept override;

    // --- CacheTable (tests, tools; flow_table_inspect.hpp) ----------------------------------

    std::string_view policyName() const noexcept override { return P::kName; }
    unsigned line() const noexcept override { return L; }
    std::vector<SlotView> inspectRow(std::size_t r) const override;
    std::string checkInvariants() const override;

private:
    friend class RowRef<P, L>;

    /// Due rows between the one the sweep expires and the one whose records it prefetches.
    static constexpr std::size_t kSweepAhead = 2;
    /// Rows between the one flushAll exports and the one whose plugin data it prefetches.
    static constexpr std::size_t kFlushAhead = 4;
    static constexpr std::size_t kLookAhead = 8;
    /// Planes of m_records on huge pages from the start with `table-pages=huge` (row.hpp): L/4
    /// holds every row's first four flows, which a table at a quarter of its capacity has in
    /// most rows. With as many flows the table starts promoteWhenDue.
    static constexpr std::size_t kHugePlanes = std::max(1U, L / 4);
    /// `table-pages=4k`: packet time from a quarter-full table to huge pages (a live probe's
    /// first minute of a busy table; the runs of a capture replayed in seconds never get there).
    static constexpr TimeNs kPromoteAfter = 60'000'000'000;
    /// Per-slot metadata of more than a line (fdrc, lru-2: 16 × 8 bytes) is prefetched one
    /// slot's line at a time, once loadCandidate knows the slot: a hit reads that slot's only.
    /// Smaller arrays (heap-lru, lirs: 16 × 4 bytes) come whole with the row; heap-lru's hit
    /// sifts through other slots' stamps. Measured with rowprobe-bench-cache (random, 2^20
    /// flows): fdrc +10 %, lru-2 +13 %; prefetching one slot's line for heap-lru lost 3 %.
    static constexpr bool kMetaBySlot =
        sizeof(typename P::SlotMeta) * L > 64 && !std::is_empty_v<typename P::SlotMeta>;

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
    EndReason expiryOf(const CachedFlow& f, TimeNs now) const noexcept {
        return expiryAt(f, now, m_config.inactive, m_config.active);
    }

    // --- packet path ------------------------------------------------------------------------

    /// `given`: the part's hashes from hashBatch (the input thread's), else null.
    void processPart(std::span<ParsedPacket> part, const std::uint64_t* given) noexcept {
        if (m_frag) {
            for (ParsedPacket& pkt : part) {
                if (!pkt.frag.isFragment) continue;
                m_frag->process(pkt, m_stats);
                given = nullptr;  // the fragment cache may have given it ports: hash again
            }
        }
        std::array<std::uint64_t, kMaxBatch> own;  // stage 1: hash every key
        const std::uint64_t* hashes = given;
        if (hashes == nullptr) {
            m_hashBatch(part, m_seed, own.data());
            hashes = own.data();
        }
        const std::size_t n = part.size();
        if (threaded()) {  // rows may change under us between lookups: prefetch addresses only
            for (std::size_t i = 0; i < std::min(n, 2 * kLookAhead); ++i) prefetchLocked(hashes[i]);
            for (std::size_t i = 0; i < n; ++i) {
                if (i + 2 * kLookAhead < n) prefetchLocked(hashes[i + 2 * kLookAhead]);
                const std::size_t r = hashes[i] & m_rowMask;
                m_locks.lock(r);
                update(part[i], hashes[i]);
                m_locks.unlock(r);
            }
            return;
        }
        // Stage 2, grouped: every row of the part in flight at once, then per packet its row's
        // tags and a demand load of both lines of its candidate record. Issued back to back, the
        // independent loads overlap in the out-of-order window; software prefetches one packet
        // at a time did not (docs/performance.md, "What limits it"). A repeated hash (one busy
        // flow) needs no second load.
        for (std::size_t i = 0; i < n; ++i) prefetchRow(hashes[i]);
        std::uint64_t touched = 0;
        if (m_proc.readsPayload()) {
            // The hooks read the payload's first bytes (http's method, tls' record header).
            for (const ParsedPacket& pkt : part) m_proc.prefetchPayload(pkt);
        }
        if (m_proc.touchesFlowData()) {
            // Plugins with per-flow data: a second pass reads each candidate's wants word and
            // handles (in its record, loaded by the first) and loads the area and tier-2 lines
            // of the plugins the hooks will run for, so those misses overlap too.
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
                    touched ^= m_proc.touchWanted(slots[i], m_records[slots[i]]);
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

    /// The row's lines a hit reads: all of them, or with kMetaBySlot those before the per-slot
    /// metadata (tags, policy state, deadline).
    void prefetchRow(std::uint64_t h) const noexcept {
        const RowType& row = m_rows[h & m_rowMask];
        const char* base = reinterpret_cast<const char*>(&row);
        std::size_t head = sizeof(RowType);
        if constexpr (kMetaBySlot)
            head = static_cast<std::size_t>(reinterpret_cast<const char*>(&row.meta[0]) - base);
        for (std::size_t off = 0; off < head; off += 64) prefetchRead(base + off);
    }

    void prefetchLocked(std::uint64_t h) const noexcept {
        prefetchWrite(m_locks.address(h & m_rowMask));
        prefetchWrite(&m_rows[h & m_rowMask]);
    }

    /// Loads one word of each cache line of the record packet `h` will most likely touch: its
    /// tag candidate, else the slot a miss would take. A hint only: earlier packets of the batch
    /// may still change the row. Returns the words, for keepLoaded.
    /// A free slot's record is written instead (it holds nothing until create overwrites it):
    /// on a page never touched before, a read would map the kernel's zero page and create's
    /// write would then replace it, a second fault whose TLB flush interrupts every CPU running
    /// the process (the input thread's): 10 % of the worker's time on the 1 M-flow capture.
    /// Always inlined into processPart, as before the split (GCC stopped inlining it once the
    /// table's members were spread over several headers: a call per packet in stage 2).
    [[gnu::always_inline]] std::uint64_t loadCandidate(std::uint64_t h,
                                                       std::uint32_t* slot = nullptr) noexcept;

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
            const EndReason why =
                endBefore(f, pkt, ctx.forward, m_config.inactive, m_config.active);
            if (why == kAlive) {
                hit(r, s, pkt, ctx);
                return;
            }
            retire(r, s, why);  // ended before this packet: it starts a new flow
            ctx.forward = true;
        }
        miss(r, tag, pkt, ctx);
    }

    [[gnu::always_inline]] void hit(std::size_t r, Slot s, const ParsedPacket& pkt,
                                    const PacketContext& ctx) noexcept {
        const std::uint64_t pos = m_policy.position(constRef(r), s) + 1U;
        ++m_stats.hits;
        m_stats.positionSum += pos;
        m_stats.positionSqSum += pos * pos;
        m_policy.onHit(rowRef(r), s, ctx);
        if (m_admission.tracksProbation()) m_admission.hit(r, s);
        CachedFlow& f = recordAt(r, s);
        const std::size_t dir = ctx.forward ? 0 : 1;
        if (!m_proc.enabled() || !ProcessDispatch::wantsAny(f)) {
            addPacket(f, pkt, dir);
            return;
        }
        const HookResult res = m_proc.updateFlow(slotIndex(r, s), f, pkt, ctx.forward);
        if ((res & kFlush) != 0) flushedByPlugin(r, s, pkt, dir, res);
    }

    void miss(std::size_t r, Tag tag, const ParsedPacket& pkt, const PacketContext& ctx) noexcept {
        Vacancy vacancy = Vacancy::Free;
        Slot s = m_policy.pickFree(constRef(r), ctx);
        if (s == kNoSlot) {
            s = reclaimExpired(r, ctx);
            if (s != kNoSlot) {
                vacancy = Vacancy::Expired;
                ++m_stats.missReclaim;
            } else if (m_admission.active() && !m_admission.admit(ctx.hash)) {
                ++m_stats.admissionDeferred;  // flood: wait for a second packet rather than evict
                return;
            } else {
                vacancy = Vacancy::Evicted;
                ++m_stats.missEvict;
                s = m_admission.active() ? probationVictim(r) : kNoSlot;
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
        create(r, s, tag, pkt, ctx.hash);
        m_policy.onInsert(rowRef(r), s, ctx, vacancy);
        if (m_admission.tracksProbation()) m_admission.inserted(r, s);  // `back`: new until hit
        if (m_proc.enabled()) {
            const HookResult res = m_proc.postCreate(slotIndex(r, s), recordAt(r, s), pkt, true);
            // ipfixprobe: post_create's flush exports the new flow now.
            if ((res & kFlush) != 0) flushedByPlugin(r, s, pkt, 0, kFlush);
        }
    }

    void flushedByPlugin(std::size_t r, Slot s, const ParsedPacket& pkt, std::size_t dir,
                         HookResult res) noexcept;

    /// `back` admission: the flow without a hit yet that is furthest back in the policy's
    /// order, or kNoSlot.
    Slot probationVictim(std::size_t r) const noexcept {
        if (!m_admission.tracksProbation()) return kNoSlot;
        Slot best = kNoSlot;
        unsigned bestPosition = 0;
        for (std::uint32_t m = m_admission.probation(r) & occupiedMask(m_rows[r]); m != 0;
             m &= m - 1) {
            const auto s = static_cast<Slot>(std::countr_zero(m));
            const unsigned position = m_policy.position(constRef(r), s);
            if (best == kNoSlot || position > bestPosition) {
                best = s;
                bestPosition = position;
            }
        }
        return best;
    }

    void create(std::size_t r, Slot s, Tag tag, const ParsedPacket& pkt, std::uint64_t h) noexcept {
        RowType& row = m_rows[r];
        CachedFlow& f = recordAt(r, s);
        startFlow(f, pkt, h);
        if (f.tunnelled) [[unlikely]] {
            m_tunnels[slotIndex(r, s)] =
                FlowTunnel{pkt.tunnel.outerSrc, pkt.tunnel.outerDst, pkt.tunnel.id,
                           static_cast<std::uint8_t>(pkt.tunnel.type)};
        }
        row.tags[s] = tag;
        const TimeNs due = f.deadline(m_config.inactive, m_config.active);
        row.deadline = std::min(row.deadline, due);
        lowerBlockDeadline(r, due);
        ++m_stats.flowsCreated;
        ++m_stats.flowsInCache;
    }

    /// Full row: exports every record expired at the packet's time (as its timeout) and returns
    /// the free slot the policy picks then, or kNoSlot if nothing had expired.
    Slot reclaimExpired(std::size_t r, const PacketContext& ctx) noexcept {
        if (m_rows[r].deadline > ctx.ts) return kNoSlot;
        if (expireRow(r, ctx.ts) == 0) return kNoSlot;
        return m_policy.pickFree(constRef(r), ctx);
    }

    // --- expiry and export ------------------------------------------------------------------

    /// THE row expiry routine: every record of row r expired at `now` leaves with its reason
    /// through `emit(s, why)` (the worker: exported and uncounted from flowsInCache; the export
    /// thread: detached into its buffer); then its tag is freed and the policy told. Sets the
    /// row's exact deadline. Returns the number of records expired.
    template <class Emit>
    std::size_t expireRow(std::size_t r, TimeNs now, Emit&& emit) noexcept;
    /// The worker's expiry of row r: through its own export ring.
    std::size_t expireRow(std::size_t r, TimeNs now) noexcept;

    std::size_t sweepRowLocked(std::size_t r, TimeNs now, TimeNs unknown, TimeNs& earliest,
                               ExportRing& ring) noexcept;

    void sweepPluginData(std::size_t r, Slot s, EndReason why, FlowRecord& rec) noexcept;

    void loadPluginData(std::size_t r, std::uint32_t slots) noexcept;

    /// Exports the flow in slot s of row r with `why`, frees the slot, tells the policy.
    /// `flushed`: a plugin ended it (its plugins' preExport hooks are skipped).
    void retire(std::size_t r, Slot s, EndReason why, bool flushed = false) noexcept;

    void exportRecord(std::size_t r, Slot s, EndReason why, bool flushed = false) noexcept;

    FlowRecord makeRecord(const CachedFlow& f, std::size_t slot, EndReason why) const noexcept {
        return makeFlowRecord(f, why, m_target.queue, m_tunnels[slot]);
    }

    // --- sweep ------------------------------------------------------------------------------

    void sweepBlocks(std::size_t count) noexcept;

    void promoteWhenDue() noexcept;
    void promoteHugePages() noexcept;

    void prefetchPluginData(std::size_t r) const noexcept;

    void prefetchRecords(std::size_t r) const noexcept;

    P m_policy;
    detail::TableArray<RowType> m_rows;
    detail::TableArray<CachedFlow> m_records;
    /// flowsInCache at which the sparse planes take huge pages too (promoteHugePages).
    std::uint64_t m_promoteAt = 0;
    /// `table-pages=4k`: the packet time from which promoteWhenDue promotes (0: not yet set).
    TimeNs m_promoteFrom = 0;
    /// expiry=thread, export thread: the records sweepRowLocked detaches from one row.
    std::array<FlowRecord, L> m_detached{};
};

}  // namespace rowprobe::storage

#include "cache/flow_table_batch.hpp"
#include "cache/flow_table_expiry.hpp"
#include "cache/flow_table_export.hpp"
#include "cache/flow_table_inspect.hpp"
