#include "cache/flood_detector.hpp"

#include <cmath>

namespace rowprobe::storage {

double FloodDetector::sigma() const noexcept { return std::sqrt(std::max(m_variance, 0.0)); }

bool FloodDetector::advance(TimeNs now, std::uint64_t newFlows) noexcept {
    if (!m_started || now < m_intervalStart) {  // first packet, or the clock stepped back
        m_started = true;
        m_intervalStart = now;
        m_nextBoundary = now + m_config.interval;
        m_countAtStart = newFlows;
        return false;
    }
    // The batch that crossed the boundary is counted in the interval it closes.
    m_boundaryBeingClosed = m_nextBoundary;
    addInterval(static_cast<double>(newFlows - m_countAtStart));
    m_countAtStart = newFlows;
    m_intervalStart = m_nextBoundary;
    m_nextBoundary += m_config.interval;
    unsigned gaps = 0;
    while (now >= m_nextBoundary && gaps < kMaxGapIntervals) {  // intervals without packets
        m_boundaryBeingClosed = m_nextBoundary;
        addInterval(0);
        m_intervalStart = m_nextBoundary;
        m_nextBoundary += m_config.interval;
        ++gaps;
    }
    if (now >= m_nextBoundary) {  // a long pause: restart the interval clock here
        m_intervalStart = now;
        m_nextBoundary = now + m_config.interval;
    }
    return true;
}

void FloodDetector::addInterval(double x) noexcept {
    ++m_intervals;
    // The first interval counts every flow that was already running when the capture started
    // as new: learning it would inflate σ for a dozen intervals and hide a flood meanwhile.
    if (m_intervals == 1) return;
    if (m_intervals <= m_config.warmup || m_intervals == 2) {  // learn only
        if (m_intervals == 2) {
            m_mean = x;
            m_variance = 0;
        } else {
            const double e = x - m_mean;
            m_mean += m_config.alpha * e;
            m_variance = (1 - m_config.alpha) * m_variance + m_config.alpha * e * e;
        }
        return;
    }
    const double sd = sigma();
    const double threshold = m_mean + std::max(m_config.k * sd, m_config.floor);
    m_cusum = std::max(0.0, m_cusum + x - threshold);
    if (m_alarm && x <= threshold) m_cusum = 0;  // back under the threshold: the flood is over
    const bool alarm = m_cusum > m_config.k * sd;
    if (alarm && !m_alarm) {
        ++m_alarms;
        m_alarmCount = x;
        m_alarmBaseline = m_mean;
        m_alarmTime = m_boundaryBeingClosed;
    }
    m_alarm = alarm;
    if (!m_alarm) {  // learn only from normal intervals
        const double e = x - m_mean;
        m_mean += m_config.alpha * e;
        m_variance = (1 - m_config.alpha) * m_variance + m_config.alpha * e * e;
    }
}

}  // namespace rowprobe::storage
