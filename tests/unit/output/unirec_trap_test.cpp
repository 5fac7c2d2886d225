// The `unirec` plugin's TRAP interfaces read by a receiver written from the spec
// (unirec_test_reader.hpp): golden stream and file made with libtrap 1.18.2, framing,
// sequence numbers, late clients, legacy headers, and configuration errors.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "fake_plugins.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"
#include "unirec_output.hpp"
#include "unirec_test_reader.hpp"

namespace rowprobe::output {
namespace {

namespace ur = rowprobe::test::unirec;

FlowRecord vectorA() {
    FlowRecord r;
    r.srcAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
    inet_pton(AF_INET6, "2001:db8::1", r.dstAddr.data());
    r.ipVersion = 4;
    r.srcPort = 12345;
    r.dstPort = 443;
    r.proto = 6;
    r.packets = {10, 20};
    r.bytes = {1000, 2000};
    r.timeFirst = 1700000000ULL * kNsPerSec + 500'000'000;
    r.timeLast = 1700000001ULL * kNsPerSec + 250'000'000;
    r.tcpFlags = {0x1b, 0x12};
    r.srcMac = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
    r.dstMac = {0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb};
    return r;
}

/// Record i of a varied test set: IPv4 and IPv6, ports, counters and ns timestamps.
FlowRecord numbered(std::uint32_t i) {
    FlowRecord r;
    if (i % 5 == 0) {
        r.ipVersion = 6;
        inet_pton(AF_INET6, "2001:db8::", r.srcAddr.data());
        inet_pton(AF_INET6, "2001:db8:1::", r.dstAddr.data());
        std::memcpy(r.srcAddr.data() + 12, &i, 4);
    } else {
        r.ipVersion = 4;
        r.srcAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 0};
        r.dstAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 0, 1};
        r.srcAddr[13] = static_cast<std::uint8_t>(i >> 16);
        r.srcAddr[14] = static_cast<std::uint8_t>(i >> 8);
        r.srcAddr[15] = static_cast<std::uint8_t>(i);
    }
    r.srcPort = static_cast<std::uint16_t>(i);
    r.dstPort = static_cast<std::uint16_t>(i * 7);
    r.proto = i % 2 ? 17 : 6;
    r.packets = {i, i + 1};
    r.bytes = {std::uint64_t{i} * 1000, std::uint64_t{i} * 3};
    r.timeFirst = 1700000000ULL * kNsPerSec + std::uint64_t{i} * 1'000'003;
    r.timeLast = r.timeFirst + 123'456'789;
    r.tcpFlags = {static_cast<std::uint8_t>(i), static_cast<std::uint8_t>(i >> 8)};
    return r;
}

std::unique_ptr<UnirecOutput> makeOutput(const std::string& text) {
    return Registry::instance().createAs<UnirecOutput>(PluginKind::Output, text, "-o");
}

std::vector<std::uint8_t> goldenStream(bool legacy) {
    std::vector<std::uint8_t> s = ur::hex("02 00 00 00 00 00 01 17");
    s.insert(s.end(), ur::kSpecA.begin(), ur::kSpecA.end());
    const auto header =
        ur::hex(legacy ? "00 00 00 cf" : "00 00 00 cf 00 00 00 00 00 00 00 00 03 00");
    s.insert(s.end(), header.begin(), header.end());
    auto rec = ur::goldenRecordA();
    s.insert(s.end(), {0x00, 0x64});
    s.insert(s.end(), rec.begin(), rec.end());
    rec[84] = 0x0b;  // PACKETS = 11
    s.insert(s.end(), {0x00, 0x64});
    s.insert(s.end(), rec.begin(), rec.end());
    s.insert(s.end(), {0x00, 0x01, 0x00});  // EOF message
    return s;
}

void writeGoldenRecords(UnirecOutput& out) {
    FlowRecord second = vectorA();
    second.packets[0] = 11;
    const FlowRecord records[] = {vectorA(), second};
    out.write(records);
    out.finish();
}

class UnirecTrap : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = rowprobe::test::tempDir() / ("trap-" + std::to_string(++s_counter));
        std::filesystem::create_directories(m_dir);
        ::setenv("TRAP_SOCKET_DIR", m_dir.c_str(), 1);
    }
    void TearDown() override { ::unsetenv("TRAP_SOCKET_DIR"); }
    std::filesystem::path m_dir;
    static inline int s_counter = 0;
};

