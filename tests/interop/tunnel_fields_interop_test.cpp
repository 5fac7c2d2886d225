// The tunnel of an inner flow (--tunnel inner|both) in every output (issue 12): its type, id
// and outer addresses as the json output has them must come out of the ipfix output (with
// tunnel-pen=N, decoded by libfixbuf's ipfixDump with an element file for PEN N, and by
// tshark), of the kafka output's ipfix format (the same encoder, tested in kafka_broker_test
// when a broker is at hand) and of the unirec output's `tunnel` group (read back as a NEMEA
// module would), flow by flow. Flows that did not come out of a tunnel must keep the plain
// templates: no tunnel elements in IPFIX, no record on the UniRec tunnel interface. Captures:
// the project's pcaps/tunnels.pcap (every encapsulation rowprobe decapsulates, IPv4 and IPv6
// outer headers) and third-party ones read in place from ../shared/testdata (skipped when
// absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "../unit/output/ipfix_test_decoder.hpp"
#include "../unit/output/unirec_test_reader.hpp"
#include "collector_tools.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;
namespace ur = rowprobe::test::unirec;

/// RFC 5612's enterprise number for documentation and examples: what a test may use.
constexpr std::uint32_t kPen = 32473;

struct Case {
    std::string name;
    std::string path;  ///< under the source tree ("pcaps/...") or under ../shared/testdata
    bool own = false;
    std::string mode;  ///< --tunnel
    fs::path pcap() const { return own ? sourceDir() / path : testdataDir() / path; }
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

/// One record as comparable text: flow key, counters, then the tunnel ("-" when none).
std::string line(const std::string& src, const std::string& sport, const std::string& dst,
                 const std::string& dport, const std::string& proto, const std::string& pkts,
                 const std::string& bytes, const std::string& tunnel) {
    return canonicalIp(src) + ":" + sport + ">" + canonicalIp(dst) + ":" + dport + "/" + proto +
           " " + pkts + "/" + bytes + " tunnel=" + tunnel;
}

std::string tunnelText(const std::string& type, const std::string& id, const std::string& src,
                       const std::string& dst) {
    return type + "/" + id + "/" + canonicalIp(src) + ">" + canonicalIp(dst);
}

/// The json output of the run, one line per record; also counts the tunnelled ones.
std::vector<std::string> fromJson(const Case& c, std::size_t& tunnelled) {
    const auto r = runRowprobe("pcap;file=" + c.pcap().string(), "json", {"--tunnel", c.mode});
    std::vector<std::string> out;
    std::istringstream in(r.out);
    tunnelled = 0;
    for (std::string text; std::getline(in, text);) {
        if (text.empty()) continue;
        const auto v = parseJsonFlat(text);
        auto get = [&](const char* k) {
            const auto it = v.find(k);
            return it == v.end() ? std::string("<absent>") : it->second;
        };
        std::string tunnel = "-";
        if (get("tunnel_type") != "0") {
            ++tunnelled;
            tunnel = tunnelText(get("tunnel_type"), get("tunnel_id"), get("tunnel_src"),
                                get("tunnel_dst"));
        }
        out.push_back(line(get("src_ip"), get("src_port"), get("dst_ip"), get("dst_port"),
                           get("proto"), get("packets") + "," + get("packets_rev"),
                           get("bytes") + "," + get("bytes_rev"), tunnel));
    }
    std::sort(out.begin(), out.end());
    return out;
}

void expectSame(const std::vector<std::string>& expected, std::vector<std::string> actual,
                const std::string& decoder) {
    std::sort(actual.begin(), actual.end());
    EXPECT_EQ(actual.size(), expected.size()) << decoder;
    std::vector<std::string> missing;
    std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                        std::back_inserter(missing));
    for (std::size_t i = 0; i < std::min<std::size_t>(missing.size(), 3); ++i)
        ADD_FAILURE() << decoder << ": json record not found identically:\n  " << missing[i];
    EXPECT_TRUE(missing.empty()) << missing.size() << " records differ (" << decoder << ")";
}

