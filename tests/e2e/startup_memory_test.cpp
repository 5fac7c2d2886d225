// What a run costs before its first packet. The memory of the flow table, the plugins' pools,
// the packet blocks' arenas and the rings is mapped at start-up but written only as traffic
// fills it, so a run on an empty capture with the default 2^20-record table and process plugins
// stays small: 19 MB peak RSS measured (docs/performance.md, "Session 19"), 36 MB while the 40
// packet blocks' 256 KiB arenas and the plugin-data ring were zeroed at start-up.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

/// Runs argv to its end; its exit status and peak RSS (KiB).
std::pair<int, long> runMeasured(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    int status = 0;
    struct rusage usage {};
    if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return {-1, 0};
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

TEST(StartupMemory, AnEmptyRunTouchesOnlyWhatTrafficWouldFill) {
    if (kSanitized) GTEST_SKIP() << "sanitizer shadow memory counts in the resident set";
    const fs::path pcap = tempDir() / "startup-empty.pcap";
    { PcapWriter w(pcap); }  // the global header, no packet
    const auto [exitCode, peakKiB] = runMeasured(
        {rowprobeBinary().string(), "-i", "pcap;file=" + pcap.string(), "-s", "cache;size=20", "-p",
         "flowstats;splt=10", "-p", "pstats", "-o", "json;file=/dev/null"});
    ASSERT_EQ(exitCode, 0);
    EXPECT_GT(peakKiB, 0);
    EXPECT_LT(peakKiB, 28 * 1024) << "peak RSS of a run without packets, KiB";
}

}  // namespace
}  // namespace rowprobe::test
