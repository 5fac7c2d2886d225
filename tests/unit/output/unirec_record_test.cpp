// UniRec layout and encoding against golden vectors (records and time values
// produced by libunirec 1.18.2).
#include "unirec_record.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "rowprobe/fields.hpp"
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

UnirecEncoder basicEncoder(bool odid = false, ExportConstants c = {}) {
    return UnirecEncoder(fieldSpecs(unirecBasicFields(odid)), c);
}

TEST(UnirecRecord, BasicSpecifierIsVectorAs) {
    const auto enc = basicEncoder();
    EXPECT_EQ(enc.layout().specifier(), ur::kSpecA);
    EXPECT_EQ(enc.layout().specifier().size(), 279U);
    EXPECT_EQ(enc.recordSize(), 100U);
}

TEST(UnirecRecord, BasicOffsetsAreVectorAs) {
    const auto enc = basicEncoder();
    const std::pair<const char*, std::size_t> expected[] = {
        {"DST_IP", 0},          {"SRC_IP", 16},        {"BYTES", 32},       {"BYTES_REV", 40},
        {"LINK_BIT_FIELD", 48}, {"TIME_FIRST", 56},    {"TIME_LAST", 64},   {"DST_MAC", 72},
        {"SRC_MAC", 78},        {"PACKETS", 84},       {"PACKETS_REV", 88}, {"DST_PORT", 92},
        {"SRC_PORT", 94},       {"DIR_BIT_FIELD", 96}, {"PROTOCOL", 97},    {"TCP_FLAGS", 98},
        {"TCP_FLAGS_REV", 99}};
    for (const auto& [name, offset] : expected) {
        const int i = enc.layout().find(name);
        ASSERT_GE(i, 0) << name;
        EXPECT_EQ(enc.layout().fields()[i].offset, offset) << name;
    }
}

TEST(UnirecRecord, GoldenRecordAFromAFlowRecord) {
    const auto enc = basicEncoder();
    std::vector<std::uint8_t> out(enc.recordSize());
    enc.encode(vectorA(), out.data());
    EXPECT_EQ(out, ur::goldenRecordA());
}

TEST(UnirecRecord, ExporterConstantsAndOdid) {
    ExportConstants c;
    c.linkBitField = 0x0102030405060708ULL;
    c.dirBitField = 3;
    c.odid = 0xAABBCCDD;
    auto enc = basicEncoder(false, c);
    std::vector<std::uint8_t> out(enc.recordSize());
    enc.encode(vectorA(), out.data());
    const ur::Layout l(enc.layout().specifier());
    EXPECT_EQ(l.number(out, "LINK_BIT_FIELD"), 0x0102030405060708ULL);
    EXPECT_EQ(l.number(out, "DIR_BIT_FIELD"), 3U);

    auto odid = basicEncoder(true, c);
    EXPECT_EQ(odid.layout().find("LINK_BIT_FIELD"), -1);
    ASSERT_GE(odid.layout().find("ODID"), 0);
    EXPECT_NE(odid.layout().specifier().find("uint32 ODID"), std::string::npos);
    EXPECT_EQ(odid.recordSize(), 96U);
    std::vector<std::uint8_t> rec(odid.recordSize());
    odid.encode(vectorA(), rec.data());
    EXPECT_EQ(ur::Layout(odid.layout().specifier()).number(rec, "ODID"), 0xAABBCCDDU);
}

TEST(UnirecRecord, TimeConversionsMatchLibunirec) {
    auto frac = [](std::uint64_t usec) { return unirecTimeFromNs(usec * 1000) & 0xFFFFFFFFULL; };
    EXPECT_EQ(frac(500000), 0x80000000ULL);
    EXPECT_EQ(frac(250000), 0x40000000ULL);
    EXPECT_EQ(frac(123456), 0x1F9ACFFAULL);
    EXPECT_EQ(unirecTimeFromNs(1700000000ULL * kNsPerSec) >> 32, 1700000000ULL);
    // logger's decoding rounds back to the exact nanosecond
    const ur::Layout l("time T");
    for (std::uint64_t ns : {0ULL, 1ULL, 999ULL, 123456789ULL, 999999999ULL}) {
        const std::uint64_t v = unirecTimeFromNs(1700000000ULL * kNsPerSec + ns);
        std::vector<std::uint8_t> rec(8);
        std::memcpy(rec.data(), &v, 8);
        EXPECT_EQ(l.timeNs(rec, "T"), 1700000000ULL * kNsPerSec + ns);
    }
    // logger's own decoding is exact for microsecond timestamps (ipfixprobe's precision)
    for (std::uint64_t us = 0; us < 1'000'000; us += 997) {
        const std::uint64_t v = unirecTimeFromNs(1700000000ULL * kNsPerSec + us * 1000);
        std::vector<std::uint8_t> rec(8);
        std::memcpy(rec.data(), &v, 8);
        ASSERT_EQ(l.timeUsLogger(rec, "T"), 1700000000ULL * 1'000'000 + us);
    }
}

