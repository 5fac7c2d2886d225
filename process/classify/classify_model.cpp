// Model validation, layout, classification and the file codec (design: classify_model.hpp).
#include "process/classify/classify_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <utility>

namespace rowprobe::classify {

std::string featureName(std::size_t i) { return "pkt" + std::to_string(i + 1) + "_signed_size"; }

std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept {
    static const auto kTable = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1U) : c >> 1U;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFU;
    for (const std::uint8_t b : bytes) c = kTable[(c ^ b) & 0xFFU] ^ (c >> 8U);
    return c ^ 0xFFFFFFFFU;
}

namespace {

bool validName(std::string_view s) {
    if (s.empty() || s.size() > 64) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7F; });
}

std::size_t padClasses(std::size_t k) { return k <= 8 ? 8 : k <= 16 ? 16 : (k + 7) / 8 * 8; }

constexpr float kPadPrior = -1e30F;
constexpr float kMinLogProb = -1e6F;

/// Every entry a log-probability: finite, in [kMinLogProb, 0].
bool allLogProbs(const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(),
                       [](float x) { return std::isfinite(x) && x >= kMinLogProb && x <= 0.0F; });
}

/// e^x for x <= 0 (x < -87 gives e^-87), relative error below 2e-7: 2^(x log2 e) split into
/// an integer power (the exponent bits) and a degree-6 polynomial of the fraction. Written so
/// that a loop over it vectorises (no libm call, no branch).
inline float expNonPositive(float x) noexcept {
    x = x < -87.0F ? -87.0F : x;
    const float t = x * 1.44269504088896341F;
    // floor(t) for t in [-126, 0] without a libm call: truncation rounds up for negatives
    std::int32_t n = static_cast<std::int32_t>(t);
    n -= static_cast<std::int32_t>(static_cast<float>(n) > t);
    const float f = t - static_cast<float>(n);  // [0, 1)
    float p = 1.535336188319500e-4F;
    p = p * f + 1.339887440266574e-3F;
    p = p * f + 9.618437357674640e-3F;
    p = p * f + 5.550332471162809e-2F;
    p = p * f + 2.402264791363012e-1F;
    p = p * f + 6.931472028550421e-1F;
    p = p * f + 1.0F;
    const std::int32_t e = n + 127;
    return p * std::bit_cast<float>(static_cast<std::uint32_t>(e) << 23U);
}

bool allFinite(const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

template <std::size_t KP>
float expSum(const float* acc, float top) noexcept {
    std::array<float, KP> e;
    for (std::size_t c = 0; c < KP; ++c) e[c] = expNonPositive(acc[c] - top);
    float sum = 0;
    for (std::size_t c = 0; c < KP; ++c) sum += e[c];
    return sum;
}

float expSumAny(const float* acc, float top, std::size_t k) noexcept {
    float sum = 0;
    for (std::size_t c = 0; c < k; ++c) sum += expNonPositive(acc[c] - top);
    return sum;
}

}  // namespace

