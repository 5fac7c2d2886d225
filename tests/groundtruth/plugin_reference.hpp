// The ipfixprobe reference harness for process plugins (tests/groundtruth/README.md): runs rowprobe
// on ../shared/testdata/ipfixprobe/inputs/<pcap> with one plugin and the json output, and
// compares every record and every field with outputs/<plugin> (ipfixprobe 5.7's UniRec logger
// output: CSV, last line = the UniRec header "type NAME,...").
//
//   TEST(PluginReference, Pstats) {
//       expectPluginReference({.plugin = "pstats", .pcap = "mixed.pcap", .records = 48});
//   }
//
// * Our side: only records that carry the plugin's fields (ipfixprobe's UniRec output sends a
//   flow only when it has the extension; one line per instance).
// * Columns: every column of the reference header except the exporter constants
//   (LINK_BIT_FIELD, DIR_BIT_FIELD). A UniRec name is mapped to our JSON key through the
//   field schema: the core fields (fields.hpp) and the plugin's own fields(), so nothing here
//   knows a plugin's keys.
// * Values are normalised before comparing: times (also inside arrays) to microseconds since
//   the epoch, addresses to canonical text, arrays "[a|b]" to "a|b", `bytes` to lowercase hex.
// * Records are compared as multisets of whole records; on failure, every reference record not
//   reproduced is printed with our record of the same 5-tuple next to it, field by field.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "flow_truth.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::test {

struct PluginReferenceCase {
    std::string plugin;           ///< outputs/<plugin>
    std::string pcap;             ///< inputs/<pcap>
    std::size_t records = 0;      ///< reference records (asserted, so a changed file is noticed)
    std::string processArg = {};  ///< the -p string; default = plugin
    std::vector<std::string> ignore = {};  ///< UniRec columns not compared (give the reason)
    /// > 0: `float` columns agree within this relative difference (or 1e-6 absolute, the
    /// reference's printing precision) instead of textually (nettisa: our JSON prints the
    /// shortest round-trip form, ipfixprobe's logger "%f").
    double floatRelTol = 0;
    /// Our `string` values compared without their bytes outside printable ASCII (0x20..0x7e):
    /// the reference's text output dropped them (give the reason).
    bool printableStrings = false;
};

