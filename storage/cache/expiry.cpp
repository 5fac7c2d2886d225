#include "cache/expiry.hpp"

namespace rowprobe::storage {

std::size_t SweepPace::advance(TimeNs now, std::size_t blocks, TimeNs period) noexcept {
    if (!m_started) {
        m_started = true;
        m_last = now;
    }
    const TimeNs dt = now > m_last ? now - m_last : 0;  // time may step back
    m_last = now;
    if (dt >= period) {
        m_credit = 0;
        return blocks;
    }
    m_credit += dt * blocks;
    const auto owed = static_cast<std::size_t>(m_credit / period);
    m_credit -= static_cast<TimeNs>(owed) * period;
    return owed;
}

void SweepCounters::count(const FlowRecord* records, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i)
        exported[static_cast<std::size_t>(records[i].endReason)].fetch_add(
            1, std::memory_order_relaxed);
    if (n != 0) {
        bySweep.fetch_add(n, std::memory_order_relaxed);
        removed.fetch_add(n, std::memory_order_relaxed);
    }
}

void SweepCounters::addTo(CacheStats& stats) const noexcept {
    for (std::size_t i = 0; i < kEndReasonSlots; ++i)
        stats.exported[i] += exported[i].load(std::memory_order_relaxed);
    stats.exportedBySweep += bySweep.load(std::memory_order_relaxed);
    stats.flowsInCache -= removed.load(std::memory_order_relaxed);
    stats.pluginDataDropped += pluginDropped.load(std::memory_order_relaxed);
}

}  // namespace rowprobe::storage
