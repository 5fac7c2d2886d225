// FlowTable<P, L> (flow_table.hpp): the batch's entry points and its stage-2 load.
//
//   hashBatch(batch, out)            the batch's flow hashes, for a thread ahead of the worker
//                                    (the input thread while the worker is behind)
//   processHashedBatch(batch, h)     the packet path, with those hashes or (null) its own;
//                                    processBatch is processHashedBatch(batch, nullptr)
//   loadCandidate(h, slot)           stage 2: one word of each line of the record a packet
//                                    will most likely touch
//
// Included at the end of flow_table.hpp; not a header to include on its own.
#pragma once

#include "cache/flow_table.hpp"

namespace rowprobe::storage {

template <class P, unsigned L>
inline bool FlowTable<P, L>::hashBatch(std::span<const ParsedPacket> batch,
                                       std::uint64_t* out) const noexcept {
    for (std::size_t off = 0; off < batch.size(); off += kMaxBatch)
        m_hashBatch(batch.subspan(off, std::min(kMaxBatch, batch.size() - off)), m_seed, out + off);
    return true;
}

template <class P, unsigned L>
inline void FlowTable<P, L>::processHashedBatch(std::span<ParsedPacket> batch,
                                                const std::uint64_t* hashes) noexcept {
    m_batchLast = m_now;
    if (threaded() && m_proc.enabled()) m_proc.drainReturned();
    for (std::size_t off = 0; off < batch.size(); off += kMaxBatch) {
        processPart(batch.subspan(off, std::min(kMaxBatch, batch.size() - off)),
                    hashes != nullptr ? hashes + off : nullptr);
    }
    m_now = m_batchLast;  // the clock follows the capture, even backwards
    if (m_config.prefault) publishForPrefault();
    if (m_stats.flowsInCache >= m_promoteAt) [[unlikely]]
        promoteWhenDue();
    if (threaded()) {
        m_clock.store(m_now, std::memory_order_release);
    } else {
        sweepBlocks(inlineSweepBlocks());
    }
    m_admission.observe(m_now, m_stats);
}

template <class P, unsigned L>
inline std::uint64_t FlowTable<P, L>::loadCandidate(std::uint64_t h, std::uint32_t* slot) noexcept {
    const std::size_t r = h & m_rowMask;
    const RowType& row = m_rows[r];
    Slot s = kNoSlot;
    bool fresh = false;
    const std::uint32_t m = TagMatch::template match<L>(row.tags.data(), tagOf(h));
    if (m != 0) {
        s = static_cast<Slot>(std::countr_zero(m));
        if constexpr (kMetaBySlot) prefetchWrite(&row.meta[s]);
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
    // The plugins' data (area, tier 2) is loaded by the next pass, for the plugins that
    // still want the flow (ProcessDispatch::touchWanted).
    return f.timeLast ^ f.bytes[0];  // line 0 and line 1
}

}  // namespace rowprobe::storage
