// ProcessDispatch: how one flow table runs the process plugins (docs/design/process-runtime.md).
//
//   resolved once (configure):
//     m_plugins[i]      hooks, state offset, handle offset, wants bit of plugin i (-p order)
//     m_postCreate / m_preUpdate / m_postUpdate / m_preExport / m_write / m_service
//                       per-hook arrays of plugin indexes: only plugins that have the hook
//   per flow, in the record (line 1, loaded with it by the table's batch):
//     CachedFlow::pluginWants  bit i set while plugin i still takes this flow's packets
//                              (cleared by kDone)
//     CachedFlow::extHandles   the tier-2 handles of the first four plugins with tier-2
//                              records, so that a flow's tier-2 records are reached from its
//                              record alone
//     CachedFlow::inlineState  the tier-1 state of the first plugin whose state is 1-2 bytes
//                              (pstats' count): the area is then not needed for it
//   per slot (m_area, slot = s * rows + row as the records (row.hpp), stride m_stride bytes,
//   a TableArray: zero pages from the kernel, touched only for slots in use; never moved):
//     ┌──────────────────────────────────────┬──────────────────────┐
//     │ plugin 0: [tier-2 handle u32] state  │ plugin 1: ...        │
//     └──────────────────────────────────────┴──────────────────────┘
//     (a handle here only for the fourth and later plugins with tier-2 records)
//   per plugin with tier 2: an ExtPool of fixed records (handles, 0 = none) and its free list.
//
// Costs: a packet of a flow whose wants word is 0 costs one test of a word the table has
// already loaded with the record. Stage 2 of the table's batch, once a candidate's record is
// loaded, loads the area bytes of the plugins whose wants bit is set (every line, up to
// kTouchAreaBytes), then the lines of their tier-2 records the next packet's hooks will touch
// (touchExt: the plugin's touch hook, or the whole record), all as demand loads issued
// together, so their misses overlap (touchWanted). The pools are TableArrays on 4 KiB pages
// unless `pool-pages=huge` (TableConfig::hugePools says why).
// Creating a flow zeroes its area (stride bytes, when used) and handles and runs postCreate;
// exporting a flow runs preExport (unless flushed) and write, copies the instances into the
// export ring's ExtRing and returns tier-2 records. With no plugin enabled the table never
// calls this class (one predictable branch on `enabled()`).
//
// Threads: the worker calls everything, except under expiry=thread, where the export thread
// serialises the flows it detaches (serialize(..., sweeper = true)) under the row's lock. It
// then cannot touch the pools, which belong to the worker: it pushes the handles into
// m_returned (SPSC, export thread → worker), and the worker gives them back to their pools at
// the start of each batch (drainReturned). The ring holds every handle that exists, so it is
// never full. The export thread uses its own InstanceWriter buffer. One other thread (the
// queue's input thread, StoragePlugin::prefault) may call prefault(): it reads the frontiers
// the worker publishes after each batch (relaxed atomics) and maps in pool pages past them
// with madvise; `populated` is its own, and nothing else of the pools is touched.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cache/cached_flow_ops.hpp"
#include "cache/row.hpp"
#include "cache/table_array.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/prefetch.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/spsc_ring.hpp"

namespace rowprobe::storage {

class ProcessDispatch {
public:
    bool enabled() const noexcept { return !m_plugins.empty(); }

    /// Start-up: resolves the hooks, lays out `slots` areas and the pools, and makes each
    /// plugin's per-worker state (a second one for the export thread when `threaded`). Throws
    /// ConfigError when there are too many plugins, a state is too large or a worker state
    /// cannot be made.
    void configure(std::span<ProcessPlugin* const> plugins, std::size_t slots,
                   bool threaded = false, bool hugePools = false);