TEST(UnirecRecord, IpaddrFormsForIpv4AndIpv6) {
    const auto enc = basicEncoder();
    FlowRecord r = vectorA();
    inet_pton(AF_INET6, "fe80::1:2", r.srcAddr.data());
    r.dstAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 254};
    std::vector<std::uint8_t> out(enc.recordSize());
    enc.encode(r, out.data());
    const ur::Layout l(enc.layout().specifier());
    EXPECT_EQ(l.ip(out, "SRC_IP"), "fe80::1:2");
    EXPECT_EQ(l.ip(out, "DST_IP"), "192.168.1.254");
    EXPECT_EQ(l.raw(out, "DST_IP"), ur::hex("0000000000000000 c0a801fe ffffffff"));
}

TEST(UnirecRecord, VariableLengthLayoutIsVectorB) {
    std::vector<std::pair<std::string, std::string>> fields;
    for (const FieldSpec* f : fieldSpecs(unirecBasicFields())) {
        fields.emplace_back(std::string(f->unirec.type), std::string(f->unirec.name));
    }
    fields.insert(fields.end(), {{"string", "HTTP_REQUEST_HOST"},
                                 {"string", "HTTP_REQUEST_URL"},
                                 {"uint16", "HTTP_RESPONSE_STATUS_CODE"},
                                 {"uint16*", "PPI_PKT_LENGTHS"},
                                 {"time*", "PPI_PKT_TIMES"},
                                 {"uint8*", "PPI_PKT_FLAGS"},
                                 {"int8*", "PPI_PKT_DIRECTIONS"},
                                 {"bytes", "TLS_JA3"}});
    const UnirecLayout b(fields);
    const std::string specB =
        "ipaddr DST_IP,ipaddr SRC_IP,uint64 BYTES,uint64 BYTES_REV,uint64 LINK_BIT_FIELD,time "
        "TIME_FIRST,"
        "time TIME_LAST,macaddr DST_MAC,macaddr SRC_MAC,uint32 PACKETS,uint32 PACKETS_REV,uint16 "
        "DST_PORT,"
        "uint16 HTTP_RESPONSE_STATUS_CODE,uint16 SRC_PORT,uint8 DIR_BIT_FIELD,uint8 PROTOCOL,uint8 "
        "TCP_FLAGS,"
        "uint8 TCP_FLAGS_REV,string HTTP_REQUEST_HOST,string HTTP_REQUEST_URL,int8* "
        "PPI_PKT_DIRECTIONS,"
        "uint8* PPI_PKT_FLAGS,bytes TLS_JA3,uint16* PPI_PKT_LENGTHS,time* PPI_PKT_TIMES";
    EXPECT_EQ(b.specifier(), specB);
    EXPECT_EQ(b.specifier().size(), 465U);
    EXPECT_EQ(b.staticSize(), 130U);

    // Fixed values from record A (encoded by the real path), placed by B's layout.
    const auto encA = basicEncoder();
    std::vector<std::uint8_t> recA(encA.recordSize());
    encA.encode(vectorA(), recA.data());
    UnirecRecordBuilder builder(b);
    for (const auto& f : encA.layout().fields()) {
        builder.setFixed(f.name, std::span<const std::uint8_t>(recA.data() + f.offset, f.size()));
    }
    const std::uint8_t status[] = {0xc8, 0x00};
    builder.setFixed("HTTP_RESPONSE_STATUS_CODE", status);
    const std::string host = "ex.com";
    const std::string url = "/a";
    builder.setVariable("HTTP_REQUEST_HOST",
                        {reinterpret_cast<const std::uint8_t*>(host.data()), host.size()});
    builder.setVariable("HTTP_REQUEST_URL",
                        {reinterpret_cast<const std::uint8_t*>(url.data()), url.size()});
    builder.setVariable("PPI_PKT_DIRECTIONS", ur::hex("01 ff"));
    builder.setVariable("PPI_PKT_FLAGS", ur::hex("02 12"));
    builder.setVariable("TLS_JA3", ur::hex("de ad be"));
    builder.setVariable("PPI_PKT_LENGTHS", ur::hex("3c 00 dc 05"));
    const std::uint64_t t = unirecTimeFromNs(1700000000ULL * kNsPerSec + 500'000'000);
    std::vector<std::uint8_t> times(8);
    std::memcpy(times.data(), &t, 8);
    builder.setVariable("PPI_PKT_TIMES", times);

    const auto golden = ur::hex(
        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
        "00 00 00 00 00 00 00 00 0a 00 00 01 ff ff ff ff"
        "e8 03 00 00 00 00 00 00 d0 07 00 00 00 00 00 00"
        "01 00 00 00 00 00 00 00 00 00 00 80 00 f1 53 65"
        "00 00 00 40 01 f1 53 65 66 77 88 99 aa bb 00 11"
        "22 33 44 55 0a 00 00 00 14 00 00 00 bb 01 c8 00"
        "39 30 00 06 1b 12 00 00 06 00 06 00 02 00 08 00"
        "02 00 0a 00 02 00 0c 00 03 00 0f 00 04 00 13 00"
        "08 00 65 78 2e 63 6f 6d 2f 61 01 ff 02 12 de ad"
        "be 3c 00 dc 05 00 00 00 80 00 f1 53 65");
    EXPECT_EQ(golden.size(), 157U);
    EXPECT_EQ(builder.build(), golden);
}

