// map=auto (input/pcap/read_method.hpp): the choice between read() and the memory map from two
// measured costs, the record walk the measurement shares with rowprobe-bench-read, the
// measurement itself (no effect on the stream, no failure), and a capture above the size
// threshold read by map=auto exactly as by map=off, whichever way it picks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "input/pcap/pcap_input.hpp"
#include "input/pcap/pcap_stream.hpp"
#include "input/pcap/read_method.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::input {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

void put32(Bytes& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// A nanosecond pcap's file header: version 2.4, snaplen 262144, Ethernet.
Bytes pcapHeader() {
    return {0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0};
}

/// Record `seq`: an Ethernet/IPv4/UDP frame of `size` bytes carrying `seq` at byte 60.
void putRecord(Bytes& b, std::uint32_t seq, std::uint32_t size) {
    put32(b, 1'700'000'000 + seq / 1000);
    put32(b, (seq % 1000) * 1000);
    put32(b, size);
    put32(b, size);
    static const Bytes frame = test::ethIpv4Udp("10.0.0.1", 1000, "10.0.0.2", 53, 1500);
    const std::size_t at = b.size();
    b.insert(b.end(), frame.begin(), frame.begin() + size);
    std::memcpy(b.data() + at + 60, &seq, 4);
}

/// A classic pcap of `count` records of `size`-byte frames, written a few MiB at a time.
void writeCapture(const fs::path& path, std::uint32_t count, std::uint32_t size) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    Bytes b = pcapHeader();
    for (std::uint32_t i = 0; i < count; ++i) {
        putRecord(b, i, size);
        if (b.size() >= (std::size_t{4} << 20) || i + 1 == count) {
            ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
            b.clear();
        }
    }
    ASSERT_EQ(std::fclose(f), 0);
}

std::uint32_t seqOf(const RawPacket& p) {
    std::uint32_t v = 0;
    std::memcpy(&v, p.data + 60, 4);
    return v;
}

constexpr FileFacts kBigFile{
    .regular = true, .gzip = false, .atStart = true, .size = kMeasureMinFileBytes};

ReadCosts costs(std::uint64_t readNs, std::uint64_t mapNs) {
    return {.measured = true, .readNsPerMiB = readNs, .mapNsPerMiB = mapNs};
}

// --- the decision --------------------------------------------------------------------------

TEST(ReadMethodChoice, TheMapOnlyAtOrBelowTheRatioOfReadsCost) {
    static_assert(kMapCostRatio == 0.85);
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(100'000, 50'000)), ReadMethod::Map);
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(100'000, 85'000)), ReadMethod::Map);
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(100'000, 85'001)), ReadMethod::Read);
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(100'000, 95'000)), ReadMethod::Read)
        << "a little cheaper is noise: read()";
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(50'000, 100'000)), ReadMethod::Read);
}

TEST(ReadMethodChoice, ReadOnTies) {
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(100'000, 100'000)), ReadMethod::Read);
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(0, 0)), ReadMethod::Read);
}