bool buildModel(ModelSpec spec, Model& out, std::string& error) {
    const std::size_t n = spec.packets;
    const std::size_t k = spec.classes.size();
    if (n < 1 || n > kMaxPackets) {
        error = "N (packets) is " + std::to_string(n) + ", must be in [1, " +
                std::to_string(kMaxPackets) + "]";
        return false;
    }
    if (spec.minPackets > n) {
        error =
            "min packets " + std::to_string(spec.minPackets) + " is above N " + std::to_string(n);
        return false;
    }
    if (k < 1 || k > kMaxClasses) {
        error = "class count is " + std::to_string(k) + ", must be in [1, " +
                std::to_string(kMaxClasses) + "]";
        return false;
    }
    std::set<std::string> seen;
    for (const auto& c : spec.classes) {
        if (!validName(c)) {
            error = "class name '" + c.substr(0, 64) + "' is not 1..64 printable characters";
            return false;
        }
        if (c == kUnknownLabel) {
            error = "class name 'unknown' is reserved for flows the model does not label";
            return false;
        }
        if (!seen.insert(c).second) {
            error = "class name '" + c + "' appears twice";
            return false;
        }
    }
    Model m;
    m.m_kind = spec.kind;
    m.m_packets = n;
    m.m_minPackets = spec.minPackets;
    m.m_classes = spec.classes;
    m.m_kPad = padClasses(k);
    if (spec.kind == ModelKind::NaiveBayes) {
        if (spec.binWidth < 1 || spec.binsPerDir < 1 || spec.binsPerDir > 4096) {
            error = "naive Bayes bin width " + std::to_string(spec.binWidth) + " / bins " +
                    std::to_string(spec.binsPerDir) + " out of range (width >= 1, bins 1..4096)";
            return false;
        }
        const std::size_t rows = 2 * std::size_t{spec.binsPerDir} + 1;
        if (spec.logPrior.size() != k || spec.table.size() != n * rows * k) {
            error = "naive Bayes table size does not match N x (2B+1) x K";
            return false;
        }
        if (!allFinite(spec.logPrior) || !allFinite(spec.table)) {
            error = "naive Bayes table holds a NaN or infinite entry";
            return false;
        }
        if (!allLogProbs(spec.logPrior) || !allLogProbs(spec.table)) {
            error = "naive Bayes table holds an entry outside [-1e6, 0] (not a log-probability)";
            return false;
        }
        m.m_binWidth = spec.binWidth;
        m.m_bins = spec.binsPerDir;
        m.m_rows = rows;
        m.m_prior.assign(m.m_kPad, kPadPrior);
        std::copy(spec.logPrior.begin(), spec.logPrior.end(), m.m_prior.begin());
        m.m_table.assign(n * rows * m.m_kPad, 0.0F);
        for (std::size_t r = 0; r < n * rows; ++r)
            std::copy_n(spec.table.begin() + static_cast<std::ptrdiff_t>(r * k), k,
                        m.m_table.begin() + static_cast<std::ptrdiff_t>(r * m.m_kPad));
    } else if (spec.kind == ModelKind::Tree) {
        if (spec.depth < 1 || spec.depth > kMaxTreeDepth) {
            error = "tree depth " + std::to_string(spec.depth) + " out of range [1, " +
                    std::to_string(kMaxTreeDepth) + "]";
            return false;
        }
        const std::size_t leaves = std::size_t{1} << spec.depth;
        if (spec.nodeFeature.size() != leaves - 1 || spec.nodeThreshold.size() != leaves - 1 ||
            spec.leafClass.size() != leaves || spec.leafScore.size() != leaves) {
            error = "tree arrays do not match depth " + std::to_string(spec.depth);
            return false;
        }
        for (std::size_t i = 0; i < leaves - 1; ++i) {
            if (spec.nodeFeature[i] >= n) {
                error = "tree node " + std::to_string(i) + " tests feature " +
                        std::to_string(spec.nodeFeature[i]) + ", the model has " +
                        std::to_string(n);
                return false;
            }
        }
        for (std::size_t j = 0; j < leaves; ++j) {
            if (spec.leafClass[j] >= k) {
                error = "tree leaf " + std::to_string(j) + " names class " +
                        std::to_string(spec.leafClass[j]) + ", the model has " + std::to_string(k);
                return false;
            }
            const float s = spec.leafScore[j];
            if (!std::isfinite(s) || s < 0.0F || s > 1.0F) {
                error = "tree leaf " + std::to_string(j) + " score is not a number in [0, 1]";
                return false;
            }
        }
        m.m_depth = spec.depth;
        m.m_nodes.resize(leaves - 1);
        for (std::size_t i = 0; i + 1 < leaves; ++i)
            m.m_nodes[i] = {spec.nodeThreshold[i], spec.nodeFeature[i]};
        m.m_leafClass = spec.leafClass;
        m.m_leafScore = spec.leafScore;
    } else {
        error = "model kind " + std::to_string(static_cast<unsigned>(spec.kind)) +
                " is not 1 (naive Bayes) or 2 (tree)";
        return false;
    }
    m.m_spec = std::move(spec);
    out = std::move(m);
    return true;
}

template <std::size_t KP>
std::uint16_t Model::sumNb(const Features& f, float* acc) const noexcept {
    for (std::size_t c = 0; c < KP; ++c) acc[c] = m_prior[c];
    const float* base = m_table.data();
    for (std::size_t p = 0; p < m_packets; ++p) {
        const float* row = base + (p * m_rows + nbRow(f.size[p], m_binWidth, m_bins)) * KP;
        for (std::size_t c = 0; c < KP; ++c) acc[c] += row[c];
    }
    float mx = acc[0];
    for (std::size_t c = 1; c < KP; ++c) mx = acc[c] > mx ? acc[c] : mx;
    std::uint32_t mask = 0;
    for (std::size_t c = 0; c < KP; ++c) mask |= static_cast<std::uint32_t>(acc[c] == mx) << c;
    return static_cast<std::uint16_t>(std::countr_zero(mask));
}

