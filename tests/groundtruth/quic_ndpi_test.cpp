// Acceptance (issue 22, quic): for every QUIC flow of every capture of nDPI 4.2's test set that
// ndpiReader labels QUIC (IETF drafts, v1, v2, mvfst, Google T050/T051 and the legacy Google
// QUIC Q024-Q050 with its cleartext or Q050-encrypted CHLO), `rowprobe -p quic` exports the
// server name, the client's ALPN and the user agent that ndpiReader prints ([Hostname/SNI: ..],
// [ALPN: ..], [User-Agent: ..] of its .out file), read from ../shared/testdata/ndpi-4.2/result.
// The captures are found at run time: every `result/*.out` with a QUIC line whose pcap is
// present is compared (the shared folder holds quic-29, quic_t51 and http_ipv6 today; pointing
// ROWPROBE_TESTDATA_DIR at a folder with all 36 QUIC captures of nDPI 4.2 compares them all).
// Fields nDPI does not print must be empty on our side too; a flow nDPI labels QUIC without
// printing any of them may have no record with a parsed hello. Exceptions are named below with
// the reason nDPI is wrong, and documented in process/quic/README.md. tshark is a second
// ground truth: every flow whose first ClientHello or CHLO it decodes must have tshark's
// server name, ALPN and user agent (skipped without tshark). The IPFIX side of the
// same fields is checked by tests/interop/ipfix_plugin_interop_test.cpp; the ALPN travels in
// IPFIX inside quic_tls_ext, checked here against nDPI's ALPN.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

struct NdpiQuicFlow {
    std::string key;  // unordered "a|p|b|q"
    std::string sni, alpn, userAgent;
};

// Captures where nDPI 4.2 demonstrably misses ClientHellos: where it prints nothing and
// rowprobe prints a value, the value must equal what tshark decodes for that flow (tshark
// reassembles the CRYPTO frames itself). Explained in process/quic/README.md.
struct NdpiMiss {
    const char* capture;
    const char* reason;
};
constexpr NdpiMiss kNdpiMisses[] = {
    {"quic_frags_ch_out_of_order_same_packet_craziness.pcapng",
     "Chrome 92 sends the ClientHello's CRYPTO frames out of order inside one Initial; nDPI "
     "4.2's reassembler gives up on them and prints no hello field for 108 of the 113 flows "
     "it labels QUIC; tshark decodes all 113 ClientHellos"},
};

const NdpiMiss* missFor(const std::string& capture) {
    for (const NdpiMiss& m : kNdpiMisses)
        if (capture == m.capture) return &m;
    return nullptr;
}

// tshark's fields of the first ClientHello (or gQUIC CHLO) of each flow, per unordered flow
// key: sni, alpn (','), user agent (transport parameter 0x3129 or the CHLO's UAID).
std::map<std::string, std::array<std::string, 3>> tsharkHellos(const fs::path& pcap,
                                                               std::string& error);

std::string unorderedKey(const std::string& a, const std::string& ap, const std::string& b,
                         const std::string& bp) {
    const std::string x = canonicalIp(a) + '|' + ap;
    const std::string y = canonicalIp(b) + '|' + bp;
    return x < y ? x + '|' + y : y + '|' + x;
}

std::string hexByte(std::size_t v) {
    static constexpr char kHex[] = "0123456789abcdef";
    return {kHex[(v >> 4) & 15], kHex[v & 15]};
}

std::vector<NdpiQuicFlow> ndpiQuicFlows(const fs::path& out) {
    static const std::regex line(
        R"(^\s*\d+\s+UDP \[?([0-9a-fA-F.:]+?)\]?:(\d+) <?-> \[?([0-9a-fA-F.:]+?)\]?:(\d+) .*?\[proto: [0-9.]+/QUIC[^\]]*\])");
    static const std::regex sni(R"(\[Hostname/SNI: ([^\]]*)\])");
    static const std::regex alpn(R"(\[ALPN: ([^\]]*)\])");
    static const std::regex ua(R"(\[User-Agent: ([^\]]*)\])");
    std::vector<NdpiQuicFlow> flows;
    std::istringstream in(readFile(out));
    for (std::string l; std::getline(in, l);) {
        std::smatch m;
        if (!std::regex_search(l, m, line)) continue;
        NdpiQuicFlow f;
        f.key = unorderedKey(m[1], m[2], m[3], m[4]);
        if (std::regex_search(l, m, sni)) f.sni = m[1];
        if (std::regex_search(l, m, alpn)) {
            // ndpiReader separates the offered protocols with ';', quic_alpn with ','
            f.alpn = m[1];
            std::replace(f.alpn.begin(), f.alpn.end(), ';', ',');
        }
        if (std::regex_search(l, m, ua)) f.userAgent = m[1];
        flows.push_back(f);
    }
    return flows;
}

