#include "output/text/text_output.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

std::vector<std::string> readLines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

struct Token {
    std::size_t begin;
    std::size_t end;
    std::string text;
};

std::vector<Token> tokens(const std::string& line) {
    std::vector<Token> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        if (i == line.size()) break;
        const std::size_t b = i;
        while (i < line.size() && line[i] != ' ') ++i;
        out.push_back({b, i, line.substr(b, i - b)});
    }
    return out;
}

FlowRecord record(const char* src, std::uint16_t sport, const char* dst, std::uint16_t dport,
                  std::uint8_t proto) {
    FlowRecord r;
    const bool v6 = std::string(src).find(':') != std::string::npos;
    if (v6) {
        inet_pton(AF_INET6, src, r.srcAddr.data());
        inet_pton(AF_INET6, dst, r.dstAddr.data());
    } else {
        r.srcAddr[10] = r.srcAddr[11] = r.dstAddr[10] = r.dstAddr[11] = 0xFF;
        inet_pton(AF_INET, src, r.srcAddr.data() + 12);
        inet_pton(AF_INET, dst, r.dstAddr.data() + 12);
    }
    r.ipVersion = v6 ? 6 : 4;
    r.srcPort = sport;
    r.dstPort = dport;
    r.proto = proto;
    r.timeFirst = 1'700'000'000'001'289'368ULL;
    r.timeLast = 1'700'000'012'500'000'999ULL;
    r.packets = {12, 10};
    r.bytes = {1'500, 98'765};
    r.tcpFlags = {0x1B, 0x13};
    r.endReason = EndReason::InactiveTimeout;
    return r;
}

