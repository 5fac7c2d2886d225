// Where export messages go: a UDP collector, a TCP collector, or an IPFIX file (RFC 5655).
// Shared by the outputs that send messages (ipfix, netflow9: UDP carries any message).
//
// UDP and file sinks run on the export thread: one sendto() per message; a file collects
// messages in a 1 MiB buffer written with write(2), and counts their records as written only
// once write() took them (a failed write, e.g. ENOSPC, counts the buffer's records as dropped).
//
// The TCP sink decouples the export thread from the collector with a bounded byte ring and a
// sender thread:
//
//   export thread                     MessageRing (bounded, bytes)                sender thread
//   encoder ──sendMessage()──▶ [entry][entry][entry][entry][      free      ] ──▶ send(), ack
//                                ^tail           ^sendPos        ^head
//                                (oldest not yet acknowledged by the collector's TCP stack)
//
//   entry = {u32 length, u32 records, u64 stream end offset} + one IPFIX message, 8-aligned.
//
// * Entries stay in the ring until the collector's TCP stack has acknowledged their bytes
//   (SIOCOUTQ), not merely until send() returned: a collector that dies with data in flight
//   gets that data again on the next connection.
// * On a lost connection the sender rewinds to `tail`, reconnects with exponential back-off
//   (0.1 s doubling up to `reconnect`), sends every template first, then the rewound
//   entries with sequence numbers patched for the new transport session (starting at 0).
//   The back-off is reset only by a connection that lived at least kHealthyConnection: a
//   collector that accepts and closes at once is retried at 0.1, 0.2, 0.4 ... s, not in a
//   loop. Connection events are logged at most once per kLogInterval (with the number of
//   events not logged), unless `verbose`.
// * A full ring: while connected the export thread waits (back-pressure) as long as the
//   collector keeps taking data. After one wait of `stall` without progress the collector is
//   "stalled" (logged once): from then on a message that does not fit is dropped at once and
//   counted in `dropped`, until the collector acknowledges data again. With no connection a
//   message that does not fit is dropped at once too. Never a hang, never a crash.
// * requestStop() (SIGINT/SIGTERM): the export thread waits for ring space at most until
//   `linger` after the request, and finish() ends by then too: shutdown takes at most `linger`
//   whatever the collector does.
// * finish(): waits at most `linger` for everything to be acknowledged, then stops the
//   sender; whatever is left is counted in `dropped`.
//
// Locking: one mutex guards the ring positions and the connection state, taken once per
// message (never per record); the bytes of an entry are written before it is published and
// read by the sender outside the lock.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "output/common/ipfix_encoder.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::output {

/// A resolved socket address.
struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;
    int family = 0;
    std::string text;  ///< "127.0.0.1:4739", "[::1]:4739"
};

/// Resolves `host`:`port` for `socketType` (SOCK_STREAM / SOCK_DGRAM). Returns an empty
/// vector and sets `error` when the name does not resolve.
std::vector<SocketAddress> resolveAddress(const std::string& host, std::uint16_t port,
                                          int socketType, std::string& error);

/// Common interface of the three transports (all counters thread-safe).
class IpfixTransport : public MessageSink {
public:
    virtual void flush() {}
    /// Last call before destruction: delivers what it can within the transport's limits.
    virtual void finish() {}
    /// Log rotation: a file transport whose path was moved away opens it anew and returns
    /// true (the encoder must then send the templates again). Network transports: false.
    virtual bool reopen() { return false; }
    virtual OutputStats stats() const = 0;
    /// A stop was requested: bound every wait by the transport's linger (any thread).
    virtual void requestStop() {}
};

