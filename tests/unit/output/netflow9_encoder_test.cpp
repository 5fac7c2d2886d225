// The NetFlow v9 encoder (output/netflow9): packets decoded by a small RFC 3954 reader written
// from the RFC, not from the encoder: header, template and data flowsets, per-packet
// sequence numbers, uniflow records, and sysUptime-relative times exact over runs longer than
// sysUptime's 49.7-day wrap (a synthetic clock) and across template refreshes.
#include "output/netflow9/netflow9_encoder.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace rowprobe::output {
namespace {

std::uint64_t be(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v << 8 | p[i];
    return v;
}

struct V9Record {
    std::map<std::uint16_t, std::vector<std::uint8_t>> fields;
    std::uint64_t number(std::uint16_t type) const {
        const auto& f = fields.at(type);
        return be(f.data(), f.size());
    }
};
struct V9Packet {
    std::uint16_t count = 0;
    std::uint32_t uptime = 0;
    std::uint32_t unixSecs = 0;
    std::uint32_t sequence = 0;
    std::uint32_t sourceId = 0;
    std::size_t templateRecords = 0;
    std::vector<V9Record> records;
};

/// RFC 3954 §5: header, flowsets (0 = templates, >= 256 = data; padding after records).
class V9Reader {
public:
    V9Packet read(const std::vector<std::uint8_t>& m) {
        V9Packet p;
        EXPECT_GE(m.size(), 20U);
        EXPECT_EQ(be(m.data(), 2), 9U);
        p.count = static_cast<std::uint16_t>(be(m.data() + 2, 2));
        p.uptime = static_cast<std::uint32_t>(be(m.data() + 4, 4));
        p.unixSecs = static_cast<std::uint32_t>(be(m.data() + 8, 4));
        p.sequence = static_cast<std::uint32_t>(be(m.data() + 12, 4));
        p.sourceId = static_cast<std::uint32_t>(be(m.data() + 16, 4));
        for (std::size_t at = 20; at + 4 <= m.size();) {
            const auto id = static_cast<std::uint16_t>(be(m.data() + at, 2));
            const std::size_t length = be(m.data() + at + 2, 2);
            EXPECT_GE(length, 4U);
            EXPECT_LE(at + length, m.size());
            EXPECT_EQ(length % 4, 0U) << "flowsets are padded to 4 bytes";
            if (length < 4 || at + length > m.size()) break;
            const std::uint8_t* s = m.data() + at + 4;
            const std::size_t n = length - 4;
            if (id == 0) {
                for (std::size_t t = 0; t + 4 <= n;) {
                    const auto tid = static_cast<std::uint16_t>(be(s + t, 2));
                    const std::size_t fields = be(s + t + 2, 2);
                    auto& list = m_templates[tid];
                    list.clear();
                    for (std::size_t f = 0; f < fields; ++f) {
                        list.emplace_back(static_cast<std::uint16_t>(be(s + t + 4 + 4 * f, 2)),
                                          static_cast<std::uint16_t>(be(s + t + 6 + 4 * f, 2)));
                    }
                    t += 4 + 4 * fields;
                    ++p.templateRecords;
                }
            } else {
                const auto it = m_templates.find(id);
                EXPECT_NE(it, m_templates.end()) << "data before its template " << id;
                if (it == m_templates.end()) break;
                std::size_t size = 0;
                for (const auto& f : it->second) size += f.second;
                for (std::size_t r = 0; r + size <= n; r += size) {
                    V9Record rec;
                    std::size_t off = r;
                    for (const auto& [type, len] : it->second) {
                        rec.fields[type].assign(s + off, s + off + len);
                        off += len;
                    }
                    p.records.push_back(rec);
                }
            }
            at += length;
        }
        EXPECT_EQ(p.count, p.templateRecords + p.records.size());
        return p;
    }

private:
    std::map<std::uint16_t, std::vector<std::pair<std::uint16_t, std::uint16_t>>> m_templates;
};

struct CapturingSink final : MessageSink {
    std::vector<std::vector<std::uint8_t>> packets;
    bool sendMessage(std::span<const std::uint8_t> m, std::uint32_t, bool) override {
        packets.emplace_back(m.begin(), m.end());
        return true;
    }
};

std::uint64_t g_fakeNs = 0;
std::uint64_t fakeMonotonic() { return g_fakeNs; }

std::array<std::uint8_t, 16> v4(const char* text) {
    std::array<std::uint8_t, 16> a{};
    a[10] = a[11] = 0xFF;
    inet_pton(AF_INET, text, a.data() + 12);
    return a;
}

FlowRecord sample() {
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
    return r;
}

/// What a collector computes: unix_secs * 1000 - sysUptime + FIRST/LAST_SWITCHED.
std::uint64_t collectorMs(const V9Packet& p, std::uint64_t switched) {
    return std::uint64_t{p.unixSecs} * 1000 - p.uptime + switched;
}

TEST(Netflow9Encoder, BiflowBecomesForwardAndReverseUniflowRecords) {
    CapturingSink sink;
    Netflow9Config c;
    c.sourceId = 42;
    Netflow9Encoder enc(c, sink);
    enc.add(sample());
    enc.flush();
    ASSERT_EQ(sink.packets.size(), 1U);
    V9Reader reader;
    const V9Packet p = reader.read(sink.packets[0]);
    EXPECT_EQ(p.sourceId, 42U);
    EXPECT_EQ(p.sequence, 0U);
    EXPECT_EQ(p.templateRecords, 2U);
    ASSERT_EQ(p.records.size(), 2U);
    const V9Record& f = p.records[0];
    const V9Record& r = p.records[1];
    EXPECT_EQ(f.number(1), 1000U);
    EXPECT_EQ(f.number(2), 10U);
    EXPECT_EQ(f.number(6), 0x1bU);
    EXPECT_EQ(f.number(7), 12345U);
    EXPECT_EQ(f.number(11), 443U);
    EXPECT_EQ(f.number(8), 0xC0000201U);
    EXPECT_EQ(f.number(12), 0xC6336407U);
    EXPECT_EQ(f.number(61), 0U);
    EXPECT_EQ(f.number(60), 4U);
    EXPECT_EQ(f.number(4), 6U);
    EXPECT_EQ(f.fields.at(56), (std::vector<std::uint8_t>{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}));
    EXPECT_EQ(r.number(1), 2000U);
    EXPECT_EQ(r.number(2), 20U);
    EXPECT_EQ(r.number(6), 0x12U);
    EXPECT_EQ(r.number(7), 443U);
    EXPECT_EQ(r.number(11), 12345U);
    EXPECT_EQ(r.number(8), 0xC6336407U);
    EXPECT_EQ(r.number(12), 0xC0000201U);
    EXPECT_EQ(r.number(61), 1U);
    EXPECT_EQ(r.fields.at(56), (std::vector<std::uint8_t>{0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb}));
    for (const V9Record* rec : {&f, &r}) {
        EXPECT_EQ(collectorMs(p, rec->number(22)), 1700000000500ULL);
        EXPECT_EQ(collectorMs(p, rec->number(21)), 1700000001250ULL);
    }
}

TEST(Netflow9Encoder, Ipv6RecordsAndNoReverseWithoutReversePackets) {
    CapturingSink sink;
    Netflow9Encoder enc({}, sink);
    FlowRecord r = sample();
    r.ipVersion = 6;
    r.srcAddr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    r.packets = {3, 0};
    enc.add(r);
    enc.add(sample());
    enc.flush();
    V9Reader reader;
    const V9Packet p = reader.read(sink.packets.at(0));
    ASSERT_EQ(p.records.size(), 3U);
    EXPECT_EQ(p.records[0].fields.at(27).size(), 16U);
    EXPECT_EQ(p.records[0].fields.at(27)[0], 0x20);
    EXPECT_EQ(p.records[1].number(8), 0xC0000201U);
}

// A run of 120 days of flows (a synthetic clock: the flows' own times), templates refreshed
// every 3 packets: every packet decodes, every record's times are what a collector computes
// from the header, to the millisecond, and sysUptime never wraps.
TEST(Netflow9Encoder, TimesStayExactOverMoreThanFortyNineDaysAndTemplateRefreshes) {
    CapturingSink sink;
    Netflow9Config c;
    c.templateRefreshPackets = 3;
    c.maxPacketSize = 400;  // a few records per packet: many packets
    Netflow9Encoder enc(c, sink);
    std::mt19937_64 rng(7);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sent;  // (first, last) ms, in order
    std::uint64_t t = 1700000000123ULL;
    const std::uint64_t end = t + 120ULL * 86'400'000;
    while (t < end) {
        FlowRecord r = sample();
        const std::uint64_t duration = rng() % 600'000;
        const std::uint64_t startBack = rng() % 300'000;  // expiry order is not start order
        r.timeFirst = (t - startBack) * 1'000'000 + rng() % 1'000'000;
        r.timeLast = (t - startBack + duration) * 1'000'000 + rng() % 1'000'000;
        r.packets = {1, static_cast<std::uint32_t>(rng() % 2)};
        enc.add(r);
        sent.emplace_back(r.timeFirst / 1'000'000, r.timeLast / 1'000'000);
        if (r.packets[1] != 0) sent.emplace_back(r.timeFirst / 1'000'000, r.timeLast / 1'000'000);
        t += 3'600'000 + rng() % 3'600'000;  // one to two hours apart
    }
    enc.flush();
    EXPECT_GT(enc.rebases(), 2U) << "the run spans several sysUptime epochs";
    V9Reader reader;
    std::size_t k = 0;
    std::size_t templatePackets = 0;
    for (std::size_t i = 0; i < sink.packets.size(); ++i) {
        const V9Packet p = reader.read(sink.packets[i]);
        EXPECT_EQ(p.sequence, i);
        if (p.templateRecords != 0) ++templatePackets;
        EXPECT_LT(p.uptime, 1ULL << 32);
        for (const V9Record& rec : p.records) {
            ASSERT_LT(k, sent.size());
            EXPECT_LE(rec.number(22), p.uptime);
            EXPECT_LE(rec.number(21), p.uptime);
            EXPECT_EQ(collectorMs(p, rec.number(22)), sent[k].first) << "record " << k;
            EXPECT_EQ(collectorMs(p, rec.number(21)), sent[k].second) << "record " << k;
            ++k;
        }
    }
    EXPECT_EQ(k, sent.size());
    EXPECT_GT(templatePackets, sink.packets.size() / 4);
    EXPECT_EQ(enc.templatePacketsSent(), templatePackets);
}

TEST(Netflow9Encoder, TemplateRefreshByTime) {
    CapturingSink sink;
    Netflow9Config c;
    c.templateRefreshNs = 10 * kNsPerSec;
    c.monotonicNs = &fakeMonotonic;
    g_fakeNs = 1;
    Netflow9Encoder enc(c, sink);
    V9Reader reader;
    enc.add(sample());
    enc.flush();
    g_fakeNs += 5 * kNsPerSec;
    enc.add(sample());
    enc.flush();
    g_fakeNs += 6 * kNsPerSec;
    enc.add(sample());
    enc.flush();
    ASSERT_EQ(sink.packets.size(), 3U);
    EXPECT_EQ(reader.read(sink.packets[0]).templateRecords, 2U);
    EXPECT_EQ(reader.read(sink.packets[1]).templateRecords, 0U);
    EXPECT_EQ(reader.read(sink.packets[2]).templateRecords, 2U);
}

TEST(Netflow9Encoder, PacketsNeverExceedTheSizeAndCountEveryRecord) {
    CapturingSink sink;
    Netflow9Config c;
    c.maxPacketSize = Netflow9Encoder::minPacketSize();
    Netflow9Encoder enc(c, sink);
    for (int i = 0; i < 1000; ++i) {
        FlowRecord r = sample();
        r.ipVersion = i % 3 == 0 ? 6 : 4;
        r.srcPort = static_cast<std::uint16_t>(i);
        enc.add(r);
    }
    enc.flush();
    V9Reader reader;
    std::size_t records = 0;
    for (const auto& m : sink.packets) {
        EXPECT_LE(m.size(), c.maxPacketSize);
        records += reader.read(m).records.size();
    }
    EXPECT_EQ(records, 2000U);
    EXPECT_THROW(Netflow9Encoder(Netflow9Config{.maxPacketSize = 100}, sink),
                 std::invalid_argument);
}

}  // namespace
}  // namespace rowprobe::output