std::map<std::string, std::array<std::string, 3>> tsharkHellos(const fs::path& pcap,
                                                               std::string& error) {
    std::map<std::string, std::array<std::string, 3>> hellos;
    const CommandResult r = runCommand({"tshark",
                                        "-r",
                                        pcap.string(),
                                        "-Y",
                                        "tls.handshake.type == 1 || gquic.tag.sni",
                                        "-T",
                                        "fields",
                                        "-E",
                                        "separator=|",
                                        "-e",
                                        "ip.src",
                                        "-e",
                                        "ipv6.src",
                                        "-e",
                                        "udp.srcport",
                                        "-e",
                                        "ip.dst",
                                        "-e",
                                        "ipv6.dst",
                                        "-e",
                                        "udp.dstport",
                                        "-e",
                                        "tls.handshake.extensions_server_name",
                                        "-e",
                                        "gquic.tag.sni",
                                        "-e",
                                        "tls.handshake.extensions_alpn_str",
                                        "-e",
                                        "tls.quic.parameter.google.user_agent",
                                        "-e",
                                        "gquic.tag.uaid"});
    if (r.exitCode != 0) {
        error = "tshark failed: " + r.err;
        return hellos;
    }
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
        std::vector<std::string> c;
        std::istringstream fields(l);
        for (std::string f; std::getline(fields, f, '|');) c.push_back(f);
        c.resize(11);
        if (c[2].empty()) continue;
        const std::string key =
            unorderedKey(c[0].empty() ? c[1] : c[0], c[2], c[3].empty() ? c[4] : c[3], c[5]);
        std::string sni = c[6].empty() ? c[7] : c[6];
        sni = sni.substr(0, sni.find(','));  // the first name, as quic_sni
        hellos.emplace(key, std::array<std::string, 3>{sni, c[8], c[9].empty() ? c[10] : c[9]});
    }
    return hellos;
}

// Every capture of the nDPI 4.2 folder whose .out labels a flow QUIC (name without ".out").
std::vector<std::string> quicCaptures() {
    std::vector<std::string> names;
    const fs::path result = testdataDir() / "ndpi-4.2" / "result";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(result, ec)) {
        const std::string file = e.path().filename().string();
        if (file.size() < 5 || file.substr(file.size() - 4) != ".out") continue;
        const std::string capture = file.substr(0, file.size() - 4);
        if (!fs::exists(testdataDir() / "ndpi-4.2" / "pcap" / capture)) continue;
        if (!ndpiQuicFlows(e.path()).empty()) names.push_back(capture);
    }
    std::sort(names.begin(), names.end());
    return names;
}

struct Agreement {
    std::size_t flows = 0, sni = 0, alpn = 0, userAgent = 0, excepted = 0;
};

class NdpiQuic : public ::testing::TestWithParam<std::string> {};

