// Helpers for tests of a rowprobe that keeps running: a capture fed through a FIFO in phases
// (so the test decides when packets arrive and when the input ends), and a tiny HTTP client.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace rowprobe::test {

/// A FIFO rowprobe reads with -i 'pcap;file=PATH'. Opened read-write by the test so opening
/// never blocks and the input ends only when close() is called.
class CaptureFifo {
public:
    explicit CaptureFifo(std::filesystem::path path) : m_path(std::move(path)) {
        ::mkfifo(m_path.c_str(), 0600);
        m_fd = ::open(m_path.c_str(), O_RDWR | O_CLOEXEC);
    }
    ~CaptureFifo() { close(); }
    CaptureFifo(const CaptureFifo&) = delete;
    CaptureFifo& operator=(const CaptureFifo&) = delete;

    bool ok() const { return m_fd >= 0; }
    const std::filesystem::path& path() const { return m_path; }

    /// The pcap global header (nanosecond timestamps, Ethernet); once, first.
    void writeHeader() {
        const std::uint32_t magic = 0xa1b23c4d, snap = 65535, link = 1;
        const std::uint16_t major = 2, minor = 4;
        const std::int32_t zone = 0;
        const std::uint32_t sigfigs = 0;
        append(&magic, 4);
        append(&major, 2);
        append(&minor, 2);
        append(&zone, 4);
        append(&sigfigs, 4);
        append(&snap, 4);
        append(&link, 4);
    }
    /// One UDP packet 10.0.H.L:sport -> 10.1.0.1:53 at `tsNs` (flow `index`).
    void writeUdp(std::uint64_t tsNs, std::uint32_t index, std::uint16_t sport) {
        std::vector<std::uint8_t> f(14 + 20 + 8 + 10, 0);
        std::memset(f.data(), 2, 6);
        std::memset(f.data() + 6, 4, 6);
        f[12] = 0x08;
        std::uint8_t* ip = f.data() + 14;
        ip[0] = 0x45;
        ip[3] = 38;  // total length
        ip[8] = 64;
        ip[9] = 17;
        ip[12] = 10;
        ip[14] = static_cast<std::uint8_t>(index >> 8);
        ip[15] = static_cast<std::uint8_t>(index);
        ip[16] = 10;
        ip[17] = 1;
        ip[19] = 1;
        std::uint8_t* udp = ip + 20;
        udp[0] = static_cast<std::uint8_t>(sport >> 8);
        udp[1] = static_cast<std::uint8_t>(sport);
        udp[3] = 53;
        udp[5] = 18;
        const std::uint32_t rec[4] = {static_cast<std::uint32_t>(tsNs / 1000000000ULL),
                                      static_cast<std::uint32_t>(tsNs % 1000000000ULL),
                                      static_cast<std::uint32_t>(f.size()),
                                      static_cast<std::uint32_t>(f.size())};
        append(rec, sizeof rec);
        append(f.data(), f.size());
    }
    /// `flows` one-packet UDP flows starting at `startSec` (packet time), source port `sport`.
    void writeFlows(std::uint64_t startSec, std::uint32_t flows, std::uint16_t sport) {
        for (std::uint32_t i = 0; i < flows; ++i)
            writeUdp(startSec * 1000000000ULL + i * 1000ULL, i, sport);
    }
    /// Ends the input (EOF for rowprobe).
    void close() {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
    }

private:
    void append(const void* data, std::size_t n) {
        const auto* p = static_cast<const char*>(data);
        while (n > 0 && m_fd >= 0) {
            const ssize_t w = ::write(m_fd, p, n);
            if (w <= 0) return;
            p += w;
            n -= static_cast<std::size_t>(w);
        }
    }
    std::filesystem::path m_path;
    int m_fd = -1;
};

/// GET http://127.0.0.1:PORT/PATH (HTTP/1.0); the whole response, or "" when it fails.
inline std::string httpGet(std::uint16_t port, const std::string& path = "/metrics") {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string response;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        const std::string request = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
        if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
            char buf[4096];
            ssize_t n = 0;
            while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
                response.append(buf, static_cast<std::size_t>(n));
        }
    }
    ::close(fd);
    return response;
}

/// Polls `done` every 10 ms for up to `seconds`.
inline bool waitFor(const std::function<bool()>& done, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
}

}  // namespace rowprobe::test
