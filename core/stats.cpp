#include "stats.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/format.hpp"

namespace rowprobe::core {

namespace {

void addInto(CacheStats& a, const CacheStats& b) {
    a.hits += b.hits;
    a.missFree += b.missFree;
    a.missEvict += b.missEvict;
    a.missReclaim += b.missReclaim;
    a.flowsCreated += b.flowsCreated;
    for (std::size_t i = 0; i < a.exported.size(); ++i) a.exported[i] += b.exported[i];
    a.exportedBySweep += b.exportedBySweep;
    a.exportedAtEnd += b.exportedAtEnd;
    a.positionSum += b.positionSum;
    a.positionSqSum += b.positionSqSum;
    a.flowsInCache += b.flowsInCache;
    a.capacity += b.capacity;
    a.fragmentsFilled += b.fragmentsFilled;
    a.fragmentsNoPorts += b.fragmentsNoPorts;
    a.floodIntervals = std::max(a.floodIntervals, b.floodIntervals);
    a.floodAlarms += b.floodAlarms;
    a.floodActive += b.floodActive;             // queues in a flood
    if (b.floodLastAlarm > a.floodLastAlarm) {  // the latest alarm of any queue
        a.floodLastAlarm = b.floodLastAlarm;
        a.floodLastCount = b.floodLastCount;
        a.floodBaseline = b.floodBaseline;
    }
    a.admissionDeferred += b.admissionDeferred;
    a.admissionEvicted += b.admissionEvicted;
    a.extPoolExhausted += b.extPoolExhausted;
    a.pluginDataDropped += b.pluginDataDropped;
    a.pluginFlushes += b.pluginFlushes;
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

void writeWorker(std::ostringstream& o, const WorkerStats& w) {
    const CacheStats& c = w.cache;
    o << "\"packets\":" << w.packets << ",\"parsed\":" << w.parsed << ",\"ip_bytes\":" << w.ipBytes
      << ",\"skipped\":" << (w.packets - w.parsed) << ",\"anomalies\":{";
    for (std::size_t i = 0; i < kAnomalyCount; ++i) {
        o << (i ? "," : "") << '"' << anomalyName(static_cast<Anomaly>(i))
          << "\":" << w.anomalies.count[i];
    }
    o << "},\"input\":{\"received\":" << w.input.received
      << ",\"kernel_drops\":" << w.input.kernelDrops
      << ",\"interface_drops\":" << w.input.ifaceDrops << "}"
      << ",\"cache\":{\"hits\":" << c.hits << ",\"miss_free\":" << c.missFree
      << ",\"miss_evict\":" << c.missEvict << ",\"miss_reclaim\":" << c.missReclaim
      << ",\"flows_created\":" << c.flowsCreated << ",\"exported\":{";
    for (std::size_t r = 1; r < kEndReasonSlots; ++r) {
        o << (r > 1 ? "," : "") << '"' << endReasonName(static_cast<EndReason>(r))
          << "\":" << c.exported[r];
    }
    o << "},\"exported_total\":" << c.exportedTotal()
      << ",\"exported_by_sweep\":" << c.exportedBySweep
      << ",\"exported_at_end\":" << c.exportedAtEnd
      << ",\"hit_position_mean\":" << number(c.hitPositionMean())
      << ",\"hit_position_variance\":" << number(c.hitPositionVariance())
      << ",\"flows_in_cache\":" << c.flowsInCache << ",\"capacity\":" << c.capacity
      << ",\"load_factor\":" << number(c.loadFactor())
      << ",\"fragments_filled\":" << c.fragmentsFilled
      << ",\"fragments_no_ports\":" << c.fragmentsNoPorts
      << ",\"flood\":{\"intervals\":" << c.floodIntervals << ",\"alarms\":" << c.floodAlarms
      << ",\"active\":" << c.floodActive << ",\"last_alarm\":\""
      << (c.floodLastAlarm != 0 ? formatTimeIso(c.floodLastAlarm, 0) : std::string())
      << "\",\"last_alarm_ns\":" << c.floodLastAlarm << ",\"last_count\":" << c.floodLastCount
      << ",\"baseline\":" << c.floodBaseline << "},\"admission_deferred\":" << c.admissionDeferred
      << ",\"admission_evicted\":" << c.admissionEvicted
      << ",\"ext_pool_exhausted\":" << c.extPoolExhausted
      << ",\"plugin_data_dropped\":" << c.pluginDataDropped
      << ",\"plugin_flushes\":" << c.pluginFlushes << "}"
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
        addInto(t.cache, w.cache);
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