// The test reader's NEMEA logger printer (used by the plugin reference tests) on vector B:
// every value kind logger prints — ipaddr, time, macaddr, string, bytes, arrays incl. int8 and
// time.
TEST(UnirecRecord, LoggerLineOfVectorB) {
    const std::string specB =
        "ipaddr DST_IP,ipaddr SRC_IP,uint64 BYTES,uint64 BYTES_REV,uint64 LINK_BIT_FIELD,"
        "time TIME_FIRST,time TIME_LAST,macaddr DST_MAC,macaddr SRC_MAC,uint32 PACKETS,"
        "uint32 PACKETS_REV,uint16 DST_PORT,uint16 HTTP_RESPONSE_STATUS_CODE,uint16 SRC_PORT,"
        "uint8 DIR_BIT_FIELD,uint8 PROTOCOL,uint8 TCP_FLAGS,uint8 TCP_FLAGS_REV,"
        "string HTTP_REQUEST_HOST,string HTTP_REQUEST_URL,int8* PPI_PKT_DIRECTIONS,"
        "uint8* PPI_PKT_FLAGS,bytes TLS_JA3,uint16* PPI_PKT_LENGTHS,time* PPI_PKT_TIMES";
    const auto golden = ur::hex(
        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
        "00 00 00 00 00 00 00 00 0a 00 00 01 ff ff ff ff"
        "e8 03 00 00 00 00 00 00 d0 07 00 00 00 00 00 00"
        "01 00 00 00 00 00 00 00 00 00 00 80 00 f1 53 65"
        "00 00 00 40 01 f1 53 65 66 77 88 99 aa bb 00 11"
        "22 33 44 55 0a 00 00 00 14 00 00 00 bb 01 c8 00"
        "39 30 00 06 1b 12 00 00 06 00 06 00 02 00 08 00"
        "02 00 0a 00 02 00 0c 00 03 00 0f 00 04 00 13 00"
        "08 00 65 78 2e 63 6f 6d 2f 61 01 ff 02 12 de ad"
        "be 3c 00 dc 05 00 00 00 80 00 f1 53 65");
    const ur::Layout layout(specB);
    EXPECT_EQ(ur::loggerLine(layout, golden),
              "2001:db8::1,10.0.0.1,1000,2000,1,2023-11-14T22:13:20.500000,"
              "2023-11-14T22:13:21.250000,66:77:88:99:aa:bb,00:11:22:33:44:55,10,20,443,200,"
              "12345,0,6,27,18,\"ex.com\",\"/a\",[1|-1],[2|18],deadbe,[60|1500],"
              "[2023-11-14T22:13:20.500000]");
}

TEST(UnirecRecord, LayoutRejectsUnknownTypesAndBadNames) {
    using P = std::vector<std::pair<std::string, std::string>>;
    EXPECT_THROW(UnirecLayout(P{{"uint128", "X"}}), std::invalid_argument);
    EXPECT_THROW(UnirecLayout(P{{"uint8", "1X"}}), std::invalid_argument);
    EXPECT_THROW(UnirecLayout(P{{"uint8", "A"}, {"uint16", "A"}}), std::invalid_argument);
}

}  // namespace
}  // namespace rowprobe::output
