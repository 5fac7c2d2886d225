// Fault injection on the inputs (issue 10, defects 3, 4, 5 and 11): a capture file cut short
// while it is read, an interface that goes down and is deleted under a `raw` capture, packets
// trickling through a pipe, and the two ways a pcap file is read (with and without a BPF
// filter) agreeing on malformed records. Each test is bounded in time (a few seconds at most)
// and asserts the documented exit code and that no packet read is lost.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../unit/input/live_traffic.hpp"
#include "input/pcap/pcap_input.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, std::uint16_t v) {
    b.insert(b.end(), {std::uint8_t(v), std::uint8_t(v >> 8)});
}
void put32(Bytes& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}

Bytes pcapHeader(std::uint32_t snaplen = 262144, bool nano = false) {
    Bytes b;
    put32(b, nano ? 0xa1b23c4d : 0xa1b2c3d4);
    put16(b, 2);
    put16(b, 4);
    put32(b, 0);
    put32(b, 0);
    put32(b, snaplen);
    put32(b, 1);
    return b;
}

/// One record: header fields as given (they may be inconsistent on purpose) and the frame.
void pcapRecord(Bytes& b, std::uint32_t sec, std::uint32_t frac, const Bytes& frame,
                std::uint32_t wireLen = 0) {
    put32(b, sec);
    put32(b, frac);
    put32(b, static_cast<std::uint32_t>(frame.size()));
    put32(b, wireLen != 0 ? wireLen : static_cast<std::uint32_t>(frame.size()));
    b.insert(b.end(), frame.begin(), frame.end());
}

/// Ethernet/IPv4/UDP from 10.0.x.y:(1000 + n % 50000) to 10.1.0.1:53, `size` bytes.
Bytes udpFrame(std::uint32_t n, std::size_t size = 100) {
    const auto src = "10.0." + std::to_string((n >> 8) & 0xff) + "." + std::to_string(n & 0xff);
    auto f = test::ethIpv4Udp(src, static_cast<std::uint16_t>(1000 + n % 50000), "10.1.0.1", 53,
                              size > 42 ? size - 42 : 0);
    return f;
}

void writeBytes(const fs::path& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

/// The rowprobe under test: ROWPROBE_FAULTS_BINARY=/path/to/rowprobe runs the process-level
/// tests against another build (to see them fail on the code before the fixes).
std::string binary() {
    const char* other = std::getenv("ROWPROBE_FAULTS_BINARY");
    return other != nullptr && *other != 0 ? std::string(other) : test::rowprobeBinary().string();
}

std::unique_ptr<input::PcapInput> openPcap(const std::string& text) {
    return Registry::instance().createAs<input::PcapInput>(PluginKind::Input, text, "-i");
}

std::uint64_t procReadBytes(int pid) {
    std::ifstream io("/proc/" + std::to_string(pid) + "/io");
    std::string key;
    std::uint64_t value = 0;
    while (io >> key >> value) {
        if (key == "rchar:") return value;
    }
    return 0;
}

/// user + system CPU time of `pid`, in clock ticks.
std::uint64_t procCpuTicks(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    std::uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
    }
    return utime + stime;
}

// --- defect 3: a capture file truncated while it is read -------------------------------------

/// Both ways of reading a file (map=on: a memory map; map=off: read()).
class ShrinkingFile : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(InputFaults, ShrinkingFile, ::testing::Values("on", "off"));

