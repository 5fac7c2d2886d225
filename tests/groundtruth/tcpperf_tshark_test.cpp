// Acceptance (issue 23, tcpperf): on the shared captures that carry TCP, `rowprobe -p tcpperf`
// agrees with Wireshark's TCP analysis as tshark prints it, flow by flow:
//
//   * handshake: tcpperf_rtt_syn_us + tcpperf_rtt_synack_us = tcp.analysis.initial_rtt
//     (Wireshark's iRTT is SYN -> the first ACK without SYN, i.e. both parts summed), to the
//     microsecond;
//   * retransmissions: tcpperf_retx_pkts (+ _rev) = the packets tshark flags
//     tcp.analysis.retransmission. Wireshark sets that flag on its generic, fast and spurious
//     retransmissions alike (not on out-of-order segments), so all three are counted; within
//     one packet per flow, per direction and in total;
//   * duplicate ACKs, zero windows and out-of-order segments (tcpperf_dup_acks, _zero_win,
//     _ooo_pkts) = tcp.analysis.duplicate_ack / zero_window / out_of_order, exactly;
//   * tcpperf_mss / tcpperf_wscale = tcp.options.mss_val / tcp.options.wscale.shift of the
//     direction's SYN (shifts above 14 count as 14, RFC 7323), exactly.
//
// tshark (`-T fields`, the last occurrence of each field, so ICMP errors quoting a TCP header
// are left out by the display filter) gives one row per packet with its tcp.stream; streams
// are joined to rowprobe's flows by their unordered address/port pair (the capture is run with
// day-long timeouts, so a connection is one flow), pairing by order of first packet when a
// pair of ports was used more than once. Named exclusions (README.md, "Checked against
// tshark"): a stream whose SYN-ACK is not in the capture has a tshark iRTT (from the SYN and
// the first ACK) but no rowprobe handshake RTT; a port pair whose streams and flows do not
// pair one to one (port reuse that tshark and the flow table cut differently) is left out;
// captures whose TCP travels in tunnels rowprobe does not open by default are not run. Every
// exclusion is counted in the printed agreement; any other flow outside the tolerance fails.
// Bounded: tshark and rowprobe take about 1 s each on the largest capture (bench/tumblr).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

struct Stream {
    std::string firstSrc;  // "addr|port" of its first packet
    std::string key;       // unordered
    double first = 0;
    bool synAck = false;
    bool hasIrtt = false;
    std::int64_t irttUs = 0;
    std::array<std::uint64_t, 2> retx{};  // [0]: sent by firstSrc
    std::array<std::uint64_t, 2> dupAck{}, zeroWin{}, ooo{};
    std::array<std::uint64_t, 2> mss{};             // of the direction's SYN, 0 = none
    std::array<std::uint64_t, 2> wscale{255, 255};  // 255 = no option
};

std::string endpoint(const std::string& ip, const std::string& port) {
    return canonicalIp(ip) + '|' + port;
}
std::string unordered(const std::string& a, const std::string& b) {
    return a < b ? a + '|' + b : b + '|' + a;
}

