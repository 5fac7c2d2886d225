// The golden scenarios of tests/golden/<scenario>/{README.md, cmd, expect.yaml}, run on the
// project's own captures (pcaps/), suricata-verify style: `cmd` holds rowprobe's arguments,
// `expect.yaml` the exit code, the statistics, the truth file to compare every flow with, and
// filters that count the flows matching given field values. Format: tests/golden/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> scenarioNames() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(sourceDir() / "tests" / "golden", ec)) {
        if (e.is_directory() && fs::exists(e.path() / "cmd") &&
            fs::exists(e.path() / "expect.yaml")) {
            names.push_back(e.path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

bool isIpField(const std::string& f) { return f == "src_ip" || f == "dst_ip"; }
bool isTimeField(const std::string& f) { return f == "time_first" || f == "time_last"; }

bool equalValue(const std::string& field, const std::string& want, const std::string& got) {
    if (isIpField(field)) return canonicalIp(want) == canonicalIp(got);
    if (isTimeField(field) && want.find('T') != std::string::npos)
        return want == got;  // exact text format
    if (isTimeField(field)) {
        const auto w = parseTimeNs(want);
        return w && w == parseTimeNs(got);
    }
    const auto w = parseUint(want);
    const auto g = parseUint(got);
    if (w && g) return *w == *g;
    return want == got;
}

/// `want` is a value, "a|b" (any of), a range "N..M", or a comparison "<op> N" with op in
/// >=, <=, >, <, !=.
bool matchValue(const std::string& field, const std::string& want, const std::string& got) {
    if (const auto dots = want.find(".."); dots != std::string::npos && !isTimeField(field)) {
        const auto lo = parseUint(want.substr(0, dots));
        const auto hi = parseUint(want.substr(dots + 2));
        const auto g = parseUint(got);
        if (lo && hi) return g && *g >= *lo && *g <= *hi;
    }
    for (const char* op : {">=", "<=", "!=", ">", "<"}) {
        if (want.rfind(op, 0) != 0) continue;
        const std::string rhs = want.substr(std::strlen(op));
        const auto r = parseUint(rhs.substr(rhs.find_first_not_of(' ')));
        const auto g = parseUint(got);
        if (std::string(op) == "!=")
            return !equalValue(field, rhs.substr(rhs.find_first_not_of(' ')), got);
        if (!r || !g) return false;
        const std::string o = op;
        return o == ">=" ? *g >= *r : o == "<=" ? *g <= *r : o == ">" ? *g > *r : *g < *r;
    }
    if (want.find('|') != std::string::npos && !isTimeField(field)) {
        std::size_t start = 0;
        while (true) {
            const std::size_t bar = want.find('|', start);
            if (equalValue(field, want.substr(start, bar == std::string::npos ? bar : bar - start),
                           got))
                return true;
            if (bar == std::string::npos) return false;
            start = bar + 1;
        }
    }
    return equalValue(field, want, got);
}

/// Statistics path with `*` segments: the sum of every matching leaf.
std::optional<std::uint64_t> statValue(const JsonObject& stats, const std::string& path) {
    if (path.find('*') == std::string::npos) {
        const auto it = stats.find(path);
        if (it == stats.end()) return std::nullopt;
        return parseUint(it->second);
    }
    auto segments = [](const std::string& s) {
        std::vector<std::string> out;
        std::size_t start = 0;
        while (true) {
            const std::size_t dot = s.find('.', start);
            out.push_back(s.substr(start, dot == std::string::npos ? dot : dot - start));
            if (dot == std::string::npos) return out;
            start = dot + 1;
        }
    };
    const auto want = segments(path);
    std::optional<std::uint64_t> sum;
    for (const auto& [k, v] : stats) {
        const auto have = segments(k);
        if (have.size() != want.size()) continue;
        bool ok = true;
        for (std::size_t i = 0; i < want.size() && ok; ++i)
            ok = want[i] == "*" || want[i] == have[i];
        if (ok) sum = sum.value_or(0) + parseUint(v).value_or(0);
    }
    return sum;
}

std::string readCmd(const fs::path& path) {
    std::string cmd;
    std::istringstream in(readFile(path));
    std::string line;
    while (std::getline(in, line)) {
        const auto b = line.find_first_not_of(" \t");
        if (b == std::string::npos || line[b] == '#') continue;
        if (!line.empty() && line.back() == '\\') line.pop_back();
        cmd += line + ' ';
    }
    return cmd;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, Scenario) {
    ROWPROBE_REQUIRE_BINARY();
    const fs::path dir = sourceDir() / "tests" / "golden" / GetParam();
    const YamlNode expect = parseYaml(readFile(dir / "expect.yaml"));
    ASSERT_EQ(expect.kind, YamlNode::Kind::Map) << "expect.yaml must be a mapping";
    if (const YamlNode* requires_ = expect.find("requires")) {
        for (const auto& f : requires_->list) {
            const fs::path p = f.scalar.rfind("testdata/", 0) == 0
                                   ? testdataDir() / f.scalar.substr(9)
                                   : sourceDir() / f.scalar;
            ROWPROBE_REQUIRE_FILE(p);
        }
    }

    const fs::path out = tempDir();
    const std::string cmd = readCmd(dir / "cmd");
    const std::string shell = "PCAPS='" + (sourceDir() / "pcaps").string() + "' OUT='" +
                              out.string() + "' TESTDATA='" + testdataDir().string() + "'; exec '" +
                              rowprobeBinary().string() + "' " + cmd;
    const CommandResult r = runShell(shell, 300);
    SCOPED_TRACE("rowprobe " + cmd);

    const YamlNode* exitNode = expect.find("exit_code");
    const int wantExit = exitNode != nullptr ? std::stoi(exitNode->scalar) : 0;
    ASSERT_EQ(r.exitCode, wantExit) << r.err;
    if (const YamlNode* s = expect.find("stderr_contains")) {
        for (const auto& item : s->list)
            EXPECT_NE(r.err.find(item.scalar), std::string::npos) << item.scalar << "\n" << r.err;
    }

    std::vector<JsonObject> flows;
    if (fs::exists(out / "flows.json")) {
        std::string error;
        flows = readFlows(out / "flows.json", &error);
        ASSERT_TRUE(error.empty()) << "flows.json: " << error;
    }

    if (const YamlNode* n = expect.find("flows")) {
        EXPECT_TRUE(matchValue("flows", n->scalar, std::to_string(flows.size())))
            << "records: " << flows.size() << ", expected " << n->scalar;
    }
    if (const YamlNode* t = expect.find("truth")) {
        const auto rows = loadTruth(sourceDir() / "pcaps" / t->scalar);
        ASSERT_FALSE(rows.empty()) << "truth file pcaps/" << t->scalar;
        const TruthReport rep = compareWithTruth(flows, rows);
        EXPECT_TRUE(rep.problems.empty()) << "pcaps/" << t->scalar << ": " << rep.summary();
    }
    if (const YamlNode* totals = expect.find("totals")) {
        for (const auto& [field, want] : totals->map) {
            std::uint64_t sum = 0;
            for (const auto& f : flows) {
                sum += parseUint(flowValue(f, field)).value_or(0) +
                       parseUint(flowValue(f, field + "_rev")).value_or(0);
            }
            EXPECT_TRUE(matchValue(field, want.scalar, std::to_string(sum)))
                << "total " << field << " over all flows: " << sum << ", expected " << want.scalar;
        }
    }
    if (const YamlNode* stats = expect.find("stats")) {
        const std::string text = readFile(out / "stats.json");
        ASSERT_FALSE(text.empty()) << "no stats.json: pass --stats-json ${OUT}/stats.json in cmd";
        const JsonObject s = parseJsonFlat(text);
        for (const auto& [path, want] : stats->map) {
            const auto v = statValue(s, path);
            ASSERT_TRUE(v.has_value()) << "statistic '" << path << "' not in stats.json:\n" << text;
            EXPECT_TRUE(matchValue(path, want.scalar, std::to_string(*v)))
                << "statistic " << path << " = " << *v << ", expected " << want.scalar;
        }
    }
    if (const YamlNode* checks = expect.find("checks")) {
        for (std::size_t i = 0; i < checks->list.size(); ++i) {
            const YamlNode* filter = checks->list[i].find("filter");
            ASSERT_NE(filter, nullptr) << "checks[" << i << "] needs a 'filter'";
            const YamlNode* match = filter->find("match");
            const YamlNode* count = filter->find("count");
            std::size_t n = 0;
            std::string near;
            for (const auto& f : flows) {
                bool ok = true;
                std::size_t hits = 0;
                static const YamlNode kNoMatch{};
                for (const auto& [field, want] : (match != nullptr ? *match : kNoMatch).map) {
                    if (matchValue(field, want.scalar, flowValue(f, field))) {
                        ++hits;
                    } else {
                        ok = false;
                    }
                }
                if (ok) ++n;
                if (!ok && match != nullptr && hits + 2 >= match->map.size() && hits >= 2)
                    near += "\n    near: " + describeFlow(f);
            }
            std::string label = "checks[" + std::to_string(i) + "]";
            if (const YamlNode* name = filter->find("name")) label += " (" + name->scalar + ")";
            const std::string want = count != nullptr ? count->scalar : ">= 1";
            EXPECT_TRUE(matchValue("count", want, std::to_string(n)))
                << label << ": " << n << " flows match, expected " << want << near;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, Golden, ::testing::ValuesIn(scenarioNames()), [](const auto& p) {
        std::string n = p.param;
        std::replace_if(
            n.begin(), n.end(),
            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) == 0; }, '_');
        return n;
    });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

}  // namespace
}  // namespace rowprobe::test
