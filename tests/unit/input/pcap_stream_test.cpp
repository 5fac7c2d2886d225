// The capture reader behind the `pcap` input (input/pcap/pcap_stream.hpp): gzip'd captures read
// by streaming, bounded memory whatever the file size, and packets that stay valid for as long as
// the core may hold their block. Every test runs on both paths of a regular file (a memory map,
// `map=on`, and read(), `map=off`); the mapped path delivers the same packets as the read path
// on every capture of pcaps/ and of the shared test data, keeps its RSS bounded and reads a
// file that grows to its end.
#include "input/pcap/pcap_stream.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "input/pcap/pcap_input.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::input {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

void put32(Bytes& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}

/// A nanosecond pcap of `count` Ethernet frames of `size` bytes; frame i carries i at byte 60.
Bytes makePcap(std::uint32_t count, std::uint32_t size) {
    Bytes b;
    put32(b, 0xa1b23c4d);
    b.insert(b.end(), {2, 0, 4, 0});
    put32(b, 0);
    put32(b, 0);
    put32(b, 262144);
    put32(b, 1);
    for (std::uint32_t i = 0; i < count; ++i) {
        put32(b, 1'700'000'000 + i / 1000);
        put32(b, (i % 1000) * 1000);
        put32(b, size);
        put32(b, size);
        Bytes f = test::ethIpv4Udp("10.0.0.1", 1000, "10.0.0.2", 53, size - 42);
        std::memcpy(f.data() + 60, &i, 4);
        b.insert(b.end(), f.begin(), f.end());
    }
    return b;
}

void writeBytes(const fs::path& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

std::uint32_t seqOf(const RawPacket& p) {
    std::uint32_t v = 0;
    std::memcpy(&v, p.data + 60, 4);
    return v;
}

std::unique_ptr<PcapInput> open(const std::string& text) {
    return Registry::instance().createAs<PcapInput>(PluginKind::Input, text, "-i");
}

/// The tests below run once per way of reading a regular file.
class PcapStreamBothPaths : public ::testing::TestWithParam<MapMode> {
protected:
    static std::string mapOption() { return GetParam() == MapMode::Off ? ";map=off" : ";map=on"; }
    std::unique_ptr<PcapInput> openFile(const fs::path& path, const std::string& more = {}) {
        return open("pcap;file=" + path.string() + more + mapOption());
    }
    static std::unique_ptr<input::PcapStream> stream(const fs::path& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        EXPECT_GE(fd, 0) << path;
        return std::make_unique<input::PcapStream>(std::make_unique<ByteSource>(fd, path.string()),
                                                   -1, GetParam());
    }
};

INSTANTIATE_TEST_SUITE_P(Paths, PcapStreamBothPaths, ::testing::Values(MapMode::On, MapMode::Off),
                         [](const auto& param) {
                             return std::string(param.param == MapMode::On ? "Mapped" : "Read");
                         });

/// Reads `in` to the end as the core does: 32 blocks recycled in FIFO order. Checks every
/// packet of every block just before the block is reused (the data must still be intact).
std::uint32_t readRecycled(PcapInput& in, std::uint32_t size) {
    std::array<std::unique_ptr<PacketBlock>, 32> pool;
    for (auto& b : pool) b = std::make_unique<PacketBlock>();
    std::uint32_t next = 0;
    std::uint32_t checked = 0;
    auto check = [&](const PacketBlock& b) {
        for (std::size_t i = 0; i < b.count; ++i) {
            EXPECT_EQ(seqOf(b.packets[i]), checked) << "packet data overwritten too early";
            EXPECT_EQ(b.packets[i].capLen, size);
            ++checked;
        }
    };
    for (std::size_t k = 0;; ++k) {
        PacketBlock& block = *pool[k % pool.size()];
        if (k >= pool.size()) check(block);  // its last use, read 32 reads ago
        block.clear();
        if (in.read(block) == InputPlugin::Status::End) {
            for (std::size_t j = 1; j < pool.size(); ++j) check(*pool[(k + j) % pool.size()]);
            break;
        }
        next += static_cast<std::uint32_t>(block.count);
    }
    EXPECT_EQ(checked, next);
    return next;
}

TEST_P(PcapStreamBothPaths, ReadsGzipCompressedPcapWithoutATemporaryFile) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "t.pcap", makePcap(3000, 300));
    ASSERT_EQ(test::runShell("gzip -k -c '" + (dir / "t.pcap").string() + "' > '" +
                             (dir / "t.pcap.gz").string() + "'")
                  .exitCode,
              0);
    auto in = openFile(dir / "t.pcap.gz");
    EXPECT_EQ(readRecycled(*in, 300), 3000U);
    EXPECT_EQ(in->stats().received, 3000U);
}

