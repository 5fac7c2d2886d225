// The IPFIX encoder against RFC 7011 / RFC 5103 and ipfixprobe's basic template
// (output/ipfix/README.md), checked with the independent test decoder.
#include "output/common/ipfix_encoder.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ipfix_test_decoder.hpp"
#include "output/common/export_field_list.hpp"
#include "output/netflow9/netflow9_encoder.hpp"
#include "rowprobe/fields.hpp"

namespace rowprobe::output {
namespace {

namespace dec = rowprobe::test::ipfix;

std::uint32_t fixedExportTime() { return 1700000123; }
std::uint64_t g_fakeNow = 0;
std::uint64_t fakeMonotonic() { return g_fakeNow; }

std::array<std::uint8_t, 16> v4(const char* text) {
    std::array<std::uint8_t, 16> a{};
    a[10] = 0xFF;
    a[11] = 0xFF;
    inet_pton(AF_INET, text, a.data() + 12);
    return a;
}
std::array<std::uint8_t, 16> v6(const char* text) {
    std::array<std::uint8_t, 16> a{};
    inet_pton(AF_INET6, text, a.data());
    return a;
}

FlowRecord sampleV4() {
    FlowRecord r;
    r.srcAddr = v4("192.0.2.1");
    r.dstAddr = v4("198.51.100.7");
    r.srcPort = 12345;
    r.dstPort = 443;
    r.proto = 6;
    r.ipVersion = 4;
    r.packets = {10, 20};
    r.bytes = {1000, 2000};
    r.timeFirst = 1700000000ULL * kNsPerSec + 500'000'000;
    r.timeLast = 1700000001ULL * kNsPerSec + 250'000'000;
    r.tcpFlags = {0x1b, 0x12};
    r.srcMac = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
    r.dstMac = {0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb};
    r.endReason = EndReason::ActiveTimeout;
    return r;
}

FlowRecord sampleV6() {
    FlowRecord r = sampleV4();
    r.srcAddr = v6("2001:db8::1");
    r.dstAddr = v6("2001:db8:0:1::2");
    r.ipVersion = 6;
    r.endReason = EndReason::EndOfFlow;
    return r;
}

std::vector<std::uint8_t> hex(const std::string& text) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == ' ' || text[i] == '\n') {
            ++i;
            continue;
        }
        out.push_back(static_cast<std::uint8_t>(std::stoul(text.substr(i, 2), nullptr, 16)));
        i += 2;
    }
    return out;
}

struct CapturingSink final : MessageSink {
    std::vector<std::vector<std::uint8_t>> messages;
    std::vector<std::uint32_t> records;
    std::vector<bool> isTemplate;
    bool accept = true;
    bool sendMessage(std::span<const std::uint8_t> m, std::uint32_t n, bool t) override {
        messages.emplace_back(m.begin(), m.end());
        records.push_back(n);
        isTemplate.push_back(t);
        return accept;
    }
    std::vector<std::uint8_t> stream() const {
        std::vector<std::uint8_t> out;
        for (const auto& m : messages) out.insert(out.end(), m.begin(), m.end());
        return out;
    }
    std::vector<dec::Message> decoded() const {
        dec::Decoder d;
        std::vector<dec::Message> out;
        std::string error;
        EXPECT_TRUE(d.decode(stream(), out, error)) << error;
        return out;
    }
};

EncoderConfig testConfig() {
    EncoderConfig c;
    c.exportTime = &fixedExportTime;
    c.monotonicNs = &fakeMonotonic;
    c.observationDomain = 7;
    return c;
}

TEST(IpfixEncoder, BasicTemplatesAreIpfixprobesWithIds258And259) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    const auto& t4 = enc.templateFor(4);
    const auto& t6 = enc.templateFor(6);
    EXPECT_EQ(t4.id, 258);
    EXPECT_EQ(t6.id, 259);
    EXPECT_EQ(t4.recordLength, 78U);
    EXPECT_EQ(t6.recordLength, 102U);
    EXPECT_EQ(t4.record.size(), 88U);  // 4 + 18 * 4 + 3 PENs * 4
    // ipfixprobe's basic template, in order: (PEN, id, length), except that the `dir` constant is
    // flowDirection (61, 1 byte) where ipfixprobe sends ingressInterface (10, 4 bytes).
    const std::vector<dec::Element> expect4 = {
        {136, 1, 0}, {1, 8, 0},  {1, 8, 29305}, {2, 8, 0},  {2, 8, 29305}, {154, 8, 0},
        {155, 8, 0}, {60, 1, 0}, {4, 1, 0},     {6, 1, 0},  {6, 1, 29305}, {7, 2, 0},
        {11, 2, 0},  {61, 1, 0}, {8, 4, 0},     {12, 4, 0}, {56, 6, 0},    {80, 6, 0}};
    enc.flush();  // templates are owed before the first data: sent even without data
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 1U);
    ASSERT_EQ(msgs[0].templates.size(), 2U);
    EXPECT_EQ(msgs[0].templates[0].id, 258);
    EXPECT_EQ(msgs[0].templates[0].elements, expect4);
    auto expect6 = expect4;
    expect6[14] = {27, 16, 0};
    expect6[15] = {28, 16, 0};
    EXPECT_EQ(msgs[0].templates[1].id, 259);
    EXPECT_EQ(msgs[0].templates[1].elements, expect6);
    // First template message: 16 + 4 + 88 + 88 = 196 bytes, template set id 2.
    EXPECT_EQ(sink.messages[0].size(), 196U);
    ASSERT_EQ(msgs[0].sets.size(), 1U);
    EXPECT_EQ(msgs[0].sets[0].id, 2);
    EXPECT_EQ(msgs[0].sets[0].length, 180);
}

TEST(IpfixEncoder, TemplateRecordBytesCarryEnterpriseBitAndReversePen) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    const auto& rec = enc.templateFor(4).record;
    // id 258, 18 fields, flowEndReason 136/1, octetDeltaCount 1/8, reverseOctetDeltaCount
    // 0x8001/8 + PEN 29305 (0x00007279)
    const auto head = hex("0102 0012 0088 0001 0001 0008 8001 0008 00007279");
    ASSERT_GE(rec.size(), head.size());
    EXPECT_TRUE(std::equal(head.begin(), head.end(), rec.begin()));
}

