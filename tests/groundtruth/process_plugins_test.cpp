// Acceptance (issue 15): each process plugin reproduces ipfixprobe 5.7's functional-test
// reference output record for record and field for field (plugin_reference.hpp).
#include <gtest/gtest-spi.h>

#include "plugin_reference.hpp"

namespace rowprobe::test {
namespace {

TEST(PluginReference, BasicplusOfHttpPcap) {
    // mss=ipfixprobe: ipfixprobe's 32-bit MSS reading (the pcap has no SYN, so both agree).
    expectPluginReference({.plugin = "basicplus",
                           .pcap = "http.pcap",
                           .records = 9,
                           .processArg = "basicplus;mss=ipfixprobe"});
}

TEST(PluginReference, PstatsOfMixedPcap) {
    expectPluginReference({.plugin = "pstats", .pcap = "mixed.pcap", .records = 48});
}

TEST(PluginReference, PhistsOfMixedPcap) {
    expectPluginReference({.plugin = "phists", .pcap = "mixed.pcap", .records = 48});
}

TEST(PluginReference, BstatsOfBstatsPcap) {
    expectPluginReference({.plugin = "bstats", .pcap = "bstats.pcap", .records = 5});
}

// The harness can fail: pstats run on another capture than the reference's must be reported.
TEST(PluginReference, HarnessReportsDifferences) {
    if (!std::filesystem::exists(testdataDir() / "ipfixprobe" / "outputs" / "pstats"))
        GTEST_SKIP() << "reference not available";
    EXPECT_NONFATAL_FAILURE(
        expectPluginReference({.plugin = "pstats", .pcap = "http.pcap", .records = 48}),
        "reference records not reproduced");
}

}  // namespace
}  // namespace rowprobe::test
