#include "adaptive_config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "rowprobe/errors.hpp"

namespace rowprobe::storage {

namespace {

constexpr std::string_view kMagic = "rowprobe-adaptive";
constexpr unsigned kVersion = 1;

[[noreturn]] void fail(std::string_view file, std::size_t line, const std::string& problem) {
    std::string where(file);
    if (line != 0) where += ":" + std::to_string(line);
    throw ConfigError({.component = "storage 'cache'",
                       .option = "adaptive-config",
                       .value = std::string(file),
                       .problem = where + ": " + problem});
}

std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

template <class T>
bool number(std::string_view text, T& out) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && ptr == end;
}

}  // namespace

AdaptiveConfig AdaptiveConfig::lruEquivalent(unsigned line) {
    AdaptiveConfig c;
    c.line = line;
    c.tuples.assign(line / 4, AdaptiveTuple{4, 0, false});
    c.insert.fill(line / 2);
    c.offsets.fill(0);
    return c;
}

std::vector<unsigned> AdaptiveConfig::targets() const {
    std::vector<unsigned> t;
    for (const auto& tu : tuples) {
        for (unsigned i = 0; i < tu.count; ++i) t.push_back(tu.target + (tu.increment ? i : 0));
    }
    return t;
}

std::string AdaptiveConfig::validate() const {
    if (line != 4 && line != 8 && line != 16 && line != 32) {
        return "tuples: line must be 4, 8, 16 or 32, got " + std::to_string(line);
    }
    if (tuples.empty() || tuples.size() > line) {
        return "tuples: 1 to " + std::to_string(line) + " tuples expected for line " +
               std::to_string(line) + " (the tuner writes line/4), got " +
               std::to_string(tuples.size());
    }
    unsigned covered = 0;
    unsigned minTarget = 0;
    for (std::size_t k = 0; k < tuples.size(); ++k) {
        const AdaptiveTuple& t = tuples[k];
        const std::string name = "tuples: tuple " + std::to_string(k + 1) + " (" +
                                 std::to_string(t.count) + ":" + std::to_string(t.target) + ":" +
                                 (t.increment ? "1" : "0") + ")";
        if (k == 0 && t.target != 0) return name + " must target 0 (the first tuple)";
        if (t.target < minTarget) {
            return name + " targets " + std::to_string(t.target) + ", below the previous tuple's " +
                   std::to_string(minTarget) + " (targets must not decrease)";
        }
        if (k > 0 && t.count > 0 && t.target + 1 > covered) {
            return name + " targets " + std::to_string(t.target) + ", but only positions 0.." +
                   std::to_string(covered - 1) +
                   " come before it (a hit must never move a flow backwards)";
        }
        covered += t.count;
        if (t.count > 0) minTarget = t.target + (t.increment ? t.count - 1 : 0);
    }
    if (covered != line) {
        return "tuples: counts sum to " + std::to_string(covered) + ", must sum to line (" +
               std::to_string(line) + ")";
    }
    for (std::size_t c = 0; c < kPacketClassCount; ++c) {
        if (insert[c] >= line) {
            return "insert: position " + std::to_string(insert[c]) + " is outside the row [0, " +
                   std::to_string(line - 1) + "]";
        }
    }
    const int half = static_cast<int>(line / 2);
    for (std::size_t c = 0; c < kPacketClassCount; ++c) {
        if (offsets[c] < -half || offsets[c] > half) {
            return "offsets: " + std::to_string(offsets[c]) + " is outside [" +
                   std::to_string(-half) + ", " + std::to_string(half) + "]";
        }
        if (c > 0 && offsets[c] < offsets[c - 1]) {
            return "offsets: must be non-decreasing (SHORT <= MEDIUM <= LONG <= NEVER), got " +
                   std::to_string(offsets[c - 1]) + " then " + std::to_string(offsets[c]);
        }
    }
    return {};
}

std::string_view AdaptiveConfig::keyOf(std::string_view problem) {
    const auto colon = problem.find(':');
    return problem.substr(0, colon);
}

