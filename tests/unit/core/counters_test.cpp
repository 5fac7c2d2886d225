// The counter tables (rowprobe/counter_table.hpp) against what is generated from them and what
// documents them: docs/statistics.md names exactly their JSON keys (and every anomaly and end
// reason), docs/operations.md exactly the metrics served, the JSON document and the Prometheus
// text carry each line once under its name, the stderr table has each line's column in table
// order, and the merge follows each rule.
#include "counters.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "rowprobe/flow_record.hpp"
#include "stats.hpp"
#include "test_support.hpp"

namespace rowprobe::core {
namespace {

/// Every backquoted name in the first column of docs/statistics.md's tables (`a.b` lists
/// included); `x.<reason>` / `x.<name>` stand for the whole labelled group `x`.
std::set<std::string> documentedNames() {
    std::ifstream in(test::sourceDir() / "docs" / "statistics.md");
    std::set<std::string> names;
    std::string line;
    const std::regex name("`([a-z_.<>]+)`");
    while (std::getline(in, line)) {
        if (line.rfind("| `", 0) != 0) continue;
        const std::string first = line.substr(0, line.find(" | ", 2));
        for (std::sregex_iterator it(first.begin(), first.end(), name), end; it != end; ++it) {
            std::string key = (*it)[1];
            for (const char* group : {".<reason>", ".<name>"})
                if (key.ends_with(group)) key.resize(key.size() - std::strlen(group));
            names.insert(key);
        }
    }
    return names;
}

/// The JSON names of a statistics struct's table, nested tables as "group.key".
template <class Stats>
void tableNames(const std::string& prefix, std::set<std::string>& out) {
    CounterTable<Stats>::visit(
        [&](const CounterInfo& info, const auto& value) {
            using V = std::decay_t<decltype(value)>;
            if (info.json.empty()) return;
            const std::string name = prefix + std::string(info.json);
            if constexpr (HasCounterTable<V>) {
                tableNames<V>(name + ".", out);
            } else {
                out.insert(name);
            }
        },
        Stats{});
}

std::set<std::string> allTableNames() {
    std::set<std::string> names;
    tableNames<WorkerStats>("", names);
    tableNames<ExportStats>("export.", names);
    tableNames<OutputStats>("output.", names);
    return names;
}

/// Calls f(info) for every line of every table.
template <class F>
void forEveryLine(F&& f) {
    for (const CounterInfo& c : CounterTable<WorkerStats>::kInfo) f(c);
    for (const CounterInfo& c : CounterTable<InputStats>::kInfo) f(c);
    for (const CounterInfo& c : CounterTable<CacheStats>::kInfo) f(c);
    for (const CounterInfo& c : CounterTable<ExportStats>::kInfo) f(c);
    for (const CounterInfo& c : CounterTable<OutputStats>::kInfo) f(c);
}

std::string readDoc(const char* name) {
    std::ifstream in(test::sourceDir() / "docs" / name);
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

TEST(CounterTable, StatisticsDocNamesExactlyTheTablesJsonKeys) {
    const std::set<std::string> documented = documentedNames();
    ASSERT_FALSE(documented.empty()) << "no field rows found in docs/statistics.md";
    const std::set<std::string> table = allTableNames();
    ASSERT_TRUE(table.contains("packets") && table.contains("cache.flood.baseline") &&
                table.contains("input.kernel_drops") && table.contains("output.discarded"));
    for (const std::string& k : table)
        EXPECT_TRUE(documented.contains(k)) << k << " is not in docs/statistics.md";
    for (const std::string& k : documented)
        EXPECT_TRUE(table.contains(k))
            << "docs/statistics.md documents " << k << ", which no counter table has";
}

TEST(CounterTable, StatisticsDocNamesEveryAnomalyAndEndReason) {
    const std::string doc = readDoc("statistics.md");
    ASSERT_FALSE(doc.empty());
    forEachLabel(AnomalyCounters{}, [&](std::string_view name, std::uint64_t) {
        EXPECT_NE(doc.find("`" + std::string(name) + "`"), std::string::npos)
            << "anomaly " << name << " is not in docs/statistics.md";
    });
    forEachLabel(ReasonCounters{}, [&](std::string_view name, std::uint64_t) {
        EXPECT_NE(doc.find("`" + std::string(name) + "`"), std::string::npos)
            << "end reason " << name << " is not in docs/statistics.md";
    });
}

TEST(CounterTable, OperationsDocListsExactlyTheMetrics) {
    const std::string doc = readDoc("operations.md");
    ASSERT_FALSE(doc.empty());
    StatsSnapshot s;
    s.queues.resize(1);
    const std::string metrics = formatPrometheus(s, true);
    // Every family rowprobe serves is in the doc ...
    const std::regex type("# TYPE ([a-z_]+) ");
    std::set<std::string> served;
    for (std::sregex_iterator it(metrics.begin(), metrics.end(), type), end; it != end; ++it)
        served.insert((*it)[1]);
    ASSERT_GT(served.size(), 40U);
    for (const std::string& m : served) {
        EXPECT_TRUE(doc.find("`" + m + "`") != std::string::npos ||
                    doc.find("`" + m + "{") != std::string::npos)
            << m << " is not in docs/operations.md's metrics table";
    }
    // ... and every metric the doc's table names is served.
    std::istringstream lines(doc);
    std::string line;
    const std::regex named("`(rowprobe_[a-z_]+)[`{]");
    std::size_t rows = 0;
    while (std::getline(lines, line)) {
        if (line.rfind("| `rowprobe_", 0) != 0) continue;
        ++rows;
        const std::string first = line.substr(0, line.find(" | ", 2));
        for (std::sregex_iterator it(first.begin(), first.end(), named), end; it != end; ++it)
            EXPECT_TRUE(served.contains((*it)[1]))
                << "docs/operations.md names " << (*it)[1] << ", which rowprobe does not serve";
    }
    EXPECT_GT(rows, 10U);
}

TEST(CounterTable, EveryEntryHasHelpAndMetricsHaveOneKindPerFamily) {
    std::vector<CounterInfo> lines;
    forEveryLine([&](const CounterInfo& c) { lines.push_back(c); });
    for (const CounterInfo& c : lines) {
        EXPECT_FALSE(c.help.empty()) << c.json;
        if (c.kind == CounterKind::Internal) {
            EXPECT_TRUE(c.json.empty()) << c.json << ": Internal but shown in JSON";
            EXPECT_TRUE(c.metric.empty()) << c.metric << ": Internal but a metric";
        }
        if (c.kind == CounterKind::Counter && !c.metric.empty()) {
            EXPECT_TRUE(c.metric.ends_with("_total")) << c.metric;
        }
        EXPECT_EQ(c.text.empty(), c.column == TextColumn::None) << c.json << ": text and column";
        for (const CounterInfo& d : lines) {
            if (&c == &d || c.metric.empty() || c.metric != d.metric) continue;
            EXPECT_EQ(c.kind, d.kind) << c.metric;
            EXPECT_NE(c.label, d.label) << c.metric << ": two samples with the same labels";
        }
    }
}

/// The help texts of the unlabelled per-queue counters and gauges with a metric, with their
/// JSON paths ("cache.flood.alarms"), nested tables included.
template <class Stats>
void metricHelps(const std::string& prefix,
                 std::vector<std::pair<std::string, std::string_view>>& out) {
    CounterTable<Stats>::visit(
        [&](const CounterInfo& info, const auto& value) {
            using V = std::decay_t<decltype(value)>;
            if constexpr (HasCounterTable<V>) {
                metricHelps<V>(prefix + std::string(info.json) + ".", out);
            } else if constexpr (std::is_arithmetic_v<V>) {
                if (!info.metric.empty() && info.label.empty() &&
                    (info.kind == CounterKind::Counter || info.kind == CounterKind::Gauge))
                    out.emplace_back(prefix + std::string(info.json), info.help);
            }
        },
        Stats{});
}

// The metrics end-to-end test finds the statistic of a metric it does not list by this rule.
TEST(CounterTable, MetricHelpNamesItsKey) {
    std::vector<std::pair<std::string, std::string_view>> helps;
    metricHelps<WorkerStats>("", helps);
    ASSERT_GT(helps.size(), 30U);
    for (const auto& [key, help] : helps) {
        EXPECT_TRUE(help.find("(" + key + ")") != std::string_view::npos ||
                    help.find("(" + key + ";") != std::string_view::npos)
            << "the help text of " << key << " does not end with (" << key << "): " << help;
    }
}

TEST(CounterTable, TextTableHasEveryColumnOfTheTablesInOrder) {
    StatsSnapshot s;
    s.queues.resize(2);
    const std::string text = formatStatsText(s, nullptr);
    const std::string header = text.substr(0, text.find('\n'));
    std::vector<std::string_view> headings;
    auto collect = [&](const CounterInfo& c) {
        if (!c.text.empty()) headings.push_back(c.text);
    };
    // The worker table's columns, the flow table's where the worker table nests it.
    for (const CounterInfo& c : CounterTable<WorkerStats>::kInfo) {
        if (c.json == "cache") {
            for (const CounterInfo& d : CounterTable<CacheStats>::kInfo) collect(d);
        } else if (c.json == "input") {
            for (const CounterInfo& d : CounterTable<InputStats>::kInfo) collect(d);
        }
        collect(c);
    }
    ASSERT_GE(headings.size(), 5U);
    std::istringstream words(header);
    std::string word;
    words >> word;
    EXPECT_EQ(word, "queue");
    for (std::string_view h : headings) {
        ASSERT_TRUE(words >> word) << "the header ends before " << h;
        EXPECT_EQ(word, h);
    }
    EXPECT_FALSE(words >> word) << "a heading not in the tables: " << word;
    // One row per queue and the total, each with a cell per heading.
    std::istringstream rows(text);
    std::string row;
    std::getline(rows, row);
    for (const char* name : {"0", "1", "total"}) {
        ASSERT_TRUE(std::getline(rows, row));
        std::istringstream cells(row);
        std::size_t n = 0;
        while (cells >> word) ++n;
        EXPECT_EQ(n, headings.size() + 1) << row;
        EXPECT_EQ(row.substr(0, row.find(' ')), name);
    }
}

/// A CacheStats whose every COUNT / REASONS field holds a distinct value.
CacheStats distinctStats(std::uint64_t base) {
    CacheStats c;
    std::uint64_t v = base;
#define ROWPROBE_FILL_COUNT(member) c.member = v++;
#define ROWPROBE_FILL_REASONS(member) \
    for (auto& x : c.member) x = v++;
#define ROWPROBE_FILL_DERIVED(member)
#define ROWPROBE_FILL(src, member, ...) ROWPROBE_FILL_##src(member)
    ROWPROBE_CACHE_COUNTERS(ROWPROBE_FILL)
#undef ROWPROBE_FILL
#undef ROWPROBE_FILL_DERIVED
#undef ROWPROBE_FILL_REASONS
#undef ROWPROBE_FILL_COUNT
    return c;
}

TEST(CounterTable, JsonAndMetricsCarryEveryEntryUnderItsName) {
    StatsSnapshot s;
    WorkerStats w;
    w.cache = distinctStats(1000);
    w.packets = 77;
    w.input.kernelDrops = 78;
    s.queues = {w, w};
    s.output.discarded = 79;
    const std::string json = formatStatsJson(s);
    const std::string metrics = formatPrometheus(s, true);
    std::vector<CounterInfo> perQueue(CounterTable<WorkerStats>::kInfo.begin(),
                                      CounterTable<WorkerStats>::kInfo.end());
    perQueue.insert(perQueue.end(), CounterTable<InputStats>::kInfo.begin(),
                    CounterTable<InputStats>::kInfo.end());
    perQueue.insert(perQueue.end(), CounterTable<CacheStats>::kInfo.begin(),
                    CounterTable<CacheStats>::kInfo.end());
    for (const CounterInfo& c : perQueue) {
        if (!c.json.empty()) {
            const std::string_view key = c.json.substr(c.json.rfind('.') + 1);
            EXPECT_NE(json.find("\"" + std::string(key) + "\":"), std::string::npos) << c.json;
        }
        if (!c.metric.empty()) {
            const std::string sample = std::string(c.metric) + "{queue=\"1\"";
            EXPECT_NE(metrics.find(sample), std::string::npos) << c.metric;
            EXPECT_EQ(metrics.find("# TYPE " + std::string(c.metric) + " "),
                      metrics.rfind("# TYPE " + std::string(c.metric) + " "))
                << c.metric << ": one family";
        }
    }
    // The JSON's values are the struct's: a COUNT field and a group member.
    EXPECT_NE(json.find("\"hits\":" + std::to_string(w.cache.hits)), std::string::npos);
    EXPECT_NE(json.find("\"flood\":{\"intervals\":" + std::to_string(w.cache.floodIntervals)),
              std::string::npos);
    EXPECT_NE(json.find("\"miss_reclaim\":" + std::to_string(2 * w.cache.missReclaim)),
              std::string::npos)
        << "the total sums the queues";
    EXPECT_NE(metrics.find("rowprobe_cache_misses_total{queue=\"0\",kind=\"evict\"} " +
                           std::to_string(w.cache.missEvict)),
              std::string::npos);
    EXPECT_NE(metrics.find("rowprobe_flows_exported_total{queue=\"1\",reason=\"inactive\"} " +
                           std::to_string(w.cache.exported[1])),
              std::string::npos);
    EXPECT_NE(json.find("\"packets\":154,"), std::string::npos) << "the total";
    EXPECT_NE(json.find("\"input\":{\"received\":0,\"kernel_drops\":78,"), std::string::npos);
    EXPECT_NE(metrics.find("rowprobe_input_kernel_drops_total{queue=\"1\"} 78\n"),
              std::string::npos);
    EXPECT_NE(json.find("\"output\":{\"records\":0,\"dropped\":0,\"discarded\":79,\"bytes\":0}"),
              std::string::npos);
    EXPECT_NE(metrics.find("\nrowprobe_output_discarded_total 79\n"), std::string::npos);
}

TEST(CounterTable, MergeFollowsEachRule) {
    CacheStats a = distinctStats(10);
    CacheStats b = distinctStats(500);
    a.floodLastAlarm = 7;
    b.floodLastAlarm = 9;  // b's alarm is the latest: its Latest fields win
    CacheStats t = a;
    mergeCounters(t, b);
    EXPECT_EQ(t.hits, a.hits + b.hits);                                         // Sum
    EXPECT_EQ(t.exported[3], a.exported[3] + b.exported[3]);                    // Sum per reason
    EXPECT_EQ(t.floodIntervals, std::max(a.floodIntervals, b.floodIntervals));  // Max
    EXPECT_EQ(t.floodLastAlarm, b.floodLastAlarm);                              // Latest
    EXPECT_EQ(t.floodLastCount, b.floodLastCount);
    EXPECT_EQ(t.floodBaseline, b.floodBaseline);
    CacheStats u = b;
    mergeCounters(u, a);  // a's alarm is older: b's stay
    EXPECT_EQ(u.floodLastCount, b.floodLastCount);
    EXPECT_EQ(u.floodBaseline, b.floodBaseline);
}

}  // namespace
}  // namespace rowprobe::core
