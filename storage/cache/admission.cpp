#include "cache/admission.hpp"

#include <algorithm>

namespace rowprobe::storage {

Admission::Admission(const FloodConfig& config, std::size_t rows) : m_mode(config.admission) {
    if (config.enabled) m_flood.emplace(config);
    if (config.admission == FloodAdmission::SecondPacket) m_seenOnce.assign(kSeenOnceSize, 0);
    if (config.admission == FloodAdmission::Back) m_probation.assign(rows, 0);
}

void Admission::intervalEnded(CacheStats& stats) noexcept {
    const FloodDetector& d = *m_flood;
    stats.floodIntervals = d.intervals();
    stats.floodAlarms = d.alarms();
    stats.floodActive = d.alarm() ? 1 : 0;
    stats.floodLastAlarm = d.alarmTime();
    stats.floodLastCount = static_cast<std::uint64_t>(std::max(0.0, d.alarmCount()));
    stats.floodBaseline = static_cast<std::uint64_t>(std::max(0.0, d.alarmBaseline()));
    const bool active = d.alarm() && m_mode != FloodAdmission::Off;
    if (active == m_active) return;
    m_active = active;
    if (!active) std::fill(m_seenOnce.begin(), m_seenOnce.end(), 0);  // the flood is over
}

}  // namespace rowprobe::storage