TEST_P(PcapStreamBothPaths, ReadsConcatenatedGzipMembersAndGzipPcapng) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "a.pcap", makePcap(100, 200));
    // Two members: the second a whole second pcap would be garbage, so split one file in two.
    ASSERT_EQ(test::runShell("cd '" + dir.string() +
                             "' && head -c 10000 a.pcap | gzip > two.gz && tail -c +10001 a.pcap "
                             "| gzip >> two.gz")
                  .exitCode,
              0);
    auto in = openFile(dir / "two.gz");
    EXPECT_EQ(readRecycled(*in, 200), 100U);

    if (test::runShell("command -v editcap").exitCode != 0) GTEST_SKIP() << "no editcap";
    ASSERT_EQ(test::runShell("cd '" + dir.string() +
                             "' && editcap -F pcapng a.pcap a.pcapng && gzip -k a.pcapng")
                  .exitCode,
              0);
    auto ng = openFile(dir / "a.pcapng.gz");
    EXPECT_EQ(readRecycled(*ng, 200), 100U);
}

TEST_P(PcapStreamBothPaths, TruncatedGzipIsAnErrorAfterTheWholePackets) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "t.pcap", makePcap(2000, 300));
    ASSERT_EQ(
        test::runShell(
            "cd '" + dir.string() +
            "' && gzip -c t.pcap > t.gz && head -c $(( $(stat -c %s t.gz) / 2 )) t.gz > cut.gz")
            .exitCode,
        0);
    auto in = openFile(dir / "cut.gz");
    PacketBlock block;
    std::uint64_t got = 0;
    std::string error;
    try {
        while (in->read(block) == InputPlugin::Status::Ok) {
            got += block.count;
            block.clear();
        }
    } catch (const RuntimeError& e) {
        error = e.what();
    }
    EXPECT_GT(got, 100U);
    EXPECT_LT(got, 2000U);
    EXPECT_NE(error.find("gzip"), std::string::npos) << error;
}

TEST_P(PcapStreamBothPaths, BufferMemoryStaysBoundedWhateverTheFileSize) {
    // 60 MB of 1500-byte frames read with the core's 32 recycled blocks: a few 2 MiB chunks.
    const fs::path path = test::tempDir() / "big.pcap";
    writeBytes(path, makePcap(40000, 1500));
    auto reader = stream(path);
    input::PcapStream& stream = *reader;
    ASSERT_TRUE(stream.valid());
    EXPECT_EQ(stream.mapped(), GetParam() == MapMode::On);
    std::uint32_t seq = 0;
    for (bool more = true; more;) {
        stream.beginRead();
        for (int i = 0; i < 64; ++i) {
            RawPacket p;
            const auto r = stream.next(p, 65535, -1);
            if (r == input::PcapStream::Result::Budget) break;
            if (r != input::PcapStream::Result::Packet) {
                ASSERT_EQ(r, input::PcapStream::Result::End) << stream.error();
                more = false;
                break;
            }
            ASSERT_EQ(seqOf(p), seq++);
        }
    }
    EXPECT_EQ(seq, 40000U);
    EXPECT_LE(stream.chunksAllocated(), 3U) << "40 reads of 64 x 1516 B span ~4 MB";
    EXPECT_LE(input::PcapStream::kMaxChunks * input::PcapStream::kChunkBytes,
              std::size_t{48} << 20);
}

