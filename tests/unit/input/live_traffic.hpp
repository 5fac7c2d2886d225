// Traffic the live-capture tests send themselves on `lo` (UDP datagrams, TCP conversations),
// and a rowprobe process started in the background and signalled. Used by raw_input_test.cpp
// and pcap_live_test.cpp; header-only because tests/unit/input globs only *_test.cpp files.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test::live {

/// True when this process may open AF_PACKET sockets (CAP_NET_RAW).
inline bool packetSocketsAllowed() {
    const int fd = ::socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

/// For its lifetime, the calling thread is in a network namespace of its own whose `lo` is up,
/// so a capture on `lo` sees only this test's traffic: not that of test suites running beside it
/// on the machine (their datagrams would fill a small ring and count as kernel drops, or end up
/// in a probe's flows). Sockets opened, inputs created and processes started by this thread in
/// the meantime live in the namespace; the destructor returns the thread to the namespace it
/// came from. Without CAP_SYS_ADMIN (unshare fails) the thread stays on the shared `lo`: the
/// tests still run, as exposed to other traffic as before.
class PrivateLoopback {
public:
    PrivateLoopback() : m_home(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
        if (m_home < 0 || ::unshare(CLONE_NEWNET) != 0) return;
        m_isolated = true;
        const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ifreq r{};
        std::strncpy(r.ifr_name, "lo", IFNAMSIZ - 1);
        const bool up = fd >= 0 && ::ioctl(fd, SIOCGIFFLAGS, &r) == 0 &&
                        (r.ifr_flags |= IFF_UP, ::ioctl(fd, SIOCSIFFLAGS, &r) == 0);
        if (!up) {
            ADD_FAILURE() << "cannot bring up lo in a new network namespace: "
                          << std::strerror(errno);
        }
        if (fd >= 0) ::close(fd);
    }
    ~PrivateLoopback() {
        if (m_isolated) {
            EXPECT_EQ(::setns(m_home, CLONE_NEWNET), 0) << std::strerror(errno);
        }
        if (m_home >= 0) ::close(m_home);
    }
    PrivateLoopback(const PrivateLoopback&) = delete;
    PrivateLoopback& operator=(const PrivateLoopback&) = delete;

private:
    int m_home;
    bool m_isolated = false;
};

/// A veth pair, one end (`hostIfc`, address `hostAddr`) here and the other (`peerAddr`) in a
/// fresh network namespace, so traffic sent from the namespace arrives on `hostIfc` as on a
/// real interface: incoming only, no loopback copies. Removed by the destructor.
class VethPair {
public:
    VethPair() {
        static int counter = 0;  // several pairs in one test process get distinct names
        ++counter;
        const std::string id = std::to_string(getpid() % 100000) + "x" + std::to_string(counter);
        // /run/netns/NAME: not named "rowprobe", which the package test would count as a file
        // its purge left (a soak saw it while a veth test ran beside it).
        m_ns = "rpnic-" + id;
        m_host = "rpvh" + id;
        m_peer = "rpvp" + id;
        // The /30 is 10.233.NET.0; NET is held with a machine-wide lock for the pair's life, so
        // that suites running side by side never give two host interfaces the same subnet.
        const std::uint32_t net = claimSubnet(static_cast<std::uint32_t>(getpid() + counter * 37));
        m_hostAddr = (10u << 24) | (233u << 16) | (net << 8) | 1u;
        m_peerAddr = m_hostAddr + 1;
        const std::string prefix = "10.233." + std::to_string(net) + ".";
        m_command = "ip netns add " + m_ns + " && ip link add " + m_host + " type veth peer name " +
                    m_peer + " && ip link set " + m_peer + " netns " + m_ns + " && ip addr add " +
                    prefix + "1/30 dev " + m_host + " && ip link set " + m_host + " up && ip -n " +
                    m_ns + " addr add " + prefix + "2/30 dev " + m_peer + " && ip -n " + m_ns +
                    " link set " + m_peer + " up";
        m_ok = std::system((m_command + " >/dev/null 2>&1").c_str()) == 0;
    }
    ~VethPair() {
        [[maybe_unused]] int rc =
            std::system(("ip link del " + m_host + " >/dev/null 2>&1").c_str());
        rc = std::system(("ip netns del " + m_ns + " >/dev/null 2>&1").c_str());
        if (m_subnetLock >= 0) ::close(m_subnetLock);  // releases the subnet
    }
    VethPair(const VethPair&) = delete;
    VethPair& operator=(const VethPair&) = delete;

    /// False when the pair could not be created (no CAP_NET_ADMIN, no veth); see `command`.
    bool ok() const { return m_ok; }
    const std::string& command() const { return m_command; }
    const std::string& hostIfc() const { return m_host; }
    std::uint32_t hostAddr() const { return m_hostAddr; }
    std::uint32_t peerAddr() const { return m_peerAddr; }

    /// Runs `body` on a thread inside the peer's namespace (network namespaces are per thread).
    void inPeerNamespace(const std::function<void()>& body) const {
        std::thread t([&] {
            const int fd = ::open(("/var/run/netns/" + m_ns).c_str(), O_RDONLY | O_CLOEXEC);
            ASSERT_GE(fd, 0) << std::strerror(errno);
            ASSERT_EQ(::setns(fd, CLONE_NEWNET), 0) << std::strerror(errno);
            ::close(fd);
            body();
        });
        t.join();
    }

private:
    /// The first of the subnets 1..250, from `hint` on, whose lock file no other process holds;
    /// the lock stays in `m_subnetLock`. Falls back to `hint`'s subnet when none can be locked.
    std::uint32_t claimSubnet(std::uint32_t hint) {
        for (std::uint32_t i = 0; i < 250; ++i) {
            const std::uint32_t net = (hint + i) % 250 + 1;
            const std::string path = "/tmp/rowprobe-veth-10.233." + std::to_string(net) + ".lock";
            const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
            if (fd < 0) continue;
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
                m_subnetLock = fd;
                return net;
            }
            ::close(fd);
        }
        return hint % 250 + 1;
    }

    std::string m_ns, m_host, m_peer, m_command;
    std::uint32_t m_hostAddr = 0, m_peerAddr = 0;
    int m_subnetLock = -1;
    bool m_ok = false;
};

