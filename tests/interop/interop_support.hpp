// Shared pieces of the interop tests: the flows of the `json` output as the reference, a
// field-by-field comparison, tool lookup, and a child process fed through a stdin pipe.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test::interop {

/// One biflow with the fields every decoder is checked on.
struct Flow {
    std::string srcIp;
    std::string dstIp;
    std::uint64_t srcPort = 0;
    std::uint64_t dstPort = 0;
    std::uint64_t proto = 0;
    std::uint64_t packets = 0;
    std::uint64_t bytes = 0;
    std::uint64_t packetsRev = 0;
    std::uint64_t bytesRev = 0;
    std::uint64_t timeFirstNs = 0;
    std::uint64_t timeLastNs = 0;
    std::uint64_t tcpFlags = 0;
    std::uint64_t tcpFlagsRev = 0;

    auto key() const { return std::tie(srcIp, srcPort, dstIp, dstPort, proto); }
};

/// What a decoder can show; fields it cannot are not compared (and said so in the test).
struct Coverage {
    std::uint64_t timeUnitNs = 1;  ///< compare times truncated to this unit
    bool reverseCounters = true;
    bool reverseFlags = true;
    bool flags = true;
};

/// Canonical text of an IPv4 or IPv6 address ("" if unparsable).
inline std::string canonicalIp(const std::string& text) {
    std::uint8_t b[16];
    char out[INET6_ADDRSTRLEN] = {};
    if (inet_pton(AF_INET, text.c_str(), b) == 1) return inet_ntop(AF_INET, b, out, sizeof out);
    if (inet_pton(AF_INET6, text.c_str(), b) == 1) return inet_ntop(AF_INET6, b, out, sizeof out);
    return {};
}

inline std::uint64_t toU64(const std::string& s) {
    if (s.rfind("0x", 0) == 0) return std::stoull(s.substr(2), nullptr, 16);
    return std::stoull(s);
}

/// The reference: flows of the json output.
inline std::vector<Flow> flowsFromJson(const std::string& text) {
    std::vector<Flow> out;
    for (const auto& o : parseJsonLines(text)) {
        Flow f;
        f.srcIp = canonicalIp(o.at("src_ip"));
        f.dstIp = canonicalIp(o.at("dst_ip"));
        f.srcPort = toU64(o.at("src_port"));
        f.dstPort = toU64(o.at("dst_port"));
        f.proto = toU64(o.at("proto"));
        f.packets = toU64(o.at("packets"));
        f.bytes = toU64(o.at("bytes"));
        f.packetsRev = toU64(o.at("packets_rev"));
        f.bytesRev = toU64(o.at("bytes_rev"));
        f.timeFirstNs = parseTimeNs(o.at("time_first")).value();
        f.timeLastNs = parseTimeNs(o.at("time_last")).value();
        f.tcpFlags = toU64(o.at("tcp_flags"));
        f.tcpFlagsRev = toU64(o.at("tcp_flags_rev"));
        out.push_back(f);
    }
    return out;
}

/// Compares decoded flows with the reference, field by field, for every flow. Flows are
/// matched by 5-tuple (and time order among equal 5-tuples). Reports the first mismatches.
inline void expectSameFlows(const std::vector<Flow>& expected, const std::vector<Flow>& actual,
                            const Coverage& c, const std::string& decoder) {
    EXPECT_EQ(actual.size(), expected.size()) << decoder << ": number of flows";
    using Key = std::tuple<std::string, std::uint64_t, std::string, std::uint64_t, std::uint64_t>;
    std::map<Key, std::vector<const Flow*>> byKey;
    for (const auto& f : actual) byKey[Key(f.key())].push_back(&f);
    for (auto& [k, v] : byKey) {
        std::sort(v.begin(), v.end(),
                  [](auto* a, auto* b) { return a->timeFirstNs < b->timeFirstNs; });
    }
    std::map<Key, std::size_t> used;
    int reported = 0;
    std::size_t missing = 0;
    std::size_t wrong = 0;
    for (const auto& e : expected) {
        const Key k(e.key());
        auto it = byKey.find(k);
        std::size_t& n = used[k];
        if (it == byKey.end() || n >= it->second.size()) {
            ++missing;
            if (reported++ < 5) {
                ADD_FAILURE() << decoder << ": flow " << e.srcIp << ":" << e.srcPort << " -> "
                              << e.dstIp << ":" << e.dstPort << " proto " << e.proto
                              << " not decoded";
            }
            continue;
        }
        const Flow& a = *it->second[n++];
        std::ostringstream diff;
        auto check = [&](const char* name, std::uint64_t want, std::uint64_t got) {
            if (want != got) diff << " " << name << " json=" << want << " decoded=" << got;
        };
        check("packets", e.packets, a.packets);
        check("bytes", e.bytes, a.bytes);
        if (c.reverseCounters) {
            check("packets_rev", e.packetsRev, a.packetsRev);
            check("bytes_rev", e.bytesRev, a.bytesRev);
        }
        if (c.flags) check("tcp_flags", e.tcpFlags, a.tcpFlags);
        if (c.reverseFlags) check("tcp_flags_rev", e.tcpFlagsRev, a.tcpFlagsRev);
        // Both sides truncated to the decoder's unit (a decoder that prints ns digits for a µs
        // element shows the encoding's sub-µs offset, which is not part of the value).
        const std::uint64_t u = c.timeUnitNs;
        check("time_first", e.timeFirstNs / u * u, a.timeFirstNs / u * u);
        check("time_last", e.timeLastNs / u * u, a.timeLastNs / u * u);
        if (!diff.str().empty()) {
            ++wrong;
            if (reported++ < 5) {
                ADD_FAILURE() << decoder << ": flow " << e.srcIp << ":" << e.srcPort << " -> "
                              << e.dstIp << ":" << e.dstPort << ":" << diff.str();
            }
        }
    }
    EXPECT_EQ(missing, 0U) << decoder << ": flows missing";
    EXPECT_EQ(wrong, 0U) << decoder << ": flows with a wrong field";
}

