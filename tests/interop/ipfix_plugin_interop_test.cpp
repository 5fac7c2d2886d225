// Process-plugin fields over IPFIX, decoded by independent tools (issue 15 acceptance): the
// ipfixprobe reference pcaps run with their plugins through `-o ipfix`, and every plugin field
// of every record, as libfixbuf's ipfixDump and Wireshark's tshark decode it, must equal the
// `json` output of the same run. The CESNET / Flowmon elements are named for ipfixDump by
// tests/interop/cesnet-elements.xml. Which IPFIX element carries which JSON key comes from
// the plugins' own field schema. Plugins not built into this rowprobe are skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "interop_support.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;

struct Case {
    std::string name;
    std::vector<std::string> plugins;  ///< -p values
    std::string pcap;                  ///< under ipfixprobe/inputs
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

/// "pen/id" of an element ("id" for IANA), as ipfixDump prints it.
std::string elementKey(const IpfixElement& e) {
    return e.pen == 0 ? std::to_string(e.id) : std::to_string(e.pen) + "/" + std::to_string(e.id);
}

/// A plugin field's JSON key and the element that carries it (the list element for arrays).
struct Mapping {
    std::string json;
    std::string element;
    bool array = false;
    bool time = false;  ///< TimeNs values: IPFIX carries milliseconds
    std::size_t plugin = 0;
};

std::vector<Mapping> mappings(const std::vector<std::string>& plugins) {
    std::vector<Mapping> out;
    for (std::size_t i = 0; i < plugins.size(); ++i) {
        const auto& p = plugins[i];
        auto plugin = Registry::instance().createAs<ProcessPlugin>(PluginKind::Process, p, "-p");
        for (const FieldSpec& f : plugin->fields()) {
            if (!f.ipfix.exported()) continue;
            Mapping m;
            m.plugin = i;
            m.json = std::string(f.name);
            m.array = f.type == FieldType::Array;
            m.element = elementKey(m.array ? f.ipfixItem : f.ipfix);
            m.time = (m.array ? f.element : f.type) == FieldType::Timestamp;
            out.push_back(m);
        }
    }
    return out;
}

/// ms since the epoch of "YYYY-MM-DD HH:MM:SS.mmm" (ipfixDump) or an ISO time (json).
std::string msText(const std::string& t) {
    std::string iso = t;
    std::replace(iso.begin(), iso.end(), ' ', 'T');
    if (iso.find('Z') == std::string::npos) iso += 'Z';
    const auto ns = parseTimeNs(iso);
    return ns ? std::to_string(*ns / 1'000'000) : "bad-time(" + t + ")";
}

/// A decoded record: the flow key, and each plugin element's value as text (arrays "[a|b]").
using Values = std::map<std::string, std::string>;

/// Parses `ipfixDump --data` output with basicLists ("+++ basicList +++", "ie: (8057/1013)",
/// then "N : value" lines).
std::vector<Values> ipfixDumpValues(const std::string& text) {
    std::vector<Values> out;
    std::istringstream in(text);
    std::string line;
    std::string listKey;
    std::vector<std::string> items;
    auto closeList = [&] {
        if (listKey.empty() || out.empty()) return;
        std::string v = "[";
        for (std::size_t i = 0; i < items.size(); ++i) v += (i ? "|" : "") + items[i];
        out.back()[listKey] = v + "]";
        listKey.clear();
        items.clear();
    };
    while (std::getline(in, line)) {
        if (line.rfind("--- data record", 0) == 0) {
            closeList();
            out.emplace_back();
            continue;
        }
        if (out.empty()) continue;
        const auto ie = line.find("ie: (");
        if (ie != std::string::npos) {
            closeList();
            listKey = line.substr(ie + 5, line.find(')', ie) - ie - 5);
            continue;
        }
        const auto colon = line.find(" : ");
        if (colon == std::string::npos) continue;
        std::string value = line.substr(colon + 3);
        if (!listKey.empty() && line.find('(') == std::string::npos) {
            items.push_back(value);  // "\t\t\t1  : 86"
            continue;
        }
        const auto open = line.find('(');
        const auto close = line.find(')');
        if (open == std::string::npos || close == std::string::npos) continue;
        closeList();
        const std::string key = line.substr(open + 1, close - open - 1);
        if (value.rfind("(len: ", 0) == 0) {  // varlen: "(len: 3) GET"
            const auto end = value.find(") ");
            value = end == std::string::npos ? "" : value.substr(end + 2);
        }
        out.back()[key] = value;
    }
    closeList();
    return out;
}

/// One line per record: the flow key, then each mapped field's value, comparable as text.
std::string canonical(const std::vector<Mapping>& maps, const Values& v, bool fromJson,
                      const std::string& jsonLine = {}) {
    auto get = [&](const std::string& k) {
        const auto it = v.find(k);
        return it == v.end() ? std::string("<absent>") : it->second;
    };
    std::string line;
    if (fromJson) {
        line = canonicalIp(get("src_ip")) + ":" + get("src_port") + ">" +
               canonicalIp(get("dst_ip")) + ":" + get("dst_port") + "/" + get("proto") + " " +
               get("packets") + "/" + get("packets_rev") + " " + get("bytes") + "/" +
               get("bytes_rev");
    } else {
        const bool v6 = v.count("27") != 0;
        line = canonicalIp(get(v6 ? "27" : "8")) + ":" + get("7") + ">" +
               canonicalIp(get(v6 ? "28" : "12")) + ":" + get("11") + "/" + get("4") + " " +
               get("2") + "/" + get("29305/2") + " " + get("1") + "/" + get("29305/1");
    }
    // json: a plugin is in a record when any of its keys is (looked up in the line: the
    // flattened object has no key for an empty array).
    std::vector<bool> present(maps.empty() ? 0 : maps.back().plugin + 1, false);
    for (const Mapping& m : maps) {
        if (jsonLine.find("\"" + m.json + "\":") != std::string::npos) present[m.plugin] = true;
    }
    for (const Mapping& m : maps) {
        std::string value;
        if (fromJson && !present[m.plugin]) {
            value = "<absent>";
        } else if (fromJson && m.array) {
            value = "[";
            for (std::size_t i = 0;; ++i) {
                const auto it = v.find(m.json + "." + std::to_string(i));
                if (it == v.end()) break;
                value += (i ? "|" : "") + (m.time ? msText(it->second) : it->second);
            }
            value += "]";
        } else if (fromJson) {
            value = m.time ? msText(get(m.json)) : get(m.json);
        } else if (m.array && m.time && v.count(m.element) != 0) {
            std::string raw = get(m.element);
            value = "[";
            std::size_t pos = 1;
            bool first = true;
            while (pos < raw.size() && raw[pos] != ']') {
                const auto bar = raw.find_first_of("|]", pos);
                value += (first ? "" : "|") + msText(raw.substr(pos, bar - pos));
                first = false;
                pos = bar + (raw[bar] == '|' ? 1 : 0);
                if (raw[bar] == ']') break;
            }
            value += "]";
        } else {
            value = get(m.element);
        }
        line += " " + m.json + "=" + value;
    }
    return line;
}

class IpfixPluginInterop : public ::testing::TestWithParam<Case> {};

TEST_P(IpfixPluginInterop, IpfixDumpDecodesEveryPluginFieldEqualToJson) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("ipfixDump", "libfixbuf-tools");
    const Case& c = GetParam();
    const fs::path pcap = testdataDir() / "ipfixprobe" / "inputs" / c.pcap;
    if (!fs::exists(pcap)) GTEST_SKIP() << pcap << " not available";
    for (const auto& p : c.plugins) {
        const std::string name = p.substr(0, p.find(';'));
        if (runCommand({rowprobeBinary().string(), "-h", name}).exitCode != 0)
            GTEST_SKIP() << "process plugin '" << name << "' is not built into rowprobe";
    }
    const auto maps = mappings(c.plugins);
    ASSERT_FALSE(maps.empty());
    std::vector<std::string> extra;
    for (const auto& p : c.plugins) extra.insert(extra.end(), {"-p", p});

