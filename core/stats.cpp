#include "stats.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "counters.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/format.hpp"

namespace rowprobe::core {

namespace {

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// The "cache" object: every entry of the counter table with a JSON key, in table order;
/// "group.key" entries nest under "group".
void writeCache(std::ostringstream& o, const CacheStats& c) {
    std::string_view group;
    bool first = true;
    bool firstInGroup = true;
    visitCacheCounters(c, [&](const CounterInfo& info, const auto& value) {
        if (info.json.empty()) return;
        const std::size_t dot = info.json.find('.');
        const std::string_view g = dot == std::string_view::npos ? "" : info.json.substr(0, dot);
        const std::string_view key = info.json.substr(dot == std::string_view::npos ? 0 : dot + 1);
        if (g != group) {
            if (!group.empty()) o << '}';
            if (!g.empty()) {
                o << (first ? "" : ",") << '"' << g << "\":{";
                first = false;
                firstInGroup = true;
            }
            group = g;
        }
        bool& isFirst = group.empty() ? first : firstInGroup;
        o << (isFirst ? "" : ",") << '"' << key << "\":";
        isFirst = false;
        using V = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<V, double>) {
            o << number(value);
        } else if constexpr (std::is_integral_v<V>) {
            if (info.kind == CounterKind::Iso) {
                o << '"' << (value != 0 ? formatTimeIso(value, 0) : std::string()) << '"';
            } else {
                o << value;
            }
        } else {  // per end reason
            o << '{';
            for (std::size_t r = 1; r < kEndReasonSlots; ++r) {
                o << (r > 1 ? "," : "") << '"' << endReasonName(static_cast<EndReason>(r))
                  << "\":" << value[r];
            }
            o << '}';
        }
    });
    if (!group.empty()) o << '}';
}

void writeWorker(std::ostringstream& o, const WorkerStats& w) {
    o << "\"packets\":" << w.packets << ",\"parsed\":" << w.parsed << ",\"ip_bytes\":" << w.ipBytes
      << ",\"skipped\":" << (w.packets - w.parsed) << ",\"anomalies\":{";
    for (std::size_t i = 0; i < kAnomalyCount; ++i) {
        o << (i ? "," : "") << '"' << anomalyName(static_cast<Anomaly>(i))
          << "\":" << w.anomalies.count[i];
    }
    o << "},\"input\":{\"received\":" << w.input.received
      << ",\"kernel_drops\":" << w.input.kernelDrops
      << ",\"interface_drops\":" << w.input.ifaceDrops << "}"
      << ",\"cache\":{";
    writeCache(o, w.cache);
    o << "}"
      << ",\"batches\":" << w.batches << ",\"busy_ns\":" << w.busyNs << ",\"ns_per_packet\":"
      << number(w.packets ? static_cast<double>(w.busyNs) / static_cast<double>(w.packets) : 0.0);
}

}  // namespace

WorkerStats StatsSnapshot::total() const {
    WorkerStats t;
    for (const auto& w : queues) {
        t.packets += w.packets;
        t.parsed += w.parsed;
        t.ipBytes += w.ipBytes;
        t.anomalies += w.anomalies;
        t.batches += w.batches;
        t.busyNs += w.busyNs;
        mergeCacheStats(t.cache, w.cache);
        t.input.received += w.input.received;
        t.input.kernelDrops += w.input.kernelDrops;
        t.input.ifaceDrops += w.input.ifaceDrops;
    }
    return t;
}

void StatsBoard::publish(std::size_t queue, const WorkerStats& stats) {
    const std::lock_guard lock(m_mutex);
    m_queues[queue] = stats;
}

void StatsBoard::publishExport(std::uint64_t exportedRecords, const OutputStats& output) {
    const std::lock_guard lock(m_mutex);
    m_exported = exportedRecords;
    m_output = output;
}

StatsSnapshot StatsBoard::snapshot(double wallSeconds) const {
    const std::lock_guard lock(m_mutex);
    return StatsSnapshot{m_queues, m_output, m_exported, wallSeconds};
}

std::string formatStatsJson(const StatsSnapshot& s) {
    std::ostringstream o;
    o << "{\"wall_seconds\":" << number(s.wallSeconds) << ",\"total\":{";
    writeWorker(o, s.total());
    o << "},\"queues\":[";
    for (std::size_t q = 0; q < s.queues.size(); ++q) {
        o << (q ? "," : "") << "{\"queue\":" << q << ',';
        writeWorker(o, s.queues[q]);
        o << '}';
    }
    o << "],\"export\":{\"records\":" << s.exportedRecords
      << "},\"output\":{\"records\":" << s.output.records << ",\"dropped\":" << s.output.dropped
      << ",\"discarded\":" << s.output.discarded << ",\"bytes\":" << s.output.bytes << "}}\n";
    return o.str();
}

