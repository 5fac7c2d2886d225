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
#include "rowprobe/fields.hpp"
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

/// What a TextOutput wrote to its file, and the column geometry it announced.
struct Rendered {
    std::vector<std::string> lines;
    std::vector<TextColumn> columns;
    std::uint64_t bytes = 0;  ///< stats().bytes
};

Rendered renderFull(const std::string& options, const std::vector<FlowRecord>& rs) {
    const fs::path path = scratchFile("out.txt");
    Rendered out;
    {
        auto text = Registry::instance().createAs<TextOutput>(
            PluginKind::Output, "text;file=" + path.string() + options, "-o");
        text->write(rs);
        text->flush();
        EXPECT_EQ(text->stats().records, rs.size());
        out.bytes = text->stats().bytes;
        const auto cols = text->layout().columns();
        out.columns.assign(cols.begin(), cols.end());
    }
    out.lines = readLines(path);
    return out;
}

std::vector<std::string> render(const std::string& options, const std::vector<FlowRecord>& rs) {
    return renderFull(options, rs).lines;
}

std::vector<std::string> titles(const std::string& header) {
    std::vector<std::string> out;
    for (const Token& t : tokens(header)) out.push_back(t.text);
    return out;
}

TEST(TextOutput, HeaderThenOneLinePerRecord) {
    const auto lines = render("", sampleRecords());
    ASSERT_EQ(lines.size(), 1 + sampleRecords().size());
    EXPECT_EQ(tokens(lines[0]).front().text, "time_first");
    EXPECT_EQ(tokens(lines[0]).back().text, "end_reason");
}

TEST(TextOutput, DefaultColumnsAreTimesProtoEndpointsCountersFlagsAndEndReason) {
    const std::vector<std::string> expected = {"time_first",      "time_last",       "proto",
                                               "src_ip:src_port", "dst_ip:dst_port", "packets",
                                               "bytes",           "packets_rev",     "bytes_rev",
                                               "tcp_flags",       "tcp_flags_rev",   "end_reason"};
    EXPECT_EQ(titles(render("", sampleRecords())[0]), expected);
}

/// Every line puts each value in its column: text starts where the column (and its title)
/// starts, numbers end where it ends; the columns come from the layout, not from the lines.
void expectAligned(const Rendered& out) {
    ASSERT_FALSE(out.lines.empty());
    const std::vector<Token> head = tokens(out.lines[0]);
    ASSERT_EQ(head.size(), out.columns.size());
    for (std::size_t l = 0; l < out.lines.size(); ++l) {
        const std::vector<Token> row = tokens(out.lines[l]);
        ASSERT_EQ(row.size(), out.columns.size()) << out.lines[l];
        for (std::size_t c = 0; c < row.size(); ++c) {
            const TextColumn& col = out.columns[c];
            if (col.right) {
                EXPECT_EQ(row[c].end, col.start + col.width)
                    << col.title << " in: " << out.lines[l];
            } else {
                EXPECT_EQ(row[c].begin, col.start) << col.title << " in: " << out.lines[l];
            }
            EXPECT_LE(row[c].end - row[c].begin, col.width) << col.title << " in: " << out.lines[l];
        }
        EXPECT_NE(out.lines[l].back(), ' ') << "trailing blank: " << out.lines[l];
    }
}

TEST(TextOutput, ColumnsAreAlignedOnEveryLine) {
    expectAligned(renderFull("", sampleRecords()));
    expectAligned(renderFull(";precision=ns", sampleRecords()));
    expectAligned(renderFull(";precision=s", sampleRecords()));
}