TEST_P(NdpiQuic, SniAlpnAndUserAgentOfEveryQuicFlowMatchNdpiReader) {
    ROWPROBE_REQUIRE_BINARY();
    const std::string capture = GetParam();
    const fs::path base = testdataDir() / "ndpi-4.2";
    const fs::path pcap = base / "pcap" / capture;
    const fs::path out = base / "result" / (capture + ".out");
    ROWPROBE_REQUIRE_FILE(pcap);
    ROWPROBE_REQUIRE_FILE(out);
    const auto truth = ndpiQuicFlows(out);
    ASSERT_FALSE(truth.empty()) << "no QUIC flow in " << out;
    const ProbeRun run = runProbe(pcap, {"-p", "quic"});
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    ASSERT_TRUE(run.error.empty()) << run.error;
    // the first record of each flow that parsed a hello (a flow may have more records)
    std::map<std::string, const JsonObject*> byKey;
    for (const JsonObject& f : run.flows) {
        if (flowValue(f, "quic_ch_parsed") != "1") continue;
        byKey.emplace(unorderedKey(flowValue(f, "src_ip"), flowValue(f, "src_port"),
                                   flowValue(f, "dst_ip"), flowValue(f, "dst_port")),
                      &f);
    }
    Agreement a;
    const NdpiMiss* miss = missFor(capture);
    std::string tsharkError;
    const auto tshark = tsharkHellos(pcap, tsharkError);
    if (miss != nullptr && !tsharkError.empty())
        GTEST_SKIP() << "tshark not available (Debian package tshark): " << tsharkError;
    const auto check = [&](const NdpiQuicFlow& n, int field, const std::string& ours,
                           const std::string& theirs, std::size_t& agreed) {
        static constexpr const char* kNames[] = {"sni", "alpn", "user_agent"};
        if (ours == theirs) {
            ++agreed;
            return;
        }
        if (miss != nullptr && theirs.empty()) {
            const auto t = tshark.find(n.key);
            const std::string decoded = t == tshark.end() ? "" : t->second[field];
            EXPECT_EQ(ours, decoded) << capture << " " << n.key << " " << kNames[field]
                                     << ": nDPI prints nothing, tshark decodes '" << decoded << "'";
            ++a.excepted;
            return;
        }
        ADD_FAILURE() << capture << " " << n.key << " " << kNames[field] << ": rowprobe '" << ours
                      << "', ndpiReader '" << theirs << "'";
    };
    for (const NdpiQuicFlow& n : truth) {
        ++a.flows;
        const auto it = byKey.find(n.key);
        if (it == byKey.end()) {
            // nDPI labels the flow QUIC from its header alone: nothing to compare unless it
            // printed a value we should have found.
            const bool nothing = n.sni.empty() && n.alpn.empty() && n.userAgent.empty();
            if (nothing) {
                ++a.sni, ++a.alpn, ++a.userAgent;
                continue;
            }
            check(n, 0, "", n.sni, a.sni);
            check(n, 1, "", n.alpn, a.alpn);
            check(n, 2, "", n.userAgent, a.userAgent);
            continue;
        }
        const JsonObject& f = *it->second;
        check(n, 0, flowValue(f, "quic_sni"), n.sni, a.sni);
        check(n, 1, flowValue(f, "quic_alpn"), n.alpn, a.alpn);
        check(n, 2, flowValue(f, "quic_user_agent"), n.userAgent, a.userAgent);
        // quic_alpn has no IPFIX element (not an ipfixprobe field): IPFIX carries the ALPN
        // extension inside quic_tls_ext, which the interop test decodes with tshark. Each
        // protocol nDPI names is there in its wire form (length byte, then the name).
        const std::string ext = flowValue(f, "quic_tls_ext");
        std::istringstream protocols(n.alpn);
        for (std::string proto; std::getline(protocols, proto, ',');) {
            std::string wire = hexByte(proto.size());
            for (const char c : proto) wire += hexByte(static_cast<unsigned char>(c));
            EXPECT_NE(ext.find(wire), std::string::npos) << n.key << ": " << proto;
        }
    }
    std::cout << "nDPI agreement " << capture << ": " << a.flows << " QUIC flows, SNI " << a.sni
              << "/" << a.flows << ", ALPN " << a.alpn << "/" << a.flows << ", user agent "
              << a.userAgent << "/" << a.flows << ", fields nDPI misses (tshark-checked) "
              << a.excepted << "\n";
    if (miss != nullptr) std::cout << "  " << miss->reason << "\n";
    // Second ground truth: every flow whose first ClientHello or CHLO tshark decodes has its
    // server name, ALPN and user agent (nDPI prints no ALPN list for some flows it parses).
    if (!tsharkError.empty()) {
        std::cout << "  tshark cross-check skipped: " << tsharkError << "\n";
    } else {
        std::size_t same = 0;
        for (const auto& [key, fields] : tshark) {
            const auto it = byKey.find(key);
            const std::array<std::string, 3> ours =
                it == byKey.end()
                    ? std::array<std::string, 3>{}
                    : std::array<std::string, 3>{flowValue(*it->second, "quic_sni"),
                                                 flowValue(*it->second, "quic_alpn"),
                                                 flowValue(*it->second, "quic_user_agent")};
            EXPECT_EQ(ours, fields) << capture << " " << key << ": rowprobe vs tshark";
            same += ours == fields ? 1 : 0;
        }
        std::cout << "  tshark: " << same << "/" << tshark.size()
                  << " decoded hellos with the same server name, ALPN and user agent\n";
    }
    RecordProperty("flows", static_cast<int>(a.flows));
    RecordProperty("exceptions", static_cast<int>(a.excepted));
}

std::string testName(const ::testing::TestParamInfo<std::string>& param) {
    std::string n = param.param;
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(L7, NdpiQuic, ::testing::ValuesIn(quicCaptures()), testName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NdpiQuic);

// The shared folder's QUIC captures are all found (a regex that stopped matching nDPI's lines
// would otherwise make the test above compare nothing).
TEST(NdpiQuicCaptures, EveryQuicCaptureOfTheFolderIsCompared) {
    const fs::path base = testdataDir() / "ndpi-4.2";
    ROWPROBE_REQUIRE_FILE(base / "result" / "quic-29.pcap.out");
    const auto names = quicCaptures();
    for (const char* expected : {"quic-29.pcap", "quic_t51.pcap", "http_ipv6.pcap"}) {
        if (fs::exists(base / "pcap" / expected)) {
            EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
        }
    }
}

}  // namespace
}  // namespace rowprobe::test