AdaptiveConfig parseAdaptiveConfig(std::string_view text, std::string_view fileName) {
    AdaptiveConfig c;
    c.tuples.clear();
    bool sawVersion = false;
    std::array<std::size_t, 6> lineOf{};  // line, tuples, insert, offsets, classifier, fitness
    constexpr std::array<std::string_view, 6> kKeys = {"line",    "tuples",     "insert",
                                                       "offsets", "classifier", "fitness"};
    std::size_t lineNo = 0;
    std::size_t lastLine = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view raw = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (const auto hash = raw.find('#'); hash != std::string_view::npos)
            raw = raw.substr(0, hash);
        const std::vector<std::string_view> w = words(raw);
        if (w.empty()) {
            if (end == text.size()) break;
            continue;
        }
        lastLine = lineNo;
        if (!sawVersion) {
            if (w[0] != kMagic) {
                fail(fileName, lineNo,
                     "not a rowprobe adaptive configuration (the first line must be '" +
                         std::string(kMagic) + " " + std::to_string(kVersion) + "')");
            }
            unsigned v = 0;
            if (w.size() != 2 || !number(w[1], v))
                fail(fileName, lineNo, "expected '" + std::string(kMagic) + " VERSION'");
            if (v != kVersion) {
                fail(fileName, lineNo,
                     "unsupported version " + std::string(w[1]) + " (this rowprobe reads version " +
                         std::to_string(kVersion) + ")");
            }
            sawVersion = true;
            continue;
        }
        const auto key = std::find(kKeys.begin(), kKeys.end(), w[0]);
        if (key == kKeys.end()) {
            fail(fileName, lineNo,
                 "unknown key '" + std::string(w[0]) +
                     "' (expected line, tuples, insert, offsets, classifier or fitness)");
        }
        const auto k = static_cast<std::size_t>(key - kKeys.begin());
        if (lineOf[k] != 0) {
            fail(fileName, lineNo,
                 "'" + std::string(w[0]) + "' given twice (first on line " +
                     std::to_string(lineOf[k]) + ")");
        }
        lineOf[k] = lineNo;
        auto expectCount = [&](std::size_t n) {
            if (w.size() != n + 1) {
                fail(fileName, lineNo,
                     "'" + std::string(w[0]) + "' takes " + std::to_string(n) + " value" +
                         (n == 1 ? "" : "s") + ", got " + std::to_string(w.size() - 1));
            }
        };
        switch (k) {
            case 0:
                expectCount(1);
                if (!number(w[1], c.line))
                    fail(fileName, lineNo,
                         "line must be a number, got '" + std::string(w[1]) + "'");
                if (c.line != 4 && c.line != 8 && c.line != 16 && c.line != 32) {
                    fail(fileName, lineNo,
                         "line must be 4, 8, 16 or 32, got " + std::to_string(c.line));
                }
                break;
            case 1:
                for (std::size_t i = 1; i < w.size(); ++i) {
                    AdaptiveTuple t;
                    const std::string_view item = w[i];
                    const auto a = item.find(':');
                    const auto b = a == std::string_view::npos ? a : item.find(':', a + 1);
                    unsigned inc = 0;
                    if (b == std::string_view::npos || !number(item.substr(0, a), t.count) ||
                        !number(item.substr(a + 1, b - a - 1), t.target) ||
                        !number(item.substr(b + 1), inc) || inc > 1) {
                        fail(fileName, lineNo,
                             "tuple " + std::to_string(i) + " '" + std::string(item) +
                                 "' is not count:target:increment (increment 0 or 1)");
                    }
                    t.increment = inc == 1;
                    c.tuples.push_back(t);
                }
                break;
            case 2:
                expectCount(kPacketClassCount);
                for (std::size_t i = 0; i < kPacketClassCount; ++i) {
                    if (!number(w[i + 1], c.insert[i]))
                        fail(fileName, lineNo,
                             "insert position '" + std::string(w[i + 1]) + "' is not a number");
                }
                break;
            case 3:
                expectCount(kPacketClassCount);
                for (std::size_t i = 0; i < kPacketClassCount; ++i) {
                    if (!number(w[i + 1], c.offsets[i]))
                        fail(fileName, lineNo,
                             "offset '" + std::string(w[i + 1]) + "' is not an integer");
                }
                break;
            case 4:
                expectCount(1);
                if (w[1] == "none") {
                    c.classifier = AdaptiveClassifier::None;
                } else if (w[1] == "j48-v1") {
                    c.classifier = AdaptiveClassifier::J48v1;
                } else {
                    fail(fileName, lineNo,
                         "unknown classifier '" + std::string(w[1]) + "' (none or j48-v1)");
                }
                break;
            default: {
                expectCount(1);
                std::uint64_t f = 0;
                if (!number(w[1], f))
                    fail(fileName, lineNo, "fitness must be a non-negative integer");
                c.fitness = f;
                break;
            }
        }
        if (end == text.size()) break;
    }
    if (!sawVersion)
        fail(fileName, 0,
             "empty file: the first line must be '" + std::string(kMagic) + " " +
                 std::to_string(kVersion) + "'");
    for (std::size_t k = 0; k < 4; ++k) {
        if (lineOf[k] == 0) fail(fileName, lastLine, "missing '" + std::string(kKeys[k]) + "'");
    }
    if (const std::string problem = c.validate(); !problem.empty()) {
        const std::string_view key = AdaptiveConfig::keyOf(problem);
        std::size_t line = lineOf[1];
        if (key == "insert") line = lineOf[2];
        if (key == "offsets") line = lineOf[3];
        fail(fileName, line, problem);
    }
    return c;
}

