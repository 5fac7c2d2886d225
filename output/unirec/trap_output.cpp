#include "trap_output.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "rowprobe/byte_order.hpp"
#include "rowprobe/format.hpp"

#ifndef ROWPROBE_TRAP_SOCKET_DIR
#define ROWPROBE_TRAP_SOCKET_DIR "/tmp"
#endif

namespace rowprobe::output {

static_assert(std::endian::native == std::endian::little,
              "TRAP sequence numbers and UniRec values are written in host order; NEMEA hosts are "
              "little-endian");

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStallLimit = std::chrono::seconds(10);
constexpr auto kHelloBudget = std::chrono::seconds(1);
constexpr auto kCloseBudget = std::chrono::seconds(5);
/// After a stop request: the longest wait for a slow client, and for acknowledgements at close.
constexpr auto kStoppingBudget = std::chrono::seconds(1);

std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t end = text.find(sep, pos);
        out.emplace_back(
            text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
        if (end == std::string_view::npos) return out;
        pos = end + 1;
    }
}

bool parseUnsigned(const std::string& s, std::uint64_t& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    v = std::strtoull(s.c_str(), &end, 10);
    return errno == 0 && end == s.c_str() + s.size() && s[0] != '-';
}

[[noreturn]] void bad(const std::string& ifc, const std::string& problem) {
    throw std::invalid_argument("interface '" + ifc + "': " + problem);
}

std::string expandHome(const std::string& path) {
    if (path.empty() || path[0] != '~') return path;
    const char* home = std::getenv("HOME");
    return (home != nullptr ? std::string(home) : std::string()) + path.substr(1);
}

}  // namespace

