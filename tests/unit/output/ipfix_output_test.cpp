// The `ipfix` plugin end to end through its transports: file, UDP and TCP on 127.0.0.1,
// including collector restarts and outages longer than the buffer.
#include "output/ipfix/ipfix_output.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fake_plugins.hpp"
#include "ipfix_test_decoder.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::output {
namespace {

namespace dec = rowprobe::test::ipfix;
using Clock = std::chrono::steady_clock;

std::unique_ptr<OutputPlugin> makeOutput(const std::string& text) {
    return Registry::instance().createAs<OutputPlugin>(PluginKind::Output, text, "-o");
}

/// Record i carries i in its octet count, so every record can be identified after decoding.
FlowRecord numbered(std::uint64_t i, bool v6 = false) {
    FlowRecord r;
    r.ipVersion = v6 ? 6 : 4;
    if (v6) {
        r.srcAddr = {0x20, 0x01, 0x0d, 0xb8};
        r.dstAddr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
        r.srcAddr[15] = static_cast<std::uint8_t>(i);
    } else {
        r.srcAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
        r.dstAddr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 2};
    }
    r.srcPort = static_cast<std::uint16_t>(1024 + i % 60000);
    r.dstPort = 443;
    r.proto = 6;
    r.bytes = {i, 2 * i};
    r.packets = {1, 2};
    r.timeFirst = 1700000000ULL * kNsPerSec;
    r.timeLast = r.timeFirst + kNsPerSec;
    return r;
}

void writeRange(OutputPlugin& out, std::uint64_t from, std::uint64_t to, std::size_t batch = 100) {
    std::vector<FlowRecord> records;
    for (std::uint64_t i = from; i < to; ++i) {
        records.push_back(numbered(i, i % 7 == 0));
        if (records.size() == batch) {
            out.write(records);
            records.clear();
        }
    }
    if (!records.empty()) out.write(records);
    out.flush();
}

std::vector<dec::Message> decodeAll(const std::vector<std::uint8_t>& bytes) {
    dec::Decoder d;
    std::vector<dec::Message> msgs;
    std::string error;
    EXPECT_TRUE(d.decode(bytes, msgs, error)) << error;
    return msgs;
}

std::multiset<std::uint64_t> recordIds(const std::vector<dec::Message>& msgs) {
    std::multiset<std::uint64_t> ids;
    for (const auto& m : msgs) {
        for (const auto& r : m.records) ids.insert(*r.number(0, 1));
    }
    return ids;
}

std::size_t countRecords(const std::vector<dec::Message>& msgs) {
    std::size_t n = 0;
    for (const auto& m : msgs) n += m.records.size();
    return n;
}

/// Checks a TCP session: templates first with sequence 0, then data messages whose sequence
/// is the number of data records before them in the session.
void expectSession(const std::vector<dec::Message>& msgs) {
    ASSERT_FALSE(msgs.empty());
    EXPECT_EQ(msgs[0].templates.size(), 2U);
    EXPECT_EQ(msgs[0].records.size(), 0U);
    EXPECT_EQ(msgs[0].sequence, 0U);
    std::uint32_t seq = 0;
    std::size_t templateMessages = 0;
    for (const auto& m : msgs) {
        EXPECT_EQ(m.sequence, seq);
        seq += static_cast<std::uint32_t>(m.records.size());
        templateMessages += m.templates.empty() ? 0 : 1;
    }
    EXPECT_EQ(templateMessages, 1U) << "templates once per TCP connection";
}

// Issue 13 item 7, through the plugin: `dir` in flowDirection; ingressInterface only once the
// pipeline says which interface each queue captures on, per record by its queue.
TEST(IpfixOutput, IngressInterfaceFromThePipelineAndDirAsFlowDirection) {
    for (const bool live : {false, true}) {
        const auto path = rowprobe::test::tempDir() / "ifindex.ipfix";
        auto out = makeOutput("ipfix;file=" + path.string() + ";dir=1");
        const std::uint32_t byQueue[] = {4, 9};
        if (live) out->setInputInterfaces(byQueue);
        std::vector<FlowRecord> records = {numbered(1), numbered(2)};
        records[1].queue = 1;
        out->write(records);
        out->finish();
        std::ifstream in(path, std::ios::binary);
        const auto msgs = decodeAll({std::istreambuf_iterator<char>(in), {}});
        ASSERT_EQ(countRecords(msgs), 2U);
        const auto& recs = msgs.back().records;
        EXPECT_EQ(recs.at(0).number(0, 61), 1U);
        EXPECT_EQ(recs.at(1).number(0, 61), 1U);
        if (live) {
            EXPECT_EQ(recs.at(0).number(0, 10), 4U);
            EXPECT_EQ(recs.at(1).number(0, 10), 9U);
        } else {
            EXPECT_EQ(recs.at(0).find(0, 10), nullptr);
        }
    }
}

