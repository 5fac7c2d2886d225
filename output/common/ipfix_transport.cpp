#include "output/common/ipfix_transport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include "rowprobe/errors.hpp"
#include "rowprobe/format.hpp"

namespace rowprobe::output {

namespace {

constexpr auto kBackoffStart = std::chrono::milliseconds(100);
constexpr auto kConnectTimeout = std::chrono::seconds(2);
constexpr auto kIdlePoll = std::chrono::milliseconds(20);
/// A connection that lived this long resets the reconnect back-off.
constexpr auto kHealthyConnection = std::chrono::seconds(2);
/// At most one connection-event log line per interval (unless verbose).
constexpr auto kLogInterval = std::chrono::seconds(10);

std::string errnoText(int e) { return std::strerror(e); }

std::string formatAddress(const sockaddr* sa) {
    char text[INET6_ADDRSTRLEN] = {};
    if (sa->sa_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
        return std::string(text) + ":" + std::to_string(ntohs(in->sin_port));
    }
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

/// Stamps a message for the session it is about to leave in: export time now, and the
/// session's sequence number (both may differ from when the message was built and buffered).
void stampMessage(std::uint8_t* message, std::uint32_t sequence) {
    const std::uint32_t now = htonl(static_cast<std::uint32_t>(std::time(nullptr)));
    const std::uint32_t be = htonl(sequence);
    std::memcpy(message + 4, &now, 4);
    std::memcpy(message + 8, &be, 4);
}

}  // namespace

std::vector<SocketAddress> resolveAddress(const std::string& host, std::uint16_t port,
                                          int socketType, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = socketType;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* result = nullptr;
    const std::string service = std::to_string(port);
    const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &result);
    std::vector<SocketAddress> out;
    if (rc != 0) {
        error = gai_strerror(rc);
        return out;
    }
    for (addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
        SocketAddress a;
        std::memcpy(&a.storage, ai->ai_addr, ai->ai_addrlen);
        a.length = ai->ai_addrlen;
        a.family = ai->ai_family;
        a.text = formatAddress(ai->ai_addr);
        out.push_back(std::move(a));
    }
    freeaddrinfo(result);
    if (out.empty()) error = "no IPv4 or IPv6 address";
    return out;
}

// ---------------------------------------------------------------------------------------------
// UDP

namespace {
std::uint64_t monotonicNow() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
           static_cast<std::uint64_t>(ts.tv_nsec);
}
void sleepUntil(std::uint64_t ns) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000ULL);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000ULL);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}
}  // namespace

UdpTransport::UdpTransport(std::vector<SocketAddress> addresses, UdpPacing pacing,
                           const std::string& owner)
    : m_pacing(pacing) {
    if (m_pacing.monotonicNs == nullptr) m_pacing.monotonicNs = &monotonicNow;
    if (m_pacing.sleepUntilNs == nullptr) m_pacing.sleepUntilNs = &sleepUntil;
    if (m_pacing.messagesPerSecond != 0)
        m_intervalNs = 1'000'000'000ULL / m_pacing.messagesPerSecond;
    int lastErrno = 0;
    for (auto& a : addresses) {
        const int fd = ::socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd >= 0) {
            m_fd = fd;
            m_address = std::move(a);
            break;
        }
        lastErrno = errno;
    }
    if (m_fd < 0) throw RuntimeError(owner, "cannot create a UDP socket: " + errnoText(lastErrno));
    // Let a burst of messages queue locally rather than fail with ENOBUFS.
    const int sndbuf = 4 << 20;
    ::setsockopt(m_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
}

UdpTransport::~UdpTransport() {
    if (m_fd >= 0) ::close(m_fd);
}

void UdpTransport::pace() {
    const std::uint64_t now = m_pacing.monotonicNs();
    if (m_nextNs > now) {
        m_pacing.sleepUntilNs(m_nextNs);
    } else {
        m_nextNs = now;  // idle since: no credit for the time nothing was sent
    }
    m_nextNs += m_intervalNs;
}