std::vector<TrapIfcSpec> parseTrapIfcSpecs(std::string_view text) {
    std::vector<TrapIfcSpec> out;
    if (text.empty()) throw std::invalid_argument("empty interface specifier");
    for (const std::string& ifc : split(text, ',')) {
        const auto parts = split(ifc, ':');
        TrapIfcSpec s;
        s.text = ifc;
        if (parts[0].size() != 1)
            bad(ifc, "must start with a type letter and ':' (t:, u:, f:, b:)");
        s.type = parts[0][0];
        if (s.type != 't' && s.type != 'u' && s.type != 'f' && s.type != 'b') {
            bad(ifc, std::string("unknown interface type '") + s.type +
                         "' (t: TCP, u: UNIX socket, f: file, b: blackhole)");
        }
        std::vector<std::string> positional;
        for (std::size_t i = 1; i < parts.size(); ++i) {
            const std::string& p = parts[i];
            const std::size_t eq = p.find('=');
            if (eq == std::string::npos) {
                positional.push_back(p);
                continue;
            }
            const std::string key = p.substr(0, eq);
            const std::string value = p.substr(eq + 1);
            std::uint64_t n = 0;
            if (key == "timeout") {
                s.timeoutGiven = true;
                if (value == "WAIT") {
                    s.timeout = TrapTimeout::Wait;
                } else if (value == "HALF_WAIT") {
                    s.timeout = TrapTimeout::HalfWait;
                } else if (value == "NO_WAIT") {
                    s.timeout = TrapTimeout::NoWait;
                } else if (parseUnsigned(value, n)) {
                    s.timeout = TrapTimeout::NoWait;
                    s.timeoutUs = n;
                } else {
                    bad(ifc, "timeout must be WAIT, HALF_WAIT, NO_WAIT or microseconds, got '" +
                                 value + "'");
                }
            } else if (key == "buffer") {
                if (value != "on" && value != "off")
                    bad(ifc, "buffer must be on or off, got '" + value + "'");
                s.buffer = value == "on";
            } else if (key == "autoflush") {
                if (value == "off") {
                    s.autoflush = false;
                } else if (!parseUnsigned(value, n)) {
                    bad(ifc, "autoflush must be off or microseconds, got '" + value + "'");
                }
            } else if ((s.type == 't' || s.type == 'u') && key == "max_clients") {
                if (!parseUnsigned(value, n) || n == 0)
                    bad(ifc, "max_clients must be a positive number");
                s.maxClients = static_cast<unsigned>(std::min<std::uint64_t>(n, 64));
            } else if ((s.type == 't' || s.type == 'u') && key == "buffer_count") {
                if (!parseUnsigned(value, n) || n == 0)
                    bad(ifc, "buffer_count must be a positive number");
            } else if ((s.type == 't' || s.type == 'u') && key == "buffer_size") {
                if (!parseUnsigned(value, n) || n < 1024 || n > kTrapMaxPayload + 14) {
                    bad(ifc, "buffer_size must be in [1024, 100014] bytes, got '" + value + "'");
                }
                s.bufferSize = static_cast<std::size_t>(n);
            } else if (s.type == 'f' && key == "time") {
                if (!parseUnsigned(value, n) || n == 0)
                    bad(ifc, "time must be a positive number of minutes");
                s.rotateMinutes = static_cast<unsigned>(n);
            } else if (s.type == 'f' && key == "size") {
                if (!parseUnsigned(value, n) || n == 0)
                    bad(ifc, "size must be a positive number of MB");
                s.rotateBytes = n * 1024 * 1024;
            } else {
                bad(ifc, "unknown parameter '" + key + "'");
            }
        }
        switch (s.type) {
            case 't':
                if (positional.size() == 1) {
                    s.port = positional[0];
                } else if (positional.size() == 2) {
                    s.address = positional[0];
                    s.port = positional[1];
                } else {
                    bad(ifc, "expected t:<port> or t:<address>:<port>");
                }
                if (std::uint64_t port = 0; !parseUnsigned(s.port, port) || port > 65535) {
                    bad(ifc, "port must be a number in [0, 65535], got '" + s.port + "'");
                }
                break;
            case 'u':
                if (positional.size() != 1 || positional[0].empty()) bad(ifc, "expected u:<name>");
                s.name = positional[0];
                break;
            case 'f':
                if (positional.empty() || positional[0].empty())
                    bad(ifc, "expected f:<path>[:w|:a]");
                s.path = positional[0];
                for (std::size_t i = 1; i < positional.size(); ++i) {
                    if (positional[i] == "w" || positional[i] == "a") {
                        s.mode = positional[i][0];
                    } else {
                        bad(ifc, "file mode must be w or a, got '" + positional[i] + "'");
                    }
                }
                break;
            default:
                if (!positional.empty()) bad(ifc, "a blackhole takes no parameters");
                break;
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::string trapSocketDir() {
    const char* dir = std::getenv("TRAP_SOCKET_DIR");
    return dir != nullptr && *dir != '\0' ? dir : ROWPROBE_TRAP_SOCKET_DIR;
}

// ---------------------------------------------------------------------------------------------
// TrapOutput: containers

TrapOutput::TrapOutput(TrapIfcSpec spec, std::string specifier, std::size_t headerSize)
    : m_spec(std::move(spec)), m_specifier(std::move(specifier)), m_headerSize(headerSize) {
    const std::size_t payload =
        std::min(m_spec.bufferSize - std::min(m_spec.bufferSize, headerSize), kTrapMaxPayload);
    m_container.assign(headerSize + payload, 0);
    m_used = headerSize;
}

std::vector<std::uint8_t> TrapOutput::hello() const {
    std::vector<std::uint8_t> h(8 + m_specifier.size(), 0);
    h[0] = kTrapFormatUnirec;
    storeBe32(h.data() + 4, static_cast<std::uint32_t>(m_specifier.size()));
    std::memcpy(h.data() + 8, m_specifier.data(), m_specifier.size());
    return h;
}

void TrapOutput::send(std::span<const std::uint8_t> message, bool isRecord) {
    const std::size_t need = 2 + message.size();
    if (message.size() > 0xFFFF || need > m_container.size() - m_headerSize) {
        if (isRecord) ++m_stats.dropped;  // larger than a container: libtrap skips it too
        return;
    }
    if (m_used + need > m_container.size()) finishContainer();
    m_container[m_used] = static_cast<std::uint8_t>(message.size() >> 8);
    m_container[m_used + 1] = static_cast<std::uint8_t>(message.size());
    std::memcpy(m_container.data() + m_used + 2, message.data(), message.size());
    m_used += need;
    ++m_messages;
    if (isRecord) ++m_records;
    if (!m_spec.buffer) finishContainer();
}

void TrapOutput::finishContainer() {
    if (m_messages == 0) return;
    std::uint8_t* h = m_container.data();
    storeBe32(h, static_cast<std::uint32_t>(m_used - m_headerSize));
    if (m_headerSize == 14) {
        std::memcpy(h + 4, &m_sequence, 8);   // host order (LE)
        std::memcpy(h + 12, &m_messages, 2);  // host order (LE)
    }
    const std::uint32_t records = m_records;
    const std::size_t used = m_used;
    m_sequence += m_messages;
    m_messages = 0;
    m_records = 0;
    m_used = m_headerSize;
    Delivery d = Delivery::Dropped;
    try {
        d = deliver({m_container.data(), used}, records);
    } catch (...) {
        m_stats.dropped += records;  // an I/O error: the container is lost
        throw;
    }
    switch (d) {
        case Delivery::Delivered:
            m_stats.records += records;
            m_stats.bytes += used;
            break;
        case Delivery::Pending:
            break;
        case Delivery::Discarded:
            m_stats.discarded += records;
            m_stats.dropped += records;
            break;
        case Delivery::Dropped:
            m_stats.dropped += records;
            break;
    }
}

void TrapOutput::flush(bool force) {
    if (m_closed) return;
    if (m_spec.autoflush || force) finishContainer();
}

void TrapOutput::finish(bool eof) {
    if (m_closed) return;
    if (eof) {
        const std::uint8_t zero = 0;
        send({&zero, 1}, false);
    }
    finishContainer();
    close();
    m_closed = true;
}

void TrapOutput::reopen() {
    if (m_closed) return;
    finishContainer();
    reopenFile();
}

// ---------------------------------------------------------------------------------------------
// t: / u: servers

TrapStreamServer::TrapStreamServer(TrapIfcSpec spec, std::string specifier, bool legacy)
    : TrapOutput(std::move(spec), std::move(specifier), legacy ? 4 : 14) {
    m_hello = hello();
    if (m_spec.type == 't') {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
        addrinfo* ai = nullptr;
        const int rc = ::getaddrinfo(m_spec.address.empty() ? nullptr : m_spec.address.c_str(),
                                     m_spec.port.c_str(), &hints, &ai);
        if (rc != 0)
            throw std::runtime_error("cannot resolve '" + m_spec.address +
                                     "': " + gai_strerror(rc));
        m_listen = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        const int one = 1;
        if (m_listen >= 0) ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (m_listen < 0 || ::bind(m_listen, ai->ai_addr, ai->ai_addrlen) != 0) {
            const int e = errno;
            ::freeaddrinfo(ai);
            throw std::runtime_error("cannot listen on TCP port " + m_spec.port + ": " +
                                     std::strerror(e));
        }
        ::freeaddrinfo(ai);
        sockaddr_storage bound{};
        socklen_t len = sizeof bound;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&bound), &len);
        m_port =
            ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                             : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
        if (m_spec.port == "0") {  // the system chose: say which, or nobody can connect
            std::cerr << "rowprobe: output 'unirec': interface '" << m_spec.text
                      << "' listens on TCP port " << m_port << '\n';
        }
    } else {
        m_path = trapSocketDir() + "/trap-" + m_spec.name + ".sock";
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        if (m_path.size() >= sizeof a.sun_path)
            throw std::runtime_error("socket path too long: " + m_path);
        std::memcpy(a.sun_path, m_path.c_str(), m_path.size() + 1);
        ::unlink(m_path.c_str());  // a stale socket of an earlier run
        m_listen = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (m_listen < 0 || ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            throw std::runtime_error("cannot create UNIX socket " + m_path + ": " +
                                     std::strerror(errno));
        }
        ::chmod(m_path.c_str(), 0666);
    }
    if (::listen(m_listen, static_cast<int>(m_spec.maxClients)) != 0) {
        throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
    }
}

TrapStreamServer::~TrapStreamServer() { close(); }  // never throws

void TrapStreamServer::close() {
    // Finish sending, then give the clients the rest of the budget to acknowledge; whatever is
    // still unacknowledged is dropped and the connection reset, so it cannot arrive later.
    const auto budget =
        stopRequested() ? Clock::duration(kStoppingBudget) : Clock::duration(kCloseBudget);
    const auto deadline = Clock::now() + budget;
    auto left = [&] {
        return std::chrono::duration_cast<std::chrono::microseconds>(
            std::max(deadline - Clock::now(), Clock::duration::zero()));
    };
    for (std::size_t i = 0; i < m_clients.size();) {
        if (drain(m_clients[i], true, left()) == Drain::Failed) {
            drop(i, "not reading or disconnected at exit");
            continue;
        }
        ++i;
    }
    for (;;) {
        bool waiting = false;
        for (std::size_t i = 0; i < m_clients.size();) {
            Client& c = m_clients[i];
            settle(c);
            pollfd p{c.fd, static_cast<short>(POLLRDHUP), 0};
            const bool gone = ::poll(&p, 1, 0) == 1 &&
                              (p.revents & (POLLERR | POLLHUP | POLLRDHUP)) != 0 &&
                              !c.unacked.empty();
            if (gone) {
                drop(i, "disconnected at exit");
                continue;
            }
            waiting = waiting || !c.unacked.empty();
            ++i;
        }
        if (!waiting || Clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& c : m_clients) {
        if (!c.unacked.empty()) {
            const linger reset{1, 0};
            ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        }
        release(c);
        ::close(c.fd);
    }
    m_clients.clear();
    retire();
    if (m_listen >= 0) ::close(m_listen);
    m_listen = -1;
    if (!m_path.empty()) ::unlink(m_path.c_str());
    m_path.clear();
}

void TrapStreamServer::acceptClients() {
    if (m_listen < 0) return;
    for (;;) {
        const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        if (m_clients.size() >= m_spec.maxClients) {
            ::close(fd);
            continue;
        }
        Client c;
        c.fd = fd;
        c.pending.reserve(std::max(m_hello.size(), kTrapMaxPayload + 14));
        c.pending = m_hello;
        c.streamQueued = m_hello.size();
        if (drain(c, true, std::chrono::duration_cast<std::chrono::microseconds>(kHelloBudget)) ==
            Drain::Failed) {
            ::close(fd);
            continue;
        }
        m_clients.push_back(std::move(c));
    }
}

TrapStreamServer::Drain TrapStreamServer::drain(Client& c, bool block,
                                                std::chrono::microseconds budget) {
    // Waits at most `budget` without progress; then a blocking drain gives up on the client
    // (Failed) and a non-blocking one leaves the rest pending.
    auto lastProgress = Clock::now();
    while (c.sent < c.pending.size()) {
        const ssize_t n = ::send(c.fd, c.pending.data() + c.sent, c.pending.size() - c.sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c.sent += static_cast<std::size_t>(n);
            c.streamSent += static_cast<std::uint64_t>(n);
            lastProgress = Clock::now();
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            const auto waited = Clock::now() - lastProgress;
            const auto limit = std::chrono::duration_cast<Clock::duration>(budget);
            if (waited >= limit) return block ? Drain::Failed : Drain::Pending;
            pollfd p{c.fd, POLLOUT, 0};
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(limit - waited).count();
            ::poll(&p, 1, static_cast<int>(std::clamp<std::int64_t>(left, 1, 100)));
            continue;
        }
        return Drain::Failed;
    }
    c.pending.clear();
    c.sent = 0;
    return Drain::Done;
}

void TrapStreamServer::drop(std::size_t index, const char* why) {
    std::cerr << "rowprobe: output 'unirec': " << m_spec.text << ": client dropped (" << why
              << ")\n";
    release(m_clients[index]);
    ::close(m_clients[index].fd);
    m_clients.erase(m_clients.begin() + static_cast<std::ptrdiff_t>(index));
}

TrapStreamServer::InFlight* TrapStreamServer::find(std::uint64_t id) {
    if (m_inFlight.empty() || id < m_inFlight.front().id) return nullptr;
    const std::uint64_t i = id - m_inFlight.front().id;
    return i < m_inFlight.size() ? &m_inFlight[static_cast<std::size_t>(i)] : nullptr;
}

void TrapStreamServer::settle(Client& c) {
    int outq = 0;
    // A UNIX stream socket queues what send() took directly on the client's receive queue,
    // where it stays readable after this end closes: that is the acknowledgement.
    if (m_spec.type == 'u') {
        outq = 0;
    } else if (::ioctl(c.fd, SIOCOUTQ, &outq) != 0) {
        return;
    }
    const std::uint64_t queued =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(0, outq)), c.streamSent);
    const std::uint64_t acked = c.streamSent - queued;
    while (!c.unacked.empty() && c.unacked.front().first <= acked) {
        if (InFlight* f = find(c.unacked.front().second); f != nullptr) {
            if (!f->delivered) {
                f->delivered = true;
                m_stats.records += f->records;
                m_stats.bytes += f->bytes;
            }
            --f->holders;
        }
        c.unacked.pop_front();
    }
    retire();
}