TEST(IpfixEncoder, GoldenIpv4BasicRecord) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    std::vector<std::uint8_t> out(78);
    ASSERT_EQ(enc.encodeRecord(sampleV4(), out.data()), 78U);
    const auto expected =
        hex("02"                                   // flowEndReason: active timeout
            "00000000000003e8 00000000000007d0"    // octets, reverse octets
            "000000000000000a 0000000000000014"    // packets, reverse packets
            "e8fe6f80 80000800 e8fe6f81 40000800"  // start .5 s, end 1.25 s later (NTP64, +2^-21 s)
            "04 06 1b 12"                          // ipVersion, protocol, flags, reverse flags
            "3039 01bb 00"                         // ports 12345 -> 443, flowDirection 0
            "c0000201 c6336407"                    // 192.0.2.1 -> 198.51.100.7
            "001122334455 66778899aabb");          // MACs
    EXPECT_EQ(out, expected);
}

TEST(IpfixEncoder, GoldenIpv6BasicRecord) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    std::vector<std::uint8_t> out(102);
    ASSERT_EQ(enc.encodeRecord(sampleV6(), out.data()), 102U);
    const auto expected =
        hex("03"
            "00000000000003e8 00000000000007d0"
            "000000000000000a 0000000000000014"
            "e8fe6f80 80000800 e8fe6f81 40000800"
            "06 06 1b 12"
            "3039 01bb 00"
            "20010db8000000000000000000000001"
            "20010db8000000010000000000000002"
            "001122334455 66778899aabb");
    EXPECT_EQ(out, expected);
}

// Issue 13 item 7: `dir` is a direction, not an interface index (for which 0 is invalid and
// collectors such as Akvorado reject the record).
TEST(IpfixEncoder, DirOptionIsExportedAsFlowDirectionNotIngressInterface) {
    CapturingSink sink;
    EncoderConfig c = testConfig();
    c.constants.dirBitField = 1;
    IpfixEncoder enc(c, ipfixBasicFields(), sink);
    enc.add(sampleV4());
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 2U);
    ASSERT_EQ(msgs[1].records.size(), 1U);
    EXPECT_EQ(msgs[1].records[0].number(0, 61), 1U);
    EXPECT_EQ(msgs[1].records[0].find(0, 10), nullptr) << "no ingressInterface without one";
}

TEST(IpfixEncoder, IngressInterfaceComesFromTheQueuesInput) {
    CapturingSink sink;
    EncoderConfig c = testConfig();
    c.interfaceByQueue = {3, 0, 7};
    IpfixEncoder enc(c, ipfixBasicFields(), sink);
    EXPECT_EQ(enc.templateFor(4).recordLength, 82U);
    EXPECT_EQ(enc.templateFor(6).recordLength, 106U);
    for (const int q : {0, 1, 2, 9}) {
        FlowRecord r = sampleV4();
        r.queue = static_cast<std::uint8_t>(q);
        enc.add(r);
    }
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 2U);
    const auto& t = msgs[0].templates.at(0).elements;
    ASSERT_GE(t.size(), 15U);
    EXPECT_EQ(t[13], (dec::Element{61, 1, 0}));
    EXPECT_EQ(t[14], (dec::Element{10, 4, 0}));
    ASSERT_EQ(msgs[1].records.size(), 4U);
    EXPECT_EQ(msgs[1].records[0].number(0, 10), 3U);
    EXPECT_EQ(msgs[1].records[1].number(0, 10), 0U);  // that queue's input has no interface
    EXPECT_EQ(msgs[1].records[2].number(0, 10), 7U);
    EXPECT_EQ(msgs[1].records[3].number(0, 10), 0U);  // beyond the table
    EXPECT_EQ(IpfixEncoder::minMessageSize(ipfixBasicFields()), 16U + 4U + 106U);
}

// RFC 7011 §7: a length below 255 in one byte, else 0xFF and a u16.
TEST(IpfixEncoder, VariableLengthPrefixIsShortBelow255) {
    for (std::size_t n : {0U, 1U, 16U, 254U, 255U, 256U, 1000U, 65535U}) {
        std::vector<std::uint8_t> value(n);
        for (std::size_t i = 0; i < n; ++i) value[i] = static_cast<std::uint8_t>(i * 7);
        std::vector<std::uint8_t> out(n + 3, 0xEE);
        const std::size_t w = putIpfixVarLen(out.data(), value);
        ASSERT_EQ(w, ipfixVarLenSize(n)) << n;
        if (n < 255) {
            ASSERT_EQ(w, n + 1);
            EXPECT_EQ(out[0], n);
        } else {
            ASSERT_EQ(w, n + 3);
            EXPECT_EQ(out[0], 0xFF);
            EXPECT_EQ(std::size_t{out[1]} << 8 | out[2], n);
        }
        EXPECT_TRUE(std::equal(value.begin(), value.end(), out.begin() + (w - n))) << n;
    }
}

// ipfixprobe's basicList, byte for byte: FF, u16 length = 9 + n x
// elemLen, semantic 3 (allOf), id | 0x8000, element length, PEN 8057, then BE values.
TEST(IpfixEncoder, BasicListIsIpfixprobesLayout) {
    const std::uint16_t lengths[] = {60, 1500, 0};
    std::vector<std::uint8_t> out(64, 0xEE);
    const IpfixElement ppiLengths{kPenCesnet, 1013, 2};
    const std::size_t w = putIpfixBasicList(out.data(), ppiLengths, lengths, 3, 2);
    ASSERT_EQ(w, ipfixBasicListSize(ppiLengths, 3));
    out.resize(w);
    EXPECT_EQ(out, hex("ff 000f 03 83f5 0002 00001f79 003c 05dc 0000"));

    // Empty list: 12 bytes.
    std::vector<std::uint8_t> empty(12);
    EXPECT_EQ(putIpfixBasicList(empty.data(), ppiLengths, lengths, 0, 2), 12U);
    EXPECT_EQ(empty, hex("ff 0009 03 83f5 0002 00001f79"));

    // Times: u64 milliseconds; directions: int8 (-1 is 0xff); u32 from a u32 source.
    const std::uint64_t ms[] = {1700000000500ULL};
    std::vector<std::uint8_t> t(20);
    EXPECT_EQ(putIpfixBasicList(t.data(), {kPenCesnet, 1014, 8}, ms, 1, 8), 20U);
    EXPECT_EQ(t, hex("ff 0011 03 83f6 0008 00001f79 0000018bcfe569f4"));
    const std::int8_t dirs[] = {1, -1};
    std::vector<std::uint8_t> d(14);
    EXPECT_EQ(putIpfixBasicList(d.data(), {kPenCesnet, 1016, 1}, dirs, 2, 1), 14U);
    EXPECT_EQ(d, hex("ff 000b 03 83f8 0001 00001f79 01 ff"));

    // The test decoder (independent) reads it back.
    const auto list = dec::BasicList::parse({out.begin() + 3, out.end()});
    ASSERT_TRUE(list.has_value());
    EXPECT_EQ(list->semantic, 3);
    EXPECT_EQ(list->element, (dec::Element{1013, 2, 8057}));
    EXPECT_EQ(list->values, (std::vector<std::uint64_t>{60, 1500, 0}));
}

