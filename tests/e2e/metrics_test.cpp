// --metrics: rowprobe serves Prometheus text exposition while it runs. The scrape passes a
// real parser (promtool, from Debian's prometheus package; skipped when absent), has every
// statistic of --stats-json (a statistic added without a metric fails here), and once
// rowprobe_finished is 1 its counters equal --stats-json's at exit.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "live_capture.hpp"
#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

/// "name{labels}" -> value text, from the exposition body; fails the test on a malformed line.
std::map<std::string, std::string> parseExposition(const std::string& body) {
    std::map<std::string, std::string> samples;
    static const std::regex line(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?) (\S+)$)");
    std::size_t start = 0;
    while (start < body.size()) {
        std::size_t end = body.find('\n', start);
        if (end == std::string::npos) end = body.size();
        const std::string l = body.substr(start, end - start);
        start = end + 1;
        if (l.empty() || l[0] == '#') continue;
        std::smatch m;
        if (!std::regex_match(l, m, line)) {
            ADD_FAILURE() << "malformed sample line: " << l;
            continue;
        }
        samples[m[1]] = m[3];
    }
    return samples;
}

/// metric -> the --stats-json key its HELP text names: the counter tables' help texts end with
/// the statistic's name in parentheses, "(input.received)." (CounterTable.MetricHelpNamesItsKey),
/// so a counter added to a table is compared here without a line in this test.
std::map<std::string, std::string> helpKeys(const std::string& body) {
    std::map<std::string, std::string> keys;
    static const std::regex help(R"(^# HELP (\S+) .*\(([a-z_]+(\.[a-z_]+)*)[);])");
    std::istringstream lines(body);
    std::string l;
    while (std::getline(lines, l)) {
        std::smatch m;
        if (std::regex_search(l, m, help)) keys[m[1]] = m[2];
    }
    return keys;
}

std::string bodyOf(const std::string& response) {
    const std::size_t p = response.find("\r\n\r\n");
    return p == std::string::npos ? std::string() : response.substr(p + 4);
}

std::uint16_t metricsPort(ChildProcess& child) {
    std::uint16_t port = 0;
    waitFor(
        [&] {
            const std::string err = child.wait(0).err;
            static const std::regex url(R"(metrics on http://(\S+):([0-9]+)/metrics)");
            std::smatch m;
            if (std::regex_search(err, m, url)) port = static_cast<std::uint16_t>(std::stoi(m[2]));
            return port != 0;
        },
        20);
    return port;
}