TEST_P(ShrinkingFile, FileTruncatedUnderTheReaderIsAnErrorNotASigbus) {
    // In-process, deterministic: read part of the file, cut it below what was read, read on.
    // A memory-mapped reader without its SIGBUS handler dies here (and takes the test process
    // with it).
    const fs::path path = test::tempDir() / "shrinks.pcap";
    Bytes b = pcapHeader();
    for (std::uint32_t i = 0; i < 20000; ++i) pcapRecord(b, 1'700'000'000 + i, 0, udpFrame(i, 400));
    writeBytes(path, b);
    auto in = openPcap("pcap;file=" + path.string() + ";map=" + GetParam());
    PacketBlock block;
    std::uint64_t got = 0;
    for (int i = 0; i < 10; ++i) {
        block.clear();
        ASSERT_EQ(in->read(block), InputPlugin::Status::Ok);
        got += block.count;
    }
    fs::resize_file(path, 4096);
    std::string error;
    try {
        for (;;) {
            block.clear();
            if (in->read(block) == InputPlugin::Status::End) break;
            got += block.count;
        }
    } catch (const RuntimeError& e) {
        error = e.what();
    }
    EXPECT_NE(error.find("shrank"), std::string::npos) << "error: '" << error << "'";
    EXPECT_EQ(in->stats().received, got) << "every packet read was counted";
}

TEST_P(ShrinkingFile, FileCutAheadOfTheReaderAtARecordBoundaryIsStillAnError) {
    // Cut where a record ends, beyond what was read: the end of file would look like the
    // end of the capture. The size at start-up tells them apart.
    const fs::path path = test::tempDir() / "cut-ahead.pcap";
    Bytes b = pcapHeader();
    for (std::uint32_t i = 0; i < 20000; ++i) pcapRecord(b, 1'700'000'000 + i, 0, udpFrame(i, 400));
    writeBytes(path, b);
    auto in = openPcap("pcap;file=" + path.string() + ";map=" + GetParam());
    PacketBlock block;
    ASSERT_EQ(in->read(block), InputPlugin::Status::Ok);
    fs::resize_file(path, 24 + std::uint64_t{15000} * (16 + 400));
    std::uint64_t got = block.count;
    std::string error;
    try {
        for (;;) {
            block.clear();
            if (in->read(block) == InputPlugin::Status::End) break;
            got += block.count;
        }
    } catch (const RuntimeError& e) {
        error = e.what();
    }
    EXPECT_EQ(got, 15000U) << "every whole record still in the file was delivered";
    EXPECT_NE(error.find("shrank"), std::string::npos) << "error: '" << error << "'";
}

/// How far a mapped reader in process `pid` got in `file`: the end of the highest page of its
/// mapping of the file that is present (/proc/PID/maps and /proc/PID/pagemap, whose present
/// bit is readable without privileges). The reader populates at most two 4 MiB windows ahead
/// of its position, so its position is at least this minus 8 MiB. 0 when it has no mapping.
std::uint64_t mappedProgress(int pid, const fs::path& file) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    const int pagemap = ::open(("/proc/" + std::to_string(pid) + "/pagemap").c_str(), O_RDONLY);
    if (pagemap < 0) return 0;
    const long page = ::sysconf(_SC_PAGESIZE);
    std::uint64_t progress = 0;
    for (std::string line; std::getline(maps, line);) {
        if (!line.ends_with(" " + file.string())) continue;
        std::uint64_t begin = 0, end = 0, offset = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &begin, &end, &offset) != 3) continue;
        // The entries of the mapping's pages, 4096 at a time from its end down.
        const auto pageSize = static_cast<std::uint64_t>(page);
        std::vector<std::uint64_t> entries(4096);
        for (std::uint64_t top = end / pageSize; top > begin / pageSize && progress == 0;) {
            const std::uint64_t from = std::max(begin / pageSize, top - entries.size());
            const auto want = static_cast<ssize_t>((top - from) * sizeof(std::uint64_t));
            if (::pread(pagemap, entries.data(), static_cast<std::size_t>(want),
                        static_cast<off_t>(from * sizeof(std::uint64_t))) != want)
                break;
            for (std::uint64_t i = top - from; i > 0; --i) {
                if ((entries[i - 1] >> 63) != 0) {  // present
                    progress = offset + (from + i) * pageSize - begin;
                    break;
                }
            }
            top = from;
        }
    }
    ::close(pagemap);
    return progress;
}