    /// Adds the plugins' per-worker counters (WorkerStatsFn) to `out`.
    void addWorkerStats(CacheStats& out) const noexcept {
        for (std::size_t i = 0; i < m_plugins.size(); ++i) {
            const ProcessHooks& h = m_plugins[i].hooks;
            if (h.workerStats == nullptr) continue;
            for (const auto* set : {&m_workers, &m_sweepWorkers})
                if (i < set->size() && (*set)[i].state != nullptr)
                    h.workerStats(h.self, (*set)[i].state, out);
        }
    }

    /// True when some plugin still takes this flow's packets.
    static bool wantsAny(const CachedFlow& f) noexcept { return f.pluginWants != 0; }

    /// Loads every line of `slot`'s area, up to kTouchAreaBytes (export: the write hooks read
    /// every plugin's state; demand loads, returned as a word for the table's sink).
    std::uint64_t touch(std::size_t slot) const noexcept {
        return touchBytes(m_area.data() + slot * m_stride, m_touchArea);
    }

    /// Stage 2 of the table's batch, once the candidate record `f` of `slot` is loaded: the
    /// per-flow data the hooks of the next packet will use, as demand loads whose misses
    /// overlap the batch's others. First the area bytes of the plugins that still want the
    /// flow (`f.pluginWants`: their tier-1 states and handles, every line of them up to
    /// kTouchAreaBytes), then their tier-2 records (touchExt). Every line, not just the first:
    /// the lines of a state that only some packets touch (tcpperf's RTT timing and counters)
    /// would otherwise miss inside the hook, one packet after the other; and nothing of a
    /// plugin that is done with the flow (tcpperf on a UDP flow). On the 100k-flow capture with
    /// conn and tcpperf this took tcpperf's hook from 11 % of the worker's samples to 1 %
    /// (docs/performance.md, "conn and tcpperf together").
    [[gnu::always_inline]] std::uint64_t touchWanted(std::size_t slot,
                                                     const CachedFlow& f) const noexcept {
        const std::uint32_t w = f.pluginWants;
        std::uint64_t acc = 0;
        if ((w & m_areaMask) != 0) {
            std::size_t begin = m_stride;
            std::size_t end = 0;
            for (const AreaRange& r : m_areaRanges) {
                if ((w & r.bit) == 0) continue;
                begin = std::min<std::size_t>(begin, r.begin);
                end = std::max<std::size_t>(end, r.end);
            }
            acc = touchBytes(m_area.data() + slot * m_stride + begin,
                             std::min(end - begin, kTouchAreaBytes));
        }
        if ((w & m_extMask) != 0) acc ^= touchExt(slot, f, w);
        return acc;
    }

    /// Writes the area of a free slot that a new flow is about to take (it is zeroed on
    /// create): faults a fresh page in writable at once, not as the zero page first.
    void prepareArea(std::size_t slot) noexcept { m_area.data()[slot * m_stride] = std::byte{0}; }

    /// True when some plugin keeps tier-2 records (the table then prefetches them).
    bool hasExt() const noexcept { return !m_extPlugins.empty(); }

    /// Worker, after each batch: publishes how far each pool has handed out records never
    /// used before (one relaxed store per pool), for prefault().
    void publishFrontiers() noexcept {
        for (const std::uint8_t i : m_extPlugins) {
            m_poolMemory[m_poolOf[i]].frontier.store(
                static_cast<std::size_t>(m_pools[i].fresh()) * m_pools[i].recordSize(),
                std::memory_order_relaxed);
        }
    }

    /// One thread other than the worker (StoragePlugin::prefault): makes the pools' pages up
    /// to kPrefaultAhead past their published frontiers present (MADV_POPULATE_WRITE), at most
    /// `maxBytes` per call, so that the worker creating flows finds them mapped instead of
    /// taking a page fault per 4 KiB page (on 1 M flows of flowstats, 94 000 faults, a fifth
    /// of the worker's time). Returns the bytes populated; 0 when every pool is far enough
    /// ahead, or when the kernel has no MADV_POPULATE_WRITE (Linux < 5.14).
    std::size_t prefault(std::size_t maxBytes) noexcept;