TEST(Metrics, ScrapedWhileRunningParsesAndEqualsStatsJsonAtExit) {
    const fs::path dir = tempDir();
    CaptureFifo fifo(dir / "capture.fifo");
    ASSERT_TRUE(fifo.ok());
    const fs::path statsJson = dir / "stats.json";
    ChildProcess child({rowprobeBinary().string(), "-i", "pcap;file=" + fifo.path().string(), "-q",
                        "2", "-s", "cache;inactive=30", "-o",
                        "json;file=" + (dir / "flows.json").string(), "--metrics", "127.0.0.1:0",
                        "--metrics-linger", "30", "--stats-json", statsJson.string(), "-Q"});
    // Phase 1 (packet time 0 s): 300 flows; phase 2 (100 s) expires them while the input stays
    // open, so records have been exported while rowprobe still runs.
    fifo.writeHeader();
    fifo.writeFlows(1700000000, 300, 1000);
    fifo.writeFlows(1700000100, 40, 2000);
    const std::uint16_t port = metricsPort(child);
    ASSERT_NE(port, 0) << child.wait(0).err;

    std::map<std::string, std::string> running;
    ASSERT_TRUE(waitFor(
        [&] {
            running = parseExposition(bodyOf(httpGet(port)));
            return running.count("rowprobe_output_records_total") != 0 &&
                   running["rowprobe_output_records_total"] != "0";
        },
        20))
        << "no records exported while running";
    EXPECT_EQ(running["rowprobe_finished"], "0");
    EXPECT_EQ(running["rowprobe_queues"], "2");
    const std::string response = httpGet(port);
    EXPECT_EQ(response.rfind("HTTP/1.0 200 OK\r\n", 0), 0U) << response.substr(0, 200);
    EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
    EXPECT_NE(httpGet(port, "/nothing").find("404"), std::string::npos);
    if (runShell("command -v promtool").exitCode == 0) {
        const fs::path scrape = dir / "scrape.txt";
        std::ofstream(scrape) << bodyOf(response);
        const CommandResult r = runShell("promtool check metrics < '" + scrape.string() + "'");
        EXPECT_EQ(r.exitCode, 0) << "promtool check metrics:\n" << r.out << r.err;
    } else {
        std::cerr << "note: promtool not installed (Debian package prometheus): parser check "
                     "skipped\n";
    }

    fifo.close();
    std::map<std::string, std::string> last;
    std::string lastBody;
    ASSERT_TRUE(waitFor(
        [&] {
            lastBody = bodyOf(httpGet(port));
            last = parseExposition(lastBody);
            return last["rowprobe_finished"] == "1";
        },
        20));
    const std::map<std::string, std::string> helpKey = helpKeys(lastBody);
    ASSERT_EQ(helpKey.count("rowprobe_cache_hits_total"), 1U);
    EXPECT_EQ(helpKey.at("rowprobe_cache_hits_total"), "cache.hits");
    child.signal(SIGTERM);  // ends --metrics-linger
    const CommandResult done = child.wait(20);
    ASSERT_EQ(done.exitCode, 0) << done.err;
    const JsonObject stats = parseJsonFlat(readFile(statsJson));
    ASSERT_FALSE(stats.empty());
    EXPECT_EQ(stats.at("output.records"), "340");

    // metric -> --stats-json key, per queue (Q stands for the queue number).
    const std::vector<std::pair<std::string, std::string>> perQueue = {
        {"rowprobe_packets_total", "packets"},
        {"rowprobe_parsed_total", "parsed"},
        {"rowprobe_ip_bytes_total", "ip_bytes"},
        {"rowprobe_skipped_total", "skipped"},
        {"rowprobe_input_received_total", "input.received"},
        {"rowprobe_input_kernel_drops_total", "input.kernel_drops"},
        {"rowprobe_input_interface_drops_total", "input.interface_drops"},
        {"rowprobe_cache_hits_total", "cache.hits"},
        {"rowprobe_plugin_ext_pool_exhausted_total", "cache.ext_pool_exhausted"},
        {"rowprobe_plugin_data_dropped_total", "cache.plugin_data_dropped"},
        {"rowprobe_plugin_flushes_total", "cache.plugin_flushes"},
        {"rowprobe_plugin_heap_allocations_total", "cache.plugin_heap.allocations"},
        {"rowprobe_plugin_heap_frees_total", "cache.plugin_heap.frees"},
        {"rowprobe_plugin_heap_allocated_bytes_total", "cache.plugin_heap.allocated_bytes"},
        {"rowprobe_plugin_heap_freed_bytes_total", "cache.plugin_heap.freed_bytes"},
        {"rowprobe_plugin_heap_retained_bytes_total", "cache.plugin_heap.retained_bytes"},
        {"rowprobe_plugin_heap_live_bytes", "cache.plugin_heap.live_bytes"},
        {"rowprobe_plugin_heap_live_allocations", "cache.plugin_heap.live_allocations"},
        {"rowprobe_plugin_heap_module_bytes", "cache.plugin_heap.module_bytes"},
        {"rowprobe_cache_flows_created_total", "cache.flows_created"},
        {"rowprobe_cache_exported_by_sweep_total", "cache.exported_by_sweep"},
        {"rowprobe_cache_exported_at_end_total", "cache.exported_at_end"},
        {"rowprobe_cache_fragments_filled_total", "cache.fragments_filled"},
        {"rowprobe_cache_fragments_no_ports_total", "cache.fragments_no_ports"},
        {"rowprobe_flood_intervals_total", "cache.flood.intervals"},
        {"rowprobe_flood_alarms_total", "cache.flood.alarms"},
        {"rowprobe_flood_active", "cache.flood.active"},
        {"rowprobe_flood_last_alarm_flows", "cache.flood.last_count"},
        {"rowprobe_flood_baseline", "cache.flood.baseline"},
        {"rowprobe_admission_deferred_total", "cache.admission_deferred"},
        {"rowprobe_admission_evicted_total", "cache.admission_evicted"},
        {"rowprobe_batches_total", "batches"},
        {"rowprobe_cache_flows", "cache.flows_in_cache"},
        {"rowprobe_cache_capacity", "cache.capacity"},
        {"rowprobe_cache_misses_total{kind=\"free\"}", "cache.miss_free"},
        {"rowprobe_cache_misses_total{kind=\"evict\"}", "cache.miss_evict"},
        {"rowprobe_cache_misses_total{kind=\"reclaim\"}", "cache.miss_reclaim"},
    };
    // JSON statistics with a metric of another shape (fractional, or labelled by name), and
    // the ones derived from others.
    const std::set<std::string> otherShape = {"busy_ns",
                                              "flush_ns",
                                              "ns_per_packet",
                                              "cache.exported_total",
                                              "cache.load_factor",
                                              "cache.hit_position_mean",
                                              "cache.hit_position_variance",
                                              "cache.flood.last_alarm",
                                              "cache.flood.last_alarm_ns",
                                              "queue"};
    auto withQueue = [](const std::string& metric, int q) {
        const std::string label = "queue=\"" + std::to_string(q) + "\"";
        const std::size_t brace = metric.find('{');
        if (brace == std::string::npos) return metric + "{" + label + "}";
        return metric.substr(0, brace + 1) + label + "," + metric.substr(brace + 1);
    };
    std::size_t compared = 0;
    for (int q = 0; q < 2; ++q) {
        const std::string prefix = "queues." + std::to_string(q) + ".";
        std::set<std::string> covered;
        for (const auto& [metric, key] : perQueue) {
            const std::string name = withQueue(metric, q);
            ASSERT_TRUE(last.count(name)) << "missing metric " << name;
            EXPECT_EQ(last[name], stats.at(prefix + key)) << name << " vs " << prefix + key;
            covered.insert(key);
            ++compared;
        }
        for (const auto& [key, value] : stats) {
            if (key.rfind(prefix, 0) != 0) continue;
            const std::string field = key.substr(prefix.size());
            if (field.rfind("anomalies.", 0) == 0) {
                const std::string name = "rowprobe_anomalies_total{queue=\"" + std::to_string(q) +
                                         "\",reason=\"" + field.substr(10) + "\"}";
                EXPECT_EQ(last[name], value) << name;
            } else if (field.rfind("cache.exported.", 0) == 0) {
                const std::string name = "rowprobe_flows_exported_total{queue=\"" +
                                         std::to_string(q) + "\",reason=\"" + field.substr(15) +
                                         "\"}";
                EXPECT_EQ(last[name], value) << name;
            } else if (!covered.count(field) && !otherShape.count(field)) {
                // Not in the list above: the metric whose HELP text names it.
                const auto named = std::find_if(helpKey.begin(), helpKey.end(),
                                                [&](const auto& e) { return e.second == field; });
                if (named == helpKey.end()) {
                    ADD_FAILURE() << "statistic " << field << " of --stats-json has no metric";
                } else {
                    const std::string name = withQueue(named->first, q);
                    EXPECT_EQ(last[name], value) << name << " vs " << key;
                }
            }
            ++compared;
        }
        EXPECT_DOUBLE_EQ(std::stod(last[withQueue("rowprobe_busy_seconds_total", q)]),
                         std::stod(stats.at(prefix + "busy_ns")) / 1e9);
        // The final flush was timed, within the run.
        const double flushNs = std::stod(stats.at(prefix + "flush_ns"));
        EXPECT_DOUBLE_EQ(std::stod(last[withQueue("rowprobe_flush_seconds_total", q)]),
                         flushNs / 1e9);
        EXPECT_GT(flushNs, 0.0);
        EXPECT_LT(flushNs / 1e9, std::stod(stats.at("wall_seconds")));
    }
    const double finishNs = std::stod(stats.at("export.finish_ns"));
    EXPECT_DOUBLE_EQ(std::stod(last["rowprobe_export_finish_seconds_total"]), finishNs / 1e9);
    EXPECT_GT(finishNs, 0.0);  // the output's finish() at least
    EXPECT_LT(finishNs / 1e9, std::stod(stats.at("wall_seconds")));
    EXPECT_EQ(last["rowprobe_export_records_total"], stats.at("export.records"));
    EXPECT_EQ(last["rowprobe_output_records_total"], stats.at("output.records"));
    EXPECT_EQ(last["rowprobe_output_dropped_total"], stats.at("output.dropped"));
    EXPECT_EQ(last["rowprobe_output_discarded_total"], stats.at("output.discarded"));
    EXPECT_EQ(last["rowprobe_output_bytes_total"], stats.at("output.bytes"));
    EXPECT_GE(compared, 80U);
}