/// A 200 MB capture of 140000 1500-byte frames of 1000 UDP flows (i % 1000): long enough to
/// stop the reader part way, whatever the machine's speed.
fs::path writeRotatedCapture(const fs::path& dir) {
    const fs::path path = dir / "rotated.pcap";
    Bytes b = pcapHeader();
    b.reserve(std::size_t{210} << 20);
    for (std::uint32_t i = 0; i < 140000; ++i)
        pcapRecord(b, 1'700'000'000 + i / 1000, (i % 1000) * 1000, udpFrame(i % 1000, 1500));
    writeBytes(path, b);
    return path;
}

/// The flows of writeRotatedCapture's frames among `flows` (udpFrame(n), n < 1000), each once.
std::size_t capturedFlows(const std::vector<test::JsonObject>& flows) {
    std::set<std::uint32_t> seen;
    for (const auto& f : flows) {
        const auto at = [&](const char* key) {
            const auto it = f.find(key);
            return it == f.end() ? std::string() : it->second;
        };
        if (at("dst_ip") != "10.1.0.1" || at("dst_port") != "53" || at("src_port").empty())
            continue;
        const auto n = static_cast<std::uint32_t>(std::stoul(at("src_port")) - 1000);
        const std::string src =
            "10.0." + std::to_string((n >> 8) & 0xff) + "." + std::to_string(n & 0xff);
        if (n < 1000 && at("src_ip") == src) seen.insert(n);
    }
    return seen.size();
}

/// Checks the end of a run whose capture shrank: exit 1 with "shrank", every flow exported.
/// Under a map, packets the worker held when their pages vanished read as zeros, whole or in
/// part (the process may be stopped halfway through a frame): a frame cut that way can make
/// one extra record, beside the 1000 flows of the capture.
void expectShrankAndFlowsExported(const test::CommandResult& r, const fs::path& json, bool mapped) {
    EXPECT_EQ(r.exitCode, 1) << "not a SIGBUS (135): " << r.err;
    EXPECT_NE(r.err.find("shrank"), std::string::npos) << r.err;
    const auto flows = test::parseJsonLines(test::readFile(json));
    EXPECT_EQ(capturedFlows(flows), 1000U) << "every cached flow is exported";
    if (!mapped) {
        EXPECT_EQ(flows.size(), 1000U);
    } else if (flows.size() != 1000U) {
        for (const auto& f : flows) {
            if (f.at("dst_port") == "53" && f.at("dst_ip") == "10.1.0.1") continue;
            std::printf(
                "record of a frame read after its pages vanished: %s:%s > %s:%s, %s packets\n",
                f.at("src_ip").c_str(), f.at("src_port").c_str(), f.at("dst_ip").c_str(),
                f.at("dst_port").c_str(), f.at("packets").c_str());
        }
    }
}

/// How far the reader of `pid` got: bytes read() for map=off, the mapped progress otherwise.
std::uint64_t readerProgress(int pid, const fs::path& file, bool mapped) {
    return mapped ? mappedProgress(pid, file) : procReadBytes(pid);
}

TEST_P(ShrinkingFile, ProcessReadingAFileThatShrinksExportsItsFlowsAndExitsOne) {
    const bool mapped = GetParam() == "on";
    const fs::path dir = test::tempDir();
    const fs::path path = writeRotatedCapture(dir);
    const fs::path json = dir / "flows.json";
    test::ChildProcess child({binary(), "-i", "pcap;file=" + path.string() + ";map=" + GetParam(),
                              "-s", "cache;size=14", "-o", "json;file=" + json.string(), "-Q"});
    // Freeze it once it has read the first 16 MB, cut the file to 1 MB, let it go on: the cut
    // lands behind the reader (pages the worker may still read) and ahead of it.
    const std::uint64_t mark = (std::uint64_t{16} << 20) + (mapped ? std::uint64_t{8} << 20 : 0);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (readerProgress(child.pid(), path, mapped) < mark && child.running() &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100us);
    }
    child.signal(SIGSTOP);
    const std::uint64_t readSoFar = readerProgress(child.pid(), path, mapped);
    if (readSoFar >= fs::file_size(path) || readSoFar == 0) {
        child.signal(SIGCONT);
        GTEST_SKIP() << "rowprobe read the whole file before it could be stopped";
    }
    fs::resize_file(path, std::uint64_t{1} << 20);
    child.signal(SIGCONT);
    expectShrankAndFlowsExported(child.wait(20), json, mapped);
}

TEST(InputFaults, MappedFileCutJustBehindTheReaderExportsItsFlowsAndExitsOne) {
    // The cut lands among the pages of the reads still in flight: the worker touches frames
    // that are gone (SIGBUS, answered with zero pages), the reader runs into the new end.
    const fs::path dir = test::tempDir();
    const fs::path path = writeRotatedCapture(dir);
    const fs::path json = dir / "flows.json";
    test::ChildProcess child({binary(), "-i", "pcap;file=" + path.string() + ";map=on", "-s",
                              "cache;size=14", "-o", "json;file=" + json.string(), "-Q"});
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (mappedProgress(child.pid(), path) < (std::uint64_t{40} << 20) && child.running() &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100us);
    }
    child.signal(SIGSTOP);
    const std::uint64_t ahead = mappedProgress(child.pid(), path);
    if (ahead >= fs::file_size(path) || ahead < (std::uint64_t{16} << 20)) {
        child.signal(SIGCONT);
        GTEST_SKIP() << "rowprobe read the whole file before it could be stopped";
    }
    // The reader is at most 8 MiB behind its populated end: cut 9 MiB below that end, where a
    // record ends (24-byte header, 1516-byte records).
    const std::uint64_t cut = ahead - (std::uint64_t{9} << 20);
    fs::resize_file(path, 24 + (cut - 24) / 1516 * 1516);
    child.signal(SIGCONT);
    expectShrankAndFlowsExported(child.wait(20), json, true);
}

