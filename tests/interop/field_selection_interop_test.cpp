// Element type records (RFC 5610) and chosen fields (`fields=`, `iana-only`) of the ipfix and
// netflow9 outputs (issue 25), checked with the decoders collectors are built on:
//   * libfixbuf's ipfixDump with --rfc5610 names every enterprise element of the templates from
//     rowprobe's type records alone (without them it shows "_alienInformationElement"), with
//     the type the independent element file (tests/interop/cesnet-elements.xml, libfds' names)
//     declares; tshark decodes the same type records;
//   * any field selection (seeded random draws, time-boxed) gives templates ipfixDump and
//     tshark decode, with every flow of the json output and its byte count;
//   * iana-only templates hold IANA elements only, and unknown names are exit 2 with a
//     "did you mean".
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "collector_tools.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

fs::path ipfixprobeInput(const std::string& name) {
    return testdataDir() / "ipfixprobe" / "inputs" / name;
}

/// One element of a template as ipfixDump prints it.
struct DumpElement {
    std::uint32_t pen = 0;
    std::uint16_t id = 0;
    std::string type;
    std::string name;
};

/// The template fields ipfixDump prints ("ent:  8057  id:  2  type: string  len: 65535  name").
std::vector<DumpElement> dumpTemplateElements(const std::string& text) {
    static const std::regex line(
        R"(ent:\s+(\d+)\s+id:\s+(\d+)\s+type:\s+(\S+)\s+len:\s+\d+\s+(?:\(S\)\s+)?(\S+))");
    std::vector<DumpElement> out;
    std::istringstream in(text);
    std::string l;
    std::smatch m;
    while (std::getline(in, l)) {
        if (!std::regex_search(l, m, line)) continue;
        out.push_back({static_cast<std::uint32_t>(std::stoul(m[1])),
                       static_cast<std::uint16_t>(std::stoul(m[2])), m[3], m[4]});
    }
    return out;
}

/// (pen, id) -> (name, data type) of the RFC 5610 records in `ipfixDump --data` output.
std::map<std::pair<std::uint32_t, std::uint16_t>, std::pair<std::string, std::string>>
dumpTypeRecords(const std::string& text) {
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::pair<std::string, std::string>> out;
    std::istringstream in(text);
    std::string l;
    std::uint32_t pen = 0;
    std::uint16_t id = 0;
    std::string type;
    static const std::regex value(R"(\)\s+(?:\(S\)\s+)?(\w+) : (?:\(len: \d+\) )?(.*)$)");
    std::smatch m;
    while (std::getline(in, l)) {
        if (!std::regex_search(l, m, value)) continue;
        const std::string key = m[1];
        const std::string v = m[2];
        if (key == "privateEnterpriseNumber") pen = static_cast<std::uint32_t>(std::stoul(v));
        if (key == "informationElementId") id = static_cast<std::uint16_t>(std::stoul(v));
        if (key == "informationElementDataType") type = v;
        if (key == "informationElementName") out[{pen, id}] = {v, type};
    }
    return out;
}

std::string ipfixDump(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"ipfixDump"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = runCommand(argv, 300);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.out;
}

std::vector<std::uint8_t> readBytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

struct TypeCase {
    std::string name;
    fs::path pcap;
    std::vector<std::string> extra;  ///< -p ..., --tunnel ...
    std::string options;             ///< appended to the ipfix output string
};

class TypeInfoInterop : public ::testing::TestWithParam<TypeCase> {};

