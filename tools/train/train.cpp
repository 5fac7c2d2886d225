// rowprobe-train's library (design: train.hpp).
#include "tools/train/train.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace rowprobe::classify::train {

namespace {

std::ifstream openOrThrow(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be opened");
    return in;
}

/// One JSON object's top-level members: scalars as text (strings unescaped), arrays of
/// scalars as lists; nested objects and arrays of them are skipped.
struct JsonLine {
    std::map<std::string, std::string> scalars;
    std::map<std::string, std::vector<std::string>> arrays;
};

class JsonScanner {
public:
    explicit JsonScanner(const std::string& s) : m_s(s) {}

    bool object(JsonLine& out) {
        ws();
        if (!eat('{')) return false;
        ws();
        if (eat('}')) return true;
        for (;;) {
            std::string key;
            ws();
            if (!string(key)) return false;
            ws();
            if (!eat(':')) return false;
            ws();
            if (peek() == '[') {
                ++m_i;
                std::vector<std::string> items;
                ws();
                if (!eat(']')) {
                    for (;;) {
                        ws();
                        std::string v;
                        if (peek() == '{' || peek() == '[') {
                            if (!skip()) return false;
                        } else if (!scalar(v)) {
                            return false;
                        }
                        items.push_back(std::move(v));
                        ws();
                        if (eat(']')) break;
                        if (!eat(',')) return false;
                    }
                }
                out.arrays[key] = std::move(items);
            } else if (peek() == '{') {
                if (!skip()) return false;
            } else {
                std::string v;
                if (!scalar(v)) return false;
                out.scalars[key] = std::move(v);
            }
            ws();
            if (eat('}')) return true;
            if (!eat(',')) return false;
        }
    }

private:
    char peek() const { return m_i < m_s.size() ? m_s[m_i] : '\0'; }
    bool eat(char c) {
        if (peek() != c) return false;
        ++m_i;
        return true;
    }
    void ws() {
        while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])) != 0) ++m_i;
    }
    bool string(std::string& out) {
        if (!eat('"')) return false;
        while (m_i < m_s.size()) {
            const char c = m_s[m_i++];
            if (c == '"') return true;
            if (c == '\\') {
                if (m_i >= m_s.size()) return false;
                const char e = m_s[m_i++];
                switch (e) {
                    case 'n':
                        out += '\n';
                        break;
                    case 't':
                        out += '\t';
                        break;
                    case 'r':
                        out += '\r';
                        break;
                    case 'b':
                        out += '\b';
                        break;
                    case 'f':
                        out += '\f';
                        break;
                    case 'u':
                        if (m_i + 4 > m_s.size()) return false;
                        out += '?';  // labels are ASCII; a \u escape is kept as a placeholder
                        m_i += 4;
                        break;
                    default:
                        out += e;
                }
            } else {
                out += c;
            }
        }
        return false;
    }
    bool scalar(std::string& out) {
        if (peek() == '"') return string(out);
        const std::size_t start = m_i;
        while (m_i < m_s.size() && m_s[m_i] != ',' && m_s[m_i] != '}' && m_s[m_i] != ']' &&
               std::isspace(static_cast<unsigned char>(m_s[m_i])) == 0)
            ++m_i;
        out = m_s.substr(start, m_i - start);
        return m_i > start;
    }
    bool skip() {  // a nested object or array, strings respected
        int depth = 0;
        while (m_i < m_s.size()) {
            const char c = m_s[m_i];
            if (c == '"') {
                std::string ignored;
                if (!string(ignored)) return false;
                continue;
            }
            ++m_i;
            if (c == '{' || c == '[') ++depth;
            if (c == '}' || c == ']') {
                if (--depth == 0) return true;
            }
        }
        return false;
    }

    const std::string& m_s;
    std::size_t m_i = 0;
};