/// pcapng with two interfaces: 0 Ethernet (if_tsresol 2^-20, if_tsoffset 100 s), 1 raw IP
/// (if_tsresol 10^-3). Packets alternate in runs: 3 on 0, 2 on 1, 3 on 0.
Bytes makeTwoInterfacePcapng() {
    Bytes b;
    auto u16 = [&](std::uint16_t v) { b.insert(b.end(), {std::uint8_t(v), std::uint8_t(v >> 8)}); };
    put32(b, 0x0A0D0D0A);
    put32(b, 28);
    put32(b, 0x1A2B3C4D);
    u16(1);
    u16(0);
    put32(b, 0xFFFFFFFF);
    put32(b, 0xFFFFFFFF);
    put32(b, 28);
    // Interface 0: Ethernet, if_tsresol = 0x94 (2^-20), if_tsoffset = 100.
    put32(b, 1);
    put32(b, 16 + 8 + 12 + 4 + 4);
    u16(1);
    u16(0);
    put32(b, 65535);
    u16(9);
    u16(1);
    b.insert(b.end(), {0x94, 0, 0, 0});
    u16(14);
    u16(8);
    put32(b, 100);
    put32(b, 0);
    put32(b, 0);
    put32(b, 16 + 8 + 12 + 4 + 4);
    // Interface 1: raw IP, if_tsresol 3 (milliseconds).
    put32(b, 1);
    put32(b, 20 + 8 + 4);
    u16(101);
    u16(0);
    put32(b, 65535);
    u16(9);
    u16(1);
    b.insert(b.end(), {3, 0, 0, 0});
    put32(b, 0);
    put32(b, 20 + 8 + 4);
    auto packet = [&](std::uint32_t iface, std::uint64_t units, const Bytes& frame) {
        const auto padded = static_cast<std::uint32_t>((frame.size() + 3) & ~std::size_t{3});
        put32(b, 6);
        put32(b, 32 + padded);
        put32(b, iface);
        put32(b, static_cast<std::uint32_t>(units >> 32));
        put32(b, static_cast<std::uint32_t>(units));
        put32(b, static_cast<std::uint32_t>(frame.size()));
        put32(b, static_cast<std::uint32_t>(frame.size()));
        b.insert(b.end(), frame.begin(), frame.end());
        b.insert(b.end(), padded - frame.size(), 0);
        put32(b, 32 + padded);
    };
    const Bytes eth = test::ethIpv4Udp("10.0.0.1", 1000, "10.0.0.2", 53, 10);
    const Bytes raw(eth.begin() + 14, eth.end());
    for (int i = 0; i < 3; ++i) packet(0, (std::uint64_t{1'700'000'000} << 20) + (1U << 19), eth);
    for (int i = 0; i < 2; ++i) packet(1, 1'700'000'000'123ULL, raw);
    for (int i = 0; i < 3; ++i) packet(0, std::uint64_t{1'700'000'001} << 20, eth);
    return b;
}

TEST_P(PcapStreamBothPaths, PcapngInterfacesKeepTheirOwnLinkTypeAndClock) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "two.pcapng", makeTwoInterfacePcapng());
    auto in = openFile(dir / "two.pcapng");
    EXPECT_EQ(in->linkType(), LinkType::Ethernet);
    std::vector<std::pair<LinkType, std::size_t>> blocks;
    std::vector<TimeNs> ts;
    for (;;) {
        PacketBlock block;
        if (in->read(block) == InputPlugin::Status::End) break;
        blocks.emplace_back(block.link, block.count);
        for (std::size_t i = 0; i < block.count; ++i) ts.push_back(block.packets[i].ts);
    }
    using P = std::pair<LinkType, std::size_t>;
    EXPECT_EQ(blocks, (std::vector<P>{P{LinkType::Ethernet, 3}, P{LinkType::Raw, 2},
                                      P{LinkType::Ethernet, 3}}))
        << "a block ends where the link type changes";
    ASSERT_EQ(ts.size(), 8U);
    EXPECT_EQ(ts[0], 1'700'000'100'500'000'000ULL) << "2^-20 units plus the 100 s offset";
    EXPECT_EQ(ts[3], 1'700'000'000'123'000'000ULL) << "milliseconds";
    EXPECT_EQ(ts[7], 1'700'000'101'000'000'000ULL);
    // The filter is compiled per link type: "udp" matches on both interfaces.
    auto filtered = openFile(dir / "two.pcapng", ";filter=udp");
    std::size_t n = 0;
    for (PacketBlock block; filtered->read(block) == InputPlugin::Status::Ok; block.clear())
        n += block.count;
    EXPECT_EQ(n, 8U);
    // And the same through gzip, and the packets are there when the pipe stalls.
    ASSERT_EQ(test::runShell("gzip -k '" + (dir / "two.pcapng").string() + "'").exitCode, 0);
    auto gz = openFile(dir / "two.pcapng.gz");
    n = 0;
    for (PacketBlock block; gz->read(block) == InputPlugin::Status::Ok; block.clear())
        n += block.count;
    EXPECT_EQ(n, 8U);
}

TEST_P(PcapStreamBothPaths, FilterWorksOnRawIpCaptures) {
    // LINKTYPE_RAW (101) in the file is DLT_RAW (12) for libpcap's filter compiler.
    Bytes b;
    put32(b, 0xa1b2c3d4);
    b.insert(b.end(), {2, 0, 4, 0});
    put32(b, 0);
    put32(b, 0);
    put32(b, 65535);
    put32(b, 101);
    const Bytes eth = test::ethIpv4Udp("10.0.0.1", 1000, "10.0.0.2", 53, 10);
    const Bytes tcp = test::ethIpv4Tcp("10.0.0.1", 1000, "10.0.0.2", 80, 0x02);
    for (const Bytes* f : {&eth, &tcp, &eth}) {
        put32(b, 1'700'000'000);
        put32(b, 0);
        put32(b, static_cast<std::uint32_t>(f->size() - 14));
        put32(b, static_cast<std::uint32_t>(f->size() - 14));
        b.insert(b.end(), f->begin() + 14, f->end());
    }
    const fs::path path = test::tempDir() / "raw.pcap";
    writeBytes(path, b);
    auto in = openFile(path, ";filter=udp port 53");
    PacketBlock block;
    ASSERT_EQ(in->read(block), InputPlugin::Status::Ok);
    EXPECT_EQ(block.link, LinkType::Raw);
    EXPECT_EQ(block.count, 2U);
}

TEST_P(PcapStreamBothPaths, JumboFramesStayValidWhileTheCoreHoldsTheirBlocks) {
    const fs::path path = test::tempDir() / "jumbo.pcap";
    writeBytes(path, makePcap(6000, 9000));
    auto in = openFile(path);
    EXPECT_EQ(readRecycled(*in, 9000), 6000U);
}

TEST_P(PcapStreamBothPaths, AFileThatGrowsWhileReadIsReadToItsEnd) {
    // tcpdump -w still writing: the file ends inside record 1000 when it is opened, the rest
    // comes later. The mapped reader reads on with read() from its mapping's end, the record
    // cut by that end assembled in a chunk.
    const fs::path path = test::tempDir() / "growing.pcap";
    const Bytes all = makePcap(3000, 700);
    const std::size_t atOpen = 24 + 1000 * (16 + 700) + 16 + 300;
    writeBytes(path, Bytes(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(atOpen)));
    auto reader = stream(path);
    ASSERT_TRUE(reader->valid());
    EXPECT_EQ(reader->mapped(), GetParam() == MapMode::On);
    std::uint32_t seq = 0;
    auto readSome = [&](std::uint32_t upTo) {
        while (seq < upTo) {
            reader->beginRead();
            for (int i = 0; i < 64 && seq < upTo; ++i) {
                RawPacket p;
                const auto r = reader->next(p, 65535, -1);
                if (r == input::PcapStream::Result::Budget) break;
                if (r != input::PcapStream::Result::Packet) return r;
                EXPECT_EQ(seqOf(p), seq);
                EXPECT_EQ(p.capLen, 700U);
                EXPECT_EQ(p.ts, (1'700'000'000ULL + seq / 1000) * 1'000'000'000ULL +
                                    (seq % 1000) * 1000ULL);
                ++seq;
            }
        }
        return input::PcapStream::Result::Packet;
    };
    readSome(500);
    {
        std::ofstream out(path, std::ios::binary | std::ios::app);
        out.write(reinterpret_cast<const char*>(all.data() + atOpen),
                  static_cast<std::streamsize>(all.size() - atOpen));
    }
    EXPECT_EQ(readSome(5000), input::PcapStream::Result::End) << reader->error();
    EXPECT_EQ(seq, 3000U);
}

TEST_P(PcapStreamBothPaths, OnlyRegularUncompressedFilesAreMapped) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "t.pcap", makePcap(10, 100));
    ASSERT_EQ(test::runShell("gzip -k '" + (dir / "t.pcap").string() + "'").exitCode, 0);
    EXPECT_EQ(stream(dir / "t.pcap")->mapped(), GetParam() == MapMode::On);
    EXPECT_FALSE(stream(dir / "t.pcap.gz")->mapped());
    int pipeFds[2] = {-1, -1};
    ASSERT_EQ(::pipe(pipeFds), 0);
    const Bytes b = makePcap(10, 100);
    ASSERT_EQ(::write(pipeFds[1], b.data(), b.size()), static_cast<ssize_t>(b.size()));
    ::close(pipeFds[1]);
    input::PcapStream piped(std::make_unique<ByteSource>(pipeFds[0], "pipe"), -1, GetParam());
    ASSERT_TRUE(piped.valid());
    EXPECT_FALSE(piped.mapped());
}

TEST(PcapStreamMapped, ACaptureThatDoesNotStartTheFileIsRead) {
    // Standard input redirected from a file someone read part of: the capture starts at the
    // descriptor's offset, not at the file's first byte, so the mapping's offsets would be off.
    const fs::path path = test::tempDir() / "offset.pcap";
    Bytes b(100, 0xee);
    const Bytes capture = makePcap(10, 100);
    b.insert(b.end(), capture.begin(), capture.end());
    writeBytes(path, b);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::lseek(fd, 100, SEEK_SET), 100);
    input::PcapStream stream(std::make_unique<ByteSource>(fd, path.string()), -1, MapMode::On);
    ASSERT_TRUE(stream.valid());
    EXPECT_FALSE(stream.mapped());
    stream.beginRead();
    std::uint32_t seq = 0;
    RawPacket p;
    while (stream.next(p, 65535, -1) == input::PcapStream::Result::Packet) {
        EXPECT_EQ(seqOf(p), seq++);
    }
    EXPECT_EQ(seq, 10U);
}

/// Resident file-backed memory of this process, bytes (/proc/self/status RssFile).
std::uint64_t rssFile() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        std::uint64_t kb = 0;
        if (key == "RssFile:" && status >> kb) return kb * 1024;
        status.ignore(1 << 20, '\n');
    }
    return 0;
}

