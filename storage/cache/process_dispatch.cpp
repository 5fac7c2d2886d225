#include "cache/process_dispatch.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace rowprobe::storage {

void ProcessDispatch::configure(std::span<ProcessPlugin* const> plugins, std::size_t slots,
                                bool threaded, bool hugePools) {
    layOut(plugins);
    allocate(slots, hugePools);
    // m_plugins does not move after layOut: the WorkerStates point at its hooks.
    m_workers.clear();
    m_sweepWorkers.clear();
    m_workers.resize(m_plugins.size());
    if (threaded) m_sweepWorkers.resize(m_plugins.size());
    for (std::size_t i = 0; i < m_plugins.size(); ++i) {
        const ProcessHooks& h = m_plugins[i].hooks;
        if (h.createWorker == nullptr) continue;
        m_workers[i] = WorkerState(&h, h.createWorker(h.self));
        if (threaded) m_sweepWorkers[i] = WorkerState(&h, h.createWorker(h.self));
    }
}

void ProcessDispatch::layOut(std::span<ProcessPlugin* const> plugins) {
    if (plugins.size() > kMaxProcessPlugins) {
        throw ConfigError({.component = "command line",
                           .option = "-p",
                           .value = std::to_string(plugins.size()) + " plugins",
                           .problem = "at most " + std::to_string(kMaxProcessPlugins) +
                                      " process plugins can be enabled at once"});
    }
    std::size_t offset = 0;
    std::size_t recordHandles = 0;
    bool inlineUsed = false;
    for (std::size_t i = 0; i < plugins.size(); ++i) {
        Entry e;
        e.hooks = plugins[i]->hooks();
        if (e.hooks.stateSize > kMaxProcessState) {
            throw ConfigError({.component = "process '" + std::string(plugins[i]->name()) + "'",
                               .option = "state",
                               .value = std::to_string(e.hooks.stateSize),
                               .problem = "per-flow state over " +
                                          std::to_string(kMaxProcessState) +
                                          " bytes: keep bulk data in the tier-2 record"});
        }
        e.bit = std::uint32_t{1} << i;
        if (e.hooks.extSize != 0 && recordHandles < kRecordHandles) {
            e.recordHandle = static_cast<std::int8_t>(recordHandles++);
        } else {
            e.handleOffset = static_cast<std::uint32_t>(offset);
            offset += sizeof(std::uint32_t);
            offset = (offset + 7) & ~std::size_t{7};
        }
        if (e.hooks.stateSize != 0 && e.hooks.stateSize <= sizeof(CachedFlow::inlineState) &&
            !inlineUsed) {
            e.stateInline = true;  // a size of 1 or 2 has an alignment of at most 2
            inlineUsed = true;
        }
        if (e.recordHandle < 0 || (e.hooks.stateSize != 0 && !e.stateInline)) m_needsArea = true;
        if (e.hooks.readsPayload) m_readsPayload = true;
        e.stateOffset = static_cast<std::uint32_t>(offset);
        if (!e.stateInline) offset += (e.hooks.stateSize + 7) & ~std::size_t{7};
        const std::size_t areaBegin = e.recordHandle < 0 ? e.handleOffset : e.stateOffset;
        if (offset > areaBegin) {
            m_areaRanges.push_back({.bit = e.bit,
                                    .begin = static_cast<std::uint16_t>(areaBegin),
                                    .end = static_cast<std::uint16_t>(offset)});
            m_areaMask |= e.bit;
        }
        if (e.hooks.postCreate) m_postCreate.push_back(static_cast<std::uint8_t>(i));
        if (e.hooks.preUpdate) m_preUpdate.push_back(static_cast<std::uint8_t>(i));
        if (e.hooks.postUpdate) m_postUpdate.push_back(static_cast<std::uint8_t>(i));
        if (e.hooks.preExport) m_preExport.push_back(static_cast<std::uint8_t>(i));
        if (e.hooks.write) m_write.push_back(static_cast<std::uint8_t>(i));
        if (e.hooks.service) m_service.push_back(static_cast<std::uint8_t>(i));
        if (e.hooks.preUpdate) m_preMask |= e.bit;
        if (e.hooks.postUpdate) m_postMask |= e.bit;
        m_plugins.push_back(e);
    }
    m_wantsInit = m_preMask | m_postMask;  // a new flow is wanted by every plugin with one
    m_stride = (offset + 7) & ~std::size_t{7};
    m_stride = std::max<std::size_t>(m_stride, 8);
    m_touchArea = std::min(m_stride, kTouchAreaBytes);
}

