// The http, tls, dns, passivedns, idpcontent and pstats plugins through the SDK as the flow table uses
// them (flow_driver.hpp): hooks called in arrival order with a tier-2 pool, their results (flush,
// flush-reinsert, done), and the instances their write hook serialises, read back with the
// outputs' readers.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow_driver.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe {
namespace {

using test::Bytes;
using test::bytesOf;
using test::FlowDriver;
using test::frame;
using test::kClient;
using test::kServer;

void put16(Bytes& b, unsigned v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}

Bytes tlsHello(int type, const Bytes& afterSessionId, const Bytes& extensions) {
    Bytes body;
    put16(body, 0x0303);
    body.insert(body.end(), 32, 1);
    body.push_back(0);
    body.insert(body.end(), afterSessionId.begin(), afterSessionId.end());
    put16(body, static_cast<unsigned>(extensions.size()));
    body.insert(body.end(), extensions.begin(), extensions.end());
    Bytes rec = {22, 3, 1};
    put16(rec, static_cast<unsigned>(body.size() + 4));
    rec.push_back(static_cast<std::uint8_t>(type));
    rec.push_back(0);
    put16(rec, static_cast<unsigned>(body.size()));
    rec.insert(rec.end(), body.begin(), body.end());
    return rec;
}

Bytes dnsMessage(bool response, const std::vector<std::array<std::uint8_t, 4>>& answers) {
    Bytes m;
    put16(m, 0x4242);
    put16(m, response ? 0x8180 : 0x0100);
    put16(m, 1);
    put16(m, response ? static_cast<unsigned>(answers.size()) : 0);
    put16(m, 0);
    put16(m, 0);
    for (const std::string_view label : {"example", "org"}) {
        m.push_back(static_cast<std::uint8_t>(label.size()));
        m.insert(m.end(), label.begin(), label.end());
    }
    m.push_back(0);
    put16(m, 1);
    put16(m, 1);
    if (!response) return m;
    for (const auto& a : answers) {
        put16(m, 0xc00c);
        put16(m, 1);
        put16(m, 1);
        put16(m, 0);
        put16(m, 300);
        put16(m, 4);
        m.insert(m.end(), a.begin(), a.end());
    }
    return m;
}

}  // namespace

TEST(HttpPlugin, RequestResponseAndKeepAliveFlushReinsert) {
    FlowDriver d("http");
    EXPECT_EQ(d.packet(frame(6, kClient, 40000, kServer, 80,
                             bytesOf("GET /index HTTP/1.1\r\nHost: example.org\r\n\r\n"))),
              kContinue);
    EXPECT_EQ(d.packet(frame(6, kServer, 80, kClient, 40000,
                             bytesOf("HTTP/1.1 200 OK\r\nServer: test\r\n\r\n"))),
              kContinue);
    const auto inst = d.write();
    ASSERT_EQ(inst.size(), 1u);
    EXPECT_EQ(inst[0].at("http_method"), "GET");
    EXPECT_EQ(inst[0].at("http_url"), "/index");
    EXPECT_EQ(inst[0].at("http_host"), "example.org");
    EXPECT_EQ(inst[0].at("http_status"), "200");
    EXPECT_EQ(inst[0].at("http_server"), "test");
    EXPECT_EQ(d.packet(frame(6, kClient, 40000, kServer, 80,
                             bytesOf("GET /next HTTP/1.1\r\nHost: example.org\r\n\r\n"))),
              kFlushReinsert);
}

TEST(HttpPlugin, NonHttpFlowHasNoInstanceAndTakesNoRecord) {
    FlowDriver d("http");
    d.packet(frame(6, kClient, 40000, kServer, 22, bytesOf("SSH-2.0-OpenSSH_9.0\r\n")));
    EXPECT_TRUE(d.write().empty());
    EXPECT_EQ(d.pool().available(), 4u);
}