TEST(PcapStreamMapped, ResidentMemoryStaysBoundedWhateverTheFileSize) {
    // 120 MB of 1500-byte frames through the mapping, read as the core reads: the pages behind
    // the oldest read in flight are unmapped, so the file's resident part stays a few windows.
    const fs::path path = test::tempDir() / "big.pcap";
    writeBytes(path, makePcap(80000, 1500));
    const std::uint64_t before = rssFile();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    input::PcapStream stream(std::make_unique<ByteSource>(fd, path.string()), -1, MapMode::On);
    ASSERT_TRUE(stream.mapped());
    std::uint64_t peak = 0;
    std::uint32_t seq = 0;
    for (std::uint64_t reads = 0;; ++reads) {
        stream.beginRead();
        RawPacket p;
        input::PcapStream::Result r = input::PcapStream::Result::Packet;
        for (int i = 0; i < 64; ++i) {
            r = stream.next(p, 65535, -1);
            if (r != input::PcapStream::Result::Packet) break;
            ASSERT_EQ(seqOf(p), seq++);
        }
        if (reads % 50 == 0) peak = std::max(peak, rssFile());
        if (r == input::PcapStream::Result::End) break;
        ASSERT_NE(r, input::PcapStream::Result::Error) << stream.error();
    }
    EXPECT_EQ(seq, 80000U);
    const std::uint64_t grown = peak > before ? peak - before : 0;
    EXPECT_LT(grown, std::uint64_t{40} << 20)
        << "a 120 MB file left " << (grown >> 20) << " MiB resident";
}