bool toInt(const std::string& s, long long& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    v = std::strtoll(s.c_str(), &end, 10);
    return end != nullptr && *end == '\0';
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

int protoNumber(const std::string& name) {
    if (name == "TCP") return 6;
    if (name == "UDP") return 17;
    if (name == "ICMP") return 1;
    if (name == "ICMPV6") return 58;
    if (name == "IGMP") return 2;
    if (name == "GRE") return 47;
    if (name == "ESP") return 50;
    if (name == "AH") return 51;
    if (name == "OSPF") return 89;
    if (name == "SCTP") return 132;
    long long v = 0;
    if (toInt(name, v) && v >= 0 && v <= 255) return static_cast<int>(v);
    return -1;
}

/// "192.168.1.7:53217" or "[2a00::1]:443" -> ip, port.
bool splitEndpoint(const std::string& s, std::string& ip, int& port) {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos) return false;
    ip = s.substr(0, colon);
    if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
    long long p = 0;
    if (!toInt(s.substr(colon + 1), p) || p < 0 || p > 65535) return false;
    port = static_cast<int>(p);
    return !ip.empty();
}

void putLabel(LabelMap& m, const std::string& key, const std::string& label) {
    if (label.empty()) return;
    auto [it, inserted] = m.emplace(key, label);
    if (!inserted && it->second != label) it->second.clear();  // ambiguous
}

}  // namespace

std::string tupleKey(int proto, const std::string& ipA, int portA, const std::string& ipB,
                     int portB) {
    std::string a = ipA + "|" + std::to_string(portA);
    std::string b = ipB + "|" + std::to_string(portB);
    if (b < a) std::swap(a, b);
    return std::to_string(proto) + "|" + a + "|" + b;
}

bool dpiConfidence(std::string_view confidence) noexcept {
    return confidence.empty() || confidence.starts_with("DPI");
}

std::string labelOf(const std::string& ndpiName, const std::string& category, LabelPart part) {
    if (ndpiName.empty() || ndpiName == "Unknown") return {};
    if (part == LabelPart::Category) return category == "Unspecified" ? std::string() : category;
    const auto dot = ndpiName.find('.');
    if (part == LabelPart::Full || dot == std::string::npos) return ndpiName;
    return part == LabelPart::Master ? ndpiName.substr(0, dot) : ndpiName.substr(dot + 1);
}

namespace {

/// Scans one rowprobe JSON line into `j` and gives its flow's tupleKey; false for a line that
/// is not an object or has no 5-tuple.
bool jsonFlowLine(const std::string& line, JsonLine& j, std::string& key) {
    if (!JsonScanner(line).object(j)) return false;
    long long proto = 0;
    long long sp = 0;
    long long dp = 0;
    if (!toInt(j.scalars["proto"], proto) || !toInt(j.scalars["src_port"], sp) ||
        !toInt(j.scalars["dst_port"], dp))
        return false;
    key = tupleKey(static_cast<int>(proto), j.scalars["src_ip"], static_cast<int>(sp),
                   j.scalars["dst_ip"], static_cast<int>(dp));
    return true;
}

}  // namespace

std::vector<Flow> readRowprobeJson(const std::string& path, std::size_t packets) {
    std::ifstream in = openOrThrow(path);
    std::vector<Flow> flows;
    std::string line;
    while (std::getline(in, line)) {
        JsonLine j;
        Flow f;
        if (!jsonFlowLine(line, j, f.key)) continue;
        const auto& lengths = j.arrays["ppi_pkt_lengths"];
        const auto& dirs = j.arrays["ppi_pkt_directions"];
        for (std::size_t i = 0; i < lengths.size() && i < dirs.size(); ++i) {
            long long len = 0;
            long long dir = 0;
            if (!toInt(lengths[i], len) || !toInt(dirs[i], dir) || len < 0) continue;
            addPacket(f.features, packets, static_cast<std::uint32_t>(std::min(len, 65535LL)),
                      dir >= 0);
        }
        f.category = j.scalars["ndpi_category"];
        f.label = j.scalars["ndpi_app"];
        f.confidence = j.scalars["ndpi_confidence"];
        flows.push_back(std::move(f));
    }
    return flows;
}

