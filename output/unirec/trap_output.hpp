// TRAP output interfaces (NEMEA's libtrap), written without libtrap (docs/design/wire-formats.md).
//
// A TRAP output batches messages (here: one UniRec record each) into containers:
//
//   t: / u: (libtrap >= 1.17)   [u32 BE payload P][u64 LE seq][u16 LE count] msg msg ...
//   t: / u: with `legacy`       [u32 BE payload P]                            msg msg ...
//   f: (.trapcap file)          [u32 BE payload P]                            msg msg ...
//   msg                         [u16 BE length L][L bytes]
//
// and starts every connection (and every file) with the hello: u8 data format (2 = UniRec),
// three zero bytes, u32 BE specifier length, the specifier ("ipaddr DST_IP,...", no NUL).
//
// `t:` and `u:` are servers, as in libtrap: rowprobe listens and NEMEA modules connect. Each
// client gets the hello on accept, then every container finished after it connected. The
// server is driven by the export thread (no thread of its own): new clients are accepted
// whenever a container is delivered, and sockets are non-blocking with one pending container
// per client. Timeout semantics follow libtrap: WAIT blocks until a client is connected and
// for slow clients; HALF_WAIT (ipfixprobe's default) blocks only for connected slow clients
// and drops containers nobody is connected for; NO_WAIT never blocks, slow clients skip
// containers. A client that takes nothing for 10 s is disconnected rather than blocking the
// exporter forever. After requestStop() (SIGINT/SIGTERM) WAIT no longer waits for a client and
// a slow client gets at most 1 s.
//
// Accounting (as ipfix_transport.hpp): a container counts as delivered once some client's
// stack has acknowledged its last byte (SIOCOUTQ; on a UNIX socket send() puts it on the
// client's receive queue, which is the same), not when send() took it. Each client keeps the stream offsets at which its containers
// end; a container still unacknowledged by every client that got it when they are gone (a
// crash, a reset, a stall) is dropped. At close, clients get kCloseBudget to acknowledge the
// rest; a connection closed with unacknowledged data is reset so those records cannot arrive
// after they were counted as dropped. Containers nobody was connected for (HALF_WAIT, NO_WAIT)
// are dropped and counted in `discarded` too: that is the configured policy, not a failure.
//
// Sequence numbers count every message the interface handled before the container, from 0
// (libtrap's `buffer=off` off-by-one is not reproduced).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rowprobe/stats.hpp"

namespace rowprobe::output {

inline constexpr std::uint8_t kTrapFormatUnirec = 2;
inline constexpr std::size_t kTrapDefaultBufferSize = 100000;  ///< container incl. header
inline constexpr std::size_t kTrapMaxPayload = 100000;  ///< receivers' TRAP_IFC_MESSAGEQ_SIZE

enum class TrapTimeout : std::uint8_t { Wait, HalfWait, NoWait };

/// One interface of an ifc spec ("t:7600", "u:flow_data:timeout=WAIT", "f:/tmp/x.trapcap:w").
struct TrapIfcSpec {
    char type = 0;     ///< 't', 'u', 'f' or 'b'
    std::string text;  ///< as given
    // common parameters
    TrapTimeout timeout = TrapTimeout::HalfWait;
    bool timeoutGiven = false;
    std::uint64_t timeoutUs = 0;  ///< numeric timeout: longest wait for a slow client
    bool buffer = true;           ///< off = one message per container
    bool autoflush = true;        ///< off = containers leave only when full and at exit
    // t: / u:
    std::string address;  ///< t: bind address (rowprobe extension; default wildcard)
    std::string port;     ///< t: port
    std::string name;     ///< u: socket name
    unsigned maxClients = 64;
    std::size_t bufferSize = kTrapDefaultBufferSize;
    // f:
    std::string path;
    char mode = 'w';  ///< 'w' overwrite, 'a' first free <path>.NNNNN
    unsigned rotateMinutes = 0;
    std::uint64_t rotateBytes = 0;
};

/// Parses a comma-separated ifc spec. Throws std::invalid_argument with a message naming the
/// interface and the problem.
std::vector<TrapIfcSpec> parseTrapIfcSpecs(std::string_view text);

/// UNIX socket directory: $TRAP_SOCKET_DIR, else the build-time default (ROWPROBE_TRAP_SOCKET_DIR,
/// "/tmp" as in Debian's libtrap build).
std::string trapSocketDir();

/// One output interface. Export thread only; stats() is a snapshot the same thread publishes.
class TrapOutput {
public:
    virtual ~TrapOutput() = default;
    /// Appends one message (record). A message larger than the container is dropped.
    void send(std::span<const std::uint8_t> message, bool isRecord = true);
    /// Finishes the current container and delivers it (if autoflush is on, or `force`).
    void flush(bool force = false);
    /// Optionally sends the EOF message (one zero byte), flushes, and closes.
    void finish(bool eof);
    /// Log rotation: delivers the open container, then lets a file interface whose file was
    /// moved away open a new one (with its own hello header).
    void reopen();
    OutputStats stats() const noexcept { return m_stats; }
    const TrapIfcSpec& spec() const noexcept { return m_spec; }
    /// Stop waiting for clients from now on (any thread; see the top of this file).
    void requestStop() noexcept { m_stopRequested.store(true, std::memory_order_relaxed); }

protected:
    /// What became of a container handed to deliver().
    enum class Delivery : std::uint8_t {
        Delivered,  ///< written (file, blackhole)
        Pending,    ///< the implementation accounts for its records later (stream server)
        Dropped,    ///< lost: an error, or a WAIT interface stopped with nobody connected
        Discarded,  ///< nobody was connected (HALF_WAIT / NO_WAIT): policy, counted as dropped
    };
    TrapOutput(TrapIfcSpec spec, std::string specifier, std::size_t headerSize);
    /// Delivers one finished container (header included) holding `records` records. Throws
    /// std::runtime_error on an I/O error (the records are then counted as dropped).
    virtual Delivery deliver(std::span<const std::uint8_t> container, std::uint32_t records) = 0;
    virtual void close() {}
    virtual void reopenFile() {}
    std::vector<std::uint8_t> hello() const;
    bool stopRequested() const noexcept { return m_stopRequested.load(std::memory_order_relaxed); }