// Process-plugin fields through the plugin: one template per (plugins present x IP version),
// strings, numbers, addresses and basicLists from the instances, one record per instance of a
// plugin with several (its other plugins repeated).
TEST(IpfixOutput, PluginFieldsOneTemplatePerPluginSetAndOneRecordPerInstance) {
    namespace fp = rowprobe::test::plugins;
    const fp::FakePlugin http("http", fp::kHttpFields);
    const fp::FakePlugin stats("pstats", fp::kStatsFields);
    const fp::FakePlugin dns("passivedns", fp::kDnsFields);
    const ProcessPlugin* plugins[] = {&http, &stats, &dns};
    const auto path = rowprobe::test::tempDir() / "plugins.ipfix";
    auto out = makeOutput("ipfix;file=" + path.string());
    out->setProcessPlugins(plugins);

    const TimeNs t0 = 1700000000ULL * kNsPerSec + 250'000'000;
    fp::Instances i1, i2, i3;
    i1.http(0, "GET", "example.com", 200);
    i2.http(0, "POST", "a.example", 404);
    i2.stats(1, {60, 1500}, {t0, t0 + 1'000'000}, {1, -1});
    i3.stats(1, {40}, {t0}, {1});
    i3.dns(2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 1}, 300, 7, "x.example");
    i3.dns(2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 2}, 300, 7, "x.example");
    i3.dns(2, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 60, 7, "x.example");
    std::vector<FlowRecord> records = {numbered(0), numbered(1), numbered(2), numbered(3)};
    i1.attach(records[1]);
    i2.attach(records[2]);
    i3.attach(records[3]);
    out->write(records);
    out->finish();
    EXPECT_EQ(out->stats().records, 6U);  // 1 + 1 + 1 + 3 (one per passivedns answer)

    std::ifstream in(path, std::ios::binary);
    const auto msgs = decodeAll({std::istreambuf_iterator<char>(in), {}});
    std::map<std::uint16_t, std::vector<dec::Element>> templates;
    std::vector<dec::DataRecord> data;
    std::set<std::pair<std::uint32_t, std::uint16_t>> typed;  // RFC 5610 records (type-info=yes)
    for (const auto& m : msgs) {
        for (const auto& t : m.templates) {
            if (t.scope == 0) templates[t.id] = t.elements;
        }
        data.insert(data.end(), m.records.begin(), m.records.end());
        for (const auto& o : m.options)
            typed.emplace(*o.number(0, 346), static_cast<std::uint16_t>(*o.number(0, 303)));
    }
    ASSERT_EQ(data.size(), 6U);
    // Every enterprise element of every template has its type record (RFC 5103 reverse
    // elements excepted), and nothing else has one.
    std::set<std::pair<std::uint32_t, std::uint16_t>> enterprise;
    for (const auto& [id, elements] : templates) {
        for (const auto& e : elements) {
            if (e.pen != 0 && e.pen != 29305) enterprise.emplace(e.pen, e.id);
        }
    }
    for (const auto& r : data) {
        for (std::size_t k = 0; k < r.elements.size(); ++k) {
            if (r.elements[k].id != 291) continue;
            const auto list = dec::BasicList::parse(r.values[k]).value();
            enterprise.emplace(list.element.pen, list.element.id);
        }
    }
    EXPECT_EQ(typed, enterprise);
    // basic 258/259, then in order of first use: {http} 260/261, {http,pstats} 262/263,
    // {pstats,passivedns} 264/265.
    EXPECT_EQ(templates.size(), 8U);
    EXPECT_EQ(data[0].templateId, 258);
    EXPECT_EQ(data[1].templateId, 260);
    EXPECT_EQ(data[2].templateId, 262);
    for (std::size_t k = 3; k < 6; ++k) EXPECT_EQ(data[k].templateId, 264);
    ASSERT_EQ(templates[260].size(), 18U + 3U);
    EXPECT_EQ(templates[260][18], (dec::Element{1, 0xFFFF, 39499}));  // schema order
    EXPECT_EQ(templates[260][19], (dec::Element{200, 0xFFFF, 8057}));
    EXPECT_EQ(templates[260][20], (dec::Element{12, 2, 39499}));

    auto text = [](const std::vector<std::uint8_t>* v) {
        return v == nullptr ? std::string("<absent>") : std::string(v->begin(), v->end());
    };
    EXPECT_EQ(text(data[1].find(39499, 1)), "example.com");
    EXPECT_EQ(text(data[1].find(8057, 200)), "GET");
    EXPECT_EQ(data[1].number(39499, 12), 200U);
    EXPECT_EQ(text(data[2].find(8057, 200)), "POST");
    EXPECT_EQ(data[2].number(39499, 12), 404U);
    // pstats' three lists: values[21..23] of template 262 (18 basic + 3 http).
    const auto lengths = dec::BasicList::parse(data[2].values.at(21)).value();
    EXPECT_EQ(lengths.element, (dec::Element{1013, 2, 8057}));
    EXPECT_EQ(lengths.values, (std::vector<std::uint64_t>{60, 1500}));
    const auto times = dec::BasicList::parse(data[2].values.at(22)).value();
    EXPECT_EQ(times.values, (std::vector<std::uint64_t>{1700000000250ULL, 1700000000251ULL}));
    const auto dirs = dec::BasicList::parse(data[2].values.at(23)).value();
    EXPECT_EQ(dirs.values, (std::vector<std::uint64_t>{1, 0xFF}));
    // passivedns: one record per answer, pstats repeated; IPv4 answers in 4 bytes.
    const std::vector<std::uint8_t> ips[] = {
        {192, 0, 2, 1},
        {192, 0, 2, 2},
        {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
    for (std::size_t k = 0; k < 3; ++k) {
        const auto& r = data[3 + k];
        EXPECT_EQ(*r.find(8057, 7), ips[k]) << k;
        EXPECT_EQ(r.number(8057, 5), k == 2 ? 60U : 300U);
        EXPECT_EQ(text(r.find(8057, 2)), "x.example");
        EXPECT_EQ(dec::BasicList::parse(r.values.at(18)).value().values,
                  (std::vector<std::uint64_t>{40}));
        EXPECT_EQ(r.number(0, 1), 3U) << "the flow's own fields in every record";
    }
}

// Int16 / Int32 plugin fields: big-endian two's complement in elements of their own size
// (scalars and basicList items), and their RFC 5610 type records say signed16 / signed32, so a
// collector that learns the elements from them reads -1 as -1, not 65535.
TEST(IpfixOutput, SignedPluginFieldsAreSigned16And32WithTheirTypeRecords) {
    namespace fp = rowprobe::test::plugins;
    const fp::FakePlugin sig("signed", fp::kSignedFields);
    const ProcessPlugin* plugins[] = {&sig};
    const auto path = rowprobe::test::tempDir() / "signed.ipfix";
    auto out = makeOutput("ipfix;file=" + path.string());
    out->setProcessPlugins(plugins);
    fp::Instances i;
    i.signedValues(0, -2, -2'147'483'647 - 1, {-1, 32767, -32768}, {-1, 65535, 2'147'483'647});
    std::vector<FlowRecord> records = {numbered(0)};
    i.attach(records[0]);
    out->write(records);
    out->finish();

    std::ifstream in(path, std::ios::binary);
    const auto msgs = decodeAll({std::istreambuf_iterator<char>(in), {}});
    std::vector<dec::DataRecord> data;
    std::map<std::uint16_t, std::uint64_t> types;  // element id -> informationElementDataType
    for (const auto& m : msgs) {
        data.insert(data.end(), m.records.begin(), m.records.end());
        for (const auto& o : m.options) {
            if (*o.number(0, 346) == fp::kSignedPen)
                types[static_cast<std::uint16_t>(*o.number(0, 303))] = *o.number(0, 339);
        }
    }
    ASSERT_EQ(data.size(), 1U);
    EXPECT_EQ(types, (std::map<std::uint16_t, std::uint64_t>{{1, 6}, {2, 7}, {3, 6}, {4, 7}}));
    EXPECT_EQ(*data[0].find(fp::kSignedPen, 1), (std::vector<std::uint8_t>{0xFF, 0xFE}));
    EXPECT_EQ(*data[0].find(fp::kSignedPen, 2), (std::vector<std::uint8_t>{0x80, 0, 0, 0}));
    std::vector<dec::BasicList> lists;
    for (std::size_t k = 0; k < data[0].elements.size(); ++k) {
        if (data[0].elements[k].id == 291)
            lists.push_back(dec::BasicList::parse(data[0].values[k]).value());
    }
    ASSERT_EQ(lists.size(), 2U);
    EXPECT_EQ(lists[0].element, (dec::Element{3, 2, fp::kSignedPen}));
    EXPECT_EQ(lists[0].values, (std::vector<std::uint64_t>{0xFFFF, 0x7FFF, 0x8000}));
    EXPECT_EQ(lists[1].element, (dec::Element{4, 4, fp::kSignedPen}));
    EXPECT_EQ(lists[1].values, (std::vector<std::uint64_t>{0xFFFFFFFF, 65535, 0x7FFFFFFF}));
}