    /// True when stage 2 has per-flow plugin data to load after the candidate record
    /// (touchWanted): some plugin keeps state or a handle in the area, or tier-2 records.
    bool touchesFlowData() const noexcept { return m_needsArea || hasExt(); }

    /// Loads the tier-2 records attached to `slot` of the plugins in `wants` once its area line
    /// is loaded, as touch() does: the lines the plugin's touch hook names, or (without one,
    /// or `whole`, for export) up to kTouchExtBytes of each, a byte per line.
    /// Demand loads, not prefetch instructions: on this table's batches prefetches of the
    /// records left pstats' per-packet miss in place (568 ns per packet on 1 M flows with
    /// http, dns, tls and pstats), loads overlapped it (399 ns; docs/performance.md).
    std::uint64_t touchExt(std::size_t slot, const CachedFlow& f, std::uint32_t wants,
                           bool whole = false) const noexcept {
        std::uint64_t acc = 0;
        const std::byte* area = m_area.data() + slot * m_stride;
        for (const std::uint8_t i : m_extPlugins) {
            if ((wants & m_plugins[i].bit) == 0) continue;
            const char* rec = extRecord(i, area, f);
            if (rec == nullptr) continue;
            if (!whole && m_plugins[i].hooks.touch != nullptr) {
                acc ^= m_plugins[i].hooks.touch(m_plugins[i].hooks.self,
                                                stateOf(area, f, m_plugins[i]), rec);
                continue;
            }
            for (std::size_t off = 0; off < exportBytes(i); off += 64)
                acc ^= static_cast<unsigned char>(rec[off]);
        }
        return acc;
    }

    /// A few rows ahead of an export: prefetches of the slot's area line and of the tier-2
    /// records the write hooks will read (as touchForExport loads them), so that the sweep and
    /// the final flush, which export row after row, find them in cache. `f` must be loaded (its
    /// handles are read); a handle kept in the area is read from it, a miss only then.
    void prefetchForExport(std::size_t slot, const CachedFlow& f) const noexcept {
        const std::byte* area = m_area.data() + slot * m_stride;
        if (m_needsArea) prefetchWrite(area);
        for (const std::uint8_t i : m_extPlugins) {
            if (m_plugins[i].recordHandle < 0) continue;  // in the area: not loaded yet
            const char* rec = extRecord(i, area, f);
            if (rec == nullptr) continue;
            for (std::size_t off = 0; off < exportBytes(i); off += 64) prefetchRead(rec + off);
        }
    }

    /// Export: loads every tier-2 record attached to `slot` (its area line loaded first), as
    /// the write hooks will read them; a byte per line, returned for the table's sink.
    std::uint64_t touchForExport(std::size_t slot, const CachedFlow& f) const noexcept {
        return touchExt(slot, f, ~std::uint32_t{0}, true);
    }

    /// False when every enabled plugin keeps its handle in the record and has no tier-1
    /// state: the table then never needs to load the plugin area ahead of the hooks.
    bool needsArea() const noexcept { return m_needsArea; }

    /// A new flow in `slot` (its first packet counted): zeroed state, postCreate hooks.
    /// Returns the OR of the flush bits.
    HookResult postCreate(std::size_t slot, CachedFlow& f, const ParsedPacket& pkt,
                          bool forward) noexcept {
        std::byte* area = areaOf(slot);
        if (m_needsArea) std::memset(area, 0, m_stride);
        f.extHandles = {};
        f.inlineState = {};
        std::uint32_t w = m_wantsInit;
        const FlowView view = viewOf(f, EndReason::ForcedEnd);
        HookResult acc = 0;
        for (const std::uint8_t i : m_postCreate) {
            const Entry& e = m_plugins[i];
            acc |= call(e, i, area, f, view, &pkt, forward, e.hooks.postCreate, w);
        }
        f.pluginWants = w;
        return acc & kFlushReinsert;
    }