/// A UDP socket bound to an ephemeral port of `addr` (host order).
class UdpSocket {
public:
    explicit UdpSocket(std::uint32_t addr = INADDR_LOOPBACK)
        : m_fd(::socket(AF_INET, SOCK_DGRAM, 0)) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(addr);
        EXPECT_EQ(::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0)
            << std::strerror(errno);
        socklen_t len = sizeof a;
        ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        const int big = 8 << 20;
        ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    }
    ~UdpSocket() { ::close(m_fd); }
    UdpSocket(const UdpSocket&) = delete;
    UdpSocket& operator=(const UdpSocket&) = delete;
    std::uint16_t port() const { return m_port; }
    void sendTo(std::uint16_t port, std::size_t payload,
                std::uint32_t addr = INADDR_LOOPBACK) const {
        std::vector<char> data(payload, 'x');
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(addr);
        EXPECT_EQ(
            ::sendto(m_fd, data.data(), data.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a),
            static_cast<ssize_t>(payload))
            << std::strerror(errno);
    }
    /// Receives and discards datagrams until `count` arrived or `limit` passed; returns how
    /// many arrived. A datagram received here has passed the receive path, so a packet socket
    /// on the interface has had its copy.
    std::size_t receive(std::size_t count, std::chrono::milliseconds limit) const {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        std::size_t got = 0;
        char buf[65536];
        while (got < count) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            pollfd fd{m_fd, POLLIN, 0};
            if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
            if (::recv(m_fd, buf, sizeof buf, MSG_DONTWAIT) >= 0) ++got;
        }
        return got;
    }
    /// Receives one datagram and sends `replyBytes` back to its sender.
    void echo(std::size_t replyBytes) const {
        char buf[65536];
        sockaddr_in from{};
        socklen_t len = sizeof from;
        ASSERT_GE(::recvfrom(m_fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len),
                  0);
        sendTo(ntohs(from.sin_port), replyBytes, ntohl(from.sin_addr.s_addr));
    }