TEST(IpfixOutput, TunnelFieldsUnderTheOperatorsPenInTemplatesOfTheirOwn) {
    // tunnel-pen=32473 (RFC 5612's documentation number) with the http plugin: plain flows keep
    // 258, an IPv4-outer tunnel gets the tunnel4 set (ids 1-4), an IPv6-outer one the tunnel6
    // set (1, 2, 5, 6), and a tunnelled flow with http data both, the plugin's fields first.
    namespace fp = rowprobe::test::plugins;
    const fp::FakePlugin http("http", fp::kHttpFields);
    const ProcessPlugin* plugins[] = {&http};
    const auto path = rowprobe::test::tempDir() / "tunnels.ipfix";
    auto out = makeOutput("ipfix;file=" + path.string() + ";tunnel-pen=32473");
    out->setProcessPlugins(plugins);
    constexpr std::uint32_t kPen = 32473;

    std::vector<FlowRecord> records = {numbered(0), numbered(1), numbered(2, true), numbered(3)};
    records[1].tunnel.type = static_cast<std::uint8_t>(TunnelType::Vxlan);
    records[1].tunnel.id = 0xABCDEF;
    records[1].tunnel.src = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 1};
    records[1].tunnel.dst = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 2};
    for (const std::size_t k : {std::size_t{2}, std::size_t{3}}) {
        records[k].tunnel.type = static_cast<std::uint8_t>(TunnelType::Gre);
        records[k].tunnel.id = 7;
        records[k].tunnel.src = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        records[k].tunnel.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    }
    fp::Instances i3;
    i3.http(0, "GET", "example.com", 200);
    i3.attach(records[3]);
    out->write(records);
    out->finish();
    EXPECT_EQ(out->stats().records, 4U);

    std::ifstream in(path, std::ios::binary);
    const auto msgs = decodeAll({std::istreambuf_iterator<char>(in), {}});
    std::map<std::uint16_t, std::vector<dec::Element>> templates;
    std::vector<dec::DataRecord> data;
    for (const auto& m : msgs) {
        for (const auto& t : m.templates) templates[t.id] = t.elements;
        data.insert(data.end(), m.records.begin(), m.records.end());
    }
    ASSERT_EQ(data.size(), 4U);
    EXPECT_EQ(data[0].templateId, 258);
    EXPECT_EQ(data[1].templateId, 260);  // {tunnel4}, IPv4 inner
    EXPECT_EQ(data[2].templateId, 263);  // {tunnel6}, IPv6 inner
    EXPECT_EQ(data[3].templateId, 264);  // {http, tunnel6}, IPv4 inner
    EXPECT_EQ(templates[258].size(), 18U);
    const std::vector<dec::Element> tail4 = {
        {1, 1, kPen}, {2, 4, kPen}, {3, 4, kPen}, {4, 4, kPen}};
    const std::vector<dec::Element> tail6 = {
        {1, 1, kPen}, {2, 4, kPen}, {5, 16, kPen}, {6, 16, kPen}};
    ASSERT_EQ(templates[260].size(), 22U);
    EXPECT_EQ(std::vector<dec::Element>(templates[260].begin() + 18, templates[260].end()), tail4);
    ASSERT_EQ(templates[263].size(), 22U);
    EXPECT_EQ(std::vector<dec::Element>(templates[263].begin() + 18, templates[263].end()), tail6);
    ASSERT_EQ(templates[264].size(), 25U);  // 18 + 3 http + 4 tunnel
    EXPECT_EQ(std::vector<dec::Element>(templates[264].begin() + 21, templates[264].end()), tail6);

    EXPECT_EQ(data[0].find(kPen, 1), nullptr);
    EXPECT_EQ(data[1].number(kPen, 1), 3U);
    EXPECT_EQ(data[1].number(kPen, 2), 0xABCDEFU);
    EXPECT_EQ(*data[1].find(kPen, 3), (std::vector<std::uint8_t>{192, 0, 2, 1}));
    EXPECT_EQ(*data[1].find(kPen, 4), (std::vector<std::uint8_t>{192, 0, 2, 2}));
    for (const std::size_t k : {std::size_t{2}, std::size_t{3}}) {
        EXPECT_EQ(data[k].number(kPen, 1), 1U);
        EXPECT_EQ(data[k].number(kPen, 2), 7U);
        EXPECT_EQ(*data[k].find(kPen, 6), std::vector<std::uint8_t>(records[k].tunnel.dst.begin(),
                                                                    records[k].tunnel.dst.end()));
    }
    const auto* method = data[3].find(8057, 200);
    ASSERT_NE(method, nullptr);
    EXPECT_EQ(std::string(method->begin(), method->end()), "GET");
}

