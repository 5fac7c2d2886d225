// FloodDetector: notices a flood of new flows (SYN flood, scan, spoofed sources) from the flow
// table's own counters, with an EWMA forecast and a one-sided CUSUM (Hofstede et al., "Towards
// real-time intrusion detection for NetFlow and IPFIX", CNSM 2013; docs/design/flow-cache.md).
//
//   worker, after every batch:  observe(now, newFlowsSoFar)   ── one compare unless an interval
//                                    │                            of packet time has ended
//                                    ▼ per interval (default 5 s)
//   x      = new flows in the interval (flows created + first packets refused by admission)
//   μ, σ   = forecast of x and std. dev. of the forecast error, as of the previous interval
//   T      = μ + max(k·σ, floor)                       threshold (k = 5, floor = 7000)
//   S      = max(0, S + x − T)                         CUSUM of the excess over T
//   alarm  = S > k·σ                                   raised: counter, flag, log (by the core)
//   then, outside an alarm:  e = x − μ;  μ += α·e;  σ² = (1 − α)·σ² + α·e²    (α = 0.3)
//
// Choices (where the thesis' version had defects, this one differs):
// * doubles throughout; σ is the EWMA standard deviation of the signed forecast error e = x − μ
//   with μ taken before the update (the "forecast"), so a steady trace has σ ≈ its noise;
// * the first interval is only counted: it sees every flow already running when the capture
//   started as new (the table filling up), and learning that burst would inflate σ so much that
//   a flood stays hidden for a minute (measured: a 200 000-flow start-up hid a 500 000-per-
//   interval SYN flood 20 s later). μ starts from the second interval;
// * the first `warmup` intervals (default 3, the first included) only learn: no alarm before;
// * the forecast is frozen while the alarm is on, so a sustained flood is not learnt as the new
//   normal; the alarm ends at the first interval whose x is back under T (S is reset to 0).
//   A permanent step up of more than `floor` new flows per interval is therefore reported as a
//   flood until it ends: the floor is the knob for that;
// * packet time, not wall time: an offline replay gives the same alarms at any speed. Intervals
//   without packets count as x = 0 (at most kMaxGapIntervals of them, then the interval clock
//   restarts at the next packet); a clock that steps back (concatenated captures) restarts the
//   current interval.
//
// Thread ownership: owned by one flow table and called by its worker only. Costs: observe() is
// an inlined compare per batch; the per-interval step is a few floating-point operations. No
// allocation, exception or log line anywhere (the core logs from the statistics it publishes).
#pragma once

#include <algorithm>
#include <cstdint>

#include "rowprobe/packet.hpp"

namespace rowprobe::storage {

/// What the cache does while a flood is detected (`flood-admission` option).
enum class FloodAdmission : std::uint8_t {
    Off,           ///< detect and report only
    SecondPacket,  ///< a new flow enters the table only on its second packet (first is counted
                   ///< in admissionDeferred and otherwise dropped)
    Back,          ///< new flows enter as usual but are evicted before any established flow
};

struct FloodConfig {
    bool enabled = true;
    TimeNs interval = 5 * kNsPerSec;
    double alpha = 0.3;
    double k = 5.0;
    double floor = 7000.0;
    unsigned warmup = 3;
    FloodAdmission admission = FloodAdmission::Off;
};

class FloodDetector {
public:
    /// Intervals without packets fed as x = 0 before the interval clock restarts.
    static constexpr unsigned kMaxGapIntervals = 12;

    explicit FloodDetector(const FloodConfig& config) noexcept : m_config(config) {}

    /// Per batch: `now` is the table's clock, `newFlows` its running count of new-flow attempts.
    /// Returns true when an interval ended during this call (the alarm may have changed).
    bool observe(TimeNs now, std::uint64_t newFlows) noexcept {
        if (m_started && now >= m_intervalStart && now < m_nextBoundary) return false;
        return advance(now, newFlows);
    }

    /// One interval with `x` new flows: the EWMA + CUSUM step (public for tests).
    void addInterval(double x) noexcept;

    bool alarm() const noexcept { return m_alarm; }
    std::uint64_t alarms() const noexcept { return m_alarms; }
    std::uint64_t intervals() const noexcept { return m_intervals; }
    double mean() const noexcept { return m_mean; }
    double sigma() const noexcept;
    double cusum() const noexcept { return m_cusum; }
    /// x of the interval that raised the latest alarm, and the forecast μ then.
    double alarmCount() const noexcept { return m_alarmCount; }
    double alarmBaseline() const noexcept { return m_alarmBaseline; }
    /// End of the interval that raised the latest alarm (packet time), 0 before any alarm.
    TimeNs alarmTime() const noexcept { return m_alarmTime; }

private:
    bool advance(TimeNs now, std::uint64_t newFlows) noexcept;

    FloodConfig m_config;
    bool m_started = false;
    TimeNs m_intervalStart = 0;
    TimeNs m_nextBoundary = 0;
    std::uint64_t m_countAtStart = 0;
    std::uint64_t m_intervals = 0;
    double m_mean = 0;
    double m_variance = 0;
    double m_cusum = 0;
    bool m_alarm = false;
    std::uint64_t m_alarms = 0;
    double m_alarmCount = 0;
    double m_alarmBaseline = 0;
    TimeNs m_alarmTime = 0;
    TimeNs m_boundaryBeingClosed = 0;
};

}  // namespace rowprobe::storage