    /// A packet of a flow some plugin wants (wantsAny), in ipfixprobe's order: preUpdate, the
    /// packet counted in direction `forward ? 0 : 1`, postUpdate. Returns the flush bits of the
    /// first hook pass that asked for a flush (a preUpdate flush leaves the packet uncounted).
    /// Always inlined into the table's hit, as the two passes were before the table's split
    /// (GCC then made this a call of its own per packet). Each pass's mask test is made here,
    /// so a pass no wanting plugin has (flowstats' and pstats' preUpdate) costs no call.
    [[gnu::always_inline]] HookResult updateFlow(std::size_t slot, CachedFlow& f,
                                                 const ParsedPacket& pkt, bool forward) noexcept {
        if ((f.pluginWants & m_preMask) != 0) {
            const HookResult res = update(slot, f, pkt, forward, true);
            if ((res & kFlush) != 0) return res;
        }
        addPacket(f, pkt, forward ? 0 : 1);
        if ((f.pluginWants & m_postMask) == 0) return 0;
        return update(slot, f, pkt, forward, false);
    }

    /// True when some enabled plugin's hooks read payload bytes (ProcessHooks::readsPayload):
    /// only then does the table fetch them (prefetchPayload). Without (flowstats, pstats and
    /// the other size-and-time plugins alone) the worker saves a miss per packet: 9 % of its
    /// time on the 1 M-flow capture with flowstats (docs/performance.md, session 22).
    bool readsPayload() const noexcept { return m_readsPayload; }

    /// Stage 2 of the table's batch: the payload lines the hooks read first (http scans 32
    /// bytes for its method, tls reads the record header), which the parser has not touched.
    static void prefetchPayload(const ParsedPacket& pkt) noexcept {
        const auto payload = pkt.payload();
        if (payload.empty()) return;
        prefetchRead(payload.data());
        prefetchRead(payload.data() + std::min<std::size_t>(payload.size(), 32) - 1);
    }

    /// preUpdate (before = true) or postUpdate hooks of the plugins that want this flow; called
    /// by updateFlow only when some of them has the hook.
    HookResult update(std::size_t slot, CachedFlow& f, const ParsedPacket& pkt, bool forward,
                      bool before) noexcept {
        std::uint32_t w = f.pluginWants;
        std::byte* area = areaOf(slot);
        const FlowView view = viewOf(f, EndReason::ForcedEnd);
        HookResult acc = 0;
        for (const std::uint8_t i : before ? m_preUpdate : m_postUpdate) {
            const Entry& e = m_plugins[i];
            if ((w & e.bit) == 0) continue;
            acc |= call(e, i, area, f, view, &pkt, forward,
                        before ? e.hooks.preUpdate : e.hooks.postUpdate, w);
        }
        f.pluginWants = w;
        return acc & kFlushReinsert;
    }

    /// The exported flow's plugin data: preExport hooks (unless `flushed`), then the write
    /// hooks into `out`; the tier-2 records are released. The worker passes sweeper = false;
    /// the export thread (expiry=thread) true, and then uses sweepWriter().
    void serialize(std::size_t slot, CachedFlow& f, EndReason why, bool flushed,
                   InstanceWriter& out, bool sweeper) noexcept {
        std::byte* area = areaOf(slot);
        const FlowView view = viewOf(f, why);
        if (!flushed) {
            for (const std::uint8_t i : m_preExport) {
                const Entry& e = m_plugins[i];
                FlowContext ctx = context(e, i, area, f, view, nullptr, true, sweeper);
                const std::uint32_t before = *ctx.extHandle;
                e.hooks.preExport(e.hooks.self, ctx);
                if (before != 0 && *ctx.extHandle != before) release(i, before, sweeper);
            }
        }
        FlowServices services;
        for (const std::uint8_t i : m_service) {
            const Entry& e = m_plugins[i];
            FlowContext ctx = context(e, i, area, f, view, nullptr, true, sweeper);
            services.add(e.hooks.service(e.hooks.self, ctx));
        }
        for (const std::uint8_t i : m_write) {
            const Entry& e = m_plugins[i];
            FlowContext ctx = context(e, i, area, f, view, nullptr, true, sweeper);
            if (!m_service.empty()) ctx.services = &services;
            out.setPlugin(i);
            e.hooks.write(e.hooks.self, ctx, out);
        }
        releaseAll(slot, f, sweeper);
    }