TEST(IpfixOutput, FileIsAnIpfixStreamWithTemplatesFirstAndEveryRecord) {
    const auto path = rowprobe::test::tempDir() / "out.ipfix";
    auto out = makeOutput("ipfix;file=" + path.string() + ";id=42");
    writeRange(*out, 0, 5000);
    out->finish();
    EXPECT_EQ(out->stats().records, 5000U);
    EXPECT_EQ(out->stats().dropped, 0U);
    std::ifstream in(path, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(out->stats().bytes, bytes.size());
    const auto msgs = decodeAll(bytes);
    ASSERT_FALSE(msgs.empty());
    EXPECT_EQ(msgs[0].templates.size(), 2U);
    EXPECT_EQ(msgs[0].domain, 42U);
    EXPECT_EQ(countRecords(msgs), 5000U);
    const auto ids = recordIds(msgs);
    EXPECT_EQ(ids.size(), 5000U);
    EXPECT_EQ(*ids.begin(), 0U);
    EXPECT_EQ(*ids.rbegin(), 4999U);
    // Files default to the largest messages (few, big messages).
    std::size_t largest = 0;
    for (const auto& m : msgs) largest = std::max<std::size_t>(largest, m.length);
    EXPECT_GT(largest, 60000U);
}

TEST(IpfixOutput, BadOptionsAreConfigErrors) {
    const auto file = (rowprobe::test::tempDir() / "x.ipfix").string();
    const std::vector<std::string> bad = {"ipfix;port=0",
                                          "ipfix;port=70000",
                                          "ipfix;port=http",
                                          "ipfix;mtu=100",
                                          "ipfix;udp;mtu=65535",
                                          "ipfix;host=no-such-host.invalid",
                                          "ipfix;file=" + file + ";udp",
                                          "ipfix;file=" + file + ";host=10.0.0.1",
                                          "ipfix;udp;buffer=4",
                                          "ipfix;udp;linger=1",
                                          "ipfix;timestamps=ps",
                                          "ipfix;template=-1",
                                          "ipfix;hots=1.2.3.4",
                                          "ipfix;tunnel-pen=-1",
                                          "ipfix;tunnel-pen=4294967296",
                                          "ipfix;udp;mtu=126;tunnel-pen=32473"};
    for (const std::string& text : bad) {
        EXPECT_THROW(makeOutput(text), ConfigError) << text;
    }
}

TEST(IpfixOutput, MessageSizeErrorNamesTheMinimum) {
    try {
        makeOutput("ipfix;udp;mtu=100");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "mtu");
        EXPECT_NE(e.details().problem.find("126"), std::string::npos) << e.details().problem;
    }
}

