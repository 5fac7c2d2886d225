// The `gen` input plugin as the pipeline sees it: created by name from a plugin string, blocks of
// Ethernet frames the parser accepts, the requested number of packets and then End, and precise
// configuration errors.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe {
namespace {

std::unique_ptr<InputPlugin> makeGen(const std::string& text) {
    return Registry::instance().createAs<InputPlugin>(PluginKind::Input, text, "-i");
}

TEST(GenInput, IsRegisteredAsAnInput) {
    const auto* entry = Registry::instance().find(PluginKind::Input, "gen");
    ASSERT_NE(entry, nullptr);
    EXPECT_FALSE(entry->info.options.empty());
}

TEST(GenInput, DeliversFullBlocksOfParsableFramesThenEnds) {
    auto input = makeGen("gen;pattern=random;flows=100;packets=1000;ipv6=0.5;reverse=0.3");
    auto block = std::make_unique<PacketBlock>();
    std::uint64_t total = 0;
    std::size_t blocks = 0;
    std::set<std::string> keys;
    for (;;) {
        block->clear();
        const auto status = input->read(*block);
        if (status == InputPlugin::Status::End) {
            EXPECT_EQ(block->count, 0U);
            break;
        }
        ASSERT_EQ(status, InputPlugin::Status::Ok);
        ASSERT_EQ(block->link, LinkType::Ethernet);
        ++blocks;
        if (total + kMaxBatch <= 1000) {
            EXPECT_EQ(block->count, kMaxBatch) << "block " << blocks;
        }
        for (std::size_t i = 0; i < block->count; ++i) {
            const RawPacket& raw = block->packets[i];
            EXPECT_GE(raw.data, block->arena.data());
            EXPECT_LE(raw.data + raw.capLen, block->arena.data() + block->arenaUsed);
            ParsedPacket p;
            AnomalyCounters anomalies;
            ASSERT_TRUE(parsePacket(raw, block->link, ParserConfig{}, p, anomalies));
            EXPECT_TRUE(p.hasPorts);
            keys.emplace(reinterpret_cast<const char*>(&p.key), sizeof(FlowKey));
        }
        total += block->count;
    }
    EXPECT_EQ(total, 1000U);
    EXPECT_EQ(blocks, 16U);  // 15 full blocks and 40 packets
    EXPECT_EQ(input->stats().received, 1000U);
    EXPECT_EQ(keys.size(), 100U);
    EXPECT_FALSE(input->live());
    block->clear();
    EXPECT_EQ(input->read(*block), InputPlugin::Status::End) << "End is final";
}

TEST(GenInput, JumboFramesStayInsideTheArena) {
    auto input = makeGen("gen;packets=200;size=9000");
    auto block = std::make_unique<PacketBlock>();
    std::uint64_t total = 0;
    while (true) {
        block->clear();
        if (input->read(*block) == InputPlugin::Status::End) break;
        EXPECT_GT(block->count, 0U);
        EXPECT_LE(block->arenaUsed, PacketBlock::kArenaBytes);
        for (std::size_t i = 0; i < block->count; ++i) EXPECT_EQ(block->packets[i].capLen, 9000U);
        total += block->count;
    }
    EXPECT_EQ(total, 200U);
}

TEST(GenInput, StopEndsAnUnlimitedInput) {
    auto input = makeGen("gen;packets=0");
    auto block = std::make_unique<PacketBlock>();
    for (int i = 0; i < 10; ++i) {
        block->clear();
        ASSERT_EQ(input->read(*block), InputPlugin::Status::Ok);
    }
    input->stop();
    block->clear();
    EXPECT_EQ(input->read(*block), InputPlugin::Status::End);
}

TEST(GenInput, SameSeedSameFramesAcrossInstances) {
    auto a = makeGen("gen;pattern=zipf;flows=500;packets=640;seed=9;size=100");
    auto b = makeGen("gen;pattern=zipf;flows=500;packets=640;seed=9;size=100");
    auto c = makeGen("gen;pattern=zipf;flows=500;packets=640;seed=10;size=100");
    auto ba = std::make_unique<PacketBlock>();
    auto bb = std::make_unique<PacketBlock>();
    auto bc = std::make_unique<PacketBlock>();
    std::size_t differ = 0;
    for (int round = 0; round < 10; ++round) {
        ba->clear();
        bb->clear();
        bc->clear();
        ASSERT_EQ(a->read(*ba), InputPlugin::Status::Ok);
        ASSERT_EQ(b->read(*bb), InputPlugin::Status::Ok);
        ASSERT_EQ(c->read(*bc), InputPlugin::Status::Ok);
        ASSERT_EQ(ba->count, bb->count);
        for (std::size_t i = 0; i < ba->count; ++i) {
            const RawPacket& x = ba->packets[i];
            const RawPacket& y = bb->packets[i];
            ASSERT_EQ(x.capLen, y.capLen);
            ASSERT_EQ(x.ts, y.ts);
            ASSERT_EQ(std::memcmp(x.data, y.data, x.capLen), 0)
                << "round " << round << " packet " << i;
            differ += std::memcmp(x.data, bc->packets[i].data, x.capLen) != 0 ? 1 : 0;
        }
    }
    EXPECT_GT(differ, 600U) << "another seed must give other traffic";
}

struct BadOption {
    const char* text;
    const char* option;   // the option the error must name
    const char* mention;  // a fragment of the problem text
};

TEST(GenInput, BadOptionsAreConfigErrorsNamingTheOption) {
    const BadOption cases[] = {
        {"gen;pattern=zipfian", "pattern", "unknown value"},
        {"gen;flows=0", "flows", "[1, 33554432]"},
        {"gen;flows=many", "flows", "integer"},
        {"gen;pattern=deterministic;flows=8", "flows", "exactly one flow"},
        {"gen;ipv6=1.5", "ipv6", "[0, 1]"},
        {"gen;tcp=-0.1", "tcp", "[0, 1]"},
        {"gen;size=10", "size", "[42, 9000]"},
        {"gen;skew=1.2", "skew", "only to pattern=zipf"},
        {"gen;pattern=zipf;skew=-1", "skew", "[0, 10]"},
        {"gen;fin", "fin", "packets-per-flow >= 2"},
        {"gen;packets-per-flow=5;fin;tcp=0", "fin", "tcp=0"},
        {"gen;pps=0", "pps", "[1, "},
        {"gen;duration=soon", "duration", "duration"},
    };
    for (const auto& c : cases) {
        try {
            makeGen(c.text);
            ADD_FAILURE() << c.text << ": no error";
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.details().option, c.option) << c.text;
            EXPECT_NE(e.render().find(c.mention), std::string::npos) << c.text << ":\n"
                                                                     << e.render();
            EXPECT_NE(e.details().component.find("gen"), std::string::npos) << c.text;
        }
    }
}

TEST(GenInput, UnknownOptionSuggestsTheClosestName) {
    try {
        makeGen("gen;flow=10");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find("flows"), std::string::npos) << e.render();
    }
}

}  // namespace
}  // namespace rowprobe
