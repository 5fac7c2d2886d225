// Helpers shared by the test executables: locating the third-party ground truth, running the
// built rowprobe binary, writing small pcaps, reading JSON-lines output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rowprobe::test {

/// True in an ASan/TSan build of the tests: time limits grow (3x slower or more), and
/// address-space limits do not apply.
constexpr bool kSanitized =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

/// ../shared/testdata next to the project; tests skip when it (or a file in it) is absent.
std::filesystem::path testdataDir();
/// The project's source tree (pcaps/, tests/golden/ ...).
std::filesystem::path sourceDir();
/// The built rowprobe executable.
std::filesystem::path rowprobeBinary();
/// A fresh temporary directory, removed when the process exits.
std::filesystem::path tempDir();

/// Skips the current test with a clear message when `path` does not exist.
#define ROWPROBE_REQUIRE_FILE(path)                                               \
    do {                                                                          \
        if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << (path); \
    } while (0)

struct CommandResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};
/// Runs `argv` (no shell), capturing stdout and stderr. `timeoutSec` kills it (exit -1).
CommandResult runCommand(const std::vector<std::string>& argv, int timeoutSec = 120);
/// Runs a shell command line through /bin/sh -c.
CommandResult runShell(const std::string& command, int timeoutSec = 120);

/// Decompresses `gz` into `dest` once (cached by size/mtime); returns false on failure.
bool gunzip(const std::filesystem::path& gz, const std::filesystem::path& dest);

/// The synthetic 10k-flow trace, gunzipped into a cache under the build dir; empty if absent.
std::filesystem::path synth10kPcap();

/// Writes a classic pcap (microsecond or nanosecond precision) of Ethernet frames.
class PcapWriter {
public:
    PcapWriter(const std::filesystem::path& path, bool nanosecond = true,
               std::uint32_t linkType = 1);
    ~PcapWriter();
    PcapWriter(const PcapWriter&) = delete;
    PcapWriter& operator=(const PcapWriter&) = delete;
    void write(std::uint64_t tsNs, const std::vector<std::uint8_t>& frame);

private:
    std::FILE* m_file = nullptr;
    bool m_nano;
};

/// Minimal frame builders for tests (valid checksums are not needed by the parser).
std::vector<std::uint8_t> ethIpv4Tcp(const std::string& src, std::uint16_t sport,
                                     const std::string& dst, std::uint16_t dport,
                                     std::uint8_t flags, std::size_t payload = 0);
std::vector<std::uint8_t> ethIpv4Udp(const std::string& src, std::uint16_t sport,
                                     const std::string& dst, std::uint16_t dport,
                                     std::size_t payload = 0);

/// One JSON object of the `json` output, flattened to key -> raw text value (strings unquoted).
using JsonObject = std::map<std::string, std::string>;
/// Parses JSON-lines text made of flat objects (the json output's format).
std::vector<JsonObject> parseJsonLines(const std::string& text);

// ---- Additions (groundtruth / golden suites) -------------------------------------------------

/// Parses one JSON document, flattening nested objects and arrays into dotted keys
/// ("total.cache.hits", "queues.0.parsed"); strings unquoted, other scalars as written.
/// Throws std::runtime_error on malformed JSON.
JsonObject parseJsonFlat(const std::string& text);

/// The whole file as a string (empty when it cannot be read).
std::string readFile(const std::filesystem::path& path);

/// RFC 4180 CSV: quoted fields, doubled quotes, commas and newlines inside quotes.
std::vector<std::vector<std::string>> parseCsv(const std::string& text);

/// "2023-11-14T22:13:20.001289368Z" (1-9 fraction digits, optional Z, also ' ' for 'T') or
/// "1700000000.001289368" -> nanoseconds since the epoch; nullopt when unparsable.
std::optional<std::uint64_t> parseTimeNs(const std::string& text);

/// A tiny YAML subset: block mappings and sequences, flow sequences `[a, b]` and flow mappings
/// `{a: 1}` (possibly spanning lines), quoted and plain scalars (plain ones may continue on
/// more-indented lines), `#` comments. Enough for suricata-verify / FlowTest style files.
struct YamlNode {
    enum class Kind { Null, Scalar, Map, List };
    Kind kind = Kind::Null;
    std::string scalar;
    std::vector<std::pair<std::string, YamlNode>> map;  ///< in file order
    std::vector<YamlNode> list;

    bool isNull() const { return kind == Kind::Null; }
    /// The value of `key` in a map, or nullptr.
    const YamlNode* find(const std::string& key) const;
};
/// Throws std::runtime_error with a line number on input outside the subset.
YamlNode parseYaml(const std::string& text);

/// A child process started without a shell, stdout/stderr captured into files; used to send
/// signals to a running rowprobe. The destructor kills (SIGKILL) and reaps it if still running.
class ChildProcess {
public:
    explicit ChildProcess(const std::vector<std::string>& argv);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    int pid() const { return m_pid; }
    bool running();
    void signal(int sig);
    /// Waits up to `timeoutSec`; returns exit code (128 + signal when killed by one) or -1 on
    /// timeout (the process is left running). Output captured so far is returned too.
    CommandResult wait(double timeoutSec);

private:
    int m_pid = -1;
    int m_status = -1;
    bool m_reaped = false;
    std::filesystem::path m_dir;
};

/// A port of socket `type` (SOCK_STREAM or SOCK_DGRAM) that was free on every IPv4 address a
/// moment ago, drawn at random below the kernel's ephemeral range so that no other process's
/// unbound socket is given it meanwhile (for a collector the test starts, or one that is meant
/// to be absent).
std::uint16_t freeLoopbackPort(int type);

/// Whether a socket of `type` could bind `port` on every IPv4 address just now.
bool portFree(int type, std::uint16_t port);

/// True when process `pid` holds a UDP socket (IPv4 or IPv6) bound to local `port`, from
/// /proc/net/udp{,6} and the process's descriptors: the collector a test started listens, not
/// some other process that took the port.
bool udpPortBoundBy(int pid, std::uint16_t port);
/// Datagrams the kernel dropped for the IPv4 UDP socket bound to 127.0.0.1:`port` (a full
/// receive buffer: the collector fell behind), from /proc/net/udp; 0 when no such socket.
std::uint64_t udpSocketDrops(std::uint16_t port);

}  // namespace rowprobe::test