TEST(IpfixEncoder, TimestampPrecisionsUseTheirIanaElements) {
    FlowRecord r = sampleV4();
    r.timeFirst = 1700000000ULL * kNsPerSec + 1'289'368;   // .001289368
    r.timeLast = 1700000000ULL * kNsPerSec + 123'456'000;  // .123456
    struct Case {
        TimePrecision p;
        std::uint16_t startId;
        std::uint64_t first;
        std::uint64_t last;
    };
    const Case cases[] = {
        {TimePrecision::Seconds, 150, 1700000000, 1700000000},
        {TimePrecision::Milliseconds, 152, 1700000000001ULL, 1700000000123ULL},
        // µs: next 2^11-unit step above the exact fraction; ns: 2 units above floor(exact)
        {TimePrecision::Microseconds, 154, 0xe8fe6f80ULL << 32 | 0x548000ULL,
         0xe8fe6f80ULL << 32 | 0x1f9ad000ULL},
        {TimePrecision::Nanoseconds, 156, 0xe8fe6f80ULL << 32 | 0x548003ULL,
         0xe8fe6f80ULL << 32 | 0x1f9acffcULL},
    };
    for (const Case& c : cases) {
        CapturingSink sink;
        EncoderConfig config = testConfig();
        config.timePrecision = c.p;
        IpfixEncoder enc(config, ipfixBasicFields(), sink);
        enc.add(r);
        enc.flush();
        const auto msgs = sink.decoded();
        ASSERT_EQ(msgs.size(), 2U);
        const auto& rec = msgs[1].records.at(0);
        EXPECT_EQ(rec.number(0, c.startId), c.first) << "start id " << c.startId;
        EXPECT_EQ(rec.number(0, static_cast<std::uint16_t>(c.startId + 1)), c.last);
    }
}

// Every way decoders turn an NTP fraction back into µs / ns must give the encoded value:
// truncating (libfixbuf, nfdump), rounding, floating point as tshark does (frac / 4.294967296),
// and, for microseconds, ignoring the low 11 bits first (RFC 7011 §6.1.9, libfds).
TEST(IpfixEncoder, NtpFractionsReadBackExactlyWithEveryDecoderStyle) {
    std::vector<std::uint64_t> usecs = {0, 1, 20, 1000, 15625, 123456, 250000, 500000, 999999};
    for (std::uint64_t u = 0; u < 1'000'000; u += 7) usecs.push_back(u);
    for (std::uint64_t usec : usecs) {
        const std::uint64_t ntp = ntpMicroseconds(1700000000ULL * kNsPerSec + usec * 1000 + 999);
        ASSERT_EQ(ntp >> 32, 1700000000ULL + kNtpEpochOffset);
        const std::uint64_t frac = ntp & 0xFFFFFFFFULL;
        EXPECT_EQ(frac & 0x7FF, 0U);
        ASSERT_EQ((frac * 1'000'000) >> 32, usec);                    // truncating
        ASSERT_EQ(((frac * 1'000'000) + 0x80000000ULL) >> 32, usec);  // rounding
        ASSERT_EQ(((frac & ~0x7FFULL) * 1'000'000) >> 32, usec);      // masking
        ASSERT_EQ(static_cast<std::uint64_t>(static_cast<double>(frac) / 4.294967296) / 1000, usec);
    }
    std::vector<std::uint64_t> nsecs = {0,       1,           999,         1289368,
                                        1953125, 250'000'000, 500'000'000, 999999999};
    for (std::uint64_t n = 0; n < 1'000'000'000; n += 999'983) nsecs.push_back(n);
    for (std::uint64_t nsec : nsecs) {
        const std::uint64_t frac = ntpNanoseconds(nsec) & 0xFFFFFFFFULL;
        ASSERT_EQ((frac * 1'000'000'000) >> 32, nsec);
        ASSERT_EQ(((frac * 1'000'000'000) + 0x80000000ULL) >> 32, nsec);
        ASSERT_EQ(static_cast<std::uint64_t>(static_cast<double>(frac) / 4.294967296), nsec);
    }
}

TEST(IpfixEncoder, MessagesAreFullAtMtuAndSequenceCountsRecords) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    for (int i = 0; i < 100; ++i) enc.add(sampleV4());
    enc.flush();
    const auto msgs = sink.decoded();
    // 1 template message, then 5 full messages of 18 records (16+4+18*78 = 1424 <= 1458) and one
    // of 10.
    ASSERT_EQ(msgs.size(), 7U);
    EXPECT_TRUE(sink.isTemplate[0]);
    EXPECT_EQ(msgs[0].sequence, 0U);
    std::uint32_t expectedSeq = 0;
    for (std::size_t i = 1; i < msgs.size(); ++i) {
        EXPECT_EQ(msgs[i].version, 10);
        EXPECT_EQ(msgs[i].length, sink.messages[i].size());
        EXPECT_LE(sink.messages[i].size(), 1458U);
        EXPECT_EQ(msgs[i].domain, 7U);
        EXPECT_EQ(msgs[i].exportTime, 1700000123U);
        EXPECT_EQ(msgs[i].sequence, expectedSeq) << "message " << i;
        ASSERT_EQ(msgs[i].sets.size(), 1U);
        EXPECT_EQ(msgs[i].sets[0].id, 258);
        EXPECT_EQ(msgs[i].sets[0].length, 4 + 78 * msgs[i].records.size());
        EXPECT_EQ(sink.records[i], msgs[i].records.size());
        expectedSeq += static_cast<std::uint32_t>(msgs[i].records.size());
    }
    EXPECT_EQ(msgs[1].records.size(), 18U);
    EXPECT_EQ(msgs[6].records.size(), 10U);
    EXPECT_EQ(expectedSeq, 100U);
    EXPECT_EQ(enc.sequence(), 100U);
}

TEST(IpfixEncoder, FlushPacksIpv4AndIpv6SetsIntoOneMessage) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    enc.add(sampleV4());
    enc.add(sampleV6());
    enc.add(sampleV4());
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 2U);
    ASSERT_EQ(msgs[1].sets.size(), 2U);
    EXPECT_EQ(msgs[1].sets[0].id, 258);
    EXPECT_EQ(msgs[1].sets[0].length, 4 + 2 * 78);
    EXPECT_EQ(msgs[1].sets[1].id, 259);
    EXPECT_EQ(msgs[1].sets[1].length, 4 + 102);
    EXPECT_EQ(msgs[1].length, 16 + 4 + 2 * 78 + 4 + 102);
    EXPECT_EQ(sink.records[1], 3U);
}

TEST(IpfixEncoder, BiflowReverseCountersDecodeFromPen29305) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    FlowRecord r = sampleV4();
    r.packets = {3, 123456789};
    r.bytes = {1ULL << 40, 77};
    r.tcpFlags = {0x02, 0x14};
    enc.add(r);
    enc.flush();
    const auto msgs = sink.decoded();
    const auto& rec = msgs.at(1).records.at(0);
    EXPECT_EQ(rec.number(0, 2), 3U);
    EXPECT_EQ(rec.number(29305, 2), 123456789U);
    EXPECT_EQ(rec.number(0, 1), 1ULL << 40);
    EXPECT_EQ(rec.number(29305, 1), 77U);
    EXPECT_EQ(rec.number(0, 6), 0x02U);
    EXPECT_EQ(rec.number(29305, 6), 0x14U);
    // Keys, timestamps and the end reason have no reverse variant.
    for (int id : {4, 7, 8, 11, 12, 136, 154, 155}) {
        EXPECT_EQ(rec.find(29305, static_cast<std::uint16_t>(id)), nullptr) << id;
    }
}

TEST(IpfixEncoder, TemplatesPrecedeDataOnceWithoutRefresh) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    for (int round = 0; round < 5; ++round) {
        enc.add(sampleV4());
        enc.flush();
    }
    EXPECT_EQ(enc.templateMessagesSent(), 1U);
    EXPECT_TRUE(sink.isTemplate.front());
}