LabelMap readNdpiOut(const std::string& path, LabelPart part, bool guesses) {
    std::ifstream in = openOrThrow(path);
    LabelMap m;
    std::string line;
    while (std::getline(in, line)) {
        // "\t1\tTCP 192.168.1.7:53217 <-> 23.246.11.141:80 [proto: 7.133/HTTP.NetFlix]..."
        const auto protoTag = line.find("[proto: ");
        if (protoTag == std::string::npos) continue;
        std::istringstream head(line.substr(0, protoTag));
        std::string index;
        std::string protoName;
        std::string a;
        std::string arrow;
        std::string b;
        if (!(head >> index >> protoName >> a >> arrow >> b)) continue;
        if (arrow != "<->" && arrow != "->") continue;
        const int proto = protoNumber(protoName);
        std::string ipA;
        std::string ipB;
        int portA = 0;
        int portB = 0;
        if (proto < 0 || !splitEndpoint(a, ipA, portA) || !splitEndpoint(b, ipB, portB)) continue;
        const auto slash = line.find('/', protoTag);
        const auto close = line.find(']', protoTag);
        if (slash == std::string::npos || close == std::string::npos || slash > close) continue;
        const std::string name = line.substr(slash + 1, close - slash - 1);
        if (!guesses) {
            const auto conf = line.find("[Confidence: ");
            if (conf == std::string::npos ||
                !dpiConfidence(std::string_view(line).substr(conf + 13, 3)))
                continue;
        }
        std::string category;
        const auto cat = line.find("[cat: ");
        if (cat != std::string::npos) {
            const auto end = line.find_first_of("/]", cat + 6);
            category = line.substr(cat + 6, end - cat - 6);
        }
        putLabel(m, tupleKey(proto, ipA, portA, ipB, portB), labelOf(name, category, part));
    }
    return m;
}

LabelMap readNdpiJson(const std::string& path, LabelPart part, bool guesses) {
    std::ifstream in = openOrThrow(path);
    LabelMap m;
    std::string line;
    while (std::getline(in, line)) {
        JsonLine j;
        std::string key;
        if (!jsonFlowLine(line, j, key)) continue;
        if (!guesses && !dpiConfidence(j.scalars["ndpi_confidence"])) continue;
        putLabel(m, key, labelOf(j.scalars["ndpi_app"], j.scalars["ndpi_category"], part));
    }
    return m;
}

LabelMap readLabelCsv(const std::string& path) {
    std::ifstream in = openOrThrow(path);
    LabelMap m;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ',')) cols.push_back(trim(c));
        if (cols.size() < 6) continue;
        long long sp = 0;
        long long dp = 0;
        const int proto = protoNumber(cols[0]);
        if (proto < 0 || !toInt(cols[2], sp) || !toInt(cols[4], dp)) continue;  // header
        putLabel(m, tupleKey(proto, cols[1], static_cast<int>(sp), cols[3], static_cast<int>(dp)),
                 cols[5]);
    }
    return m;
}

Dataset buildDataset(const std::vector<Flow>& input, const DatasetOptions& opt) {
    // A canonical order first: rowprobe's JSON lists flows in export order, which varies
    // between runs, and the seeded split must pick the same flows every time.
    std::vector<Flow> flows = input;
    std::sort(flows.begin(), flows.end(), [](const Flow& a, const Flow& b) {
        return std::tie(a.key, a.features.count, a.features.size, a.label) <
               std::tie(b.key, b.features.count, b.features.size, b.label);
    });
    Dataset d;
    std::map<std::string, std::size_t> counts;
    for (const Flow& f : flows) {
        if (f.label.empty()) {
            ++d.unlabelled;
            continue;
        }
        if (f.features.count < opt.minPackets) {
            ++d.tooShort;
            continue;
        }
        ++counts[f.label];
    }
    const std::string other = "other";
    std::map<std::string, std::string> rename;
    std::size_t otherCount = 0;
    for (const auto& [label, n] : counts) {
        if (n >= opt.minSamples) {
            rename[label] = label;
        } else if (opt.mergeSmall) {
            rename[label] = other;
            d.merged.push_back(label);
            otherCount += n;
        } else {
            d.dropped.push_back(label);
        }
    }
    if (otherCount > 0 && otherCount < opt.minSamples) {
        for (auto& [label, to] : rename)
            if (to == other) to.clear();
        d.dropped.insert(d.dropped.end(), d.merged.begin(), d.merged.end());
        d.merged.clear();
    }
    std::set<std::string> names;
    for (const auto& [label, to] : rename)
        if (!to.empty()) names.insert(to);
    d.classes.assign(names.begin(), names.end());
    for (const Flow& f : flows) {
        if (f.label.empty() || f.features.count < opt.minPackets) continue;
        const auto it = rename.find(f.label);
        if (it == rename.end() || it->second.empty()) continue;
        const auto pos = std::lower_bound(d.classes.begin(), d.classes.end(), it->second);
        d.samples.push_back({f.features, static_cast<std::uint16_t>(pos - d.classes.begin())});
    }
    return d;
}

