// The json and text outputs' formatting helpers (output/common/parallel_format.hpp): a batch
// split over several threads writes the bytes one thread writes, in the same order, and counts
// the same records; OutputFile::appendRecords, which hands a helper's text to the file, counts
// and cuts back what a failed write left as a buffer write does.
#include "output/common/parallel_format.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_plugins.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::output {
namespace {

namespace fs = std::filesystem;
using test::plugins::FakePlugin;
using test::plugins::Instances;

/// A file in a directory of this test process's own, removed when it exits.
fs::path scratchFile(const std::string& name) {
    static const fs::path dir = test::tempDir();
    return dir / name;
}

std::string slurp(const fs::path& path) { return test::readFile(path); }

std::size_t countLines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

FlowRecord record(std::uint32_t i) {
    FlowRecord r;
    r.srcAddr[10] = r.srcAddr[11] = r.dstAddr[10] = r.dstAddr[11] = 0xFF;
    inet_pton(AF_INET, "192.0.2.10", r.srcAddr.data() + 12);
    inet_pton(AF_INET, "198.51.100.7", r.dstAddr.data() + 12);
    r.timeFirst = 1'700'000'000'000'000'000ULL + i * 1'000'003ULL;
    r.timeLast = r.timeFirst + 5'000'000'000ULL;
    r.packets = {i, i / 3};
    r.bytes = {std::uint64_t{i} * 1500, i};
    r.srcPort = static_cast<std::uint16_t>(i);
    r.dstPort = 443;
    r.proto = 6;
    r.ipVersion = 4;
    r.endReason = EndReason::ForcedEnd;
    return r;
}

/// Records as a flush hands them over: most with one http instance, every fifth with two dns
/// instances (two lines each), every seventh without plugin data, and every `longEvery`-th
/// with a host name of `longHost` bytes. Records share their plugin data from a small set (an
/// Instances holds 64 KiB).
struct Corpus {
    std::vector<FlowRecord> records;
    std::vector<std::unique_ptr<Instances>> data;