TEST_P(TypeInfoInterop, IpfixDumpNamesEveryEnterpriseElementFromTheTypeRecords) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    const TypeCase& c = GetParam();
    if (!fs::exists(c.pcap)) GTEST_SKIP() << c.pcap << " not available";
    const fs::path file = tempDir() / ("typeinfo-" + c.name + ".ipfix");
    runRowprobe("pcap;file=" + c.pcap.string(), "ipfix;file=" + file.string() + c.options, c.extra);

    const auto named =
        dumpTemplateElements(ipfixDump({"--rfc5610", "--in", file.string(), "--templates"}));
    const auto alien = dumpTemplateElements(ipfixDump({"--in", file.string(), "--templates"}));
    const auto reference = dumpTemplateElements(
        ipfixDump({"--in", file.string(), "--templates", "--element-file",
                   (sourceDir() / "tests" / "interop" / "cesnet-elements.xml").string()}));
    const auto records = dumpTypeRecords(ipfixDump({"--in", file.string(), "--data"}));
    ASSERT_EQ(named.size(), alien.size());
    ASSERT_EQ(named.size(), reference.size());
    std::size_t enterprise = 0;
    std::size_t typed = 0;
    for (std::size_t i = 0; i < named.size(); ++i) {
        const DumpElement& e = named[i];
        if (e.pen == 0 || e.pen == 29305) continue;
        ++enterprise;
        SCOPED_TRACE(std::to_string(e.pen) + "/" + std::to_string(e.id));
        // Without --rfc5610 libfixbuf knows nothing of it: the name comes from rowprobe's record.
        EXPECT_EQ(alien[i].name, "_alienInformationElement");
        EXPECT_NE(e.name, "_alienInformationElement");
        const auto r = records.find({e.pen, e.id});
        ASSERT_NE(r, records.end()) << "no type record";
        EXPECT_EQ(e.name, r->second.first);
        // The independent element file's type, where it names the element.
        if (reference[i].name != "_alienInformationElement") {
            ++typed;
            // Same type, or an unsigned type narrower than the reference's: the record says
            // what rowprobe encodes, and reduced-size encoding (RFC 7011 §6.2) sends a
            // reference unsigned32 (httpStatusCode) in 2 bytes as the same value.
            const bool reduced =
                e.type.rfind("uint", 0) == 0 && reference[i].type.rfind("uint", 0) == 0 &&
                std::stoi(e.type.substr(4)) < std::stoi(reference[i].type.substr(4));
            EXPECT_TRUE(e.type == reference[i].type || reduced)
                << e.name << " " << e.type << " / " << reference[i].name << " "
                << reference[i].type;
        }
    }
    EXPECT_GT(enterprise, 0U) << "the case sends no enterprise element";
    if (c.name != "tunnel") {
        EXPECT_GT(typed, 0U);
    }
}

TEST_P(TypeInfoInterop, TsharkDecodesTheTypeRecordsAsIpfixDumpDoes) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    const TypeCase& c = GetParam();
    if (!fs::exists(c.pcap)) GTEST_SKIP() << c.pcap << " not available";
    const fs::path file = tempDir() / ("typeinfo-ts-" + c.name + ".ipfix");
    runRowprobe("pcap;file=" + c.pcap.string(),
                "ipfix;file=" + file.string() + ";mtu=1458" + c.options, c.extra);
    const auto records = dumpTypeRecords(ipfixDump({"--in", file.string(), "--data"}));
    ASSERT_FALSE(records.empty());
    const fs::path pcap = tempDir() / ("typeinfo-ts-" + c.name + ".pcap");
    writeIpfixFileAsUdpPcap(readBytes(file), pcap);
    const auto packets = tsharkCflowColumns(
        pcap, 4739,
        {"cflow.private_enterprise_number", "cflow.information_element_id",
         "cflow.information_element_name", "cflow.information_element_data_type"});
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::pair<std::string, std::string>> seen;
    for (const auto& p : packets) {
        if (p[2].size() != p[0].size() || p[1].size() != p[0].size() || p[3].size() != p[0].size())
            continue;
        for (std::size_t k = 0; k < p[0].size(); ++k) {
            if (p[0][k].empty()) continue;
            seen[{static_cast<std::uint32_t>(std::stoul(p[0][k])),
                  static_cast<std::uint16_t>(std::stoul(p[1][k]))}] = {p[2][k], p[3][k]};
        }
    }
    EXPECT_EQ(seen, records);
}

const TypeCase kTypeCases[] = {
    {"plugins", ipfixprobeInput("http.pcap"), {"-p", "http", "-p", "pstats", "-p", "tls"}, ""},
    {"dns", ipfixprobeInput("dns.pcap"), {"-p", "dns", "-p", "phists"}, ""},
    {"tunnel", sourceDir() / "pcaps" / "tunnels.pcap", {"--tunnel", "inner"}, ";tunnel-pen=32473"},
};
INSTANTIATE_TEST_SUITE_P(Cases, TypeInfoInterop, ::testing::ValuesIn(kTypeCases),
                         [](const auto& p) { return p.param.name; });