std::vector<std::size_t> shuffledIndices(std::size_t n, std::uint64_t seed) {
    std::vector<std::size_t> v(n);
    std::iota(v.begin(), v.end(), std::size_t{0});
    std::uint64_t s = seed;
    const auto next = [&s] {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31U);
    };
    for (std::size_t i = n; i > 1; --i) std::swap(v[i - 1], v[next() % i]);
    return v;
}

// --- naive Bayes -------------------------------------------------------------------------------

ModelSpec trainNaiveBayes(const Dataset& d, const std::vector<std::size_t>& rows, std::size_t n,
                          std::size_t minPackets, const NbOptions& opt) {
    const std::size_t k = d.classes.size();
    const std::size_t b = opt.binsPerDir;
    const std::size_t nrows = 2 * b + 1;
    ModelSpec m;
    m.kind = ModelKind::NaiveBayes;
    m.packets = static_cast<std::uint8_t>(n);
    m.minPackets = static_cast<std::uint8_t>(minPackets);
    m.classes = d.classes;
    m.binWidth = opt.binWidth;
    m.binsPerDir = opt.binsPerDir;
    std::vector<double> perClass(k, 0);
    for (const std::size_t r : rows) perClass[d.samples[r].cls] += 1;
    const auto total = static_cast<double>(rows.size());
    m.logPrior.resize(k);
    for (std::size_t c = 0; c < k; ++c)
        m.logPrior[c] = static_cast<float>(std::log((perClass[c] + 1) / (total + double(k))));
    m.table.assign(n * nrows * k, 0.0F);
    constexpr double kFloor = -1000.0;  // no -inf: an unseen row costs a lot, not everything
    const double pi2 = 2.0 * 3.14159265358979323846;
    const double cap = double(opt.binWidth) * double(b) - 1;
    for (std::size_t p = 0; p < n; ++p) {
        for (std::size_t c = 0; c < k; ++c) {
            // counts of absent / initiator / responder, and Welford's mean and M2 per direction
            std::array<double, 3> cnt{};
            std::array<double, 2> mean{};
            std::array<double, 2> m2{};
            for (const std::size_t r : rows) {
                const Sample& s = d.samples[r];
                if (s.cls != c) continue;
                const std::int32_t v = s.features.size[p];
                if (v == 0) {
                    cnt[0] += 1;
                    continue;
                }
                const std::size_t dir = v > 0 ? 0 : 1;
                const double x = std::min(double(std::abs(v)), cap);
                cnt[dir + 1] += 1;
                const double delta = x - mean[dir];
                mean[dir] += delta / cnt[dir + 1];
                m2[dir] += delta * (x - mean[dir]);
            }
            const double all = cnt[0] + cnt[1] + cnt[2] + 3 * opt.alpha;
            const auto at = [&](std::size_t row) -> float& {
                return m.table[(p * nrows + row) * k + c];
            };
            at(0) = static_cast<float>(std::max(kFloor, std::log((cnt[0] + opt.alpha) / all)));
            for (std::size_t dir = 0; dir < 2; ++dir) {
                const double logDir = std::log((cnt[dir + 1] + opt.alpha) / all);
                const double var =
                    (cnt[dir + 1] > 1 ? m2[dir] / cnt[dir + 1] : 0.0) + opt.varianceFloor;
                for (std::size_t bin = 0; bin < b; ++bin) {
                    double ll = 0;
                    if (cnt[dir + 1] > 0) {
                        const double centre =
                            double(bin) * opt.binWidth + (double(opt.binWidth) - 1) / 2;
                        const double z = centre - mean[dir];
                        // probability of the bin ~ density at its centre x width, at most 1
                        ll = std::min(0.0, -0.5 * std::log(pi2 * var) - z * z / (2 * var) +
                                               std::log(double(opt.binWidth)));
                    } else {
                        ll = -std::log(double(b));  // never seen: uniform over the bins
                    }
                    at(1 + dir * b + bin) = static_cast<float>(std::max(kFloor, logDir + ll));
                }
            }
        }
    }
    return m;
}