TEST(TextOutput, EveryFieldAlignsWithIpv4AndLongestIpv6Values) {
    std::string all;
    for (const FieldSpec& f : coreFields()) {
        if (f.origin == FieldOrigin::Record) all += (all.empty() ? "" : ",") + std::string(f.name);
    }
    std::vector<FlowRecord> rs = sampleRecords();
    rs[0].srcMac = {0xe4, 0x98, 0xd6, 0x1f, 0xbd, 0x14};
    rs[0].vlan = 4095;
    rs[0].ttl = {255, 255};
    rs[0].icmpTypeCode = {65535, 65535};
    rs[0].queue = 255;
    const Rendered out = renderFull(";fields=" + all, rs);
    EXPECT_EQ(out.columns.size(), 27U);  // src_ip and src_port are not adjacent here
    expectAligned(out);
    const auto cell = [&](std::size_t line, const std::string& title) {
        const std::vector<Token> row = tokens(out.lines[line]);
        for (std::size_t c = 0; c < out.columns.size(); ++c) {
            if (out.columns[c].title == title) return row.at(c).text;
        }
        return "no column " + title;
    };
    // each numeric type's maximum fits its column
    EXPECT_EQ(cell(1, "vlan"), "4095");
    EXPECT_EQ(cell(1, "ttl_rev"), "255");
    EXPECT_EQ(cell(1, "icmp_type_code"), "65535");
    EXPECT_EQ(cell(1, "src_mac"), "e4:98:d6:1f:bd:14");
    EXPECT_EQ(cell(1, "queue"), "255");
    EXPECT_EQ(cell(1, "ip_version"), "4");
    EXPECT_EQ(cell(1, "src_ip"), "192.0.2.1");
    EXPECT_EQ(cell(2, "src_ip"), "2001:db8:1234:5678:9abc:def0:1234:5678");
    EXPECT_EQ(cell(2, "dst_ip"), "ff02:ffff:ffff:ffff:ffff:ffff:ffff:fffb");
    EXPECT_EQ(cell(2, "ip_version"), "6");
}