void TrapStreamServer::release(Client& c) {
    for (const auto& [end, id] : c.unacked) {
        if (InFlight* f = find(id); f != nullptr) --f->holders;
    }
    c.unacked.clear();
    retire();
}

void TrapStreamServer::retire() {
    while (!m_inFlight.empty() && m_inFlight.front().holders == 0 && !m_handingOut) {
        const InFlight& f = m_inFlight.front();
        if (!f.delivered) m_stats.dropped += f.records;
        m_inFlight.pop_front();
    }
}

TrapOutput::Delivery TrapStreamServer::deliver(std::span<const std::uint8_t> container,
                                               std::uint32_t records) {
    acceptClients();
    while (m_spec.timeout == TrapTimeout::Wait && m_clients.empty() && m_listen >= 0 &&
           !stopRequested()) {
        pollfd p{m_listen, POLLIN, 0};
        ::poll(&p, 1, 100);
        acceptClients();
    }
    const bool block = m_spec.timeout != TrapTimeout::NoWait;
    const auto budget = !block ? std::chrono::microseconds(m_spec.timeoutUs)
                               : std::chrono::duration_cast<std::chrono::microseconds>(
                                     stopRequested() ? Clock::duration(kStoppingBudget)
                                                     : Clock::duration(kStallLimit));
    const std::uint64_t id = m_nextId++;
    m_inFlight.push_back({.id = id, .records = records, .bytes = container.size()});
    m_handingOut = true;  // retire() leaves the new container alone until it is handed out
    std::size_t given = 0;
    for (std::size_t i = 0; i < m_clients.size();) {
        Client& c = m_clients[i];
        const Drain before = drain(c, block, budget);
        if (before == Drain::Failed) {
            drop(i, "not reading or disconnected");
            continue;
        }
        settle(c);
        if (before == Drain::Pending) {  // NO_WAIT: a slow client skips this container
            ++i;
            continue;
        }
        c.pending.assign(container.begin(), container.end());
        c.streamQueued += container.size();
        c.unacked.emplace_back(c.streamQueued, id);
        ++find(id)->holders;
        ++given;
        if (drain(c, false, std::chrono::microseconds(0)) == Drain::Failed) {
            drop(i, "disconnected");
            continue;
        }
        ++i;
    }
    m_handingOut = false;
    if (given == 0) {
        m_inFlight.pop_back();  // nobody got it: the caller counts it
        retire();
        return m_spec.timeout == TrapTimeout::Wait ? Delivery::Dropped : Delivery::Discarded;
    }
    for (auto& c : m_clients) settle(c);
    retire();
    return Delivery::Pending;
}

