// The classic pcap reader behind the `pcap` input (input/pcap/pcap_stream.hpp): gzip'd captures
// read by streaming, bounded buffer memory whatever the file size, and packets that stay valid
// for as long as the core may hold their block.
#include "input/pcap/pcap_stream.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

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

TEST(PcapStream, ReadsGzipCompressedPcapWithoutATemporaryFile) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "t.pcap", makePcap(3000, 300));
    ASSERT_EQ(test::runShell("gzip -k -c '" + (dir / "t.pcap").string() + "' > '" +
                             (dir / "t.pcap.gz").string() + "'")
                  .exitCode,
              0);
    auto in = open("pcap;file=" + (dir / "t.pcap.gz").string());
    EXPECT_EQ(readRecycled(*in, 300), 3000U);
    EXPECT_EQ(in->stats().received, 3000U);
}

TEST(PcapStream, ReadsConcatenatedGzipMembersAndGzipPcapng) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "a.pcap", makePcap(100, 200));
    // Two members: the second a whole second pcap would be garbage, so split one file in two.
    ASSERT_EQ(test::runShell("cd '" + dir.string() +
                             "' && head -c 10000 a.pcap | gzip > two.gz && tail -c +10001 a.pcap "
                             "| gzip >> two.gz")
                  .exitCode,
              0);
    auto in = open("pcap;file=" + (dir / "two.gz").string());
    EXPECT_EQ(readRecycled(*in, 200), 100U);

    if (test::runShell("command -v editcap").exitCode != 0) GTEST_SKIP() << "no editcap";
    ASSERT_EQ(test::runShell("cd '" + dir.string() +
                             "' && editcap -F pcapng a.pcap a.pcapng && gzip -k a.pcapng")
                  .exitCode,
              0);
    auto ng = open("pcap;file=" + (dir / "a.pcapng.gz").string());
    EXPECT_EQ(readRecycled(*ng, 200), 100U);
}

TEST(PcapStream, TruncatedGzipIsAnErrorAfterTheWholePackets) {
    const fs::path dir = test::tempDir();
    writeBytes(dir / "t.pcap", makePcap(2000, 300));
    ASSERT_EQ(
        test::runShell(
            "cd '" + dir.string() +
            "' && gzip -c t.pcap > t.gz && head -c $(( $(stat -c %s t.gz) / 2 )) t.gz > cut.gz")
            .exitCode,
        0);
    auto in = open("pcap;file=" + (dir / "cut.gz").string());
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

TEST(PcapStream, BufferMemoryStaysBoundedWhateverTheFileSize) {
    // 60 MB of 1500-byte frames read with the core's 32 recycled blocks: a few 2 MiB chunks.
    const fs::path path = test::tempDir() / "big.pcap";
    writeBytes(path, makePcap(40000, 1500));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    PcapStream stream(std::make_unique<ByteSource>(fd, path.string()));
    ASSERT_TRUE(stream.valid());
    std::uint32_t seq = 0;
    for (bool more = true; more;) {
        stream.beginRead();
        for (int i = 0; i < 64; ++i) {
            RawPacket p;
            const auto r = stream.next(p, 65535, -1);
            if (r == PcapStream::Result::Budget) break;
            if (r != PcapStream::Result::Packet) {
                ASSERT_EQ(r, PcapStream::Result::End) << stream.error();
                more = false;
                break;
            }
            ASSERT_EQ(seqOf(p), seq++);
        }
    }
    EXPECT_EQ(seq, 40000U);
    EXPECT_LE(stream.chunksAllocated(), 3U) << "40 reads of 64 x 1516 B span ~4 MB";
    EXPECT_LE(PcapStream::kMaxChunks * PcapStream::kChunkBytes, std::size_t{48} << 20);
}

TEST(PcapStream, JumboFramesStayValidWhileTheCoreHoldsTheirBlocks) {
    const fs::path path = test::tempDir() / "jumbo.pcap";
    writeBytes(path, makePcap(6000, 9000));
    auto in = open("pcap;file=" + path.string());
    EXPECT_EQ(readRecycled(*in, 9000), 6000U);
}

}  // namespace
}  // namespace rowprobe::input