/// UDP pacing (the `pace` option): at most `messagesPerSecond` datagrams a second, the export
/// thread sleeping between them (never per record), the final flush included. A collector
/// with a default receive buffer (about 208 KiB on Linux) keeps up with a burst of expiries
/// that would otherwise overflow it unseen. 0: as fast as the kernel takes them.
struct UdpPacing {
    std::uint32_t messagesPerSecond = 0;
    std::uint64_t (*monotonicNs)() = nullptr;       ///< null: CLOCK_MONOTONIC
    void (*sleepUntilNs)(std::uint64_t) = nullptr;  ///< null: clock_nanosleep (tests fake it)
};

class UdpTransport final : public IpfixTransport {
public:
    /// Throws RuntimeError if no socket can be created. `owner` names the output in errors.
    explicit UdpTransport(std::vector<SocketAddress> addresses, UdpPacing pacing = {},
                          const std::string& owner = "output 'ipfix'");
    /// Datagrams the kernel refused (ENOBUFS, ECONNREFUSED, ...): their records are in
    /// stats().dropped.
    std::uint64_t refused() const noexcept { return m_refused.load(std::memory_order_relaxed); }
    ~UdpTransport() override;
    bool sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                     bool templates) override;
    OutputStats stats() const override;

private:
    void pace();

    int m_fd = -1;
    SocketAddress m_address;
    UdpPacing m_pacing;
    std::uint64_t m_intervalNs = 0;  ///< 1 s / messagesPerSecond; 0 = unpaced
    std::uint64_t m_nextNs = 0;      ///< earliest time of the next datagram
    std::atomic<std::uint64_t> m_refused{0};
    std::atomic<std::uint64_t> m_records{0};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_bytes{0};
};

class FileTransport final : public IpfixTransport {
public:
    /// Opens (truncates) `path`, or stdout for "-". Throws RuntimeError on failure.
    explicit FileTransport(const std::string& path);
    ~FileTransport() override;
    bool sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                     bool templates) override;
    void flush() override;
    void finish() override;
    bool reopen() override;
    OutputStats stats() const override;

private:
    void writeBuffer();  ///< throws RuntimeError (the buffered records are then dropped)

    std::string m_path;
    int m_fd = -1;
    bool m_ownsFile = true;
    std::vector<std::uint8_t> m_buffer;  ///< messages not yet written
    std::uint64_t m_bufferedRecords = 0;
    /// Where each buffered message ends and its records: a partial write counts whole messages.
    std::vector<std::pair<std::size_t, std::uint32_t>> m_bufferedMessages;
    std::atomic<std::uint64_t> m_records{0};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_bytes{0};
};

/// The bounded FIFO of IPFIX messages between the export thread and the TCP sender.
/// Not synchronised: the TCP transport holds its mutex around every call.
class MessageRing {
public:
    struct Entry {
        std::uint64_t position = 0;  ///< where the entry starts (monotonic)
        std::uint64_t next = 0;      ///< position of the following entry
        std::uint8_t* message = nullptr;
        std::uint32_t length = 0;
        std::uint32_t records = 0;
        std::uint64_t* streamEnd = nullptr;  ///< filled in by the sender once sent
    };

    explicit MessageRing(std::size_t capacityBytes);
    /// Appends a copy of `message`; false when it does not fit.
    bool push(std::span<const std::uint8_t> message, std::uint32_t records);
    bool fits(std::size_t messageLength) const noexcept;
    /// The entry at `position` (which must be < head()).
    Entry at(std::uint64_t position) noexcept;
    void release(std::uint64_t newTail) noexcept { m_tail = newTail; }

    std::uint64_t head() const noexcept { return m_head; }
    std::uint64_t tail() const noexcept { return m_tail; }
    bool empty() const noexcept { return m_head == m_tail; }
    std::size_t capacity() const noexcept { return m_buffer.size(); }

private:
    static constexpr std::size_t kEntryHeader = 16;
    static constexpr std::uint32_t kWrapMarker = 0xFFFFFFFFU;
    std::size_t needed(std::size_t messageLength) const noexcept;

    std::vector<std::uint8_t> m_buffer;
    std::uint64_t m_head = 0;
    std::uint64_t m_tail = 0;
};