/// An ipfixDump element file naming the tunnel elements under `pen`, as an operator would
/// write one for his collector (output/ipfix/README.md shows it).
fs::path elementFile(std::uint32_t pen) {
    fs::path p = tempDir() / ("tunnel-elements-" + std::to_string(pen) + ".xml");
    std::ofstream out(p);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<registry id=\"rowprobe_tunnel\" xmlns=\"http://www.iana.org/assignments\" "
           "xmlns:cert=\"http://www.cert.org/ipfix\">\n"
           "  <registry id=\"rowprobe-tunnel-elements\">\n";
    const std::pair<const char*, const char*> kElements[] = {
        {"tunnelType", "unsigned8"},
        {"tunnelId", "unsigned32"},
        {"tunnelSourceIPv4Address", "ipv4Address"},
        {"tunnelDestinationIPv4Address", "ipv4Address"},
        {"tunnelSourceIPv6Address", "ipv6Address"},
        {"tunnelDestinationIPv6Address", "ipv6Address"}};
    int id = 1;
    for (const auto& [name, type] : kElements) {
        out << "    <record><name>" << name << "</name><dataType>" << type
            << "</dataType><cert:enterpriseId>" << pen << "</cert:enterpriseId><elementId>" << id++
            << "</elementId></record>\n";
    }
    out << "  </registry>\n</registry>\n";
    return p;
}

fs::path ipfixFile(const Case& c, const std::string& tag, const std::string& options) {
    fs::path file = tempDir() / ("tunnel-" + c.name + "-" + tag + ".ipfix");
    runRowprobe("pcap;file=" + c.pcap().string(), "ipfix;file=" + file.string() + options,
                {"--tunnel", c.mode});
    return file;
}

class TunnelFields : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        if (!fs::exists(GetParam().pcap())) GTEST_SKIP() << GetParam().pcap() << " not available";
    }
};

TEST_P(TunnelFields, IpfixDumpDecodesTunnelElementsEqualToJson) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    const Case& c = GetParam();
    std::size_t tunnelled = 0;
    const auto expected = fromJson(c, tunnelled);
    ASSERT_GT(tunnelled, 0U) << "the capture must yield flows out of tunnels";
    const fs::path file = ipfixFile(c, "dump", ";tunnel-pen=" + std::to_string(kPen));
    const auto dump = runCommand({"ipfixDump", "--in", file.string(), "--data", "--element-file",
                                  elementFile(kPen).string()});
    ASSERT_EQ(dump.exitCode, 0) << dump.err;
    const std::string p = std::to_string(kPen) + "/";
    std::vector<std::string> decoded;
    for (const auto& v : ipfixDumpRecords(dump.out)) {
        auto get = [&](const std::string& k) {
            const auto it = v.find(k);
            return it == v.end() ? std::string("<absent>") : it->second;
        };
        const bool v6 = v.count("27") != 0;
        std::string tunnel = "-";
        if (v.count(p + "1") != 0) {
            const bool outer6 = v.count(p + "5") != 0;
            tunnel = tunnelText(get(p + "1"), get(p + "2"), get(p + (outer6 ? "5" : "3")),
                                get(p + (outer6 ? "6" : "4")));
        }
        decoded.push_back(line(get(v6 ? "27" : "8"), get("7"), get(v6 ? "28" : "12"), get("11"),
                               get("4"), get("2") + "," + get("29305/2"),
                               get("1") + "," + get("29305/1"), tunnel));
    }
    expectSame(expected, decoded, "ipfixDump");
}