TEST(IpfixOutput, TcpDeliversEveryRecordInOneSession) {
    dec::TcpCollector collector;
    auto out = makeOutput("ipfix;port=" + std::to_string(collector.port()) + ";id=3");
    writeRange(*out, 0, 20000);
    out->finish();
    EXPECT_EQ(out->stats().records, 20000U);
    EXPECT_EQ(out->stats().dropped, 0U);
    ASSERT_TRUE(dec::waitUntil([&] { return collector.totalBytes() >= out->stats().bytes; }));
    const auto conns = collector.connections();
    ASSERT_EQ(conns.size(), 1U);
    const auto msgs = decodeAll(conns[0]);
    expectSession(msgs);
    EXPECT_EQ(msgs[0].domain, 3U);
    const auto ids = recordIds(msgs);
    EXPECT_EQ(ids.size(), 20000U);
    EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()).size(), 20000U) << "duplicates";
}

TEST(IpfixOutput, TcpCollectorDownAtStartIsNotAConfigErrorAndGetsEverythingLater) {
    const std::uint16_t port = test::freeLoopbackPort(SOCK_STREAM);
    auto out = makeOutput("ipfix;port=" + std::to_string(port));
    writeRange(*out, 0, 3000);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    dec::TcpCollector collector(port);
    writeRange(*out, 3000, 4000);
    out->finish();
    EXPECT_EQ(out->stats().records, 4000U);
    EXPECT_EQ(out->stats().dropped, 0U);
    ASSERT_TRUE(dec::waitUntil([&] { return collector.totalBytes() >= out->stats().bytes; }));
    const auto conns = collector.connections();
    ASSERT_EQ(conns.size(), 1U);
    const auto msgs = decodeAll(conns[0]);
    expectSession(msgs);
    EXPECT_EQ(recordIds(msgs).size(), 4000U);
}

