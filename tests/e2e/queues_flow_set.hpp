// Helpers of the multi-queue, expiry-mode and flood tests: run the rowprobe binary with JSON
// output and JSON statistics, and compare the exported flows as sets.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {

struct ProbeResult {
    CommandResult cmd;
    std::vector<JsonObject> flows;
    JsonObject stats;  ///< --stats-json, flattened ("total.cache.hits", "queues.1.packets")
};

/// Runs rowprobe with `args` plus JSON output and statistics into `dir`/`name`.*.
inline ProbeResult runProbe(const std::vector<std::string>& args, const std::filesystem::path& dir,
                            const std::string& name, int timeoutSec = 300) {
    const std::filesystem::path flows = dir / (name + ".json");
    const std::filesystem::path stats = dir / (name + ".stats.json");
    std::vector<std::string> argv = {rowprobeBinary().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(),
                {"-o", "json;file=" + flows.string(), "--stats-json", stats.string(), "-Q"});
    ProbeResult r;
    r.cmd = runCommand(argv, timeoutSec);
    r.flows = parseJsonLines(readFile(flows));
    const std::string statsText = readFile(stats);
    if (!statsText.empty()) r.stats = parseJsonFlat(statsText);
    return r;
}

inline std::string field(const JsonObject& o, const std::string& key) {
    const auto it = o.find(key);
    return it == o.end() ? "-" : it->second;
}

inline std::uint64_t statValue(const ProbeResult& r, const std::string& key) {
    const auto it = r.stats.find(key);
    return it == r.stats.end() ? ~std::uint64_t{0} : std::stoull(it->second);
}

/// One line per flow record: key, counters, flags, times (and the end reason if asked).
inline std::vector<std::string> flowSet(const std::vector<JsonObject>& flows, bool withReason) {
    std::vector<std::string> out;
    for (const auto& f : flows) {
        std::ostringstream s;
        s << field(f, "src_ip") << ':' << field(f, "src_port") << '>' << field(f, "dst_ip") << ':'
          << field(f, "dst_port") << " p" << field(f, "proto") << " v" << field(f, "vlan")
          << " pkts " << field(f, "packets") << '/' << field(f, "packets_rev") << " bytes "
          << field(f, "bytes") << '/' << field(f, "bytes_rev") << " flags " << field(f, "tcp_flags")
          << '/' << field(f, "tcp_flags_rev") << " t " << field(f, "time_first") << ".."
          << field(f, "time_last");
        if (withReason) s << ' ' << field(f, "end_reason");
        out.push_back(s.str());
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Empty when equal, else the count and the first few records only one side has.
inline std::string setDifference(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) {
    if (a == b) return {};
    std::vector<std::string> onlyA;
    std::vector<std::string> onlyB;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(onlyA));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(onlyB));
    std::ostringstream s;
    s << a.size() << " vs " << b.size() << " records; " << onlyA.size() << " only left, "
      << onlyB.size() << " only right";
    for (std::size_t i = 0; i < std::min<std::size_t>(3, onlyA.size()); ++i)
        s << "\n  left:  " << onlyA[i];
    for (std::size_t i = 0; i < std::min<std::size_t>(3, onlyB.size()); ++i)
        s << "\n  right: " << onlyB[i];
    return s.str();
}

}  // namespace rowprobe::test