TEST_F(UnirecTrap, GoldenStreamOverUnixSocket) {
    auto out = makeOutput("unirec;i=u:golden;e");
    const auto path = m_dir / "trap-golden.sock";
    ASSERT_TRUE(std::filesystem::exists(path)) << "socket at $TRAP_SOCKET_DIR/trap-<name>.sock";
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::others_write,
              std::filesystem::perms::others_write);
    auto client = ur::Client::unixSocket(path);
    writeGoldenRecords(*out);
    EXPECT_TRUE(client.readFor(2000));
    EXPECT_EQ(client.bytes.size(), 508U);
    EXPECT_EQ(client.bytes, goldenStream(false));
    EXPECT_FALSE(std::filesystem::exists(path)) << "socket removed at exit";
    EXPECT_EQ(out->stats().records, 2U);
}

TEST_F(UnirecTrap, GoldenStreamOverTcp) {
    auto out = makeOutput("unirec;i=t:127.0.0.1:0;e");
    auto& server = dynamic_cast<TrapStreamServer&>(out->interface(0));
    ASSERT_NE(server.port(), 0);
    auto client = ur::Client::tcp(server.port());
    writeGoldenRecords(*out);
    EXPECT_TRUE(client.readFor(2000));
    EXPECT_EQ(client.bytes, goldenStream(false));
}

TEST_F(UnirecTrap, LegacyOptionUsesTheFourByteHeader) {
    auto out = makeOutput("unirec;i=u:old;e;legacy");
    auto client = ur::Client::unixSocket(m_dir / "trap-old.sock");
    writeGoldenRecords(*out);
    EXPECT_TRUE(client.readFor(2000));
    EXPECT_EQ(client.bytes.size(), 498U);
    EXPECT_EQ(client.bytes, goldenStream(true));
}

