// Decoding the records real collectors and dissectors stored (tshark fields, nfdump's json),
// shared by the interop tests of the ipfix and netflow9 outputs.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../unit/output/ipfix_test_decoder.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {

namespace fs = std::filesystem;
namespace dec = rowprobe::test::ipfix;

/// Writes received datagrams into a pcap as UDP/IPv4 frames to `port` (what a capture on the
/// loopback interface would contain), for tshark.
inline void writeUdpPcap(const fs::path& path,
                         const std::vector<std::vector<std::uint8_t>>& datagrams,
                         std::uint16_t port) {
    PcapWriter w(path, true);
    std::uint64_t ts = 1700000000ULL * 1'000'000'000ULL;
    for (const auto& d : datagrams) {
        std::vector<std::uint8_t> f(14 + 20 + 8 + d.size(), 0);
        f[12] = 0x08;  // IPv4
        std::uint8_t* ip = f.data() + 14;
        const std::size_t ipLen = 20 + 8 + d.size();
        ip[0] = 0x45;
        ip[2] = static_cast<std::uint8_t>(ipLen >> 8);
        ip[3] = static_cast<std::uint8_t>(ipLen);
        ip[8] = 64;
        ip[9] = 17;
        ip[12] = 127;
        ip[15] = 1;
        ip[16] = 127;
        ip[19] = 1;
        std::uint8_t* udp = ip + 20;
        udp[0] = 0x9c;  // source port 40000
        udp[1] = 0x40;
        udp[2] = static_cast<std::uint8_t>(port >> 8);
        udp[3] = static_cast<std::uint8_t>(port);
        udp[4] = static_cast<std::uint8_t>((8 + d.size()) >> 8);
        udp[5] = static_cast<std::uint8_t>(8 + d.size());
        std::copy(d.begin(), d.end(), udp + 8);
        w.write(ts, f);
        ts += 1000;
    }
}

inline std::vector<std::string> splitOn(const std::string& s, char sep) {
    std::vector<std::string> out;
    if (s.empty()) return out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t e = s.find(sep, pos);
        out.push_back(s.substr(pos, e == std::string::npos ? std::string::npos : e - pos));
        if (e == std::string::npos) return out;
        pos = e + 1;
    }
}

/// "Nov 14, 2023 22:13:20.007300000 UTC" -> ns since the epoch.
inline std::uint64_t tsharkTime(const std::string& text) {
    static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::tm tm{};
    int month = 0;
    for (; month < 12 && text.compare(0, 3, kMonths[month]) != 0; ++month) {
    }
    tm.tm_mon = month;
    unsigned long frac = 0;
    char fracText[16] = {};
    std::sscanf(text.c_str() + 4, "%d, %d %d:%d:%d.%15[0-9]", &tm.tm_mday, &tm.tm_year, &tm.tm_hour,
                &tm.tm_min, &tm.tm_sec, fracText);
    tm.tm_year -= 1900;
    std::string digits(fracText);
    digits.resize(9, '0');
    frac = std::stoul(digits);
    return static_cast<std::uint64_t>(timegm(&tm)) * 1'000'000'000ULL + frac;
}

/// Runs `tshark -T fields` on a capture of flow-export datagrams sent to `port` (decoded as
/// cflow, plus `extra` options) and returns, per packet, every occurrence of each field in
/// order; packets with fewer columns than `fields` are left out.
inline std::vector<std::vector<std::vector<std::string>>> tsharkCflowColumns(
    const fs::path& pcap, std::uint16_t port, const std::vector<std::string>& fields,
    const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {"tshark", "-r", pcap.string(), "-d",
                                     "udp.port==" + std::to_string(port) + ",cflow"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char* a :
         {"-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|", "-E", "separator=/t"}) {
        argv.emplace_back(a);
    }
    for (const auto& f : fields) {
        argv.push_back("-e");
        argv.push_back(f);
    }
    ::setenv("TZ", "UTC", 1);
    const auto r = runCommand(argv, 300);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::vector<std::vector<std::vector<std::string>>> packets;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        const auto cols = splitOn(line, '\t');
        if (cols.size() < fields.size()) continue;
        std::vector<std::vector<std::string>> v;
        for (const auto& c : cols) v.push_back(splitOn(c, '|'));
        packets.push_back(std::move(v));
    }
    return packets;
}