TEST(TypeInfoInterop, NoTypeRecordsForTheDefaultTemplateOrWithTypeInfoNo) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path pcap = ipfixprobeInput("http.pcap");
    if (!fs::exists(pcap)) GTEST_SKIP() << pcap << " not available";
    const fs::path plain = tempDir() / "typeinfo-plain.ipfix";
    const fs::path off = tempDir() / "typeinfo-off.ipfix";
    const fs::path on = tempDir() / "typeinfo-on.ipfix";
    runRowprobe("pcap;file=" + pcap.string(), "ipfix;file=" + plain.string());
    runRowprobe("pcap;file=" + pcap.string(), "ipfix;file=" + off.string() + ";type-info=no",
                {"-p", "http"});
    runRowprobe("pcap;file=" + pcap.string(), "ipfix;file=" + on.string(), {"-p", "http"});
    auto setIds = [](const std::vector<std::uint8_t>& b) {
        std::set<std::uint16_t> ids;
        for (std::size_t at = 0; at + 16 <= b.size();) {
            const std::size_t len = std::size_t{b[at + 2]} << 8 | b[at + 3];
            for (std::size_t s = at + 16; s + 4 <= at + len;) {
                ids.insert(static_cast<std::uint16_t>(b[s] << 8 | b[s + 1]));
                const std::size_t sl = std::size_t{b[s + 2]} << 8 | b[s + 3];
                if (sl < 4) break;
                s += sl;
            }
            if (len < 16) break;
            at += len;
        }
        return ids;
    };
    EXPECT_EQ(setIds(readBytes(plain)).count(3), 0U);  // byte for byte ipfixprobe's dialect
    EXPECT_EQ(setIds(readBytes(off)).count(3), 0U);
    EXPECT_EQ(setIds(readBytes(on)).count(3), 1U);
    EXPECT_EQ(setIds(readBytes(on)).count(256), 1U);
}

// ---- chosen fields ---------------------------------------------------------------------------

/// Sum and count of ipfixDump's data records of templates >= 258 (flows), by element name.
struct DumpFlows {
    std::size_t records = 0;
    std::uint64_t octets = 0;
    std::set<std::string> elements;
};

DumpFlows dumpFlows(const std::string& text) {
    DumpFlows f;
    std::istringstream in(text);
    std::string l;
    bool flow = false;
    static const std::regex tid(R"(tid:\s+(\d+))");
    static const std::regex value(R"(\)\s+(?:\(S\)\s+)?(\w+) : (.*)$)");
    std::smatch m;
    bool inData = false;  // template records print "tid:" too
    while (std::getline(in, l)) {
        if (l.rfind("---", 0) == 0) {
            inData = l.rfind("--- data record", 0) == 0;
            flow = false;
            continue;
        }
        if (inData && l.find("count:") != std::string::npos && std::regex_search(l, m, tid)) {
            flow = std::stoul(m[1]) >= 258;
            if (flow) ++f.records;
            continue;
        }
        if (!flow || !std::regex_search(l, m, value)) continue;
        f.elements.insert(m[1]);
        if (m[1] == "octetDeltaCount") f.octets += std::stoull(m[2]);
    }
    return f;
}

