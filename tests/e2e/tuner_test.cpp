// The offline tuner (tools/tuner, rowprobe-tuner) end to end:
//  * the same seed gives the same configuration file, whatever the number of threads;
//  * the file loads in rowprobe (`policy=adaptive;adaptive-config=F`), and the tuner's model of
//    the `adaptive` table agrees with the real table counter for counter (--verify);
//  * the lab evaluates the tuned file and finds the fitness the tuner wrote into it;
//  * a compact trace (--extract) gives the same result as the capture it came from;
//  * bad options stop the tool with exit code 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

fs::path tunerBinary() { return fs::path(ROWPROBE_BUILD_DIR) / "tools/tuner/rowprobe-tuner"; }
fs::path labBinary() { return fs::path(ROWPROBE_BUILD_DIR) / "tools/policylab/rowprobe-policylab"; }

CommandResult tune(std::vector<std::string> args) {
    args.insert(args.begin(), tunerBinary().string());
    return runCommand(args, 300);
}

/// The configuration lines of a tuner output (comments dropped: they name the input file).
std::string configBody(const fs::path& file) {
    std::string out;
    for (const auto& line : [&] {
             std::vector<std::string> lines;
             std::string text = readFile(file), l;
             for (char c : text) {
                 if (c == '\n') {
                     lines.push_back(l);
                     l.clear();
                 } else {
                     l += c;
                 }
             }
             return lines;
         }()) {
        if (!line.empty() && line[0] != '#') out += line + "\n";
    }
    return out;
}

/// Tool output without the lines naming files ("trace PATH: ...", "wrote PATH").
std::string withoutPaths(const std::string& text) {
    std::string out, line;
    for (char c : text) {
        if (c != '\n') {
            line += c;
            continue;
        }
        if (line.rfind("trace ", 0) != 0 && line.rfind("wrote ", 0) != 0) out += line + "\n";
        line.clear();
    }
    return out;
}

/// One temporary directory for the whole test program.
const fs::path& scratch() {
    static const fs::path dir = tempDir();
    return dir;
}

/// 40 UDP flows with skewed rates over 4 s: 4 heavy flows send every 10 ms, the others every
/// 200 ms. Written once.
fs::path skewedTrace() {
    const fs::path path = scratch() / "skewed.pcap";
    if (fs::exists(path)) return path;
    PcapWriter w(path);
    const std::uint64_t t0 = 1'700'000'000ULL * 1'000'000'000ULL;
    for (std::uint64_t ms = 0; ms < 4000; ms += 10) {
        for (int f = 0; f < 40; ++f) {
            const bool heavy = f < 4;
            if (!heavy && (ms + 10 * static_cast<std::uint64_t>(f)) % 200 != 0) continue;
            w.write(
                t0 + ms * 1'000'000 + static_cast<std::uint64_t>(f) * 1000,
                ethIpv4Udp("10.0.0.1", static_cast<std::uint16_t>(2000 + f), "10.0.0.9", 53, 30));
        }
    }
    return path;
}

TEST(Tuner, SameSeedGivesTheSameConfigurationWhateverTheThreadCount) {
    const fs::path a = scratch() / "tuned-a.cfg";
    const fs::path b = scratch() / "tuned-b.cfg";
    for (const char* algorithm : {"ga", "es", "sa"}) {
        const CommandResult r1 =
            tune({skewedTrace().string(), "-s", "4", "-l", "16", "-a", algorithm, "-g", "6",
                  "--seed", "7", "-j", "1", "-o", a.string(), "-q"});
        const CommandResult r2 =
            tune({skewedTrace().string(), "-s", "4", "-l", "16", "-a", algorithm, "-g", "6",
                  "--seed", "7", "-j", "2", "-o", b.string(), "-q"});
        ASSERT_EQ(r1.exitCode, 0) << r1.err;
        ASSERT_EQ(r2.exitCode, 0) << r2.err;
        EXPECT_EQ(readFile(a), readFile(b)) << algorithm;
        EXPECT_EQ(withoutPaths(r1.out), withoutPaths(r2.out)) << algorithm;
        EXPECT_NE(configBody(a).find("rowprobe-adaptive 1"), std::string::npos);
    }
}