TEST(IpfixEncoder, TemplateRefreshByMessageCount) {
    CapturingSink sink;
    EncoderConfig c = testConfig();
    c.templateRefreshMessages = 3;
    IpfixEncoder enc(c, ipfixBasicFields(), sink);
    for (int i = 0; i < 9; ++i) {
        enc.add(sampleV4());
        enc.flush();
    }
    // T D D D T D D D T D D D
    std::string pattern;
    for (bool t : sink.isTemplate) pattern += t ? 'T' : 'D';
    EXPECT_EQ(pattern, "TDDDTDDDTDDD");
    // Template messages carry the current sequence number without advancing it.
    const auto msgs = sink.decoded();
    EXPECT_EQ(msgs[4].sequence, 3U);
    EXPECT_EQ(msgs[5].sequence, 3U);
}

// A flush that sends several messages (IPv4 and IPv6 sets too big to share one) still puts the
// templates back after every `templateRefreshMessages` data messages, not once per flush.
TEST(IpfixEncoder, TemplateRefreshCountsEveryMessageOfAFlush) {
    CapturingSink sink;
    EncoderConfig c = testConfig();
    c.templateRefreshMessages = 1;
    c.maxMessageSize = 200;  // one IPv4 set and one IPv6 set do not fit together
    IpfixEncoder enc(c, ipfixBasicFields(), sink);
    for (int i = 0; i < 3; ++i) {
        enc.add(sampleV4());
        enc.add(sampleV6());
        enc.flush();
    }
    std::string pattern;
    for (bool t : sink.isTemplate) pattern += t ? 'T' : 'D';
    EXPECT_EQ(pattern, "TDTDTDTDTDTD");
}

TEST(IpfixEncoder, TemplateRefreshByTime) {
    CapturingSink sink;
    EncoderConfig c = testConfig();
    c.templateRefreshNs = 10 * kNsPerSec;
    g_fakeNow = 1000 * kNsPerSec;
    IpfixEncoder enc(c, ipfixBasicFields(), sink);
    enc.add(sampleV4());
    enc.flush();
    g_fakeNow += 9 * kNsPerSec;
    enc.add(sampleV4());
    enc.flush();
    EXPECT_EQ(enc.templateMessagesSent(), 1U);
    g_fakeNow += 1 * kNsPerSec;
    enc.add(sampleV4());
    enc.flush();
    EXPECT_EQ(enc.templateMessagesSent(), 2U);
    EXPECT_TRUE(sink.isTemplate[3]);
}

TEST(IpfixEncoder, RejectedMessagesDoNotAdvanceTheSequence) {
    CapturingSink sink;
    IpfixEncoder enc(testConfig(), ipfixBasicFields(), sink);
    enc.add(sampleV4());
    enc.flush();
    sink.accept = false;
    enc.add(sampleV4());
    enc.flush();
    sink.accept = true;
    enc.add(sampleV4());
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 4U);
    EXPECT_EQ(msgs[3].sequence, 1U);
}

TEST(IpfixEncoder, MessageSizeBoundsAreEnforced) {
    CapturingSink sink;
    EncoderConfig c = testConfig();
    // The largest variant: an IPv6 record with ingressInterface.
    EXPECT_EQ(IpfixEncoder::minMessageSize(ipfixBasicFields()), 16U + 4U + 106U);
    c.maxMessageSize = 125;
    EXPECT_THROW(IpfixEncoder(c, ipfixBasicFields(), sink), std::invalid_argument);
    c.maxMessageSize = 126;  // one IPv6 record per message
    IpfixEncoder enc(c, ipfixBasicFields(), sink);
    enc.add(sampleV6());
    enc.add(sampleV6());
    enc.flush();
    const auto msgs = sink.decoded();
    // templates do not fit together (2 x 88): one per message
    std::size_t templateMessages = 0;
    std::size_t records = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        EXPECT_LE(sink.messages[i].size(), 126U);
        templateMessages += sink.isTemplate[i] ? 1 : 0;
        records += msgs[i].records.size();
    }
    EXPECT_EQ(templateMessages, 2U);
    EXPECT_EQ(records, 2U);
}

// ---- Extensions: one template per (extension set x IP version), variable-length fields -------