namespace rowprobe::output {
namespace {

// fields= (issue 25): the template holds the chosen fields in the vocabulary's order, and the
// records only them; vlan and icmp_type_code are the two fields outside the default template.
TEST(Netflow9Encoder, ChosenFieldsMakeTheTemplateAndTheRecords) {
    CapturingSink sink;
    Netflow9Config c;
    c.fields = {FieldId::Bytes, FieldId::SrcIp, FieldId::Vlan, FieldId::IcmpTypeCode};
    Netflow9Encoder enc(c, sink);
    FlowRecord r = sample();
    r.vlan = 100;
    r.icmpTypeCode = {0x0800, 0x0000};
    enc.add(r);
    enc.flush();
    ASSERT_EQ(sink.packets.size(), 1U);
    V9Reader reader;
    const V9Packet p = reader.read(sink.packets[0]);
    ASSERT_EQ(p.records.size(), 2U);
    for (const V9Record& rec : p.records) EXPECT_EQ(rec.fields.size(), 4U);
    EXPECT_EQ(p.records[0].number(1), 1000U);
    EXPECT_EQ(p.records[0].number(8), 0xC0000201U);
    EXPECT_EQ(p.records[0].number(58), 100U);
    EXPECT_EQ(p.records[0].number(32), 0x0800U);
    EXPECT_EQ(p.records[1].number(1), 2000U);
    EXPECT_EQ(p.records[1].number(8), 0xC6336407U);  // the reverse record's source
    EXPECT_EQ(p.records[1].number(32), 0U);
    EXPECT_EQ(enc.layout(false).recordLength, 8U + 4U + 2U + 2U);
    EXPECT_EQ(enc.layout(true).recordLength, 8U + 16U + 2U + 2U);
    EXPECT_LT(Netflow9Encoder::minPacketSize(c.fields), Netflow9Encoder::minPacketSize());
    Netflow9Config bad;
    bad.fields = {FieldId::BytesRev};
    EXPECT_THROW(Netflow9Encoder(bad, sink), std::invalid_argument);
}

}  // namespace
}  // namespace rowprobe::output
