// Acceptance (issue 22, quic): for every QUIC flow of nDPI 4.2's quic-29 and quic_t51
// captures, `rowprobe -p quic` exports the server name, the client's ALPN and the user agent
// that ndpiReader prints ([Hostname/SNI: ..], [ALPN: ..], [User-Agent: ..] of its .out file),
// read from ../shared/testdata/ndpi-4.2/result. Fields nDPI does not print must be empty on
// our side too. The IPFIX side of the same fields is checked by
// tests/interop/ipfix_plugin_interop_test.cpp (tshark and ipfixDump decode every quic field of
// these captures equal to the json output); the ALPN travels in IPFIX inside quic_tls_ext,
// checked here against nDPI's ALPN.
#include <gtest/gtest.h>

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
        R"(^\s*\d+\s+UDP \[?([0-9a-fA-F.:]+?)\]?:(\d+) <?-> \[?([0-9a-fA-F.:]+?)\]?:(\d+) \[proto: [0-9.]+/QUIC[^\]]*\])");
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
        if (std::regex_search(l, m, alpn)) f.alpn = m[1];
        if (std::regex_search(l, m, ua)) f.userAgent = m[1];
        flows.push_back(f);
    }
    return flows;
}

class NdpiQuic : public ::testing::TestWithParam<std::string> {};

TEST_P(NdpiQuic, SniAlpnAndUserAgentOfEveryQuicFlowMatchNdpiReader) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path base = testdataDir() / "ndpi-4.2";
    const fs::path pcap = base / "pcap" / (GetParam() + ".pcap");
    const fs::path out = base / "result" / (GetParam() + ".pcap.out");
    ROWPROBE_REQUIRE_FILE(pcap);
    ROWPROBE_REQUIRE_FILE(out);
    const auto truth = ndpiQuicFlows(out);
    ASSERT_FALSE(truth.empty()) << "no QUIC flow in " << out;
    const ProbeRun run = runProbe(pcap, {"-p", "quic"});
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    ASSERT_TRUE(run.error.empty()) << run.error;
    // the record of each flow that parsed a ClientHello (a flow may have more records)
    std::map<std::string, const JsonObject*> byKey;
    for (const JsonObject& f : run.flows) {
        if (flowValue(f, "quic_ch_parsed") != "1") continue;
        byKey[unorderedKey(flowValue(f, "src_ip"), flowValue(f, "src_port"), flowValue(f, "dst_ip"),
                           flowValue(f, "dst_port"))] = &f;
    }
    for (const NdpiQuicFlow& n : truth) {
        const auto it = byKey.find(n.key);
        ASSERT_NE(it, byKey.end()) << n.key << ": no record with a parsed ClientHello";
        EXPECT_EQ(flowValue(*it->second, "quic_sni"), n.sni) << n.key;
        EXPECT_EQ(flowValue(*it->second, "quic_alpn"), n.alpn) << n.key;
        EXPECT_EQ(flowValue(*it->second, "quic_user_agent"), n.userAgent) << n.key;
        // quic_alpn has no IPFIX element (not an ipfixprobe field): IPFIX carries the ALPN
        // extension inside quic_tls_ext, which the interop test decodes with tshark. Each
        // protocol nDPI names is there in its wire form (length byte, then the name).
        const std::string ext = flowValue(*it->second, "quic_tls_ext");
        std::istringstream protocols(n.alpn);
        for (std::string proto; std::getline(protocols, proto, ',');) {
            std::string wire = hexByte(proto.size());
            for (const char c : proto) wire += hexByte(static_cast<unsigned char>(c));
            EXPECT_NE(ext.find(wire), std::string::npos) << n.key << ": " << proto;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(L7, NdpiQuic, ::testing::Values("quic-29", "quic_t51"),
                         [](const auto& param) {
                             std::string n = param.param;
                             for (char& c : n)
                                 if (c == '-') c = '_';
                             return n;
                         });

}  // namespace
}  // namespace rowprobe::test