namespace detail {

inline std::vector<std::string> splitOn(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (const char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

/// One value in comparable form; `type` is the UniRec type without '*'.
inline std::string normalise(const std::string& type, const std::string& v) {
    if (type == "time") {
        const auto ns = parseTimeNs(v);
        return ns ? std::to_string(*ns / 1000) : "bad-time(" + v + ")";
    }
    if (type == "ipaddr") return canonicalIp(v);
    if (type == "macaddr" || type == "bytes") {
        std::string out = v;
        std::transform(out.begin(), out.end(), out.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return out;
    }
    return v;
}

/// A reference array "[a|b|c]" normalised element by element, joined with '|'.
inline std::string normaliseRefArray(const std::string& type, const std::string& v) {
    std::string inner = v;
    if (!inner.empty() && inner.front() == '[') inner = inner.substr(1);
    if (!inner.empty() && inner.back() == ']') inner.pop_back();
    if (inner.empty()) return "";
    std::string out;
    for (const auto& e : splitOn(inner, '|')) out += (out.empty() ? "" : "|") + normalise(type, e);
    return out;
}

/// Our array: the flattened keys "key.0", "key.1", ... (absent = empty).
inline std::string normaliseOurArray(const std::string& type, const JsonObject& f,
                                     const std::string& key) {
    std::string out;
    for (std::size_t i = 0;; ++i) {
        const auto it = f.find(key + "." + std::to_string(i));
        if (it == f.end()) break;
        out += (i == 0 ? "" : "|") + normalise(type, it->second);
    }
    return out;
}

struct Column {
    std::string unirec;
    std::string type;  ///< without '*'
    bool array = false;
    std::string key;         ///< our JSON key
    bool textBytes = false;  ///< a Binary field the json output shows as text (FieldHint::Text)
};

/// Lowercase hex of the bytes of `s` (a Text-hinted Binary value as the reference shows it).
inline std::string hexOf(const std::string& s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (const unsigned char c : s) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out;
}

}  // namespace detail

/// Runs the case and reports every difference (see the file comment).
inline void expectPluginReference(const PluginReferenceCase& c) {
    using namespace detail;
    const auto dir = testdataDir() / "ipfixprobe";
    const auto refPath = dir / "outputs" / c.plugin;
    const auto pcap = dir / "inputs" / c.pcap;
    if (!std::filesystem::exists(refPath) || !std::filesystem::exists(pcap))
        GTEST_SKIP() << "reference not available: " << refPath << ", " << pcap;
    if (!std::filesystem::exists(rowprobeBinary()))
        GTEST_SKIP() << "rowprobe binary not built: " << rowprobeBinary();
    const std::string arg = c.processArg.empty() ? c.plugin : c.processArg;

    // The schema: UniRec name -> our JSON key.
    std::map<std::string, std::string> keyOf;
    std::set<std::string> textBytes;  // UniRec names of Binary fields shown as text
    for (const FieldSpec& f : coreFields())
        if (f.origin == FieldOrigin::Record && !f.unirec.name.empty())
            keyOf[std::string(f.unirec.name)] = std::string(f.name);
    const auto plugin =
        Registry::instance().createAs<ProcessPlugin>(PluginKind::Process, arg, "-p");
    ASSERT_TRUE(plugin != nullptr);
    const auto pluginFields = plugin->fields();
    ASSERT_FALSE(pluginFields.empty());
    for (const FieldSpec& f : pluginFields) {
        keyOf[std::string(f.unirec.name)] = std::string(f.name);
        if (f.type == FieldType::Binary && f.hint == FieldHint::Text)
            textBytes.insert(std::string(f.unirec.name));
    }

    auto lines = parseCsv(readFile(refPath));
    ASSERT_GE(lines.size(), 1U);
    std::vector<Column> cols;
    std::vector<std::size_t> colIndex;
    const auto header = lines.back();
    lines.pop_back();
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string& h = header[i];
        Column col;
        col.type = h.substr(0, h.find(' '));
        col.unirec = h.substr(h.find(' ') + 1);
        col.array = !col.type.empty() && col.type.back() == '*';
        if (col.array) col.type.pop_back();
        if (col.unirec == "LINK_BIT_FIELD" || col.unirec == "DIR_BIT_FIELD") continue;
        if (std::find(c.ignore.begin(), c.ignore.end(), col.unirec) != c.ignore.end()) continue;
        const auto it = keyOf.find(col.unirec);
        ASSERT_NE(it, keyOf.end()) << "no field of ours has the UniRec name " << col.unirec;
        col.key = it->second;
        col.textBytes = textBytes.count(col.unirec) != 0;
        cols.push_back(col);
        colIndex.push_back(i);
    }
    ASSERT_EQ(lines.size(), c.records) << "reference records in " << refPath;

    struct Rec {
        std::string tuple;
        std::vector<std::string> values;
        std::string text;
    };
    auto finish = [&](Rec r) {
        std::ostringstream o;
        for (std::size_t i = 0; i < cols.size(); ++i)
            o << (i ? " " : "") << cols[i].unirec << '=' << r.values[i];
        r.text = o.str();
        return r;
    };
    auto tupleOf = [](const std::string& s, const std::string& d, const std::string& sp,
                      const std::string& dp) { return s + ':' + sp + " > " + d + ':' + dp; };

    std::vector<Rec> ref;
    for (const auto& l : lines) {
        Rec r;
        std::map<std::string, std::string> byName;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const std::string& raw = l.at(colIndex[i]);
            const Column& col = cols[i];
            r.values.push_back(col.array ? normaliseRefArray(col.type, raw)
                                         : normalise(col.type, raw));
            byName[col.unirec] = r.values.back();
        }
        r.tuple =
            tupleOf(byName["SRC_IP"], byName["DST_IP"], byName["SRC_PORT"], byName["DST_PORT"]);
        ref.push_back(finish(std::move(r)));
    }

    const ProbeRun run = runProbe(pcap, {"-p", arg});
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    const std::string probe = "\"" + std::string(pluginFields.front().name) + "\":";
    std::vector<Rec> ours;
    std::istringstream in(readFile(run.dir / "flows.json"));
    for (std::string line; std::getline(in, line);) {
        if (line.find(probe) == std::string::npos) continue;  // no instance of the plugin
        const JsonObject f = parseJsonLines(line).at(0);
        Rec r;
        for (const Column& col : cols) {
            if (col.array) {
                r.values.push_back(normaliseOurArray(col.type, f, col.key));
            } else {
                const auto it = f.find(col.key);
                std::string v = it == f.end() ? std::string() : it->second;
                if (c.printableStrings && col.type == "string")
                    std::erase_if(v, [](char ch) {
                        return static_cast<unsigned char>(ch) < 0x20 ||
                               static_cast<unsigned char>(ch) > 0x7e;
                    });
                r.values.push_back(it == f.end()   ? "(absent)"
                                   : col.textBytes ? hexOf(v)
                                                   : normalise(col.type, v));
            }
        }
        r.tuple = tupleOf(canonicalIp(flowValue(f, "src_ip")), canonicalIp(flowValue(f, "dst_ip")),
                          flowValue(f, "src_port"), flowValue(f, "dst_port"));
        ours.push_back(finish(std::move(r)));
    }

    std::multiset<std::string> want;
    std::multiset<std::string> got;
    for (const auto& r : ref) want.insert(r.text);
    for (const auto& r : ours) got.insert(r.text);
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                        std::back_inserter(extra));
    if (c.floatRelTol > 0) {  // pair the leftovers whose floats agree within the tolerance
        const auto close = [&](const Rec& a, const Rec& b) {
            for (std::size_t i = 0; i < cols.size(); ++i) {
                if (a.values[i] == b.values[i]) continue;
                if (cols[i].type != "float") return false;
                char* endA = nullptr;
                char* endB = nullptr;
                const double x = std::strtod(a.values[i].c_str(), &endA);
                const double y = std::strtod(b.values[i].c_str(), &endB);
                if (*endA != 0 || *endB != 0 || a.values[i].empty() || b.values[i].empty())
                    return false;
                if (std::abs(x - y) >
                    std::max(c.floatRelTol * std::max(std::abs(x), std::abs(y)), 1e-6))
                    return false;
            }
            return true;
        };
        const auto recOf = [](const std::vector<Rec>& rs, const std::string& text) {
            return std::find_if(rs.begin(), rs.end(), [&](const Rec& r) { return r.text == text; });
        };
        std::vector<std::string> stillMissing;
        for (const auto& m : missing) {
            const auto wanted = recOf(ref, m);
            const auto hit = std::find_if(extra.begin(), extra.end(), [&](const std::string& e) {
                return close(*wanted, *recOf(ours, e));
            });
            if (hit == extra.end()) {
                stillMissing.push_back(m);
            } else {
                extra.erase(hit);
            }
        }
        missing = stillMissing;
    }
    std::ostringstream report;
    std::set<std::string> shown;
    for (const auto& m : missing) {
        const auto it =
            std::find_if(ref.begin(), ref.end(), [&](const Rec& r) { return r.text == m; });
        report << "  ipfixprobe " << it->tuple << '\n';
        bool near = false;
        for (const auto& o : ours) {
            if (o.tuple != it->tuple ||
                std::find(extra.begin(), extra.end(), o.text) == extra.end())
                continue;
            near = true;
            shown.insert(o.text);
            for (std::size_t i = 0; i < cols.size(); ++i) {
                if (o.values[i] != it->values[i])
                    report << "    " << cols[i].unirec << ": ipfixprobe '" << it->values[i]
                           << "' ours '" << o.values[i] << "'\n";
            }
            break;
        }
        if (!near) report << "    not produced: " << m << '\n';
    }
    for (const auto& e : extra)
        if (!shown.count(e)) report << "  only ours: " << e << '\n';
    EXPECT_TRUE(ours.size() == ref.size() && missing.empty() && extra.empty())
        << run.commandLine << "\n"
        << ours.size() << " records with " << c.plugin << " data, the reference has " << ref.size()
        << "; " << missing.size() << " reference records not reproduced, " << extra.size()
        << " of ours not in the reference:\n"
        << report.str();
}

}  // namespace rowprobe::test
