// The classify models: file codec and validation on hostile files, classification against a
// plain reference computation, feature overflows, and the plugin driven flow by flow.
#include "process/classify/classify_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "flow_driver.hpp"
#include "rowprobe/errors.hpp"
#include "test_support.hpp"

namespace rowprobe::classify {
namespace {

using test::frame;

/// N = 2, K = 3, W = 4, B = 8: class c prefers initiator sizes near 10 + 10c at both positions.
ModelSpec smallNb() {
    ModelSpec s;
    s.kind = ModelKind::NaiveBayes;
    s.packets = 2;
    s.minPackets = 1;
    s.classes = {"a", "b", "c"};
    s.binWidth = 4;
    s.binsPerDir = 8;
    s.logPrior = {std::log(0.5F), std::log(0.3F), std::log(0.2F)};
    const std::size_t rows = 17;
    s.table.assign(2 * rows * 3, -5.0F);
    for (std::size_t p = 0; p < 2; ++p)
        for (std::size_t c = 0; c < 3; ++c)
            s.table[(p * rows + 1 + (10 + 10 * c) / 4) * 3 + c] = -0.1F;
    return s;
}

/// Depth 2: feature 0 <= 0 -> (feature 1 <= 100 ? a : b), else always-left padding -> c.
ModelSpec smallTree() {
    ModelSpec s;
    s.kind = ModelKind::Tree;
    s.packets = 2;
    s.minPackets = 2;
    s.classes = {"a", "b", "c"};
    s.depth = 2;
    s.nodeFeature = {0, 1, 0};
    s.nodeThreshold = {0, 100, std::numeric_limits<std::int32_t>::max()};
    s.leafClass = {0, 1, 2, 2};
    s.leafScore = {0.9F, 0.8F, 0.7F, 0.7F};
    return s;
}

Features feats(std::initializer_list<std::int32_t> sizes) {
    Features f;
    for (const auto s : sizes) f.size[f.count++] = s;
    return f;
}

std::string decodeError(const std::vector<std::uint8_t>& bytes) {
    Model m;
    std::string error;
    EXPECT_FALSE(decodeModel(bytes, m, error));
    return error;
}

/// Rewrites the trailing checksum after a test edits a byte, so that the edit itself is what
/// the loader meets.
void reseal(std::vector<std::uint8_t>& b) {
    const std::uint32_t c = crc32(std::span(b).first(b.size() - 4));
    for (int i = 0; i < 4; ++i) b[b.size() - 4 + i] = static_cast<std::uint8_t>(c >> (8 * i));
}

TEST(ClassifyModel, RoundTripsBothKinds) {
    for (const ModelSpec& spec : {smallNb(), smallTree()}) {
        Model m;
        std::string error;
        ASSERT_TRUE(decodeModel(encodeModel(spec), m, error)) << error;
        EXPECT_EQ(m.kind(), spec.kind);
        EXPECT_EQ(m.packets(), 2U);
        EXPECT_EQ(m.classes(), spec.classes);
    }
}

TEST(ClassifyModel, NaiveBayesMatchesAReferenceSum) {
    Model m;
    std::string error;
    const ModelSpec spec = smallNb();
    ASSERT_TRUE(buildModel(spec, m, error)) << error;
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::int32_t> size(-80, 80);
    for (int t = 0; t < 2000; ++t) {
        const Features f = feats({size(rng), size(rng)});
        std::array<double, 3> acc{};
        for (std::size_t c = 0; c < 3; ++c) {
            acc[c] = spec.logPrior[c];
            for (std::size_t p = 0; p < 2; ++p)
                acc[c] += spec.table[(p * 17 + nbRow(f.size[p], 4, 8)) * 3 + c];
        }
        const auto best =
            static_cast<std::uint16_t>(std::max_element(acc.begin(), acc.end()) - acc.begin());
        EXPECT_EQ(m.predictClass(f), best);
        const Prediction p = m.predict(f);
        EXPECT_EQ(p.cls, best);
        double sum = 0;
        for (const double a : acc) sum += std::exp(a - acc[best]);
        EXPECT_NEAR(p.score, 1.0 / sum, 1e-5);
    }
    EXPECT_EQ(m.label(m.predictClass(feats({10, 10}))), "a");
    EXPECT_EQ(m.label(m.predictClass(feats({30, 30}))), "c");
}

TEST(ClassifyModel, SizeQuantisationRows) {
    EXPECT_EQ(nbRow(0, 4, 8), 0U);
    EXPECT_EQ(nbRow(1, 4, 8), 1U);
    EXPECT_EQ(nbRow(4, 4, 8), 2U);
    EXPECT_EQ(nbRow(-4, 4, 8), 10U);
    EXPECT_EQ(nbRow(31, 4, 8), 8U);       // last bin: 28..31
    EXPECT_EQ(nbRow(65535, 4, 8), 8U);    // clamped into the last bin
    EXPECT_EQ(nbRow(-65535, 4, 8), 16U);  // 2B
}

TEST(ClassifyModel, TreeWalkAndShortFlowPolicy) {
    Model m;
    std::string error;
    ASSERT_TRUE(buildModel(smallTree(), m, error)) << error;
    EXPECT_EQ(m.predict(feats({-5, 50})).cls, 0);
    EXPECT_EQ(m.predict(feats({-5, 500})).cls, 1);
    EXPECT_EQ(m.predict(feats({5, -500})).cls, 2);
    EXPECT_FLOAT_EQ(m.predict(feats({-5, 500})).score, 0.8F);
    // minPackets 2: one packet is not enough -> unknown, score 0
    const Prediction p = m.predict(feats({-5}));
    EXPECT_EQ(p.cls, 3);
    EXPECT_EQ(m.label(p.cls), "unknown");
    EXPECT_EQ(p.score, 0.0F);
    // the branch-free class walk agrees with predict
    EXPECT_EQ(m.predictClass(feats({5, 7})), 2);
}

TEST(ClassifyModel, FeatureOverflowsClampAndNeverGiveNaN) {
    Features f;
    addPacket(f, 4, 70000, true);  // above a 16-bit length: clamped
    addPacket(f, 4, 65535, false);
    addPacket(f, 4, 0, true);  // no payload: not a feature
    addPacket(f, 4, 1, true);
    EXPECT_EQ(f.count, 3);
    EXPECT_EQ(f.size[0], 65535);
    EXPECT_EQ(f.size[1], -65535);
    EXPECT_EQ(f.size[2], 1);
    // Every entry at the lowest value a file may hold and priors far apart: the score stays a
    // number in (0, 1].
    ModelSpec s = smallNb();
    std::fill(s.table.begin(), s.table.end(), -1e6F);
    s.logPrior = {0.0F, -1e6F, -0.5F};
    Model m;
    std::string error;
    ASSERT_TRUE(buildModel(s, m, error)) << error;
    for (const auto& x : {feats({65535, -65535}), feats({0, 0}), feats({1})}) {
        const Prediction p = m.predict(x);
        EXPECT_TRUE(std::isfinite(p.score));
        EXPECT_GT(p.score, 0.0F);
        EXPECT_LE(p.score, 1.0F);
    }
}

TEST(ClassifyModelFile, RejectsWrongMagicVersionAndChecksum) {
    std::vector<std::uint8_t> b = encodeModel(smallNb());
    std::vector<std::uint8_t> magic = b;
    magic[0] = 'X';
    EXPECT_NE(decodeError(magic).find("RPCLSMDL"), std::string::npos);
    std::vector<std::uint8_t> version = b;
    version[8] = 2;
    reseal(version);
    EXPECT_NE(decodeError(version).find("version 2"), std::string::npos);
    std::vector<std::uint8_t> corrupt = b;
    corrupt[corrupt.size() / 2] ^= 0x40U;
    EXPECT_NE(decodeError(corrupt).find("checksum"), std::string::npos);
    EXPECT_NE(decodeError({}).find("RPCLSMDL"), std::string::npos);
}

TEST(ClassifyModelFile, RejectsEveryTruncation) {
    for (const ModelSpec& spec : {smallNb(), smallTree()}) {
        const std::vector<std::uint8_t> b = encodeModel(spec);
        for (std::size_t len = 0; len < b.size(); ++len) {
            std::vector<std::uint8_t> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
            if (cut.size() >= 12) reseal(cut);  // a truncated file with a valid checksum
            EXPECT_FALSE(decodeError(cut).empty()) << len;
        }
        std::vector<std::uint8_t> longer = b;
        longer.insert(longer.end() - 4, 0);
        reseal(longer);
        EXPECT_NE(decodeError(longer).find("trailing"), std::string::npos);
    }
}

TEST(ClassifyModelFile, RejectsHugeCountsNaNAndMismatches) {
    ModelSpec s = smallNb();
    s.table[5] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(decodeError(encodeModel(s)).find("NaN"), std::string::npos);
    s = smallNb();
    s.logPrior[0] = std::numeric_limits<float>::infinity();
    EXPECT_NE(decodeError(encodeModel(s)).find("infinite"), std::string::npos);
    s = smallNb();
    s.table[3] = 0.5F;  // a log-probability above 0
    EXPECT_NE(decodeError(encodeModel(s)).find("log-probability"), std::string::npos);
    s = smallNb();
    s.logPrior[2] = -3e38F;
    EXPECT_NE(decodeError(encodeModel(s)).find("log-probability"), std::string::npos);
    // a class count of 65535 with the bytes of 3: refused before anything is allocated
    std::vector<std::uint8_t> b = encodeModel(smallNb());
    b[14] = 0xFF;
    b[15] = 0xFF;
    reseal(b);
    EXPECT_NE(decodeError(b).find("class count"), std::string::npos);
    b = encodeModel(smallNb());
    b[14] = 200;
    b[15] = 0;  // 200 classes: allowed, but the names run out
    reseal(b);
    EXPECT_NE(decodeError(b).find("truncated"), std::string::npos);
    // bins per direction 4096 with a table of 8: truncated, not a 4096-row allocation first
    b = encodeModel(smallNb());
    const std::size_t nbHeader = b.size() - 4 - (3 + 2 * 17 * 3) * 4 - 4;
    b[nbHeader + 2] = 0x00;
    b[nbHeader + 3] = 0x10;
    reseal(b);
    EXPECT_NE(decodeError(b).find("truncated"), std::string::npos);
    // N mismatch: 3 features for N = 2
    b = encodeModel(smallNb());
    b[16] = 3;
    reseal(b);
    EXPECT_NE(decodeError(b).find("N mismatch"), std::string::npos);
    // N out of range
    ModelSpec big = smallNb();
    big.packets = 9;
    EXPECT_NE(decodeError(encodeModel(big)).find("N (packets)"), std::string::npos);
    // tree: a node naming a feature the model does not have, a leaf naming no class, a bad score
    ModelSpec t = smallTree();
    t.nodeFeature[1] = 5;
    EXPECT_NE(decodeError(encodeModel(t)).find("feature 5"), std::string::npos);
    t = smallTree();
    t.leafClass[2] = 3;
    EXPECT_NE(decodeError(encodeModel(t)).find("class 3"), std::string::npos);
    t = smallTree();
    t.leafScore[0] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(decodeError(encodeModel(t)).find("score"), std::string::npos);
    t = smallTree();
    t.depth = 17;
    EXPECT_NE(decodeError(encodeModel(t)).find("depth"), std::string::npos);
    // reserved and duplicate class names
    ModelSpec names = smallNb();
    names.classes = {"a", "unknown", "c"};
    EXPECT_NE(decodeError(encodeModel(names)).find("reserved"), std::string::npos);
    names.classes = {"a", "a", "c"};
    EXPECT_NE(decodeError(encodeModel(names)).find("twice"), std::string::npos);
}

std::filesystem::path writeModel(const std::vector<std::uint8_t>& bytes, const char* name) {
    const auto path = test::tempDir() / name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
}

TEST(ClassifyPlugin, LabelsOnTheNthPacketAndStops) {
    const auto path = writeModel(encodeModel(smallNb()), "nb.rpcm");
    test::FlowDriver d("classify;model=" + path.string());
    EXPECT_EQ(d.packet(frame(6, test::kClient, 1000, test::kServer, 80, {})),
              kContinue);  // no payload
    EXPECT_EQ(d.packet(frame(6, test::kClient, 1000, test::kServer, 80, test::Bytes(30, 'x'))),
              kContinue);
    EXPECT_EQ(d.packet(frame(6, test::kClient, 1000, test::kServer, 80, test::Bytes(30, 'x'))),
              kDone);
    const auto out = d.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("classify_label"), "c");
    EXPECT_EQ(out[0].at("classify_packets"), "2");
}

TEST(ClassifyPlugin, ShortFlowLabelledAtExportOrUnknown) {
    const auto nb = writeModel(encodeModel(smallNb()), "nb2.rpcm");
    test::FlowDriver d("classify;model=" + nb.string());
    EXPECT_EQ(d.packet(frame(17, test::kClient, 5000, test::kServer, 53, test::Bytes(10, 'q'))),
              kContinue);
    auto out = d.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("classify_label"), "a");
    EXPECT_EQ(out[0].at("classify_packets"), "1");
    const auto tree = writeModel(encodeModel(smallTree()), "tree.rpcm");  // minPackets 2
    test::FlowDriver t("classify;model=" + tree.string());
    t.packet(frame(17, test::kClient, 5000, test::kServer, 53, test::Bytes(10, 'q')));
    out = t.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("classify_label"), "unknown");
}