std::string formatStatsText(const StatsSnapshot& s, const StatsSnapshot* previous) {
    std::ostringstream o;
    char line[512];
    const double span = previous ? s.wallSeconds - previous->wallSeconds : s.wallSeconds;
    std::snprintf(line, sizeof line, "%-6s %12s %12s %10s %12s %12s %12s %12s %10s %8s %8s\n",
                  "queue", "packets", "parsed", "Mpps", "hits", "miss-free", "miss-evict",
                  "exported", "in-cache", "load", "ns/pkt");
    o << line;
    auto row = [&](const std::string& name, const WorkerStats& w, const WorkerStats* p) {
        const std::uint64_t pk = w.packets - (p ? p->packets : 0);
        const double mpps = span > 0 ? static_cast<double>(pk) / span / 1e6 : 0.0;
        const double nsPerPkt =
            w.packets ? static_cast<double>(w.busyNs) / static_cast<double>(w.packets) : 0.0;
        std::snprintf(
            line, sizeof line,
            "%-6s %12llu %12llu %10.3f %12llu %12llu %12llu %12llu %10llu %7.1f%% %8.1f\n",
            name.c_str(), static_cast<unsigned long long>(pk),
            static_cast<unsigned long long>(w.parsed - (p ? p->parsed : 0)), mpps,
            static_cast<unsigned long long>(w.cache.hits - (p ? p->cache.hits : 0)),
            static_cast<unsigned long long>(w.cache.missFree - (p ? p->cache.missFree : 0)),
            static_cast<unsigned long long>(w.cache.missEvict - (p ? p->cache.missEvict : 0)),
            static_cast<unsigned long long>(w.cache.exportedTotal() -
                                            (p ? p->cache.exportedTotal() : 0)),
            static_cast<unsigned long long>(w.cache.flowsInCache), 100.0 * w.cache.loadFactor(),
            nsPerPkt);
        o << line;
    };
    for (std::size_t q = 0; q < s.queues.size(); ++q) {
        row(std::to_string(q), s.queues[q],
            previous && q < previous->queues.size() ? &previous->queues[q] : nullptr);
    }
    if (s.queues.size() > 1) {
        const WorkerStats pt = previous ? previous->total() : WorkerStats{};
        row("total", s.total(), previous ? &pt : nullptr);
    }
    if (!previous) {
        const WorkerStats t = s.total();
        o << "end reasons:";
        for (std::size_t r = 1; r < kEndReasonSlots; ++r) {
            o << ' ' << endReasonName(static_cast<EndReason>(r)) << '=' << t.cache.exported[r];
        }
        o << "  hit position mean " << number(t.cache.hitPositionMean()) << " variance "
          << number(t.cache.hitPositionVariance()) << '\n';
        bool any = false;
        for (std::size_t i = 0; i < kAnomalyCount; ++i) {
            if (t.anomalies.count[i] == 0) continue;
            o << (any ? " " : "skipped/anomalies:") << ' ' << anomalyName(static_cast<Anomaly>(i))
              << '=' << t.anomalies.count[i];
            any = true;
        }
        if (any) o << '\n';
        if (t.input.kernelDrops || t.input.ifaceDrops) {
            o << "input drops: kernel=" << t.input.kernelDrops
              << " interface=" << t.input.ifaceDrops << '\n';
        }
        if (t.cache.extPoolExhausted != 0 || t.cache.pluginDataDropped != 0) {
            o << "process plugins: " << t.cache.extPoolExhausted
              << " flows without their plugin record (ext_pool_exhausted), "
              << t.cache.pluginDataDropped << " instances over the size limit\n";
        }
        if (t.cache.floodAlarms != 0) {
            o << "flood: " << t.cache.floodAlarms << " alarm(s), the latest at "
              << formatTimeIso(t.cache.floodLastAlarm, 0) << " (" << t.cache.floodLastCount
              << " new flows in an interval, " << t.cache.floodBaseline << " expected)";
            if (t.cache.admissionDeferred || t.cache.admissionEvicted) {
                o << "; admission: " << t.cache.admissionDeferred << " first packets deferred, "
                  << t.cache.admissionEvicted << " new flows evicted first";
            }
            o << '\n';
        }
        o << "output: " << s.output.records << " records written, " << s.output.dropped
          << " dropped";
        if (s.output.discarded != 0)
            o << " (" << s.output.discarded << " of them with no receiver connected)";
        o << '\n';
    }
    return o.str();
}

}  // namespace rowprobe::core