    const auto json = runRowprobe("pcap;file=" + pcap.string(), "json", extra);
    std::vector<std::string> expected;
    std::istringstream lines(json.out);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) expected.push_back(canonical(maps, parseJsonFlat(line), true, line));
    }
    const fs::path file = tempDir() / ("plugins-" + c.name + ".ipfix");
    runRowprobe("pcap;file=" + pcap.string(), "ipfix;file=" + file.string(), extra);
    const auto dump =
        runCommand({"ipfixDump", "--in", file.string(), "--data", "--element-file",
                    (sourceDir() / "tests" / "interop" / "cesnet-elements.xml").string()});
    ASSERT_EQ(dump.exitCode, 0) << dump.err;
    std::vector<std::string> decoded;
    for (const auto& v : ipfixDumpValues(dump.out)) decoded.push_back(canonical(maps, v, false));

    ASSERT_FALSE(expected.empty());
    std::sort(expected.begin(), expected.end());
    std::sort(decoded.begin(), decoded.end());
    EXPECT_EQ(decoded.size(), expected.size());
    std::vector<std::string> missing;
    std::set_difference(expected.begin(), expected.end(), decoded.begin(), decoded.end(),
                        std::back_inserter(missing));
    for (std::size_t i = 0; i < std::min<std::size_t>(missing.size(), 3); ++i)
        ADD_FAILURE() << "json record not decoded identically:\n  " << missing[i];
    EXPECT_TRUE(missing.empty()) << missing.size() << " records differ";
}

const Case kCases[] = {
    {"basicplus_pstats", {"basicplus", "pstats"}, "http.pcap"},
    {"pstats", {"pstats"}, "mixed.pcap"},
    {"phists", {"phists"}, "mixed.pcap"},
    {"bstats", {"bstats"}, "bstats.pcap"},
    {"idpcontent", {"idpcontent"}, "idpcontent.pcap"},
    {"http", {"http"}, "http.pcap"},
    {"dns", {"dns"}, "dns.pcap"},
    {"passivedns", {"passivedns"}, "dns.pcap"},
    {"tls", {"tls"}, "tls.pcap"},
};
std::string caseName(const ::testing::TestParamInfo<Case>& p) { return p.param.name; }
INSTANTIATE_TEST_SUITE_P(Plugins, IpfixPluginInterop, ::testing::ValuesIn(kCases), caseName);

}  // namespace
}  // namespace rowprobe::test::interop