TEST(ReadMethodChoice, ReadWhenTheMeasurementFailed) {
    ReadCosts failed = costs(100'000, 10'000);
    failed.measured = false;
    EXPECT_EQ(chooseReadMethod(kBigFile, failed), ReadMethod::Read);
    EXPECT_EQ(chooseReadMethod(kBigFile, ReadCosts{}), ReadMethod::Read);
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(0, 10'000)), ReadMethod::Read)
        << "no cost for read() is no measurement";
}

TEST(ReadMethodChoice, ReadBelowTheSizeThresholdWithoutMeasuring) {
    FileFacts small = kBigFile;
    small.size = kMeasureMinFileBytes - 1;
    EXPECT_FALSE(worthMeasuring(small));
    EXPECT_EQ(chooseReadMethod(small, costs(100'000, 10'000)), ReadMethod::Read);
    EXPECT_TRUE(worthMeasuring(kBigFile));
    EXPECT_EQ(chooseReadMethod(kBigFile, costs(100'000, 10'000)), ReadMethod::Map);
}

TEST(ReadMethodChoice, ReadForPipesGzipAndCapturesNotAtTheFilesStart) {
    FileFacts pipe = kBigFile;
    pipe.regular = false;
    FileFacts gzip = kBigFile;
    gzip.gzip = true;
    FileFacts offset = kBigFile;
    offset.atStart = false;
    for (const FileFacts& f : {pipe, gzip, offset}) {
        EXPECT_FALSE(worthMeasuring(f));
        EXPECT_EQ(chooseReadMethod(f, costs(100'000, 10'000)), ReadMethod::Read);
    }
}

TEST(ReadMethodChoice, TheRegionGrowsWithTheFileWithinItsBounds) {
    EXPECT_EQ(measureBytes(0), kMeasureMinBytes);
    EXPECT_EQ(measureBytes(kMeasureMinFileBytes), kMeasureMinFileBytes / kMeasureShare);
    EXPECT_GE(measureBytes(kMeasureMinFileBytes), kMeasureMinBytes);
    EXPECT_EQ(measureBytes(std::uint64_t{3} << 30), (std::size_t{3} << 30) / kMeasureShare);
    EXPECT_EQ(measureBytes(std::uint64_t{1} << 40), kMeasureMaxBytes);
}

// --- the record walk -----------------------------------------------------------------------

TEST(RecordWalk, WalksWholeClassicRecordsAndStopsAtACutOne) {
    Bytes b;
    for (std::uint32_t i = 0; i < 3; ++i) putRecord(b, i, 100 + i);
    const std::size_t whole = b.size();
    putRecord(b, 3, 200);
    b.resize(b.size() - 50);  // the last record cut
    RecordWalk w;
    std::vector<std::size_t> at;
    EXPECT_EQ(walkRecords(b.data(), b.size(), {}, w, [&](std::size_t pos) { at.push_back(pos); }),
              whole);
    EXPECT_EQ(w.records, 3U);
    EXPECT_FALSE(w.corrupt);
    EXPECT_EQ(at, (std::vector<std::size_t>{0, 116, 233}));
}

TEST(RecordWalk, StopsAtALengthNoCaptureHas) {
    Bytes b;
    putRecord(b, 0, 100);
    const std::size_t whole = b.size();
    put32(b, 0);
    put32(b, 0);
    put32(b, kMaxCapLen + 1);
    put32(b, 64);
    b.resize(b.size() + 64);
    RecordWalk w;
    EXPECT_EQ(walkRecords(b.data(), b.size(), {}, w, [](std::size_t) {}), whole);
    EXPECT_TRUE(w.corrupt);
}

TEST(RecordWalk, WalksPcapngBlocksInEitherByteOrder) {
    // Three enhanced packet blocks of 100 + 28 + 4 bytes, little-endian, then the same swapped.
    Bytes le;
    for (int i = 0; i < 3; ++i) {
        put32(le, 6);
        put32(le, 132);
        le.resize(le.size() + 120);
        put32(le, 132);
    }
    RecordWalk w;
    EXPECT_EQ(walkRecords(le.data(), le.size(), {.pcapng = true}, w, [](std::size_t) {}), 396U);
    EXPECT_EQ(w.records, 3U);
    Bytes be(le);
    for (std::size_t at = 0; at < be.size(); at += 132) {
        for (std::size_t f : {at, at + 4, at + 128})
            std::reverse(be.begin() + f, be.begin() + f + 4);
    }
    RecordWalk ws;
    EXPECT_EQ(walkRecords(be.data(), be.size(), {.pcapng = true, .swapped = true}, ws,
                          [](std::size_t) {}),
              396U);
    RecordWalk wrong;
    walkRecords(be.data(), be.size(), {.pcapng = true}, wrong, [](std::size_t) {});
    EXPECT_TRUE(wrong.corrupt) << "a byte-swapped length is no length";
}

// --- the measurement -----------------------------------------------------------------------

/// A 2 MiB buffer as the stream's chunk.
struct Buffer {
    static constexpr std::size_t kBytes = PcapStream::kChunkBytes;
    std::unique_ptr<std::uint8_t[]> mem{new std::uint8_t[kBytes]};
};

TEST(ReadMeasurement, MeasuresBothWaysAndLeavesTheDescriptorAtTheFirstRecord) {
    const fs::path path = test::tempDir() / "six.pcap";
    writeCapture(path, 6 * 700, 1500);  // ~6.4 MB
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::uint8_t header[24];
    ASSERT_EQ(::read(fd, header, sizeof header), 24);
    Buffer buffer;
    const ReadCosts c = measureReadCosts(fd, fs::file_size(path), 24, {}, buffer.mem.get(),
                                         Buffer::kBytes, std::size_t{4} << 20);
    EXPECT_TRUE(c.measured);
    EXPECT_GT(c.readNsPerMiB, 0U);
    EXPECT_GT(c.mapNsPerMiB, 0U);
    EXPECT_GT(c.totalNs, 0U);
    EXPECT_EQ(c.regionBytes, (std::uint64_t{4} << 20) / 1516 * 1516) << "whole records only";
    // The descriptor is where the stream left it: the next read() is record 0.
    EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 24);
    std::uint8_t first[16 + 64];
    ASSERT_EQ(::read(fd, first, sizeof first), static_cast<ssize_t>(sizeof first));
    std::uint32_t seq = 1;
    std::memcpy(&seq, first + 16 + 60, 4);
    EXPECT_EQ(seq, 0U);
    ::close(fd);
}