TEST(FieldSelectionProperty, AnySelectionGivesTemplatesIpfixDumpAndTsharkDecode) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    const fs::path pcap = ipfixprobeInput("http.pcap");
    if (!fs::exists(pcap)) GTEST_SKIP() << pcap << " not available";

    const auto json = parseJsonLines(runRowprobe("pcap;file=" + pcap.string(), "json").out);
    ASSERT_FALSE(json.empty());
    std::size_t flows = 0;
    std::size_t reverse = 0;
    std::uint64_t bytes = 0;
    std::uint64_t bytesRev = 0;
    for (const auto& o : json) {
        ++flows;
        reverse += toU64(o.at("packets_rev")) != 0 ? 1 : 0;
        bytes += toU64(o.at("bytes"));
        bytesRev += toU64(o.at("bytes_rev"));
    }
    const std::vector<std::string> biflow = {"end_reason", "bytes",          "bytes_rev",
                                             "packets",    "packets_rev",    "time_first",
                                             "time_last",  "ip_version",     "proto",
                                             "tcp_flags",  "tcp_flags_rev",  "src_port",
                                             "dst_port",   "dir_bit_field",  "src_ip",
                                             "dst_ip",     "src_mac",        "dst_mac",
                                             "vlan",       "icmp_type_code", "icmp_type_code_rev",
                                             "ttl",        "ttl_rev"};
    const std::vector<std::string> uniflow = {
        "end_reason", "bytes",     "packets",  "time_first", "time_last",      "ip_version",
        "proto",      "tcp_flags", "src_port", "dst_port",   "dir_bit_field",  "src_ip",
        "dst_ip",     "src_mac",   "dst_mac",  "vlan",       "icmp_type_code", "ttl"};
    const std::vector<std::string> plugin = {"http", "http_host", "http_method", "http_status"};

    // Seeded: ROWPROBE_FIELDS_SEED repeats a failing draw. Time-boxed to keep the suite's budget.
    const char* seedText = std::getenv("ROWPROBE_FIELDS_SEED");
    const std::uint32_t seed =
        seedText != nullptr ? static_cast<std::uint32_t>(std::stoul(seedText)) : 20261127U;
    std::mt19937 rng(seed);
    const auto start = std::chrono::steady_clock::now();
    int draws = 0;
    for (; draws < 24 && std::chrono::steady_clock::now() - start < std::chrono::seconds(45);
         ++draws) {
        const bool uni = (rng() & 1U) != 0;
        const bool withPlugin = (rng() % 3U) == 0;
        const auto& vocabulary = uni ? uniflow : biflow;
        std::vector<std::string> chosen;
        for (const auto& n : vocabulary) {
            if (rng() % 3U == 0) chosen.push_back(n);
        }
        if (chosen.empty()) chosen.push_back(vocabulary[rng() % vocabulary.size()]);
        if (rng() % 4U == 0) chosen.emplace_back("basic");
        if (withPlugin) chosen.push_back(plugin[rng() % plugin.size()]);
        std::shuffle(chosen.begin(), chosen.end(), rng);
        std::string list;
        for (const auto& n : chosen) list += (list.empty() ? "" : ",") + n;
        const bool hasBytes = std::find(chosen.begin(), chosen.end(), "bytes") != chosen.end() ||
                              std::find(chosen.begin(), chosen.end(), "basic") != chosen.end();
        SCOPED_TRACE("seed " + std::to_string(seed) + " draw " + std::to_string(draws) + ": " +
                     (uni ? "uniflow;" : "") + "fields=" + list);

        const fs::path file = tempDir() / "fields-property.ipfix";
        std::vector<std::string> extra;
        if (withPlugin) extra = {"-p", "http"};
        runRowprobe(
            "pcap;file=" + pcap.string(),
            "ipfix;file=" + file.string() + ";mtu=1458;fields=" + list + (uni ? ";uniflow" : ""),
            extra);
        const auto dump = runCommand({"ipfixDump", "--rfc5610", "--in", file.string()}, 300);
        ASSERT_EQ(dump.exitCode, 0) << dump.err;
        EXPECT_EQ(dump.err.find("rror"), std::string::npos) << dump.err;
        const DumpFlows d = dumpFlows(dump.out);
        const std::size_t expected = flows + (uni ? reverse : 0);
        EXPECT_EQ(d.records, expected);
        if (hasBytes) {
            EXPECT_EQ(d.octets, bytes + (uni ? bytesRev : 0));
        }
        EXPECT_EQ(d.elements.count("_alienInformationElement"), 0U);

        const fs::path udp = tempDir() / "fields-property.pcap";
        writeIpfixFileAsUdpPcap(readBytes(file), udp);
        const auto ts = runCommand({"tshark", "-r", udp.string(), "-d", "udp.port==4739,cflow",
                                    "-o", "cflow.max_template_fields:0", "-V"},
                                   300);
        ASSERT_EQ(ts.exitCode, 0) << ts.err;
        EXPECT_EQ(ts.out.find("Malformed"), std::string::npos);
        EXPECT_EQ(ts.out.find("no template found"), std::string::npos);
        static const std::regex flowLine(R"(^ +Flow \d+$)");
        std::size_t tsharkRecords = 0;
        std::istringstream lines(ts.out);
        std::string l;
        while (std::getline(lines, l)) tsharkRecords += std::regex_match(l, flowLine) ? 1 : 0;
        EXPECT_EQ(tsharkRecords, expected);
        if (HasFailure()) break;
    }
    EXPECT_GE(draws, 4) << "too few draws within the time box";
    std::cout << "[ property ] " << draws << " field selections, seed " << seed << "\n";
}

