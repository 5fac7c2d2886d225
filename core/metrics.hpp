// Prometheus metrics: `--metrics ADDR:PORT` serves the statistics of docs/statistics.md in the
// Prometheus text exposition format 0.0.4 over HTTP/1.0 (GET /metrics).
//
// Cost: none on the packet path. The server is one thread that, per scrape, copies the
// snapshot the workers and the export thread already publish to the StatsBoard (a mutex taken
// a few times per second by them, once per scrape here) and formats it.
//
// Metric families (one line each in metrics.cpp's tables; a new WorkerStats counter is one
// more row there): per queue (label `queue`) every counter and gauge of a queue; per queue and
// end reason `rowprobe_flows_exported_total{reason}`; per queue and anomaly
// `rowprobe_anomalies_total{reason}`; per queue and miss kind `rowprobe_cache_misses_total{kind}`;
// then the process-wide export and output counters, `rowprobe_uptime_seconds`,
// `rowprobe_finished` (1 once every input has ended and every flow is exported: the values are
// then final and equal --stats-json) and `rowprobe_build_info{version}`.
// docs/operations.md lists them all with their statistics.md names.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "stats.hpp"

namespace rowprobe::core {

/// ADDR:PORT of --metrics: "127.0.0.1:9464", "[::1]:9464", ":9464" (every address),
/// "localhost:9464". Port 0 asks the system for a free port.
struct MetricsAddress {
    std::string host;  ///< empty = every address
    std::uint16_t port = 0;
};

/// Parses --metrics' value; throws ConfigError (exit 2) naming the option when malformed.
MetricsAddress parseMetricsAddress(const std::string& text);

/// The exposition text of one snapshot. `finished` fills rowprobe_finished.
std::string formatPrometheus(const StatsSnapshot& s, bool finished);

/// The HTTP server thread. Binds in the constructor (throws RuntimeError when the address
/// cannot be bound, e.g. the port is in use), serves one connection at a time until destroyed.
class MetricsServer {
public:
    using Source = std::function<StatsSnapshot()>;
    MetricsServer(const MetricsAddress& address, Source source);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    /// The bound port (the system's choice for port 0).
    std::uint16_t port() const noexcept { return m_port; }
    /// "http://HOST:PORT/metrics" for the start-up log line.
    std::string url() const;
    /// From now on rowprobe_finished is 1.
    void markFinished() noexcept { m_finished.store(true, std::memory_order_release); }

private:
    void serve();
    void answer(int client);

    int m_listen = -1;
    std::uint16_t m_port = 0;
    std::string m_host;
    Source m_source;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_finished{false};
    std::thread m_thread;
};

}  // namespace rowprobe::core