TEST(TlsPlugin, HelloPairFieldsAndDoneAfterServerHello) {
    FlowDriver d("tls;ja4=ipfixprobe");
    Bytes ciphers;
    put16(ciphers, 4);
    put16(ciphers, 0x1301);
    put16(ciphers, 0x1302);
    ciphers.insert(ciphers.end(), {1, 0});
    Bytes ext;
    put16(ext, 0x0a0a);  // GREASE
    put16(ext, 0);
    put16(ext, 0);  // server_name "a.example"
    put16(ext, 14);
    put16(ext, 12);
    ext.push_back(0);
    put16(ext, 9);
    for (const char c : std::string_view("a.example")) ext.push_back(static_cast<std::uint8_t>(c));
    EXPECT_EQ(d.packet(frame(6, kClient, 40001, kServer, 443, tlsHello(1, ciphers, ext))),
              kContinue);
    Bytes selected;
    put16(selected, 0x1302);
    selected.push_back(0);
    Bytes sext;
    put16(sext, 43);
    put16(sext, 2);
    put16(sext, 0x0304);
    EXPECT_EQ(d.packet(frame(6, kServer, 443, kClient, 40001, tlsHello(2, selected, sext))), kDone);
    const auto inst = d.write();
    ASSERT_EQ(inst.size(), 1u);
    EXPECT_EQ(inst[0].at("tls_sni"), "a.example");
    EXPECT_EQ(inst[0].at("tls_version"), "772");
    EXPECT_EQ(inst[0].at("tls_cipher"), "4866");
    EXPECT_EQ(inst[0].at("tls_ext_types"), "[2570|0]");
    EXPECT_EQ(inst[0].at("tls_ext_lengths"), "[0|14]");
    EXPECT_EQ(inst[0].at("tls_ja4").substr(0, 9), "t12d2200_");  // ipfixprobe: GREASE counted
    EXPECT_EQ(inst[0].at("tls_ja3").size(), 32u);
    EXPECT_EQ(inst[0].at("tls_ja3s").size(), 32u);
}

TEST(TlsPlugin, BadJa4OptionStopsStartUp) {
    EXPECT_THROW(FlowDriver("tls;ja4=foxio"), ConfigError);
}

TEST(DnsPlugin, EveryMessageIsFlushedAndOtherPortsAreDone) {
    FlowDriver d("dns");
    EXPECT_EQ(d.packet(frame(17, kClient, 5353, kServer, 53, dnsMessage(false, {}))), kFlush);
    auto inst = d.write();
    ASSERT_EQ(inst.size(), 1u);
    EXPECT_EQ(inst[0].at("dns_qname"), "example.org");
    EXPECT_EQ(inst[0].at("dns_id"), std::to_string(0x4242));
    d.reset();
    EXPECT_EQ(d.packet(frame(17, kServer, 53, kClient, 5353, dnsMessage(true, {{1, 2, 3, 4}}))),
              kFlush);
    inst = d.write();
    ASSERT_EQ(inst.size(), 1u);
    EXPECT_EQ(inst[0].at("dns_rdata"), "312e322e332e34");  // "1.2.3.4", text in bytes
    EXPECT_EQ(inst[0].at("dns_rdata_len"), "7");

    FlowDriver other("dns");
    EXPECT_EQ(other.packet(frame(17, kClient, 5000, kServer, 5001, dnsMessage(false, {}))), kDone);
}

TEST(PassiveDnsPlugin, OneInstancePerAnswerAfterTheResponse) {
    FlowDriver d("passivedns");
    EXPECT_EQ(d.packet(frame(17, kClient, 5353, kServer, 53, dnsMessage(false, {}))), kContinue);
    EXPECT_EQ(d.packet(frame(17, kServer, 53, kClient, 5353,
                             dnsMessage(true, {{192, 0, 2, 1}, {192, 0, 2, 2}}))),
              kFlush);
    const auto inst = d.write();
    ASSERT_EQ(inst.size(), 2u);
    EXPECT_EQ(inst[0].at("dns_ip"), "00000000000000000000ffffc0000201");
    EXPECT_EQ(inst[1].at("dns_ip"), "00000000000000000000ffffc0000202");
    EXPECT_EQ(inst[0].at("dns_name"), "example.org");
    EXPECT_EQ(inst[0].at("dns_atype"), "1");
    EXPECT_EQ(inst[0].at("dns_ttl"), "300");
}

