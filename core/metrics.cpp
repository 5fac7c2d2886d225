#include "metrics.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "counters.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/flow_record.hpp"

namespace rowprobe::core {

namespace {

std::string formatDouble(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

void family(std::ostringstream& o, const char* name, const char* type, const char* help) {
    // The text format's TYPE line names the family without the _total suffix of its samples
    // for counters in OpenMetrics, but format 0.0.4 (what promtool and the Python parser
    // read) uses the sample name itself.
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

/// Metric families in the order of their first sample, each with its samples.
class Families {
public:
    /// Appends `name{labels} value` to the family of `info` (created on first use).
    void sample(const CounterInfo& info, const std::string& labels, const std::string& value) {
        auto at = std::find_if(m_families.begin(), m_families.end(),
                               [&](const Family& f) { return f.info->metric == info.metric; });
        if (at == m_families.end()) at = m_families.insert(at, Family{&info, {}});
        at->samples.append(info.metric);
        if (!labels.empty()) at->samples.append("{").append(labels).append("}");
        at->samples.append(" ").append(value) += '\n';
    }

    void write(std::ostringstream& o) const {
        for (const Family& f : m_families) {
            const CounterInfo& i = *f.info;
            const bool counter = i.kind == CounterKind::Counter || i.metric.ends_with("_total");
            family(o, std::string(i.metric).c_str(), counter ? "counter" : "gauge",
                   std::string(i.help).c_str());
            o << f.samples;
        }
    }

private:
    struct Family {
        const CounterInfo* info;  ///< the family's first line: name, kind, help
        std::string samples;
    };
    std::vector<Family> m_families;
};

std::string joinLabels(const std::string& a, std::string_view b) {
    if (a.empty()) return std::string(b);
    if (b.empty()) return a;
    return a + "," + std::string(b);
}

/// Which lines of the worker table a pass takes: the scalars (the input's included) first,
/// then the labelled anomalies and the flow table's families.
enum class Pass { Scalars, Groups, All };

/// The samples of every line of `stats`' counter table that has a metric, with `labels`
/// (queue="N", or none for the process-wide tables), nested tables included.
template <class Stats>
void addSamples(Families& families, const Stats& stats, const std::string& labels, Pass pass) {
    CounterTable<Stats>::visit(
        [&](const CounterInfo& info, const auto& value) {
            using V = std::decay_t<decltype(value)>;
            const bool group = std::is_same_v<V, AnomalyCounters> || std::is_same_v<V, CacheStats>;
            if ((pass == Pass::Scalars && group) || (pass == Pass::Groups && !group)) return;
            if constexpr (HasCounterTable<V>) {
                addSamples(families, value, labels, Pass::All);
            } else if constexpr (Labelled<V>) {
                forEachLabel(value, [&](std::string_view name, std::uint64_t n) {
                    families.sample(info,
                                    joinLabels(labels, std::string(info.label) + "=\"" +
                                                           std::string(name) + "\""),
                                    std::to_string(n));
                });
            } else if (!info.metric.empty()) {
                std::string text;
                if constexpr (std::is_integral_v<V>) {
                    if (info.kind == CounterKind::Counter) text = std::to_string(value);
                }
                if (text.empty()) {
                    const auto v = static_cast<double>(value);
                    text = formatDouble(info.kind == CounterKind::Nanoseconds ? v / 1e9 : v);
                }
                families.sample(info, joinLabels(labels, info.label), text);
            }
        },
        stats);
}

}  // namespace

MetricsAddress parseMetricsAddress(const std::string& text) {
    auto bad = [&](const std::string& why) {
        return ConfigError({.component = "command line",
                            .option = "--metrics",
                            .value = text,
                            .problem = "must be ADDR:PORT, e.g. 127.0.0.1:9464, [::1]:9464 or "
                                       ":9464 (every address); " +
                                       why,
                            .help = "rowprobe -h"});
    };
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) throw bad("no ':PORT' in '" + text + "'");
    MetricsAddress a;
    a.host = text.substr(0, colon);
    if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
        a.host = a.host.substr(1, a.host.size() - 2);
    else if (a.host.find(':') != std::string::npos)
        throw bad("an IPv6 address goes in brackets, e.g. [::1]:9464");
    const std::string port = text.substr(colon + 1);
    std::size_t used = 0;
    unsigned long v = 0;
    try {
        if (!port.empty() && port[0] != '-' && port[0] != '+') v = std::stoul(port, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != port.size() || v > 65535)
        throw bad("the port must be a number in [0, 65535], got '" + port + "'");
    a.port = static_cast<std::uint16_t>(v);
    return a;
}

std::string formatPrometheus(const StatsSnapshot& s, bool finished) {
    std::ostringstream o;
    const std::size_t queues = s.queues.size();
    Families families;
    for (const Pass pass : {Pass::Scalars, Pass::Groups}) {
        for (std::size_t i = 0; i < queues; ++i)
            addSamples(families, s.queues[i], "queue=\"" + std::to_string(i) + "\"", pass);
    }
    addSamples(families, s.exported, "", Pass::All);
    addSamples(families, s.output, "", Pass::All);
    families.write(o);
    family(o, "rowprobe_queues", "gauge", "Queues (workers, flow tables).");
    o << "rowprobe_queues " << queues << '\n';
    family(o, "rowprobe_uptime_seconds", "gauge", "Seconds since the pipeline started.");
    o << "rowprobe_uptime_seconds " << formatDouble(s.wallSeconds) << '\n';
    family(o, "rowprobe_finished", "gauge",
           "1 once every input has ended and every flow is exported (the values are final).");
    o << "rowprobe_finished " << (finished ? 1 : 0) << '\n';
    family(o, "rowprobe_build_info", "gauge", "Always 1; the version in a label.");
    o << "rowprobe_build_info{version=\"" ROWPROBE_VERSION "\"} 1\n";
    return o.str();
}

namespace {

/// Binds and listens on `a`, or returns -1 with `why` set.
int listenOn(const sockaddr* a, socklen_t len, int family, bool dualStack, std::string& why) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        why = std::strerror(errno);
        return -1;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (dualStack) {
        const int zero = 0;  // IPv4 clients too (::ffff:a.b.c.d), whatever the sysctl default
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (::bind(fd, a, len) != 0 || ::listen(fd, MetricsServer::kBacklog) != 0) {
        why = std::strerror(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

MetricsServer::MetricsServer(const MetricsAddress& address, Source source)
    : m_host(address.host), m_source(std::move(source)) {
    const std::string port = std::to_string(address.port);
    std::string why = "no address";
    auto refuse = [&](const std::string& problem) {
        const std::string value =
            (address.host.find(':') != std::string::npos ? "[" + address.host + "]"
                                                         : address.host) +
            ":" + port;
        // A configuration error (exit 2): a service manager restarting rowprobe cannot fix it.
        return ConfigError({.component = "command line",
                            .option = "--metrics",
                            .value = value,
                            .problem = problem,
                            .help = "rowprobe -h"});
    };
    if (address.host.empty()) {
        // Every address: one IPv6 socket that takes IPv4 too, or IPv4 alone without IPv6.
        sockaddr_in6 v6{};
        v6.sin6_family = AF_INET6;
        v6.sin6_addr = in6addr_any;
        v6.sin6_port = htons(address.port);
        m_listen = listenOn(reinterpret_cast<const sockaddr*>(&v6), sizeof v6, AF_INET6, true, why);
        m_host = "::";
        if (m_listen < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
            sockaddr_in v4{};
            v4.sin_family = AF_INET;
            v4.sin_addr.s_addr = htonl(INADDR_ANY);
            v4.sin_port = htons(address.port);
            m_listen =
                listenOn(reinterpret_cast<const sockaddr*>(&v4), sizeof v4, AF_INET, false, why);
            m_host = "0.0.0.0";
        }
    } else {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE;
        addrinfo* found = nullptr;
        const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
        if (rc != 0) throw refuse("cannot resolve '" + address.host + "': " + gai_strerror(rc));
        for (addrinfo* a = found; a != nullptr && m_listen < 0; a = a->ai_next)
            m_listen = listenOn(a->ai_addr, a->ai_addrlen, a->ai_family, false, why);
        freeaddrinfo(found);
    }
    if (m_listen < 0) throw refuse("cannot listen on it: " + why);
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&bound), &len);
    m_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    m_thread = std::thread([this] { serve(); });
    pthread_setname_np(m_thread.native_handle(), "rp-metrics");
}

MetricsServer::~MetricsServer() {
    m_stop.store(true, std::memory_order_relaxed);
    if (m_thread.joinable()) m_thread.join();
    if (m_listen >= 0) ::close(m_listen);
}

std::string MetricsServer::url() const {
    const bool v6 = m_host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + m_host + "]" : m_host) + ":" + std::to_string(m_port) +
           "/metrics";
}

void MetricsServer::serve() {
    using Clock = std::chrono::steady_clock;
    std::vector<Connection> conns;
    conns.reserve(kMaxConnections);
    std::vector<pollfd> fds;
    fds.reserve(kMaxConnections + 1);
    auto drop = [&](std::size_t i) {
        ::close(conns[i].fd);
        conns[i] = std::move(conns.back());
        conns.pop_back();
    };
    while (!m_stop.load(std::memory_order_relaxed)) {
        fds.clear();
        fds.push_back({.fd = m_listen, .events = POLLIN, .revents = 0});
        auto now = Clock::now();
        auto wake = now + std::chrono::milliseconds(100);  // checks m_stop
        for (const Connection& c : conns) {
            fds.push_back({.fd = c.fd,
                           .events = static_cast<short>(c.reply.empty() ? POLLIN : POLLOUT),
                           .revents = 0});
            wake = std::min(wake, c.deadline);
        }
        const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now);
        ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long>(0, waitMs.count())) + 1);
        now = Clock::now();
        // Clients first (fds[1..] match conns by index), from the back so removals keep order.
        for (std::size_t i = conns.size(); i-- > 0;) {
            Connection& c = conns[i];
            const short ev = fds[i + 1].revents;
            // Dropped when it closed or failed, or when it is too slow to send its request or
            // to take the reply.
            if ((ev != 0 && !progress(c)) || now >= c.deadline) drop(i);
        }
        if ((fds[0].revents & POLLIN) == 0) continue;
        // Take every waiting connection. At the cap, the oldest connection still sending its
        // request makes room (a scrape answers within one pass, so it is never the oldest for
        // long); idle or slow clients cannot keep a scrape waiting.
        for (unsigned taken = 0; taken < kBacklog; ++taken) {
            const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) break;
            if (conns.size() >= kMaxConnections) {
                // the oldest still reading; when every one is being answered, the oldest
                std::size_t oldest = 0;
                for (std::size_t i = 1; i < conns.size(); ++i) {
                    const bool reading = conns[i].reply.empty();
                    const bool oldestReading = conns[oldest].reply.empty();
                    if (reading != oldestReading ? reading : conns[i].since < conns[oldest].since)
                        oldest = i;
                }
                drop(oldest);
            }
            Connection c;
            c.fd = fd;
            c.since = now;
            c.deadline = now + kRequestTimeout;
            // Its request is usually there already: answer at once.
            if (!progress(c)) {
                ::close(fd);
                continue;
            }
            conns.push_back(std::move(c));
        }
    }
    for (const Connection& c : conns) ::close(c.fd);
}