/// Decodes the capture with `tshark -T fields`: per packet, every occurrence of each field in
/// order. Flows are rebuilt by walking ip_version (addresses come from the v4 or v6 list) and
/// taking counters in (forward, reverse) pairs, or one per record for uniflow templates.
inline std::vector<Flow> tsharkFlows(const fs::path& pcap, std::uint16_t port,
                                     bool uniflow = false) {
    const std::vector<std::string> fields = {
        "cflow.ip_version", "cflow.srcaddr", "cflow.dstaddr",  "cflow.srcaddrv6",
        "cflow.dstaddrv6",  "cflow.srcport", "cflow.dstport",  "cflow.protocol",
        "cflow.packets",    "cflow.octets",  "cflow.tcpflags", "cflow.abstimestart",
        "cflow.abstimeend"};
    std::vector<Flow> out;
    for (const auto& v :
         tsharkCflowColumns(pcap, port, fields, {"-o", "cflow.max_template_fields:0"})) {
        std::size_t i4 = 0;
        std::size_t i6 = 0;
        for (std::size_t i = 0; i < v[0].size(); ++i) {
            Flow f;
            if (v[0][i] == "6") {
                f.srcIp = canonicalIp(v[3].at(i6));
                f.dstIp = canonicalIp(v[4].at(i6++));
            } else {
                f.srcIp = canonicalIp(v[1].at(i4));
                f.dstIp = canonicalIp(v[2].at(i4++));
            }
            f.srcPort = toU64(v[5].at(i));
            f.dstPort = toU64(v[6].at(i));
            f.proto = toU64(v[7].at(i));
            if (uniflow) {
                f.packets = toU64(v[8].at(i));
                f.bytes = toU64(v[9].at(i));
                f.tcpFlags = toU64(v[10].at(i));
            } else {
                f.packets = toU64(v[8].at(2 * i));
                f.packetsRev = toU64(v[8].at(2 * i + 1));
                f.bytes = toU64(v[9].at(2 * i));
                f.bytesRev = toU64(v[9].at(2 * i + 1));
                f.tcpFlags = toU64(v[10].at(2 * i));
                f.tcpFlagsRev = toU64(v[10].at(2 * i + 1));
            }
            f.timeFirstNs = tsharkTime(v[11].at(i));
            f.timeLastNs = tsharkTime(v[12].at(i));
            out.push_back(f);
        }
    }
    return out;
}

/// nfcapd listening on a free loopback port (freeLoopbackPort) and writing into
/// tempDir()/nfcapd-NAME, with a receive buffer of `buffer` bytes (-B; 0: its default).
struct Nfcapd {
    fs::path dir;
    std::uint16_t port = 0;
    std::unique_ptr<ChildProcess> child;

    Nfcapd(const std::string& name, std::size_t buffer) {
        dir = tempDir() / ("nfcapd-" + name);
        fs::remove_all(dir);
        fs::create_directories(dir);
        // A port found free can still be bound by another test's collector before nfcapd binds
        // it; nfcapd then exits at start-up and a new port is tried, at most three times. It
        // counts as listening only once its own process holds the port's socket.
        ::testing::AssertionResult started = ::testing::AssertionFailure();
        for (int attempt = 0; attempt < 3 && !started; ++attempt) {
            port = freeLoopbackPort(SOCK_DGRAM);
            std::vector<std::string> argv = {
                findTool("nfcapd"), "-b", "127.0.0.1", "-p", std::to_string(port), "-w",
                dir.string(),       "-t", "3600"};
            if (buffer != 0) {
                argv.push_back("-B");
                argv.push_back(std::to_string(buffer));
            }
            child = std::make_unique<ChildProcess>(argv);
            started = listening();
            if (!started && child->running()) break;
        }
        EXPECT_TRUE(started);
    }
    /// Waits until nfcapd listens or exits; on a loaded machine its start takes seconds.
    ::testing::AssertionResult listening() {
        const auto bound = [&] { return udpPortBoundBy(child->pid(), port); };
        if (dec::waitUntil([&] { return bound() || !child->running(); }, 60) && bound())
            return ::testing::AssertionSuccess();
        if (child->running())
            return ::testing::AssertionFailure() << "nfcapd not listening after 60 s";
        const CommandResult r = child->wait(1);
        return ::testing::AssertionFailure()
               << "nfcapd exited (" << r.exitCode << ") without listening: " << r.err << r.out;
    }
    /// Stops nfcapd (it writes its file) and returns its log.
    std::string stop() {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        child->signal(SIGTERM);
        const auto r = child->wait(20);
        EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
        return r.out + r.err;
    }
};