TEST_F(UnirecTrap, GoldenFile) {
    const auto path = m_dir / "golden.trapcap";
    auto out = makeOutput("unirec;i=f:" + path.string() + ";e");
    writeGoldenRecords(*out);
    std::ifstream in(path, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(bytes.size(), 498U);
    EXPECT_EQ(bytes, goldenStream(true));  // files use the 4-byte block header
}

TEST_F(UnirecTrap, FileAppendModePicksTheFirstFreeSuffix) {
    const auto base = m_dir / "flows";
    for (int run = 0; run < 2; ++run) {
        auto out = makeOutput("unirec;i=f:" + base.string() + ":a");
        writeGoldenRecords(*out);
    }
    EXPECT_TRUE(std::filesystem::exists(base.string() + ".00000"));
    EXPECT_TRUE(std::filesystem::exists(base.string() + ".00001"));
    EXPECT_EQ(std::filesystem::file_size(base.string() + ".00001"), 8U + 279U + 4U + 2U * 102U);
}

/// Reads one client's stream until the server closes it, in a thread (the exporter blocks on a
/// client that does not read).
struct BackgroundReader {
    explicit BackgroundReader(ur::Client c)
        : client(std::move(c)), thread([this] {
              while (!client.readFor(100)) {
              }
          }) {}
    ~BackgroundReader() {
        if (thread.joinable()) thread.join();
    }
    const std::vector<std::uint8_t>& bytes() {
        thread.join();
        return client.bytes;
    }
    ur::Client client;
    std::thread thread;
};

void expectRecordsDecode(const std::vector<std::uint8_t>& bytes, std::uint32_t from,
                         std::uint32_t to, std::size_t maxContainer) {
    ur::Stream s;
    std::string error;
    ASSERT_TRUE(s.parse(bytes, false, error)) << error;
    EXPECT_EQ(s.format, 2);
    EXPECT_EQ(s.spec, ur::kSpecA);
    EXPECT_TRUE(s.sequenceContinuous());
    EXPECT_GT(s.containers.size(), 1U);
    for (const auto& c : s.containers) EXPECT_LE(c.payload + 14U, maxContainer);
    const auto records = s.records();
    ASSERT_EQ(records.size(), to - from);
    const ur::Layout l(s.spec);
    for (std::uint32_t i = from; i < to; ++i) {
        const auto& rec = records[i - from];
        const FlowRecord r = numbered(i);
        ASSERT_EQ(rec.size(), l.staticSize);
        char expectSrc[INET6_ADDRSTRLEN] = {};
        if (r.ipVersion == 4) {
            inet_ntop(AF_INET, r.srcAddr.data() + 12, expectSrc, sizeof expectSrc);
        } else {
            inet_ntop(AF_INET6, r.srcAddr.data(), expectSrc, sizeof expectSrc);
        }
        EXPECT_EQ(l.ip(rec, "SRC_IP"), expectSrc) << i;
        EXPECT_EQ(l.number(rec, "SRC_PORT"), r.srcPort) << i;
        EXPECT_EQ(l.number(rec, "DST_PORT"), r.dstPort) << i;
        EXPECT_EQ(l.number(rec, "PROTOCOL"), r.proto) << i;
        EXPECT_EQ(l.number(rec, "PACKETS"), r.packets[0]) << i;
        EXPECT_EQ(l.number(rec, "PACKETS_REV"), r.packets[1]) << i;
        EXPECT_EQ(l.number(rec, "BYTES"), r.bytes[0]) << i;
        EXPECT_EQ(l.number(rec, "BYTES_REV"), r.bytes[1]) << i;
        EXPECT_EQ(l.number(rec, "TCP_FLAGS"), r.tcpFlags[0]) << i;
        EXPECT_EQ(l.number(rec, "TCP_FLAGS_REV"), r.tcpFlags[1]) << i;
        EXPECT_EQ(l.timeNs(rec, "TIME_FIRST"), r.timeFirst) << i;
        EXPECT_EQ(l.timeNs(rec, "TIME_LAST"), r.timeLast) << i;
        EXPECT_EQ(l.number(rec, "LINK_BIT_FIELD"), 5U);
        EXPECT_EQ(l.number(rec, "DIR_BIT_FIELD"), 2U);
    }
}

void writeNumbered(OutputPlugin& out, std::uint32_t from, std::uint32_t to) {
    std::vector<FlowRecord> batch;
    for (std::uint32_t i = from; i < to; ++i) {
        batch.push_back(numbered(i));
        if (batch.size() == 64) {
            out.write(batch);
            batch.clear();
        }
    }
    out.write(batch);
    out.flush();
}

TEST_F(UnirecTrap, ReceiverDecodesEveryRecordFromUnixSocket) {
    auto out = makeOutput("unirec;i=u:many:buffer_size=4096;I=5;d=2");
    BackgroundReader reader(ur::Client::unixSocket(m_dir / "trap-many.sock"));
    writeNumbered(*out, 0, 20000);
    out->finish();
    expectRecordsDecode(reader.bytes(), 0, 20000, 4096);
    EXPECT_EQ(out->stats().records, 20000U);
    EXPECT_EQ(out->stats().dropped, 0U);
}

TEST_F(UnirecTrap, ReceiverDecodesEveryRecordFromTcp) {
    auto out = makeOutput("unirec;i=t:127.0.0.1:0;I=5;d=2");
    auto& server = dynamic_cast<TrapStreamServer&>(out->interface(0));
    BackgroundReader reader(ur::Client::tcp(server.port()));
    writeNumbered(*out, 0, 30000);
    out->finish();
    expectRecordsDecode(reader.bytes(), 0, 30000, 100000);
}

TEST_F(UnirecTrap, LateClientGetsTheHelloAndOnlyNewContainers) {
    auto out = makeOutput("unirec;i=u:late;I=5;d=2");
    BackgroundReader early(ur::Client::unixSocket(m_dir / "trap-late.sock"));
    writeNumbered(*out, 0, 1000);
    BackgroundReader late(ur::Client::unixSocket(m_dir / "trap-late.sock"));
    writeNumbered(*out, 1000, 3000);
    writeNumbered(*out, 3000, 5000);
    out->finish();
    ur::Stream e;
    ur::Stream l;
    std::string error;
    ASSERT_TRUE(e.parse(early.bytes(), false, error)) << error;
    ASSERT_TRUE(l.parse(late.bytes(), false, error)) << error;
    EXPECT_EQ(e.records().size(), 5000U);
    EXPECT_EQ(l.records().size(), 4000U);
    EXPECT_EQ(l.spec, ur::kSpecA);
    // The late client's first container continues the interface's numbering.
    ASSERT_FALSE(l.containers.empty());
    EXPECT_EQ(l.containers[0].sequence, 1000U);
    EXPECT_TRUE(l.sequenceContinuous());
}

TEST_F(UnirecTrap, BufferOffSendsOneRecordPerContainer) {
    auto out = makeOutput("unirec;i=u:single:buffer=off");
    BackgroundReader reader(ur::Client::unixSocket(m_dir / "trap-single.sock"));
    writeNumbered(*out, 0, 5);
    out->finish();
    ur::Stream s;
    std::string error;
    ASSERT_TRUE(s.parse(reader.bytes(), false, error)) << error;
    ASSERT_EQ(s.containers.size(), 5U);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(s.containers[i].count, 1U);
        EXPECT_EQ(s.containers[i].sequence, i);
    }
}