TEST(IdpContentPlugin, BothDirectionsThenDone) {
    FlowDriver d("idpcontent");
    EXPECT_EQ(d.packet(frame(6, kClient, 40002, kServer, 80, {})), kContinue);
    EXPECT_EQ(d.packet(frame(6, kClient, 40002, kServer, 80, bytesOf("ping"))), kContinue);
    EXPECT_EQ(d.packet(frame(6, kServer, 80, kClient, 40002, bytesOf("pong!"))), kDone);
    const auto inst = d.write();
    ASSERT_EQ(inst.size(), 1u);
    EXPECT_EQ(inst[0].at("idp_content"), "70696e67");
    EXPECT_EQ(inst[0].at("idp_content_rev"), "706f6e6721");
}

// pstats keeps its count in tier-1 state and its entries in the tier-2 record: what a packet
// records, what it skips, and where it stops.
TEST(PstatsPlugin, PayloadPacketsInOrderZeroesSkippedUnlessAsked) {
    for (const bool zeroes : {false, true}) {
        FlowDriver d(zeroes ? "pstats;includezeroes" : "pstats");
        EXPECT_EQ(d.packet(frame(6, kClient, 40004, kServer, 80, bytesOf("hello"))), kContinue);
        EXPECT_EQ(d.packet(frame(6, kServer, 80, kClient, 40004, {})), kContinue);
        EXPECT_EQ(d.packet(frame(6, kServer, 80, kClient, 40004, bytesOf("hi"))), kContinue);
        const auto inst = d.write();
        ASSERT_EQ(inst.size(), 1u);
        EXPECT_EQ(inst[0].at("ppi_pkt_lengths"), zeroes ? "[5|0|2]" : "[5|2]");
        EXPECT_EQ(inst[0].at("ppi_pkt_directions"), zeroes ? "[1|-1|-1]" : "[1|-1]");
    }
}

TEST(PstatsPlugin, SkipdupDropsARetransmissionOnlyWhenAsked) {
    // frame() gives every TCP segment seq 1, ack 1, PSH|ACK: the second is a retransmission.
    for (const bool skip : {false, true}) {
        FlowDriver d(skip ? "pstats;skipdup" : "pstats");
        d.packet(frame(6, kClient, 40005, kServer, 80, bytesOf("abc")));
        d.packet(frame(6, kClient, 40005, kServer, 80, bytesOf("abc")));
        d.packet(frame(6, kClient, 40005, kServer, 80, bytesOf("abcd")));  // new length: kept
        const auto inst = d.write();
        ASSERT_EQ(inst.size(), 1u);
        EXPECT_EQ(inst[0].at("ppi_pkt_lengths"), skip ? "[3|4]" : "[3|3|4]");
    }
}

TEST(PstatsPlugin, ThirtyPacketsThenDone) {
    FlowDriver d("pstats");
    for (int i = 1; i < 30; ++i)
        EXPECT_EQ(d.packet(frame(17, kClient, 40006, kServer, 9999, Bytes(i, 0x55))), kContinue);
    EXPECT_EQ(d.packet(frame(17, kClient, 40006, kServer, 9999, Bytes(30, 0x55))), kDone);
    const auto inst = d.write();
    ASSERT_EQ(inst.size(), 1u);
    std::string lengths = "[";
    for (int i = 1; i <= 30; ++i) lengths += (i > 1 ? "|" : "") + std::to_string(i);
    EXPECT_EQ(inst[0].at("ppi_pkt_lengths"), lengths + "]");
}

TEST(ProcessPlugins, ExhaustedPoolMeansNoInstanceNeverACrash) {
    Bytes ciphers;
    put16(ciphers, 2);
    put16(ciphers, 0x1301);
    ciphers.insert(ciphers.end(), {1, 0});
    const std::vector<std::pair<const char*, Bytes>> cases = {
        {"http",
         frame(6, kClient, 40003, kServer, 80, bytesOf("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))},
        {"tls", frame(6, kClient, 40003, kServer, 443, tlsHello(1, ciphers, {}))},
        {"dns", frame(17, kClient, 5353, kServer, 53, dnsMessage(false, {}))},
        {"passivedns", frame(17, kServer, 53, kClient, 5353, dnsMessage(true, {{1, 1, 1, 1}}))},
        {"idpcontent", frame(6, kClient, 40003, kServer, 80, bytesOf("data"))}};
    for (const auto& [name, packet] : cases) {
        FlowDriver d(name, 0);
        d.packet(packet);
        EXPECT_TRUE(d.write().empty()) << name;
        EXPECT_EQ(d.pool().exhausted(), 1u) << name;
    }
}

}  // namespace rowprobe