std::uint16_t Model::sumNbAny(const Features& f, float* acc) const noexcept {
    const std::size_t kp = m_kPad;
    std::memcpy(acc, m_prior.data(), kp * sizeof(float));
    const float* base = m_table.data();
    for (std::size_t p = 0; p < m_packets; ++p) {
        const float* row = base + (p * m_rows + nbRow(f.size[p], m_binWidth, m_bins)) * kp;
        for (std::size_t c = 0; c < kp; ++c) acc[c] += row[c];
    }
    std::uint16_t best = 0;
    for (std::size_t c = 1; c < m_classes.size(); ++c)
        if (acc[c] > acc[best]) best = static_cast<std::uint16_t>(c);
    return best;
}

std::uint16_t Model::classNb(const Features& f, float* acc) const noexcept {
    if (m_kPad == 8) return sumNb<8>(f, acc);
    if (m_kPad == 16) return sumNb<16>(f, acc);
    return sumNbAny(f, acc);
}

std::size_t Model::leafOf(const Features& f) const noexcept {
    std::size_t i = 0;
    const Node* nodes = m_nodes.data();
    for (std::size_t d = 0; d < m_depth; ++d) {
        const Node n = nodes[i];
        i = 2 * i + 1 + static_cast<std::size_t>(f.size[n.feature] > n.threshold);
    }
    return i - ((std::size_t{1} << m_depth) - 1);
}

std::uint16_t Model::predictClass(const Features& f) const noexcept {
    if (m_kind == ModelKind::NaiveBayes) {
        alignas(64) std::array<float, kMaxClasses + 8> acc;
        return classNb(f, acc.data());
    }
    return m_leafClass[leafOf(f)];
}

Prediction Model::predict(const Features& f) const noexcept {
    const auto unknown = static_cast<std::uint16_t>(m_classes.size());
    if (f.count < m_minPackets) return {unknown, 0.0F};
    if (m_kind == ModelKind::NaiveBayes) {
        alignas(64) std::array<float, kMaxClasses + 8> acc;
        const std::uint16_t best = classNb(f, acc.data());
        // posterior of the best class = 1 / sum over classes of e^(acc - acc[best]); every
        // term is at most 1 and the best class's is 1, so the sum is in [1, K].
        // The padding (-1e30) adds e^-87 per padded class, nothing at float precision; so with
        // 8 or 16 classes the loop has a fixed length and vectorises.
        const float top = acc[best];
        const std::size_t k = m_kPad == 8 || m_kPad == 16 ? m_kPad : m_classes.size();
        const float sum = m_kPad == 8    ? expSum<8>(acc.data(), top)
                          : m_kPad == 16 ? expSum<16>(acc.data(), top)
                                         : expSumAny(acc.data(), top, k);
        return {best, 1.0F / sum};
    }
    const std::size_t leaf = leafOf(f);
    return {m_leafClass[leaf], m_leafScore[leaf]};
}

// --- file codec ------------------------------------------------------------------------------

namespace {

class Writer {
public:
    void u8(std::uint8_t v) { m_b.push_back(v); }
    void u16(std::uint16_t v) {
        u8(static_cast<std::uint8_t>(v));
        u8(static_cast<std::uint8_t>(v >> 8U));
    }
    void u32(std::uint32_t v) {
        u16(static_cast<std::uint16_t>(v));
        u16(static_cast<std::uint16_t>(v >> 16U));
    }
    void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
    void name(const std::string& s) {
        u8(static_cast<std::uint8_t>(std::min<std::size_t>(s.size(), 255)));
        m_b.insert(m_b.end(), s.begin(),
                   s.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(s.size(), 255)));
    }
    std::vector<std::uint8_t>& bytes() { return m_b; }

private:
    std::vector<std::uint8_t> m_b;
};

