// Statistical flow classifiers of the `classify` plugin and `rowprobe-train`: a flow's first N
// packets that carry payload (N <= 8, 4 by default, as the seed research) become N
// direction-signed sizes, and a model turns them into a class and a score.
//
// Features. Feature i (0-based) is the payload length on the wire of the flow's (i+1)-th packet
// with payload, positive from the initiator, negative from the responder, 0 when the flow had
// fewer packets (`pstats`' `ppi_pkt_lengths` x `ppi_pkt_directions`, the same packets). Sizes
// are clamped to [-65535, 65535]. Names in the model file: "pkt1_signed_size", ...
//
// Kind 1, Gaussian naive Bayes as lookup tables (the seed's layout). A size is quantised to a
// row: row 0 = absent, 1..B = initiator sizes, B+1..2B = responder sizes, with
// bin = min(|size|, W*B - 1) / W (W = bin width, B = bins per direction, both in the file).
// The table holds, for each position and row, K contiguous floats: the log-likelihood of that
// row under each class (log P(direction | class, position) + the Gaussian log-density of the bin's
// centre, or log P(absent | class, position)). Classifying = K priors + N rows of K adds, then
// an argmax:
//
//   table  [position 0: row 0 | row 1 | ... | row 2B] [position 1: ...] ...
//   row    [class 0, class 1, ..., class K-1, pad to a multiple of 8]   (floats)
//
// Rows are padded to 8 or 16 classes (or a multiple of 8 above 16); the padding's prior is
// -1e30, so a padded class never wins, and with 8 or 16 the sums, the maximum and the index of
// the maximum (a bit mask of the classes equal to it, then its lowest bit) are fixed-length
// loops the compiler turns into a few vector instructions, without a branch on the data. A flow
// costs N row loads (W = 4, B = 384: 769 rows x N = 4 x 16 classes x 4 bytes = 197 KB,
// L2-resident). Every NB entry must be a log-probability in [-1e6, 0].
//
// Kind 2, a C4.5-style decision tree compiled to a complete binary tree of fixed depth D
// (D <= 16) stored breadth-first in flat arrays:
//
//   node i (0 <= i < 2^D - 1): {threshold int32, feature uint32}, 8 bytes; children 2i+1, 2i+2
//   leaf j (0 <= j < 2^D):     class[j] (uint16), score[j] (float)
//
// The walk is D iterations of `i = 2*i + 1 + (x[feature[i]] > threshold[i])`, then leaf
// i - (2^D - 1): no data-dependent branch at all, so no misprediction per node. A learned leaf
// above depth D is padded with nodes whose threshold is INT32_MAX (always left) above copies
// of the leaf. The score of a leaf is the Laplace-smoothed share of its class among the
// training flows that reached it.
//
// Short flows: a flow that ends with fewer than N packets with payload is classified at export
// with the features it has (the missing ones 0 = absent, which both kinds learn from training
// flows of that length), unless it has fewer than `minPackets` (in the file): then `unknown`.
//
// File format (little-endian), validated as a whole before use (loadModel):
//   "RPCLSMDL" | u16 version (1) | u8 kind | u8 N | u8 minPackets | u8 0 | u16 K (<= 255) | u16 F (= N)
//   | F x (u8 length, name) | K x (u8 length, name) | kind body | u32 CRC-32 of all before it
//   NB body:   u16 W | u16 B | K x f32 log prior | N x (2B+1) x K x f32 table
//   tree body: u8 D | (2^D - 1) x (u8 feature, i32 threshold) | 2^D x (u16 class, f32 score)
// Every float must be finite; a leaf's score in [0, 1]; names 1..64 printable bytes, class names
// unique and not "unknown". Thread safety: a loaded model is immutable, shared by all workers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rowprobe::classify {

inline constexpr std::size_t kMaxPackets = 8;
inline constexpr std::size_t kMaxClasses = 255;
inline constexpr std::size_t kMaxTreeDepth = 16;
inline constexpr std::uint16_t kModelVersion = 1;
inline constexpr std::size_t kMaxModelBytes = 64U << 20U;
inline constexpr std::string_view kMagic = "RPCLSMDL";
inline constexpr std::string_view kUnknownLabel = "unknown";
inline constexpr std::int32_t kMaxSize = 65535;

enum class ModelKind : std::uint8_t { NaiveBayes = 1, Tree = 2 };

/// The direction-signed sizes of a flow's first packets with payload.
struct Features {
    std::array<std::int32_t, kMaxPackets> size{};  ///< 0 = absent
    std::uint8_t count = 0;                        ///< packets recorded (<= N)
};

/// Appends one packet (no-op once `n` are recorded); clamps the size.
inline void addPacket(Features& f, std::size_t n, std::uint32_t payloadLen, bool forward) noexcept {
    if (f.count >= n || payloadLen == 0) return;
    const auto s = static_cast<std::int32_t>(payloadLen > 65535U ? 65535U : payloadLen);
    f.size[f.count++] = forward ? s : -s;
}