// --- C4.5-style tree ---------------------------------------------------------------------------

namespace {

struct TNode {
    int feature = -1;  ///< -1: leaf
    std::int32_t threshold = 0;
    std::unique_ptr<TNode> left;
    std::unique_ptr<TNode> right;
    std::uint16_t cls = 0;
    std::vector<double> counts;
    double n = 0;
    double errors = 0;  ///< training errors if this were a leaf
};

double entropy(const std::vector<double>& counts, double n) {
    double h = 0;
    for (const double c : counts)
        if (c > 0) h -= c / n * std::log2(c / n);
    return h;
}

/// C4.5's pessimistic error estimate: the upper bound of the binomial confidence interval
/// (normal approximation, z for the confidence), times n.
double pessimisticErrors(double e, double n, double z) {
    if (n <= 0) return 0;
    const double f = e / n;
    const double z2 = z * z;
    const double u =
        (f + z2 / (2 * n) + z * std::sqrt(std::max(0.0, f / n - f * f / n + z2 / (4 * n * n)))) /
        (1 + z2 / n);
    return u * n;
}

class TreeBuilder {
public:
    TreeBuilder(const Dataset& d, std::size_t n, const TreeOptions& opt)
        : m_d(d), m_n(n), m_opt(opt), m_k(d.classes.size()) {}

    std::unique_ptr<TNode> build(std::vector<std::size_t> rows, std::size_t depth) {
        auto node = std::make_unique<TNode>();
        node->counts.assign(m_k, 0);
        for (const std::size_t r : rows) node->counts[m_d.samples[r].cls] += 1;
        node->n = double(rows.size());
        const auto best = std::max_element(node->counts.begin(), node->counts.end());
        node->cls = static_cast<std::uint16_t>(best - node->counts.begin());
        node->errors = node->n - *best;
        if (node->errors == 0 || depth >= m_opt.maxDepth || rows.size() < 2 * m_opt.minLeaf)
            return node;
        // Candidate thresholds of every feature; C4.5: among splits with at least average
        // information gain, the one with the best gain ratio.
        struct Candidate {
            int feature;
            std::int32_t threshold;
            double gain;
            double ratio;
        };
        std::vector<Candidate> cands;
        const double h = entropy(node->counts, node->n);
        std::vector<std::pair<std::int32_t, std::uint16_t>> v(rows.size());
        for (std::size_t f = 0; f < m_n; ++f) {
            for (std::size_t i = 0; i < rows.size(); ++i)
                v[i] = {m_d.samples[rows[i]].features.size[f], m_d.samples[rows[i]].cls};
            std::sort(v.begin(), v.end());
            std::vector<double> left(m_k, 0);
            std::vector<double> right = node->counts;
            Candidate bestF{-1, 0, 0, 0};
            for (std::size_t i = 0; i + 1 < v.size(); ++i) {
                left[v[i].second] += 1;
                right[v[i].second] -= 1;
                if (v[i].first == v[i + 1].first) continue;
                const double nl = double(i + 1);
                const double nr = node->n - nl;
                if (nl < double(m_opt.minLeaf) || nr < double(m_opt.minLeaf)) continue;
                const double gain =
                    h - (nl / node->n) * entropy(left, nl) - (nr / node->n) * entropy(right, nr);
                if (gain > bestF.gain + 1e-12) bestF = {int(f), v[i].first, gain, 0};
            }
            if (bestF.feature < 0) continue;
            // C4.5 charges a continuous split log2(distinct values - 1) / n.
            std::size_t distinct = 1;
            for (std::size_t i = 1; i < v.size(); ++i) distinct += v[i].first != v[i - 1].first;
            bestF.gain -= std::log2(double(std::max<std::size_t>(distinct - 1, 1))) / node->n;
            if (bestF.gain <= 0) continue;
            double nl = 0;
            for (const auto& [x, c] : v) nl += x <= bestF.threshold ? 1 : 0;
            const double pl = nl / node->n;
            const double split = -(pl * std::log2(pl) + (1 - pl) * std::log2(1 - pl));
            bestF.ratio = split > 0 ? bestF.gain / split : 0;
            cands.push_back(bestF);
        }
        if (cands.empty()) return node;
        double avg = 0;
        for (const auto& c : cands) avg += c.gain;
        avg /= double(cands.size());
        const Candidate* pick = nullptr;
        for (const auto& c : cands)
            if (c.gain >= avg - 1e-12 && (pick == nullptr || c.ratio > pick->ratio)) pick = &c;
        std::vector<std::size_t> lr;
        std::vector<std::size_t> rr;
        for (const std::size_t r : rows)
            (m_d.samples[r].features.size[pick->feature] <= pick->threshold ? lr : rr).push_back(r);
        node->feature = pick->feature;
        node->threshold = pick->threshold;
        node->left = build(std::move(lr), depth + 1);
        node->right = build(std::move(rr), depth + 1);
        return node;
    }

