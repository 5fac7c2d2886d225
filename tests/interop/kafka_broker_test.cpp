// The `kafka` output into a real Apache Kafka 4 broker (KRaft, scripts/kafka-broker.sh, Java
// 17), read back by an independent client (kcat) and compared with the `json` output of the
// same capture. The capture is fed through rowprobe's stdin in two halves; between them, after
// the first records have reached the broker, the broker is stopped, the second half is fed
// while it is down (records wait in rowprobe's local queue) and the broker is started again:
// every record must arrive exactly once. The same capture with format=ipfix is read back as an
// IPFIX file by libfixbuf's ipfixDump. Skips with the reason when Java, kcat or the broker's
// Maven artifacts cannot be had.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "interop_support.hpp"
#include "test_support.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A port P with P and P+1 (the controller) free on every IPv4 address, below the kernel's
/// ephemeral range (freeLoopbackPort), where the mock clusters and clients of tests running in
/// parallel take theirs; 0 when none was found.
std::uint16_t freePortPair() {
    for (int i = 0; i < 200; ++i) {
        const std::uint16_t p = freeLoopbackPort(SOCK_STREAM);
        if (p < 65535 && portFree(SOCK_STREAM, static_cast<std::uint16_t>(p + 1))) return p;
    }
    return 0;
}

std::string script() { return (sourceDir() / "scripts" / "kafka-broker.sh").string(); }

/// Stops the broker however the test ends.
struct Broker {
    fs::path dir;
    int port = 0;
    std::string bootstrap() const { return "127.0.0.1:" + std::to_string(port); }
    CommandResult start() const {
        return runCommand({script(), "start", dir.string(), std::to_string(port)}, 120);
    }
    void stop() const {
        if (!dir.empty()) runCommand({script(), "stop", dir.string()}, 60);
    }
    ~Broker() { stop(); }
};

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

/// Every message of the topic as "key<TAB>value" lines (kcat, all partitions, then exit).
std::vector<std::string> consume(const Broker& b) {
    const auto r = runCommand(
        {findTool("kcat"), "-C", "-b", b.bootstrap(), "-t", "flows", "-e", "-q", "-f", "%k\t%s\n"},
        60);
    return lines(r.out);
}

TEST(KafkaBroker, CaptureRecordsSurviveABrokerRestartMidRun) {
#ifndef ROWPROBE_HAVE_KAFKA
    GTEST_SKIP() << "rowprobe was built without the kafka output (ROWPROBE_WITH_KAFKA=OFF or no "
                    "librdkafka-dev)";
#endif
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_TOOL("kcat", "kcat");
    if (findTool("java").empty())
        GTEST_SKIP() << "java not installed (Debian package openjdk-17-jre-headless): the real "
                        "Kafka broker cannot run";
    const auto fetched = runCommand({script(), "fetch"}, 300);
    if (fetched.exitCode == 3)
        GTEST_SKIP() << "Kafka broker artifacts not available: " << fetched.err;
    ASSERT_EQ(fetched.exitCode, 0) << fetched.err;

    const fs::path pcap = sourceDir() / "pcaps" / "demo.pcap";
    // Short timeouts: flows are exported all along the capture, not only at its end.
    const std::string storage = "cache;seed=1;inactive=2;active=5";
    const auto reference = runRowprobe("pcap;file=" + pcap.string(), "json", {}, storage);
    const std::vector<std::string> expectedLines = lines(reference.out);
    ASSERT_GT(expectedLines.size(), 100U);

    // A port taken between the check and the broker's bind: another pair, a fresh broker.
    Broker broker;
    CommandResult started;
    for (int attempt = 0; attempt < 3 && started.exitCode != 0; ++attempt) {
        broker.stop();
        broker.port = freePortPair();
        ASSERT_NE(broker.port, 0);
        broker.dir = tempDir() / "kafka-broker";
        started = broker.start();
    }
    ASSERT_EQ(started.exitCode, 0) << started.out << started.err;

    std::ifstream in(pcap, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    const std::size_t half = bytes.size() / 2;
    const fs::path errFile = tempDir() / "kafka-rowprobe.err";
    PipedChild rowprobe({rowprobeBinary().string(), "-i", "pcap;file=-", "-s", storage, "-o",
                         "kafka;brokers=" + broker.bootstrap() +
                             ";key=flow;linger=60;timeout=120;batch-delay=0.01"},
                        errFile);
    ASSERT_TRUE(rowprobe.write(bytes.data(), half));

    // The first half's records reach the broker before it goes away.
    std::size_t before = 0;
    for (const auto end = Clock::now() + std::chrono::seconds(30);
         before == 0 && Clock::now() < end;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        before = consume(broker).size();
    }
    ASSERT_GT(before, 0U) << readFile(errFile);
    ASSERT_LT(before, expectedLines.size());

    broker.stop();
    ASSERT_TRUE(rowprobe.write(bytes.data() + half, bytes.size() - half));
    rowprobe.closeInput();
    std::this_thread::sleep_for(std::chrono::seconds(1));  // records queue up while it is down
    const auto restarted = broker.start();
    ASSERT_EQ(restarted.exitCode, 0) << restarted.out << restarted.err;

    const int exitCode = rowprobe.wait(90);
    const std::string err = readFile(errFile);
    ASSERT_EQ(exitCode, 0) << err;
    // rowprobe saw the broker go away (librdkafka's log, with the output's prefix).
    EXPECT_NE(err.find("rowprobe: output 'kafka': "), std::string::npos) << err;
    EXPECT_NE(
        err.find("output: " + std::to_string(expectedLines.size()) + " records written, 0 dropped"),
        std::string::npos)
        << err;

    const std::vector<std::string> got = consume(broker);
    std::multiset<std::string> values;
    std::set<std::string> seen;
    for (const std::string& line : got) {
        const std::size_t tab = line.find('\t');
        ASSERT_NE(tab, std::string::npos) << line;
        EXPECT_EQ(tab, 16U) << "key=flow is 16 hex digits: " << line;
        const std::string value = line.substr(tab + 1);
        EXPECT_TRUE(seen.insert(value).second) << "delivered twice: " << value;
        values.insert(value);
    }
    const std::multiset<std::string> expected(expectedLines.begin(), expectedLines.end());
    EXPECT_EQ(values.size(), expected.size());
    EXPECT_TRUE(values == expected) << "the broker's records differ from the json output";

    // format=ipfix into a second topic: the messages, back to back, are an IPFIX file that
    // libfixbuf's ipfixDump decodes with every record (each message carries its templates).
    if (findTool("ipfixDump").empty()) return;
    const auto ipfix = runRowprobe(
        "pcap;file=" + pcap.string(),
        "kafka;brokers=" + broker.bootstrap() + ";topic=flows-ipfix;format=ipfix;linger=30", {},
        storage);
    const fs::path file = tempDir() / "kafka-flows.ipfix";
    const auto dumped = runShell(findTool("kcat") + " -C -b " + broker.bootstrap() +
                                     " -t flows-ipfix -e -q -f '%s' > " + file.string(),
                                 60);
    ASSERT_EQ(dumped.exitCode, 0) << dumped.err;
    const auto stats = runCommand({findTool("ipfixDump"), "--in", file.string(), "--stats"}, 60);
    EXPECT_NE(stats.out.find(std::to_string(expectedLines.size()) + " Data Records"),
              std::string::npos)
        << stats.out << stats.err;
}

}  // namespace
}  // namespace rowprobe::test::interop