TEST(TextOutput, OverlongValuePushesItsLineOnlyUntilTheNextPadding) {
    std::vector<FlowRecord> rs = sampleRecords();
    rs[0].bytes = {123'456'789'012'345'678ULL, 7};  // 18 digits in a 13-wide column
    const Rendered out = renderFull("", rs);
    const std::vector<Token> head = tokens(out.lines[0]);
    const std::vector<Token> row = tokens(out.lines[1]);
    ASSERT_EQ(row.size(), head.size());
    EXPECT_EQ(row[6].text, "123456789012345678");
    EXPECT_GT(row[6].begin, row[5].end);  // still a blank between the cells
    for (std::size_t c = 7; c < head.size(); ++c) {
        if (c == 7 || c == 8) {
            EXPECT_EQ(row[c].end, head[c].end) << head[c].text;  // right-aligned numbers
        } else {
            EXPECT_EQ(row[c].begin, head[c].begin) << head[c].text;
        }
    }
}

TEST(TextOutput, FieldsSelectsColumnsInTheGivenOrder) {
    const Rendered out =
        renderFull(";fields=dst_port,bytes_rev,src_ip,ip_version,end_reason", sampleRecords());
    EXPECT_EQ(titles(out.lines[0]), (std::vector<std::string>{"dst_port", "bytes_rev", "src_ip",
                                                              "ip_version", "end_reason"}));
    expectAligned(out);
    EXPECT_EQ(titles(out.lines[1]),
              (std::vector<std::string>{"443", "98765", "192.0.2.1", "4", "inactive"}));
    // a bare address column has no brackets for IPv6
    EXPECT_EQ(tokens(out.lines[2])[2].text, "2001:db8:1234:5678:9abc:def0:1234:5678");
    EXPECT_EQ(tokens(out.lines[5])[2].text, "2001:db8::1");
}

TEST(TextOutput, AddressFollowedByItsPortIsOneColumn) {
    EXPECT_EQ(titles(render(";F=dst_ip,dst_port,src_ip,src_port", sampleRecords())[0]),
              (std::vector<std::string>{"dst_ip:dst_port", "src_ip:src_port"}));
    // any other order keeps them apart
    const auto apart = render(";F=src_port,src_ip,dst_ip,src_port", sampleRecords());
    EXPECT_EQ(titles(apart[0]),
              (std::vector<std::string>{"src_port", "src_ip", "dst_ip", "src_port"}));
    EXPECT_EQ(titles(apart[2]),
              (std::vector<std::string>{"5353", "2001:db8:1234:5678:9abc:def0:1234:5678",
                                        "ff02:ffff:ffff:ffff:ffff:ffff:ffff:fffb", "5353"}));
}

TEST(TextOutput, UnknownFieldIsAConfigErrorWithASuggestion) {
    const fs::path path = scratchFile("keep.txt");
    std::ofstream(path) << "previous content\n";
    for (const std::string& bad :
         std::vector<std::string>{"src_ip,byts", "src_ip,", "dir_bit_field", "odid"}) {
        try {
            Registry::instance().createAs<TextOutput>(
                PluginKind::Output, "text;file=" + path.string() + ";fields=" + bad, "-o");
            ADD_FAILURE() << "no error for " << bad;
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.details().option, "fields") << bad;
            EXPECT_NE(std::string(e.what()).find("unknown field"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(readLines(path), std::vector<std::string>{"previous content"});  // not truncated
    try {
        Registry::instance().createAs<TextOutput>(PluginKind::Output, "text;F=src_ip,byts", "-o");
        ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find("did you mean 'bytes'"), std::string::npos) << e.render();
    }
}

TEST(TextOutput, CommandLineWritesStdoutByDefaultAndExitsTwoOnAnUnknownField) {
    const fs::path pcap = test::sourceDir() / "pcaps" / "demo.pcap";
    ROWPROBE_REQUIRE_FILE(pcap);
    const std::string bin = test::rowprobeBinary().string();
    const std::string in = "pcap;file=" + pcap.string();
    const fs::path json = scratchFile("demo.json");
    const auto jsonRun = test::runCommand(
        {bin, "-i", in, "-s", "cache;seed=1", "-o", "json;file=" + json.string(), "-Q"});
    ASSERT_EQ(jsonRun.exitCode, 0) << jsonRun.err;
    const std::size_t flows = readLines(json).size();
    ASSERT_GT(flows, 0U);

    const auto text = test::runCommand({bin, "-i", in, "-s", "cache;seed=1", "-Q"});
    ASSERT_EQ(text.exitCode, 0) << text.err;
    std::istringstream lines(text.out);
    std::vector<std::string> stdoutLines;
    for (std::string line; std::getline(lines, line);) stdoutLines.push_back(line);
    ASSERT_EQ(stdoutLines.size(), 1 + flows);  // header + one line per json record
    EXPECT_EQ(tokens(stdoutLines[0])[3].text, "src_ip:src_port");

    const fs::path file = scratchFile("demo.txt");
    const auto toFile = test::runCommand(
        {bin, "-i", in, "-s", "cache;seed=1", "-o", "text;file=" + file.string(), "-Q"});
    ASSERT_EQ(toFile.exitCode, 0) << toFile.err;
    EXPECT_EQ(toFile.out, "");
    EXPECT_EQ(test::readFile(file), text.out);  // same bytes on stdout and in a file

    const auto bad = test::runCommand({bin, "-i", in, "-o", "text;fields=src_ip,byts"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("output 'text': option 'fields': unknown field 'byts'"),
              std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find("did you mean 'bytes'"), std::string::npos) << bad.err;
}

TEST(TextOutput, FileHoldsExactlyTheCountedBytes) {
    const Rendered out = renderFull("", sampleRecords());
    std::uint64_t size = 0;
    for (const std::string& l : out.lines) size += l.size() + 1;
    EXPECT_EQ(fs::file_size(scratchFile("out.txt")), size);
    EXPECT_EQ(out.bytes, size - (out.lines[0].size() + 1));  // stats count the records' bytes
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
    const Rendered narrow = renderFull(";narrow", rs);
    ASSERT_EQ(narrow.lines.size(), 3U);
    expectAligned(narrow);
    EXPECT_LT(narrow.lines[1].size(), render("", rs)[1].size());
}

// `rowprobe ... | head`: once the reader of standard output is gone, rowprobe ends like any
// filter (SIGPIPE, status 141 in the shell) instead of reporting an I/O error.
TEST(TextOutput, ClosedStdoutPipeEndsQuietlyLikeAFilter) {
    const fs::path err = scratchFile("pipe.err");
    const auto r = test::runCommand(
        {"bash", "-c",
         "\"$0\" -i 'gen;pattern=netscan;packets=300000' -Q 2>\"$1\" | head -n 2 >/dev/null; "
         "echo ${PIPESTATUS[0]}",
         test::rowprobeBinary().string(), err.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, "141\n");
    EXPECT_EQ(test::readFile(err), "");
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