    /// Subtree replacement bottom-up; returns the subtree's estimated errors.
    double prune(TNode& node, double z) {
        const double asLeaf = pessimisticErrors(node.errors, node.n, z);
        if (node.feature < 0) return asLeaf;
        const double sub = prune(*node.left, z) + prune(*node.right, z);
        if (asLeaf <= sub + 0.1) {
            node.feature = -1;
            node.left.reset();
            node.right.reset();
            return asLeaf;
        }
        return sub;
    }

private:
    const Dataset& m_d;
    std::size_t m_n;
    TreeOptions m_opt;
    std::size_t m_k;
};

std::size_t treeDepth(const TNode& n) {
    if (n.feature < 0) return 0;
    return 1 + std::max(treeDepth(*n.left), treeDepth(*n.right));
}

/// Writes `node` at breadth-first position `i` of a complete tree of depth D, padding leaves.
void flatten(const TNode& node, std::size_t i, std::size_t level, std::size_t depth, std::size_t k,
             ModelSpec& m) {
    const std::size_t internal = (std::size_t{1} << depth) - 1;
    if (level == depth) {
        const std::size_t leaf = i - internal;
        m.leafClass[leaf] = node.cls;
        m.leafScore[leaf] = static_cast<float>((node.counts[node.cls] + 1) / (node.n + double(k)));
        return;
    }
    if (node.feature < 0) {  // a leaf above the last level: always left, both sides the leaf
        m.nodeFeature[i] = 0;
        m.nodeThreshold[i] = std::numeric_limits<std::int32_t>::max();
        flatten(node, 2 * i + 1, level + 1, depth, k, m);
        flatten(node, 2 * i + 2, level + 1, depth, k, m);
        return;
    }
    m.nodeFeature[i] = static_cast<std::uint8_t>(node.feature);
    m.nodeThreshold[i] = node.threshold;
    flatten(*node.left, 2 * i + 1, level + 1, depth, k, m);
    flatten(*node.right, 2 * i + 2, level + 1, depth, k, m);
}

}  // namespace

ModelSpec trainTree(const Dataset& d, const std::vector<std::size_t>& rows, std::size_t n,
                    std::size_t minPackets, const TreeOptions& opt) {
    TreeBuilder b(d, n, opt);
    std::unique_ptr<TNode> root = b.build(rows, 0);
    if (opt.confidence > 0) {
        // z of the one-sided confidence interval (C4.5's CF 0.25 -> 0.69)
        const double cf = std::clamp(opt.confidence, 1e-6, 0.5);
        // inverse normal by bisection (start-up code, once)
        double lo = 0;
        double hi = 10;
        for (int it = 0; it < 100; ++it) {
            const double mid = (lo + hi) / 2;
            (0.5 * std::erfc(mid / std::sqrt(2.0)) > cf ? lo : hi) = mid;
        }
        b.prune(*root, (lo + hi) / 2);
    }
    ModelSpec m;
    m.kind = ModelKind::Tree;
    m.packets = static_cast<std::uint8_t>(n);
    m.minPackets = static_cast<std::uint8_t>(minPackets);
    m.classes = d.classes;
    const std::size_t depth = std::max<std::size_t>(1, treeDepth(*root));
    m.depth = static_cast<std::uint8_t>(depth);
    const std::size_t leaves = std::size_t{1} << depth;
    m.nodeFeature.assign(leaves - 1, 0);
    m.nodeThreshold.assign(leaves - 1, 0);
    m.leafClass.assign(leaves, 0);
    m.leafScore.assign(leaves, 0);
    flatten(*root, 0, 0, depth, d.classes.size(), m);
    return m;
}

