// The ndpi plugin through the real pipeline on the project's own captures (pcaps/): one and
// two queues, expiry inline and on the export thread (which then has its own detection
// module): every flow is labelled, the labels do not depend on the mode, nDPI's flow memory is
// back to 0 at exit and the module memory is reported. Its configuration errors end start-up
// with exit code 2. Runs in the ASan+UBSan and TSan stages of scripts/test.sh (label e2e), so
// nDPI itself runs under the sanitizers there.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {
namespace {

struct NdpiRun {
    std::vector<std::string> labels;  ///< "5-tuple app", sorted
    JsonObject stats;
};

NdpiRun run(const std::string& pcap, const std::string& storage, const std::string& queues) {
    const auto dir = tempDir();
    const CommandResult r =
        runCommand({rowprobeBinary().string(), "-i",
                    "pcap;file=" + (sourceDir() / "pcaps" / pcap).string(), "-q", queues, "-s",
                    storage, "-p", "ndpi", "-o", "json;file=" + (dir / "flows.json").string(),
                    "--stats-json", (dir / "stats.json").string(), "-Q"},
                   300);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    NdpiRun out;
    for (const JsonObject& f : parseJsonLines(readFile(dir / "flows.json"))) {
        const auto get = [&f](const std::string& k) {
            const auto it = f.find(k);
            return it == f.end() ? std::string("?") : it->second;
        };
        out.labels.push_back(get("src_ip") + ':' + get("src_port") + '>' + get("dst_ip") + ':' +
                             get("dst_port") + '/' + get("proto") + ' ' + get("time_first") + ' ' +
                             get("ndpi_app"));
    }
    std::sort(out.labels.begin(), out.labels.end());
    out.stats = parseJsonFlat(readFile(dir / "stats.json"));
    return out;
}

std::uint64_t stat(const NdpiRun& r, const std::string& k) {
    const auto it = r.stats.find(k);
    return it == r.stats.end() ? ~std::uint64_t{0} : std::stoull(it->second);
}

TEST(NdpiE2e, EveryFlowIsLabelledTheSameInEveryModeAndItsMemoryIsFreed) {
    if (!std::filesystem::exists(rowprobeBinary())) GTEST_SKIP() << "rowprobe not built";
    for (const std::string pcap : {"mixed.pcap", "tunnels.pcap", "malformed.pcap"}) {
        const NdpiRun base = run(pcap, "cache;seed=1", "1");
        ASSERT_FALSE(base.labels.empty()) << pcap;
        for (const auto& l : base.labels) EXPECT_EQ(l.find(" ?"), std::string::npos) << l;
        EXPECT_EQ(stat(base, "total.cache.plugin_heap.live_bytes"), 0U) << pcap;
        EXPECT_EQ(stat(base, "total.cache.plugin_heap.live_allocations"), 0U) << pcap;
        EXPECT_GT(stat(base, "total.cache.plugin_heap.module_bytes"), 0U) << pcap;
        const NdpiRun threaded = run(pcap, "cache;seed=1;inactive=1;expiry=thread", "1");
        const NdpiRun inlineShort = run(pcap, "cache;seed=1;inactive=1", "1");
        EXPECT_EQ(threaded.labels, inlineShort.labels) << pcap << ": expiry=thread vs inline";
        EXPECT_EQ(stat(threaded, "total.cache.plugin_heap.live_bytes"), 0U) << pcap;
        const NdpiRun two = run(pcap, "cache;seed=1", "2");
        EXPECT_EQ(two.labels.size(), base.labels.size()) << pcap;
        EXPECT_EQ(stat(two, "total.cache.plugin_heap.live_bytes"), 0U) << pcap;
    }
}

/// An Ethernet + IPv4 + TCP frame with sequence number `seq` carrying `payload`.
std::vector<std::uint8_t> tcpFrame(const std::string& src, std::uint16_t sport,
                                   const std::string& dst, std::uint16_t dport, std::uint32_t seq,
                                   std::uint8_t flags, const std::string& payload) {
    std::vector<std::uint8_t> f = ethIpv4Tcp(src, sport, dst, dport, flags, payload.size());
    for (int i = 0; i < 4; ++i) f[38 + i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
    std::copy(payload.begin(), payload.end(), f.begin() + 54);
    return f;
}

// A BitTorrent handshake fills nDPI's BitTorrent cache; a second connection between the same
// ports is labelled from it on its 9th data segment, and nDPI 4.2 then runs BitTorrent's extra
// dissector on the next segments. One of them claims a 60-byte TCP header in 20 bytes: nDPI
// finds no TCP header in it, and the dissector read the ports through a NULL pointer (the
// program died). The segment is not given to nDPI; the flow keeps its label.
TEST(NdpiE2e, ASegmentWithACutHeaderAfterALabelFromTheBitTorrentCacheIsNotGivenToNdpi) {
    if (!std::filesystem::exists(rowprobeBinary())) GTEST_SKIP() << "rowprobe not built";
    const auto dir = tempDir();
    const std::string c = "192.168.7.2";
    const std::string s = "192.168.7.1";
    {
        PcapWriter w(dir / "bt.pcap");
        std::uint64_t t = 1'700'000'000'000'000'000ULL;
        const auto put = [&w, &t](const std::vector<std::uint8_t>& f) {
            w.write(t, f);
            t += 1'000'000;
        };
        std::string handshake =
            "\x13"
            "BitTorrent protocol";
        handshake.append(8, '\0');
        put(tcpFrame(c, 40000, s, 6881, 1, 0x02, ""));
        put(tcpFrame(s, 6881, c, 40000, 1, 0x12, ""));
        put(tcpFrame(c, 40000, s, 6881, 2, 0x18, handshake));
        put(tcpFrame(c, 40000, s, 6881, 30, 0x11, ""));
        t += 120'000'000'000ULL;  // the first connection is over and exported
        put(tcpFrame(c, 40001, s, 6881, 99, 0x02, ""));  // keeps the clock moving
        put(tcpFrame(c, 40000, s, 6881, 99, 0x02, ""));
        put(tcpFrame(s, 6881, c, 40000, 0, 0x12, ""));
        for (std::uint32_t i = 0; i < 9; ++i)
            put(tcpFrame(c, 40000, s, 6881, 100 + i * 8, 0x18, "\x01\x02\x03\x04zzzz"));
        auto cut = tcpFrame(c, 40000, s, 6881, 172, 0x18, "");
        cut[46] = 0xF0;
        for (int i = 0; i < 4; ++i) put(cut);
    }
    const CommandResult r =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + (dir / "bt.pcap").string(),
                    "-s", "cache;active=300;inactive=30", "-p", "ndpi", "-o",
                    "json;file=" + (dir / "flows.json").string(), "-Q"},
                   120);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::vector<std::string> labels;
    for (const JsonObject& f : parseJsonLines(readFile(dir / "flows.json")))
        if (f.at("src_port") == "40000" || f.at("dst_port") == "40000")
            labels.push_back(
                std::to_string(std::stoull(f.at("packets")) + std::stoull(f.at("packets_rev"))) +
                ' ' + f.at("ndpi_app"));
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, (std::vector<std::string>{"15 BitTorrent", "4 BitTorrent"}));
}

TEST(NdpiE2e, BadOptionsAndMissingFilesAreExitCode2NamingThem) {
    if (!std::filesystem::exists(rowprobeBinary())) GTEST_SKIP() << "rowprobe not built";
    const std::string pcap = (sourceDir() / "pcaps" / "mixed.pcap").string();
    const auto rp = [&pcap](const std::string& plugin) {
        return runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + pcap, "-p", plugin, "-o",
                           "json;file=/dev/null", "-Q"});
    };
    const CommandResult missing = rp("ndpi;categories=/nonexistent/cats.txt");
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("categories"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("/nonexistent/cats.txt"), std::string::npos) << missing.err;
    const CommandResult typo = rp("ndpi;packet=8");
    EXPECT_EQ(typo.exitCode, 2);
    EXPECT_NE(typo.err.find("did you mean 'packets'"), std::string::npos) << typo.err;
    const CommandResult range = rp("ndpi;packets=0");
    EXPECT_EQ(range.exitCode, 2) << range.err;
    const CommandResult guess = rp("ndpi;guess=maybe");
    EXPECT_EQ(guess.exitCode, 2) << guess.err;
}

}  // namespace
}  // namespace rowprobe::test
