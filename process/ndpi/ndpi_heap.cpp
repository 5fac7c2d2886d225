#include "process/ndpi/ndpi_heap.hpp"

#include <malloc.h>

#include <cstdlib>
#include <mutex>

extern "C" {
#include <ndpi_api.h>
}

namespace rowprobe::ndpi {

namespace {

thread_local HeapCounters* t_scope = nullptr;
HeapCounters g_unscoped;

HeapCounters& current() noexcept { return t_scope != nullptr ? *t_scope : g_unscoped; }

void* countedMalloc(std::size_t size) {
    void* p = std::malloc(size);  // NOLINT(cppcoreguidelines-no-malloc)
    if (p != nullptr) {
        HeapCounters& c = current();
        c.allocations.fetch_add(1, std::memory_order_relaxed);
        c.allocatedBytes.fetch_add(malloc_usable_size(p), std::memory_order_relaxed);
    }
    return p;
}

void countedFree(void* p) {
    if (p == nullptr) return;
    HeapCounters& c = current();
    c.frees.fetch_add(1, std::memory_order_relaxed);
    c.freedBytes.fetch_add(malloc_usable_size(p), std::memory_order_relaxed);
    std::free(p);  // NOLINT(cppcoreguidelines-no-malloc)
}

}  // namespace

void installHeapHooks() noexcept {
    static std::once_flag once;
    std::call_once(once, [] {
        set_ndpi_malloc(countedMalloc);
        set_ndpi_free(countedFree);
        set_ndpi_flow_malloc(countedMalloc);
        set_ndpi_flow_free(countedFree);
    });
}

const HeapCounters& unscopedHeap() noexcept { return g_unscoped; }

HeapScope::HeapScope(HeapCounters& counters) noexcept : m_previous(t_scope) { t_scope = &counters; }

HeapScope::~HeapScope() { t_scope = m_previous; }

}  // namespace rowprobe::ndpi