// --- evaluation --------------------------------------------------------------------------------

double Evaluation::precision(std::size_t c) const {
    double tp = double(confusion[c][c]);
    double all = 0;
    for (const auto& row : confusion) all += double(row[c]);
    return all == 0 ? 0 : tp / all;
}
double Evaluation::recall(std::size_t c) const {
    double all = 0;
    for (const auto v : confusion[c]) all += double(v);
    return all == 0 ? 0 : double(confusion[c][c]) / all;
}
double Evaluation::f1(std::size_t c) const {
    const double p = precision(c);
    const double r = recall(c);
    return p + r == 0 ? 0 : 2 * p * r / (p + r);
}
double Evaluation::macroF1(std::size_t classes) const {
    double s = 0;
    for (std::size_t c = 0; c < classes; ++c) s += f1(c);
    return classes == 0 ? 0 : s / double(classes);
}
void Evaluation::add(const Evaluation& o) {
    if (confusion.empty())
        confusion = o.confusion;
    else
        for (std::size_t i = 0; i < confusion.size(); ++i)
            for (std::size_t j = 0; j < confusion[i].size(); ++j)
                confusion[i][j] += o.confusion[i][j];
    total += o.total;
    correct += o.correct;
    baselineCorrect += o.baselineCorrect;
    if (baselineClass.empty()) baselineClass = o.baselineClass;
}

Evaluation evaluate(const Model& m, const Dataset& d, const std::vector<std::size_t>& train,
                    const std::vector<std::size_t>& test) {
    const std::size_t k = d.classes.size();
    Evaluation e;
    e.confusion.assign(k + 1, std::vector<std::size_t>(k + 1, 0));
    std::vector<std::size_t> counts(k, 0);
    for (const std::size_t r : train) ++counts[d.samples[r].cls];
    const auto major =
        static_cast<std::size_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
    e.baselineClass = k > 0 ? d.classes[major] : "";
    for (const std::size_t r : test) {
        const Sample& s = d.samples[r];
        const Prediction p = m.predict(s.features);
        const std::size_t pred = std::min<std::size_t>(p.cls, k);
        ++e.confusion[s.cls][pred];
        ++e.total;
        e.correct += pred == s.cls ? 1 : 0;
        e.baselineCorrect += s.cls == major ? 1 : 0;
    }
    return e;
}

std::string formatReport(const Dataset& d, const Evaluation& e, const std::string& title) {
    std::ostringstream o;
    const std::size_t k = d.classes.size();
    o << "## " << title << "\n\n";
    o << "held-out flows: " << e.total << "; accuracy " << std::fixed << std::setprecision(3)
      << e.accuracy() << ", majority-class baseline (" << e.baselineClass << ") " << e.baseline()
      << ", macro F1 " << e.macroF1(k) << "\n\n";
    o << "| class | flows | precision | recall | F1 |\n|---|---:|---:|---:|---:|\n";
    for (std::size_t c = 0; c < k; ++c) {
        std::size_t n = 0;
        for (const auto v : e.confusion[c]) n += v;
        o << "| " << d.classes[c] << " | " << n << " | " << e.precision(c) << " | " << e.recall(c)
          << " | " << e.f1(c) << " |\n";
    }
    o << "\nconfusion matrix (rows: nDPI's label, columns: the model's; last column unknown):\n\n";
    std::size_t w = 7;
    for (const auto& c : d.classes) w = std::max(w, c.size() + 6);
    o << std::setw(static_cast<int>(w)) << "";
    for (std::size_t c = 0; c <= k; ++c)
        o << std::setw(6) << (c < k ? "c" + std::to_string(c) : "unk");
    o << "\n";
    for (std::size_t r = 0; r < k; ++r) {
        o << std::left << std::setw(static_cast<int>(w))
          << ("c" + std::to_string(r) + " " + d.classes[r]) << std::right;
        for (std::size_t c = 0; c <= k; ++c) o << std::setw(6) << e.confusion[r][c];
        o << "\n";
    }
    return o.str();
}

}  // namespace rowprobe::classify::train