TEST(InputFaults, SigbusOutsideTheMappingsStillEndsTheProcess) {
    // The handler installed while a file is mapped takes only faults on its mappings: another
    // SIGBUS (here one sent to the process) gets the previous action: the default, death by
    // SIGBUS, or a sanitizer's report of a deadly signal.
    const fs::path dir = test::tempDir();
    const fs::path path = writeRotatedCapture(dir);
    test::ChildProcess child({binary(), "-i", "pcap;file=" + path.string() + ";map=on", "-o",
                              "json;file=/dev/null", "-Q"});
    // Signal it as soon as the file is mapped (its name shows in /proc/PID/maps).
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    const std::string maps = "/proc/" + std::to_string(child.pid()) + "/maps";
    while (test::readFile(maps).find(path.string()) == std::string::npos && child.running() &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100us);
    }
    if (!child.running()) GTEST_SKIP() << "rowprobe read the whole file before the signal";
    child.signal(SIGBUS);
    const test::CommandResult r = child.wait(20);
    const bool sanitizer = r.err.find("DEADLYSIGNAL") != std::string::npos;
    EXPECT_TRUE(r.exitCode == 128 + SIGBUS || sanitizer) << r.exitCode << ": " << r.err;
}

// --- defect 5: pipes and FIFOs ---------------------------------------------------------------

