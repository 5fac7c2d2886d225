// Prometheus metrics: `--metrics ADDR:PORT` serves the statistics of docs/statistics.md in the
// Prometheus text exposition format 0.0.4 over HTTP/1.0 (GET /metrics).
//
// Cost: none on the packet path. The server is one thread that, per scrape, copies the
// snapshot the workers and the export thread already publish to the StatsBoard (a mutex taken
// a few times per second by them, once per scrape here) and formats it.
//
// Metric families, generated from the counter tables (rowprobe/counter_table.hpp: a new
// counter is one line there): per queue (label `queue`) every counter and gauge of a queue,
// the scalars first, then the labelled ones (`rowprobe_anomalies_total{reason}`) and the flow
// table's (`rowprobe_flows_exported_total{reason}`, `rowprobe_cache_misses_total{kind}`, ...);
// then the export and output counters; then `rowprobe_queues`, `rowprobe_uptime_seconds`,
// `rowprobe_finished` (1 once every input has ended and every flow is exported: the values are
// then final and equal --stats-json) and `rowprobe_build_info{version}`.
// docs/operations.md lists them all with their statistics.md names.
#pragma once

#include <atomic>
#include <chrono>
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

/// The HTTP server thread. Binds in the constructor (throws ConfigError, exit 2, when the
/// address cannot be resolved or bound, e.g. the port is in use: restarting cannot fix that);
/// ":PORT" is one IPv6 socket that takes IPv4 too (IPv4 alone where IPv6 is absent).
///
/// One thread, one poll loop over non-blocking sockets: at most kMaxConnections clients at a
/// time, each with a deadline (kRequestTimeout to send its request, kReplyTimeout to take the
/// reply); a new client at the cap closes the oldest one still sending its request. A scrape
/// is read and answered in the pass that accepts it, so slow or idle clients (slowloris, 2,000
/// idle connections) neither hold it up nor grow threads or descriptors.
class MetricsServer {
public:
    static constexpr std::size_t kMaxConnections = 64;
    static constexpr int kBacklog = 1024;
    static constexpr std::size_t kMaxRequest = 16384;
    static constexpr std::chrono::seconds kRequestTimeout{2};
    static constexpr std::chrono::seconds kReplyTimeout{5};

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
    struct Connection {
        int fd = -1;
        std::chrono::steady_clock::time_point since;
        std::chrono::steady_clock::time_point deadline;
        std::string request;
        std::string reply;  ///< non-empty once the request is complete
        std::size_t sent = 0;
    };
    void serve();
    /// Reads what the client sent and, once the request is complete, sends the reply as far as
    /// the socket takes it. False when the connection is done (answered, closed or failed).
    bool progress(Connection& c);
    std::string answer(const std::string& request) const;

    int m_listen = -1;
    std::uint16_t m_port = 0;
    std::string m_host;
    Source m_source;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_finished{false};
    std::thread m_thread;
};

}  // namespace rowprobe::core
