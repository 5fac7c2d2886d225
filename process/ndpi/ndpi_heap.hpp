// nDPI's heap, counted: rowprobe installs nDPI's allocator hooks (set_ndpi_malloc, set_ndpi_free,
// set_ndpi_flow_malloc, set_ndpi_flow_free) once per process, and each allocation or free is
// added to the HeapCounters the calling thread has in scope (HeapScope), or to a process-wide
// fallback when none is (nothing of rowprobe's runs nDPI outside a scope).
//
//   worker thread ── HeapScope(worker.flows) ── ndpi_detection_process_packet ──▶ ndpi_malloc
//                                                                                │ hook
//   thread_local HeapCounters* t_scope ◀────────────────────────────────────────┘ += usable size
//
// Sizes are malloc_usable_size() of the block (no header is added, so a block nDPI frees that
// came from plain malloc, or the reverse, cannot corrupt the heap; the counts are then off by
// that block, never the heap). Two counter sets per detection module: `module` (the module, its
// automata, lists and LRU caches: live until the module is destroyed) and `flows` (what nDPI
// allocates while rowprobe feeds a flow's packets and gives up at export; freed by
// ndpi_free_flow_data when the flow is exported). Each flow keeps a ledger of the net bytes and
// allocations nDPI made while working on it (FlowSlot::heapBytes); what is left on it after
// ndpi_free_flow_data is memory nDPI keeps in the module (4.2 makes its LRU caches on first use,
// on the packet path) and is moved to `retained`, so the flows' live bytes are exactly what live
// flows hold and return to 0 when the table is empty. Counters are relaxed atomics: the worker (or the export thread under expiry=thread)
// writes them, the statistics reader reads them. Cost: one thread_local load and two relaxed
// additions per nDPI allocation; nothing per packet that does not allocate.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rowprobe::ndpi {

struct HeapCounters {
    std::atomic<std::uint64_t> allocations{0};
    std::atomic<std::uint64_t> frees{0};
    std::atomic<std::uint64_t> allocatedBytes{0};
    std::atomic<std::uint64_t> freedBytes{0};
    /// flows only: what nDPI allocated while working on flows, still held after their export
    /// (module-owned: LRU caches 4.2 makes on first use), moved to the module's account.
    std::atomic<std::uint64_t> retainedBytes{0};
    std::atomic<std::uint64_t> retainedAllocations{0};

    /// Bytes allocated and not yet freed (for flows: nor retained by the module).
    std::uint64_t liveBytes() const noexcept {
        return allocatedBytes.load(std::memory_order_relaxed) -
               freedBytes.load(std::memory_order_relaxed) -
               retainedBytes.load(std::memory_order_relaxed);
    }
    std::uint64_t liveAllocations() const noexcept {
        return allocations.load(std::memory_order_relaxed) - frees.load(std::memory_order_relaxed) -
               retainedAllocations.load(std::memory_order_relaxed);
    }
};

/// Installs the counting allocator into nDPI (idempotent, thread-safe; call before the first
/// module is made).
void installHeapHooks() noexcept;

/// Allocations of nDPI made outside any HeapScope (process-wide).
const HeapCounters& unscopedHeap() noexcept;

/// While alive, nDPI's allocations and frees on this thread count in `counters`. Nests.
class HeapScope {
public:
    explicit HeapScope(HeapCounters& counters) noexcept;
    ~HeapScope();
    HeapScope(const HeapScope&) = delete;
    HeapScope& operator=(const HeapScope&) = delete;

private:
    HeapCounters* m_previous;
};

}  // namespace rowprobe::ndpi