void ProcessDispatch::allocate(std::size_t slots, bool hugePools) {
    m_area = detail::TableArray<std::byte>(slots * m_stride);
    if (!m_area.zeroed()) std::memset(m_area.data(), 0, slots * m_stride);
    m_pools.resize(m_plugins.size());
    m_poolOf.assign(m_plugins.size(), 0);
    m_poolMemory.reserve(m_plugins.size());
    std::size_t handles = 0;
    for (std::size_t i = 0; i < m_plugins.size(); ++i) {
        const ProcessHooks& h = m_plugins[i].hooks;
        if (h.extSize == 0) continue;
        m_extPlugins.push_back(static_cast<std::uint8_t>(i));
        m_extMask |= m_plugins[i].bit;
        const std::size_t record = (h.extSize + 63) & ~std::size_t{63};
        std::size_t count = h.extPoolRecords != 0 ? h.extPoolRecords : slots;
        count = std::min(count, std::max<std::size_t>(1024, kMaxPoolBytes / record));
        count = std::min<std::size_t>(count, 0x7FFFFFFF);
        m_poolOf[i] = m_poolMemory.size();
        PoolMemory& mem = m_poolMemory.emplace_back();
        // Untouched pages cost no memory: only records in use are ever written.
        mem.records =
            detail::TableArray<std::byte>(count * record, hugePools ? ~std::size_t{0} : 0);
        // prefault() maps in pages of mapped pools only; a small pool is ordinary heap memory
        // (not page-aligned, where madvise would refuse it).
        mem.bytes = mem.records.zeroed() ? count * record : 0;
        mem.freeList =
            std::make_unique_for_overwrite<std::uint32_t[]>(count);  // lazily, see ExtPool
        m_pools[i] = ExtPool(mem.records.data(), mem.freeList.get(),
                             static_cast<std::uint32_t>(count), record, h.zeroExt);
        handles += count;
    }
    m_returned = std::make_unique<SpscRing<std::uint64_t>>(std::max<std::size_t>(handles, 2));
    m_scratch = std::make_unique<std::uint8_t[]>(kMaxPluginData);
    m_sweepScratch = std::make_unique<std::uint8_t[]>(kMaxPluginData);
}

std::size_t ProcessDispatch::prefault(std::size_t maxBytes) noexcept {
    if (m_populateRefused) return 0;
    constexpr std::size_t kPage = 4096;
    for (PoolMemory& mem : m_poolMemory) {
        const std::size_t frontier = mem.frontier.load(std::memory_order_relaxed);
        const std::size_t target = std::min(mem.bytes, frontier + kPrefaultAhead) & ~(kPage - 1);
        const std::size_t from = std::max(mem.populated, frontier & ~(kPage - 1));
        if (from >= target) continue;
        const std::size_t n = std::min(target - from, maxBytes);
        if (!detail::populateWrite(mem.records.data() + from, n)) {
            // EINVAL: a kernel before 5.14; ENOMEM/EFAULT: no memory now. Either way the
            // worker's own faults remain, as without prefaulting.
            if (errno == EINVAL) m_populateRefused = true;
            return 0;
        }
        mem.populated = from + n;
        return n;
    }
    return 0;
}

}  // namespace rowprobe::storage