bool UdpTransport::sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                               bool templates) {
    if (templates) dataRecords = 0;  // RFC 5610 type records, not flows
    if (m_intervalNs != 0) pace();
    for (;;) {
        const ssize_t n =
            ::sendto(m_fd, message.data(), message.size(), 0,
                     reinterpret_cast<const sockaddr*>(&m_address.storage), m_address.length);
        if (n == static_cast<ssize_t>(message.size())) {
            m_records.fetch_add(dataRecords, std::memory_order_relaxed);
            m_bytes.fetch_add(message.size(), std::memory_order_relaxed);
            return true;
        }
        if (n < 0 && errno == EINTR) continue;
        // ECONNREFUSED (ICMP from an earlier datagram), ENOBUFS, EHOSTUNREACH, ...: the
        // datagram is lost; UDP has no retransmission.
        m_refused.fetch_add(1, std::memory_order_relaxed);
        m_dropped.fetch_add(dataRecords, std::memory_order_relaxed);
        return false;
    }
}

OutputStats UdpTransport::stats() const {
    return {.records = m_records.load(std::memory_order_relaxed),
            .dropped = m_dropped.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

// ---------------------------------------------------------------------------------------------
// File (RFC 5655: a file is a sequence of IPFIX messages, templates before their data)

namespace {
constexpr std::size_t kFileBuffer = 1 << 20;
}  // namespace

FileTransport::FileTransport(const std::string& path) : m_path(path) {
    if (path == "-") {
        m_fd = STDOUT_FILENO;
        m_ownsFile = false;
    } else {
        m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (m_fd < 0) {
            throw RuntimeError("output 'ipfix'", "cannot open '" + path + "': " + errnoText(errno));
        }
    }
    m_buffer.reserve(kFileBuffer);
}

FileTransport::~FileTransport() {
    try {
        finish();
    } catch (const std::exception&) {
        // finish() is called explicitly by the pipeline, which reports errors.
    }
}

void FileTransport::writeBuffer() {
    std::size_t done = 0;
    while (done < m_buffer.size()) {
        const ssize_t n = ::write(m_fd, m_buffer.data() + done, m_buffer.size() - done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        const int e = n < 0 ? errno : EIO;
        std::uint64_t written = 0;
        for (const auto& [end, records] : m_bufferedMessages) {
            if (end <= done) written += records;
        }
        m_records.fetch_add(written, std::memory_order_relaxed);
        m_bytes.fetch_add(done, std::memory_order_relaxed);
        m_dropped.fetch_add(m_bufferedRecords - written, std::memory_order_relaxed);
        m_bufferedRecords = 0;
        m_bufferedMessages.clear();
        m_buffer.clear();
        throw RuntimeError("output 'ipfix'", "cannot write '" + m_path + "': " + errnoText(e));
    }
    m_records.fetch_add(m_bufferedRecords, std::memory_order_relaxed);
    m_bytes.fetch_add(m_buffer.size(), std::memory_order_relaxed);
    m_bufferedRecords = 0;
    m_bufferedMessages.clear();
    m_buffer.clear();
}

bool FileTransport::sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                                bool templates) {
    if (templates) dataRecords = 0;  // RFC 5610 type records, not flows
    if (m_fd < 0) {
        m_dropped.fetch_add(dataRecords, std::memory_order_relaxed);
        return false;
    }
    if (m_buffer.size() + message.size() > kFileBuffer && !m_buffer.empty()) writeBuffer();
    m_buffer.insert(m_buffer.end(), message.begin(), message.end());
    m_bufferedRecords += dataRecords;
    m_bufferedMessages.emplace_back(m_buffer.size(), dataRecords);
    return true;
}

void FileTransport::flush() {
    if (m_fd >= 0 && !m_buffer.empty()) writeBuffer();
}

bool FileTransport::reopen() {
    flush();
    if (m_fd < 0 || !m_ownsFile || isSameFile(m_fd, m_path)) return false;
    const int fresh = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fresh < 0) {
        throw RuntimeError("output 'ipfix'", "cannot reopen '" + m_path +
                                                 "' after SIGHUP: " + errnoText(errno) +
                                                 " (still writing to the old file)");
    }
    ::close(m_fd);
    m_fd = fresh;
    return true;
}

void FileTransport::finish() {
    if (m_fd < 0) return;
    const int fd = m_fd;
    try {
        flush();
    } catch (...) {
        m_fd = -1;
        if (m_ownsFile) ::close(fd);
        throw;
    }
    m_fd = -1;
    if (m_ownsFile && ::close(fd) != 0) {
        throw RuntimeError("output 'ipfix'", "cannot write '" + m_path + "': " + errnoText(errno));
    }
}

OutputStats FileTransport::stats() const {
    return {.records = m_records.load(std::memory_order_relaxed),
            .dropped = m_dropped.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

// ---------------------------------------------------------------------------------------------
// MessageRing

MessageRing::MessageRing(std::size_t capacityBytes)
    : m_buffer((capacityBytes + 7) & ~std::size_t{7}) {}

std::size_t MessageRing::needed(std::size_t messageLength) const noexcept {
    const std::size_t entry = kEntryHeader + ((messageLength + 7) & ~std::size_t{7});
    const std::size_t offset = m_head % m_buffer.size();
    const std::size_t room = m_buffer.size() - offset;
    return entry <= room ? entry : room + entry;  // a wrap skips the rest of the buffer
}

bool MessageRing::fits(std::size_t messageLength) const noexcept {
    return (m_head - m_tail) + needed(messageLength) <= m_buffer.size();
}

bool MessageRing::push(std::span<const std::uint8_t> message, std::uint32_t records) {
    if (!fits(message.size())) return false;
    std::size_t offset = m_head % m_buffer.size();
    const std::size_t entry = kEntryHeader + ((message.size() + 7) & ~std::size_t{7});
    if (entry > m_buffer.size() - offset) {
        std::memcpy(m_buffer.data() + offset, &kWrapMarker, 4);
        m_head += m_buffer.size() - offset;
        offset = 0;
    }
    std::uint8_t* p = m_buffer.data() + offset;
    const auto length = static_cast<std::uint32_t>(message.size());
    const std::uint64_t zero = 0;
    std::memcpy(p, &length, 4);
    std::memcpy(p + 4, &records, 4);
    std::memcpy(p + 8, &zero, 8);
    std::memcpy(p + kEntryHeader, message.data(), message.size());
    m_head += entry;
    return true;
}

MessageRing::Entry MessageRing::at(std::uint64_t position) noexcept {
    std::size_t offset = position % m_buffer.size();
    std::uint32_t length = 0;
    std::memcpy(&length, m_buffer.data() + offset, 4);
    if (length == kWrapMarker) {
        position += m_buffer.size() - offset;
        offset = 0;
        std::memcpy(&length, m_buffer.data(), 4);
    }
    Entry e;
    std::uint8_t* p = m_buffer.data() + offset;
    e.position = position;
    e.length = length;
    std::memcpy(&e.records, p + 4, 4);
    e.streamEnd = reinterpret_cast<std::uint64_t*>(p + 8);
    e.message = p + kEntryHeader;
    e.next = position + kEntryHeader + ((length + 7) & ~std::uint64_t{7});
    return e;
}

// ---------------------------------------------------------------------------------------------
// TCP

TcpTransport::TcpTransport(Config config, std::vector<std::vector<std::uint8_t>> templateMessages,
                           std::vector<std::uint32_t> templateRecords)
    : m_config(std::move(config)),
      m_ring(m_config.bufferBytes),
      m_templates(std::move(templateMessages)),
      m_templateRecords(std::move(templateRecords)) {
    m_templateRecords.resize(m_templates.size(), 0);
    m_backoff = kBackoffStart;
    m_thread = std::thread([this] { run(); });
}

TcpTransport::~TcpTransport() {
    try {
        finish();
    } catch (...) {
        // finish() only throws if the thread cannot be joined; nothing more to do here.
    }
}

void TcpTransport::log(const std::string& line) const {
    std::cerr << "rowprobe: " << m_config.name << ": " << line << '\n';
}

bool TcpTransport::sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                               bool templates) {
    std::unique_lock lock(m_mutex);
    if (templates) {
        // The encoder sends its complete template set as one batch of messages. Keep the
        // latest batch for every new connection; an open connection gets it only when it
        // differs from what it already has (the header - time, sequence - does not count).
        if (!m_templateBatchOpen) {
            m_incomingTemplates.clear();
            m_incomingTemplateRecords.clear();
        }
        m_templateBatchOpen = true;
        m_incomingTemplates.emplace_back(message.begin(), message.end());
        m_incomingTemplateRecords.push_back(dataRecords);
        const std::size_t i = m_incomingTemplates.size() - 1;
        const bool known = i < m_templates.size() && m_templates[i].size() == message.size() &&
                           std::equal(message.begin() + kIpfixHeaderSize, message.end(),
                                      m_templates[i].begin() + kIpfixHeaderSize);
        if (!known) {
            m_templates = m_incomingTemplates;
            m_templateRecords = m_incomingTemplateRecords;
            ++m_templateVersion;
            m_wake.notify_one();
        }
        return true;
    }
    m_templateBatchOpen = false;
    while (!m_ring.push(message, dataRecords)) {
        const auto now = Clock::now();
        const bool stopDue = m_stopRequestedEarly && now >= m_stopDeadline;
        if (m_fd < 0 || m_stopping || m_stalled || stopDue ||
            m_ring.capacity() < message.size() + 32) {
            m_dropped.fetch_add(dataRecords, std::memory_order_relaxed);
            return false;
        }
        // Connected: wait while the collector keeps taking data (back-pressure).
        const std::uint64_t tailBefore = m_ring.tail();
        auto until = now + m_config.stall;
        if (m_stopRequestedEarly) until = std::min(until, m_stopDeadline);
        m_space.wait_until(lock, until, [&] {
            return m_ring.fits(message.size()) || m_fd < 0 || m_ring.tail() != tailBefore ||
                   m_stopping;
        });
        if (!m_ring.fits(message.size()) && m_fd >= 0 && m_ring.tail() == tailBefore &&
            !m_stopping && !(m_stopRequestedEarly && Clock::now() >= m_stopDeadline)) {
            m_stalled = true;  // until the collector acknowledges data again (updateAcks)
            log("collector " + m_config.addresses.front().text + ": took no data for " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::milliseconds>(m_config.stall).count()) +
                " ms with the buffer full; dropping new records until it reads again");
        }
    }
    m_wake.notify_one();
    return true;
}

void TcpTransport::requestStop() {
    std::lock_guard lock(m_mutex);
    if (m_stopRequestedEarly || m_finished) return;
    m_stopRequestedEarly = true;
    m_stopDeadline = Clock::now() + m_config.linger;
    m_space.notify_all();
}

void TcpTransport::finish() {
    {
        std::lock_guard lock(m_mutex);
        if (m_finished) return;
        m_finished = true;
        m_stopping = true;
        m_deadline = Clock::now() + m_config.linger;
        if (m_stopRequestedEarly) m_deadline = std::min(m_deadline, m_stopDeadline);
        m_deadlineTicks.store(m_deadline.time_since_epoch().count());
        m_stopRequested.store(true, std::memory_order_release);
        m_wake.notify_all();
    }
    if (m_thread.joinable()) m_thread.join();
}

OutputStats TcpTransport::stats() const {
    return {.records = m_delivered.load(std::memory_order_relaxed),
            .dropped = m_dropped.load(std::memory_order_relaxed),
            .bytes = m_bytes.load(std::memory_order_relaxed)};
}

int TcpTransport::connectOnce(std::string& error) {
    for (const SocketAddress& a : m_config.addresses) {
        const int fd = ::socket(a.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = errnoText(errno);
            continue;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a.storage), a.length);
        if (rc != 0 && errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            rc =
                ::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kConnectTimeout).count()));
            if (rc == 1) {
                int soError = 0;
                socklen_t len = sizeof soError;
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len);
                rc = soError == 0 ? 0 : -1;
                errno = soError;
            } else {
                rc = -1;
                errno = ETIMEDOUT;
            }
        }
        if (rc == 0) return fd;
        error = errnoText(errno);
        ::close(fd);
    }
    return -1;
}