EncoderConfig extensionConfig() {
    using K = IpfixFieldCodec::Kind;
    EncoderConfig c = testConfig();
    c.extensions = {
        {"http",
         {{K::Bytes, {kPenCesnet, 200, kIpfixVarLen}, {}, 0, false},  // method
          {K::Scalar, {kPenFlowmon, 12, 2}, {}, 4, false}}},          // status: u32 in 2 bytes
        {"pstats",
         {{K::List, {kPenIana, kIpfixBasicList, kIpfixVarLen}, {kPenCesnet, 1013, 2}, 2, false},
          {K::List, {kPenIana, kIpfixBasicList, kIpfixVarLen}, {kPenCesnet, 1014, 8}, 8, true}}},
    };
    return c;
}

TEST(IpfixEncoder, OneTemplatePerExtensionSetAndIpVersionInOrderOfFirstUse) {
    CapturingSink sink;
    IpfixEncoder enc(extensionConfig(), ipfixBasicFields(), sink);
    const std::string method = "GET";
    const std::uint32_t status = 200;
    const std::uint16_t lengths[] = {60, 1500};
    const std::uint64_t times[] = {1700000000ULL * kNsPerSec + 500'999'999,
                                   1700000001ULL * kNsPerSec};
    const FieldValue http[] = {{method.data(), 3}, {&status, 1}};
    const FieldValue pstats[] = {{lengths, 2}, {times, 2}};
    const FieldValue both[] = {http[0], http[1], pstats[0], pstats[1]};

    EXPECT_TRUE(enc.add(sampleV4(), 0b10, pstats));  // pstats first: 260/261
    EXPECT_TRUE(enc.add(sampleV4(), 0b01, http));    // http: 262/263
    EXPECT_TRUE(enc.add(sampleV6(), 0b01, http));
    EXPECT_TRUE(enc.add(sampleV4(), 0b11, both));  // both: 264/265
    enc.add(sampleV4());                           // basic: 258
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_GE(msgs.size(), 2U);
    // One template message with all 8 templates before the data.
    ASSERT_TRUE(sink.isTemplate[0]);
    ASSERT_EQ(msgs[0].templates.size(), 8U);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(msgs[0].templates[i].id, 258 + i);
    const auto& tPstats = msgs[0].templates[2].elements;
    ASSERT_EQ(tPstats.size(), 20U);
    EXPECT_EQ(tPstats[18], (dec::Element{291, 0xFFFF, 0}));
    const auto& tBoth = msgs[0].templates[6].elements;
    ASSERT_EQ(tBoth.size(), 22U);
    EXPECT_EQ(tBoth[18], (dec::Element{200, 0xFFFF, 8057}));
    EXPECT_EQ(tBoth[19], (dec::Element{12, 2, 39499}));
    EXPECT_EQ(msgs[0].templates[5].elements[14], (dec::Element{27, 16, 0}));  // http IPv6

    std::map<std::uint16_t, std::vector<dec::DataRecord>> byTemplate;
    for (std::size_t m = 1; m < msgs.size(); ++m) {
        for (const auto& r : msgs[m].records) byTemplate[r.templateId].push_back(r);
    }
    ASSERT_EQ(byTemplate[258].size(), 1U);
    ASSERT_EQ(byTemplate[260].size(), 1U);
    ASSERT_EQ(byTemplate[262].size(), 1U);
    ASSERT_EQ(byTemplate[263].size(), 1U);
    ASSERT_EQ(byTemplate[264].size(), 1U);
    const auto& r = byTemplate[264][0];
    EXPECT_EQ(*r.find(8057, 200), std::vector<std::uint8_t>({'G', 'E', 'T'}));
    EXPECT_EQ(r.number(39499, 12), 200U);
    const auto lists = [&](std::size_t k) {
        return dec::BasicList::parse(r.values.at(20 + k)).value();
    };
    EXPECT_EQ(lists(0).element, (dec::Element{1013, 2, 8057}));
    EXPECT_EQ(lists(0).semantic, 3);
    EXPECT_EQ(lists(0).values, (std::vector<std::uint64_t>{60, 1500}));
    EXPECT_EQ(lists(1).element, (dec::Element{1014, 8, 8057}));
    EXPECT_EQ(lists(1).values, (std::vector<std::uint64_t>{1700000000500ULL, 1700000001000ULL}));
    EXPECT_EQ(r.number(0, 1), 1000U) << "basic fields before the extensions";
    EXPECT_EQ(enc.sequence(), 5U);
}

TEST(IpfixEncoder, LongStringsUseTheThreeByteLengthAndAbsentValuesAreEmpty) {
    CapturingSink sink;
    IpfixEncoder enc(extensionConfig(), ipfixBasicFields(), sink);
    const std::string longMethod(300, 'M');
    const std::uint32_t status = 404;
    const FieldValue http[] = {{longMethod.data(), 300}, {&status, 1}};
    const FieldValue absent[] = {{}, {}};
    EXPECT_TRUE(enc.add(sampleV4(), 0b01, http));
    EXPECT_TRUE(enc.add(sampleV4(), 0b01, absent));
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 2U);
    ASSERT_EQ(msgs[1].records.size(), 2U);
    EXPECT_EQ(msgs[1].records[0].find(8057, 200)->size(), 300U);
    EXPECT_EQ(msgs[1].records[1].find(8057, 200)->size(), 0U);
    EXPECT_EQ(msgs[1].records[1].number(39499, 12), 0U);
    // 78 basic + 3 + 300 + 2, and 78 + 1 + 0 + 2
    EXPECT_EQ(msgs[1].sets[0].length, 4 + (78 + 303 + 2) + (78 + 1 + 2));
}

TEST(IpfixEncoder, ARecordLargerThanAMessageIsDroppedAndCounted) {
    CapturingSink sink;
    IpfixEncoder enc(extensionConfig(), ipfixBasicFields(), sink);  // mtu 1458
    const std::string huge(1400, 'x');
    const std::uint32_t status = 200;
    const FieldValue http[] = {{huge.data(), 1400}, {&status, 1}};
    EXPECT_FALSE(enc.add(sampleV4(), 0b01, http));
    EXPECT_EQ(enc.oversized(), 1U);
    const FieldValue ok[] = {{huge.data(), 1300}, {&status, 1}};
    EXPECT_TRUE(enc.add(sampleV4(), 0b01, ok));
    EXPECT_TRUE(enc.add(sampleV4(), 0b01, ok));  // does not fit beside the first: a new message
    enc.flush();
    const auto msgs = sink.decoded();
    std::size_t records = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        EXPECT_LE(sink.messages[i].size(), 1458U);
        records += msgs[i].records.size();
    }
    EXPECT_EQ(records, 2U);
    EXPECT_EQ(enc.sequence(), 2U);
}

