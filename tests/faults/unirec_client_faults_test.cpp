// Fault injection: UniRec `t:` clients that never come, crash with data in flight, or leave
// (issue 10, defects 2 and 8).
#include <sys/ioctl.h>
#include <sys/un.h>

#include <csignal>
#include <cstdio>

#include "fault_support.hpp"

namespace rowprobe::test::faults {
namespace {

/// Connects to 127.0.0.1:port, retrying while rowprobe starts (up to 5 s); -1 on failure.
int connectClient(std::uint16_t port, int receiveBuffer) {
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
}

// Defect 2: timeout=WAIT and nobody connects. The old code waited for a client forever and
// ignored SIGTERM (a second signal lost every flow). Now the stop request ends the wait: the
// records are dropped (counted; not "discarded": WAIT asked for delivery) and the exit is 1.
TEST(UnirecClientFaults, WaitWithoutClientStopsOnSigterm) {
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    double stopSeconds = 0;
    const RunResult r = runAndStop({"-i", "gen;pattern=netscan;packets=20000", "-o",
                                    "unirec;i=t:" + std::to_string(port) + ":timeout=WAIT"},
                                   1.0, 10.0, &stopSeconds);
    ASSERT_NE(r.result.exitCode, -1) << "SIGTERM did not stop the wait for a client";
    EXPECT_EQ(r.result.exitCode, 1) << r.result.err;
    EXPECT_LT(stopSeconds, scaled(3.0));
    const Accounting a = readAccounting(r.stats);
    EXPECT_GT(a.exported, 0U);  // all 20 000 unless the input was still running at the signal
    EXPECT_EQ(a.dropped, a.exported);
    EXPECT_EQ(a.discarded, 0U);
}

// Defect 8: a client that takes the hello, reads nothing more, and crashes (reset) with data
// in flight. Records are delivered only once the client's stack acknowledged them: at most
// what sits in the client's receive queue, not everything send() took (the old code counted
// the whole socket send queue, tens of thousands of records, as delivered).
TEST(UnirecClientFaults, ClientCrashCountsUnacknowledgedRecordsAsDropped) {
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    const auto stats = tempDir() / "unirec-crash-stats.json";
    ChildProcess child(command({"-i", "gen;pattern=netscan;packets=200000", "-o",
                                "unirec;i=t:" + std::to_string(port) + ":timeout=HALF_WAIT"},
                               stats));
    const int fd = connectClient(port, 4096);
    ASSERT_GE(fd, 0) << "rowprobe does not listen on " << port;
    // Wait until records fill the client's receive queue (rowprobe's send queue then fills
    // behind it), however slow the build.
    int queued = 0;  // bytes the client's stack acknowledged and nobody read
    const auto t0 = Clock::now();
    while (queued < 2048 && secondsSince(t0) < scaled(10)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ::ioctl(fd, FIONREAD, &queued);
    }
    ASSERT_GE(queued, 2048) << "no records reached the client";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::ioctl(fd, FIONREAD, &queued);
    const linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);  // the crash
    const CommandResult r = child.wait(scaled(15));
    ASSERT_NE(r.exitCode, -1);
    EXPECT_EQ(r.exitCode, 1) << "records were lost with the client\n" << r.err;
    const Accounting a = readAccounting(stats);
    EXPECT_EQ(a.exported, 200000U);
    // A UniRec basic record is more than 40 bytes: the client can hold at most queued / 40.
    EXPECT_LE(a.written, static_cast<std::uint64_t>(queued) / 40 + 1)
        << "records counted as delivered that the client never acknowledged (" << queued
        << " bytes acknowledged)";
    EXPECT_GT(a.dropped, a.discarded) << "the crash lost records: not merely discarded";
}

// HALF_WAIT with nobody connected is the configured policy: the records are dropped and
// counted as discarded, and the run succeeds (exit 0). A t:0 interface names its port.
TEST(UnirecClientFaults, HalfWaitWithoutClientIsPolicyNotFailure) {
    const RunResult r =
        runFor({"-i", "gen;pattern=netscan;packets=5000", "-o", "unirec;i=t:0"}, 15);
    ASSERT_NE(r.result.exitCode, -1);
    EXPECT_EQ(r.result.exitCode, 0) << r.result.err;
    EXPECT_NE(r.result.err.find("listens on TCP port"), std::string::npos) << r.result.err;
    const Accounting a = readAccounting(r.stats);
    EXPECT_EQ(a.dropped, 5000U);
    EXPECT_EQ(a.discarded, 5000U);
}

// A client that reads everything: all delivered, exit 0.
TEST(UnirecClientFaults, ReadingClientGetsEverything) {
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);
    const auto stats = tempDir() / "unirec-reader-stats.json";
    ChildProcess child(command({"-i", "gen;pattern=netscan;packets=50000", "-o",
                                "unirec;i=t:" + std::to_string(port) + ":timeout=WAIT"},
                               stats));
    const int fd = connectClient(port, 1 << 20);
    ASSERT_GE(fd, 0);
    std::uint64_t got = 0;
    std::thread reader([&] {
        char buf[65536];
        for (;;) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            got += static_cast<std::uint64_t>(n);
        }
    });
    const CommandResult r = child.wait(scaled(15));
    ::shutdown(fd, SHUT_RDWR);
    reader.join();
    ::close(fd);
    ASSERT_NE(r.exitCode, -1);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    const Accounting a = readAccounting(stats);
    EXPECT_EQ(a.written, 50000U);
    EXPECT_EQ(a.dropped, 0U);
    EXPECT_GT(got, 50000U * 40);
}

}  // namespace
}  // namespace rowprobe::test::faults