bool TcpTransport::peerClosed(int fd) {
    pollfd p{fd, static_cast<short>(POLLIN | POLLRDHUP), 0};
    if (::poll(&p, 1, 0) != 1) return false;
    if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
    // IPFIX over TCP is one-way: a collector sends nothing. Discard whatever it sent; a read
    // of 0 bytes is the end of the connection.
    std::uint8_t sink[512];
    const ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

int TcpTransport::sendAll(int fd, const std::uint8_t* data, std::size_t length) {
    while (length > 0) {
        const ssize_t n = ::send(fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            data += n;
            length -= static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (m_stopRequested.load(std::memory_order_acquire) &&
                Clock::now().time_since_epoch().count() >= m_deadlineTicks.load()) {
                return ETIMEDOUT;
            }
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, 100);
            if ((p.revents & (POLLERR | POLLHUP)) != 0) return ECONNRESET;
            continue;
        }
        return n < 0 ? errno : EIO;
    }
    return 0;
}

void TcpTransport::updateAcks() {
    if (m_fd < 0) return;
    int unacked = 0;
    if (::ioctl(m_fd, SIOCOUTQ, &unacked) != 0) return;
    const std::uint64_t acked = m_streamSent - static_cast<std::uint64_t>(unacked);
    std::uint64_t tail = m_ring.tail();
    std::uint64_t records = 0;
    std::uint64_t bytes = 0;
    while (tail != m_sendPos) {
        const MessageRing::Entry e = m_ring.at(tail);
        if (*e.streamEnd > acked) break;
        records += e.records;
        bytes += e.length;
        tail = e.next;
    }
    if (tail != m_ring.tail()) {
        m_ring.release(tail);
        m_delivered.fetch_add(records, std::memory_order_relaxed);
        m_bytes.fetch_add(bytes, std::memory_order_relaxed);
        if (m_stalled) {
            m_stalled = false;
            log("collector " + m_config.addresses.front().text + ": reading again");
        }
        m_space.notify_all();
    }
}

