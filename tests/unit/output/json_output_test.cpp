#include "output/json/json_output.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::output {
namespace {

namespace fs = std::filesystem;

fs::path scratchFile(const std::string& name) {
    static const fs::path dir = test::tempDir();  // removed when the test process exits
    return dir / name;
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A JSON value of the flat objects the output writes: a string or a number, kept as text.
struct JsonValue {
    bool isString = false;
    std::string text;
};
using JsonObject = std::map<std::string, JsonValue>;

/// Strict parser for one flat JSON object (strings without escapes, non-negative integers):
/// anything else fails the test, so it also checks the syntax.
JsonObject parseFlatObject(const std::string& line) {
    JsonObject out;
    std::size_t i = 0;
    auto expect = [&](char c) {
        if (i >= line.size() || line[i] != c) {
            throw std::runtime_error("expected '" + std::string(1, c) + "' at " +
                                     std::to_string(i) + " in " + line);
        }
        ++i;
    };
    auto string = [&] {
        expect('"');
        const std::size_t end = line.find('"', i);
        if (end == std::string::npos) throw std::runtime_error("unterminated string in " + line);
        std::string s = line.substr(i, end - i);
        if (s.find('\\') != std::string::npos) throw std::runtime_error("unexpected escape");
        i = end + 1;
        return s;
    };
    expect('{');
    while (true) {
        const std::string key = string();
        expect(':');
        JsonValue v;
        if (i < line.size() && line[i] == '"') {
            v.isString = true;
            v.text = string();
        } else {
            const std::size_t start = i;
            while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
            if (i == start) throw std::runtime_error("bad value for " + key + " in " + line);
            if (line[start] == '0' && i - start > 1) throw std::runtime_error("leading zero");
            v.text = line.substr(start, i - start);
        }
        if (!out.emplace(key, v).second) throw std::runtime_error("duplicate key " + key);
        if (i < line.size() && line[i] == ',') {
            ++i;
            continue;
        }
        expect('}');
        break;
    }
    if (i != line.size()) throw std::runtime_error("trailing text in " + line);
    return out;
}

std::vector<JsonObject> parseLines(const std::string& text) {
    std::vector<JsonObject> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) throw std::runtime_error("last line lacks a newline");
        out.push_back(parseFlatObject(text.substr(pos, nl - pos)));
        pos = nl + 1;
    }
    return out;
}