    /// Releases the slot's tier-2 records without exporting (a table without export target).
    void releaseAll(std::size_t slot, CachedFlow& f, bool sweeper) noexcept {
        std::byte* area = areaOf(slot);
        for (std::size_t i = 0; i < m_plugins.size(); ++i) {
            const Entry& e = m_plugins[i];
            if (e.hooks.extSize == 0) continue;
            std::uint32_t* h = handleOf(area, f, e);
            if (*h != 0 && e.hooks.release != nullptr) {
                const FlowView view = viewOf(f, EndReason::ForcedEnd);
                FlowContext ctx = context(e, i, area, f, view, nullptr, true, sweeper);
                e.hooks.release(e.hooks.self, ctx);
            }
            if (*h != 0) release(i, *h, sweeper);
            *h = 0;
        }
    }

    /// Worker, start of a batch: takes back the records the export thread released.
    void drainReturned() noexcept {
        std::uint64_t v = 0;
        while (m_returned->tryPop(v)) {
            m_pools[v >> 32].give(static_cast<std::uint32_t>(v));
        }
    }

    InstanceWriter workerWriter() noexcept { return {m_scratch.get(), kMaxPluginData}; }
    InstanceWriter sweepWriter() noexcept { return {m_sweepScratch.get(), kMaxPluginData}; }

    std::uint64_t poolExhausted() const noexcept {
        std::uint64_t n = 0;
        for (const ExtPool& p : m_pools) n += p.exhausted();
        return n;
    }
    /// Tests: records free in plugin i's pool (worker, export thread idle).
    std::uint32_t poolAvailable(std::size_t i) const noexcept { return m_pools[i].available(); }

private:
    static constexpr std::size_t kMaxPoolBytes = std::size_t{1} << 30;
    static constexpr std::size_t kTouchExtBytes = 512;
    /// The most of a slot's area that stage 2 loads (touch()): four lines.
    static constexpr std::size_t kTouchAreaBytes = 256;
    static constexpr std::size_t kRecordHandles =
        std::tuple_size_v<decltype(CachedFlow::extHandles)>;

