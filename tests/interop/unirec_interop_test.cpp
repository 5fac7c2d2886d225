// The `unirec` output of the real rowprobe binary read as a NEMEA module would read it (the
// receiver in unirec_test_reader.hpp is written from the format's description, without libtrap): a
// .trapcap file, a UNIX socket and a TCP connection. Every flow must equal the json output.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <thread>

#include "../unit/output/unirec_test_reader.hpp"
#include "interop_support.hpp"

namespace rowprobe::test::interop {
namespace {

namespace fs = std::filesystem;
namespace ur = rowprobe::test::unirec;

std::vector<Flow> unirecFlows(const ur::Stream& s) {
    const ur::Layout l(s.spec);
    std::vector<Flow> out;
    for (const auto& rec : s.records()) {
        Flow f;
        f.srcIp = l.ip(rec, "SRC_IP");
        f.dstIp = l.ip(rec, "DST_IP");
        f.srcPort = l.number(rec, "SRC_PORT");
        f.dstPort = l.number(rec, "DST_PORT");
        f.proto = l.number(rec, "PROTOCOL");
        f.packets = l.number(rec, "PACKETS");
        f.bytes = l.number(rec, "BYTES");
        f.packetsRev = l.number(rec, "PACKETS_REV");
        f.bytesRev = l.number(rec, "BYTES_REV");
        f.tcpFlags = l.number(rec, "TCP_FLAGS");
        f.tcpFlagsRev = l.number(rec, "TCP_FLAGS_REV");
        f.timeFirstNs = l.timeNs(rec, "TIME_FIRST");
        f.timeLastNs = l.timeNs(rec, "TIME_LAST");
        out.push_back(f);
    }
    return out;
}

class UnirecInterop : public ::testing::TestWithParam<Capture> {};

TEST_P(UnirecInterop, TrapcapFileHoldsEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = referenceFlows(GetParam().path());
    const fs::path file = tempDir() / (GetParam().name + ".trapcap");
    runRowprobe("pcap;file=" + GetParam().path().string(), "unirec;i=f:" + file.string() + ";e");
    std::ifstream in(file, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    ur::Stream s;
    std::string error;
    ASSERT_TRUE(s.parse(bytes, true, error)) << error;
    EXPECT_EQ(s.format, 2);
    EXPECT_EQ(s.spec, ur::kSpecA);
    EXPECT_TRUE(s.eof);
    expectSameFlows(expected, unirecFlows(s), Coverage{}, "UniRec file");
}

/// Starts rowprobe with `output`, waits until `connect` succeeds, reads until rowprobe closes.
template <class Connect>
ur::Stream receive(const std::string& input, const std::string& output, Connect connect) {
    ChildProcess rowprobe(
        {rowprobeBinary().string(), "-i", input, "-s", kStorage, "-o", output, "--quiet"});
    std::optional<ur::Client> client;
    for (int i = 0; i < 500 && !client; ++i) {
        try {
            client.emplace(connect());
        } catch (const std::exception&) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    ur::Stream s;
    if (!client) {
        ADD_FAILURE() << "could not connect to " << output;
        return s;
    }
    while (!client->readFor(5000)) {
    }
    const auto r = rowprobe.wait(60);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::string error;
    EXPECT_TRUE(s.parse(client->bytes, false, error)) << error;
    return s;
}

TEST_P(UnirecInterop, UnixSocketStreamHoldsEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = referenceFlows(GetParam().path());
    const fs::path dir = tempDir() / ("trap-" + GetParam().name);
    fs::create_directories(dir);
    ::setenv("TRAP_SOCKET_DIR", dir.c_str(), 1);  // inherited by the child
    // timeout=WAIT: rowprobe holds its records until the receiver is connected.
    const auto s =
        receive("pcap;file=" + GetParam().path().string(), "unirec;i=u:flows:timeout=WAIT;e",
                [&] { return ur::Client::unixSocket(dir / "trap-flows.sock"); });
    ::unsetenv("TRAP_SOCKET_DIR");
    EXPECT_EQ(s.spec, ur::kSpecA);
    EXPECT_TRUE(s.eof);
    EXPECT_TRUE(s.sequenceContinuous());
    expectSameFlows(expected, unirecFlows(s), Coverage{}, "UniRec u:");
}

TEST_P(UnirecInterop, TcpStreamHoldsEveryFlow) {
    ROWPROBE_REQUIRE_BINARY();
    ROWPROBE_REQUIRE_CAPTURE(GetParam());
    const auto expected = referenceFlows(GetParam().path());
    const std::uint16_t port = freeLoopbackPort(SOCK_STREAM);  // released for rowprobe
    const auto s = receive("pcap;file=" + GetParam().path().string(),
                           "unirec;i=t:127.0.0.1:" + std::to_string(port) + ":timeout=WAIT;e",
                           [&] { return ur::Client::tcp(port); });
    EXPECT_EQ(s.spec, ur::kSpecA);
    EXPECT_TRUE(s.eof);
    EXPECT_TRUE(s.sequenceContinuous());
    expectSameFlows(expected, unirecFlows(s), Coverage{}, "UniRec t:");
}

const Capture kCaptures[] = {{"synth10k"}, {"demo"}};
INSTANTIATE_TEST_SUITE_P(Captures, UnirecInterop, ::testing::ValuesIn(kCaptures), captureName);

}  // namespace
}  // namespace rowprobe::test::interop
