// The `adaptive` policy and its configuration file (storage/policies/adaptive_config.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "adaptive_config.hpp"
#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

std::string writeFile(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("rowprobe-adaptive-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path) << text;
    return path.string();
}

/// The ConfigError text of parsing `text`, or "" when it parses.
std::string parseError(const std::string& text) {
    try {
        parseAdaptiveConfig(text, "t.cfg");
    } catch (const ConfigError& e) {
        return e.details().problem;
    }
    return "";
}

const std::string kValid16 =
    "# rowprobe adaptive row policy\n"
    "rowprobe-adaptive 1\n"
    "line 16\n"
    "tuples 2:0:0 2:1:0 1:2:0 11:4:1   # count:target:increment\n"
    "insert 8 8 8 8\n"
    "offsets -1 0 0 2\n"
    "classifier j48-v1\n"
    "fitness 12345\n";

TEST(AdaptiveConfig, ParsesTheDocumentedFormatAndRoundTrips) {
    const AdaptiveConfig c = parseAdaptiveConfig(kValid16, "t.cfg");
    EXPECT_EQ(c.line, 16U);
    ASSERT_EQ(c.tuples.size(), 4U);
    EXPECT_EQ(c.tuples[3], (AdaptiveTuple{11, 4, true}));
    EXPECT_EQ(c.targets(),
              (std::vector<unsigned>{0, 0, 1, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
    EXPECT_EQ(c.offsets, (std::array<int, 4>{-1, 0, 0, 2}));
    EXPECT_EQ(c.classifier, AdaptiveClassifier::J48v1);
    EXPECT_EQ(c.fitness, 12345U);
    EXPECT_EQ(parseAdaptiveConfig(formatAdaptiveConfig(c), "again.cfg"), c);
    EXPECT_EQ(AdaptiveConfig::lruEquivalent(8).validate(), "");
    EXPECT_EQ(parseAdaptiveConfig(formatAdaptiveConfig(AdaptiveConfig::lruEquivalent(32)), "x"),
              AdaptiveConfig::lruEquivalent(32));
}

TEST(AdaptiveConfig, ExampleFromTheDesignUnpacksAsDocumented) {
    // Worked example: L = 8, {2→0}{2→1}{1→2}{3→4 incrementing} = 0,0,1,1,2,4,5,6.
    const AdaptiveConfig c = parseAdaptiveConfig(
        "rowprobe-adaptive 1\nline 8\ntuples 2:0:0 2:1:0 1:2:0 3:4:1\ninsert 4 4 4 4\noffsets 0 0 "
        "0 0\n",
        "t");
    EXPECT_EQ(c.targets(), (std::vector<unsigned>{0, 0, 1, 1, 2, 4, 5, 6}));
}

TEST(AdaptiveConfig, RejectsInvalidFilesNamingTheFileAndLine) {
    auto with = [](const std::string& key, const std::string& value) {
        std::string t = kValid16;
        const auto at = t.find("\n" + key + " ");
        const auto end = t.find('\n', at + 1);
        return t.substr(0, at + 1) + key + " " + value + t.substr(end);
    };
    EXPECT_NE(parseError("rowprobe-adaptive 2\n").find("t.cfg:1: unsupported version 2"),
              std::string::npos);
    EXPECT_NE(parseError("line 16\n").find("t.cfg:1: not a rowprobe adaptive configuration"),
              std::string::npos);
    EXPECT_NE(parseError("").find("empty file"), std::string::npos);
    EXPECT_NE(parseError(with("tuples", "2:0:0 2:1:0 1:2:0 10:4:1"))
                  .find("t.cfg:4: tuples: counts sum to 15"),
              std::string::npos);
    EXPECT_NE(parseError(with("tuples", "2:1:0 2:1:0 1:2:0 11:4:1"))
                  .find("t.cfg:4: tuples: tuple 1 (2:1:0) must target 0"),
              std::string::npos);
    EXPECT_NE(
        parseError(with("tuples", "2:0:0 2:3:0 1:2:0 11:4:1")).find("never move a flow backwards"),
        std::string::npos);
    EXPECT_NE(
        parseError(with("tuples", "2:0:0 2:1:1 1:1:0 11:4:1")).find("targets must not decrease"),
        std::string::npos);
    EXPECT_NE(
        parseError(with("tuples", "")).find("t.cfg:4: tuples: 1 to 16 tuples expected for line 16"),
        std::string::npos);
    EXPECT_NE(parseError(with("tuples", "2:0 2:1:0 1:2:0 11:4:1"))
                  .find("tuple 1 '2:0' is not count:target:increment"),
              std::string::npos);
    EXPECT_NE(parseError(with("insert", "8 8 16 8"))
                  .find("t.cfg:5: insert: position 16 is outside the row [0, 15]"),
              std::string::npos);
    EXPECT_NE(parseError(with("insert", "8 8")).find("'insert' takes 4 values, got 2"),
              std::string::npos);
    EXPECT_NE(
        parseError(with("offsets", "0 0 -1 0")).find("t.cfg:6: offsets: must be non-decreasing"),
        std::string::npos);
    EXPECT_NE(parseError(with("offsets", "-9 0 0 0")).find("outside [-8, 8]"), std::string::npos);
    EXPECT_NE(parseError(with("classifier", "j48-v9")).find("t.cfg:7: unknown classifier 'j48-v9'"),
              std::string::npos);
    EXPECT_NE(parseError(kValid16 + "insert 1 1 1 1\n")
                  .find("t.cfg:9: 'insert' given twice (first on line 5)"),
              std::string::npos);
    EXPECT_NE(parseError(kValid16 + "colour blue\n").find("t.cfg:9: unknown key 'colour'"),
              std::string::npos);
    EXPECT_NE(parseError("rowprobe-adaptive 1\nline 16\ninsert 8 8 8 8\noffsets 0 0 0 0\n")
                  .find("missing 'tuples'"),
              std::string::npos);
    EXPECT_EQ(parseError(kValid16), "");
}

TEST(AdaptiveConfig, AFileForAnotherLineIsRejectedByTheTable) {
    const std::string path = writeFile("l16.cfg", kValid16);
    try {
        TableHarness h("cache;size=8;seed=1;policy=adaptive;line=8;adaptive-config=" + path);
        FAIL() << "a line-16 configuration must not load into a line-8 table";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "adaptive-config");
        EXPECT_NE(e.details().problem.find(
                      path + ":3: the configuration is for line 16, the table has line 8"),
                  std::string::npos)
            << e.details().problem;
    }
    EXPECT_NO_THROW(
        TableHarness("cache;size=8;seed=1;policy=adaptive;line=16;adaptive-config=" + path));
    try {
        TableHarness h("cache;size=8;seed=1;policy=adaptive;adaptive-config=/nonexistent/x.cfg");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(e.details().problem.find("cannot open"), std::string::npos);
    }
    std::filesystem::remove(path);
}

TEST(AdaptivePolicy, DefaultTableIsHitForHitIdenticalToLruWhenFlowsLeaveOnlyByEviction) {
    for (unsigned line : {4U, 8U, 16U, 32U}) {
        std::mt19937 rng(line);
        std::vector<ParsedPacket> pkts;
        for (int i = 0; i < 20000; ++i) {
            const auto port = static_cast<std::uint16_t>(std::min(rng() % 3000, rng() % 3000));
            pkts.push_back(packet("10.0.1.1", port, "10.0.2.2", 443, at(i * 0.001)));
        }
        auto run = [&](const std::string& policy) {
            TableHarness h("cache;size=7;seed=3;inactive=100000;active=100000;policy=" + policy +
                           ";line=" + std::to_string(line));
            h.feed(pkts);
            return std::make_pair(h.stats(), h.exported());
        };
        const auto [lruStats, lruOut] = run("lru");
        const auto [adStats, adOut] = run("adaptive");
        EXPECT_GT(lruStats.missEvict, 1000U);
        EXPECT_EQ(adStats.hits, lruStats.hits) << "line " << line;
        EXPECT_EQ(adStats.missEvict, lruStats.missEvict);
        EXPECT_EQ(adStats.positionSum, lruStats.positionSum);
        EXPECT_EQ(adStats.positionSqSum, lruStats.positionSqSum);
        ASSERT_EQ(adOut.size(), lruOut.size());
        for (std::size_t i = 0; i < adOut.size(); ++i) {
            ASSERT_EQ(adOut[i].srcPort, lruOut[i].srcPort) << "export " << i;
            ASSERT_EQ(adOut[i].packets, lruOut[i].packets);
        }
    }
}

TEST(AdaptivePolicy, HitsMoveToTheConfiguredTargetAndNewFlowsToTheInsertPosition) {
    // L = 8: T = 0,0,1,2,3,4,5,6 (a hit moves one position up, except at the front); full rows
    // insert at 6.
    const std::string path =
        writeFile("up1.cfg",
                  "rowprobe-adaptive 1\nline 8\ntuples 2:0:0 6:1:1\ninsert 6 6 6 6\n"
                  "offsets 0 0 0 0\nclassifier none\n");
    TableHarness h("cache;size=8;seed=5;line=8;policy=adaptive;adaptive-config=" + path);
    const auto f = h.flowsInRow(4, 10, at(0));
    h.feed(std::vector<ParsedPacket>(f.begin(), f.begin() + 8), 1);  // slots = ranks 0..7
    auto positionOf = [&](std::size_t i) { return h.find(f[i].key)->position; };
    EXPECT_EQ(positionOf(5), 5U);
    ParsedPacket p = f[5];
    p.ts = at(1);
    h.feed(p);
    EXPECT_EQ(positionOf(5), 4U);
    EXPECT_EQ(positionOf(4), 5U);
    h.feed(p);
    EXPECT_EQ(positionOf(5), 3U);
    ParsedPacket n = f[8];
    n.ts = at(2);
    h.feed(n);  // evicts rank 7, enters at 6
    EXPECT_EQ(positionOf(8), 6U);
    EXPECT_EQ(h.exportedWith(EndReason::LackOfResources).size(), 1U);
    std::filesystem::remove(path);
}

TEST(AdaptivePolicy, ClassOffsetsShiftTheHitTarget) {
    // LRU targets, classifier j48-v1: a RST (NEVER, offset +3) moves a flow only to rank 3, an
    // ordinary ACK (MEDIUM, offset 0) moves it to the front.
    const std::string path =
        writeFile("cls.cfg",
                  "rowprobe-adaptive 1\nline 8\ntuples 4:0:0 4:0:0\ninsert 4 4 4 4\n"
                  "offsets 0 0 0 3\nclassifier j48-v1\n");
    TableHarness h("cache;size=8;seed=5;line=8;policy=adaptive;adaptive-config=" + path);
    std::vector<ParsedPacket> tcp;  // eight TCP flows of row 4
    for (std::uint32_t port = 2000; tcp.size() < 8; ++port) {
        ParsedPacket p =
            packet("10.0.0.1", static_cast<std::uint16_t>(port), "10.9.9.9", 80, at(0), kSyn, 60);
        if (h.table().rowOf(p.key) == 4) tcp.push_back(p);
    }
    h.feed(tcp, 1);
    ParsedPacket rst = tcp[7];
    rst.ts = at(1);
    rst.tcpFlags = kRst | kAck;
    h.feed(rst);
    EXPECT_EQ(h.find(rst.key)->position, 3U);
    ParsedPacket ack = tcp[6];
    ack.ts = at(1);
    ack.tcpFlags = kAck;
    ack.tcpWindow = 64000;
    ack.ipLen = 400;
    h.feed(ack);
    EXPECT_EQ(h.find(ack.key)->position, 0U);
    std::filesystem::remove(path);
}

TEST(AdaptiveClassifier, J48v1ClassesFollowTheHeaderTree) {
    ParsedPacket p = packet("10.0.0.1", 1, "10.0.0.2", 80, at(0), kRst, 40);
    EXPECT_EQ(classifyPacket(AdaptiveClassifier::J48v1, p), PacketClass::Never);
    EXPECT_EQ(classifyPacket(AdaptiveClassifier::None, p), PacketClass::Short);
    p.tcpFlags = kSyn;
    EXPECT_EQ(classifyPacket(AdaptiveClassifier::J48v1, p), PacketClass::Short);
    p.tcpFlags = kAck;
    p.ipLen = 1500;
    EXPECT_EQ(classifyPacket(AdaptiveClassifier::J48v1, p), PacketClass::Short);
    p.ipLen = 200;
    p.tcpWindow = 30000;
    EXPECT_EQ(classifyPacket(AdaptiveClassifier::J48v1, p), PacketClass::Medium);
    ParsedPacket dns = packet("10.0.0.1", 5353, "10.0.0.2", 53, at(0), 0, 80, 17);
    EXPECT_EQ(classifyPacket(AdaptiveClassifier::J48v1, dns), PacketClass::Long);
}

}  // namespace
}  // namespace rowprobe::storage