TEST(FieldSelectionProperty, AnyNetflow9SelectionDecodesInTshark) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("tshark", "tshark");
    const fs::path pcap = ipfixprobeInput("http.pcap");
    if (!fs::exists(pcap)) GTEST_SKIP() << pcap << " not available";
    const auto json = parseJsonLines(runRowprobe("pcap;file=" + pcap.string(), "json").out);
    std::size_t expected = 0;
    for (const auto& o : json) expected += 1 + (toU64(o.at("packets_rev")) != 0 ? 1 : 0);
    const std::vector<std::string> vocabulary = {
        "bytes",     "packets",  "time_first", "time_last",     "ip_version", "proto",
        "tcp_flags", "src_port", "dst_port",   "dir_bit_field", "src_ip",     "dst_ip",
        "src_mac",   "dst_mac",  "vlan",       "icmp_type_code"};
    std::mt19937 rng(20261127U);
    const auto start = std::chrono::steady_clock::now();
    int draws = 0;
    for (; draws < 12 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20);
         ++draws) {
        std::string list;
        for (const auto& n : vocabulary) {
            if (rng() % 3U == 0) list += (list.empty() ? "" : ",") + n;
        }
        if (list.empty()) list = "basic";
        SCOPED_TRACE("netflow9;fields=" + list);
        const fs::path file = tempDir() / "fields-v9.pcap";
        runRowprobe("pcap;file=" + pcap.string(),
                    "netflow9;file=" + file.string() + ";fields=" + list);
        const auto ts =
            runCommand({"tshark", "-r", file.string(), "-d", "udp.port==2055,cflow", "-V"}, 300);
        ASSERT_EQ(ts.exitCode, 0) << ts.err;
        EXPECT_EQ(ts.out.find("Malformed"), std::string::npos);
        EXPECT_EQ(ts.out.find("no template found"), std::string::npos);
        static const std::regex flowLine(R"(^ +Flow \d+$)");
        std::size_t records = 0;
        std::istringstream lines(ts.out);
        std::string l;
        while (std::getline(lines, l)) records += std::regex_match(l, flowLine) ? 1 : 0;
        EXPECT_EQ(records, expected);
        if (HasFailure()) break;
    }
    EXPECT_GE(draws, 3);
}

TEST(FieldSelection, IanaOnlyTemplatesHoldIanaElementsOnly) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    const fs::path pcap = ipfixprobeInput("http.pcap");
    if (!fs::exists(pcap)) GTEST_SKIP() << pcap << " not available";
    const auto json = parseJsonLines(runRowprobe("pcap;file=" + pcap.string(), "json").out);
    for (const bool uni : {false, true}) {
        SCOPED_TRACE(uni ? "uniflow" : "biflow");
        const fs::path file = tempDir() / "iana-only.ipfix";
        runRowprobe("pcap;file=" + pcap.string(),
                    "ipfix;file=" + file.string() + ";iana-only" + (uni ? ";uniflow" : ""),
                    {"-p", "http", "-p", "pstats"});
        const auto elements =
            dumpTemplateElements(ipfixDump({"--in", file.string(), "--templates"}));
        ASSERT_FALSE(elements.empty());
        std::set<std::string> names;
        for (const auto& e : elements) {
            EXPECT_EQ(e.pen, 0U) << e.name;
            names.insert(e.name);
        }
        // pstats' basicLists hold CESNET elements: left out; http's fields are Flowmon/CESNET.
        EXPECT_EQ(names.count("basicList"), 0U);
        const DumpFlows d = dumpFlows(ipfixDump({"--in", file.string(), "--data"}));
        std::size_t expected = json.size();
        if (uni) {
            for (const auto& o : json) expected += toU64(o.at("packets_rev")) != 0 ? 1 : 0;
        }
        EXPECT_EQ(d.records, expected);
    }
}

TEST(FieldSelection, UnknownNamesAreExit2WithDidYouMean) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path pcap = sourceDir() / "pcaps" / "demo.pcap";
    struct Bad {
        std::string output;
        std::vector<std::string> extra;
        std::string guess;
    };
    const Bad cases[] = {
        {"ipfix;file=/dev/null;fields=src_ip,byts", {}, "did you mean 'bytes'"},
        {"ipfix;file=/dev/null;fields=basic,http_hots", {"-p", "http"}, "did you mean 'http_host'"},
        {"ipfix;file=/dev/null;uniflow;fields=basic,pakets", {}, "did you mean 'packets'"},
        {"netflow9;file=/dev/null;fields=src_ip,dts_port", {}, "did you mean 'dst_port'"},
    };
    for (const Bad& b : cases) {
        SCOPED_TRACE(b.output);
        std::vector<std::string> argv = {rowprobeBinary().string(), "-i",
                                         "pcap;file=" + pcap.string(), "-o", b.output};
        argv.insert(argv.end(), b.extra.begin(), b.extra.end());
        const auto r = runCommand(argv, 60);
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_NE(r.err.find("'fields'"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(b.guess), std::string::npos) << r.err;
    }
}

}  // namespace
}  // namespace rowprobe::test::interop
