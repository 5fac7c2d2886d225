// The ndpi plugin's library (process/ndpi): the IP packet handed to nDPI, risk names, the
// configuration files, the exported record of a hand-made HTTP exchange, and the counted heap
// (every byte nDPI allocates for a flow is freed when the flow is released; a module gives back
// everything it took). Built only when rowprobe is built with nDPI.
#if defined(ROWPROBE_HAVE_NDPI)
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "process/ndpi/ndpi_heap.hpp"
#include "process/ndpi/ndpi_module.hpp"
#include "process/ndpi/ndpi_record.hpp"
#include "rowprobe/errors.hpp"
#include "test_support.hpp"

namespace rowprobe::ndpi {
namespace {

/// An IPv4 + TCP packet (20 + 20 bytes of headers) carrying `payload`.
std::vector<std::uint8_t> tcp4(std::array<std::uint8_t, 4> src, std::array<std::uint8_t, 4> dst,
                               std::uint16_t sport, std::uint16_t dport, std::uint32_t seq,
                               std::uint32_t ack, std::uint8_t flags, std::string_view payload) {
    std::vector<std::uint8_t> p(40 + payload.size(), 0);
    const auto total = static_cast<std::uint16_t>(p.size());
    p[0] = 0x45;
    p[2] = static_cast<std::uint8_t>(total >> 8);
    p[3] = static_cast<std::uint8_t>(total);
    p[8] = 64;
    p[9] = 6;
    std::copy(src.begin(), src.end(), p.begin() + 12);
    std::copy(dst.begin(), dst.end(), p.begin() + 16);
    const auto be16 = [&p](std::size_t at, std::uint16_t v) {
        p[at] = static_cast<std::uint8_t>(v >> 8);
        p[at + 1] = static_cast<std::uint8_t>(v);
    };
    const auto be32 = [&p](std::size_t at, std::uint32_t v) {
        for (int i = 0; i < 4; ++i) p[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
    };
    be16(20, sport);
    be16(22, dport);
    be32(24, seq);
    be32(28, ack);
    p[32] = 0x50;
    p[33] = flags;
    be16(34, 65535);
    std::copy(payload.begin(), payload.end(), p.begin() + 40);
    return p;
}

TEST(NdpiPacket, WholeIpPacketsAreGivenFragmentsAndCutPacketsAreNot) {
    const auto pkt = tcp4({10, 0, 0, 1}, {10, 0, 0, 2}, 1000, 80, 1, 0, 0x02, "");
    NdpiPacket out{};
    EXPECT_EQ(ipPacketForNdpi(pkt, 0, out), Skip::None);
    EXPECT_EQ(out.ip.size(), pkt.size());
    std::vector<std::uint8_t> padded = pkt;
    padded.resize(60, 0);  // Ethernet padding after the IP packet is handed on, as ndpiReader
    EXPECT_EQ(ipPacketForNdpi(padded, 0, out), Skip::None);
    EXPECT_EQ(out.ip.size(), 60U);
    EXPECT_EQ(ipPacketForNdpi(std::span(pkt).first(39), 0, out), Skip::Truncated);
    EXPECT_EQ(ipPacketForNdpi(std::span(pkt).first(10), 0, out), Skip::Truncated);
    EXPECT_EQ(ipPacketForNdpi(pkt, 185, out), Skip::Fragment);
    EXPECT_EQ(ipPacketForNdpi({}, 0, out), Skip::NotIp);
    const std::array<std::uint8_t, 4> junk{0x20, 0, 0, 0};
    EXPECT_EQ(ipPacketForNdpi(junk, 0, out), Skip::NotIp);
    std::vector<std::uint8_t> v6(48, 0);
    v6[0] = 0x60;
    v6[5] = 8;  // payload length 8
    EXPECT_EQ(ipPacketForNdpi(v6, 0, out), Skip::None);
    v6[5] = 9;
    EXPECT_EQ(ipPacketForNdpi(v6, 0, out), Skip::Truncated);
}

/// An IPv6 packet whose payload is `payload` after the fixed header, with `next` as its first
/// next-header value.
std::vector<std::uint8_t> ip6(std::uint8_t next, const std::vector<std::uint8_t>& payload) {
    std::vector<std::uint8_t> p(40 + payload.size(), 0);
    p[0] = 0x60;
    p[4] = static_cast<std::uint8_t>(payload.size() >> 8);
    p[5] = static_cast<std::uint8_t>(payload.size());
    p[6] = next;
    p[7] = 64;
    p[23] = 1;
    p[39] = 2;
    std::copy(payload.begin(), payload.end(), p.begin() + 40);
    return p;
}

/// Cuts an IPv4 packet's transport to `l4` bytes, the IP total length with it.
std::vector<std::uint8_t> cutTo(std::vector<std::uint8_t> p, std::size_t l4) {
    p.resize(20 + l4);
    p[2] = static_cast<std::uint8_t>(p.size() >> 8);
    p[3] = static_cast<std::uint8_t>(p.size());
    return p;
}

/// Gives `packets` to `m` as the plugin does: what ipPacketForNdpi refuses nDPI never sees.
void feedAsThePlugin(DetectionModule& m, FlowSlot& slot,
                     const std::vector<std::vector<std::uint8_t>>& packets, std::uint64_t& ts) {
    for (const auto& packet : packets) {
        NdpiPacket ip{};
        if (ipPacketForNdpi(packet, 0, ip) == Skip::None) slot.proto = m.feed(slot, ip, ts);
        ts += 1'000'000;
    }
}

TEST(NdpiPacket, TcpAndUdpHeadersThatNdpiWouldNotFindWholeAreNotGiven) {
    const auto tcp = tcp4({10, 0, 0, 1}, {10, 0, 0, 2}, 1000, 80, 1, 0, 0x18, "abc");
    NdpiPacket out{};
    ASSERT_EQ(ipPacketForNdpi(tcp, 0, out), Skip::None);
    EXPECT_EQ(out.transport, 6);
    EXPECT_EQ(ipPacketForNdpi(cutTo(tcp, 19), 0, out), Skip::CutTransport);
    auto longOffset = cutTo(tcp, 20);
    longOffset[32] = 0xF0;  // a 60-byte header in 20 bytes
    EXPECT_EQ(ipPacketForNdpi(longOffset, 0, out), Skip::CutTransport);
    longOffset[32] = 0x50;
    EXPECT_EQ(ipPacketForNdpi(longOffset, 0, out), Skip::None);

    auto udp = cutTo(tcp, 8);
    udp[9] = 17;
    ASSERT_EQ(ipPacketForNdpi(udp, 0, out), Skip::None);
    EXPECT_EQ(out.transport, 17);
    EXPECT_EQ(ipPacketForNdpi(cutTo(udp, 7), 0, out), Skip::CutTransport);

    auto icmp = cutTo(tcp, 2);  // nDPI has no minimum for other transports
    icmp[9] = 1;
    ASSERT_EQ(ipPacketForNdpi(icmp, 0, out), Skip::None);
    EXPECT_EQ(out.transport, 1);

    // IPv6: the transport is the one after the extension headers nDPI walks.
    std::vector<std::uint8_t> behind(8 + tcp.size() - 20, 0);
    behind[0] = 6;  // a hop-by-hop header, then TCP
    std::copy(tcp.begin() + 20, tcp.end(), behind.begin() + 8);
    ASSERT_EQ(ipPacketForNdpi(ip6(0, behind), 0, out), Skip::None);
    EXPECT_EQ(out.transport, 6);
    behind.resize(8 + 12);
    EXPECT_EQ(ipPacketForNdpi(ip6(0, behind), 0, out), Skip::CutTransport);
    std::vector<std::uint8_t> laterFragment(8 + 20, 0);
    laterFragment[0] = 6;
    laterFragment[3] = 8;  // offset 1 (8 bytes): nDPI finds no transport and ignores the packet
    ASSERT_EQ(ipPacketForNdpi(ip6(44, laterFragment), 0, out), Skip::None);
    EXPECT_EQ(out.transport, kNoTransport);
}

// nDPI 4.2 labels a flow BitTorrent when its addresses and ports are in the BitTorrent cache
// (filled by an earlier BitTorrent connection) and then runs BitTorrent's extra dissector on
// the flow's next packets; that dissector reads the TCP ports through the header nDPI did not
// find in a segment with a cut header. Found by ndpi_record_fuzz as a NULL read.
TEST(NdpiModule, ABitTorrentFlowLabelledFromTheCacheSurvivesASegmentWithACutHeader) {
    DetectionModule m{ModuleConfig{}};
    const std::array<std::uint8_t, 4> c{192, 168, 7, 2};
    const std::array<std::uint8_t, 4> s{192, 168, 7, 1};
    std::uint64_t ts = 1'600'000'000'000'000'000ULL;
    std::string handshake =
        "\x13"
        "BitTorrent protocol";
    handshake.append(8, '\0');  // reserved bytes; no info hash yet
    FlowSlot first{};
    feedAsThePlugin(
        m, first,
        {tcp4(c, s, 40000, 6881, 1, 0, 0x02, ""), tcp4(s, c, 6881, 40000, 1, 2, 0x12, ""),
         tcp4(c, s, 40000, 6881, 2, 2, 0x18, handshake)},
        ts);
    ASSERT_EQ(first.proto.app_protocol, NDPI_PROTOCOL_BITTORRENT);
    m.release(first);

    FlowSlot again{};
    std::vector<std::vector<std::uint8_t>> packets = {tcp4(c, s, 40000, 6881, 99, 0, 0x02, ""),
                                                      tcp4(s, c, 6881, 40000, 0, 100, 0x12, ""),
                                                      tcp4(c, s, 40000, 6881, 100, 1, 0x10, "")};
    for (std::uint32_t i = 0; i < 9; ++i)  // the 9th is labelled from the cache
        packets.push_back(tcp4(c, s, 40000, 6881, 100 + i * 8, 1, 0x18, "\x01\x02\x03\x04zzzz"));
    const auto cut = cutTo(tcp4(c, s, 40000, 6881, 999, 1, 0x18, ""), 12);
    for (int i = 0; i < 4; ++i) packets.push_back(cut);
    feedAsThePlugin(m, again, packets, ts);
    EXPECT_EQ(again.proto.app_protocol, NDPI_PROTOCOL_BITTORRENT);
    EXPECT_EQ(again.fed, 12);
    m.release(again);
}

// A flow whose packets nDPI walks to two transports (here an IPv6 destination-options header
// the parser and nDPI could read differently) must not get its TCP state replaced: nDPI 4.2
// would leak the TLS reassembly buffer of a flow that is no longer TCP when released.
TEST(NdpiModule, APacketOfAnotherTransportIsNotGivenAndTheFlowsHeapIsFreed) {
    DetectionModule m{ModuleConfig{}};
    std::uint64_t ts = 1'600'000'000'000'000'000ULL;
    const auto tcpOver6 = [](const std::vector<std::uint8_t>& v4) {
        return ip6(6, std::vector<std::uint8_t>(v4.begin() + 20, v4.end()));
    };
    // A TLS handshake record announcing 4000 bytes, of which 200 arrive: nDPI buffers it.
    // A ClientHello of 3996 bytes in it, version TLS 1.2.
    const std::array<char, 11> head{'\x16', '\x03', '\x01', '\x0f', '\xa0', '\x01',
                                    '\x00', '\x0f', '\x9c', '\x03', '\x03'};
    std::string record(head.begin(), head.end());
    record.append(200 - record.size(), 'r');
    const std::array<std::uint8_t, 4> a{0, 0, 0, 1};
    const std::array<std::uint8_t, 4> b{0, 0, 0, 2};
    std::vector<std::uint8_t> options(8 + 16, 0);
    options[0] = 9;  // destination options, then transport 9 (IGP)
    FlowSlot slot{};
    feedAsThePlugin(m, slot,
                    {tcpOver6(tcp4(a, b, 40000, 443, 1, 0, 0x02, "")),
                     tcpOver6(tcp4(b, a, 443, 40000, 1, 2, 0x12, "")),
                     tcpOver6(tcp4(a, b, 40000, 443, 2, 2, 0x18, record)), ip6(60, options)},
                    ts);
    EXPECT_EQ(slot.fed, 3);
    EXPECT_GT(slot.heapBytes, 0);  // the reassembly buffer
    m.release(slot);
    EXPECT_EQ(m.flowHeap().liveBytes(), 0U);
    EXPECT_EQ(m.flowHeap().retainedBytes.load(), 0U);
}

TEST(NdpiRecord, RiskNamesAreNdpisNamesCommaSeparatedAndNeverCut) {
    std::array<char, 512> buf{};
    const std::uint64_t mask = (std::uint64_t{1} << NDPI_KNOWN_PROTOCOL_ON_NON_STANDARD_PORT) |
                               (std::uint64_t{1} << NDPI_HTTP_NUMERIC_IP_HOST);
    const std::string got(buf.data(), riskNames(mask, buf));
    EXPECT_EQ(got, std::string(ndpi_risk2str(NDPI_KNOWN_PROTOCOL_ON_NON_STANDARD_PORT)) + "," +
                       ndpi_risk2str(NDPI_HTTP_NUMERIC_IP_HOST));
    EXPECT_EQ(riskNames(0, buf), 0U);
    std::array<char, 8> tiny{};
    EXPECT_EQ(riskNames(mask, tiny), 0U);  // a name that does not fit is left out whole
}

TEST(NdpiModule, AMissingConfigurationFileIsAConfigErrorNamingOptionAndFile) {
    ModuleConfig c;
    c.categories = "/nonexistent/categories.txt";
    try {
        DetectionModule m(c);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "categories");
        EXPECT_EQ(e.details().value, "/nonexistent/categories.txt");
        EXPECT_NE(e.render().find("cannot read"), std::string::npos) << e.render();
    }
}

TEST(NdpiModule, TheConfigurationFilesNdpiReaderIsGivenLoad) {
    const auto cfg = test::testdataDir() / "ndpi-4.2" / "config";
    if (!std::filesystem::exists(cfg / "protos.txt")) GTEST_SKIP() << "no " << cfg;
    ModuleConfig c{.protos = cfg / "protos.txt",
                   .categories = cfg / "categories.txt",
                   .riskyDomains = cfg / "risky_domains.txt",
                   .ja3 = cfg / "ja3_fingerprints.csv",
                   .sha1 = cfg / "sha1_fingerprints.csv"};
    DetectionModule m(c);
    EXPECT_GT(m.moduleHeap().liveBytes(), 0U);
}

TEST(NdpiModule, AnHttpExchangeIsLabelledAndItsHeapIsFreedOnRelease) {
    DetectionModule m{ModuleConfig{}};
    FlowSlot slot{};
    const std::array<std::uint8_t, 4> c{192, 168, 1, 2};
    const std::array<std::uint8_t, 4> s{192, 168, 1, 1};
    const std::uint64_t t = 1'600'000'000'000'000'000ULL;
    const std::string req =
        "GET /index.html HTTP/1.1\r\nHost: www.example.org\r\nUser-Agent: rowprobe-test/1.0\r\n"
        "Accept: */*\r\n\r\n";
    const std::string rsp =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok";
    const std::vector<std::vector<std::uint8_t>> packets = {
        tcp4(c, s, 40000, 80, 100, 0, 0x02, ""),
        tcp4(s, c, 80, 40000, 500, 101, 0x12, ""),
        tcp4(c, s, 40000, 80, 101, 501, 0x10, ""),
        tcp4(c, s, 40000, 80, 101, 501, 0x18, req),
        tcp4(s, c, 80, 40000, 501, 101 + static_cast<std::uint32_t>(req.size()), 0x18, rsp),
    };
    ndpi_protocol p{};
    for (std::size_t i = 0; i < packets.size(); ++i) {
        NdpiPacket ip{};
        ASSERT_EQ(ipPacketForNdpi(packets[i], 0, ip), Skip::None);
        p = m.feed(slot, ip, t + i * 1'000'000);
        slot.proto = p;
    }
    EXPECT_EQ(p.app_protocol, NDPI_PROTOCOL_HTTP);
    EXPECT_EQ(slot.fed, packets.size());
    EXPECT_GT(m.flowHeap().allocations.load(), 0U);  // nDPI keeps the user agent on the heap
    EXPECT_GT(m.flowHeap().liveBytes(), 0U);

    std::array<std::uint8_t, 4096> buf{};
    InstanceWriter out(buf.data(), buf.size());
    out.setPlugin(0);
    writeInstance(m, slot, out);
    const PluginInstances all(out.data(), out.size());
    ASSERT_FALSE(all.empty());
    const auto data = (*all.begin()).data;
    const auto field = [](std::string_view name) -> const FieldSpec& {
        for (const FieldSpec& f : ndpiFields())
            if (f.name == name) return f;
        throw std::runtime_error(std::string(name));
    };
    EXPECT_EQ(readPluginString(field("ndpi_app"), data), "HTTP");
    EXPECT_EQ(readPluginString(field("ndpi_l7_proto_name"), data), "HTTP");
    EXPECT_EQ(readPluginUnsigned(field("ndpi_app_id"), data), NDPI_PROTOCOL_HTTP);
    EXPECT_EQ(readPluginString(field("ndpi_host"), data), "www.example.org");
    EXPECT_EQ(readPluginString(field("ndpi_user_agent"), data), "rowprobe-test/1.0");
    EXPECT_EQ(readPluginString(field("ndpi_confidence"), data), "DPI");
    EXPECT_EQ(readPluginString(field("ndpi_category"), data), "Web");

    m.release(slot);
    EXPECT_EQ(m.flowHeap().liveBytes(), 0U);
    EXPECT_EQ(m.flowHeap().liveAllocations(), 0U);
}

TEST(NdpiHeap, AModuleGivesBackEveryByteItTook) {
    installHeapHooks();
    HeapCounters counted;
    {
        HeapScope scope(counted);
        ndpi_detection_module_struct* m = ndpi_init_detection_module(ndpi_no_prefs);
        ASSERT_NE(m, nullptr);
        ndpi_finalize_initialization(m);
        EXPECT_GT(counted.liveBytes(), 100'000U);  // automata and lists
        ndpi_exit_detection_module(m);
    }
    EXPECT_GT(counted.allocations.load(), 0U);
    EXPECT_EQ(counted.liveAllocations(), 0U);
    EXPECT_EQ(counted.liveBytes(), 0U);
}

TEST(NdpiRecord, ZeekServiceComesFromTheMasterThenTheAppAndNeverFromAGuess) {
    const auto proto = [](std::uint16_t master, std::uint16_t app) {
        ndpi_protocol p{};
        p.master_protocol = master;
        p.app_protocol = app;
        return p;
    };
    EXPECT_EQ(zeekService(proto(NDPI_PROTOCOL_TLS, NDPI_PROTOCOL_GOOGLE), NDPI_CONFIDENCE_DPI),
              "ssl");
    EXPECT_EQ(zeekService(proto(NDPI_PROTOCOL_DNS, NDPI_PROTOCOL_GOOGLE), NDPI_CONFIDENCE_DPI),
              "dns");
    EXPECT_EQ(zeekService(proto(0, NDPI_PROTOCOL_HTTP), NDPI_CONFIDENCE_DPI_CACHE), "http");
    EXPECT_EQ(zeekService(proto(0, NDPI_PROTOCOL_SSH), NDPI_CONFIDENCE_MATCH_BY_PORT), "");
    EXPECT_EQ(zeekService(proto(0, NDPI_PROTOCOL_GOOGLE), NDPI_CONFIDENCE_DPI), "");
    EXPECT_EQ(zeekService(proto(0, 0), NDPI_CONFIDENCE_UNKNOWN), "");
}

TEST(NdpiRecord, FieldsWithoutAStandardOrNtopElementGetOperatorIdsInOrder) {
    const auto fields = ndpiFields();
    std::uint16_t last = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::uint16_t id = operatorElementId(i);
        if (fields[i].ipfix.id != 0) {
            EXPECT_EQ(id, 0) << fields[i].name;
            continue;
        }
        EXPECT_GT(id, last) << fields[i].name;
        last = id;
    }
    EXPECT_EQ(fields[0].ipfix.id, 96);  // IANA applicationName
}

}  // namespace
}  // namespace rowprobe::ndpi
#endif