TEST_F(UnirecTrap, HalfWaitWithoutClientsCountsRecordsAsDropped) {
    auto out = makeOutput("unirec;i=u:nobody");
    writeNumbered(*out, 0, 300);
    out->finish();
    EXPECT_EQ(out->stats().records, 0U);
    EXPECT_EQ(out->stats().dropped, 300U);
}

TEST_F(UnirecTrap, WaitBlocksUntilAClientConnects) {
    auto out = makeOutput("unirec;i=u:waiting:timeout=WAIT");
    std::unique_ptr<BackgroundReader> reader;
    std::thread connector([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        reader =
            std::make_unique<BackgroundReader>(ur::Client::unixSocket(m_dir / "trap-waiting.sock"));
    });
    writeNumbered(*out, 0, 100);  // blocks in flush until the client is there
    connector.join();
    out->finish();
    ur::Stream s;
    std::string error;
    ASSERT_TRUE(s.parse(reader->bytes(), false, error)) << error;
    EXPECT_EQ(s.records().size(), 100U);
    EXPECT_EQ(out->stats().dropped, 0U);
}

TEST_F(UnirecTrap, BadOptionsAreConfigErrors) {
    for (const std::string& text :
         {std::string("unirec"), std::string("unirec;i=x:1"), std::string("unirec;i=t:70000"),
          std::string("unirec;i=u:a,u:b"), std::string("unirec;i=u:a;p=(basic,http)"),
          std::string("unirec;i=u:a,u:b;p=basic,basic"), std::string("unirec;i=f:"),
          std::string("unirec;i=u:a:timeout=SOMETIMES"), std::string("unirec;i=u:a:colour=red"),
          std::string("unirec;i=u:a;d=256"), std::string("unirec;i=u:a;p=(basic")}) {
        EXPECT_THROW(makeOutput(text), ConfigError) << text;
    }
}

// ---- Process-plugin groups (p=) ---------------------------------------------------------

namespace fp = rowprobe::test::plugins;

ur::Stream readTrapcap(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    ur::Stream s;
    std::string error;
    EXPECT_TRUE(s.parse(bytes, true, error)) << path << ": " << error;
    return s;
}

std::vector<std::string> loggerLines(const ur::Stream& s) {
    const ur::Layout layout(s.spec);
    std::vector<std::string> out;
    for (const auto& r : s.records()) out.push_back(ur::loggerLine(layout, r));
    return out;
}

