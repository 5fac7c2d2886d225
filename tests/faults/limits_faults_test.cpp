// Fault injection: memory and thread limits (issue 10, defect 6). An address-space limit set
// in the child (ulimit -v) makes thread creation or a large allocation fail; rowprobe must say
// which allocation or thread failed and how much it asked for, and exit 1 (the old code aborted
// with std::system_error, exit 134, or printed only "std::bad_alloc"). Not under ASan/TSan,
// whose shadow memory needs the address space.
#include "fault_support.hpp"

namespace rowprobe::test::faults {
namespace {

CommandResult runLimited(const std::string& limitKiB, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "ulimit -v " + limitKiB + "; exec \"$@\"",
                                     "sh", binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    return child.wait(scaled(15));
}

// From a generous limit down to a tiny one: whatever fails, the message is specific, the exit
// code is 1 (or 2 where the cache itself reports that its table does not fit, a configuration
// it cannot honour), never an abort or a bare "std::bad_alloc".
TEST(LimitFaults, AddressSpaceLimitsGiveANamedFailure) {
    if (kSanitized) GTEST_SKIP() << "address-space limits do not work under sanitizers";
    bool sawThread = false;
    bool sawMemory = false;
    for (const char* limit : {"80000", "60000", "50000", "40000", "30000"}) {
        const CommandResult r =
            runLimited(limit, {"-i", "gen;packets=20000", "-o", "json;file=/dev/null", "-Q"});
        ASSERT_NE(r.exitCode, -1) << "ulimit -v " << limit << ": no end";
        EXPECT_NE(r.exitCode, 134) << "ulimit -v " << limit << ": aborted\n" << r.err;
        EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 1 || r.exitCode == 2)
            << "ulimit -v " << limit << ": exit " << r.exitCode << "\n"
            << r.err;
        EXPECT_EQ(r.err.find("error: std::bad_alloc"), std::string::npos)
            << "ulimit -v " << limit << "\n"
            << r.err;
        EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
        if (r.exitCode == 1) {
            const bool thread = r.err.find("cannot create thread 'rp-") != std::string::npos;
            const bool memory = r.err.find("out of memory: cannot allocate") != std::string::npos;
            EXPECT_TRUE(thread || memory) << "ulimit -v " << limit << "\n" << r.err;
            sawThread = sawThread || thread;
            sawMemory = sawMemory || memory;
        }
    }
    EXPECT_TRUE(sawThread || sawMemory) << "no limit made anything fail";
}

// A thread that cannot be created stops the run before anything is read: exit 1, the thread
// named, and no flow half-processed.
TEST(LimitFaults, ThreadCreationFailureNamesTheThread) {
    if (kSanitized) GTEST_SKIP() << "address-space limits do not work under sanitizers";
    // Several queues: more threads (8 MiB of stack each) than the limit leaves room for once
    // the 8 x 32 packet blocks (~300 KiB each, ~80 MB) are allocated: 130-160 MB leave room
    // for some threads but not all 17.
    const CommandResult r =
        runLimited("145000", {"-i", "gen;packets=1000", "-q", "8", "-s", "cache;size=10", "-o",
                              "json;file=/dev/null", "-Q", "--input-thread", "yes"});
    ASSERT_NE(r.exitCode, -1);
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("cannot create thread 'rp-"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rowprobe::test::faults
