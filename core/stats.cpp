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

void writeObject(std::ostringstream& o, const auto& stats);

/// One line's value: a number, an ISO-8601 time, one key per label, or a nested object.
template <class V>
void writeValue(std::ostringstream& o, const CounterInfo& info, const V& value) {
    if constexpr (std::is_same_v<V, double>) {
        o << number(value);
    } else if constexpr (std::is_integral_v<V>) {
        if (info.kind == CounterKind::Iso) {
            o << '"' << (value != 0 ? formatTimeIso(value, 0) : std::string()) << '"';
        } else {
            o << value;
        }
    } else if constexpr (Labelled<V>) {
        bool first = true;
        o << '{';
        forEachLabel(value, [&](std::string_view name, std::uint64_t n) {
            o << (first ? "" : ",") << '"' << name << "\":" << n;
            first = false;
        });
        o << '}';
    } else {
        o << '{';
        writeObject(o, value);
        o << '}';
    }
}

/// The members of a statistics struct's JSON object: every line of its counter table with a
/// JSON key, in table order; "group.key" lines nest under "group".
void writeObject(std::ostringstream& o, const auto& stats) {
    using Stats = std::decay_t<decltype(stats)>;
    std::string_view group;
    bool first = true;
    bool firstInGroup = true;
    auto line = [&](const CounterInfo& info, const auto& value) {
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
        writeValue(o, info, value);
    };
    CounterTable<Stats>::visit(line, stats);
    if (!group.empty()) o << '}';
}

/// Width of a stderr table column.
int columnWidth(TextColumn c) {
    switch (c) {
        case TextColumn::Delta:
            return 12;
        case TextColumn::Value:
        case TextColumn::Rate:
            return 10;
        case TextColumn::Percent:
        case TextColumn::Decimal:
        case TextColumn::None:
            break;
    }
    return 8;
}

/// The stderr table's cells of `now` (and, for Delta and Rate, `before`): every line with a
/// column, nested tables included, in table order. `span` is the interval in seconds.
template <class Stats>
void writeColumns(std::string& out, const Stats& now, const Stats& before, double span) {
    auto cell = [&](const CounterInfo& info, const auto& v, const auto& p) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (HasCounterTable<V>) {
            writeColumns(out, v, p, span);
        } else if constexpr (std::is_arithmetic_v<V>) {
            char buf[64];
            const auto d = static_cast<double>(v);
            switch (info.column) {
                case TextColumn::None:
                    return;
                case TextColumn::Delta:
                    std::snprintf(buf, sizeof buf, " %12llu",
                                  static_cast<unsigned long long>(v - p));
                    break;
                case TextColumn::Value:
                    std::snprintf(buf, sizeof buf, " %10llu", static_cast<unsigned long long>(v));
                    break;
                case TextColumn::Rate:
                    std::snprintf(buf, sizeof buf, " %10.3f",
                                  span > 0 ? static_cast<double>(v - p) / span / 1e6 : 0.0);
                    break;
                case TextColumn::Percent:
                    std::snprintf(buf, sizeof buf, " %7.1f%%", 100.0 * d);
                    break;
                case TextColumn::Decimal:
                    std::snprintf(buf, sizeof buf, " %8.1f", d);
                    break;
            }
            out += buf;
        }
    };
    CounterTable<Stats>::visit(cell, now, before);
}

/// The headings of the columns writeColumns writes.
template <class Stats>
void writeHeadings(std::string& out) {
    CounterTable<Stats>::visit(
        [&](const CounterInfo& info, const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (HasCounterTable<V>) {
                writeHeadings<V>(out);
            } else if (info.column != TextColumn::None) {
                char buf[64];
                std::snprintf(buf, sizeof buf, " %*s", columnWidth(info.column),
                              std::string(info.text).c_str());
                out += buf;
            }
        },
        Stats{});
}

}  // namespace

WorkerStats StatsSnapshot::total() const {
    WorkerStats t;
    for (const auto& w : queues) mergeCounters(t, w);
    return t;
}

void StatsBoard::publish(std::size_t queue, const WorkerStats& stats) {
    const std::lock_guard lock(m_mutex);
    m_queues[queue] = stats;
}

void StatsBoard::publishExport(const ExportStats& exported, const OutputStats& output) {
    const std::lock_guard lock(m_mutex);
    m_exported = exported;
    m_output = output;
}

StatsSnapshot StatsBoard::snapshot(double wallSeconds) const {
    const std::lock_guard lock(m_mutex);
    return StatsSnapshot{m_queues, m_output, m_exported, wallSeconds};
}

std::string formatStatsJson(const StatsSnapshot& s) {
    std::ostringstream o;
    o << "{\"wall_seconds\":" << number(s.wallSeconds) << ",\"total\":{";
    writeObject(o, s.total());
    o << "},\"queues\":[";
    for (std::size_t q = 0; q < s.queues.size(); ++q) {
        o << (q ? "," : "") << "{\"queue\":" << q << ',';
        writeObject(o, s.queues[q]);
        o << '}';
    }
    o << "],\"export\":{";
    writeObject(o, s.exported);
    o << "},\"output\":{";
    writeObject(o, s.output);
    o << "}}\n";
    return o.str();
}

std::string formatStatsText(const StatsSnapshot& s, const StatsSnapshot* previous) {
    std::ostringstream o;
    const double span = previous ? s.wallSeconds - previous->wallSeconds : s.wallSeconds;
    std::string line = "queue ";
    writeHeadings<WorkerStats>(line);
    o << line << '\n';
    const WorkerStats zero{};
    auto row = [&](const std::string& name, const WorkerStats& w, const WorkerStats* p) {
        char head[16];
        std::snprintf(head, sizeof head, "%-6s", name.c_str());
        line = head;
        writeColumns(line, w, p ? *p : zero, span);
        o << line << '\n';
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
        forEachLabel(t.cache.exported,
                     [&](std::string_view name, std::uint64_t n) { o << ' ' << name << '=' << n; });
        o << "  hit position mean " << number(t.cache.hitPositionMean()) << " variance "
          << number(t.cache.hitPositionVariance()) << '\n';
        bool any = false;
        forEachLabel(t.anomalies, [&](std::string_view name, std::uint64_t n) {
            if (n == 0) return;
            o << (any ? " " : "skipped/anomalies:") << ' ' << name << '=' << n;
            any = true;
        });
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
