// Acceptance: the synthetic 10k-flow trace (../shared/testdata/bench) has exact per-flow truth.
// Every flow has a unique 5-tuple, no gap over 20 s and no flow over 250 s, so with the default
// timeouts (30 s / 300 s) rowprobe must export exactly one biflow per truth row, with the exact
// packet, byte, timestamp (ns) and TCP-flag values, and nothing else.
#include <gtest/gtest.h>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

TEST(Synth10kFlows, ExactlyOneBiflowPerTruthRowWithExactCounters) {
    ROWPROBE_REQUIRE_BINARY();
    const auto truthCsv = testdataDir() / "bench" / "synth_10k_flows.truth.csv";
    ROWPROBE_REQUIRE_FILE(truthCsv);
    const auto pcap = synth10kPcap();
    if (pcap.empty()) GTEST_SKIP() << "cannot decompress synth_10k_flows.pcap.gz";

    const ProbeRun run = runProbe(pcap);
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << "\n" << run.result.err;
    ASSERT_TRUE(run.error.empty()) << run.error;

    const auto rows = loadTruth(truthCsv);
    ASSERT_EQ(rows.size(), 10000U);
    EXPECT_EQ(run.flows.size(), rows.size()) << "exported records";

    TruthOptions opt;
    opt.compareExtras = false;  // the truth's extra holds DNS names / SNI, not our core fields
    opt.useVlan = false;
    const TruthReport rep = compareWithTruth(run.flows, rows, opt);
    EXPECT_TRUE(rep.problems.empty()) << rep.summary();
    EXPECT_EQ(rep.matched, 10000U);

    EXPECT_EQ(packetSum(run.flows), 187604U) << "packets in the trace (bench/README.md)";
    if (run.hasStat("total.packets")) EXPECT_EQ(run.stat("total.packets"), 187604U);
}

}  // namespace
}  // namespace rowprobe::test