std::vector<std::string> splitTabs(const std::string& line) {
    std::vector<std::string> f;
    std::string cur;
    for (const char c : line) {
        if (c == '\t') {
            f.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    f.push_back(cur);
    return f;
}

// tshark's view of every TCP stream of `pcap`, in stream order.
std::vector<Stream> tsharkStreams(const fs::path& pcap, std::string& error) {
    const CommandResult r = runCommand({"tshark", "-n",
                                        "-r",     pcap.string(),
                                        "-Y",     "tcp && !icmp && !icmpv6",
                                        "-T",     "fields",
                                        "-E",     "occurrence=l",
                                        "-E",     "separator=/t",
                                        "-e",     "tcp.stream",
                                        "-e",     "ip.src",
                                        "-e",     "ipv6.src",
                                        "-e",     "tcp.srcport",
                                        "-e",     "ip.dst",
                                        "-e",     "ipv6.dst",
                                        "-e",     "tcp.dstport",
                                        "-e",     "frame.time_epoch",
                                        "-e",     "tcp.flags.syn",
                                        "-e",     "tcp.flags.ack",
                                        "-e",     "tcp.analysis.initial_rtt",
                                        "-e",     "tcp.analysis.retransmission",
                                        "-e",     "tcp.analysis.duplicate_ack",
                                        "-e",     "tcp.analysis.zero_window",
                                        "-e",     "tcp.analysis.out_of_order",
                                        "-e",     "tcp.options.mss_val",
                                        "-e",     "tcp.options.wscale.shift"},
                                       300);
    std::map<std::uint64_t, Stream> byId;
    if (r.exitCode != 0) {
        error = "tshark failed: " + r.err;
        return {};
    }
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        const auto f = splitTabs(line);
        if (f.size() < 17 || f[0].empty()) continue;
        const std::uint64_t id = std::stoull(f[0]);
        const std::string src = endpoint(f[1].empty() ? f[2] : f[1], f[3]);
        const std::string dst = endpoint(f[4].empty() ? f[5] : f[4], f[6]);
        auto [it, fresh] = byId.try_emplace(id);
        Stream& s = it->second;
        if (fresh) {
            s.firstSrc = src;
            s.key = unordered(src, dst);
            s.first = std::strtod(f[7].c_str(), nullptr);
        }
        const bool syn = f[8] == "1" || f[8] == "True";
        const bool ack = f[9] == "1" || f[9] == "True";
        if (syn && ack) s.synAck = true;
        if (!s.hasIrtt && !f[10].empty()) {
            s.hasIrtt = true;
            s.irttUs = std::llround(std::strtod(f[10].c_str(), nullptr) * 1e6);
        }
        const std::size_t d = src == s.firstSrc ? 0 : 1;
        if (!f[11].empty()) ++s.retx[d];
        if (!f[12].empty()) ++s.dupAck[d];
        if (!f[13].empty()) ++s.zeroWin[d];
        if (!f[14].empty()) ++s.ooo[d];
        if (syn && !f[15].empty()) s.mss[d] = std::stoull(f[15]);
        if (syn && !f[16].empty()) s.wscale[d] = std::min<std::uint64_t>(std::stoull(f[16]), 14);
    }
    std::vector<Stream> out;
    out.reserve(byId.size());
    for (auto& [id, s] : byId) out.push_back(s);
    return out;
}

struct Agreement {
    std::size_t streams = 0, joined = 0, unpaired = 0;
    std::size_t irttCompared = 0, irttEqual = 0, irttNoSynAck = 0;
    std::size_t retxEqual = 0, retxWithinOne = 0;
    std::uint64_t retxTshark = 0, retxOurs = 0;
    std::size_t eventsEqual = 0;  ///< duplicate ACKs, zero windows, out-of-order all equal
    std::uint64_t dupAcks = 0, zeroWins = 0, ooos = 0;  ///< tshark's totals
    std::vector<std::string> failures;
};

std::uint64_t num(const JsonObject& f, const char* k) {
    return parseUint(flowValue(f, k)).value_or(0);
}

Agreement compare(const fs::path& pcap) {
    Agreement a;
    std::string error;
    const std::vector<Stream> streams = tsharkStreams(pcap, error);
    if (!error.empty()) {
        a.failures.push_back(error);
        return a;
    }
    const ProbeRun run =
        runProbe(pcap, {"-p", "tcpperf"}, "cache;seed=1;inactive=86400;active=86400");
    if (run.result.exitCode != 0 || !run.error.empty()) {
        a.failures.push_back(run.commandLine + ": " + run.result.err + run.error);
        return a;
    }
    std::map<std::string, std::vector<const JsonObject*>> flows;
    for (const JsonObject& f : run.flows) {
        if (flowValue(f, "proto") != "6") continue;
        flows[unordered(endpoint(flowValue(f, "src_ip"), flowValue(f, "src_port")),
                        endpoint(flowValue(f, "dst_ip"), flowValue(f, "dst_port")))]
            .push_back(&f);
    }
    std::map<std::string, std::vector<const Stream*>> byKey;
    for (const Stream& s : streams) byKey[s.key].push_back(&s);
    a.streams = streams.size();
    for (auto& [key, ss] : byKey) {
        auto it = flows.find(key);
        if (it == flows.end() || it->second.size() != ss.size()) {
            a.unpaired += ss.size();
            continue;
        }
        auto& fs = it->second;
        std::sort(fs.begin(), fs.end(), [](const JsonObject* x, const JsonObject* y) {
            return flowValue(*x, "time_first") < flowValue(*y, "time_first");
        });
        for (std::size_t i = 0; i < ss.size(); ++i) {
            const Stream& s = *ss[i];
            const JsonObject& f = *fs[i];
            ++a.joined;
            const std::string what = pcap.filename().string() + " " + key;
            // directions: rowprobe's forward is the flow's src
            const bool same =
                endpoint(flowValue(f, "src_ip"), flowValue(f, "src_port")) == s.firstSrc;
            const std::uint64_t ours0 =
                num(f, same ? "tcpperf_retx_pkts" : "tcpperf_retx_pkts_rev");
            const std::uint64_t ours1 =
                num(f, same ? "tcpperf_retx_pkts_rev" : "tcpperf_retx_pkts");
            const auto diff = [](std::uint64_t x, std::uint64_t y) {
                return x > y ? x - y : y - x;
            };
            const std::uint64_t theirs = s.retx[0] + s.retx[1];
            a.retxTshark += theirs;
            a.retxOurs += ours0 + ours1;
            if (ours0 == s.retx[0] && ours1 == s.retx[1]) ++a.retxEqual;
            if (diff(ours0, s.retx[0]) <= 1 && diff(ours1, s.retx[1]) <= 1 &&
                diff(ours0 + ours1, theirs) <= 1) {
                ++a.retxWithinOne;
            } else {
                a.failures.push_back(what + ": retransmissions tshark " +
                                     std::to_string(s.retx[0]) + "/" + std::to_string(s.retx[1]) +
                                     ", rowprobe " + std::to_string(ours0) + "/" +
                                     std::to_string(ours1));
            }
            // duplicate ACKs, zero windows, out-of-order (the same rules), MSS and window scale
            bool events = true;
            const std::pair<const char*, const std::array<std::uint64_t, 2>*> counters[] = {
                {"tcpperf_dup_acks", &s.dupAck},
                {"tcpperf_zero_win", &s.zeroWin},
                {"tcpperf_ooo_pkts", &s.ooo},
                {"tcpperf_mss", &s.mss},
                {"tcpperf_wscale", &s.wscale}};
            for (const auto& [name, theirsPerDir] : counters) {
                const std::string fwdKey = name;
                const std::string revKey = fwdKey + "_rev";
                const std::uint64_t o0 = num(f, (same ? fwdKey : revKey).c_str());
                const std::uint64_t o1 = num(f, (same ? revKey : fwdKey).c_str());
                if (o0 != (*theirsPerDir)[0] || o1 != (*theirsPerDir)[1]) {
                    events = false;
                    a.failures.push_back(what + ": " + fwdKey + " tshark " +
                                         std::to_string((*theirsPerDir)[0]) + "/" +
                                         std::to_string((*theirsPerDir)[1]) + ", rowprobe " +
                                         std::to_string(o0) + "/" + std::to_string(o1));
                }
            }
            if (events) ++a.eventsEqual;
            a.dupAcks += s.dupAck[0] + s.dupAck[1];
            a.zeroWins += s.zeroWin[0] + s.zeroWin[1];
            a.ooos += s.ooo[0] + s.ooo[1];
            // 0 = not measured on both sides (Wireshark keeps a zero iRTT as "none" too)
            const std::uint64_t syn = num(f, "tcpperf_rtt_syn_us");
            const std::uint64_t synAck = num(f, "tcpperf_rtt_synack_us");
            const auto sum = static_cast<std::int64_t>(syn + synAck);
            if (s.hasIrtt && !s.synAck) {
                ++a.irttNoSynAck;  // exclusion: no SYN-ACK in the capture
                continue;
            }
            // no ACK after the SYN-ACK: tshark has no iRTT, rowprobe only the first half
            if (!s.hasIrtt && synAck == 0) continue;
            ++a.irttCompared;
            if (s.hasIrtt && std::llabs(sum - s.irttUs) <= 1) {
                ++a.irttEqual;
            } else {
                a.failures.push_back(what + ": handshake RTT tshark " +
                                     (s.hasIrtt ? std::to_string(s.irttUs) : "-") +
                                     " us, rowprobe " + std::to_string(syn) + " + " +
                                     std::to_string(synAck) + " us");
            }
        }
    }
    return a;
}

class TcpperfTshark : public ::testing::TestWithParam<std::string> {};

TEST_P(TcpperfTshark, HandshakeRttAndRetransmissionsAgreeWithTshark) {
    ROWPROBE_REQUIRE_BINARY();
    if (runCommand({"tshark", "--version"}).exitCode != 0) GTEST_SKIP() << "tshark not installed";
    const fs::path pcap = testdataDir() / GetParam();
    ROWPROBE_REQUIRE_FILE(pcap);
    const Agreement a = compare(pcap);
    std::cout << GetParam() << ": " << a.streams << " tshark streams, " << a.joined << " joined ("
              << a.unpaired << " unpaired: port reuse cut differently); "
              << "handshake RTT equal " << a.irttEqual << "/" << a.irttCompared << " ("
              << a.irttNoSynAck << " without SYN-ACK in the capture); retransmissions equal "
              << a.retxEqual << "/" << a.joined << ", within one " << a.retxWithinOne << "/"
              << a.joined << " (tshark " << a.retxTshark << ", rowprobe " << a.retxOurs
              << " packets); duplicate ACKs, zero windows and out-of-order equal " << a.eventsEqual
              << "/" << a.joined << " (tshark " << a.dupAcks << ", " << a.zeroWins << ", " << a.ooos
              << ")\n";
    for (const std::string& f : a.failures) ADD_FAILURE() << f;
    EXPECT_GT(a.joined, 0U);
}

// Every shared capture with TCP that rowprobe opens without tunnel options (the tunnelled ones
// -- 6in4, Teredo, AYIYA, GTP, GRE, VXLAN -- are left out: tshark analyses their inner TCP).
INSTANTIATE_TEST_SUITE_P(
    Captures, TcpperfTshark,
    ::testing::Values(
        "bench/netflix.pcap", "bench/reddit.pcap", "bench/tumblr.pcap", "bench/zoom2.pcap",
        "ndpi-4.2/pcap/1kxun.pcap", "ndpi-4.2/pcap/exe_download.pcap", "ndpi-4.2/pcap/ftp.pcap",
        "ndpi-4.2/pcap/google_ssl.pcap", "ndpi-4.2/pcap/googledns_android10.pcap",
        "ndpi-4.2/pcap/http_ipv6.pcap", "ndpi-4.2/pcap/http-lines-split.pcap",
        "ndpi-4.2/pcap/mqtt.pcap", "ndpi-4.2/pcap/smtp.pcap", "ndpi-4.2/pcap/ssh.pcap",
        "ndpi-4.2/pcap/tls_alert.pcap", "zeek/Traces/ftp/ipv4.pcap", "zeek/Traces/ftp/ipv6.pcap",
        "zeek/Traces/http/concurrent-range-requests.pcap", "zeek/Traces/irc-dcc-send.pcapng",
        "zeek/Traces/mixed-vlan-mpls.pcap", "zeek/Traces/modbus/modbus-and-non-modbus-p502.pcap",
        "zeek/Traces/pop3/pop3.pcap", "zeek/Traces/ssh/ssh.pcap",
        "zeek/Traces/tcp/missing-syn.pcap", "zeek/Traces/wikipedia.pcap",
        "flowtest/pcap/http_404.pcap", "flowtest/pcap/http_get.pcap",
        "flowtest/pcap/http_post.pcap", "flowtest/pcap/ipv6-smtp.pcap", "flowtest/pcap/ovpn.pcap",
        "flowtest/pcap/tls12.pcap", "flowtest/pcap/tls12_alpn.pcap", "flowtest/pcap/tls13.pcap",
        "ipfixprobe/inputs/idpcontent.pcap", "ipfixprobe/inputs/rtsp.pcap",
        "ipfixprobe/inputs/smtp.pcap", "ipfixprobe/inputs/tls.pcap",
        "suricata-verify/app-layer-template/input.pcap",
        "suricata-verify/base64-issue-5223/input.pcap", "suricata-verify/bug-2646-01/input.pcap",
        "suricata-verify/bug-2646-02/input.pcap", "suricata-verify/bug-78-uricontent/input.pcap",
        "suricata-verify/bug-814/input.pcap", "suricata-verify/community-id-ipv6/input.pcap",
        "suricata-verify/imap-detection/input.pcap",
        "suricata-verify/pgsql/pgsql-upgrade-tls/input.pcap"),
    [](const auto& param) {
        std::string n = param.param;
        for (char& c : n)
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        return n;
    });

}  // namespace
}  // namespace rowprobe::test