private:
    int m_fd;
    std::uint16_t m_port = 0;
};

/// One TCP conversation on `serverAddr`: connect, the client sends `up` bytes, the server
/// answers `down`, both close. Returns the client's port; `serverPort` receives the server's.
inline std::uint16_t tcpConversation(std::size_t up, std::size_t down,
                                     std::uint32_t serverAddr = INADDR_LOOPBACK,
                                     std::uint16_t* serverPort = nullptr) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(serverAddr);
    EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listener, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    if (serverPort != nullptr) *serverPort = ntohs(a.sin_port);
    const int client = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0)
        << std::strerror(errno);
    const int server = ::accept(listener, nullptr, nullptr);
    std::vector<char> buf(std::max<std::size_t>({up, down, 1}), 'y');
    EXPECT_EQ(::send(client, buf.data(), up, 0), static_cast<ssize_t>(up));
    std::size_t got = 0;
    while (got < up) {
        const ssize_t n = ::recv(server, buf.data(), buf.size(), 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    EXPECT_EQ(::send(server, buf.data(), down, 0), static_cast<ssize_t>(down));
    got = 0;
    while (got < down) {
        const ssize_t n = ::recv(client, buf.data(), buf.size(), 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    sockaddr_in c{};
    len = sizeof c;
    ::getsockname(client, reinterpret_cast<sockaddr*>(&c), &len);
    ::close(client);
    char sink[16];
    while (::recv(server, sink, sizeof sink, 0) > 0) {
    }
    ::close(server);
    ::close(listener);
    return ntohs(c.sin_port);
}

/// rowprobe running in the background with a JSON output, final statistics and a pid file;
/// the constructor returns once the pid file exists, i.e. every input is open and capturing.
class Rowprobe {
public:
    Rowprobe(const std::vector<std::string>& inputs, const std::vector<std::string>& extra = {})
        : m_dir(tempDir()), m_json(m_dir / "flows.json"), m_stats(m_dir / "stats.json") {
        std::vector<std::string> argv = {rowprobeBinary().string()};
        for (const auto& in : inputs) argv.insert(argv.end(), {"-i", in});
        argv.insert(argv.end(),
                    {"-s", "cache;seed=1", "-o", "json;file=" + m_json.string(), "--stats-json",
                     m_stats.string(), "--pid-file", (m_dir / "pid").string(), "-Q"});
        argv.insert(argv.end(), extra.begin(), extra.end());
        m_child = std::make_unique<ChildProcess>(argv);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (!std::filesystem::exists(m_dir / "pid") && m_child->running() &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        m_started = std::filesystem::exists(m_dir / "pid");
    }
    /// False when rowprobe exited or hung before opening its inputs; see `finish(0)`.
    bool started() const { return m_started; }
    ChildProcess& process() { return *m_child; }
    /// Sends `sig` and waits for the exit (up to `timeoutSec`).
    CommandResult finish(int sig, double timeoutSec = 10) {
        if (sig != 0) m_child->signal(sig);
        return m_child->wait(timeoutSec);
    }
    std::vector<JsonObject> flows() const { return parseJsonLines(readFile(m_json)); }
    JsonObject stats() const { return parseJsonFlat(readFile(m_stats)); }

private:
    std::filesystem::path m_dir;
    std::filesystem::path m_json;
    std::filesystem::path m_stats;
    std::unique_ptr<ChildProcess> m_child;
    bool m_started = false;
};

/// The flows of `flows` between the two ports (either direction) of protocol `proto`.
inline std::vector<JsonObject> flowsBetween(const std::vector<JsonObject>& flows, int proto,
                                            std::uint16_t a, std::uint16_t b) {
    std::vector<JsonObject> out;
    const std::string pa = std::to_string(a), pb = std::to_string(b);
    for (const auto& f : flows) {
        if (f.count("proto") == 0 || f.at("proto") != std::to_string(proto)) continue;
        const std::string& s = f.at("src_port");
        const std::string& d = f.at("dst_port");
        if ((s == pa && d == pb) || (s == pb && d == pa)) out.push_back(f);
    }
    return out;
}

}  // namespace rowprobe::test::live
