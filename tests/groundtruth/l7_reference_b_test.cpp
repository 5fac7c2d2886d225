// Acceptance (issue 22, part b): the vlan, ntp, rtsp, nettisa and ssadetector plugins reproduce
// ipfixprobe 5.7's functional-test reference outputs end to end (pcap input, the flow table's
// hooks and flushes, the json output), record for record and field for field; the harness is
// plugin_reference.hpp. Deliberate differences are named per case with the reason.
#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>

#include "plugin_reference.hpp"

namespace rowprobe::test {
namespace {

// Floats within 1e-4 relative: ipfixprobe's logger prints them "%f", our JSON the shortest
// round-trip form; the arithmetic is the same (process/nettisa/nettisa_stats.hpp).
TEST(PluginReference, NettisaOfMixedPcap) {
    expectPluginReference(
        {.plugin = "nettisa", .pcap = "mixed.pcap", .records = 20, .floatRelTol = 1e-4});
}

// ipfixprobe leaves the root delay and dispersion at 9 and misreads timestamps whose bytes are
// below 0x10 (process/ntp/README.md); `format=ipfixprobe` reproduces that byte for byte.
TEST(PluginReference, NtpOfNtpPcap) {
    expectPluginReference({.plugin = "ntp",
                           .pcap = "ntp.pcap",
                           .records = 56,
                           .processArg = "ntp;format=ipfixprobe"});
}

// ntp's default (RFC 5905) values against an independent decoder: tshark's NTP dissector, packet
// by packet (each NTP packet is a flow of its own): root delay and dispersion (tshark prints
// the raw 16.16 values), reference id, and the four timestamps to the microsecond.
TEST(NtpIndependent, RfcValuesMatchTshark) {
    const auto pcap = testdataDir() / "ipfixprobe" / "inputs" / "ntp.pcap";
    if (!std::filesystem::exists(pcap)) GTEST_SKIP() << "no " << pcap;
    ROWPROBE_REQUIRE_BINARY();
    const CommandResult ts = runCommand({"tshark",
                                         "-r",
                                         pcap.string(),
                                         "-Y",
                                         "ntp",
                                         "-T",
                                         "fields",
                                         "-E",
                                         "separator=|",
                                         "-e",
                                         "frame.time_epoch",
                                         "-e",
                                         "ntp.stratum",
                                         "-e",
                                         "ntp.rootdelay",
                                         "-e",
                                         "ntp.rootdispersion",
                                         "-e",
                                         "ntp.refid",
                                         "-e",
                                         "ntp.reftime",
                                         "-e",
                                         "ntp.org",
                                         "-e",
                                         "ntp.rec",
                                         "-e",
                                         "ntp.xmt"});
    if (ts.exitCode != 0) GTEST_SKIP() << "tshark not available: " << ts.err;

    // "Apr 10, 2016 18:54:29.121701769 UTC" -> NTP seconds and microseconds (rounded); NULL = 0
    const auto ntpMicros = [](const std::string& text) -> long double {
        if (text.empty() || text == "NULL") return 0;
        std::tm tm{};
        std::istringstream in(text);
        in >> std::get_time(&tm, "%b %d, %Y %H:%M:%S");
        const auto dot = text.find('.');
        const std::string ns = text.substr(dot + 1, text.find(' ', dot) - dot - 1);
        return static_cast<long double>(timegm(&tm) + 2208988800LL) * 1e6L +
               std::stold("0." + ns) * 1e6L;
    };
    const auto ourMicros = [](const std::string& text) -> long double {
        const auto dot = text.find('.');
        return std::stold(text.substr(0, dot)) * 1e6L + std::stold(text.substr(dot + 1));
    };

    const ProbeRun run = runProbe(pcap, {"-p", "ntp"});
    ASSERT_EQ(run.result.exitCode, 0) << run.commandLine << run.result.err;
    std::map<std::string, JsonObject> byTime;  // µs of the packet -> our record
    for (const auto& f : run.flows) {
        if (f.count("ntp_sent") != 0)
            byTime[std::to_string(*parseTimeNs(flowValue(f, "time_first")) / 1000)] = f;
    }
    std::size_t checked = 0;
    std::istringstream lines(ts.out);
    for (std::string line; std::getline(lines, line);) {
        const auto c = detail::splitOn(line, '|');
        ASSERT_EQ(c.size(), 9U) << line;
        const std::string us = std::to_string(std::llround(std::stold(c[0]) * 1e6L));
        const auto it = byTime.find(us);
        ASSERT_NE(it, byTime.end()) << "no ntp record of ours for the packet at " << c[0];
        const JsonObject& f = it->second;
        EXPECT_EQ(flowValue(f, "ntp_stratum"), c[1]) << line;
        EXPECT_EQ(flowValue(f, "ntp_delay"), c[2]) << line;
        EXPECT_EQ(flowValue(f, "ntp_dispersion"), c[3]) << line;
        const unsigned long id = std::stoul(c[4], nullptr, 16);
        const std::string dotted = std::to_string(id >> 24) + "." +
                                   std::to_string((id >> 16) & 255) + "." +
                                   std::to_string((id >> 8) & 255) + "." + std::to_string(id & 255);
        if (c[1] != "0") {
            EXPECT_EQ(flowValue(f, "ntp_ref_id"), dotted) << line;
        }
        const std::pair<const char*, const std::string&> stamps[] = {
            {"ntp_ref", c[5]}, {"ntp_orig", c[6]}, {"ntp_recv", c[7]}, {"ntp_sent", c[8]}};
        for (const auto& [key, theirs] : stamps) {
            EXPECT_LE(std::abs(ourMicros(flowValue(f, key)) - ntpMicros(theirs)), 1.0L)
                << key << ": ours " << flowValue(f, key) << ", tshark " << theirs;
        }
        ++checked;
    }
    EXPECT_EQ(checked, 56U);
}

TEST(PluginReference, RtspOfRtspPcap) {
    expectPluginReference({.plugin = "rtsp", .pcap = "rtsp.pcap", .records = 3});
}

TEST(PluginReference, SsaDetectorOfOvpnPcap) {
    expectPluginReference({.plugin = "ssadetector", .pcap = "ovpn.pcap", .records = 1});
}

TEST(PluginReference, VlanOfVlanPcap) {
    expectPluginReference({.plugin = "vlan", .pcap = "vlan.pcap", .records = 3});
}

}  // namespace
}  // namespace rowprobe::test