TEST(Tuner, TunedFileLoadsInRowprobeAndTheModelMatchesTheRealTable) {
    const fs::path cfg = scratch() / "tuned-verify.cfg";
    const CommandResult r = tune({skewedTrace().string(), "-s", "4", "-l", "8", "-g", "8", "--seed",
                                  "3", "-o", cfg.string(), "--verify", "-q"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("verify lru-equivalent: table"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("verify tuned: table"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("!= model"), std::string::npos) << r.out;
    const CommandResult run =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + skewedTrace().string(), "-s",
                    "cache;size=4;line=8;seed=1;policy=adaptive;adaptive-config=" + cfg.string(),
                    "-o", "text;file=/dev/null", "-Q"},
                   120);
    EXPECT_EQ(run.exitCode, 0) << run.err;
    // The same file for the wrong row length is refused, naming the file.
    const CommandResult wrong =
        runCommand({rowprobeBinary().string(), "-i", "pcap;file=" + skewedTrace().string(), "-s",
                    "cache;size=4;line=16;policy=adaptive;adaptive-config=" + cfg.string(), "-o",
                    "text;file=/dev/null", "-Q"},
                   120);
    EXPECT_EQ(wrong.exitCode, 2);
    EXPECT_NE(wrong.err.find(cfg.filename().string()), std::string::npos) << wrong.err;
}

/// The value of `key` in a configuration file ("fitness 123" → "123").
std::string valueOf(const fs::path& cfg, const std::string& key) {
    const std::string body = configBody(cfg);
    const auto at = body.find("\n" + key + " ");
    if (at == std::string::npos) return {};
    const auto start = at + key.size() + 2;
    return body.substr(start, body.find('\n', start) - start);
}

TEST(Tuner, OnTheSynthTraceItBeatsLruAndTheLabMeasuresWhatItWrote) {
    const fs::path pcap = synth10kPcap();
    if (pcap.empty()) GTEST_SKIP() << "synth_10k_flows.pcap.gz not available";
    const fs::path cfg = scratch() / "tuned-synth.cfg";
    const CommandResult r =
        tune({pcap.string(), "-s", "10", "-g", "8", "--seed", "1", "-o", cfg.string(), "--verify"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("!= model"), std::string::npos) << r.out;
    const std::string fitness = valueOf(cfg, "fitness");
    ASSERT_FALSE(fitness.empty()) << readFile(cfg);

    const fs::path csv = scratch() / "tuned-synth.csv";
    const CommandResult lab =
        runCommand({labBinary().string(), pcap.string(), "-p", "lru", "-s", "10", "--variant",
                    "tuned=adaptive;adaptive-config=" + cfg.string(), "--csv", csv.string(), "-q"},
                   300);
    ASSERT_EQ(lab.exitCode, 0) << lab.err;
    std::uint64_t lruEvicted = 0, tunedEvicted = 0;
    const auto table = parseCsv(readFile(csv));
    ASSERT_GE(table.size(), 3U);
    for (std::size_t i = 1; i < table.size(); ++i) {
        if (table[i][0] == "lru") lruEvicted = std::stoull(table[i][8]);  // not_empty
        if (table[i][0] == "tuned") tunedEvicted = std::stoull(table[i][8]);
    }
    EXPECT_EQ(std::to_string(tunedEvicted), fitness);
    EXPECT_LT(tunedEvicted, lruEvicted);
}

TEST(Tuner, CompactTraceGivesTheSameResultAsItsCapture) {
    const fs::path trace = scratch() / "skewed.rptrace";
    const CommandResult x = tune({skewedTrace().string(), "--extract", trace.string()});
    ASSERT_EQ(x.exitCode, 0) << x.err;
    const auto packets = fs::file_size(trace);
    EXPECT_EQ((packets - 64) % 16, 0U);  // 64-byte header, 16 bytes per packet
    const fs::path a = scratch() / "from-capture.cfg";
    const fs::path b = scratch() / "from-compact.cfg";
    const CommandResult r1 =
        tune({skewedTrace().string(), "-s", "4", "-l", "8", "-g", "5", "-o", a.string(), "-q"});
    const CommandResult r2 =
        tune({trace.string(), "-s", "4", "-l", "8", "-g", "5", "-o", b.string(), "-q"});
    ASSERT_EQ(r1.exitCode, 0) << r1.err;
    ASSERT_EQ(r2.exitCode, 0) << r2.err;
    EXPECT_EQ(configBody(a), configBody(b));
}

TEST(Tuner, BadOptionsStopWithExitCodeTwo) {
    auto fails = [](std::vector<std::string> args, const std::string& expect) {
        const CommandResult r = tune(std::move(args));
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    };
    fails({skewedTrace().string(), "-a", "gradient"}, "algorithm");
    fails({skewedTrace().string(), "-f", "speed"}, "fitness");
    fails({skewedTrace().string(), "-l", "12"}, "line");
    fails({skewedTrace().string(), "--classifier", "j99"}, "classifier");
    fails({}, "no capture");
}

}  // namespace
}  // namespace rowprobe::test
