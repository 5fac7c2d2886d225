// Process plugins through the real pipeline: the same records, plugin fields included, whether
// one or two queues run and whichever thread expires flows (inline or expiry=thread); every
// flow that had payload carries its pstats.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {
namespace {

std::vector<std::string> run(const std::string& storage, const std::string& queues) {
    const auto out = tempDir() / "flows.json";
    const CommandResult r = runCommand(
        {rowprobeBinary().string(), "-i", "pcap;file=" + synth10kPcap().string(), "-q", queues,
         "-s", storage, "-p", "pstats", "-p", "basicplus", "-o", "json;file=" + out.string(), "-Q"},
        300);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    // The queue number is the one key allowed to differ. A plain search, not std::regex: the
    // sanitizer stages build the test at -O0, where regex_replace over these 10k lines of
    // pstats took most of a five-minute timeout on a loaded machine.
    constexpr std::string_view kQueue = ",\"queue\":";
    std::vector<std::string> lines;
    std::istringstream in(readFile(out));
    for (std::string line; std::getline(in, line);) {
        if (const auto at = line.find(kQueue); at != std::string::npos) {
            auto end = at + kQueue.size();
            while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
            line.erase(at, end - at);
        }
        lines.push_back(std::move(line));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST(ProcessPluginsE2e, SameRecordsAcrossQueuesAndExpiryModes) {
    if (!std::filesystem::exists(rowprobeBinary())) GTEST_SKIP() << "rowprobe not built";
    if (synth10kPcap().empty()) GTEST_SKIP() << "synth_10k_flows.pcap not available";
    const auto base = run("cache;seed=1", "1");
    ASSERT_GT(base.size(), 9000U);
    std::size_t withPstats = 0;
    for (const auto& l : base) withPstats += l.find("\"ppi_pkt_lengths\":[") != std::string::npos;
    EXPECT_GT(withPstats, base.size() * 9 / 10);
    for (const auto& l : base) EXPECT_NE(l.find("\"tcp_win\":"), std::string::npos) << l;
    EXPECT_EQ(run("cache;seed=1", "2"), base);
    EXPECT_EQ(run("cache;seed=1;expiry=thread", "1"), base);
    EXPECT_EQ(run("cache;seed=1;expiry=thread", "2"), base);
}

}  // namespace
}  // namespace rowprobe::test