// Every shape of scalar an extension field can have, each with its own code path in the
// encoder (same width as the element, widened, reduced, a time to milliseconds), and lists of
// each element width, with values whose every byte differs so that a swapped or shifted byte
// shows; absent values export 0. Read back by the independent decoder.
TEST(IpfixEncoder, ExtensionScalarsAndListsOfEveryWidthAreBigEndian) {
    using K = IpfixFieldCodec::Kind;
    constexpr std::uint32_t kPen = 32473;
    auto scalar = [](std::uint16_t id, std::uint16_t length, std::uint8_t width, bool ms = false) {
        return IpfixFieldCodec{K::Scalar, {kPen, id, length}, {}, width, ms};
    };
    auto list = [](std::uint16_t id, std::uint16_t length, std::uint8_t width) {
        return IpfixFieldCodec{
            K::List, {kPenIana, kIpfixBasicList, kIpfixVarLen}, {kPen, id, length}, width, false};
    };
    EncoderConfig config = testConfig();
    config.extensions = {
        {"shapes",
         {scalar(1, 1, 1), scalar(2, 2, 2), scalar(3, 4, 4), scalar(4, 8, 8), scalar(5, 8, 4),
          scalar(6, 4, 8), scalar(7, 1, 2), scalar(8, 8, 8, true), list(9, 1, 1), list(10, 2, 2),
          list(11, 4, 4), list(12, 8, 8), list(13, 2, 4), list(14, 8, 4)}}};
    const std::uint8_t u8 = 0xA1;
    const std::uint16_t u16 = 0xB1B2;
    const std::uint32_t u32 = 0xC1C2C3C4;
    const std::uint64_t u64 = 0xD1D2D3D4D5D6D7D8ULL;
    const std::uint64_t small64 = 0x01020304;  // fits the reduced 4 bytes
    const std::uint16_t small16 = 0x7F;
    const std::uint64_t timeNs = 1700000000ULL * kNsPerSec + 123'999'999;
    const std::uint8_t l8[] = {1, 0xFE};
    const std::uint16_t l16[] = {0x0102, 0xFEFD};
    const std::uint32_t l32[] = {0x01020304, 0xFEFDFCFB};
    const std::uint64_t l64[] = {0x0102030405060708ULL, 0xFFFEFDFCFBFAF9F8ULL};
    const std::uint32_t lReduced[] = {0x1234, 0xFFFF};
    const FieldValue values[] = {{&u8, 1},      {&u16, 1},     {&u32, 1},     {&u64, 1}, {&u32, 1},
                                 {&small64, 1}, {&small16, 1}, {&timeNs, 1},  {l8, 2},   {l16, 2},
                                 {l32, 2},      {l64, 2},      {lReduced, 2}, {l32, 2}};
    const FieldValue absent[std::size(values)] = {};

    CapturingSink sink;
    IpfixEncoder enc(config, ipfixBasicFields(), sink);
    ASSERT_TRUE(enc.add(sampleV4(), 1, values));
    ASSERT_TRUE(enc.add(sampleV4(), 1, absent));
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), 2U);
    ASSERT_EQ(msgs[1].records.size(), 2U);
    const auto& r = msgs[1].records[0];
    EXPECT_EQ(r.number(kPen, 1), 0xA1U);
    EXPECT_EQ(r.number(kPen, 2), 0xB1B2U);
    EXPECT_EQ(r.number(kPen, 3), 0xC1C2C3C4U);
    EXPECT_EQ(r.number(kPen, 4), 0xD1D2D3D4D5D6D7D8ULL);
    EXPECT_EQ(r.find(kPen, 5)->size(), 8U);
    EXPECT_EQ(r.number(kPen, 5), 0xC1C2C3C4U) << "a u32 widened to 8 bytes";
    EXPECT_EQ(r.find(kPen, 6)->size(), 4U);
    EXPECT_EQ(r.number(kPen, 6), 0x01020304U) << "a u64 in the reduced 4 bytes";
    EXPECT_EQ(r.number(kPen, 7), 0x7FU);
    EXPECT_EQ(r.number(kPen, 8), 1700000000123ULL) << "ns to dateTimeMilliseconds";
    std::vector<dec::BasicList> lists;
    for (std::size_t i = 0; i < r.elements.size(); ++i) {
        if (r.elements[i].id == kIpfixBasicList) {
            lists.push_back(dec::BasicList::parse(r.values[i]).value());
        }
    }
    ASSERT_EQ(lists.size(), 6U);
    EXPECT_EQ(lists[0].element, (dec::Element{9, 1, kPen}));
    EXPECT_EQ(lists[0].values, (std::vector<std::uint64_t>{1, 0xFE}));
    EXPECT_EQ(lists[1].values, (std::vector<std::uint64_t>{0x0102, 0xFEFD}));
    EXPECT_EQ(lists[2].values, (std::vector<std::uint64_t>{0x01020304, 0xFEFDFCFB}));
    EXPECT_EQ(lists[3].values,
              (std::vector<std::uint64_t>{0x0102030405060708ULL, 0xFFFEFDFCFBFAF9F8ULL}));
    EXPECT_EQ(lists[4].element, (dec::Element{13, 2, kPen}));
    EXPECT_EQ(lists[4].values, (std::vector<std::uint64_t>{0x1234, 0xFFFF}));
    EXPECT_EQ(lists[5].element, (dec::Element{14, 8, kPen}));
    EXPECT_EQ(lists[5].values, (std::vector<std::uint64_t>{0x01020304, 0xFEFDFCFB}));

    const auto& none = msgs[1].records[1];
    for (std::uint16_t id = 1; id <= 8; ++id) {
        ASSERT_NE(none.find(kPen, id), nullptr) << id;
        EXPECT_EQ(none.number(kPen, id), 0U) << id;
    }
    for (std::size_t i = 0; i < none.elements.size(); ++i) {
        if (none.elements[i].id != kIpfixBasicList) continue;
        EXPECT_TRUE(dec::BasicList::parse(none.values[i]).value().values.empty());
    }
}

// ---- Uniflow export ----------------------------------------------------------------------------

EncoderConfig uniflowConfig() {
    EncoderConfig c = testConfig();
    c.uniflow = true;
    return c;
}