class TcpTransport final : public IpfixTransport {
public:
    struct Config {
        std::vector<SocketAddress> addresses;  ///< tried in order
        std::size_t bufferBytes = 16U << 20;
        std::chrono::nanoseconds reconnectMax = std::chrono::seconds(5);
        std::chrono::nanoseconds linger = std::chrono::seconds(5);
        std::chrono::nanoseconds stall = std::chrono::seconds(5);
        bool verbose = false;
        std::string name = "ipfix";  ///< prefix of log lines
    };

    /// Starts the sender thread, which connects in the background: a collector that is down at
    /// start-up is not an error.
    /// `templateRecords[i]`: the RFC 5610 type records in template message i (counted in the
    /// session's sequence numbers); missing entries are 0.
    TcpTransport(Config config, std::vector<std::vector<std::uint8_t>> templateMessages,
                 std::vector<std::uint32_t> templateRecords = {});
    ~TcpTransport() override;

    bool sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                     bool templates) override;
    void finish() override;
    OutputStats stats() const override;
    void requestStop() override;

    bool connected() const noexcept { return m_connected.load(); }
    std::uint64_t connections() const noexcept { return m_connections.load(); }

private:
    using Clock = std::chrono::steady_clock;

    void run();
    int connectOnce(std::string& error);
    /// 0 on success, else an errno value (ECONNRESET, ETIMEDOUT when the linger expired, ...).
    int sendAll(int fd, const std::uint8_t* data, std::size_t length);
    bool peerClosed(int fd);
    void updateAcks();                 // mutex held
    void disconnect(const char* why);  // mutex held
    void log(const std::string& line) const;
    /// Logs a connection event of one kind (0 lost, 1 connected) at most once per
    /// kLogInterval, with the number of events of that kind not logged since (mutex held).
    void logEvent(int kind, const std::string& line);

    Config m_config;
    std::mutex m_mutex;
    std::condition_variable m_wake;   ///< sender: new data, templates or stop
    std::condition_variable m_space;  ///< export thread: ring space freed or connection state
    MessageRing m_ring;
    std::vector<std::vector<std::uint8_t>> m_templates;          ///< sent on every connection
    std::vector<std::vector<std::uint8_t>> m_incomingTemplates;  ///< batch being received
    std::vector<std::uint32_t> m_templateRecords;          ///< type records per template message
    std::vector<std::uint32_t> m_incomingTemplateRecords;  ///< ... of the incoming batch
    std::uint64_t m_templateVersion = 1;
    bool m_templateBatchOpen = false;

    // Sender state (mutex held unless noted).
    int m_fd = -1;
    std::uint64_t m_sendPos = 0;
    std::uint64_t m_streamSent = 0;
    std::uint32_t m_sessionRecords = 0;
    std::uint64_t m_templatesSentVersion = 0;
    Clock::time_point m_nextAttempt{};
    std::chrono::nanoseconds m_backoff{};
    Clock::time_point m_outageStart{};
    bool m_inOutage = false;
    Clock::time_point m_connectedAt{};
    bool m_stalled = false;  ///< no progress for `stall` while the ring was full
    bool m_stopRequestedEarly = false;
    Clock::time_point m_stopDeadline{};  ///< requestStop() + linger
    Clock::time_point m_lastEventLog[2]{};
    std::uint64_t m_eventsNotLogged[2]{};
    bool m_stopping = false;
    Clock::time_point m_deadline{};
    std::atomic<bool> m_stopRequested{false};    ///< copy of m_stopping for sendAll
    std::atomic<Clock::rep> m_deadlineTicks{0};  ///< copy of m_deadline for sendAll

    std::atomic<bool> m_connected{false};
    std::atomic<std::uint64_t> m_connections{0};
    std::atomic<std::uint64_t> m_delivered{0};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_bytes{0};
    bool m_finished = false;
    std::thread m_thread;
};

}  // namespace rowprobe::output
