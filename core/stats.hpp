// Statistics shared between the workers, the export thread and the main thread. Workers
// publish a copy of their WorkerStats under a mutex every few thousand packets (never per
// packet); readers take a consistent snapshot.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "rowprobe/stats.hpp"

namespace rowprobe::core {

struct StatsSnapshot {
    std::vector<WorkerStats> queues;
    OutputStats output;
    ExportStats exported;  ///< records taken off the export rings
    double wallSeconds = 0;

    WorkerStats total() const;
};

class StatsBoard {
public:
    explicit StatsBoard(std::size_t queues) : m_queues(queues) {}
    void publish(std::size_t queue, const WorkerStats& stats);
    void publishExport(const ExportStats& exported, const OutputStats& output);
    StatsSnapshot snapshot(double wallSeconds) const;

private:
    mutable std::mutex m_mutex;
    std::vector<WorkerStats> m_queues;
    OutputStats m_output;
    ExportStats m_exported;
};

/// The statistics as one JSON object (the --stats-json format, documented in docs/statistics.md).
std::string formatStatsJson(const StatsSnapshot& s);
/// A human-readable table for stderr. `previous` (may be null) turns it into per-interval rates.
std::string formatStatsText(const StatsSnapshot& s, const StatsSnapshot* previous);

}  // namespace rowprobe::core
