// The policy lab's output: one line per configuration with the columns of the thesis tables,
// as an aligned text table, a CSV file and a PNG plot (gnuplot).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "belady.hpp"
#include "replay.hpp"

namespace rowprobe::lab {

/// One output line: a policy run, or the Belady bound of a (hash, size, line) combination.
struct ReportRow {
    std::string label;
    std::string hash;
    unsigned sizeLog2 = 0;
    unsigned line = 0;
    bool bound = false;  ///< the Belady line (no table: no positions, sweep, end, time)
    std::uint64_t packets = 0;
    std::uint64_t hits = 0;
    std::uint64_t missFree = 0;
    std::uint64_t missEvict = 0;
    std::uint64_t missReclaim = 0;
    std::uint64_t exported = 0;
    std::uint64_t evicted =
        0;  ///< exports for lack of resources (forced, incl. promotion evictions)
    double posMean = 0;
    double posVariance = 0;
    std::uint64_t sweep = 0;
    std::uint64_t atEnd = 0;
    std::uint64_t recreated = 0;
    std::uint64_t cutEvict = 0;
    std::uint64_t hhEvict = 0;
    std::uint64_t bigEvict = 0;
    double nsPerPacket = 0;

    double hitRate() const {
        return packets != 0 ? 100.0 * static_cast<double>(hits) / static_cast<double>(packets) : 0;
    }
    std::string combo() const;  ///< "xxh3 size=10 L=16"
};

ReportRow rowOf(const RunResult& r);
ReportRow rowOf(const BeladyResult& b, const std::string& hash, unsigned sizeLog2, unsigned line,
                std::uint64_t packets);

void printTable(std::ostream& out, const std::vector<ReportRow>& rows);
/// Throws std::runtime_error when the file cannot be written.
void writeCsv(const std::string& path, const std::vector<ReportRow>& rows);
/// Hit rate, forced evictions and re-created flows per policy (one bar cluster per
/// configuration), through gnuplot. Throws std::runtime_error if gnuplot is missing or fails.
void writePlot(const std::string& pngPath, const std::string& title,
               const std::vector<ReportRow>& rows);

}  // namespace rowprobe::lab