/// Bounds-checked little-endian reader: every read fails once the bytes run out.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> b) : m_b(b) {}
    bool have(std::size_t n) const noexcept { return m_b.size() - m_pos >= n; }
    std::size_t left() const noexcept { return m_b.size() - m_pos; }
    std::size_t pos() const noexcept { return m_pos; }
    bool u8(std::uint8_t& v) noexcept {
        if (!have(1)) return false;
        v = m_b[m_pos++];
        return true;
    }
    bool u16(std::uint16_t& v) noexcept {
        if (!have(2)) return false;
        v = static_cast<std::uint16_t>(m_b[m_pos] | (m_b[m_pos + 1] << 8U));
        m_pos += 2;
        return true;
    }
    bool u32(std::uint32_t& v) noexcept {
        if (!have(4)) return false;
        v = std::uint32_t{m_b[m_pos]} | (std::uint32_t{m_b[m_pos + 1]} << 8U) |
            (std::uint32_t{m_b[m_pos + 2]} << 16U) | (std::uint32_t{m_b[m_pos + 3]} << 24U);
        m_pos += 4;
        return true;
    }
    bool f32(float& v) noexcept {
        std::uint32_t u = 0;
        if (!u32(u)) return false;
        v = std::bit_cast<float>(u);
        return true;
    }
    bool name(std::string& s) {
        std::uint8_t len = 0;
        if (!u8(len) || !have(len)) return false;
        s.assign(reinterpret_cast<const char*>(m_b.data() + m_pos), len);
        m_pos += len;
        return true;
    }

private:
    std::span<const std::uint8_t> m_b;
    std::size_t m_pos = 0;
};

}  // namespace

std::vector<std::uint8_t> encodeModel(const ModelSpec& spec) {
    Writer w;
    for (const char c : kMagic) w.u8(static_cast<std::uint8_t>(c));
    w.u16(kModelVersion);
    w.u8(static_cast<std::uint8_t>(spec.kind));
    w.u8(spec.packets);
    w.u8(spec.minPackets);
    w.u8(0);
    w.u16(static_cast<std::uint16_t>(spec.classes.size()));
    w.u16(spec.packets);
    for (std::size_t i = 0; i < spec.packets; ++i) w.name(featureName(i));
    for (const auto& c : spec.classes) w.name(c);
    if (spec.kind == ModelKind::Tree) {
        w.u8(spec.depth);
        for (std::size_t i = 0; i < spec.nodeFeature.size(); ++i) {
            w.u8(spec.nodeFeature[i]);
            w.u32(static_cast<std::uint32_t>(i < spec.nodeThreshold.size() ? spec.nodeThreshold[i]
                                                                           : 0));
        }
        for (std::size_t j = 0; j < spec.leafClass.size(); ++j) {
            w.u16(spec.leafClass[j]);
            w.f32(j < spec.leafScore.size() ? spec.leafScore[j] : 0.0F);
        }
    } else {
        w.u16(spec.binWidth);
        w.u16(spec.binsPerDir);
        for (const float v : spec.logPrior) w.f32(v);
        for (const float v : spec.table) w.f32(v);
    }
    w.u32(crc32(w.bytes()));
    return std::move(w.bytes());
}