/// Every packet of `path` as the read path and the mapped path deliver it, compared in step:
/// data, lengths, timestamps, link types, and how the stream ends. Returns the packets read.
std::uint64_t compareMappedWithRead(const fs::path& path, std::uint32_t snaplen) {
    auto open = [&](MapMode mode) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        return std::make_unique<input::PcapStream>(std::make_unique<ByteSource>(fd, path.string()),
                                                   -1, mode);
    };
    auto read = open(MapMode::Off);
    auto mapped = open(MapMode::On);
    EXPECT_EQ(read->valid(), mapped->valid()) << path;
    if (!read->valid()) return 0;
    EXPECT_TRUE(mapped->mapped() || path.extension() == ".gz") << path;
    EXPECT_EQ(read->linkType(), mapped->linkType()) << path;
    std::uint64_t packets = 0;
    for (bool more = true; more;) {
        read->beginRead();
        mapped->beginRead();
        for (int i = 0; i < 64; ++i) {
            RawPacket a;
            RawPacket b;
            const auto ra = read->next(a, snaplen, -1);
            const auto rb = mapped->next(b, snaplen, -1);
            EXPECT_EQ(ra, rb) << path << " packet " << packets;
            if (ra != rb) return packets;
            if (ra == input::PcapStream::Result::Budget) break;
            if (ra != input::PcapStream::Result::Packet) {
                EXPECT_EQ(read->error(), mapped->error()) << path;
                more = false;
                break;
            }
            EXPECT_EQ(a.ts, b.ts) << path << " packet " << packets;
            EXPECT_EQ(a.capLen, b.capLen) << path << " packet " << packets;
            EXPECT_EQ(a.wireLen, b.wireLen) << path << " packet " << packets;
            EXPECT_EQ(read->packetLinkType(), mapped->packetLinkType()) << path;
            if (a.capLen != b.capLen || std::memcmp(a.data, b.data, a.capLen) != 0) {
                ADD_FAILURE() << path << ": packet " << packets << " differs";
                return packets;
            }
            ++packets;
        }
    }
    EXPECT_EQ(read->oversized(), mapped->oversized()) << path;
    EXPECT_EQ(read->badTimestamps(), mapped->badTimestamps()) << path;
    return packets;
}