// A basic interface gets every flow; a plugin group's interface only flows with one of its
// plugins, one record per instance (passivedns answers), absent plugins zero / empty.
TEST_F(UnirecTrap, PluginGroupsGetTheirFlowsOneRecordPerInstance) {
    const fp::FakePlugin http("http", fp::kHttpFields);
    const fp::FakePlugin stats("pstats", fp::kStatsFields);
    const fp::FakePlugin dns("passivedns", fp::kDnsFields);
    const ProcessPlugin* plugins[] = {&http, &stats, &dns};
    const auto a = m_dir / "basic.trapcap";
    const auto b = m_dir / "http.trapcap";
    const auto c = m_dir / "stats-dns.trapcap";
    auto out = makeOutput("unirec;i=f:" + a.string() + ",f:" + b.string() + ",f:" + c.string() +
                          ";p=basic,http,(pstats,passivedns);I=0");
    out->setProcessPlugins(plugins);
    const TimeNs t0 = 1700000000ULL * kNsPerSec + 250'000'000;
    fp::Instances i1, i2, i3;
    i1.http(0, "GET", "example.com", 200);
    i2.http(0, "POST", "a.example", 404);
    i2.stats(1, {60, 1500}, {t0, t0 + 1'000'000}, {1, -1});
    i3.stats(1, {40}, {t0}, {1});
    i3.dns(2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 1}, 300, 7, "x.example");
    i3.dns(2, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 60, 7, "x.example");
    std::vector<FlowRecord> records = {vectorA(), vectorA(), vectorA(), vectorA()};
    i1.attach(records[1]);
    i2.attach(records[2]);
    i3.attach(records[3]);
    out->write(records);
    out->finish();

    const auto sa = readTrapcap(a);
    EXPECT_EQ(sa.spec, ur::kSpecA);
    EXPECT_EQ(sa.records().size(), 4U);

    const auto sb = readTrapcap(b);
    EXPECT_EQ(sb.spec,
              "ipaddr DST_IP,ipaddr SRC_IP,uint64 BYTES,uint64 BYTES_REV,uint64 LINK_BIT_FIELD,"
              "time TIME_FIRST,time TIME_LAST,macaddr DST_MAC,macaddr SRC_MAC,uint32 PACKETS,"
              "uint32 PACKETS_REV,uint16 DST_PORT,uint16 HTTP_RESPONSE_STATUS_CODE,uint16 "
              "SRC_PORT,uint8 DIR_BIT_FIELD,uint8 PROTOCOL,uint8 TCP_FLAGS,uint8 TCP_FLAGS_REV,"
              "string HTTP_REQUEST_HOST,string HTTP_REQUEST_METHOD");
    const std::string basicA =
        "2001:db8::1,10.0.0.1,1000,2000,0,2023-11-14T22:13:20.500000,"
        "2023-11-14T22:13:21.250000,66:77:88:99:aa:bb,00:11:22:33:44:55,10,20,443,";
    EXPECT_EQ(loggerLines(sb),
              (std::vector<std::string>{basicA + "200,12345,0,6,27,18,\"example.com\",\"GET\"",
                                        basicA + "404,12345,0,6,27,18,\"a.example\",\"POST\""}));

    const auto sc = readTrapcap(c);
    EXPECT_EQ(sc.spec,
              "ipaddr DNS_IP,ipaddr DST_IP,ipaddr SRC_IP,uint64 BYTES,uint64 BYTES_REV,"
              "uint64 LINK_BIT_FIELD,time TIME_FIRST,time TIME_LAST,macaddr DST_MAC,"
              "macaddr SRC_MAC,uint32 DNS_RR_TTL,uint32 PACKETS,uint32 PACKETS_REV,uint16 DNS_ID,"
              "uint16 DST_PORT,uint16 SRC_PORT,uint8 DIR_BIT_FIELD,uint8 PROTOCOL,uint8 TCP_FLAGS,"
              "uint8 TCP_FLAGS_REV,string DNS_NAME,int8* PPI_PKT_DIRECTIONS,uint16* "
              "PPI_PKT_LENGTHS,time* PPI_PKT_TIMES");
    const std::string mid =
        "1000,2000,0,2023-11-14T22:13:20.500000,2023-11-14T22:13:21.250000,66:77:88:99:aa:bb,"
        "00:11:22:33:44:55,";
    EXPECT_EQ(loggerLines(sc), (std::vector<std::string>{
                                   "::,2001:db8::1,10.0.0.1," + mid +
                                       "0,10,20,0,443,12345,0,6,27,18,\"\",[1|-1],[60|1500],"
                                       "[2023-11-14T22:13:20.250000|2023-11-14T22:13:20.251000]",
                                   "192.0.2.1,2001:db8::1,10.0.0.1," + mid +
                                       "300,10,20,7,443,12345,0,6,27,18,\"x.example\",[1],[40],"
                                       "[2023-11-14T22:13:20.250000]",
                                   "2001:db8::1,2001:db8::1,10.0.0.1," + mid +
                                       "60,10,20,7,443,12345,0,6,27,18,\"x.example\",[1],[40],"
                                       "[2023-11-14T22:13:20.250000]"}));
}

