// Running ipfixprobe itself on a capture a test generated, for the values ipfixprobe defines
// (issue 21: the field items are compared with ipfixprobe's output). Header-only: the test
// folders compile only *_test.cpp files.
//
// The binary: $IPFIXPROBE, else ~/.cache/rowprobe-peers/ipfixprobe (where scripts/bench-peers.sh
// expects ipfixprobe 5.7); its plugin libraries: $IPFIXPROBE_PLUGINS, else the folder
// `<binary>-plugins` beside it when that exists, else the binary's built-in path. Tests skip
// when there is no binary.
//
// ipfixprobe runs with `-o text`, whose lines read
//   SRC_MAC->DST_MAC PROTO@SRC_IP:SRC_PORT->DST_IP:DST_PORT PKTS->PKTS_REV BYTES->BYTES_REV
//   FLAGS->FLAGS_REV TIME_FIRST->TIME_LAST [key=value,key="text",...]
// (IPv6 addresses in brackets; the extension is the process plugin's text, present only when
// the plugin attached a record to the flow).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "flow_truth.hpp"

namespace rowprobe::test {

/// One biflow record of ipfixprobe's text output.
struct IpfixprobeFlow {
    std::string srcMac, dstMac, proto, srcIp, srcPort, dstIp, dstPort;
    std::string packets, packetsRev, bytes, bytesRev;
    std::map<std::string, std::string> ext;  ///< the first extension's fields, quotes removed
    /// Every extension in the order printed: one per plugin record (several for a plugin with
    /// several records, e.g. passivedns's answers); keys repeat across them.
    std::vector<std::map<std::string, std::string>> exts;
    std::string line;  ///< the line as printed

    std::string field(const std::string& key) const {
        const auto it = ext.find(key);
        return it == ext.end() ? std::string("(absent)") : it->second;
    }
};

/// The ipfixprobe binary to run, or an empty path.
inline std::filesystem::path ipfixprobeBinary() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("IPFIXPROBE"); env != nullptr && *env != '\0')
        return fs::path(env);
    const char* home = std::getenv("HOME");
    if (home == nullptr) return {};
    const fs::path p = fs::path(home) / ".cache/rowprobe-peers/ipfixprobe";
    return fs::is_regular_file(p) ? p : fs::path();
}

/// Skips the test when no ipfixprobe binary is there.
#define ROWPROBE_REQUIRE_IPFIXPROBE()                                                            \
    do {                                                                                         \
        if (::rowprobe::test::ipfixprobeBinary().empty() ||                                      \
            !std::filesystem::exists(::rowprobe::test::ipfixprobeBinary()))                      \
            GTEST_SKIP() << "no ipfixprobe binary ($IPFIXPROBE or "                              \
                            "~/.cache/rowprobe-peers/ipfixprobe): not compared with ipfixprobe"; \
    } while (0)

/// The extension text "a=1,b=\"x,y\",c=(0)" as a map (quotes removed, commas inside quotes
/// kept).
inline std::map<std::string, std::string> parseIpfixprobeExtension(const std::string& text) {
    std::map<std::string, std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t eq = text.find('=', i);
        if (eq == std::string::npos) break;
        std::string key = text.substr(i, eq - i);
        std::string value;
        std::size_t j = eq + 1;
        if (j < text.size() && text[j] == '"') {
            const std::size_t close = text.find('"', j + 1);
            value =
                text.substr(j + 1, close == std::string::npos ? std::string::npos : close - j - 1);
            j = close == std::string::npos ? text.size() : close + 1;
        } else {
            const std::size_t comma = text.find(',', j);
            value = text.substr(j, comma == std::string::npos ? std::string::npos : comma - j);
            j = comma == std::string::npos ? text.size() : comma;
        }
        while (!value.empty() && value.back() == ' ') value.pop_back();
        out[key] = value;
        i = j < text.size() && text[j] == ',' ? j + 1 : j;
    }
    return out;
}