/// tshark shows the tunnel elements (unknown to it) as enterprise entries, in template order:
/// type (1 byte), id (4), outer source and destination (4 or 16 bytes each).
TEST_P(TunnelFields, TsharkDecodesTunnelElementsEqualToJson) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    const Case& c = GetParam();
    std::size_t tunnelled = 0;
    const auto expected = fromJson(c, tunnelled);
    ASSERT_GT(tunnelled, 0U);
    const fs::path file = ipfixFile(c, "udp", ";mtu=1458;tunnel-pen=" + std::to_string(kPen));
    std::ifstream in(file, std::ios::binary);
    const std::vector<std::uint8_t> ipfix((std::istreambuf_iterator<char>(in)), {});
    const fs::path capture = tempDir() / ("tunnel-" + c.name + ".pcap");
    writeIpfixFileAsUdpPcap(ipfix, capture);
    const auto r = runCommand({"tshark", "-r", capture.string(), "-d", "udp.port==4739,cflow", "-o",
                               "cflow.max_template_fields:0", "-T", "json", "-J", "cflow",
                               "--no-duplicate-keys"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    using Order = std::tuple<unsigned long, unsigned long, unsigned long>;
    std::map<Order, std::map<std::string, std::string>> flows;
    for (const auto& [key, value] : parseJsonFlat(r.out)) {
        const auto set = key.find(".Set ");
        const auto flow = key.find(".Flow ", set == std::string::npos ? 0 : set);
        if (set == std::string::npos || flow == std::string::npos) continue;
        if (key.find("[id=256]") != std::string::npos) continue;  // RFC 5610 type records
        const auto dot = key.find('.', flow + 1);
        flows[{std::stoul(key), std::stoul(key.substr(set + 5)), std::stoul(key.substr(flow + 6))}]
             [key.substr(dot + 1)] = value;
    }
    auto bytesOf = [](const std::string& colonHex) {
        std::vector<std::uint8_t> b;
        for (std::size_t i = 0; i + 1 < colonHex.size(); i += 3)
            b.push_back(static_cast<std::uint8_t>(std::stoul(colonHex.substr(i, 2), nullptr, 16)));
        return b;
    };
    auto addressOf = [](const std::vector<std::uint8_t>& b) {
        char text[INET6_ADDRSTRLEN] = {};
        if (b.size() == 4 || b.size() == 16)
            inet_ntop(b.size() == 4 ? AF_INET : AF_INET6, b.data(), text, sizeof text);
        return std::string(text);
    };
    std::vector<std::string> decoded;
    for (const auto& flow : flows) {
        const std::map<std::string, std::string>& f = flow.second;
        auto get = [&](const std::string& k) {
            const auto it = f.find("cflow." + k);
            return it == f.end() ? std::string("<absent>") : it->second;
        };
        const bool v6 = f.count("cflow.srcaddrv6") != 0;
        std::string tunnel = "-";
        if (f.count("cflow.enterprise_private_entry.0") != 0) {
            std::vector<std::vector<std::uint8_t>> e;
            for (int i = 0; i < 4; ++i)
                e.push_back(bytesOf(get("enterprise_private_entry." + std::to_string(i))));
            std::uint64_t id = 0;
            for (auto b : e[1]) id = id << 8 | b;
            tunnel = tunnelText(e[0].size() == 1 ? std::to_string(e[0][0]) : "bad",
                                e[1].size() == 4 ? std::to_string(id) : "bad", addressOf(e[2]),
                                addressOf(e[3]));
        }
        decoded.push_back(line(get(v6 ? "srcaddrv6" : "srcaddr"), get("srcport"),
                               get(v6 ? "dstaddrv6" : "dstaddr"), get("dstport"), get("protocol"),
                               get("packets.0") + "," + get("packets.1"),
                               get("octets.0") + "," + get("octets.1"), tunnel));
    }
    expectSame(expected, decoded, "tshark");
}

/// Flows that did not come out of a tunnel never change template: with --tunnel outer the file
/// with tunnel-pen carries exactly the templates and records of the file without it, in the
/// same order. (Not the same bytes: where one message ends depends on when the export queue ran
/// idle, which a loaded machine changes from run to run.) Without tunnel-pen only the basic
/// templates exist; with it, tunnelled flows get templates with all four tunnel elements.
TEST_P(TunnelFields, PlainFlowsKeepTheBasicTemplates) {
    ROWPROBE_REQUIRE_BINARY();
    const Case& c = GetParam();
    Case outer = c;
    outer.mode = "outer";
    namespace dec = rowprobe::test::ipfix;
    // A file's messages, decoded.
    auto messages = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
        dec::Decoder decoder;
        std::vector<dec::Message> msgs;
        std::string error;
        EXPECT_TRUE(decoder.decode(bytes, msgs, error)) << p << ": " << error;
        return msgs;
    };
    // Every template and data record of a file, in order, as text.
    auto content = [](const std::vector<dec::Message>& msgs) {
        std::vector<std::string> out;
        for (const auto& m : msgs) {
            for (const auto& t : m.templates) {
                std::ostringstream line;
                line << "template " << t.id << " scope " << t.scope << ":";
                for (const auto& e : t.elements)
                    line << ' ' << e.pen << '/' << e.id << '/' << e.length;
                out.push_back(line.str());
            }
            for (const auto& r : m.records) {
                std::ostringstream line;
                line << "data " << r.templateId << ":" << std::hex;
                for (const auto& v : r.values) {
                    line << ' ';
                    for (const std::uint8_t b : v)
                        line << static_cast<unsigned>(b) / 16 << static_cast<unsigned>(b) % 16;
                }
                out.push_back(line.str());
            }
        }
        return out;
    };
    const auto plain = content(messages(ipfixFile(outer, "outer-plain", "")));
    const auto withPen =
        content(messages(ipfixFile(outer, "outer-pen", ";tunnel-pen=" + std::to_string(kPen))));
    ASSERT_FALSE(plain.empty());
    EXPECT_EQ(plain, withPen) << "--tunnel outer: tunnel-pen must not change a template or record";
    // With decapsulation but without tunnel-pen: only the basic templates (258 / 259), and
    // with it a template pair per outer family seen, each with the four tunnel elements.
    auto templates = [&](const fs::path& p) {
        std::vector<dec::Template> out;
        for (const auto& m : messages(p))
            out.insert(out.end(), m.templates.begin(), m.templates.end());
        return out;
    };
    for (const auto& t : templates(ipfixFile(c, "nopen", "")))
        EXPECT_TRUE(t.id == 258 || t.id == 259) << "template " << t.id << " without tunnel-pen";
    std::size_t tunnelTemplates = 0;
    for (const auto& t : templates(ipfixFile(c, "pen", ";tunnel-pen=" + std::to_string(kPen)))) {
        std::size_t ours = 0;
        for (const auto& e : t.elements) ours += e.pen == kPen ? 1 : 0;
        EXPECT_TRUE(ours == 0 || ours == 4) << "template " << t.id;
        tunnelTemplates += ours == 4 ? 1 : 0;
    }
    EXPECT_GT(tunnelTemplates, 0U);
}