// Int16 / Int32 plugin fields as UniRec int16 / int32 and int16* / int32* (little-endian two's
// complement, as libunirec stores them); the logger line reads them back signed.
TEST_F(UnirecTrap, SignedPluginFieldsAreInt16AndInt32) {
    const fp::FakePlugin sig("signed", fp::kSignedFields);
    const ProcessPlugin* plugins[] = {&sig};
    const auto a = m_dir / "signed.trapcap";
    auto out = makeOutput("unirec;i=f:" + a.string() + ";p=signed;I=0");
    out->setProcessPlugins(plugins);
    fp::Instances i;
    i.signedValues(0, -2, -2'147'483'647 - 1, {-1, 32767, -32768}, {-1, 65535});
    std::vector<FlowRecord> records = {vectorA()};
    i.attach(records[0]);
    out->write(records);
    out->finish();
    const auto s = readTrapcap(a);
    EXPECT_NE(s.spec.find("int32 S32,"), std::string::npos) << s.spec;
    EXPECT_NE(s.spec.find("int16 S16,"), std::string::npos) << s.spec;
    EXPECT_NE(s.spec.find("int16* S16_LIST,int32* S32_LIST"), std::string::npos) << s.spec;
    const auto lines = loggerLines(s);
    ASSERT_EQ(lines.size(), 1U);
    EXPECT_NE(lines[0].find(",-2147483648,"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(",-2,"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("[-1|32767|-32768],[-1|65535]"), std::string::npos) << lines[0];
}

TEST_F(UnirecTrap, TunnelGroupGetsFlowsOutOfTunnelsWithTheirFields) {
    // p=basic,tunnel,(http,tunnel): every flow on the first interface with ipfixprobe's
    // template; flows out of a tunnel on the second with TUNNEL_TYPE, TUNNEL_ID, TUNNEL_SRC_IP
    // and TUNNEL_DST_IP (IPv4 and IPv6 outer addresses each in their UniRec form); flows with
    // http data or a tunnel on the third, the part a flow lacks as zeros / empty.
    const fp::FakePlugin http("http", fp::kHttpFields);
    const ProcessPlugin* plugins[] = {&http};
    const auto a = m_dir / "all.trapcap";
    const auto b = m_dir / "tunnel.trapcap";
    const auto c = m_dir / "http-tunnel.trapcap";
    auto out = makeOutput("unirec;i=f:" + a.string() + ",f:" + b.string() + ",f:" + c.string() +
                          ";p=basic,tunnel,(http,tunnel);I=0");
    out->setProcessPlugins(plugins);
    std::vector<FlowRecord> records = {vectorA(), vectorA(), vectorA(), vectorA()};
    records[1].tunnel.type = static_cast<std::uint8_t>(TunnelType::Vxlan);
    records[1].tunnel.id = 4242;
    records[1].tunnel.src = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 1};
    records[1].tunnel.dst = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 2};
    records[2].tunnel.type = static_cast<std::uint8_t>(TunnelType::GtpU);
    records[2].tunnel.id = 0xFFFFFFFF;
    records[2].tunnel.src = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    records[2].tunnel.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    fp::Instances i2, i3;
    i2.http(0, "GET", "example.com", 200);
    i3.http(0, "POST", "a.example", 404);
    i2.attach(records[2]);
    i3.attach(records[3]);
    out->write(records);
    out->finish();

    const auto sa = readTrapcap(a);
    EXPECT_EQ(sa.spec, ur::kSpecA);
    EXPECT_EQ(sa.records().size(), 4U);

    const auto sb = readTrapcap(b);
    EXPECT_EQ(sb.spec,
              "ipaddr DST_IP,ipaddr SRC_IP,ipaddr TUNNEL_DST_IP,ipaddr TUNNEL_SRC_IP,uint64 BYTES,"
              "uint64 BYTES_REV,uint64 LINK_BIT_FIELD,time TIME_FIRST,time TIME_LAST,"
              "macaddr DST_MAC,macaddr SRC_MAC,uint32 PACKETS,uint32 PACKETS_REV,"
              "uint32 TUNNEL_ID,uint16 DST_PORT,uint16 SRC_PORT,uint8 DIR_BIT_FIELD,"
              "uint8 PROTOCOL,uint8 TCP_FLAGS,uint8 TCP_FLAGS_REV,uint8 TUNNEL_TYPE");
    const std::string ips = "2001:db8::1,10.0.0.1,";
    const std::string mid =
        "1000,2000,0,2023-11-14T22:13:20.500000,2023-11-14T22:13:21.250000,66:77:88:99:aa:bb,"
        "00:11:22:33:44:55,10,20,";
    EXPECT_EQ(loggerLines(sb),
              (std::vector<std::string>{
                  ips + "192.0.2.2,192.0.2.1," + mid + "4242,443,12345,0,6,27,18,3",
                  ips + "2001:db8::2,2001:db8::1," + mid + "4294967295,443,12345,0,6,27,18,5"}));

    const auto sc = readTrapcap(c);
    EXPECT_NE(sc.spec.find("uint8 TUNNEL_TYPE,string HTTP_REQUEST_HOST"), std::string::npos)
        << sc.spec;
    const auto lines = loggerLines(sc);
    ASSERT_EQ(lines.size(), 3U);  // the tunnel-only, the tunnel+http and the http-only flow
    EXPECT_NE(lines[0].find("192.0.2.2,192.0.2.1,"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(",3,\"\",\"\""), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("2001:db8::2,2001:db8::1,"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(",5,\"example.com\",\"GET\""), std::string::npos) << lines[1];
    EXPECT_NE(lines[2].find(ips + "::,::,"), std::string::npos) << lines[2];
    EXPECT_NE(lines[2].find(",0,\"a.example\",\"POST\""), std::string::npos) << lines[2];
}

TEST_F(UnirecTrap, PluginGroupsAreCheckedAgainstTheRunningPlugins) {
    const fp::FakePlugin http("http", fp::kHttpFields);
    const fp::FakePlugin stats("pstats", fp::kStatsFields);
    const ProcessPlugin* one[] = {&http};
    const ProcessPlugin* two[] = {&http, &stats};
    const auto f = "f:" + (m_dir / "x.trapcap").string();
    // A group naming a plugin that is not running: exit 2 with the allowed names.
    try {
        makeOutput("unirec;i=" + f + ";p=htp")->setProcessPlugins(one);
        ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "plugins");
        EXPECT_NE(e.details().problem.find("'htp' is not a process plugin"), std::string::npos)
            << e.details().problem;
        EXPECT_EQ(e.details().choices, (std::vector<std::string>{"http", "basic", "tunnel"}));
    }
    EXPECT_THROW(makeOutput("unirec;i=" + f + ";p=http")->setProcessPlugins({}), ConfigError);
    // tunnel: a group of its own or with plugins, once per group, never with basic.
    EXPECT_THROW(makeOutput("unirec;i=" + f + ";p=(tunnel,tunnel)"), ConfigError);
    EXPECT_THROW(makeOutput("unirec;i=" + f + ";p=(basic,tunnel)"), ConfigError);
    auto tunnel = makeOutput("unirec;i=" + f + ";p=tunnel");
    tunnel->setProcessPlugins({});
    EXPECT_NE(tunnel->layout(0).specifier().find("uint32 TUNNEL_ID"), std::string::npos);
    // Without p=: the only plugin of a single interface is its group (ipfixprobe's rule) ...
    auto single = makeOutput("unirec;i=" + f);
    single->setProcessPlugins(one);
    EXPECT_NE(single->layout(0).specifier().find("HTTP_REQUEST_HOST"), std::string::npos);
    // ... and two plugins need the map.
    EXPECT_THROW(makeOutput("unirec;i=" + f)->setProcessPlugins(two), ConfigError);
    // No plugin: basic, as before.
    auto basic = makeOutput("unirec;i=" + f);
    basic->setProcessPlugins({});
    EXPECT_EQ(basic->layout(0).specifier(), ur::kSpecA);
}

// Issue 21 item 16: the shipped unit has PrivateTmp, so `u:` sockets under /tmp were invisible
// to NEMEA modules outside the service; the unit must put them in a directory both see.
TEST(UnirecServiceUnit, PutsUnixSocketsWhereModulesOutsideTheServiceSeeThem) {
    const std::string unit =
        test::readFile(test::sourceDir() / "packaging" / "systemd" / "rowprobe@.service.in");
    ASSERT_FALSE(unit.empty());
    if (unit.find("\nPrivateTmp=yes") == std::string::npos) GTEST_SKIP() << "no PrivateTmp";
    const std::string key = "\nEnvironment=TRAP_SOCKET_DIR=";
    const std::size_t at = unit.find(key);
    ASSERT_NE(at, std::string::npos) << "no TRAP_SOCKET_DIR: u: sockets land in the private /tmp";
    const std::string dir = unit.substr(at + key.size(), unit.find('\n', at + 1) - at - key.size());
    EXPECT_NE(dir.rfind("/tmp", 0), 0U) << dir;
    EXPECT_EQ(dir.rfind("/run/", 0), 0U) << dir;
    // the directory exists for the service: RuntimeDirectory= creates it
    EXPECT_NE(unit.find("\nRuntimeDirectory=" + dir.substr(5)), std::string::npos) << dir;
}

}  // namespace
}  // namespace rowprobe::output