    TrapIfcSpec m_spec;
    std::string m_specifier;
    OutputStats m_stats;

private:
    void finishContainer();

    std::size_t m_headerSize;
    std::vector<std::uint8_t> m_container;
    std::size_t m_used = 0;
    std::uint16_t m_messages = 0;
    std::uint32_t m_records = 0;
    std::uint64_t m_sequence = 0;
    bool m_closed = false;
    std::atomic<bool> m_stopRequested{false};
};

/// `t:` and `u:` servers.
class TrapStreamServer final : public TrapOutput {
public:
    /// Binds and listens. Throws std::runtime_error with the system's reason.
    TrapStreamServer(TrapIfcSpec spec, std::string specifier, bool legacy);
    ~TrapStreamServer() override;
    std::uint16_t port() const noexcept { return m_port; }             ///< t: bound port
    const std::string& socketPath() const noexcept { return m_path; }  ///< u: path
    std::size_t clients() const noexcept { return m_clients.size(); }
    /// Accepts pending connections (sends them the hello). Called on every delivery; public
    /// for callers that want clients accepted before the first record.
    void acceptClients();

protected:
    Delivery deliver(std::span<const std::uint8_t> container, std::uint32_t records) override;
    void close() override;

private:
    struct Client {
        int fd = -1;
        std::vector<std::uint8_t> pending;
        std::size_t sent = 0;            ///< bytes of `pending` already sent
        std::uint64_t streamSent = 0;    ///< bytes send() took on this connection
        std::uint64_t streamQueued = 0;  ///< bytes given to this client (sent or pending)
        /// Containers not yet acknowledged: {stream offset of their end, id}.
        std::deque<std::pair<std::uint64_t, std::uint64_t>> unacked;
    };
    /// A container some client still has to acknowledge.
    struct InFlight {
        std::uint64_t id = 0;
        std::uint32_t records = 0;
        std::uint32_t holders = 0;  ///< clients that got it and have not acknowledged it
        std::size_t bytes = 0;
        bool delivered = false;
    };
    enum class Drain : std::uint8_t { Done, Pending, Failed };
    Drain drain(Client& c, bool block, std::chrono::microseconds budget);
    void drop(std::size_t index, const char* why);
    /// Settles what `c` acknowledged (SIOCOUTQ), then retires finished containers.
    void settle(Client& c);
    void release(Client& c);  ///< a client leaves: its unacknowledged containers lose a holder
    void retire();            ///< counts containers nobody holds any more
    InFlight* find(std::uint64_t id);

    std::deque<InFlight> m_inFlight;
    std::uint64_t m_nextId = 0;
    bool m_handingOut = false;
    int m_listen = -1;
    std::uint16_t m_port = 0;
    std::string m_path;
    std::vector<Client> m_clients;
    std::vector<std::uint8_t> m_hello;
};

/// `f:` files.
class TrapFileOutput final : public TrapOutput {
public:
    /// Opens the first file. Throws std::runtime_error on failure.
    TrapFileOutput(TrapIfcSpec spec, std::string specifier);
    ~TrapFileOutput() override;
    const std::string& currentPath() const noexcept { return m_currentPath; }

protected:
    Delivery deliver(std::span<const std::uint8_t> container, std::uint32_t records) override;
    void close() override;
    void reopenFile() override;

private:
    void open();
    std::string nextPath();

    std::FILE* m_file = nullptr;
    std::string m_currentPath;
    std::uint64_t m_fileBytes = 0;
    std::time_t m_periodEnd = 0;
    unsigned m_suffix = 0;
};

/// `b:` blackhole: accepts and discards.
class TrapBlackhole final : public TrapOutput {
public:
    TrapBlackhole(TrapIfcSpec spec, std::string specifier);

protected:
    Delivery deliver(std::span<const std::uint8_t>, std::uint32_t) override {
        return Delivery::Delivered;
    }
};

}  // namespace rowprobe::output
