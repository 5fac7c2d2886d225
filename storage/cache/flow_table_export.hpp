// FlowTable<P, L> (flow_table.hpp): export — the member definitions that turn a cached flow
// into a FlowRecord (and its plugins' data) and free its slot, and the plugin flushes.
//
//   retire(r, s, why)           exportRecord + free the tag + policy.onErase (every eviction,
//                               end, expiry of the worker)
//   exportRecord(r, s, why)     counted per reason; FlowRecord (cached_flow_ops.hpp) and the
//                               plugins' preExport/write (process_dispatch.hpp) into the
//                               worker's rings, waiting while they are full
//   loadPluginData(r, slots)    the plugin data of flows about to be exported, loaded together
//   sweepPluginData             the export thread's variant, into its own ExtRing
//   flushedByPlugin             a hook's kFlush / kFlushReinsert (ipfixprobe's semantics)
//
// Included at the end of flow_table.hpp; not a header to include on its own.
#pragma once

#include "cache/flow_table.hpp"

namespace rowprobe::storage {

template <class P, unsigned L>
inline void FlowTable<P, L>::retire(std::size_t r, Slot s, EndReason why, bool flushed) noexcept {
    exportRecord(r, s, why, flushed);
    m_rows[r].tags[s] = kEmptyTag;
    --m_stats.flowsInCache;
    m_policy.onErase(rowRef(r), s, why);
}

template <class P, unsigned L>
inline void FlowTable<P, L>::exportRecord(std::size_t r, Slot s, EndReason why,
                                          bool flushed) noexcept {
    ++m_stats.exported[static_cast<std::size_t>(why)];
    const std::size_t slot = slotIndex(r, s);
    CachedFlow& f = m_records[slot];
    if (m_target.ring == nullptr) {
        if (m_proc.enabled()) m_proc.releaseAll(slot, f, false);
        return;
    }
    const std::uint8_t* ext = nullptr;
    std::uint32_t extLen = 0;
    if (m_proc.enabled()) {
        InstanceWriter out = m_proc.workerWriter();
        m_proc.serialize(slot, f, why, flushed, out, false);
        m_stats.pluginDataDropped += out.dropped();
        if (out.size() != 0 && m_target.ext != nullptr) {
            ext = m_target.ext->waitPush(out.data(), out.size(), *m_target.abandon);
            extLen = ext != nullptr ? static_cast<std::uint32_t>(out.size()) : 0;
        }
    }
    m_target.ring->waitEmplace(
        [&](FlowRecord& rec) {
            ::new (&rec) FlowRecord(makeRecord(f, slot, why));
            rec.ext = ext;
            rec.extLen = extLen;
        },
        *m_target.abandon);
}

/// Before the flows of `slots` (a mask of row r) are exported: their plugin areas, then
/// their tier-2 records, as demand loads issued together (the write hooks read them; the
/// records lie anywhere in the pools, so each is a miss). On 1 M flows with pstats, the
/// write hook's misses were a tenth of the run (docs/performance.md).
template <class P, unsigned L>
inline void FlowTable<P, L>::loadPluginData(std::size_t r, std::uint32_t slots) noexcept {
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

/// Export thread, under row r's lock: the plugin data of the record it detaches, copied
/// into the export thread's ExtRing (room for a whole row was checked before the row).
template <class P, unsigned L>
inline void FlowTable<P, L>::sweepPluginData(std::size_t r, Slot s, EndReason why,
                                             FlowRecord& rec) noexcept {
    InstanceWriter out = m_proc.sweepWriter();
    m_proc.serialize(slotIndex(r, s), recordAt(r, s), why, false, out, true);
    if (out.dropped() != 0)
        m_sweeper.counters.pluginDropped.fetch_add(out.dropped(), std::memory_order_relaxed);
    if (out.size() != 0 && m_target.sweepExt != nullptr) {
        rec.ext = m_target.sweepExt->tryPush(out.data(), out.size());
        rec.extLen = rec.ext != nullptr ? static_cast<std::uint32_t>(out.size()) : 0;
    }
}

/// A plugin's hook asked for a flush (flush semantics in rowprobe/process.hpp). kFlush:
/// the flow is exported (a preUpdate flush without the packet, which is dropped).
/// kFlushReinsert (ipfixprobe's flush-with-reinsert): exported, then the flow starts again
/// in the same slot with the same key and orientation, counters cleared, TIME_FIRST = its
/// TIME_LAST, `pkt` counted in direction `dir` (a postUpdate reinsert counts the packet in
/// both records, as ipfixprobe) and postCreate run again. The deadline only moves later,
/// so the row's and block's bounds stay valid.
template <class P, unsigned L>
inline void FlowTable<P, L>::flushedByPlugin(std::size_t r, Slot s, const ParsedPacket& pkt,
                                             std::size_t dir, HookResult res) noexcept {
    for (;;) {
        ++m_stats.pluginFlushes;
        if (res != kFlushReinsert) {
            retire(r, s, EndReason::ForcedEnd, true);
            return;
        }
        exportRecord(r, s, EndReason::ForcedEnd, true);
        CachedFlow& f = recordAt(r, s);
        f.timeFirst = f.timeLast;
        f.packets = {0, 0};
        f.bytes = {0, 0};
        f.tcpFlags = {0, 0};
        addPacket(f, pkt, dir);
        ++m_stats.flowsCreated;
        res = m_proc.postCreate(slotIndex(r, s), f, pkt, dir == 0);
        if ((res & kFlush) == 0) return;
        res = kFlush;  // a flush from the repeated postCreate exports the new flow
    }
}

template <class P, unsigned L>
inline void RowRef<P, L>::evict(Slot s, EndReason why) const noexcept {
    m_table->retire(m_index, s, why);
}

}  // namespace rowprobe::storage