/// Datagrams received until none arrived for 300 ms.
inline std::vector<std::vector<std::uint8_t>> settledDatagrams(const dec::UdpCollector& collector) {
    std::size_t last = 0;
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const std::size_t now = collector.datagrams().size();
        if (now == last) return collector.datagrams();
        last = now;
    }
}

/// nfdump's "...A.R.." (CWR ECE URG ACK PSH RST SYN FIN) as bits.
inline std::uint64_t nfdumpFlags(const std::string& s) {
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < s.size() && i < 8; ++i) {
        if (s[i] != '.') bits |= 1U << (7 - i);
    }
    return bits;
}

/// The flows nfcapd stored in `dir`, read back with `nfdump -o json`. Biflows (`uniflow`
/// false): nfdump's out_packets / out_bytes are the reverse counters and its one flags field
/// holds the reverse flags (see NfcapdReceivesEveryFlowOverUdp); uniflows: the flags are the
/// record's own.
inline std::vector<Flow> nfdumpFlows(const fs::path& dir, bool uniflow) {
    const auto dump = runCommand({"nfdump", "-R", dir.string(), "-o", "json"}, 300);
    EXPECT_EQ(dump.exitCode, 0) << dump.err;
    const JsonObject all = parseJsonFlat(dump.out);
    std::vector<Flow> decoded;
    for (std::size_t i = 0;; ++i) {
        const std::string p = std::to_string(i) + ".";
        auto get = [&](const std::string& k) -> std::string {
            auto it = all.find(p + k);
            return it == all.end() ? std::string() : it->second;
        };
        if (get("type").empty()) break;
        Flow f;
        f.srcIp = canonicalIp(get("src4_addr").empty() ? get("src6_addr") : get("src4_addr"));
        f.dstIp = canonicalIp(get("dst4_addr").empty() ? get("dst6_addr") : get("dst4_addr"));
        f.proto = toU64(get("proto"));
        if (f.proto == 1 || f.proto == 58) {  // nfdump shows ICMP's destination port as type/code
            f.dstPort = toU64(get("icmp_type")) << 8 | toU64(get("icmp_code"));
        } else {
            f.srcPort = toU64(get("src_port"));
            f.dstPort = toU64(get("dst_port"));
        }
        f.packets = toU64(get("in_packets"));
        f.bytes = toU64(get("in_bytes"));
        f.packetsRev = toU64(get("out_packets").empty() ? "0" : get("out_packets"));
        f.bytesRev = toU64(get("out_bytes").empty() ? "0" : get("out_bytes"));
        // nfdump 1.7 has one TCP flags field and stores reverseTcpControlBits (29305/6), which
        // follows tcpControlBits in ipfixprobe's template, over it: its "flg" shows the
        // reverse direction's flags (the same happens with ipfixprobe's own output).
        if (uniflow) {
            f.tcpFlags = nfdumpFlags(get("tcp_flags"));
        } else {
            f.tcpFlagsRev = nfdumpFlags(get("tcp_flags"));
        }
        f.timeFirstNs = parseTimeNs(get("first")).value_or(0);
        f.timeLastNs = parseTimeNs(get("last")).value_or(0);
        decoded.push_back(f);
    }
    return decoded;
}

}  // namespace rowprobe::test::interop