TEST(Metrics, ABadAddressIsAConfigurationError) {
    for (const std::string bad : {"9464", "127.0.0.1:99999", "::1:9464", "127.0.0.1:x"}) {
        const CommandResult r = runCommand(
            {rowprobeBinary().string(), "-i",
             "pcap;file=" + (sourceDir() / "pcaps" / "mixed.pcap").string(), "--metrics", bad});
        EXPECT_EQ(r.exitCode, 2) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("--metrics"), std::string::npos) << r.err;
    }
}

// ---- Issue 21 item 9: slow and idle clients, the address family, a busy port ----------------

/// A rowprobe that serves metrics for a while (the final values of a small capture).
ChildProcess lingeringProbe(const std::string& address) {
    return ChildProcess({rowprobeBinary().string(), "-i",
                         "pcap;file=" + (sourceDir() / "pcaps" / "mixed.pcap").string(), "-o",
                         "json;file=/dev/null", "--metrics", address, "--metrics-linger", "60",
                         "-Q"});
}

int connectTo(std::uint16_t port, int family = AF_INET) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int rc = -1;
    if (family == AF_INET) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(port);
        a.sin6_addr = in6addr_loopback;
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

/// Seconds one scrape took, and whether it got a 200 with the build info.
std::pair<double, bool> timedScrape(std::uint16_t port) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string r = httpGet(port);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {s, r.find("200 OK") != std::string::npos &&
                   r.find("rowprobe_build_info") != std::string::npos};
}