TEST_P(TunnelFields, UnirecTunnelGroupCarriesTunnelFieldsEqualToJson) {
    ROWPROBE_REQUIRE_BINARY();
    const Case& c = GetParam();
    std::size_t tunnelled = 0;
    const auto expected = fromJson(c, tunnelled);
    ASSERT_GT(tunnelled, 0U);
    const fs::path all = tempDir() / ("tunnel-" + c.name + "-all.trapcap");
    const fs::path tun = tempDir() / ("tunnel-" + c.name + "-tun.trapcap");
    runRowprobe("pcap;file=" + c.pcap().string(),
                "unirec;i=f:" + all.string() + ":w,f:" + tun.string() + ":w;p=basic,tunnel;e",
                {"--tunnel", c.mode});
    auto parse = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
        ur::Stream s;
        std::string error;
        EXPECT_TRUE(s.parse(bytes, true, error)) << p << ": " << error;
        return s;
    };
    const ur::Stream basic = parse(all);
    const ur::Stream tunnel = parse(tun);
    EXPECT_EQ(basic.spec, ur::kSpecA) << "the basic interface keeps ipfixprobe's template";
    EXPECT_NE(tunnel.spec.find("uint8 TUNNEL_TYPE"), std::string::npos) << tunnel.spec;
    EXPECT_NE(tunnel.spec.find("uint32 TUNNEL_ID"), std::string::npos) << tunnel.spec;
    EXPECT_NE(tunnel.spec.find("ipaddr TUNNEL_SRC_IP"), std::string::npos) << tunnel.spec;
    EXPECT_NE(tunnel.spec.find("ipaddr TUNNEL_DST_IP"), std::string::npos) << tunnel.spec;
    EXPECT_EQ(basic.records().size(), expected.size()) << "every flow on the basic interface";

    // The tunnel interface: exactly the json records that have a tunnel, with its fields.
    std::vector<std::string> wanted;
    std::copy_if(expected.begin(), expected.end(), std::back_inserter(wanted),
                 [](const std::string& s) { return s.find("tunnel=-") == std::string::npos; });
    ASSERT_EQ(wanted.size(), tunnelled);
    const ur::Layout l(tunnel.spec);
    std::vector<std::string> decoded;
    for (const auto& rec : tunnel.records()) {
        auto n = [&](const char* k) { return std::to_string(l.number(rec, k)); };
        decoded.push_back(line(l.ip(rec, "SRC_IP"), n("SRC_PORT"), l.ip(rec, "DST_IP"),
                               n("DST_PORT"), n("PROTOCOL"), n("PACKETS") + "," + n("PACKETS_REV"),
                               n("BYTES") + "," + n("BYTES_REV"),
                               tunnelText(n("TUNNEL_TYPE"), n("TUNNEL_ID"),
                                          l.ip(rec, "TUNNEL_SRC_IP"), l.ip(rec, "TUNNEL_DST_IP"))));
    }
    expectSame(wanted, decoded, "UniRec tunnel interface");
}