namespace rowprobe::test::faults {
namespace {

int connectUnix(const std::filesystem::path& path) {
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
}

std::uint64_t readAll(int fd, std::uint64_t limit) {
    std::uint64_t got = 0;
    char buf[65536];
    while (got < limit) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        got += static_cast<std::uint64_t>(n);
    }
    return got;
}

// A `u:` module that leaves mid-stream and a second one that comes (a module restart), with
// timeout=WAIT: rowprobe waits for the second, which gets the rest; whatever was in flight
// when the first left is dropped, and the exit code says whether anything was.
TEST(UnirecClientFaults, UnixModuleRestartIsAccountedFor) {
    const auto dir = tempDir() / "trap-u";
    std::filesystem::create_directories(dir);
    ::setenv("TRAP_SOCKET_DIR", dir.c_str(), 1);
    const auto stats = tempDir() / "unirec-u-stats.json";
    ChildProcess child(command(
        {"-i", "gen;pattern=netscan;packets=200000", "-o", "unirec;i=u:faults:timeout=WAIT"},
        stats));
    ::unsetenv("TRAP_SOCKET_DIR");
    const auto path = dir / "trap-faults.sock";
    const int first = connectUnix(path);
    ASSERT_GE(first, 0) << "no socket at " << path;
    const std::uint64_t firstGot = readAll(first, 200000);
    ::close(first);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int second = connectUnix(path);
    ASSERT_GE(second, 0);
    const std::uint64_t secondGot = readAll(second, ~std::uint64_t{0});
    ::close(second);
    const CommandResult r = child.wait(scaled(15));
    ASSERT_NE(r.exitCode, -1);
    const Accounting a = readAccounting(stats);
    EXPECT_EQ(a.exported, 200000U);
    EXPECT_GT(firstGot, 0U);
    EXPECT_GT(secondGot, 1000000U) << "the second module got the rest";
    EXPECT_GT(a.written, 100000U);
    EXPECT_EQ(a.discarded, 0U) << "WAIT discards nothing";
    EXPECT_EQ(r.exitCode, a.dropped > 0 ? 1 : 0) << r.err;
}

}  // namespace
}  // namespace rowprobe::test::faults