/// The uniflow records a biflow becomes with `ipfix;uniflow` (and NetFlow v9): the forward
/// one, then, when the flow has reverse packets, the reverse one with addresses and ports
/// swapped and the reverse counters and flags in the forward fields. Both carry the biflow's
/// times.
inline std::vector<Flow> uniflowsOf(const std::vector<Flow>& biflows) {
    std::vector<Flow> out;
    for (const Flow& b : biflows) {
        Flow f = b;
        f.packetsRev = f.bytesRev = f.tcpFlagsRev = 0;
        out.push_back(f);
        if (b.packetsRev == 0) continue;
        Flow r = f;
        r.srcIp = b.dstIp;
        r.dstIp = b.srcIp;
        r.srcPort = b.dstPort;
        r.dstPort = b.srcPort;
        r.packets = b.packetsRev;
        r.bytes = b.bytesRev;
        r.tcpFlags = b.tcpFlagsRev;
        out.push_back(r);
    }
    return out;
}

/// Full path of `tool` on PATH, or empty.
inline std::string findTool(const std::string& tool) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const auto p = std::filesystem::path(dir) / tool;
        if (::access(p.c_str(), X_OK) == 0) return p;
    }
    return {};
}

#define ROWPROBE_REQUIRE_TOOL(tool, package)                                     \
    do {                                                                         \
        if (::rowprobe::test::interop::findTool(tool).empty())                   \
            GTEST_SKIP() << tool << " not installed (Debian package " << package \
                         << "; scripts/setup.sh installs it)";                   \
    } while (0)

#define ROWPROBE_REQUIRE_BINARY()                                                                \
    do {                                                                                         \
        if (!std::filesystem::exists(::rowprobe::test::rowprobeBinary()))                        \
            GTEST_SKIP() << "rowprobe binary not built: " << ::rowprobe::test::rowprobeBinary(); \
    } while (0)

/// `ipfixDump --data` text as flow records: each "--- data record N ---" block's
/// "(PEN/ID) name : value" lines as a map "PEN/ID" (or "ID") -> value text. RFC 5610 type
/// records (the options template 256 that describes enterprise elements) are not flows and are
/// left out; lines after a "---"/"***" header that is not a data record are ignored.
inline std::vector<std::map<std::string, std::string>> ipfixDumpRecords(const std::string& text) {
    std::vector<std::map<std::string, std::string>> out;
    std::istringstream in(text);
    bool inRecord = false;
    bool typeRecord = false;
    for (std::string l; std::getline(in, l);) {
        if (l.rfind("--- data record", 0) == 0) {
            if (typeRecord) out.pop_back();
            typeRecord = false;
            out.emplace_back();
            inRecord = true;
            continue;
        }
        if (l.rfind("---", 0) == 0 || l.rfind("***", 0) == 0) {
            inRecord = false;
            continue;
        }
        if (!inRecord) continue;
        if (l.find("tid:   256 (0x0100)") != std::string::npos) typeRecord = true;
        const auto open = l.find('(');
        const auto close = l.find(')');
        const auto colon = l.find(" : ");
        if (open == std::string::npos || close == std::string::npos || colon == std::string::npos ||
            close > colon)
            continue;
        out.back()[l.substr(open + 1, close - open - 1)] = l.substr(colon + 3);
    }
    if (typeRecord) out.pop_back();
    return out;
}

inline const std::string kStorage = "cache;seed=1";