TEST(TunnelFieldsNotice, IpfixWithoutTunnelPenSaysOnceThatTunnelsAreLeftOut) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path pcap = sourceDir() / "pcaps" / "tunnels.pcap";
    const fs::path file = tempDir() / "tunnel-notice.ipfix";
    auto notices = [&](const std::string& mode, const std::string& options) {
        const auto r = runRowprobe("pcap;file=" + pcap.string(),
                                   "ipfix;file=" + file.string() + options, {"--tunnel", mode});
        std::size_t n = 0;
        for (std::size_t at = r.err.find("tunnel-pen=N"); at != std::string::npos;
             at = r.err.find("tunnel-pen=N", at + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(notices("inner", ""), 1U) << "tunnelled flows without tunnel-pen: said once";
    EXPECT_EQ(notices("outer", ""), 0U) << "no tunnelled flow, nothing to say";
    EXPECT_EQ(notices("inner", ";tunnel-pen=" + std::to_string(kPen)), 0U);
}

TEST(TunnelFieldsNfdump, NfcapdCollectsEveryFlowAndSkipsTheTunnelElements) {
    // A collector that does not know the tunnel elements (nfdump 1.7) still collects every
    // flow, the tunnelled ones included, with no packet it could not parse.
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("nfcapd", "nfdump");
    ROWPROBE_REQUIRE_TOOL("nfdump", "nfdump");
    const fs::path pcap = sourceDir() / "pcaps" / "tunnels.pcap";
    const auto json = runRowprobe("pcap;file=" + pcap.string(), "json", {"--tunnel", "both"});
    const auto flows = static_cast<std::size_t>(std::count(json.out.begin(), json.out.end(), '\n'));
    ASSERT_GT(flows, 0U);
    Nfcapd nfcapd("tunnels", 0);
    ASSERT_TRUE(nfcapd.child->running());
    runRowprobe("pcap;file=" + pcap.string(),
                "ipfix;udp;port=" + std::to_string(nfcapd.port) +
                    ";timestamps=ms;tunnel-pen=" + std::to_string(kPen),
                {"--tunnel", "both"});
    const std::string log = nfcapd.stop();
    EXPECT_NE(log.find("Flows: " + std::to_string(flows) + ","), std::string::npos) << log;
    EXPECT_NE(log.find("Bad Packets: 0"), std::string::npos) << log;
    const auto dump = runCommand({"nfdump", "-R", nfcapd.dir.string(), "-q"}, 60);
    ASSERT_EQ(dump.exitCode, 0) << dump.err;
    EXPECT_EQ(static_cast<std::size_t>(std::count(dump.out.begin(), dump.out.end(), '\n')), flows);
}

const Case kCases[] = {
    {"own_inner", "pcaps/tunnels.pcap", true, "inner"},
    {"own_both", "pcaps/tunnels.pcap", true, "both"},
    {"zeek_vxlan_both", "zeek/Traces/tunnels/vxlan.pcap", false, "both"},
    {"zeek_geneve_inner", "zeek/Traces/tunnels/geneve.pcap", false, "inner"},
    {"zeek_gre_both", "zeek/Traces/tunnels/gre-sample.pcap", false, "both"},
    {"zeek_teredo_inner", "zeek/Traces/tunnels/Teredo.pcap", false, "inner"},
    {"zeek_ayiya_both", "zeek/Traces/tunnels/ayiya3.pcap", false, "both"},
    {"zeek_gtp_inner", "zeek/Traces/tunnels/gtp/gtp1_gn_normal_incl_fragmentation.pcap", false,
     "inner"},
    {"suricata_vxlan03_both", "suricata-verify/vxlan-decoder-03/vxlan.pcap", false, "both"},
};
std::string caseName(const ::testing::TestParamInfo<Case>& p) { return p.param.name; }
INSTANTIATE_TEST_SUITE_P(Captures, TunnelFields, ::testing::ValuesIn(kCases), caseName);

}  // namespace
}  // namespace rowprobe::test::interop