void TcpTransport::disconnect(const char* why) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    m_connected.store(false);
    m_sendPos = m_ring.tail();  // everything not acknowledged goes out again
    m_stalled = false;
    const auto now = Clock::now();
    if (now - m_connectedAt >= kHealthyConnection) {
        m_backoff = kBackoffStart;  // a connection that worked: try again at once
        m_nextAttempt = now;
    } else {
        // Accepted and lost at once (a collector that closes every connection): keep backing
        // off rather than reconnect in a loop.
        m_nextAttempt = now + m_backoff;
        m_backoff = std::min<std::chrono::nanoseconds>(m_backoff * 2, m_config.reconnectMax);
    }
    m_outageStart = now;
    m_inOutage = true;
    const auto buffered = static_cast<double>(m_config.bufferBytes) / (1 << 20);
    logEvent(0, std::string("collector ") + m_config.addresses.front().text +
                    ": connection lost (" + why + "); buffering up to " +
                    std::to_string(static_cast<int>(buffered)) + " MiB and reconnecting");
    m_space.notify_all();
}

void TcpTransport::logEvent(int kind, const std::string& line) {
    const auto now = Clock::now();
    if (!m_config.verbose && m_lastEventLog[kind] != Clock::time_point{} &&
        now - m_lastEventLog[kind] < kLogInterval) {
        ++m_eventsNotLogged[kind];
        return;
    }
    std::string text = line;
    if (m_eventsNotLogged[kind] != 0) {
        text +=
            " (" + std::to_string(m_eventsNotLogged[kind]) +
            " more like this not logged in the last " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kLogInterval).count()) +
            " s)";
    }
    m_eventsNotLogged[kind] = 0;
    m_lastEventLog[kind] = now;
    log(text);
}