TEST(ReadMeasurement, AnyFailureIsNoMeasurementNeverAnError) {
    Buffer buffer;
    const fs::path dir = test::tempDir();
    // Not records: 8 MiB of 0xff (every length too large).
    {
        std::FILE* f = std::fopen((dir / "junk").c_str(), "wb");
        const std::vector<char> junk(std::size_t{8} << 20, static_cast<char>(0xff));
        std::fwrite(junk.data(), 1, junk.size(), f);
        std::fclose(f);
    }
    const int junk = ::open((dir / "junk").c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_FALSE(measureReadCosts(junk, std::uint64_t{8} << 20, 24, {}, buffer.mem.get(),
                                  Buffer::kBytes, std::size_t{4} << 20)
                     .measured);
    // A file shorter than it was said to be (it shrank): no bytes where the region should be.
    writeCapture(dir / "short.pcap", 10, 100);
    const int shrunk = ::open((dir / "short.pcap").c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_FALSE(measureReadCosts(shrunk, std::uint64_t{8} << 20, 24, {}, buffer.mem.get(),
                                  Buffer::kBytes, std::size_t{4} << 20)
                     .measured);
    // A pipe: no pread, no mapping.
    int fds[2] = {-1, -1};
    ASSERT_EQ(::pipe(fds), 0);
    EXPECT_FALSE(measureReadCosts(fds[0], std::uint64_t{8} << 20, 24, {}, buffer.mem.get(),
                                  Buffer::kBytes, std::size_t{4} << 20)
                     .measured);
    // A buffer too small for a read and the longest record.
    EXPECT_FALSE(measureReadCosts(junk, std::uint64_t{8} << 20, 24, {}, buffer.mem.get(), kReadStep,
                                  std::size_t{4} << 20)
                     .measured);
    for (int fd : {junk, shrunk, fds[0], fds[1]}) ::close(fd);
}

TEST(ReadMeasurement, VerboseSaysHowAFileIsReadAndAutoIsTheDefault) {
    const fs::path path = test::tempDir() / "small.pcap";
    writeCapture(path, 10, 100);
    auto said = [&](const std::string& more) {
        ::testing::internal::CaptureStderr();
        auto in = Registry::instance().createAs<PcapInput>(
            PluginKind::Input, "pcap;file=" + path.string() + more, "-i");
        return ::testing::internal::GetCapturedStderr();
    };
    EXPECT_NE(said(";v").find("is read with read() (map=auto: files below 1024 MiB are not "
                              "measured)"),
              std::string::npos)
        << said(";v");
    EXPECT_NE(said(";verbose;map=on").find("is read through a memory map (map=on)"),
              std::string::npos);
    EXPECT_NE(said(";v;map=off").find("is read with read() (map=off)"), std::string::npos);
    EXPECT_EQ(said(""), "") << "silent without verbose";
}

// --- a capture above the threshold ---------------------------------------------------------

TEST(ReadMeasurement, AutoReadsACaptureAboveTheThresholdAsReadDoesWhicheverWayItPicks) {
    // Just above kMeasureMinFileBytes: 1500-byte frames, each numbered.
    const fs::path path = test::tempDir() / "big.pcap";
    const auto count = static_cast<std::uint32_t>(kMeasureMinFileBytes / 1516 + 100);
    writeCapture(path, count, 1500);
    auto open = [&](MapMode mode, int* dupOut = nullptr) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (dupOut != nullptr) *dupOut = ::dup(fd);  // shares the offset
        return std::make_unique<PcapStream>(std::make_unique<ByteSource>(fd, path.string()), -1,
                                            mode);
    };
    int probe = -1;
    auto autoStream = open(MapMode::Auto, &probe);
    auto readStream = open(MapMode::Off);
    ASSERT_TRUE(autoStream->valid());
    const ReadCosts& c = autoStream->readCosts();
    EXPECT_TRUE(c.measured) << autoStream->describeReadMethod();
    const bool map =
        chooseReadMethod(
            {.regular = true, .gzip = false, .atStart = true, .size = fs::file_size(path)}, c) ==
        ReadMethod::Map;
    EXPECT_EQ(autoStream->mapped(), map) << autoStream->describeReadMethod();
    std::printf("map=auto picked: %s\n", autoStream->describeReadMethod().c_str());
    // The measurement left the descriptor after the file header: the first record comes next.
    EXPECT_EQ(::lseek(probe, 0, SEEK_CUR), 24);
    ::close(probe);
    std::uint64_t packets = 0;
    for (bool more = true; more;) {
        autoStream->beginRead();
        readStream->beginRead();
        for (int i = 0; i < 64; ++i) {
            RawPacket a;
            RawPacket b;
            const auto ra = autoStream->next(a, 65535, -1);
            const auto rb = readStream->next(b, 65535, -1);
            ASSERT_EQ(ra, rb) << "packet " << packets;
            if (ra == PcapStream::Result::Budget) break;
            if (ra != PcapStream::Result::Packet) {
                ASSERT_EQ(ra, PcapStream::Result::End) << autoStream->error();
                more = false;
                break;
            }
            if (packets == 0) {
                ASSERT_EQ(seqOf(a), 0U) << "the first packet is the file's first";
            }
            ASSERT_EQ(a.ts, b.ts) << "packet " << packets;
            ASSERT_EQ(a.capLen, b.capLen) << "packet " << packets;
            ASSERT_EQ(a.wireLen, b.wireLen) << "packet " << packets;
            ASSERT_EQ(std::memcmp(a.data, b.data, a.capLen), 0) << "packet " << packets;
            ASSERT_EQ(seqOf(a), packets);
            ++packets;
        }
    }
    EXPECT_EQ(packets, count);
    autoStream.reset();
    readStream.reset();
    fs::remove(path);
}

}  // namespace
}  // namespace rowprobe::input