bool MetricsServer::progress(Connection& c) {
    if (c.reply.empty()) {
        char buf[2048];
        for (;;) {
            const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
            if (n > 0) {
                c.request.append(buf, static_cast<std::size_t>(n));
                if (c.request.size() >= kMaxRequest) break;
                continue;
            }
            if (n == 0) break;  // the client closed its side: answer what it sent
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (c.request.find("\r\n\r\n") == std::string::npos &&
                    c.request.find("\n\n") == std::string::npos)
                    return true;  // more to come
                break;
            }
            return false;
        }
        if (c.request.empty()) return false;
        c.reply = answer(c.request);
        c.deadline = std::chrono::steady_clock::now() + kReplyTimeout;
    }
    while (c.sent < c.reply.size()) {
        const ssize_t n =
            ::send(c.fd, c.reply.data() + c.sent, c.reply.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) {
            c.sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);  // later, or give up
    }
    return false;  // all sent: close (HTTP/1.0)
}

std::string MetricsServer::answer(const std::string& request) const {
    const std::size_t lineEnd = request.find_first_of("\r\n");
    const std::string line = request.substr(0, lineEnd);
    std::string method, target;
    std::istringstream(line) >> method >> target;
    const std::size_t query = target.find('?');
    if (query != std::string::npos) target.resize(query);

    std::string status = "200 OK";
    std::string type = "text/plain; version=0.0.4; charset=utf-8";
    std::string body;
    if (method != "GET" && method != "HEAD") {
        status = "405 Method Not Allowed";
        type = "text/plain; charset=utf-8";
        body = "only GET /metrics\n";
    } else if (target != "/metrics" && target != "/") {
        status = "404 Not Found";
        type = "text/plain; charset=utf-8";
        body = "rowprobe serves /metrics\n";
    } else {
        // Read the flag first: values read after it are at least as new as the flag says.
        const bool finished = m_finished.load(std::memory_order_acquire);
        body = formatPrometheus(m_source(), finished);
    }
    std::string reply = "HTTP/1.0 " + status + "\r\nContent-Type: " + type +
                        "\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\nConnection: close\r\n\r\n";
    if (method != "HEAD") reply += body;
    return reply;
}

}  // namespace rowprobe::core