TEST(Metrics, SlowClientsDoNotHoldUpAScrape) {
    ChildProcess child = lingeringProbe("127.0.0.1:0");
    const std::uint16_t port = metricsPort(child);
    ASSERT_NE(port, 0) << child.wait(0).err;
    // Twelve slowloris clients: each sends one byte of its request every 200 ms.
    std::atomic<bool> stop{false};
    std::vector<std::thread> slow;
    slow.reserve(12);
    for (int i = 0; i < 12; ++i) {
        slow.emplace_back([&] {
            while (!stop.load()) {
                const int fd = connectTo(port);
                if (fd < 0) return;
                const std::string req = "GET /metrics HTTP/1.0\r\n";
                for (char c : req) {
                    if (stop.load() || ::send(fd, &c, 1, MSG_NOSIGNAL) != 1) break;
                    std::this_thread::sleep_for(std::chrono::milliseconds(200));
                }
                ::close(fd);
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    double worst = 0;
    int good = 0;
    for (int i = 0; i < 5; ++i) {
        const auto [seconds, ok] = timedScrape(port);
        worst = std::max(worst, seconds);
        good += ok ? 1 : 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    stop = true;
    for (auto& t : slow) t.join();
    EXPECT_EQ(good, 5);
    EXPECT_LT(worst, 1.0) << "a scrape waited behind slow clients";
}

TEST(Metrics, ManyIdleConnectionsDoNotHoldUpAScrape) {
    ChildProcess child = lingeringProbe("127.0.0.1:0");
    const std::uint16_t port = metricsPort(child);
    ASSERT_NE(port, 0) << child.wait(0).err;
    std::vector<int> idle;
    for (int i = 0; i < 400; ++i) {
        const int fd = connectTo(port);
        if (fd >= 0) idle.push_back(fd);
    }
    EXPECT_GE(idle.size(), 300U);
    const auto [seconds, ok] = timedScrape(port);
    for (int fd : idle) ::close(fd);
    EXPECT_TRUE(ok);
    EXPECT_LT(seconds, 1.0) << "a scrape waited behind idle connections";
}

// True when this host has an IPv6 loopback (a socket binds to ::1), decided before rowprobe
// runs: a refused IPv6 connection to rowprobe is then its fault, not the host's.
bool hasIpv6Loopback() {
    const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

TEST(Metrics, EveryAddressMeansIpv6AndIpv4) {
    if (!hasIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback here";
    ChildProcess child = lingeringProbe(":0");
    const std::uint16_t port = metricsPort(child);
    ASSERT_NE(port, 0) << child.wait(0).err;
    EXPECT_NE(httpGet(port).find("200 OK"), std::string::npos);  // IPv4 loopback
    const int v6 = connectTo(port, AF_INET6);
    EXPECT_GE(v6, 0) << "':PORT' does not listen on the IPv6 loopback";
    if (v6 >= 0) ::close(v6);
}

TEST(Metrics, APortInUseIsAConfigurationError) {
    const int busy = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(busy, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(busy, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(busy, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(busy, reinterpret_cast<sockaddr*>(&a), &len);
    const std::string address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    const CommandResult r = runCommand(
        {rowprobeBinary().string(), "-i",
         "pcap;file=" + (sourceDir() / "pcaps" / "mixed.pcap").string(), "--metrics", address});
    ::close(busy);
    EXPECT_EQ(r.exitCode, 2) << r.err;  // exit 1 made systemd restart it every 5 s forever
    EXPECT_NE(r.err.find("--metrics"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in use"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rowprobe::test
