#include "input/pcap/pcap_input.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "live_traffic.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::input {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

fs::path scratchFile(const std::string& name) {
    static const fs::path dir = test::tempDir();  // removed when the test process exits
    return dir / name;
}

struct Frame {
    std::uint64_t tsNs;
    Bytes data;
    std::uint32_t wireLen = 0;  ///< 0: same as data.size()
};

void putU16(Bytes& b, std::uint16_t v) {
    b.insert(b.end(), {std::uint8_t(v), std::uint8_t(v >> 8)});
}
void putU32(Bytes& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}

void writeFile(const fs::path& path, const Bytes& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
}

/// Classic pcap, little-endian, microsecond (0xa1b2c3d4) or nanosecond (0xa1b23c4d) magic.
void writePcap(const fs::path& path, bool nano, std::uint32_t linkType,
               const std::vector<Frame>& frames) {
    Bytes b;
    putU32(b, nano ? 0xa1b23c4d : 0xa1b2c3d4);
    putU16(b, 2);
    putU16(b, 4);
    putU32(b, 0);
    putU32(b, 0);
    putU32(b, 262144);
    putU32(b, linkType);
    for (const Frame& f : frames) {
        putU32(b, static_cast<std::uint32_t>(f.tsNs / 1'000'000'000));
        const auto frac = static_cast<std::uint32_t>(f.tsNs % 1'000'000'000);
        putU32(b, nano ? frac : frac / 1000);
        putU32(b, static_cast<std::uint32_t>(f.data.size()));
        putU32(b, f.wireLen != 0 ? f.wireLen : static_cast<std::uint32_t>(f.data.size()));
        b.insert(b.end(), f.data.begin(), f.data.end());
    }
    writeFile(path, b);
}

/// pcapng: one section, one interface with if_tsresol = 10^-`tsresol`, enhanced packet blocks.
void writePcapng(const fs::path& path, std::uint8_t tsresol, std::uint16_t linkType,
                 const std::vector<Frame>& frames) {
    Bytes b;
    // Section header block.
    putU32(b, 0x0A0D0D0A);
    putU32(b, 28);
    putU32(b, 0x1A2B3C4D);
    putU16(b, 1);
    putU16(b, 0);
    putU32(b, 0xFFFFFFFF);
    putU32(b, 0xFFFFFFFF);
    putU32(b, 28);
    // Interface description block with if_tsresol.
    putU32(b, 1);
    putU32(b, 32);
    putU16(b, linkType);
    putU16(b, 0);
    putU32(b, 262144);
    putU16(b, 9);  // if_tsresol
    putU16(b, 1);
    b.insert(b.end(), {tsresol, 0, 0, 0});
    putU32(b, 0);  // opt_endofopt
    putU32(b, 32);
    std::uint64_t unitsPerSec = 1;
    for (int i = 0; i < tsresol; ++i) unitsPerSec *= 10;
    for (const Frame& f : frames) {
        const std::uint32_t padded = (static_cast<std::uint32_t>(f.data.size()) + 3) & ~3U;
        const std::uint32_t total = 32 + padded;
        putU32(b, 6);
        putU32(b, total);
        putU32(b, 0);  // interface id
        const std::uint64_t ts = f.tsNs / (1'000'000'000 / unitsPerSec);
        putU32(b, static_cast<std::uint32_t>(ts >> 32));
        putU32(b, static_cast<std::uint32_t>(ts));
        putU32(b, static_cast<std::uint32_t>(f.data.size()));
        putU32(b, f.wireLen != 0 ? f.wireLen : static_cast<std::uint32_t>(f.data.size()));
        b.insert(b.end(), f.data.begin(), f.data.end());
        b.insert(b.end(), padded - f.data.size(), 0);
        putU32(b, total);
    }
    writeFile(path, b);
}

/// Ethernet + IPv4 + UDP (or TCP) frame whose payload starts with `seq`, `size` bytes in all.
Bytes ethFrame(std::uint32_t seq, std::size_t size = 64, bool tcp = false) {
    Bytes f(size < 64 ? 64 : size, 0);
    const std::uint8_t head[] = {0x02, 0, 0,    0,    0,    0x02, 0x02, 0,
                                 0,    0, 0,    0x01, 0x08, 0x00, 0x45, 0,
                                 0,    0, 0,    0,    0,    0,    64,   std::uint8_t(tcp ? 6 : 17),
                                 0,    0, 192,  0,    2,    1,    192,  0,
                                 2,    2, 0x30, 0x39, 0x00, 0x35};
    std::memcpy(f.data(), head, sizeof head);
    const auto ipLen = static_cast<std::uint16_t>(f.size() - 14);
    f[16] = std::uint8_t(ipLen >> 8);
    f[17] = std::uint8_t(ipLen);
    if (tcp) f[46] = 0x50;  // TCP data offset
    std::memcpy(f.data() + 56, &seq, sizeof seq);
    return f;
}

std::uint32_t seqOf(const RawPacket& p) {
    std::uint32_t seq = 0;
    std::memcpy(&seq, p.data + 56, sizeof seq);
    return seq;
}

std::unique_ptr<PcapInput> open(const std::string& text) {
    return Registry::instance().createAs<PcapInput>(PluginKind::Input, text, "-i");
}

ConfigError openError(const std::string& text) {
    try {
        open(text);
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for " << text;
    return ConfigError({});
}

/// Reads everything, block by block.
std::vector<RawPacket> readAll(PcapInput& in, std::vector<std::unique_ptr<PacketBlock>>& blocks) {
    std::vector<RawPacket> all;
    while (true) {
        blocks.push_back(std::make_unique<PacketBlock>());
        PacketBlock& block = *blocks.back();
        const auto status = in.read(block);
        if (status == InputPlugin::Status::End) {
            EXPECT_EQ(block.count, 0U);
            break;
        }
        EXPECT_EQ(status, InputPlugin::Status::Ok);  // files never time out
        EXPECT_GT(block.count, 0U);
        for (std::size_t i = 0; i < block.count; ++i) all.push_back(block.packets[i]);
    }
    return all;
}

constexpr std::uint64_t kT0 = 1'700'000'000'001'289'368ULL;

TEST(PcapInput, IsRegisteredWithItsOptions) {
    const auto* entry = Registry::instance().find(PluginKind::Input, "pcap");
    ASSERT_NE(entry, nullptr);
    std::vector<std::string> names;
    for (const auto& o : entry->info.options)
        names.emplace_back(std::string(o.name) + "/" + std::string(o.shortName));
    EXPECT_EQ(names, (std::vector<std::string>{"file/f", "ifc/i", "filter/F", "snaplen/s",
                                               "promisc/p", "timeout/", "map/", "verbose/v"}));
}

TEST(PcapInput, BadMapValueNamesTheChoicesAndAGuess) {
    const fs::path path = scratchFile("map.pcap");
    writePcap(path, true, 1, {});
    const ConfigError e = openError("pcap;file=" + path.string() + ";map=of");
    EXPECT_EQ(e.details().option, "map");
    EXPECT_EQ(e.details().value, "of");
    EXPECT_EQ(e.details().choices, (std::vector<std::string>{"off", "on", "auto"}));
    const std::string text = e.render();
    EXPECT_NE(text.find("did you mean 'off'"), std::string::npos) << text;
}

TEST(PcapInput, ReadsNanosecondPcapWithExactTimestampsAndLengths) {
    const fs::path path = scratchFile("nano.pcap");
    writePcap(path, true, 1,
              {{kT0, ethFrame(1)},
               {kT0 + 1, ethFrame(2, 100), 1514},
               {kT0 + 5'000'000'000, ethFrame(3, 1514)}});
    auto in = open("pcap;file=" + path.string());
    EXPECT_FALSE(in->live());
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 3U);
    EXPECT_EQ(blocks[0]->link, LinkType::Ethernet);
    EXPECT_EQ(pkts[0].ts, kT0);
    EXPECT_EQ(pkts[1].ts, kT0 + 1);
    EXPECT_EQ(pkts[2].ts, kT0 + 5'000'000'000);
    EXPECT_EQ(pkts[0].capLen, 64U);
    EXPECT_EQ(pkts[0].wireLen, 64U);
    EXPECT_EQ(pkts[1].capLen, 100U);
    EXPECT_EQ(pkts[1].wireLen, 1514U);
    EXPECT_EQ(pkts[2].capLen, 1514U);
    EXPECT_EQ(std::memcmp(pkts[2].data, ethFrame(3, 1514).data(), 1514), 0);
    EXPECT_EQ(in->stats().received, 3U);
    EXPECT_EQ(in->read(*blocks.back()), InputPlugin::Status::End);  // stays at the end
}

TEST(PcapInput, ReadsMicrosecondPcapAsNanoseconds) {
    const fs::path path = scratchFile("micro.pcap");
    writePcap(path, false, 1, {{kT0, ethFrame(1)}, {kT0 + 999, ethFrame(2)}});
    auto in = open("pcap;f=" + path.string());
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 2U);
    EXPECT_EQ(pkts[0].ts, 1'700'000'000'001'289'000ULL);  // microseconds, scaled
    EXPECT_EQ(pkts[1].ts, 1'700'000'000'001'290'000ULL);
}

TEST(PcapInput, ReadsPcapngWithNanosecondAndMicrosecondResolution) {
    for (const std::uint8_t tsresol : {std::uint8_t{9}, std::uint8_t{6}}) {
        const fs::path path = scratchFile("trace" + std::to_string(tsresol) + ".pcapng");
        writePcapng(path, tsresol, 1,
                    {{kT0, ethFrame(7, 61 + 64)}, {kT0 + 2'000, ethFrame(8), 1500}});
        auto in = open("pcap;file=" + path.string());
        std::vector<std::unique_ptr<PacketBlock>> blocks;
        const auto pkts = readAll(*in, blocks);
        ASSERT_EQ(pkts.size(), 2U) << int(tsresol);
        EXPECT_EQ(blocks[0]->link, LinkType::Ethernet);
        const std::uint64_t unit = tsresol == 9 ? 1 : 1000;
        EXPECT_EQ(pkts[0].ts, kT0 / unit * unit);
        EXPECT_EQ(pkts[1].ts, (kT0 + 2'000) / unit * unit);
        EXPECT_EQ(pkts[0].capLen, 125U);
        EXPECT_EQ(pkts[1].capLen, 64U);
        EXPECT_EQ(pkts[1].wireLen, 1500U);
        EXPECT_EQ(seqOf(pkts[0]), 7U);
        EXPECT_EQ(seqOf(pkts[1]), 8U);
    }
}

TEST(PcapInput, SplitsIntoBlocksOfAtMost64InOrder) {
    const fs::path path = scratchFile("many.pcap");
    std::vector<Frame> frames;
    for (std::uint32_t i = 0; i < 150; ++i) frames.push_back({kT0 + i, ethFrame(i)});
    writePcap(path, true, 1, frames);
    auto in = open("pcap;file=" + path.string());
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 150U);
    ASSERT_EQ(blocks.size(), 4U);  // 64 + 64 + 22 + the empty End block
    EXPECT_EQ(blocks[0]->count, 64U);
    EXPECT_EQ(blocks[1]->count, 64U);
    EXPECT_EQ(blocks[2]->count, 22U);
    for (std::uint32_t i = 0; i < 150; ++i) ASSERT_EQ(seqOf(pkts[i]), i);
}

TEST(PcapInput, FrameThatOverflowsTheArenaOpensTheNextBlockAndIsNotLost) {
    const fs::path path = scratchFile("jumbo.pcap");
    std::vector<Frame> frames;
    for (std::uint32_t i = 0; i < 100; ++i) frames.push_back({kT0 + i, ethFrame(i, 9000)});
    writePcap(path, true, 1, frames);
    // pcapng goes through libpcap, which copies into the block's arena.
    const fs::path ng = scratchFile("jumbo.pcapng");
    writePcapng(ng, 9, 1, frames);
    auto in = open("pcap;file=" + ng.string());
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 100U);
    EXPECT_LT(blocks[0]->count, 64U);  // the 256 KiB arena, not the packet count, ended it
    for (std::uint32_t i = 0; i < 100; ++i) {
        ASSERT_EQ(seqOf(pkts[i]), i);
        ASSERT_EQ(pkts[i].ts, kT0 + i);
        ASSERT_EQ(pkts[i].capLen, 9000U);
    }
}

TEST(PcapInput, PlainFilesAreDeliveredWithoutCopying) {
    const fs::path path = scratchFile("mapped.pcap");
    std::vector<Frame> frames;
    for (std::uint32_t i = 0; i < 100; ++i) frames.push_back({kT0 + i, ethFrame(i, 9000)});
    writePcap(path, true, 1, frames);
    auto in = open("pcap;file=" + path.string());
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 100U);
    // No arena limit (28 such frames): frames stay in the read buffers; a block ends at 64
    // frames or at the reader's byte budget per block.
    EXPECT_EQ(blocks[0]->count, PcapStream::kReadBudget / (16 + 9000) + 1);
    const auto* arena = blocks[0]->arena.data();
    EXPECT_TRUE(pkts[0].data < arena || pkts[0].data >= arena + PacketBlock::kArenaBytes);
    for (std::uint32_t i = 0; i < 100; ++i) {
        ASSERT_EQ(seqOf(pkts[i]), i);
        ASSERT_EQ(pkts[i].ts, kT0 + i);
        ASSERT_EQ(pkts[i].capLen, 9000U);
    }
}

TEST(PcapInput, SnaplenCutsFramesButKeepsWireLength) {
    const fs::path path = scratchFile("snap.pcap");
    writePcap(path, true, 1, {{kT0, ethFrame(1, 1000)}});
    auto in = open("pcap;file=" + path.string() + ";snaplen=100");
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 1U);
    EXPECT_EQ(pkts[0].capLen, 100U);
    EXPECT_EQ(pkts[0].wireLen, 1000U);
}

TEST(PcapInput, MapsSupportedLinkTypes) {
    const std::pair<std::uint32_t, LinkType> cases[] = {{1, LinkType::Ethernet},
                                                        {101, LinkType::Raw},
                                                        {113, LinkType::LinuxSll},
                                                        {0, LinkType::Null}};
    for (const auto& [dlt, link] : cases) {
        const fs::path path = scratchFile("link" + std::to_string(dlt) + ".pcap");
        writePcap(path, true, dlt, {{kT0, Bytes(60, 0x45)}});
        auto in = open("pcap;file=" + path.string());
        EXPECT_EQ(in->linkType(), link) << dlt;
        PacketBlock block;
        ASSERT_EQ(in->read(block), InputPlugin::Status::Ok);
        EXPECT_EQ(block.link, link) << dlt;
        EXPECT_EQ(block.count, 1U);
    }
}

TEST(PcapInput, FilterSelectsPackets) {
    const fs::path path = scratchFile("mixed.pcap");
    std::vector<Frame> frames;
    for (std::uint32_t i = 0; i < 10; ++i) frames.push_back({kT0 + i, ethFrame(i, 64, i % 3 == 0)});
    writePcap(path, true, 1, frames);
    auto in = open("pcap;file=" + path.string() + ";F=tcp and port 53");
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto pkts = readAll(*in, blocks);
    ASSERT_EQ(pkts.size(), 4U);
    EXPECT_EQ(seqOf(pkts[0]), 0U);
    EXPECT_EQ(seqOf(pkts[3]), 9U);
}

TEST(PcapInput, StopEndsAFileEarly) {
    const fs::path path = scratchFile("stop.pcap");
    std::vector<Frame> frames;
    for (std::uint32_t i = 0; i < 200; ++i) frames.push_back({kT0 + i, ethFrame(i)});
    writePcap(path, true, 1, frames);
    auto in = open("pcap;file=" + path.string());
    PacketBlock block;
    ASSERT_EQ(in->read(block), InputPlugin::Status::Ok);
    in->stop();
    block.clear();
    EXPECT_EQ(in->read(block), InputPlugin::Status::End);
    EXPECT_EQ(block.count, 0U);
}

TEST(PcapInput, TruncatedFileDeliversEveryWholePacketThenFailsWithRuntimeError) {
    const fs::path path = scratchFile("cut.pcap");
    std::vector<Frame> frames;
    for (std::uint32_t i = 0; i < 10; ++i) frames.push_back({kT0 + i, ethFrame(i, 100)});
    writePcap(path, true, 1, frames);
    fs::resize_file(path, fs::file_size(path) - 50);  // the last frame is cut short
    auto in = open("pcap;file=" + path.string());
    PacketBlock block;
    ASSERT_EQ(in->read(block), InputPlugin::Status::Ok);
    EXPECT_EQ(block.count, 9U);
    EXPECT_EQ(seqOf(block.packets[8]), 8U);
    block.clear();
    try {
        in->read(block);
        FAIL() << "no error";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("input 'pcap'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
}

TEST(PcapInput, MissingFileIsAConfigErrorWithPcapsReason) {
    const ConfigError e = openError("pcap;file=/nonexistent/trace.pcap");
    EXPECT_EQ(e.details().option, "file");
    EXPECT_NE(std::string(e.what()).find("/nonexistent/trace.pcap"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
}

TEST(PcapInput, GarbageFileIsAConfigError) {
    const fs::path path = scratchFile("garbage.pcap");
    writeFile(path, Bytes(100, 0x42));
    const ConfigError e = openError("pcap;file=" + path.string());
    EXPECT_EQ(e.details().option, "file");
    EXPECT_NE(std::string(e.what()).find("unknown file format"), std::string::npos) << e.what();
}

TEST(PcapInput, NeedsExactlyOneOfFileOrIfc) {
    const fs::path path = scratchFile("one.pcap");
    writePcap(path, true, 1, {{kT0, ethFrame(1)}});
    for (const std::string& text :
         {std::string("pcap"), "pcap;file=" + path.string() + ";ifc=lo"}) {
        const ConfigError e = openError(text);
        EXPECT_NE(std::string(e.what()).find("give exactly one of 'file' or 'ifc'"),
                  std::string::npos)
            << e.what();
        EXPECT_EQ(e.details().component, "input 'pcap'");
    }
}

TEST(PcapInput, BadFilterIsAConfigErrorNamingTheFilterOption) {
    const fs::path path = scratchFile("filter.pcap");
    writePcap(path, true, 1, {{kT0, ethFrame(1)}});
    const ConfigError e = openError("pcap;file=" + path.string() + ";filter=tcp and and port");
    EXPECT_EQ(e.details().option, "filter");
    EXPECT_NE(std::string(e.what()).find("syntax error"), std::string::npos) << e.what();
    EXPECT_NE(e.render().find("^"), std::string::npos) << e.render();  // caret under the value
}

TEST(PcapInput, UnsupportedLinkTypeIsAConfigErrorNamingIt) {
    const fs::path path = scratchFile("user0.pcap");
    writePcap(path, true, 147, {{kT0, Bytes(60, 0)}});  // LINKTYPE_USER0: private use
    const ConfigError e = openError("pcap;file=" + path.string());
    EXPECT_EQ(e.details().option, "file");
    EXPECT_NE(std::string(e.what()).find("147"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("IEEE802_11"), std::string::npos)
        << "the message lists what is supported: " << e.what();
}

TEST(PcapInput, SnaplenOutOfRangeIsRejected) {
    const ConfigError e = openError("pcap;file=x.pcap;snaplen=32");
    EXPECT_EQ(e.details().option, "snaplen");
    EXPECT_NE(std::string(e.what()).find("[64, 262144]"), std::string::npos) << e.what();
}

TEST(PcapInput, UnknownInterfaceIsAConfigErrorNamingIfc) {
    const ConfigError e = openError("pcap;ifc=rowprobe-no-such-if0");
    EXPECT_EQ(e.details().option, "ifc");
    EXPECT_NE(std::string(e.what()).find("rowprobe-no-such-if0"), std::string::npos) << e.what();
}

/// The capture filter for what is sent to `rx`, a port of the kernel's choice held for the whole
/// test: a suite running beside this one on the same machine captures and sends to its own port.
std::string filterFor(const test::live::UdpSocket& rx) {
    return "udp and dst port " + std::to_string(rx.port()) + " and host 127.0.0.1";
}

TEST(PcapInput, LiveCaptureTimesOutWhenIdleAndStopsFromAnotherThread) {
    std::unique_ptr<PcapInput> in;
    try {
        in = open("pcap;ifc=lo;timeout=20ms;filter=udp port 9 and host 192.0.2.255");
    } catch (const ConfigError& e) {
        GTEST_SKIP() << "cannot capture on lo here: " << e.what();
    }
    EXPECT_TRUE(in->live());
    PacketBlock block;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(in->read(block), InputPlugin::Status::Timeout);  // the filter matches nothing
    EXPECT_EQ(block.count, 0U);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

    auto reader = std::async(std::launch::async, [&] {
        PacketBlock b;
        InputPlugin::Status s = InputPlugin::Status::Timeout;
        while (s != InputPlugin::Status::End) {
            b.clear();
            s = in->read(b);
        }
        return s;
    });
    for (int i = 0; i < 50; ++i) {  // stats() from another thread while the reader runs
        EXPECT_EQ(in->stats().received, 0U);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    in->stop();
    ASSERT_EQ(reader.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(reader.get(), InputPlugin::Status::End);
    EXPECT_EQ(in->stats().received, 0U);
}

TEST(PcapInput, LiveCaptureDeliversPacketsWithWallClockTimestamps) {
    const test::live::UdpSocket rx;
    std::unique_ptr<PcapInput> in;
    try {
        in = open("pcap;ifc=lo;timeout=20ms;F=" + filterFor(rx));
    } catch (const ConfigError& e) {
        GTEST_SKIP() << "cannot capture on lo here: " << e.what();
    }
    EXPECT_EQ(in->linkType(), LinkType::Ethernet);
    constexpr std::size_t kPayload = 100;
    const auto before = static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
    {
        const test::live::UdpSocket tx;
        for (int i = 0; i < 3; ++i) tx.sendTo(rx.port(), kPayload);
    }
    std::vector<RawPacket> got;
    std::vector<std::unique_ptr<PacketBlock>> blocks;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (got.size() < 3 && std::chrono::steady_clock::now() < deadline) {
        blocks.push_back(std::make_unique<PacketBlock>());
        const auto status = in->read(*blocks.back());
        ASSERT_NE(status, InputPlugin::Status::End);
        for (std::size_t i = 0; i < blocks.back()->count; ++i)
            got.push_back(blocks.back()->packets[i]);
    }
    ASSERT_EQ(got.size(), 3U);
    for (const RawPacket& p : got) {
        EXPECT_EQ(p.wireLen, 14U + 20U + 8U + kPayload);
        EXPECT_EQ(p.capLen, p.wireLen);
        EXPECT_GE(p.ts + 1'000'000, before);  // wall clock (allowing coarse clocks)
        EXPECT_LT(p.ts, before + 10 * kNsPerSec);
    }
    EXPECT_EQ(in->stats().received, 3U);
    EXPECT_EQ(in->stats().kernelDrops, 0U);
}

/// Every frame's "epoch-ns wire-length captured-length" as tshark reports them: an independent
/// reader to compare against.
std::vector<std::string> tsharkFrames(const fs::path& file) {
    const test::CommandResult r = test::runCommand(
        {"tshark", "-n", "-r", file.string(), "-T", "fields", "-E", "separator= ", "-e",
         "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len"});
    std::vector<std::string> out;
    if (r.exitCode != 0) return out;
    std::istringstream lines(r.out);
    for (std::string text; std::getline(lines, text);) {
        // "1767663089.500330493 96 96": seconds and nine decimals to integer nanoseconds
        const std::size_t dot = text.find('.');
        const std::size_t space = text.find(' ');
        if (dot == std::string::npos || space == std::string::npos || space - dot != 10) return {};
        const std::uint64_t ns = std::stoull(text.substr(0, dot)) * 1'000'000'000ULL +
                                 std::stoull(text.substr(dot + 1, 9));
        out.push_back(std::to_string(ns) + text.substr(space));
    }
    return out;
}

TEST(PcapInput, LiveKernelDropsCountEveryLostPacketOnce) {
    const test::live::UdpSocket rx;
    std::unique_ptr<PcapInput> in;
    try {
        in = open("pcap;ifc=lo;timeout=20ms;F=" + filterFor(rx));
    } catch (const ConfigError& e) {
        GTEST_SKIP() << "cannot capture on lo here: " << e.what();
    }
    // Not reading while ~28 MB arrive overflows libpcap's 2 MB ring: the kernel drops the rest.
    constexpr std::uint64_t kSent = 20'000;
    {
        const test::live::UdpSocket tx;
        for (std::uint64_t i = 0; i < kSent; ++i) tx.sendTo(rx.port(), 1400);
    }
    auto block = std::make_unique<PacketBlock>();
    int idle = 0;
    while (idle < 3) {
        block->clear();
        idle = in->read(*block) == InputPlugin::Status::Timeout ? idle + 1 : 0;
    }
    const InputStats s = in->stats();
    EXPECT_GT(s.kernelDrops, 0U);
    EXPECT_GT(s.received, 0U);
    EXPECT_EQ(s.received + s.kernelDrops, kSent)
        << "received " << s.received << ", dropped " << s.kernelDrops;
}

TEST(PcapInput, MatchesTsharkOnThirdPartyCaptures) {
    if (test::runShell("tshark -v").exitCode != 0) GTEST_SKIP() << "tshark not installed";
    const fs::path files[] = {test::testdataDir() / "zeek/Traces/pcapng-multi-interface.pcapng",
                              test::testdataDir() / "zeek/Traces/irc-dcc-send.pcapng",
                              test::testdataDir() / "bench/netflix.pcap"};
    for (const fs::path& file : files) {
        ROWPROBE_REQUIRE_FILE(file);
        const std::vector<std::string> expected = tsharkFrames(file);
        ASSERT_FALSE(expected.empty()) << file;
        auto in = open("pcap;file=" + file.string() + ";snaplen=262144");
        std::vector<std::unique_ptr<PacketBlock>> blocks;
        std::vector<std::string> got;
        for (const RawPacket& p : readAll(*in, blocks)) {
            got.push_back(std::to_string(p.ts) + " " + std::to_string(p.wireLen) + " " +
                          std::to_string(p.capLen));
        }
        ASSERT_EQ(got.size(), expected.size()) << file;
        for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], expected[i]) << file << " frame " << i;
        EXPECT_EQ(in->stats().received, got.size());
    }
}

}  // namespace
}  // namespace rowprobe::input