    Corpus(std::uint32_t n, std::uint32_t longEvery, std::size_t longHost) {
        for (std::uint32_t k = 0; k < 32; ++k) {
            auto d = std::make_unique<Instances>();
            d->http(0, "GET", "host" + std::to_string(k) + ".example", 200);
            data.push_back(std::move(d));
            d = std::make_unique<Instances>();
            d->dns(1, {}, k, static_cast<std::uint16_t>(k), "a" + std::to_string(k));
            d->dns(1, {}, k + 1, static_cast<std::uint16_t>(k + 1), "b.example");
            data.push_back(std::move(d));
        }
        auto big = std::make_unique<Instances>();
        big->http(0, "POST", std::string(longHost, 'h'), 404);
        data.push_back(std::move(big));
        for (std::uint32_t i = 0; i < n; ++i) {
            FlowRecord r = record(i);
            if (i % longEvery == 0) {
                data.back()->attach(r);
            } else if (i % 7 != 0) {
                data[2 * (i % 32) + (i % 5 == 0 ? 1 : 0)]->attach(r);
            }
            records.push_back(r);
        }
    }
};

const FakePlugin kHttp("http", test::plugins::kHttpFields);
const FakePlugin kDns("dns", test::plugins::kDnsFields);
const ProcessPlugin* const kPlugins[] = {&kHttp, &kDns};

/// Writes `corpus` in batches of the given sizes (cycled) with `output;file=path;threads=N`.
OutputStats writeAll(const std::string& output, const fs::path& path, unsigned threads,
                     const Corpus& corpus, std::span<const std::size_t> batches) {
    auto out = Registry::instance().createAs<OutputPlugin>(
        PluginKind::Output,
        output + ";file=" + path.string() + ";threads=" + std::to_string(threads), "-o");
    out->setProcessPlugins(kPlugins);
    std::span<const FlowRecord> rest(corpus.records);
    for (std::size_t b = 0; !rest.empty(); ++b) {
        const std::size_t n = std::min(rest.size(), batches[b % batches.size()]);
        out->write(rest.first(n));
        rest = rest.subspan(n);
    }
    out->finish();
    return out->stats();
}

void expectSameAsOneThread(const std::string& output, std::uint32_t longEvery,
                           std::size_t longHost) {
    const Corpus corpus(6000, longEvery, longHost);
    // Below, at and above the split threshold, and the export thread's batch of 1024.
    const std::size_t batches[] = {1024, 3, 255, 256, 257, 1024, 2000, 1};
    const fs::path one = scratchFile(output + "-1");
    const OutputStats s1 = writeAll(output, one, 1, corpus, batches);
    const std::string expected = slurp(one);
    ASSERT_EQ(s1.records, corpus.records.size());
    for (const unsigned threads : {2U, 3U, 5U}) {
        const fs::path many = scratchFile(output + "-" + std::to_string(threads));
        const OutputStats s = writeAll(output, many, threads, corpus, batches);
        EXPECT_EQ(s.records, corpus.records.size()) << threads << " threads";
        EXPECT_EQ(s.bytes, s1.bytes) << threads << " threads";
        const std::string text = slurp(many);
        EXPECT_EQ(countLines(text), countLines(expected)) << threads << " threads";
        EXPECT_TRUE(text == expected)
            << output << ", " << threads << " threads: the bytes differ from one thread's";
    }
}

TEST(ParallelFormat, JsonWritesOneThreadsBytesWithAnyNumberOfThreads) {
    expectSameAsOneThread("json", 97, 100);
}

TEST(ParallelFormat, TextWritesOneThreadsBytesWithAnyNumberOfThreads) {
    expectSameAsOneThread("text", 97, 100);
}

TEST(ParallelFormat, RecordsPastAHelpersBufferAreFormattedByTheExportThreadInOrder) {
    // Every fourth record carries a 60 KB host name: a helper's slice of a 1024-record batch
    // then holds over 7 MB of text, and its 2 MiB buffer stops after about thirty of them; the
    // export thread formats the rest of that slice.
    expectSameAsOneThread("json", 4, 60'000);
    expectSameAsOneThread("text", 4, 60'000);
}

/// A Formatter for the claiming tests: one line per record, "<srcPort> <thread>\n", where
/// thread is E for the export thread (the one that made the ParallelFormat) and H for a
/// helper. `slowExport` makes the export thread sleep 200 us per record, so that the helpers
/// take chunks; `holdHelper` makes a helper's first record wait until the export thread has
/// formatted `held` records, as a helper kept off its CPU would (and the export thread's first
/// record wait until a helper holds its chunk).
struct ProbeFormatter {
    struct Shared {
        std::thread::id exportThread = std::this_thread::get_id();
        bool slowExport = false;
        bool holdHelper = false;
        std::size_t held = 0;
        std::atomic<bool> helperStarted{false};
        std::atomic<std::size_t> exportRecords{0};
        std::atomic<std::size_t> helperRecords{0};
    };
    Shared* shared;

    bool onExport() const { return std::this_thread::get_id() == shared->exportThread; }
    std::size_t prepare(const FlowRecord&, std::size_t& bound) {
        bound = 32;
        if (onExport()) {
            if (shared->slowExport) std::this_thread::sleep_for(std::chrono::microseconds(200));
            while (shared->holdHelper && !shared->helperStarted.load()) std::this_thread::yield();
        } else if (shared->holdHelper) {
            // Its first record only, and for 5 s at most, so that a ParallelFormat that waits
            // for the helper fails rather than hangs.
            if (!shared->helperStarted.exchange(true)) {
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while (shared->exportRecords.load() < shared->held &&
                       std::chrono::steady_clock::now() < until)
                    std::this_thread::yield();
            }
        }
        return 1;
    }
    char* line(char* out, const FlowRecord& r, std::size_t) noexcept {
        const bool e = onExport();
        (e ? shared->exportRecords : shared->helperRecords).fetch_add(1);
        const std::string text = std::to_string(r.srcPort) + (e ? " E\n" : " H\n");
        std::memcpy(out, text.data(), text.size());
        return out + text.size();
    }
};

/// Writes records 0..n-1 as one batch through a ParallelFormat of `threads` into a file;
/// returns the file's lines.
std::vector<std::string> writeProbe(ProbeFormatter::Shared& shared, unsigned threads,
                                    std::uint16_t n) {
    const fs::path path = scratchFile("probe-" + std::to_string(threads));
    const Options options("test", std::span<const OptionSpec>{}, {{"file", path.string()}}, "test");
    {
        OutputFile file(options, "file");
        ParallelFormat<ProbeFormatter> format(ProbeFormatter{&shared}, threads, "probe");
        std::vector<FlowRecord> records(n);
        for (std::uint16_t i = 0; i < n; ++i) records[i].srcPort = i;
        format.write(file, records);
        file.flush();
        EXPECT_EQ(file.records(), n);
    }
    std::vector<std::string> lines;
    std::istringstream in(slurp(path));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

TEST(ParallelFormat, HelpersTakeChunksFromTheBackAndTheFileKeepsTheBatchsOrder) {
    // A slow export thread: the helpers format most of the batch, from its end, and the
    // export thread its first chunks; the file is in record order all the same.
    ProbeFormatter::Shared shared;
    shared.slowExport = true;
    const std::uint16_t n = 1000;
    const auto lines = writeProbe(shared, 3, n);
    ASSERT_EQ(lines.size(), n);
    for (std::uint16_t i = 0; i < n; ++i)
        ASSERT_EQ(lines[i].substr(0, lines[i].find(' ')), std::to_string(i)) << "line " << i;
    EXPECT_GT(shared.helperRecords.load(), n / 2) << "the helpers did not take the bulk";
    EXPECT_GT(shared.exportRecords.load(), 0U);
    // The export thread's records are the batch's head, the helpers' its tail.
    const auto firstHelper = std::find_if(lines.begin(), lines.end(),
                                          [](const std::string& l) { return l.back() == 'H'; });
    EXPECT_TRUE(std::all_of(firstHelper, lines.end(),
                            [](const std::string& l) { return l.back() == 'H'; }));
    EXPECT_EQ(static_cast<std::size_t>(firstHelper - lines.begin()), shared.exportRecords.load());
}

TEST(ParallelFormat, AHelperThatGetsNoCpuLeavesItsShareToTheExportThread) {
    // The helper's first record waits until the export thread has formatted all but one
    // chunk: the export thread must go on claiming chunks instead of waiting for the helper
    // (with a fixed half each it waits, until the helper gives up holding after 5 s), and the
    // helper formats only the last chunk, the one it was in.
    ProbeFormatter::Shared shared;
    shared.holdHelper = true;
    const std::uint16_t n = 1024;
    const std::size_t chunk = ParallelFormat<ProbeFormatter>::kChunk;
    shared.held = n - chunk;
    const auto lines = writeProbe(shared, 2, n);
    ASSERT_EQ(lines.size(), n);
    for (std::uint16_t i = 0; i < n; ++i) {
        ASSERT_EQ(lines[i], std::to_string(i) + (i < n - chunk ? " E" : " H")) << "line " << i;
    }
}

TEST(ParallelFormat, TheDefaultIsTwoThreadsCappedAtTheCpusAndAnExplicitValueIsKept) {
    const Options defaults("-o 'json'",
                           Registry::instance().find(PluginKind::Output, "json")->info.options, {},
                           "test");
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    EXPECT_EQ(formatThreads(defaults, "threads"), CPU_COUNT(&allowed) >= 2 ? 2U : 1U);
    const Options given("-o 'json'",
                        Registry::instance().find(PluginKind::Output, "json")->info.options,
                        {{"threads", "7"}}, "test");
    EXPECT_EQ(formatThreads(given, "threads"), 7U);
}

TEST(ParallelFormat, ThreadsOutOfRangeIsAConfigErrorNamingTheOption) {
    for (const char* spec : {"json;threads=0", "text;threads=17"}) {
        try {
            Registry::instance().createAs<OutputPlugin>(PluginKind::Output, spec, "-o");
            FAIL() << spec << ": no error";
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.details().option, "threads") << e.what();
        }
    }
}

TEST(ParallelFormat, AFullDeviceThrowsFromWriteWithEveryHelperStopped) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    // The 1 MiB buffer overflows inside write(): with short records in the drain before a
    // helper's text or in the text itself, with long ones (every other record 3 KB) already
    // while the export thread formats its own part.
    for (const std::uint32_t longEvery : {97U, 2U}) {
        const Corpus corpus(3000, longEvery, 3000);
        for (const char* output : {"json", "text"}) {
            auto out = Registry::instance().createAs<OutputPlugin>(
                PluginKind::Output, std::string(output) + ";file=/dev/full;threads=3", "-o");
            out->setProcessPlugins(kPlugins);
            EXPECT_THROW(out->write(corpus.records), RuntimeError) << output << " " << longEvery;
            EXPECT_EQ(out->stats().records, 0U);
            out.reset();  // joins the helpers: none may still be formatting the batch
        }
    }
}

/// In a child (the file size limit and SIGXFSZ are per process): an OutputFile whose file may
/// grow to `limit` bytes takes `text` as whole records ending at `ends`. Returns the child's
/// report: "records=N size=M error=E".
std::string appendUnderLimit(const fs::path& path, const std::string& text,
                             const std::vector<std::uint32_t>& ends, rlim_t limit) {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit rl{limit, limit};
        ::setrlimit(RLIMIT_FSIZE, &rl);
        std::string report;
        {
            const Options options("test", std::span<const OptionSpec>{}, {{"file", path.string()}},
                                  "test");
            OutputFile file(options, "file");
            std::string error = "none";
            try {
                file.appendRecords(text.data(), ends);
                file.flush();
            } catch (const RuntimeError& e) {
                error = "thrown";
            }
            report = "records=" + std::to_string(file.records()) +
                     " size=" + std::to_string(fs::file_size(path)) + " error=" + error;
        }
        const ssize_t w = ::write(fds[1], report.data(), report.size());
        ::_exit(w == static_cast<ssize_t>(report.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    std::string report(256, '\0');
    const ssize_t n = ::read(fds[0], report.data(), report.size());
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    report.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return report;
}

TEST(OutputFile, AppendRecordsCountsWhatLandedAndCutsAFailedWriteBackToTheLastWholeRecord) {
    // Ten records of 100 bytes; the file may hold 450: four land whole, the fifth is cut off.
    std::string text;
    std::vector<std::uint32_t> ends;
    for (int i = 0; i < 10; ++i) {
        text += std::string(99, static_cast<char>('a' + i)) + "\n";
        ends.push_back(static_cast<std::uint32_t>(text.size()));
    }
    const fs::path path = scratchFile("append-limit");
    EXPECT_EQ(appendUnderLimit(path, text, ends, 450), "records=4 size=400 error=thrown");
    EXPECT_EQ(slurp(path), text.substr(0, 400));
    const fs::path whole = scratchFile("append-whole");
    EXPECT_EQ(appendUnderLimit(whole, text, ends, RLIM_INFINITY),
              "records=10 size=1000 error=none");
    EXPECT_EQ(slurp(whole), text);
}

}  // namespace
}  // namespace rowprobe::output