TEST(IpfixOutput, TcpCollectorKilledAndRestartedLosesNothingWithinTheBuffer) {
    dec::TcpCollector collector;
    const std::uint16_t port = collector.port();
    auto out = makeOutput("ipfix;port=" + std::to_string(port) + ";reconnect=0.2");
    writeRange(*out, 0, 5000);
    // Let the collector read everything sent so far, then kill it.
    ASSERT_TRUE(dec::waitUntil([&] { return out->stats().records == 5000; }));
    ASSERT_TRUE(dec::waitUntil(
        [&] { return countRecords(decodeAll(collector.connections()[0])) == 5000; }));
    collector.stop();
    writeRange(*out, 5000, 12000);  // produced while the collector is down
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(out->stats().records, 5000U);
    collector.restart();
    writeRange(*out, 12000, 15000);
    out->finish();
    EXPECT_EQ(out->stats().records, 15000U);
    EXPECT_EQ(out->stats().dropped, 0U);

    const auto conns = collector.connections();
    ASSERT_EQ(conns.size(), 2U);
    std::multiset<std::uint64_t> all;
    for (const auto& c : conns) {
        const auto msgs = decodeAll(c);
        expectSession(msgs);  // templates re-sent, sequence restarts at 0
        const auto ids = recordIds(msgs);
        all.insert(ids.begin(), ids.end());
    }
    EXPECT_EQ(all.size(), 15000U);
    EXPECT_EQ(std::set<std::uint64_t>(all.begin(), all.end()).size(), 15000U) << "duplicates";
}