bool decodeModel(std::span<const std::uint8_t> bytes, Model& out, std::string& error) {
    if (bytes.size() < kMagic.size() + 4 ||
        std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
        error = "not a rowprobe classify model (the file does not start with \"RPCLSMDL\")";
        return false;
    }
    if (bytes.size() > kMaxModelBytes) {
        error = "larger than " + std::to_string(kMaxModelBytes >> 20U) + " MiB";
        return false;
    }
    Reader r(bytes);
    const auto truncated = [&](const char* what) {
        error = std::string("truncated: the file ends inside ") + what + " (" +
                std::to_string(bytes.size()) + " bytes)";
        return false;
    };
    std::array<std::uint8_t, 8> magic{};
    for (auto& b : magic) r.u8(b);
    std::uint16_t version = 0;
    std::uint8_t kind = 0;
    std::uint8_t n = 0;
    std::uint8_t minPackets = 0;
    std::uint8_t reserved = 0;
    std::uint16_t k = 0;
    std::uint16_t f = 0;
    if (!r.u16(version)) return truncated("the header");
    if (version != kModelVersion) {
        error = "version " + std::to_string(version) + ", this rowprobe reads version " +
                std::to_string(kModelVersion);
        return false;
    }
    if (!r.u8(kind) || !r.u8(n) || !r.u8(minPackets) || !r.u8(reserved) || !r.u16(k) || !r.u16(f))
        return truncated("the header");
    if (kind != 1 && kind != 2) {
        error = "model kind " + std::to_string(kind) + " is not 1 (naive Bayes) or 2 (tree)";
        return false;
    }
    if (n < 1 || n > kMaxPackets) {
        error = "N (packets) is " + std::to_string(n) + ", must be in [1, " +
                std::to_string(kMaxPackets) + "]";
        return false;
    }
    if (f != n) {
        error = "N mismatch: " + std::to_string(f) + " features for N = " + std::to_string(n);
        return false;
    }
    if (k < 1 || k > kMaxClasses) {
        error = "class count is " + std::to_string(k) + ", must be in [1, " +
                std::to_string(kMaxClasses) + "]";
        return false;
    }
    ModelSpec spec;
    spec.kind = static_cast<ModelKind>(kind);
    spec.packets = n;
    spec.minPackets = minPackets;
    for (std::size_t i = 0; i < f; ++i) {
        std::string name;
        if (!r.name(name)) return truncated("the feature names");
        if (name != featureName(i)) {
            error = "feature " + std::to_string(i + 1) + " is '" + name.substr(0, 64) +
                    "', this rowprobe computes '" + featureName(i) + "'";
            return false;
        }
    }
    spec.classes.resize(k);
    for (auto& c : spec.classes)
        if (!r.name(c)) return truncated("the class names");
    if (spec.kind == ModelKind::Tree) {
        if (!r.u8(spec.depth)) return truncated("the tree");
        if (spec.depth < 1 || spec.depth > kMaxTreeDepth) {
            error = "tree depth " + std::to_string(spec.depth) + " out of range [1, " +
                    std::to_string(kMaxTreeDepth) + "]";
            return false;
        }
        const std::size_t leaves = std::size_t{1} << spec.depth;
        if (r.left() != (leaves - 1) * 5 + leaves * 6 + 4) {
            if (r.left() < (leaves - 1) * 5 + leaves * 6 + 4) return truncated("the tree");
            error = "trailing bytes after the tree";
            return false;
        }
        spec.nodeFeature.resize(leaves - 1);
        spec.nodeThreshold.resize(leaves - 1);
        for (std::size_t i = 0; i + 1 < leaves; ++i) {
            std::uint32_t t = 0;
            r.u8(spec.nodeFeature[i]);
            r.u32(t);
            spec.nodeThreshold[i] = static_cast<std::int32_t>(t);
        }
        spec.leafClass.resize(leaves);
        spec.leafScore.resize(leaves);
        for (std::size_t j = 0; j < leaves; ++j) {
            r.u16(spec.leafClass[j]);
            r.f32(spec.leafScore[j]);
        }
    } else {
        if (!r.u16(spec.binWidth) || !r.u16(spec.binsPerDir)) return truncated("the NB header");
        if (spec.binWidth < 1 || spec.binsPerDir < 1 || spec.binsPerDir > 4096) {
            error = "naive Bayes bin width " + std::to_string(spec.binWidth) + " / bins " +
                    std::to_string(spec.binsPerDir) + " out of range (width >= 1, bins 1..4096)";
            return false;
        }
        const std::size_t rows = 2 * std::size_t{spec.binsPerDir} + 1;
        const std::size_t floats = k + std::size_t{n} * rows * k;
        if (r.left() != floats * 4 + 4) {
            if (r.left() < floats * 4 + 4) return truncated("the naive Bayes table");
            error = "trailing bytes after the naive Bayes table";
            return false;
        }
        spec.logPrior.resize(k);
        for (auto& v : spec.logPrior) r.f32(v);
        spec.table.resize(floats - k);
        for (auto& v : spec.table) r.f32(v);
    }
    const std::size_t body = r.pos();
    std::uint32_t stored = 0;
    r.u32(stored);
    if (crc32(bytes.first(body)) != stored) {
        error = "checksum mismatch (the file is corrupt or was edited)";
        return false;
    }
    return buildModel(std::move(spec), out, error);
}

bool loadModelFile(const std::string& path, Model& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot be opened";
        return false;
    }
    std::vector<std::uint8_t> bytes;
    std::array<char, 65536> buf;
    while (in) {
        in.read(buf.data(), buf.size());
        const auto got = static_cast<std::size_t>(in.gcount());
        if (bytes.size() + got > kMaxModelBytes) {
            error = "larger than " + std::to_string(kMaxModelBytes >> 20U) + " MiB";
            return false;
        }
        bytes.insert(bytes.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(got));
    }
    if (in.bad()) {
        error = "read error";
        return false;
    }
    return decodeModel(bytes, out, error);
}

}  // namespace rowprobe::classify