TEST(PcapStreamMapped, DeliversTheSamePacketsAsTheReadPathOnTheProjectsCaptures) {
    std::uint64_t files = 0;
    std::uint64_t packets = 0;
    for (const auto& entry : fs::directory_iterator(test::sourceDir() / "pcaps")) {
        if (entry.path().extension() != ".pcap" && entry.path().extension() != ".pcapng") continue;
        ++files;
        packets += compareMappedWithRead(entry.path(), 65535);
        packets += compareMappedWithRead(entry.path(), 64);
    }
    EXPECT_GE(files, 10U);
    EXPECT_GT(packets, 1000U);
}

TEST(PcapStreamMapped, DeliversTheSamePacketsAsTheReadPathOnThirdPartyCaptures) {
    const fs::path root = test::testdataDir();
    if (root.empty() || !fs::exists(root)) GTEST_SKIP() << "no shared test data";
    std::uint64_t files = 0;
    std::uint64_t packets = 0;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const std::string name = entry.path().filename().string();
        const bool capture = name.ends_with(".pcap") || name.ends_with(".pcapng") ||
                             name.ends_with(".cap") || name.ends_with(".pcap.gz");
        if (!entry.is_regular_file() || !capture) continue;
        ++files;
        packets += compareMappedWithRead(entry.path(), 65535);
    }
    if (files == 0) GTEST_SKIP() << "no captures under " << root;
    EXPECT_GT(packets, 10000U) << files << " files";
}

}  // namespace
}  // namespace rowprobe::input