TEST(IpfixEncoderUniflow, TemplateHoldsIanaElementsOnly) {
    CapturingSink sink;
    IpfixEncoder enc(uniflowConfig(), ipfixUniflowFields(), sink);
    for (const IpfixTemplate& t : enc.templates()) {
        EXPECT_EQ(t.elements.size(), 15U);
        for (const IpfixElement& e : t.elements) EXPECT_EQ(e.pen, kPenIana) << e.id;
        EXPECT_EQ(t.steps.size(), t.reverseSteps.size());
    }
    EXPECT_EQ(enc.templateFor(4).recordLength, 78U - 8 - 8 - 1);  // no reverse counters, flags
}

TEST(IpfixEncoderUniflow, ABiflowBecomesForwardThenReverseRecord) {
    CapturingSink sink;
    IpfixEncoder enc(uniflowConfig(), ipfixUniflowFields(), sink);
    FlowRecord r = sampleV4();
    r.packets = {3, 123456789};
    r.bytes = {1ULL << 40, 77};
    r.tcpFlags = {0x02, 0x14};
    enc.add(r);
    enc.flush();
    EXPECT_EQ(enc.sequence(), 2U);
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.at(1).records.size(), 2U);
    const auto& fwd = msgs.at(1).records.at(0);
    const auto& rev = msgs.at(1).records.at(1);
    EXPECT_EQ(fwd.number(0, 2), 3U);
    EXPECT_EQ(fwd.number(0, 1), 1ULL << 40);
    EXPECT_EQ(fwd.number(0, 6), 0x02U);
    EXPECT_EQ(fwd.number(0, 7), 12345U);
    EXPECT_EQ(fwd.number(0, 11), 443U);
    EXPECT_EQ(fwd.number(0, 61), 0U);
    EXPECT_EQ(*fwd.find(0, 8), (std::vector<std::uint8_t>{192, 0, 2, 1}));
    EXPECT_EQ(*fwd.find(0, 56), (std::vector<std::uint8_t>{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}));
    EXPECT_EQ(rev.number(0, 2), 123456789U);
    EXPECT_EQ(rev.number(0, 1), 77U);
    EXPECT_EQ(rev.number(0, 6), 0x14U);
    EXPECT_EQ(rev.number(0, 7), 443U);
    EXPECT_EQ(rev.number(0, 11), 12345U);
    EXPECT_EQ(rev.number(0, 61), 1U);
    EXPECT_EQ(*rev.find(0, 8), (std::vector<std::uint8_t>{198, 51, 100, 7}));
    EXPECT_EQ(*rev.find(0, 12), (std::vector<std::uint8_t>{192, 0, 2, 1}));
    EXPECT_EQ(*rev.find(0, 56), (std::vector<std::uint8_t>{0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb}));
    // The same times and end reason in both halves.
    for (int id : {136, 154, 155, 4, 60}) {
        EXPECT_EQ(fwd.number(0, static_cast<std::uint16_t>(id)),
                  rev.number(0, static_cast<std::uint16_t>(id)))
            << id;
    }
}

TEST(IpfixEncoderUniflow, NoReverseRecordWithoutReversePackets) {
    CapturingSink sink;
    IpfixEncoder enc(uniflowConfig(), ipfixUniflowFields(), sink);
    FlowRecord r = sampleV6();
    r.packets = {5, 0};
    r.bytes = {500, 0};
    enc.add(r);
    enc.flush();
    EXPECT_EQ(enc.sequence(), 1U);
}

TEST(IpfixEncoderUniflow, OffKeepsTheBiflowBytes) {
    CapturingSink a;
    CapturingSink b;
    EncoderConfig off = testConfig();
    off.uniflow = false;
    IpfixEncoder biflow(testConfig(), ipfixBasicFields(), a);
    IpfixEncoder same(off, ipfixBasicFields(), b);
    for (const FlowRecord& r : {sampleV4(), sampleV6()}) {
        biflow.add(r);
        same.add(r);
    }
    biflow.flush();
    same.flush();
    EXPECT_EQ(a.stream(), b.stream());
    EXPECT_EQ(biflow.sequence(), 2U);
}

}  // namespace
}  // namespace rowprobe::output

// ---- RFC 5610 type records and chosen fields (issue 25) ---------------------------------------