/// Runs rowprobe with `-i input -s storage -o output`; fails the test on a non-zero exit.
inline CommandResult runRowprobe(const std::string& input, const std::string& output,
                                 std::vector<std::string> extra = {},
                                 const std::string& storage = kStorage) {
    std::vector<std::string> argv = {
        rowprobeBinary().string(), "-i", input, "-s", storage, "-o", output, "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandResult r = runCommand(argv, 300);
    EXPECT_EQ(r.exitCode, 0) << "rowprobe -o '" << output << "' failed:\n" << r.err;
    return r;
}

/// The reference flows of `pcap`: rowprobe's json output with the same storage options.
inline std::vector<Flow> referenceFlows(const std::filesystem::path& pcap,
                                        const std::string& storage = kStorage) {
    const auto r = runRowprobe("pcap;file=" + pcap.string(), "json", {}, storage);
    return flowsFromJson(r.out);
}

/// The captures the interop tests run on: the synthetic 10k-flow trace (all its flows) and a
/// small capture of the project's own.
struct Capture {
    std::string name;
    std::filesystem::path path() const {
        if (name == "synth10k") return synth10kPcap();
        // "dir/name": a capture of the third-party test data (read in place).
        if (name.find('/') != std::string::npos) return testdataDir() / (name + ".pcap");
        return sourceDir() / "pcaps" / (name + ".pcap");
    }
};
inline std::string captureName(const ::testing::TestParamInfo<Capture>& info) {
    return info.param.name;
}
inline void PrintTo(const Capture& c, std::ostream* os) { *os << c.name; }

#define ROWPROBE_REQUIRE_CAPTURE(capture)                                           \
    do {                                                                            \
        if ((capture).path().empty() || !std::filesystem::exists((capture).path())) \
            GTEST_SKIP() << "capture '" << (capture).name << "' not available";     \
    } while (0)

/// The messages of an IPFIX file as UDP datagrams to port 4739 in a pcap (what a capture on the
/// collector's interface would hold), for tshark.
inline void writeIpfixFileAsUdpPcap(const std::vector<std::uint8_t>& ipfix,
                                    const std::filesystem::path& pcap) {
    std::ofstream out(pcap, std::ios::binary);
    auto put = [&](const void* p, std::size_t n) { out.write(static_cast<const char*>(p), n); };
    const std::uint32_t global[] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
    put(global, sizeof global);
    for (std::size_t at = 0; at + 16 <= ipfix.size();) {
        const std::size_t len = std::size_t{ipfix[at + 2]} << 8 | ipfix[at + 3];
        if (len < 16 || at + len > ipfix.size()) break;
        std::vector<std::uint8_t> pkt(14 + 20 + 8, 0);
        pkt[12] = 0x08;  // IPv4
        const std::size_t ipLen = 20 + 8 + len;
        const std::uint8_t ip[20] = {0x45,
                                     0,
                                     static_cast<std::uint8_t>(ipLen >> 8),
                                     static_cast<std::uint8_t>(ipLen),
                                     0,
                                     0,
                                     0,
                                     0,
                                     64,
                                     17,
                                     0,
                                     0,
                                     127,
                                     0,
                                     0,
                                     1,
                                     127,
                                     0,
                                     0,
                                     1};
        std::copy(std::begin(ip), std::end(ip), pkt.begin() + 14);
        const std::size_t udpLen = 8 + len;
        const std::uint8_t udp[8] = {0x9c,
                                     0x40,
                                     0x12,
                                     0x83,
                                     static_cast<std::uint8_t>(udpLen >> 8),
                                     static_cast<std::uint8_t>(udpLen),
                                     0,
                                     0};  // 40000 -> 4739
        std::copy(std::begin(udp), std::end(udp), pkt.begin() + 34);
        pkt.insert(pkt.end(), ipfix.begin() + static_cast<std::ptrdiff_t>(at),
                   ipfix.begin() + static_cast<std::ptrdiff_t>(at + len));
        const std::uint32_t rec[] = {1700000000, 0, static_cast<std::uint32_t>(pkt.size()),
                                     static_cast<std::uint32_t>(pkt.size())};
        put(rec, sizeof rec);
        put(pkt.data(), pkt.size());
        at += len;
    }
}

/// A child process whose stdin is a pipe the test writes to (a capture fed at the test's pace).
class PipedChild {
public:
    explicit PipedChild(const std::vector<std::string>& argv,
                        const std::filesystem::path& errFile) {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe");
        m_pid = ::fork();
        if (m_pid == 0) {
            ::dup2(fds[0], 0);
            ::close(fds[0]);
            ::close(fds[1]);
            const int err = ::open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(err, 1);
            ::dup2(err, 2);
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        ::close(fds[0]);
        m_stdin = fds[1];
    }
    ~PipedChild() {
        closeInput();
        if (m_pid > 0 && !m_reaped) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
    }
    bool write(const std::uint8_t* data, std::size_t n) {
        while (n > 0) {
            const ssize_t w = ::write(m_stdin, data, n);
            if (w <= 0) return false;
            data += w;
            n -= static_cast<std::size_t>(w);
        }
        return true;
    }
    void closeInput() {
        if (m_stdin >= 0) ::close(m_stdin);
        m_stdin = -1;
    }
    /// Exit code, or -1 if still running after `seconds`.
    int wait(double seconds) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (std::chrono::steady_clock::now() < end) {
            int status = 0;
            if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
                m_reaped = true;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }

private:
    pid_t m_pid = -1;
    int m_stdin = -1;
    bool m_reaped = false;
};

}  // namespace rowprobe::test::interop
