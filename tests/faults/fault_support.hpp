// Shared pieces of the fault-injection suite (tests/faults/, ctest label `faults`): hostile
// collectors on loopback, running rowprobe as a child with a hard time limit, and the
// accounting every fault test asserts.
//
// Every test bounds its own run (ChildProcess::wait with a limit well under 20 s) and asserts
// three things: no hang, the documented exit code (docs/reliability.md, "Exit codes"), and
// that the statistics account for every record: export.records = output.records +
// output.dropped, and every flow created in a cache was exported.
//
// ROWPROBE_FAULTS_BINARY=/path/to/rowprobe runs the suite against another build (used to
// check that each regression test fails on the code before its fix).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test::faults {

using Clock = std::chrono::steady_clock;

inline std::string binary() {
    const char* other = std::getenv("ROWPROBE_FAULTS_BINARY");
    return other != nullptr && *other != '\0' ? std::string(other) : rowprobeBinary().string();
}

/// Time limits and bounds in a sanitizer build (3x slower or more) are scaled by this.
inline double scaled(double seconds) { return kSanitized ? seconds * 3 : seconds; }

inline double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline std::uint64_t u64(const JsonObject& o, const std::string& key) {
    const auto it = o.find(key);
    return it == o.end() ? ~std::uint64_t{0} : std::stoull(it->second);
}

/// The run's --stats-json, with the accounting checked.
struct Accounting {
    std::uint64_t exported = 0;  ///< records taken off the flow caches
    std::uint64_t written = 0;   ///< output.records
    std::uint64_t dropped = 0;   ///< output.dropped
    std::uint64_t discarded = 0;
    std::uint64_t created = 0;  ///< flows created in the caches
};

inline Accounting readAccounting(const std::filesystem::path& statsJson) {
    const std::string text = readFile(statsJson);
    Accounting a;
    if (text.empty()) {
        ADD_FAILURE() << "no statistics in " << statsJson;
        return a;
    }
    const JsonObject s = parseJsonFlat(text);
    a.exported = u64(s, "export.records");
    a.written = u64(s, "output.records");
    a.dropped = u64(s, "output.dropped");
    a.discarded = s.count("output.discarded") != 0 ? u64(s, "output.discarded") : 0;
    a.created = u64(s, "total.cache.flows_created");
    EXPECT_EQ(a.exported, a.written + a.dropped)
        << "every record taken from the caches is either written or counted as dropped";
    EXPECT_EQ(a.created, a.exported) << "every flow created was exported";
    EXPECT_LE(a.discarded, a.dropped);
    return a;
}

/// Runs rowprobe with `args` and a --stats-json file; waits at most `limitSec`.
struct RunResult {
    CommandResult result;
    double seconds = 0;
    std::filesystem::path stats;
};

inline std::vector<std::string> command(const std::vector<std::string>& args,
                                        const std::filesystem::path& stats) {
    std::vector<std::string> argv{binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--stats-json", stats.string(), "-Q"});
    return argv;
}

inline RunResult runFor(const std::vector<std::string>& args, double limitSec) {
    RunResult r;
    r.stats = tempDir() / ("stats-" + std::to_string(::getpid()) + "-" +
                           std::to_string(Clock::now().time_since_epoch().count()) + ".json");
    const auto t0 = Clock::now();
    ChildProcess child(command(args, r.stats));
    r.result = child.wait(scaled(limitSec));
    r.seconds = secondsSince(t0);
    return r;
}

/// Like runFor, but sends SIGTERM after `afterSec` and then waits at most `limitSec` more.
inline RunResult runAndStop(const std::vector<std::string>& args, double afterSec, double limitSec,
                            double* stopSeconds = nullptr) {
    RunResult r;
    r.stats = tempDir() / ("stats-" + std::to_string(::getpid()) + "-" +
                           std::to_string(Clock::now().time_since_epoch().count()) + ".json");
    const auto t0 = Clock::now();
    ChildProcess child(command(args, r.stats));
    std::this_thread::sleep_for(std::chrono::duration<double>(afterSec));
    child.signal(SIGTERM);
    const auto t1 = Clock::now();
    r.result = child.wait(scaled(limitSec));
    if (stopSeconds != nullptr) *stopSeconds = secondsSince(t1);
    r.seconds = secondsSince(t0);
    return r;
}

inline std::size_t countOf(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

/// A TCP listener on 127.0.0.1 with a chosen behaviour for the connections it gets.
class Collector {
public:
    enum class Mode {
        Stall,  ///< never accepts: connections complete in the backlog and are never read
        Close,  ///< accepts and closes at once
        Reset,  ///< accepts and resets (SO_LINGER 0) at once
        Sink,   ///< accepts and reads everything
    };

    /// `port` 0: any free port.
    explicit Collector(Mode mode, int receiveBuffer = 0, std::uint16_t port = 0) : m_mode(mode) {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int one = 1;
        ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (receiveBuffer != 0) {
            ::setsockopt(m_listen, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer);
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(m_listen, 64);
        socklen_t len = sizeof a;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        if (mode != Mode::Stall) m_thread = std::thread([this] { loop(); });
    }
    ~Collector() {
        m_stop = true;
        if (m_thread.joinable()) m_thread.join();
        for (const int fd : m_open) ::close(fd);
        ::close(m_listen);
    }
    Collector(const Collector&) = delete;
    Collector& operator=(const Collector&) = delete;

    std::uint16_t port() const { return m_port; }
    std::uint64_t connections() const { return m_connections.load(); }
    std::uint64_t bytes() const { return m_bytes.load(); }

private:
    void loop() {
        while (!m_stop) {
            std::vector<pollfd> fds{{m_listen, POLLIN, 0}};
            for (const int fd : m_open) fds.push_back({fd, POLLIN, 0});
            if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
            if ((fds[0].revents & POLLIN) != 0) {
                const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
                if (fd >= 0) {
                    ++m_connections;
                    if (m_mode == Mode::Sink) {
                        m_open.push_back(fd);
                    } else {
                        if (m_mode == Mode::Reset) {
                            const linger reset{1, 0};
                            ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
                        }
                        ::close(fd);
                    }
                }
            }
            for (std::size_t i = 1; i < fds.size(); ++i) {
                if (fds[i].revents == 0) continue;
                char buf[65536];
                const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n > 0) {
                    m_bytes += static_cast<std::uint64_t>(n);
                } else if (n == 0) {
                    ::close(fds[i].fd);
                    std::erase(m_open, fds[i].fd);
                }
            }
        }
    }

    Mode m_mode;
    int m_listen = -1;
    std::uint16_t m_port = 0;
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::vector<int> m_open;
    std::atomic<std::uint64_t> m_connections{0};
    std::atomic<std::uint64_t> m_bytes{0};
};

}  // namespace rowprobe::test::faults