    /// The bytes of a slot's area that belong to one plugin (handle and state).
    struct AreaRange {
        std::uint32_t bit = 0;
        std::uint16_t begin = 0;
        std::uint16_t end = 0;
    };
    struct Entry {
        ProcessHooks hooks;
        std::uint32_t bit = 0;
        std::uint32_t handleOffset = 0;
        std::uint32_t stateOffset = 0;
        std::int8_t recordHandle = -1;  ///< index into CachedFlow::extHandles, -1: in the area
        bool stateInline = false;       ///< tier-1 state in CachedFlow::inlineState, not the area
    };
    /// A pool's records are a TableArray: a large pool is an anonymous mapping, nothing until
    /// used, the records of live flows packed at its front; on 4 KiB pages or, with
    /// `pool-pages=huge`, on huge pages (fewer TLB entries, dearer to fault in).
    struct PoolMemory {
        detail::TableArray<std::byte> records;
        std::unique_ptr<std::uint32_t[]> freeList;
        std::size_t bytes = 0;  ///< of `records` prefault() may map in: 0 for a heap pool
        std::atomic<std::size_t> frontier{0};  ///< worker → prefaulter: bytes handed out
        std::size_t populated = 0;             ///< prefaulter only: bytes made present
        PoolMemory() = default;
        PoolMemory(PoolMemory&& o) noexcept
            : records(std::move(o.records)),
              freeList(std::move(o.freeList)),
              bytes(o.bytes),
              frontier(o.frontier.load(std::memory_order_relaxed)),
              populated(o.populated) {}
    };
    /// How far past a pool's frontier prefault() keeps its pages present: at 1 M new flows of
    /// 384-byte records in 1.3 s, about 25 ms of the worker's creations.
    static constexpr std::size_t kPrefaultAhead = std::size_t{8} << 20;
    /// A plugin's per-worker state, destroyed with the table.
    struct WorkerState {
        const ProcessHooks* hooks = nullptr;
        void* state = nullptr;
        WorkerState() = default;
        WorkerState(const ProcessHooks* h, void* s) noexcept : hooks(h), state(s) {}
        WorkerState(const WorkerState&) = delete;
        WorkerState& operator=(const WorkerState&) = delete;
        WorkerState(WorkerState&& o) noexcept
            : hooks(o.hooks), state(std::exchange(o.state, nullptr)) {}
        WorkerState& operator=(WorkerState&& o) noexcept {
            std::swap(hooks, o.hooks);
            std::swap(state, o.state);
            return *this;
        }
        ~WorkerState() {
            if (state != nullptr) hooks->destroyWorker(hooks->self, state);
        }
    };

    /// configure, first half: each plugin's entry, hook lists and place in the area.
    void layOut(std::span<ProcessPlugin* const> plugins);
    /// configure, second half: the areas of `slots` slots, the tier-2 pools (on huge pages
    /// when `hugePools`), the return ring.
    void allocate(std::size_t slots, bool hugePools);

    std::byte* areaOf(std::size_t slot) noexcept { return m_area.data() + slot * m_stride; }
    /// Where plugin `e`'s tier-2 handle of a flow lives: in its record or in its area.
    template <class Byte, class Flow,
              class Handle =
                  std::conditional_t<std::is_const_v<Flow>, const std::uint32_t, std::uint32_t>>
    static Handle* handleOf(Byte* area, Flow& f, const Entry& e) noexcept {
        if (e.recordHandle >= 0) return &f.extHandles[static_cast<std::size_t>(e.recordHandle)];
        return reinterpret_cast<Handle*>(area + e.handleOffset);
    }

    /// One byte of every cache line of [p, p + bytes), XOR-ed: demand loads for the sink.
    static std::uint64_t touchBytes(const std::byte* p, std::size_t bytes) noexcept {
        const auto* a = reinterpret_cast<const unsigned char*>(p);
        std::uint64_t acc = a[0];
        const std::size_t first = 64 - (reinterpret_cast<std::uintptr_t>(a) & 63);
        for (std::size_t off = first; off < bytes; off += 64) acc ^= a[off];
        return acc;
    }

    /// Plugin i's tier-2 record of the flow `f` (whose plugin area is `area`), or null.
    const char* extRecord(std::size_t i, const std::byte* area,
                          const CachedFlow& f) const noexcept {
        const std::uint32_t h = *handleOf(area, f, m_plugins[i]);
        return h == 0 ? nullptr : static_cast<const char*>(m_pools[i].at(h));
    }
    /// The bytes of plugin i's records an export reads: the whole record, up to kTouchExtBytes.
    std::size_t exportBytes(std::size_t i) const noexcept {
        return std::min(m_pools[i].recordSize(), kTouchExtBytes);
    }

    /// Where plugin `e`'s tier-1 state of a flow lives: in its record or in its area.
    template <class Byte, class Flow,
              class Out = std::conditional_t<std::is_const_v<Flow>, const std::byte, std::byte>>
    static Out* stateOf(Byte* area, Flow& f, const Entry& e) noexcept {
        if (e.stateInline) return reinterpret_cast<Out*>(f.inlineState.data());
        return reinterpret_cast<Out*>(area + e.stateOffset);
    }

