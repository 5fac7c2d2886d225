// rowprobe-train's library: labelled flows in, classify models out (the model format and the
// features: process/classify/classify_model.hpp).
//
// Data flow:
//   rowprobe JSON lines with pstats (ppi_pkt_lengths, ppi_pkt_directions, the 5-tuple)
//     + labels joined on the direction-free 5-tuple, from one of
//       - the ndpi plugin's JSON (ndpi_app "TLS.Google", ndpi_category),
//       - an nDPI .out file (ndpiReader -v ...; only "Confidence: DPI*" flows by default),
//       - a CSV of proto,src_ip,src_port,dst_ip,dst_port,label
//   -> Samples (features + class index) -> small classes merged into "other" or dropped
//   -> seeded split (held-back fraction or k folds) -> trainNaiveBayes / trainTree -> ModelSpec
//   -> evaluate on the held-out flows: confusion matrix, per-class precision/recall/F1, the
//      majority-class baseline.
// A 5-tuple that two sources label differently is dropped as ambiguous. Start-up tool code:
// allocation and exceptions are fine here, nothing runs on the packet path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "process/classify/classify_model.hpp"

namespace rowprobe::classify::train {

/// Which part of an nDPI name becomes the class: "TLS.Google" -> full "TLS.Google",
/// master "TLS", app "Google" (a name without '.' is all three); category: nDPI's category.
enum class LabelPart : std::uint8_t { Full, Master, App, Category };

struct Flow {
    std::string key;  ///< direction-free 5-tuple, see tupleKey
    Features features;
    std::string label;  ///< empty until joined (or from ndpi_* keys of the same line)
    std::string category;
    std::string confidence;  ///< the line's ndpi_confidence ("DPI", "Match by port", ...), if any
};

/// "6|10.0.0.1|80|10.0.0.2|5000" with the smaller (ip, port) first.
std::string tupleKey(int proto, const std::string& ipA, int portA, const std::string& ipB,
                     int portB);

/// Reads rowprobe JSON lines (pstats fields give the features; ndpi_app / ndpi_category, when
/// present, the label). Lines without the 5-tuple are skipped. Throws on an unreadable file.
std::vector<Flow> readRowprobeJson(const std::string& path, std::size_t packets);

/// Labels keyed by tupleKey; "" = ambiguous (two different labels).
using LabelMap = std::map<std::string, std::string>;

/// nDPI `.out` (ndpiReader -v 2 style flow lines). `guesses`: also take flows nDPI labelled by
/// port or IP only. Unknown flows give no label.
LabelMap readNdpiOut(const std::string& path, LabelPart part, bool guesses);
/// The ndpi plugin's JSON lines (ndpi_app, ndpi_category). `guesses`: as for readNdpiOut, by
/// the line's ndpi_confidence; a line without that key is taken as it is.
LabelMap readNdpiJson(const std::string& path, LabelPart part, bool guesses);
/// CSV: proto,src_ip,src_port,dst_ip,dst_port,label (header and '#' lines skipped).
LabelMap readLabelCsv(const std::string& path);

/// Whether nDPI's confidence name says it read the payload ("DPI", "DPI (cache)", "DPI
/// (partial)", ...), not a match by port or IP. An empty name (no such key) counts as DPI.
bool dpiConfidence(std::string_view confidence) noexcept;

/// nDPI name -> class by `part` ("Unknown" and empty give "").
std::string labelOf(const std::string& ndpiName, const std::string& category, LabelPart part);

struct Sample {
    Features features;
    std::uint16_t cls = 0;
};

struct Dataset {
    std::vector<std::string> classes;
    std::vector<Sample> samples;
    std::vector<std::string> merged;   ///< classes folded into "other"
    std::vector<std::string> dropped;  ///< classes left out (and "other" when too small)
    std::size_t unlabelled = 0;        ///< flows without a label (nDPI could not tell)
    std::size_t ambiguous = 0;         ///< flows whose 5-tuple had two labels
    std::size_t tooShort = 0;          ///< labelled flows with fewer than minPackets packets
};

struct DatasetOptions {
    std::size_t minSamples = 10;
    bool mergeSmall = true;  ///< else drop
    std::size_t minPackets = 1;
};

/// Builds the class list (sorted by name) and samples from labelled flows, in a canonical
/// order (by 5-tuple and features) whatever the order of `flows`.
Dataset buildDataset(const std::vector<Flow>& flows, const DatasetOptions& opt);

/// A reproducible permutation of 0..n-1 (splitmix64 + Fisher-Yates; the same on every
/// platform, unlike std::shuffle).
std::vector<std::size_t> shuffledIndices(std::size_t n, std::uint64_t seed);

struct NbOptions {
    std::uint16_t binWidth = 4;
    std::uint16_t binsPerDir = 384;
    double alpha = 1.0;           ///< Laplace smoothing of the direction/absence shares
    double varianceFloor = 25.0;  ///< added to every variance (bytes^2)
};
struct TreeOptions {
    std::size_t maxDepth = 10;
    std::size_t minLeaf = 2;
    double confidence = 0.25;  ///< C4.5's pruning confidence (0: no pruning)
};

ModelSpec trainNaiveBayes(const Dataset& d, const std::vector<std::size_t>& rows, std::size_t n,
                          std::size_t minPackets, const NbOptions& opt);
ModelSpec trainTree(const Dataset& d, const std::vector<std::size_t>& rows, std::size_t n,
                    std::size_t minPackets, const TreeOptions& opt);

/// Results on held-out rows. Row/column `classes.size()` of the matrix is `unknown`.
struct Evaluation {
    std::vector<std::vector<std::size_t>> confusion;  ///< [truth][predicted]
    std::size_t total = 0;
    std::size_t correct = 0;
    std::size_t baselineCorrect = 0;  ///< majority class of the training rows
    std::string baselineClass;
    double accuracy() const { return total == 0 ? 0 : double(correct) / double(total); }
    double baseline() const { return total == 0 ? 0 : double(baselineCorrect) / double(total); }
    double precision(std::size_t c) const;
    double recall(std::size_t c) const;
    double f1(std::size_t c) const;
    double macroF1(std::size_t classes) const;
    void add(const Evaluation& other);
};

Evaluation evaluate(const Model& m, const Dataset& d, const std::vector<std::size_t>& train,
                    const std::vector<std::size_t>& test);

/// The report printed by the tool: per-class precision/recall/F1 (Markdown table), confusion
/// matrix, accuracy against the majority baseline.
std::string formatReport(const Dataset& d, const Evaluation& e, const std::string& title);

}  // namespace rowprobe::classify::train