TEST(InputFaults, PipeDeliversAPartialBlockWithoutWaitingForMorePackets) {
    const fs::path fifo = test::tempDir() / "slow.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    int writer = -1;
    std::thread opener([&] {
        writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // waits for the reader
        Bytes b = pcapHeader();
        for (std::uint32_t i = 0; i < 10; ++i) pcapRecord(b, 1'700'000'000, i, udpFrame(i));
        [[maybe_unused]] const ssize_t n = ::write(writer, b.data(), b.size());
    });
    auto in = openPcap("pcap;file=" + fifo.string());
    opener.join();
    EXPECT_FALSE(in->neverBlocks());
    PacketBlock block;
    auto pending = std::async(std::launch::async, [&] { return in->read(block); });
    const bool delivered = pending.wait_for(3s) == std::future_status::ready;
    ::close(writer);  // the writer goes away: a blocked read ends now
    const auto status = pending.get();
    ASSERT_TRUE(delivered) << "the 10 packets waited for a 64-packet block";
    EXPECT_EQ(status, InputPlugin::Status::Ok);
    EXPECT_EQ(block.count, 10U);
}

TEST(InputFaults, PipedPacketsAreExportedOnSigterm) {
    const fs::path dir = test::tempDir();
    const fs::path fifo = dir / "in.fifo";
    const fs::path json = dir / "flows.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    test::ChildProcess child(
        {binary(), "-i", "pcap;file=" + fifo.string(), "-o", "json;file=" + json.string(), "-Q"});
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    Bytes b = pcapHeader();
    for (std::uint32_t i = 0; i < 10; ++i) pcapRecord(b, 1'700'000'000, i, udpFrame(i));
    ASSERT_EQ(::write(writer, b.data(), b.size()), static_cast<ssize_t>(b.size()));
    std::this_thread::sleep_for(300ms);  // the writer stays open: no end of file
    const auto t0 = std::chrono::steady_clock::now();
    child.signal(SIGTERM);
    const test::CommandResult r = child.wait(10);
    ::close(writer);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(test::parseJsonLines(test::readFile(json)).size(), 10U)
        << "10 piped packets of 10 flows: 10 records";
}

TEST(InputFaults, StandardInputPacketsAreExportedOnSigterm) {
    const fs::path dir = test::tempDir();
    const fs::path pcap = dir / "ten.pcap";
    const fs::path json = dir / "flows.json";
    Bytes b = pcapHeader();
    for (std::uint32_t i = 0; i < 10; ++i) pcapRecord(b, 1'700'000'000, i, udpFrame(i));
    writeBytes(pcap, b);
    // The pipe's writer stays open for 3 s; rowprobe gets SIGTERM after 1 s. --foreground: GNU
    // timeout otherwise signals the child and then its whole process group, a second SIGTERM
    // that rowprobe rightly takes as "exit now" (130).
    const auto r = test::runShell(
        "(cat '" + pcap.string() +
            "'; sleep 3) | timeout --foreground --preserve-status -s TERM 1 '" + binary() +
            "' -i 'pcap;file=-' -o 'json;file=" + json.string() + "' -Q; echo \"exit=$?\"",
        20);
    EXPECT_NE(r.out.find("exit=0"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(test::parseJsonLines(test::readFile(json)).size(), 10U) << r.err;
}

// --- defect 11: one set of rules with and without a BPF filter --------------------------------

TEST(InputFaults, FilteredAndUnfilteredReadsAgreeOnMalformedRecords) {
    const fs::path path = test::tempDir() / "odd.pcap";
    Bytes b = pcapHeader(128);                          // the file claims a 128-byte snaplen
    pcapRecord(b, 1'700'000'000, 5, udpFrame(1, 300));  // caplen 300 > snaplen 128
    pcapRecord(b, 1'700'000'001, 1'500'000, udpFrame(2, 100));  // 1.5 s in the microseconds
    pcapRecord(b, 0x90000000U, 999'999, udpFrame(3, 100));      // seconds beyond 2^31
    pcapRecord(b, 1'700'000'002, 7, udpFrame(4, 100), 60);      // wire length < caplen
    writeBytes(path, b);
    struct Packet {
        std::uint32_t capLen, wireLen;
        TimeNs ts;
        Bytes data;
    };
    auto readAll = [](const std::string& text) {
        auto in = openPcap(text);
        std::vector<Packet> out;
        PacketBlock block;
        while (in->read(block) == InputPlugin::Status::Ok) {
            for (std::size_t i = 0; i < block.count; ++i) {
                const RawPacket& p = block.packets[i];
                out.push_back({p.capLen, p.wireLen, p.ts, Bytes(p.data, p.data + p.capLen)});
            }
            block.clear();
        }
        return out;
    };
    const auto plain = readAll("pcap;file=" + path.string());
    const auto filtered = readAll("pcap;file=" + path.string() + ";filter=ip or not ip");
    ASSERT_EQ(plain.size(), 4U);
    ASSERT_EQ(filtered.size(), 4U);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(plain[i].capLen, filtered[i].capLen) << i;
        EXPECT_EQ(plain[i].wireLen, filtered[i].wireLen) << i;
        EXPECT_EQ(plain[i].ts, filtered[i].ts) << i;
        EXPECT_EQ(plain[i].data, filtered[i].data) << i;
    }
    // The rules: what is there is read (like tshark), the sub-second carry is arithmetic, the
    // seconds are unsigned.
    EXPECT_EQ(plain[0].capLen, 300U);
    EXPECT_EQ(plain[1].ts, 1'700'000'002'500'000'000ULL);
    EXPECT_EQ(plain[2].ts, 0x90000000ULL * 1'000'000'000ULL + 999'999'000ULL);
    EXPECT_EQ(plain[3].capLen, 100U);
    EXPECT_EQ(plain[3].wireLen, 60U);
    // And the filter sees the whole record: a port match beyond the file's snaplen still works.
    const auto udp = readAll("pcap;file=" + path.string() + ";filter=udp dst port 53");
    EXPECT_EQ(udp.size(), 4U);
}

// --- defect 4: `raw;ifc=X` when X goes down, then disappears ----------------------------------

TEST(InputFaults, RawInterfaceDownWarnsWithoutSpinningAndDeletedEndsWithAnError) {
    if (!test::live::packetSocketsAllowed()) GTEST_SKIP() << "needs CAP_NET_RAW";
    test::live::VethPair veth;
    if (!veth.ok()) GTEST_SKIP() << "cannot create a veth pair: " << veth.command();
    const fs::path dir = test::tempDir();
    const fs::path json = dir / "flows.json";
    test::ChildProcess child(
        {binary(), "-i", "raw;ifc=" + veth.hostIfc(), "-o", "json;file=" + json.string(), "-Q"});
    std::this_thread::sleep_for(500ms);
    ASSERT_TRUE(child.running());
    ASSERT_EQ(std::system(("ip link set " + veth.hostIfc() + " down").c_str()), 0);
    std::this_thread::sleep_for(200ms);
    const std::uint64_t before = procCpuTicks(child.pid());
    std::this_thread::sleep_for(1s);
    const std::uint64_t used = procCpuTicks(child.pid()) - before;
    const long hz = sysconf(_SC_CLK_TCK);
    // A spinning input thread alone is a whole CPU (hz ticks a second). The idle process with
    // the link up costs about a fifth of one here (the worker and export thread poll their
    // queues), so the bound is half a CPU: a spin fails it, the idle polling does not.
    EXPECT_LT(used, static_cast<std::uint64_t>(hz / 2))
        << "a down link must not make the input spin (" << used << " ticks in 1 s)";
    EXPECT_TRUE(child.running()) << "a link that is down may come back: keep waiting";
    ASSERT_EQ(std::system(("ip link del " + veth.hostIfc()).c_str()), 0);
    const test::CommandResult r = child.wait(5);
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("went down"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("disappeared"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rowprobe