namespace rowprobe::output {
namespace {

EncoderConfig typeInfoConfig() {
    EncoderConfig c = extensionConfig();
    c.typeInfo = {
        {.pen = kPenCesnet, .id = 200, .dataType = IpfixDataType::String, .name = "http_method"},
        {.pen = kPenFlowmon,
         .id = 12,
         .dataType = IpfixDataType::Unsigned16,
         .name = "http_status"},
        {.pen = kPenCesnet, .id = 1013, .dataType = IpfixDataType::Unsigned16, .name = "ppi_len"},
    };
    return c;
}

TEST(IpfixTypeInfo, RecordsComeBeforeTemplatesOnlyForElementsOfTemplatesMadeSoFar) {
    CapturingSink sink;
    IpfixEncoder enc(typeInfoConfig(), ipfixBasicFields(), sink);
    enc.add(sampleV4());  // basic template only: no type record owed
    enc.flush();
    for (const auto& m : sink.decoded()) {
        EXPECT_TRUE(m.options.empty());
        for (const auto& s : m.sets) EXPECT_NE(s.id, kOptionsTemplateSetId);
    }
    const std::string method = "GET";
    const std::uint32_t status = 200;
    const FieldValue http[] = {{method.data(), 3}, {&status, 1}};
    ASSERT_TRUE(enc.add(sampleV4(), 1, http));  // creates the http template: 8057/200, 39499/12
    enc.flush();
    const auto msgs = sink.decoded();
    std::vector<std::pair<std::uint64_t, std::string>> described;
    std::size_t firstTemplateSet = 0;
    std::size_t typeSet = 0;
    for (const auto& m : msgs) {
        for (std::size_t i = 0; i < m.sets.size(); ++i) {
            if (m.sets[i].id == kTypeInfoTemplateId && typeSet == 0) typeSet = i + 1;
            if (m.sets[i].id == kTemplateSetId && typeSet != 0 && firstTemplateSet == 0)
                firstTemplateSet = i + 1;
        }
        for (const auto& o : m.options) {
            described.emplace_back(*o.number(0, 346) << 16 | *o.number(0, 303),
                                   std::string(o.find(0, 341)->begin(), o.find(0, 341)->end()));
            EXPECT_EQ(o.number(0, 342), 0U);  // range begin / end: none
            EXPECT_EQ(o.number(0, 343), 0U);
        }
    }
    // The pstats element (1013) has no template yet: no record for it.
    const std::vector<std::pair<std::uint64_t, std::string>> expected = {
        {std::uint64_t{kPenCesnet} << 16 | 200, "http_method"},
        {std::uint64_t{kPenFlowmon} << 16 | 12, "http_status"}};
    EXPECT_EQ(described, expected);
    EXPECT_NE(typeSet, 0U);
    EXPECT_GT(firstTemplateSet, typeSet) << "type records precede the templates";
}

TEST(IpfixTypeInfo, TypeRecordsAdvanceTheSequenceButAreNotFlows) {
    CapturingSink sink;
    IpfixEncoder enc(typeInfoConfig(), ipfixBasicFields(), sink);
    const std::string method = "GET";
    const std::uint32_t status = 200;
    const FieldValue http[] = {{method.data(), 3}, {&status, 1}};
    ASSERT_TRUE(enc.add(sampleV4(), 1, http));
    enc.flush();
    enc.resendTemplates();
    enc.add(sampleV4());
    enc.flush();
    const auto msgs = sink.decoded();
    ASSERT_EQ(msgs.size(), sink.records.size());
    std::uint32_t sent = 0;
    std::uint32_t flows = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        EXPECT_EQ(msgs[i].sequence, sent) << "message " << i;
        sent += static_cast<std::uint32_t>(msgs[i].records.size() + msgs[i].options.size());
        // The sink hears of type records only in template messages, as their count.
        if (sink.isTemplate[i]) {
            EXPECT_EQ(sink.records[i], msgs[i].options.size());
            EXPECT_TRUE(msgs[i].records.empty());
        } else {
            flows += sink.records[i];
        }
    }
    EXPECT_EQ(flows, 2U);
    EXPECT_EQ(enc.sequence(), sent);
    // Both template batches carried the two records (first, then the resend).
    std::size_t batches = 0;
    for (const auto& m : msgs) batches += m.options.empty() ? 0 : 1;
    EXPECT_EQ(batches, 2U);
    // templateMessages() (TCP) reports the same counts.
    std::vector<std::uint32_t> counts;
    const auto tcp = enc.templateMessages(&counts);
    ASSERT_EQ(tcp.size(), counts.size());
    std::uint32_t total = 0;
    for (const auto n : counts) total += n;
    EXPECT_EQ(total, 2U);
}

TEST(IpfixTypeInfo, EncodedRecordFollowsTheOptionsTemplate) {
    const IpfixTypeInfo info{.pen = 32473,
                             .id = 2,
                             .dataType = IpfixDataType::Unsigned32,
                             .semantics = 4,
                             .units = 0,
                             .name = "tunnelId",
                             .description = std::string(600, 'd')};
    const auto r = encodeTypeInfoRecord(info, 200);
    ASSERT_LE(r.size(), 200U) << "the description gives way to the room";
    EXPECT_EQ(r[0] << 24 | r[1] << 16 | r[2] << 8 | r[3], 32473);
    EXPECT_EQ(r[4] << 8 | r[5], 2);
    EXPECT_EQ(r[6], 3);   // unsigned32
    EXPECT_EQ(r[7], 4);   // identifier
    EXPECT_EQ(r[26], 8);  // name length
    EXPECT_EQ(std::string(r.begin() + 27, r.begin() + 35), "tunnelId");
    const auto t = typeInfoTemplateRecord();
    EXPECT_EQ(t[0] << 8 | t[1], kTypeInfoTemplateId);
    EXPECT_EQ(t[2] << 8 | t[3], 9);  // fields
    EXPECT_EQ(t[4] << 8 | t[5], 2);  // scope: privateEnterpriseNumber, informationElementId
}

TEST(IpfixChosenFields, TemplatesHoldTheChosenFieldsInTemplateOrder) {
    const ExportFieldList l = parseExportFieldList(
        "ttl,src_ip,bytes,dst_ip,bytes", ipfixFieldVocabulary(true), ipfixUniflowFields(), true);
    ASSERT_TRUE(l.error.empty()) << l.error;
    EncoderConfig c = testConfig();
    c.uniflow = true;
    CapturingSink sink;
    IpfixEncoder enc(c, l.core, sink);
    FlowRecord r = sampleV4();
    r.ttl = {64, 57};
    enc.add(r);
    enc.flush();
    const auto msgs = sink.decoded();
    std::vector<dec::DataRecord> records;
    for (const auto& m : msgs) records.insert(records.end(), m.records.begin(), m.records.end());
    ASSERT_EQ(records.size(), 2U);  // forward and reverse
    const std::vector<dec::Element> expected = {{1, 8, 0}, {8, 4, 0}, {12, 4, 0}, {192, 1, 0}};
    EXPECT_EQ(records[0].elements, expected);
    EXPECT_EQ(records[0].number(0, 1), 1000U);
    EXPECT_EQ(records[1].number(0, 1), 2000U);
    EXPECT_EQ(records[0].number(0, 192), 64U);
    EXPECT_EQ(records[1].number(0, 192), 57U);  // the reverse record's TTL
    EXPECT_EQ(records[1].number(0, 8), records[0].number(0, 12));
}

TEST(ExportFieldList, RefusesEmptyUnknownAndFieldsOutsideTheVocabulary) {
    const auto vocabulary = ipfixFieldVocabulary(true);
    const auto basic = ipfixUniflowFields();
    EXPECT_FALSE(parseExportFieldList("", vocabulary, basic, true).error.empty());
    EXPECT_FALSE(parseExportFieldList("bytes,,packets", vocabulary, basic, true).error.empty());
    const auto rev = parseExportFieldList("bytes_rev", vocabulary, basic, true);
    EXPECT_EQ(rev.offending, "bytes_rev");
    EXPECT_FALSE(rev.known.empty());
    EXPECT_FALSE(parseExportFieldList("queue", vocabulary, basic, true).error.empty());
    // Plugin names are left for later; without a core field the list is refused.
    EXPECT_FALSE(parseExportFieldList("http", vocabulary, basic, true).error.empty());
    const auto later = parseExportFieldList("basic,http_host", vocabulary, basic, true);
    EXPECT_TRUE(later.error.empty());
    EXPECT_EQ(later.others, std::vector<std::string>{"http_host"});
    EXPECT_EQ(later.core.size(), basic.size());
    const auto v9 =
        parseExportFieldList("byts", netflow9FieldVocabulary(), netflow9DefaultFields(), false);
    EXPECT_EQ(v9.offending, "byts");
}

}  // namespace
}  // namespace rowprobe::output