    static FlowView viewOf(const CachedFlow& f, EndReason why) noexcept {
        FlowView v;
        v.key = &f.key;
        v.initiatorIsA = f.initiatorIsA;
        v.timeFirst = f.timeFirst;
        v.timeLast = f.timeLast;
        v.packets = f.packets;
        v.bytes = f.bytes;
        v.tcpFlags = f.tcpFlags;
        v.endReason = why;
        return v;
    }

    FlowContext context(const Entry& e, std::size_t i, std::byte* area, CachedFlow& f,
                        const FlowView& view, const ParsedPacket* pkt, bool forward,
                        bool sweeper = false) noexcept {
        FlowContext ctx;
        const std::vector<WorkerState>& workers = sweeper ? m_sweepWorkers : m_workers;
        if (i < workers.size()) ctx.worker = workers[i].state;
        ctx.packet = pkt;
        ctx.flow = &view;
        ctx.forward = forward;
        ctx.state = stateOf(area, f, e);
        ctx.extHandle = handleOf(area, f, e);
        ctx.pool = &m_pools[i];
        return ctx;
    }

    HookResult call(const Entry& e, std::size_t i, std::byte* area, CachedFlow& f,
                    const FlowView& view, const ParsedPacket* pkt, bool forward, PacketHookFn fn,
                    std::uint32_t& w) noexcept {
        FlowContext ctx = context(e, i, area, f, view, pkt, forward);
        const std::uint32_t before = *ctx.extHandle;
        const HookResult r = fn(e.hooks.self, ctx);
        if (before != 0 && *ctx.extHandle != before) release(i, before, false);
        if ((r & kDone) != 0) w &= ~e.bit;
        return r;
    }

    void release(std::size_t plugin, std::uint32_t handle, bool sweeper) noexcept {
        if (sweeper) {
            m_returned->tryPush((std::uint64_t{plugin} << 32) | handle);  // holds every handle
        } else {
            m_pools[plugin].give(handle);
        }
    }

    std::vector<Entry> m_plugins;
    std::vector<std::uint8_t> m_postCreate, m_preUpdate, m_postUpdate, m_preExport, m_write,
        m_service;
    std::vector<std::uint8_t> m_extPlugins;  ///< plugins with tier-2 records
    std::vector<AreaRange> m_areaRanges;     ///< plugins with bytes in the area
    std::uint32_t m_areaMask = 0;            ///< their bits
    std::uint32_t m_extMask = 0;             ///< the bits of m_extPlugins
    std::uint32_t m_wantsInit = 0;
    std::uint32_t m_preMask = 0;   ///< plugins with a preUpdate hook
    std::uint32_t m_postMask = 0;  ///< plugins with a postUpdate hook
    bool m_needsArea = false;      ///< some plugin has tier-1 state or a handle in the area
    bool m_readsPayload = false;   ///< some plugin reads payload bytes (ProcessHooks)
    std::size_t m_stride = 0;
    std::size_t m_touchArea = 0;  ///< bytes of a slot's area that touch() loads
    detail::TableArray<std::byte> m_area;
    std::vector<ExtPool> m_pools;
    std::vector<PoolMemory> m_poolMemory;
    std::vector<std::size_t> m_poolOf;        ///< per plugin: its PoolMemory (plugins with tier 2)
    bool m_populateRefused = false;           ///< prefaulter only: the kernel answered EINVAL once
    std::vector<WorkerState> m_workers;       ///< per plugin (null state: none); worker thread
    std::vector<WorkerState> m_sweepWorkers;  ///< the same for the export thread (threaded)
    std::unique_ptr<SpscRing<std::uint64_t>> m_returned;
    std::unique_ptr<std::uint8_t[]> m_scratch;
    std::unique_ptr<std::uint8_t[]> m_sweepScratch;
};

}  // namespace rowprobe::storage