/// The records of ipfixprobe's text output.
inline std::vector<IpfixprobeFlow> parseIpfixprobeText(const std::string& text) {
    static const std::regex line(
        R"(^(\S+)->(\S+)\s+(\d+)@(\S+):(\d+)->(\S+):(\d+) (\d+)->(\d+) (\d+)->(\d+) \d+->\d+ )"
        R"(\S+->\S+(?: (.*))?$)");
    const auto unbracket = [](std::string a) {
        if (a.size() >= 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
        return canonicalIp(a);
    };
    std::vector<IpfixprobeFlow> flows;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        std::smatch m;
        if (!std::regex_match(l, m, line)) continue;
        IpfixprobeFlow f;
        f.srcMac = m[1];
        f.dstMac = m[2];
        f.proto = m[3];
        f.srcIp = unbracket(m[4]);
        f.srcPort = m[5];
        f.dstIp = unbracket(m[6]);
        f.dstPort = m[7];
        f.packets = m[8];
        f.packetsRev = m[9];
        f.bytes = m[10];
        f.bytesRev = m[11];
        if (m[12].matched) {
            // Extensions are separated by a space outside quotes.
            const std::string all = m[12];
            std::size_t start = 0;
            bool quoted = false;
            for (std::size_t i = 0; i <= all.size(); ++i) {
                if (i < all.size() && all[i] == '"') quoted = !quoted;
                if (i < all.size() && (quoted || all[i] != ' ' || (i > 0 && all[i - 1] == '='))) {
                    continue;
                }
                if (i > start)
                    f.exts.push_back(parseIpfixprobeExtension(all.substr(start, i - start)));
                start = i + 1;
            }
            if (!f.exts.empty()) f.ext = f.exts.front();
        }
        f.line = l;
        flows.push_back(std::move(f));
    }
    return flows;
}

/// `ipfixprobe [-L PLUGINS] -i 'pcap;file=PCAP' [-p PLUGIN]...`, the output still to add.
inline std::vector<std::string> ipfixprobeArgv(const std::filesystem::path& pcap,
                                               const std::vector<std::string>& plugins) {
    namespace fs = std::filesystem;
    const fs::path bin = ipfixprobeBinary();
    std::vector<std::string> argv = {bin.string()};
    fs::path pluginDir;
    if (const char* env = std::getenv("IPFIXPROBE_PLUGINS"); env != nullptr && *env != '\0') {
        pluginDir = env;
    } else if (fs::is_directory(bin.string() + "-plugins")) {
        pluginDir = bin.string() + "-plugins";
    }
    if (!pluginDir.empty()) argv.insert(argv.end(), {"-L", pluginDir.string()});
    argv.insert(argv.end(), {"-i", "pcap;file=" + pcap.string()});
    for (const auto& p : plugins) argv.insert(argv.end(), {"-p", p});
    return argv;
}

/// Runs `ipfixprobe -i 'pcap;file=PCAP' [-p PLUGIN]... -o text`; fails the test when it does
/// not exit 0.
inline std::vector<IpfixprobeFlow> runIpfixprobe(const std::filesystem::path& pcap,
                                                 const std::vector<std::string>& plugins = {}) {
    std::vector<std::string> argv = ipfixprobeArgv(pcap, plugins);
    argv.insert(argv.end(), {"-o", "text"});
    const CommandResult r = runCommand(argv);
    EXPECT_EQ(r.exitCode, 0) << argv[0] << " failed on " << pcap << ":\n" << r.err;
    return parseIpfixprobeText(r.out);
}

/// Runs ipfixprobe with `-o 'ipfix;h=127.0.0.1;p=PORT;u'` into a UDP socket of the test and
/// returns what `ipfixDump --data --element-file ELEMENTS` prints for the messages received
/// (for the fields ipfixprobe exports over IPFIX only, e.g. tls's JA4). Empty when ipfixDump is
/// missing (the caller skips).
inline std::string runIpfixprobeIpfixDump(const std::filesystem::path& pcap,
                                          const std::vector<std::string>& plugins,
                                          const std::filesystem::path& elements) {
    namespace fs = std::filesystem;
    if (runShell("command -v ipfixDump >/dev/null").exitCode != 0) return {};
    const int sock = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (sock < 0 || ::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ADD_FAILURE() << "no UDP socket for ipfixprobe's IPFIX";
        if (sock >= 0) ::close(sock);
        return {};
    }
    std::vector<std::string> argv = ipfixprobeArgv(pcap, plugins);
    argv.insert(argv.end(),
                {"-o", "ipfix;h=127.0.0.1;p=" + std::to_string(ntohs(addr.sin_port)) + ";u"});
    const CommandResult r = runCommand(argv);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::string messages;
    std::vector<char> buf(65536);
    for (;;) {
        const ssize_t n = ::recv(sock, buf.data(), buf.size(), MSG_DONTWAIT);
        if (n <= 0) break;
        messages.append(buf.data(), static_cast<std::size_t>(n));
    }
    ::close(sock);
    const fs::path file = tempDir() / "ipfixprobe.ipfix";
    std::ofstream(file, std::ios::binary) << messages;
    return runCommand(
               {"ipfixDump", "--data", "--in", file.string(), "--element-file", elements.string()})
        .out;
}

/// Every record of an ipfixprobe run, one per line (for failure messages).
inline std::string describeIpfixprobe(const std::vector<IpfixprobeFlow>& flows) {
    std::string s;
    for (const auto& f : flows) s += "  ipfixprobe: " + f.line + "\n";
    return s;
}

}  // namespace rowprobe::test
