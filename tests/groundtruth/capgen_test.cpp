// The committed captures in pcaps/ are exactly what tools/capgen/capgen.py generates: the
// generator is deterministic and nobody edited a capture or a truth file by hand.
#include <gtest/gtest.h>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

TEST(Capgen, RegeneratesCommittedCapturesByteForByte) {
    if (runShell("python3 --version").exitCode != 0) GTEST_SKIP() << "python3 not available";
    const auto out = tempDir();
    const auto script = sourceDir() / "tools" / "capgen" / "capgen.py";
    ROWPROBE_REQUIRE_FILE(script);
    const CommandResult r = runCommand({"python3", script.string(), "--out", out.string()}, 300);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::size_t compared = 0;
    for (const auto& entry : std::filesystem::directory_iterator(out)) {
        const auto committed = sourceDir() / "pcaps" / entry.path().filename();
        ASSERT_TRUE(std::filesystem::exists(committed))
            << committed << " is generated but not committed";
        EXPECT_TRUE(readFile(entry.path()) == readFile(committed))
            << committed
            << " differs from the generator's output; run: python3 tools/capgen/capgen.py --out "
               "pcaps/";
        ++compared;
    }
    EXPECT_GE(compared, 8U) << "4 captures + 4 truth files expected";
}

TEST(Capgen, TruthFilesUseTheSharedSchema) {
    const std::string header =
        "source,case,pcap,src_ip,src_port,dst_ip,dst_port,proto,packets,packets_rev,bytes,bytes_"
        "rev,bytes_unit,"
        "first_ts,last_ts,duration_s,tcp_flags,tcp_flags_rev,label,extra";
    for (const char* name : {"mixed", "timeouts", "malformed", "demo"}) {
        const auto path = sourceDir() / "pcaps" / (std::string(name) + ".truth.csv");
        const std::string text = readFile(path);
        ASSERT_FALSE(text.empty()) << path;
        EXPECT_EQ(text.substr(0, text.find('\n')), header) << path;
        const auto rows = loadTruth(path);
        EXPECT_FALSE(rows.empty()) << path;
        for (const auto& r : rows) {
            EXPECT_EQ(r.get("pcap"), std::string(name) + ".pcap") << r.describe();
            if (!r.optional()) {
                EXPECT_TRUE(parseTimeNs(r.get("first_ts")).has_value()) << r.describe();
            }
        }
    }
}

}  // namespace
}  // namespace rowprobe::test