FlowRecord ipv4Record() {
    FlowRecord r;
    r.srcAddr[10] = r.srcAddr[11] = r.dstAddr[10] = r.dstAddr[11] = 0xFF;
    inet_pton(AF_INET, "192.0.2.10", r.srcAddr.data() + 12);
    inet_pton(AF_INET, "198.51.100.7", r.dstAddr.data() + 12);
    r.timeFirst = 1'700'000'000'001'289'368ULL;
    r.timeLast = 1'700'000'005'000'000'001ULL;
    r.bytes = {123'456'789'012ULL, 2048};
    r.packets = {4'000'000'000U, 17};
    r.srcPort = 51234;
    r.dstPort = 443;
    r.vlan = 42;
    r.icmpTypeCode = {0, 0};
    r.srcMac = {0x00, 0x1B, 0x21, 0xAA, 0xBB, 0xCC};
    r.dstMac = {0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01};
    r.tcpFlags = {0x1B, 0x12};
    r.ttl = {64, 57};
    r.proto = 6;
    r.ipVersion = 4;
    r.endReason = EndReason::EndOfFlow;
    r.queue = 3;
    return r;
}

FlowRecord ipv6Record() {
    FlowRecord r;
    inet_pton(AF_INET6, "2001:db8::1", r.srcAddr.data());
    inet_pton(AF_INET6, "fe80::abcd:0:0:1", r.dstAddr.data());
    r.timeFirst = 1'600'000'000'000'000'000ULL;
    r.timeLast = 1'600'000'000'999'999'999ULL;
    r.bytes = {104, 0};
    r.packets = {1, 0};
    r.icmpTypeCode = {0x8000, 0x8100};
    r.srcMac = {0x02, 0, 0, 0, 0, 0x01};
    r.dstMac = {0x33, 0x33, 0, 0, 0, 0x01};
    r.ttl = {255, 0};
    r.proto = 58;
    r.ipVersion = 6;
    r.endReason = EndReason::InactiveTimeout;
    r.queue = 0;
    return r;
}

const std::set<std::string> kDocumentedFields = {
    "src_ip",     "dst_ip",         "src_port",
    "dst_port",   "proto",          "ip_version",
    "vlan",       "src_mac",        "dst_mac",
    "time_first", "time_last",      "packets",
    "bytes",      "packets_rev",    "bytes_rev",
    "tcp_flags",  "tcp_flags_rev",  "ttl",
    "ttl_rev",    "icmp_type_code", "icmp_type_code_rev",
    "end_reason", "queue",          "tunnel_type",
    "tunnel_id",  "tunnel_src",     "tunnel_dst"};
const std::set<std::string> kStringFields = {"src_ip",     "dst_ip",     "src_mac",
                                             "dst_mac",    "time_first", "time_last",
                                             "end_reason", "tunnel_src", "tunnel_dst"};

std::unique_ptr<JsonOutput> makeOutput(const fs::path& path) {
    return Registry::instance().createAs<JsonOutput>(PluginKind::Output,
                                                     "json;file=" + path.string(), "-o");
}

void expectFieldTypes(const JsonObject& o) {
    std::set<std::string> keys;
    for (const auto& [k, v] : o) {
        keys.insert(k);
        EXPECT_EQ(v.isString, kStringFields.count(k) == 1) << k;
    }
    EXPECT_EQ(keys, kDocumentedFields);
}

TEST(JsonOutput, IsRegisteredWithFileFieldsAndThreadsOptions) {
    const auto* entry = Registry::instance().find(PluginKind::Output, "json");
    ASSERT_NE(entry, nullptr);
    ASSERT_EQ(entry->info.options.size(), 3U);
    EXPECT_EQ(entry->info.options[2].name, "threads");
    EXPECT_EQ(entry->info.options[2].defaultValue, "2");
    EXPECT_EQ(entry->info.options[1].name, "fields");
    EXPECT_EQ(entry->info.options[0].name, "file");
    EXPECT_EQ(entry->info.options[0].shortName, "f");
    EXPECT_EQ(entry->info.options[0].defaultValue, "-");
}

TEST(JsonOutput, Ipv4RecordHasEveryDocumentedFieldWithItsValue) {
    const fs::path path = scratchFile("v4.jsonl");
    {
        auto out = makeOutput(path);
        const FlowRecord r = ipv4Record();
        out->write({&r, 1});
        out->flush();
        EXPECT_EQ(out->stats().records, 1U);
    }
    const auto objects = parseLines(slurp(path));
    ASSERT_EQ(objects.size(), 1U);
    const JsonObject& o = objects[0];
    expectFieldTypes(o);
    EXPECT_EQ(o.at("src_ip").text, "192.0.2.10");
    EXPECT_EQ(o.at("dst_ip").text, "198.51.100.7");
    EXPECT_EQ(o.at("src_port").text, "51234");
    EXPECT_EQ(o.at("dst_port").text, "443");
    EXPECT_EQ(o.at("proto").text, "6");
    EXPECT_EQ(o.at("ip_version").text, "4");
    EXPECT_EQ(o.at("vlan").text, "42");
    EXPECT_EQ(o.at("src_mac").text, "00:1b:21:aa:bb:cc");
    EXPECT_EQ(o.at("dst_mac").text, "de:ad:be:ef:00:01");
    EXPECT_EQ(o.at("time_first").text, "2023-11-14T22:13:20.001289368Z");
    EXPECT_EQ(o.at("time_last").text, "2023-11-14T22:13:25.000000001Z");
    EXPECT_EQ(o.at("packets").text, "4000000000");
    EXPECT_EQ(o.at("bytes").text, "123456789012");
    EXPECT_EQ(o.at("packets_rev").text, "17");
    EXPECT_EQ(o.at("bytes_rev").text, "2048");
    EXPECT_EQ(o.at("tcp_flags").text, "27");
    EXPECT_EQ(o.at("tcp_flags_rev").text, "18");
    EXPECT_EQ(o.at("ttl").text, "64");
    EXPECT_EQ(o.at("ttl_rev").text, "57");
    EXPECT_EQ(o.at("icmp_type_code").text, "0");
    EXPECT_EQ(o.at("icmp_type_code_rev").text, "0");
    EXPECT_EQ(o.at("end_reason").text, "end");
    EXPECT_EQ(o.at("queue").text, "3");
    // Issue 21 item 16: outside a tunnel an IPv4 flow's outer addresses print as the README
    // shows them, 0.0.0.0 (they printed "::").
    EXPECT_EQ(o.at("tunnel_type").text, "0");
    EXPECT_EQ(o.at("tunnel_src").text, "0.0.0.0");
    EXPECT_EQ(o.at("tunnel_dst").text, "0.0.0.0");
}

TEST(JsonOutput, Ipv6RecordHasEveryDocumentedFieldWithItsValue) {
    const fs::path path = scratchFile("v6.jsonl");
    {
        auto out = makeOutput(path);
        const FlowRecord r = ipv6Record();
        out->write({&r, 1});
    }  // the destructor flushes
    const auto objects = parseLines(slurp(path));
    ASSERT_EQ(objects.size(), 1U);
    const JsonObject& o = objects[0];
    expectFieldTypes(o);
    EXPECT_EQ(o.at("src_ip").text, "2001:db8::1");
    EXPECT_EQ(o.at("dst_ip").text, "fe80::abcd:0:0:1");
    EXPECT_EQ(o.at("src_port").text, "0");
    EXPECT_EQ(o.at("proto").text, "58");
    EXPECT_EQ(o.at("ip_version").text, "6");
    EXPECT_EQ(o.at("vlan").text, "0");
    EXPECT_EQ(o.at("src_mac").text, "02:00:00:00:00:01");
    EXPECT_EQ(o.at("dst_mac").text, "33:33:00:00:00:01");
    EXPECT_EQ(o.at("time_first").text, "2020-09-13T12:26:40.000000000Z");
    EXPECT_EQ(o.at("time_last").text, "2020-09-13T12:26:40.999999999Z");
    EXPECT_EQ(o.at("packets").text, "1");
    EXPECT_EQ(o.at("bytes").text, "104");
    EXPECT_EQ(o.at("packets_rev").text, "0");
    EXPECT_EQ(o.at("ttl").text, "255");
    EXPECT_EQ(o.at("icmp_type_code").text, "32768");
    EXPECT_EQ(o.at("icmp_type_code_rev").text, "33024");
    EXPECT_EQ(o.at("end_reason").text, "inactive");
    EXPECT_EQ(o.at("queue").text, "0");
    EXPECT_EQ(o.at("tunnel_src").text, "::");
    EXPECT_EQ(o.at("tunnel_dst").text, "::");
}

TEST(JsonOutput, OneLinePerRecordInOrderAcrossBatchesAndBufferRefills) {
    const fs::path path = scratchFile("many.jsonl");
    constexpr std::uint32_t kRecords = 20'000;  // ~11 MB: the 1 MiB buffer drains many times
    {
        auto out = makeOutput(path);
        std::vector<FlowRecord> batch(100, ipv4Record());
        for (std::uint32_t i = 0; i < kRecords; i += 100) {
            for (std::uint32_t j = 0; j < 100; ++j) batch[j].packets[kForward] = i + j;
            out->write(batch);
        }
        out->flush();
        EXPECT_EQ(out->stats().records, kRecords);
        EXPECT_EQ(out->stats().bytes, fs::file_size(path));
    }
    const auto objects = parseLines(slurp(path));
    ASSERT_EQ(objects.size(), kRecords);
    for (std::uint32_t i = 0; i < kRecords; ++i) {
        ASSERT_EQ(objects[i].at("packets").text, std::to_string(i));
    }
}

TEST(JsonOutput, EveryEndReasonHasItsDocumentedName) {
    const std::pair<EndReason, const char*> cases[] = {{EndReason::InactiveTimeout, "inactive"},
                                                       {EndReason::ActiveTimeout, "active"},
                                                       {EndReason::EndOfFlow, "end"},
                                                       {EndReason::ForcedEnd, "forced"},
                                                       {EndReason::LackOfResources, "resources"}};
    for (const auto& [reason, name] : cases) {
        FlowRecord r = ipv4Record();
        r.endReason = reason;
        char buf[JsonOutput::kMaxLine];
        const std::string line(buf, JsonOutput::formatRecord(buf, r));
        EXPECT_EQ(parseFlatObject(line.substr(0, line.size() - 1)).at("end_reason").text, name);
    }
}

TEST(JsonOutput, LongestRecordFitsTheLineBound) {
    FlowRecord r = ipv6Record();
    r.srcAddr.fill(0xFF);
    r.dstAddr.fill(0xFF);
    r.packets = {UINT32_MAX, UINT32_MAX};
    r.bytes = {UINT64_MAX, UINT64_MAX};
    r.timeFirst = r.timeLast = UINT64_MAX;
    r.srcPort = r.dstPort = r.vlan = 65535;
    r.icmpTypeCode = {65535, 65535};
    r.tcpFlags = r.ttl = {255, 255};
    r.proto = r.ipVersion = r.queue = 255;
    r.endReason = EndReason::LackOfResources;
    char buf[JsonOutput::kMaxLine * 2];
    char* end = JsonOutput::formatRecord(buf, r);
    EXPECT_LE(static_cast<std::size_t>(end - buf), JsonOutput::kMaxLine);
    EXPECT_EQ(parseFlatObject(std::string(buf, end - 1)).at("bytes").text, "18446744073709551615");
}

TEST(JsonOutput, UnwritablePathIsAConfigErrorNamingTheFileOption) {
    try {
        makeOutput("/nonexistent-dir/flows.jsonl");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "file");
        EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
            << e.what();
    }
}

TEST(JsonOutput, FullDeviceIsARuntimeErrorOnFlush) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    auto out =
        Registry::instance().createAs<JsonOutput>(PluginKind::Output, "json;f=/dev/full", "-o");
    const FlowRecord r = ipv4Record();
    out->write({&r, 1});
    EXPECT_THROW(out->flush(), RuntimeError);
}

}  // namespace
}  // namespace rowprobe::output