// ---------------------------------------------------------------------------------------------
// f: files

TrapFileOutput::TrapFileOutput(TrapIfcSpec spec, std::string specifier)
    : TrapOutput(std::move(spec), std::move(specifier), 4) {
    open();
}

TrapFileOutput::~TrapFileOutput() {
    try {
        close();
    } catch (const std::exception&) {
        // finish() reports write errors; a destructor cannot.
    }
}

std::string TrapFileOutput::nextPath() {
    std::string base = expandHome(m_spec.path);
    if (m_spec.rotateMinutes != 0) {
        const std::time_t period = static_cast<std::time_t>(m_spec.rotateMinutes) * 60;
        const std::time_t now = std::time(nullptr);
        const std::time_t start = now - now % period;
        m_periodEnd = start + period;
        std::tm tm{};
        ::localtime_r(&start, &tm);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M", &tm);
        base += std::string(".") + stamp;
    }
    if (m_spec.mode == 'a' || m_spec.rotateBytes != 0) {
        for (;; ++m_suffix) {
            char suffix[16];
            std::snprintf(suffix, sizeof suffix, ".%05u", m_suffix);
            std::string candidate = base + suffix;
            if (m_spec.mode != 'a' || !std::filesystem::exists(candidate)) return candidate;
        }
    }
    return base;
}