AdaptiveConfig loadAdaptiveConfig(const std::string& path, unsigned line) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, 0, "cannot open the adaptive configuration file");
    std::ostringstream text;
    text << in.rdbuf();
    AdaptiveConfig c = parseAdaptiveConfig(text.str(), path);
    if (line != 0 && c.line != line) {
        const std::string s = text.str();
        std::size_t lineNo = 0;  // report the `line` key's line
        std::istringstream lines(s);
        std::string l;
        std::size_t n = 0;
        while (std::getline(lines, l)) {
            ++n;
            const std::string content = l.substr(0, l.find('#'));  // words() views into it
            const auto w = words(content);
            if (!w.empty() && w[0] == "line") lineNo = n;
        }
        fail(path, lineNo,
             "the configuration is for line " + std::to_string(c.line) + ", the table has line " +
                 std::to_string(line));
    }
    return c;
}

std::string formatAdaptiveConfig(const AdaptiveConfig& c) {
    std::string out = "# rowprobe adaptive row policy\n";
    out += std::string(kMagic) + " " + std::to_string(kVersion) + "\n";
    out += "line " + std::to_string(c.line) + "\n";
    out += "tuples";
    for (const auto& t : c.tuples) {
        out += " " + std::to_string(t.count) + ":" + std::to_string(t.target) + ":" +
               (t.increment ? "1" : "0");
    }
    out += "\ninsert";
    for (unsigned v : c.insert) out += " " + std::to_string(v);
    out += "\noffsets";
    for (int v : c.offsets) out += " " + std::to_string(v);
    out += "\nclassifier " + std::string(classifierName(c.classifier)) + "\n";
    if (c.fitness) out += "fitness " + std::to_string(*c.fitness) + "\n";
    return out;
}

std::string_view classifierName(AdaptiveClassifier c) noexcept {
    return c == AdaptiveClassifier::J48v1 ? "j48-v1" : "none";
}

// j48-v1: a decision tree over the features of the thesis's J48 classifier (IP protocol, TCP
// flags, TCP window, IP total length), written by hand for rowprobe — the thesis's trained
// tree is not published with usable thresholds. It predicts how soon the flow's next packet
// comes: connection set-up and teardown are answered at once (SHORT), a RST ends the flow
// (NEVER), full-size segments belong to bulk transfers (SHORT), small UDP datagrams are mostly
// request/response exchanges that then go quiet (LONG), ICMP and other protocols are sparse.
PacketClass classifyPacket(AdaptiveClassifier c, const ParsedPacket& p) noexcept {
    if (c == AdaptiveClassifier::None) return PacketClass::Short;
    constexpr std::uint8_t kFin = 0x01;
    constexpr std::uint8_t kSyn = 0x02;
    constexpr std::uint8_t kRst = 0x04;
    constexpr std::uint8_t kAck = 0x10;
    switch (p.key.proto) {
        case 6:
            if ((p.tcpFlags & kRst) != 0) return PacketClass::Never;
            if ((p.tcpFlags & (kSyn | kFin)) != 0) return PacketClass::Short;
            if (p.ipLen >= 1000) return PacketClass::Short;
            if (p.tcpFlags == kAck && p.tcpWindow < 1024) return PacketClass::Long;
            return PacketClass::Medium;
        case 17:
            return p.ipLen > 600 ? PacketClass::Short : PacketClass::Long;
        default:
            return PacketClass::Long;
    }
}

}  // namespace rowprobe::storage