namespace rowprobe::output {
namespace {

TEST(JsonOutput, FieldsOptionSelectsAndOrdersColumnsFromTheSchema) {
    const fs::path path = scratchFile("fields.jsonl");
    {
        auto out = Registry::instance().createAs<OutputPlugin>(
            PluginKind::Output, "json;file=" + path.string() + ";fields=bytes,src_ip,end_reason",
            "-o");
        const FlowRecord r = ipv4Record();
        out->write(std::span<const FlowRecord>(&r, 1));
        out->flush();
    }
    const std::string text = slurp(path);
    EXPECT_EQ(text.rfind("{\"bytes\":", 0), 0U) << text;
    const auto fields = parseFlatObject(text.substr(0, text.size() - 1));
    EXPECT_EQ(fields.size(), 3U);
    EXPECT_EQ(fields.at("src_ip").text, "192.0.2.10");
    EXPECT_EQ(fields.at("end_reason").text, "end");
}

TEST(JsonOutput, UnknownFieldIsAConfigErrorWithASuggestion) {
    try {
        Registry::instance().create(PluginKind::Output, "json;fields=src_ip,byts", "-o");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        const std::string msg = e.render();
        EXPECT_NE(msg.find("unknown field 'byts'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("did you mean 'bytes'"), std::string::npos) << msg;
    }
}

// A long field list (the same IPv6 address 40 times: ~2.5 KB a line, more than the default
// object's bound) is written whole, line after line across buffer refills: the room reserved per
// record follows the field list.
TEST(JsonOutput, LongFieldListLinesAreWrittenWholeAcrossBufferRefills) {
    const fs::path path = scratchFile("long-fields.jsonl");
    // Each field once (duplicate keys are refused); many records: ~3 MB through the 1 MiB buffer.
    const std::string list = "packets,src_ip";
    constexpr std::uint32_t kRecords = 40'000;
    {
        auto out = Registry::instance().createAs<OutputPlugin>(
            PluginKind::Output, "json;file=" + path.string() + ";fields=" + list, "-o");
        FlowRecord r = ipv6Record();
        r.srcAddr = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0xff, 0xff,
                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        std::vector<FlowRecord> batch(100, r);
        for (std::uint32_t i = 0; i < kRecords; i += 100) {
            for (std::uint32_t j = 0; j < 100; ++j) batch[j].packets[kForward] = i + j;
            out->write(batch);
        }
        out->flush();
    }
    const std::string text = slurp(path);
    std::size_t lines = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        ASSERT_NE(end, std::string::npos);
        const std::string line = text.substr(start, end - start);
        ASSERT_EQ(line.rfind("{\"packets\":" + std::to_string(lines) + ",", 0), 0U) << line;
        ASSERT_EQ(line.back(), '}');
        std::size_t count = 0;
        for (std::size_t at = 0;
             (at = line.find("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", at)) != std::string::npos;
             ++at) {
            ++count;
        }
        ASSERT_EQ(count, 1U) << line;
        ++lines;
        start = end + 1;
    }
    EXPECT_EQ(lines, kRecords);
}

TEST(JsonOutput, FieldListTooLongForOneLineIsAConfigError) {
    std::string list = "src_ip";
    for (int i = 0; i < 2000; ++i) list += ",dst_ip";
    try {
        Registry::instance().create(PluginKind::Output, "json;fields=" + list, "-o");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find("too many fields"), std::string::npos) << e.render();
    }
}

}  // namespace
}  // namespace rowprobe::output