std::vector<FlowRecord> sampleRecords() {
    std::vector<FlowRecord> rs;
    rs.push_back(record("192.0.2.1", 40000, "198.51.100.2", 443, 6));
    rs.push_back(record("2001:db8:1234:5678:9abc:def0:1234:5678", 5353,
                        "ff02:ffff:ffff:ffff:ffff:ffff:ffff:fffb", 65535, 17));
    rs.push_back(record("10.0.0.1", 0, "10.0.0.2", 0, 1));
    rs.back().endReason = EndReason::LackOfResources;
    FlowRecord big = record("255.255.255.255", 65535, "1.1.1.1", 53, 6);
    big.packets = {4'000'000'000U, 0};
    big.bytes = {9'999'999'999'999ULL, 0};
    rs.push_back(big);
    rs.push_back(record("2001:db8::1", 1, "2001:db8::2", 2, 132));
    rs.push_back(record("192.0.2.9", 1, "192.0.2.10", 2, 253));
    return rs;
}

std::vector<std::string> render(const std::string& options, const std::vector<FlowRecord>& rs) {
    const fs::path path = scratchFile("out.txt");
    {
        auto out = Registry::instance().createAs<TextOutput>(
            PluginKind::Output, "text;file=" + path.string() + options, "-o");
        out->write(rs);
        out->flush();
        EXPECT_EQ(out->stats().records, rs.size());
    }
    return readLines(path);
}

TEST(TextOutput, HeaderThenOneLinePerRecord) {
    const auto lines = render("", sampleRecords());
    ASSERT_EQ(lines.size(), 1 + sampleRecords().size());
    EXPECT_EQ(tokens(lines[0]).front().text, "time_first");
    EXPECT_EQ(tokens(lines[0]).back().text, "end_reason");
}

/// Text columns start where their title starts; number columns end where their title ends.
void expectAligned(const std::vector<std::string>& lines) {
    ASSERT_FALSE(lines.empty());
    const std::vector<Token> head = tokens(lines[0]);
    ASSERT_EQ(head.size(), 12U);
    const std::set<std::string> rightAligned = {"packets", "bytes", "packets_rev", "bytes_rev"};
    for (std::size_t l = 1; l < lines.size(); ++l) {
        const std::vector<Token> row = tokens(lines[l]);
        ASSERT_EQ(row.size(), head.size()) << lines[l];
        for (std::size_t c = 0; c < head.size(); ++c) {
            if (rightAligned.count(head[c].text) != 0) {
                EXPECT_EQ(row[c].end, head[c].end) << head[c].text << " in: " << lines[l];
            } else {
                EXPECT_EQ(row[c].begin, head[c].begin) << head[c].text << " in: " << lines[l];
            }
        }
    }
}

TEST(TextOutput, ColumnsAreAlignedOnEveryLine) {
    expectAligned(render("", sampleRecords()));
    expectAligned(render(";precision=ns", sampleRecords()));
}

TEST(TextOutput, ShowsValuesInReadableForm) {
    const auto lines = render("", sampleRecords());
    const std::vector<Token> v4 = tokens(lines[1]);
    EXPECT_EQ(v4[0].text, "2023-11-14T22:13:20.001289Z");  // microseconds by default, truncated
    EXPECT_EQ(v4[1].text, "2023-11-14T22:13:32.500000Z");
    EXPECT_EQ(v4[2].text, "tcp");
    EXPECT_EQ(v4[3].text, "192.0.2.1:40000");
    EXPECT_EQ(v4[4].text, "198.51.100.2:443");
    EXPECT_EQ(v4[5].text, "12");
    EXPECT_EQ(v4[6].text, "1500");
    EXPECT_EQ(v4[7].text, "10");
    EXPECT_EQ(v4[8].text, "98765");
    EXPECT_EQ(v4[9].text, "...AP.SF");
    EXPECT_EQ(v4[10].text, "...A..SF");
    EXPECT_EQ(v4[11].text, "inactive");
    const std::vector<Token> icmp = tokens(lines[3]);
    EXPECT_EQ(icmp[2].text, "icmp");
    EXPECT_EQ(icmp[9].text, "-");  // no TCP flags outside TCP
    EXPECT_EQ(icmp[11].text, "resources");
    EXPECT_EQ(tokens(lines[6])[2].text, "253");  // protocols without a short name as numbers
}

TEST(TextOutput, Ipv6EndpointsUseBracketForm) {
    const auto lines = render("", sampleRecords());
    const std::vector<Token> v6 = tokens(lines[2]);
    EXPECT_EQ(v6[2].text, "udp");
    EXPECT_EQ(v6[3].text, "[2001:db8:1234:5678:9abc:def0:1234:5678]:5353");
    EXPECT_EQ(v6[4].text, "[ff02:ffff:ffff:ffff:ffff:ffff:ffff:fffb]:65535");
    EXPECT_EQ(tokens(lines[5])[3].text, "[2001:db8::1]:1");
}

TEST(TextOutput, HeaderCanBeTurnedOff) {
    const auto lines = render(";header=false", sampleRecords());
    ASSERT_EQ(lines.size(), sampleRecords().size());
    EXPECT_EQ(tokens(lines[0])[3].text, "192.0.2.1:40000");
}

TEST(TextOutput, PrecisionSelectsFractionDigits) {
    EXPECT_EQ(tokens(render(";precision=ns", sampleRecords())[1])[0].text,
              "2023-11-14T22:13:20.001289368Z");
    EXPECT_EQ(tokens(render(";P=ms", sampleRecords())[1])[0].text, "2023-11-14T22:13:20.001Z");
    EXPECT_EQ(tokens(render(";precision=s", sampleRecords())[1])[0].text, "2023-11-14T22:13:20Z");
}

TEST(TextOutput, NarrowKeepsIpv4LinesAlignedAndShorter) {
    std::vector<FlowRecord> rs;
    rs.push_back(record("255.255.255.255", 65535, "255.255.255.254", 65535, 6));
    rs.push_back(record("1.2.3.4", 5, "6.7.8.9", 10, 17));
    const auto narrow = render(";narrow", rs);
    ASSERT_EQ(narrow.size(), 3U);
    expectAligned(narrow);
    EXPECT_LT(narrow[1].size(), render("", rs)[1].size());
}

TEST(TextOutput, UnwritablePathIsAConfigErrorNamingTheFileOption) {
    try {
        Registry::instance().createAs<TextOutput>(PluginKind::Output, "text;f=/nonexistent-dir/x",
                                                  "-o");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "file");
    }
}

TEST(TextOutput, FullDeviceIsARuntimeErrorOnFlush) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    auto out =
        Registry::instance().createAs<TextOutput>(PluginKind::Output, "text;file=/dev/full", "-o");
    out->write(sampleRecords());
    EXPECT_THROW(out->flush(), RuntimeError);
}

}  // namespace
}  // namespace rowprobe::output
