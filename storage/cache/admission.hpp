// Admission: the flood detector of one flow table and the admission mode it switches on
// (`flood-*` options; flood_detector.hpp for the detector itself), outside the FlowTable
// template.
//
//   worker, after every batch:  observe(now, stats)  ── one compare unless an interval ended;
//                                  at a boundary the alarm state lands in CacheStats and the
//                                  admission mode follows the alarm
//   new flow, full row, nothing expired (the only place admission acts):
//     second-packet  admit(h): a 64 Ki-entry filter of hash fingerprints remembers a first
//                    packet (counted in admissionDeferred, in no record); the second is let in
//     back           the table evicts the flow without a hit yet that is furthest back in the
//                    policy's order (probation(r): per row a bitmask of hitless flows, kept
//                    up to date always, one OR per insert and one AND per hit, 4 bytes per
//                    row), before asking the policy for its victim
//
// New-flow attempts fed to the detector: flows created + first packets refused. The filter is
// forgotten when the alarm ends; a flow evicted before the alarm is new again when it returns.
// A flow that continues after a timeout or TCP end always finds a free slot and is never
// refused.
//
// Thread ownership: the worker's only (never touched by the export thread). Costs per packet:
// `back` one OR per new flow and one AND per hit; otherwise nothing outside a flood.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cache/flood_detector.hpp"
#include "cache/slot.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::storage {

class Admission {
public:
    Admission() = default;
    /// Allocates the filter or the per-row masks the configured mode needs (bad_alloc).
    Admission(const FloodConfig& config, std::size_t rows);

    /// Per batch: feeds the detector the table's clock and new-flow attempts.
    void observe(TimeNs now, CacheStats& stats) noexcept {
        if (m_flood && m_flood->observe(now, stats.flowsCreated + stats.admissionDeferred))
            intervalEnded(stats);
    }

    /// An admission mode is acting (a flood is detected and flood-admission is not off).
    bool active() const noexcept { return m_active; }

    /// While active: true to insert the new flow of hash h now (its second packet).
    bool admit(std::uint64_t h) noexcept {
        if (m_seenOnce.empty()) return true;  // `back` admits everybody
        std::uint32_t& seen = m_seenOnce[(h >> 24) & (kSeenOnceSize - 1)];
        const std::uint32_t print = static_cast<std::uint32_t>(h >> 32) | 1U;
        if (seen == print) {
            seen = 0;
            return true;
        }
        seen = print;
        return false;
    }

    /// `back`: whether the per-row masks are kept (else the calls below are not made).
    bool tracksProbation() const noexcept { return !m_probation.empty(); }
    void inserted(std::size_t r, Slot s) noexcept { m_probation[r] |= std::uint32_t{1} << s; }
    void hit(std::size_t r, Slot s) noexcept { m_probation[r] &= ~(std::uint32_t{1} << s); }
    /// The hitless flows of row r (may include freed slots: mask with the occupied ones).
    std::uint32_t probation(std::size_t r) const noexcept { return m_probation[r]; }

private:
    /// Entries of the second-packet filter (4 bytes each: 256 KiB).
    static constexpr std::size_t kSeenOnceSize = std::size_t{1} << 16;

    void intervalEnded(CacheStats& stats) noexcept;

    std::optional<FloodDetector> m_flood;
    FloodAdmission m_mode = FloodAdmission::Off;
    bool m_active = false;
    std::vector<std::uint32_t> m_seenOnce;   ///< second-packet filter: hash fingerprints
    std::vector<std::uint32_t> m_probation;  ///< `back`: per row, flows without a hit yet
};

}  // namespace rowprobe::storage