void TcpTransport::run() {
    std::unique_lock lock(m_mutex);
    std::vector<std::uint8_t> templateBytes;
    for (;;) {
        const auto now = Clock::now();
        const bool pastDeadline = m_stopping && now >= m_deadline;
        if (m_stopping && (m_ring.empty() || pastDeadline)) break;
        if (pastDeadline) break;

        if (m_fd < 0) {
            if (now < m_nextAttempt) {
                auto until = m_nextAttempt;
                if (m_stopping) until = std::min(until, m_deadline);
                m_wake.wait_until(lock, until);
                continue;
            }
            lock.unlock();
            std::string error;
            const int fd = connectOnce(error);
            lock.lock();
            if (fd < 0) {
                if (!m_inOutage || m_config.verbose) {
                    log("collector " + m_config.addresses.front().text + ": cannot connect (" +
                        error + "); buffering and retrying");
                }
                if (!m_inOutage) {
                    m_inOutage = true;
                    m_outageStart = Clock::now();
                }
                auto wait = m_backoff;
                if (m_stopping)
                    wait = std::min<std::chrono::nanoseconds>(wait, std::chrono::milliseconds(250));
                m_nextAttempt = Clock::now() + wait;
                m_backoff =
                    std::min<std::chrono::nanoseconds>(m_backoff * 2, m_config.reconnectMax);
                m_space.notify_all();
                continue;
            }
            m_fd = fd;
            m_connected.store(true);
            m_connections.fetch_add(1);
            m_sessionRecords = 0;
            m_streamSent = 0;
            m_sendPos = m_ring.tail();
            m_templatesSentVersion = 0;
            m_connectedAt = Clock::now();  // the back-off is reset by disconnect() if it lasts
            if (m_inOutage || m_config.verbose) {
                const auto down =
                    std::chrono::duration<double>(Clock::now() - m_outageStart).count();
                logEvent(
                    1, "collector " + m_config.addresses.front().text + ": connected" +
                           (m_inOutage ? " after " + std::to_string(down) + " s" : std::string()));
            }
            m_inOutage = false;
            continue;
        }

        if (m_templatesSentVersion != m_templateVersion && !m_templates.empty()) {
            // Every template before any data of this session (RFC 7011 §8.1).
            templateBytes.clear();
            for (std::size_t i = 0; i < m_templates.size(); ++i) {
                const auto& t = m_templates[i];
                const std::size_t at = templateBytes.size();
                templateBytes.insert(templateBytes.end(), t.begin(), t.end());
                stampMessage(templateBytes.data() + at, m_sessionRecords);
                m_sessionRecords += m_templateRecords[i];  // RFC 5610 records are data records
            }
            const std::uint64_t version = m_templateVersion;
            const int fd = m_fd;
            lock.unlock();
            const int error = sendAll(fd, templateBytes.data(), templateBytes.size());
            lock.lock();
            if (error != 0) {
                disconnect(std::strerror(error));
                continue;
            }
            m_streamSent += templateBytes.size();
            m_templatesSentVersion = version;
            continue;
        }

        if (m_sendPos != m_ring.head()) {
            const MessageRing::Entry e = m_ring.at(m_sendPos);
            stampMessage(e.message, m_sessionRecords);
            const int fd = m_fd;
            lock.unlock();
            const bool closed = peerClosed(fd);
            const int error = closed ? 0 : sendAll(fd, e.message, e.length);
            lock.lock();
            if (closed || error != 0) {
                disconnect(closed ? "closed by the collector" : std::strerror(error));
                continue;
            }
            m_streamSent += e.length;
            *e.streamEnd = m_streamSent;
            m_sessionRecords += e.records;
            m_sendPos = e.next;
            updateAcks();
            continue;
        }

        // Everything sent: wait for acknowledgements, new data, or the end of the connection.
        updateAcks();
        if (peerClosed(m_fd)) {
            disconnect("closed by the collector");
            continue;
        }
        if (m_stopping && m_ring.empty()) break;
        m_wake.wait_for(lock, kIdlePoll);
    }
    if (m_fd >= 0) {
        updateAcks();
        ::close(m_fd);
        m_fd = -1;
    }
    m_connected.store(false);
    // Whatever was not acknowledged is lost.
    std::uint64_t lost = 0;
    for (std::uint64_t p = m_ring.tail(); p != m_ring.head();) {
        const MessageRing::Entry e = m_ring.at(p);
        lost += e.records;
        p = e.next;
    }
    m_ring.release(m_ring.head());
    if (lost != 0) {
        m_dropped.fetch_add(lost, std::memory_order_relaxed);
        log("collector " + m_config.addresses.front().text + ": " + std::to_string(lost) +
            " records not delivered before exit (linger expired)");
    }
    m_space.notify_all();
}

}  // namespace rowprobe::output