void TrapFileOutput::open() {
    m_currentPath = nextPath();
    m_file = std::fopen(m_currentPath.c_str(), "wb");
    if (m_file == nullptr) {
        throw std::runtime_error("cannot open '" + m_currentPath + "': " + std::strerror(errno));
    }
    // Containers are written whole (up to 100 kB each): no stdio buffer, so that a container
    // counted as written is in the file, and one that fails (ENOSPC) is counted as dropped.
    std::setvbuf(m_file, nullptr, _IONBF, 0);
    const auto h = hello();
    if (std::fwrite(h.data(), 1, h.size(), m_file) != h.size()) {
        throw std::runtime_error("cannot write '" + m_currentPath + "': " + std::strerror(errno));
    }
    m_fileBytes = h.size();
}

TrapOutput::Delivery TrapFileOutput::deliver(std::span<const std::uint8_t> container,
                                             std::uint32_t /*records*/) {
    if (m_spec.rotateMinutes != 0 && std::time(nullptr) >= m_periodEnd) {
        close();
        m_suffix = 0;
        open();
    }
    if (std::fwrite(container.data(), 1, container.size(), m_file) != container.size()) {
        throw std::runtime_error("cannot write '" + m_currentPath + "': " + std::strerror(errno));
    }
    m_fileBytes += container.size();
    if (m_spec.rotateBytes != 0 && m_fileBytes >= m_spec.rotateBytes) {
        close();
        ++m_suffix;
        open();
    }
    return Delivery::Delivered;
}