TEST(IpfixOutput, TcpOutageLongerThanTheBufferIsCountedAndNeverHangs) {
    const std::uint16_t port = test::freeLoopbackPort(SOCK_STREAM);
    auto out = makeOutput("ipfix;port=" + std::to_string(port) + ";buffer=1;linger=0.5");
    const auto t0 = Clock::now();
    writeRange(*out, 0, 40000);  // ~3.3 MB of messages, 1 MiB of buffer
    out->finish();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_LT(seconds, 5.0);
    EXPECT_EQ(out->stats().records, 0U);
    EXPECT_EQ(out->stats().dropped, 40000U);
}

TEST(IpfixOutput, TcpOutageBeyondTheBufferDeliversTheBufferedPartAndCountsTheRest) {
    const std::uint16_t port = test::freeLoopbackPort(SOCK_STREAM);
    auto out = makeOutput("ipfix;port=" + std::to_string(port) + ";buffer=1;reconnect=0.1");
    writeRange(*out, 0, 40000);
    const auto droppedWhileDown = out->stats().dropped;
    EXPECT_GT(droppedWhileDown, 0U);
    dec::TcpCollector collector(port);
    out->finish();
    const auto stats = out->stats();
    EXPECT_EQ(stats.records + stats.dropped, 40000U);
    EXPECT_EQ(stats.dropped, droppedWhileDown);
    EXPECT_GT(stats.records, 10000U);  // ~1 MiB of 1.4 kB messages with ~17 records each
    ASSERT_TRUE(dec::waitUntil([&] { return collector.totalBytes() >= stats.bytes; }));
    const auto conns = collector.connections();
    ASSERT_EQ(conns.size(), 1U);
    const auto msgs = decodeAll(conns[0]);
    expectSession(msgs);
    EXPECT_EQ(countRecords(msgs), stats.records);
    // The oldest records are the ones kept: the drops are the newest messages.
    EXPECT_EQ(*recordIds(msgs).begin(), 0U);
}

TEST(IpfixOutput, UdpDatagramsAreWholeMessagesAndTemplatesRefreshByCount) {
    dec::UdpCollector collector;
    auto out = makeOutput("ipfix;udp;port=" + std::to_string(collector.port()) +
                          ";template-packets=10;mtu=1200");
    writeRange(*out, 0, 3000);
    out->finish();
    EXPECT_EQ(out->stats().records, 3000U);
    ASSERT_TRUE(dec::waitUntil([&] {
        std::size_t n = 0;
        for (const auto& d : collector.datagrams()) n += d.size();
        return n >= out->stats().bytes;
    }));
    const auto datagrams = collector.datagrams();
    dec::Decoder d;
    std::size_t templates = 0;
    std::size_t records = 0;
    std::size_t dataSinceTemplates = 0;
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
        std::vector<dec::Message> msgs;
        std::string error;
        ASSERT_TRUE(d.decode(datagrams[i], msgs, error)) << error;
        ASSERT_EQ(msgs.size(), 1U) << "one message per datagram";
        EXPECT_LE(datagrams[i].size(), 1200U);
        if (i == 0) {
            EXPECT_FALSE(msgs[0].templates.empty());
        }
        if (!msgs[0].templates.empty()) {
            ++templates;
            dataSinceTemplates = 0;
        } else {
            ++dataSinceTemplates;
            EXPECT_LE(dataSinceTemplates, 10U);
        }
        records += msgs[0].records.size();
    }
    EXPECT_EQ(records, 3000U);
    EXPECT_GE(templates, datagrams.size() / 11);
}

TEST(IpfixOutput, UdpTemplatesRefreshByTime) {
    dec::UdpCollector collector;
    auto out = makeOutput("ipfix;udp;port=" + std::to_string(collector.port()) + ";template=0.2");
    writeRange(*out, 0, 10);
    writeRange(*out, 10, 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    writeRange(*out, 20, 30);
    out->finish();
    ASSERT_TRUE(dec::waitUntil([&] { return collector.datagrams().size() >= 5; }));
    std::string pattern;
    dec::Decoder d;
    for (const auto& dg : collector.datagrams()) {
        std::vector<dec::Message> msgs;
        std::string error;
        ASSERT_TRUE(d.decode(dg, msgs, error)) << error;
        pattern += msgs[0].templates.empty() ? 'D' : 'T';
    }
    EXPECT_EQ(pattern, "TDDTD");
}

}  // namespace
}  // namespace rowprobe::output
