// The flow-table counter table (rowprobe/cache_counters.hpp) against what is generated from it
// and what documents it: docs/statistics.md lists exactly its JSON keys, the JSON document and
// the Prometheus text carry each entry once under its name, and the merge follows each rule.
#include "counters.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "metrics.hpp"
#include "rowprobe/flow_record.hpp"
#include "stats.hpp"
#include "test_support.hpp"

namespace rowprobe::core {
namespace {

/// The `cache.*` names the queue-field table of docs/statistics.md documents: every
/// backquoted `cache.x` of its first column, `cache.a`, `cache.b` lists and `<reason>` forms
/// included (cache.exported.<reason> stands for the whole group).
std::set<std::string> documentedCacheKeys() {
    std::ifstream in(test::sourceDir() / "docs" / "statistics.md");
    std::set<std::string> keys;
    std::string line;
    const std::regex name("`cache\\.([a-z_.<>]+)`");
    while (std::getline(in, line)) {
        if (line.rfind("| `cache.", 0) != 0) continue;
        const std::string first = line.substr(0, line.find(" | ", 2));
        for (std::sregex_iterator it(first.begin(), first.end(), name), end; it != end; ++it) {
            std::string key = (*it)[1];
            if (key.ends_with(".<reason>")) key.resize(key.size() - 9);
            keys.insert(key);
        }
    }
    return keys;
}

std::set<std::string> tableJsonKeys() {
    std::set<std::string> keys;
    for (const CounterInfo& c : kCacheCounters)
        if (!c.json.empty()) keys.insert(std::string(c.json));
    return keys;
}

TEST(CounterTable, StatisticsDocListsExactlyTheTablesJsonKeys) {
    const std::set<std::string> documented = documentedCacheKeys();
    ASSERT_FALSE(documented.empty()) << "no `cache.*` rows found in docs/statistics.md";
    const std::set<std::string> table = tableJsonKeys();
    for (const std::string& k : table)
        EXPECT_TRUE(documented.contains(k)) << "cache." << k << " is not in docs/statistics.md";
    for (const std::string& k : documented)
        EXPECT_TRUE(table.contains(k))
            << "docs/statistics.md documents cache." << k << ", which the counter table lacks";
}

TEST(CounterTable, OperationsDocListsEveryMetric) {
    std::ifstream in(test::sourceDir() / "docs" / "operations.md");
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string doc = buf.str();
    ASSERT_FALSE(doc.empty());
    for (const CounterInfo& c : kCacheCounters) {
        if (c.metric.empty()) continue;
        const std::string name = "`" + std::string(c.metric);
        EXPECT_TRUE(doc.find(name + "`") != std::string::npos ||
                    doc.find(name + "{") != std::string::npos)
            << c.metric << " is not in docs/operations.md's metrics table";
    }
}

TEST(CounterTable, EveryEntryHasHelpAndMetricsHaveOneKindPerFamily) {
    for (const CounterInfo& c : kCacheCounters) {
        EXPECT_FALSE(c.help.empty()) << c.json;
        if (c.kind == CounterKind::Internal) {
            EXPECT_TRUE(c.json.empty()) << c.json << ": Internal but shown in JSON";
            EXPECT_TRUE(c.metric.empty()) << c.metric << ": Internal but a metric";
        }
        if (c.kind == CounterKind::Counter && !c.metric.empty()) {
            EXPECT_TRUE(c.metric.ends_with("_total")) << c.metric;
        }
        for (const CounterInfo& d : kCacheCounters) {
            if (&c == &d || c.metric.empty() || c.metric != d.metric) continue;
            EXPECT_EQ(c.kind, d.kind) << c.metric;
            EXPECT_NE(c.label, d.label) << c.metric << ": two samples with the same labels";
        }
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
    s.queues = {w, w};
    const std::string json = formatStatsJson(s);
    const std::string metrics = formatPrometheus(s, true);
    for (const CounterInfo& c : kCacheCounters) {
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
}

TEST(CounterTable, MergeFollowsEachRule) {
    CacheStats a = distinctStats(10);
    CacheStats b = distinctStats(500);
    a.floodLastAlarm = 7;
    b.floodLastAlarm = 9;  // b's alarm is the latest: its Latest fields win
    CacheStats t = a;
    mergeCacheStats(t, b);
    EXPECT_EQ(t.hits, a.hits + b.hits);                                         // Sum
    EXPECT_EQ(t.exported[3], a.exported[3] + b.exported[3]);                    // Sum per reason
    EXPECT_EQ(t.floodIntervals, std::max(a.floodIntervals, b.floodIntervals));  // Max
    EXPECT_EQ(t.floodLastAlarm, b.floodLastAlarm);                              // Latest
    EXPECT_EQ(t.floodLastCount, b.floodLastCount);
    EXPECT_EQ(t.floodBaseline, b.floodBaseline);
    CacheStats u = b;
    mergeCacheStats(u, a);  // a's alarm is older: b's stay
    EXPECT_EQ(u.floodLastCount, b.floodLastCount);
    EXPECT_EQ(u.floodBaseline, b.floodBaseline);
}

}  // namespace
}  // namespace rowprobe::core