TEST(ClassifyPlugin, LargestPacketsAndResponderSide) {
    const auto path = writeModel(encodeModel(smallTree()), "tree2.rpcm");
    test::FlowDriver d("classify;model=" + path.string());
    // 65495 bytes of TCP payload: the largest an IPv4 packet of 65535 bytes carries
    d.packet(frame(6, test::kClient, 1000, test::kServer, 80, test::Bytes(65495, 'x')));
    EXPECT_EQ(d.packet(frame(6, test::kServer, 80, test::kClient, 1000, test::Bytes(65495, 'y'))),
              kDone);
    const auto out = d.write();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].at("classify_label"), "c");  // feature 0 > 0
}

TEST(ClassifyPlugin, BadModelFilesAreConfigErrorsNamingTheFile) {
    const auto missing = test::tempDir() / "missing.rpcm";
    try {
        test::FlowDriver d("classify;model=" + missing.string());
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find(missing.string()), std::string::npos) << e.render();
        EXPECT_NE(e.render().find("cannot be opened"), std::string::npos) << e.render();
    }
    std::vector<std::uint8_t> b = encodeModel(smallNb());
    b.resize(b.size() / 2);
    const auto cut = writeModel(b, "cut.rpcm");
    try {
        test::FlowDriver d("classify;model=" + cut.string());
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find("cut.rpcm"), std::string::npos) << e.render();
    }
    const auto ok = writeModel(encodeModel(smallNb()), "n2.rpcm");
    try {
        test::FlowDriver d("classify;model=" + ok.string() + ";packets=4");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find("N mismatch"), std::string::npos) << e.render();
    }
}

}  // namespace
}  // namespace rowprobe::classify

namespace rowprobe::classify {
namespace {

TEST(ClassifyPlugin, IpfixElementsOnlyUnderTheOperatorsPen) {
    const auto path = test::tempDir() / "pen.rpcm";
    const auto bytes = encodeModel(smallTree());
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    test::FlowDriver none("classify;model=" + path.string());
    for (const FieldSpec& f : none.plugin().fields()) EXPECT_FALSE(f.ipfix.exported()) << f.name;
    test::FlowDriver pen("classify;model=" + path.string() + ";pen=32473");
    const auto fields = pen.plugin().fields();
    ASSERT_EQ(fields.size(), 3U);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(fields[i].ipfix.pen, 32473U);
        EXPECT_EQ(fields[i].ipfix.id, i + 1);
    }
    EXPECT_EQ(fields[0].name, "classify_label");
    EXPECT_EQ(fields[1].name, "classify_score");
    EXPECT_EQ(fields[2].unirec.name, "CLASSIFY_PACKETS");
}

}  // namespace
}  // namespace rowprobe::classify