void TrapFileOutput::reopenFile() {
    if (m_file == nullptr) return;
    if (std::fflush(m_file) != 0)
        throw std::runtime_error("cannot write '" + m_currentPath + "': " + std::strerror(errno));
    if (isSameFile(m_file, m_currentPath)) return;
    // Open the new file before letting go of the old one: when it cannot be opened, the
    // interface keeps writing where it did.
    std::FILE* old = m_file;
    const std::string oldPath = m_currentPath;
    const std::uint64_t oldBytes = m_fileBytes;
    m_file = nullptr;
    try {
        open();
    } catch (const std::runtime_error&) {
        if (m_file != nullptr) std::fclose(m_file);
        m_file = old;
        m_currentPath = oldPath;
        m_fileBytes = oldBytes;
        throw;
    }
    std::fclose(old);
}

void TrapFileOutput::close() {
    if (m_file == nullptr) return;
    const bool ok = std::fflush(m_file) == 0;
    std::fclose(m_file);
    m_file = nullptr;
    if (!ok)
        throw std::runtime_error("cannot write '" + m_currentPath + "': " + std::strerror(errno));
}

TrapBlackhole::TrapBlackhole(TrapIfcSpec spec, std::string specifier)
    : TrapOutput(std::move(spec), std::move(specifier), 4) {}

}  // namespace rowprobe::output