/// What a model says about one flow. `cls` == classes().size() means `unknown`.
struct Prediction {
    std::uint16_t cls = 0;
    float score = 0.0F;
};

/// Everything a model file holds, in the form the trainer builds and `saveModel` writes.
struct ModelSpec {
    ModelKind kind = ModelKind::NaiveBayes;
    std::uint8_t packets = 4;
    std::uint8_t minPackets = 1;
    std::vector<std::string> classes;
    // NB
    std::uint16_t binWidth = 4;
    std::uint16_t binsPerDir = 384;
    std::vector<float> logPrior;  ///< K
    std::vector<float> table;     ///< N x (2B+1) x K, unpadded
    // tree
    std::uint8_t depth = 0;
    std::vector<std::uint8_t> nodeFeature;    ///< 2^D - 1
    std::vector<std::int32_t> nodeThreshold;  ///< 2^D - 1
    std::vector<std::uint16_t> leafClass;     ///< 2^D
    std::vector<float> leafScore;             ///< 2^D
};

/// The name of feature `i` in model files ("pkt1_signed_size").
std::string featureName(std::size_t i);

/// NB row of a signed size (0 = absent).
inline std::size_t nbRow(std::int32_t s, std::uint32_t width, std::uint32_t bins) noexcept {
    if (s == 0) return 0;
    const std::uint32_t mag =
        s > 0 ? static_cast<std::uint32_t>(s) : static_cast<std::uint32_t>(-s);
    const std::uint32_t cap = width * bins - 1;
    const std::uint32_t bin = (mag < cap ? mag : cap) / width;
    return s > 0 ? 1 + bin : 1 + bins + bin;
}

/// A loaded, validated model, laid out for classification (see the design comment).
class Model {
public:
    ModelKind kind() const noexcept { return m_kind; }
    std::size_t packets() const noexcept { return m_packets; }
    std::size_t minPackets() const noexcept { return m_minPackets; }
    const std::vector<std::string>& classes() const noexcept { return m_classes; }
    /// The class name, or "unknown" for classes().size().
    std::string_view label(std::uint16_t cls) const noexcept {
        return cls < m_classes.size() ? std::string_view(m_classes[cls]) : kUnknownLabel;
    }

    /// The class alone (the seed's measure): no allocation, no branch per tree node.
    std::uint16_t predictClass(const Features& f) const noexcept;
    /// Class and score (NB: posterior probability of the class; tree: the leaf's share), with
    /// the model's short-flow policy applied. Score is finite, in [0, 1].
    Prediction predict(const Features& f) const noexcept;

    const ModelSpec& spec() const noexcept { return m_spec; }

    /// A tree node as walked: one 8-byte load per level.
    struct Node {
        std::int32_t threshold;
        std::uint32_t feature;
    };

private:
    friend bool buildModel(ModelSpec spec, Model& out, std::string& error);
    template <std::size_t KP>
    std::uint16_t sumNb(const Features& f, float* acc) const noexcept;
    std::uint16_t sumNbAny(const Features& f, float* acc) const noexcept;
    std::uint16_t classNb(const Features& f, float* acc) const noexcept;
    std::size_t leafOf(const Features& f) const noexcept;

    ModelKind m_kind = ModelKind::NaiveBayes;
    std::size_t m_packets = 0;
    std::size_t m_minPackets = 0;
    std::size_t m_kPad = 0;
    std::uint32_t m_binWidth = 1;
    std::uint32_t m_bins = 1;
    std::size_t m_rows = 0;
    std::vector<std::string> m_classes;
    std::vector<float> m_prior;  ///< kPad
    std::vector<float> m_table;  ///< N x rows x kPad
    std::size_t m_depth = 0;
    std::vector<Node> m_nodes;
    std::vector<std::uint16_t> m_leafClass;
    std::vector<float> m_leafScore;
    ModelSpec m_spec;
};

/// Validates `spec` (the checks of the design comment) and lays it out; false with `error`.
bool buildModel(ModelSpec spec, Model& out, std::string& error);

/// Serialises `spec` (with its checksum). The spec is not validated: tests write bad files.
std::vector<std::uint8_t> encodeModel(const ModelSpec& spec);

/// Parses and validates a model file's bytes. Never throws on hostile input (only on
/// std::bad_alloc, which the size checks keep from happening: every count is checked against
/// the bytes left before anything is allocated). False with `error` saying what is wrong.
bool decodeModel(std::span<const std::uint8_t> bytes, Model& out, std::string& error);

/// Reads and decodes a file (at most kMaxModelBytes). False with `error`.
bool loadModelFile(const std::string& path, Model& out, std::string& error);

/// CRC-32 (IEEE 802.3, zlib's).
std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace rowprobe::classify
