// The hash functions as the `cache` plugin uses them: every one is selectable by name and listed
// by `-h cache`, the table works identically with each (identity rests on the key compare), and
// the 64-bit value's row bits (low) and tag bits (top 8) are spread and independent — including
// for the 32-bit algorithms, which are widened.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cache/hash.hpp"
#include "rowprobe/registry.hpp"
#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

std::vector<std::string> hashNames() {
    std::vector<std::string> out;
    for (const auto& h : kHashFunctions) out.emplace_back(h.name);
    return out;
}

TEST(HashSelection, EveryRequiredHashIsSelectableAndXxh3IsTheDefault) {
    const std::vector<std::string> expected = {"xxh3",     "xxh64",   "xxh3-128", "crc32c",
                                               "toeplitz", "murmur3", "farmhash", "superfasthash"};
    EXPECT_EQ(hashNames(), expected);
    EXPECT_EQ(kHashFunctions[0].name, "xxh3");
    for (const auto& name : expected) {
        const HashFunction* f = findHashFunction(name);
        ASSERT_NE(f, nullptr) << name;
        EXPECT_NE(f->batch, nullptr);
        EXPECT_NE(f->key, nullptr);
    }
    EXPECT_EQ(findHashFunction("md5"), nullptr);
}

TEST(HashSelection, HelpListsEveryHashWithItsSummary) {
    const Registry::Entry* entry = Registry::instance().find(PluginKind::Storage, "cache");
    ASSERT_NE(entry, nullptr);
    ASSERT_NE(entry->info.extraHelp, nullptr);
    const std::string help = entry->info.extraHelp();
    for (const auto& h : kHashFunctions) {
        EXPECT_NE(help.find(std::string(h.name)), std::string::npos) << h.name;
        EXPECT_NE(help.find(std::string(h.summary)), std::string::npos) << h.summary;
    }
}

TEST(HashSelection, BatchFunctionEqualsPerKeyFunction) {
    std::mt19937_64 rng(3);
    std::vector<ParsedPacket> pkts(64);
    for (auto& p : pkts) {
        auto* raw = reinterpret_cast<std::uint8_t*>(&p.key);
        for (std::size_t i = 0; i < sizeof(FlowKey); ++i) raw[i] = static_cast<std::uint8_t>(rng());
        p.key.ipVersion = (rng() & 1U) != 0 ? 4 : 6;
    }
    for (const auto& h : kHashFunctions) {
        std::vector<std::uint64_t> out(pkts.size());
        h.batch(pkts, 0xfeedULL, out.data());
        for (std::size_t i = 0; i < pkts.size(); ++i)
            EXPECT_EQ(out[i], h.key(pkts[i].key, 0xfeedULL)) << h.name;
    }
}

/// Chi-square statistic of `counts` against a uniform expectation.
double chiSquare(const std::vector<unsigned>& counts, double expected) {
    double chi = 0;
    for (unsigned c : counts) chi += (c - expected) * (c - expected) / expected;
    return chi;
}

TEST(HashSelection, RowAndTagBitsAreUniformAndIndependentForEveryHash) {
    // 2^16 distinct, low-entropy keys (one client, sequential ports, a few servers): what a
    // probe sees. 1024 rows, 255 tags.
    std::vector<FlowKey> keys;
    for (unsigned server = 0; server < 4; ++server) {
        for (unsigned port = 0; port < 16384; ++port) {
            ParsedPacket p =
                testing::packet("10.0.0.1", static_cast<std::uint16_t>(1024 + port),
                                ("192.0.2." + std::to_string(server + 1)).c_str(), 443, 0);
            keys.push_back(p.key);
        }
    }
    constexpr unsigned kRows = 1024;
    for (const auto& h : kHashFunctions) {
        if (h.name == "toeplitz") continue;  // 16-bit fold: see ToeplitzSeesOnlySixteenBits below
        std::vector<unsigned> rows(kRows, 0);
        std::vector<unsigned> tags(256, 0);
        std::set<std::pair<std::uint64_t, std::uint64_t>> pairs;
        for (const auto& k : keys) {
            const std::uint64_t v = h.key(k, 7);
            ++rows[v & (kRows - 1)];
            ++tags[v >> 56];
            pairs.emplace(v & (kRows - 1), v >> 56);
        }
        // chi-square with 1023 degrees of freedom: mean 1023, sd ~45; 1300 is > 6 sd.
        EXPECT_LT(chiSquare(rows, static_cast<double>(keys.size()) / kRows), 1300.0) << h.name;
        EXPECT_LT(chiSquare(tags, static_cast<double>(keys.size()) / 256), 400.0) << h.name;
        // Independent row and tag: 65536 keys over 262144 (row, tag) cells fill ~58 000 of them
        // (1 - e^-0.25); a tag determined by the row would fill at most 1024.
        EXPECT_GT(pairs.size(), 54000U) << h.name;
    }
}

TEST(HashSelection, ToeplitzSeesOnlySixteenBitsButSpreadsThemEvenly) {
    // The symmetric key's price (hash_toeplitz.hpp): the value depends only on the XOR of the
    // key's 16-bit words, so 4 servers x 16384 client ports give 16384 distinct values, and
    // (a, b) collides with (a ^ x, b ^ x) for every x.
    std::set<std::uint32_t> values;
    for (unsigned server = 0; server < 4; ++server) {
        for (unsigned port = 0; port < 16384; ++port) {
            const ParsedPacket p =
                testing::packet("10.0.0.1", static_cast<std::uint16_t>(port),
                                ("192.0.2." + std::to_string(server)).c_str(), 443, 0);
            values.insert(toeplitz::symmetric(p.key));
        }
    }
    EXPECT_EQ(values.size(), 16384U);
    const ParsedPacket a = testing::packet("10.0.0.1", 1000, "10.0.0.2", 80, 0);
    const ParsedPacket b =
        testing::packet("10.0.0.5", 1000, "10.0.0.6", 80, 0);  // both addresses ^ 4
    EXPECT_EQ(toeplitz::symmetric(a.key), toeplitz::symmetric(b.key));
    EXPECT_EQ(hashKey<ToeplitzHasher>(a.key, 77),
              hashKey<ToeplitzHasher>(b.key, 77));  // same row and tag
    // Keys whose folds differ (one server, every client port) are spread evenly over rows.
    std::vector<unsigned> rows(1024, 0);
    for (unsigned port = 0; port < 65536; ++port) {
        const ParsedPacket p =
            testing::packet("10.0.0.1", static_cast<std::uint16_t>(port), "192.0.2.1", 443, 0);
        ++rows[hashKey<ToeplitzHasher>(p.key, 7) & 1023];
    }
    EXPECT_LT(chiSquare(rows, 64.0), 1300.0);
}

TEST(HashSelection, ToeplitzRowsDoNotFollowTheRssQueue) {
    // A NIC spreads flows over queues by the low bits of the same Toeplitz value (RETA of 128).
    // Taken raw, the flows of one queue would share those bits and use 1/128 of the rows; the
    // widening spreads them over all rows.
    std::set<std::uint64_t> widened, raw;
    std::size_t flows = 0;
    for (unsigned port = 0; port < 65536; ++port) {
        const ParsedPacket p =
            testing::packet("10.1.2.3", static_cast<std::uint16_t>(port), "10.9.8.7", 80, 0);
        const std::uint32_t rss = toeplitz::symmetric(p.key);
        if ((rss & 0x7F) != 0) continue;  // not on queue 0
        ++flows;
        widened.insert(hashKey<ToeplitzHasher>(p.key, 1) & 1023);
        raw.insert(rss & 1023);
    }
    ASSERT_GT(flows, 400U);
    EXPECT_LE(raw.size(), 8U);
    // ~512 flows over 1024 rows: 1024 * (1 - e^-0.5) = 403 distinct rows expected.
    EXPECT_GT(widened.size(), 330U);
}

class HashInTable : public ::testing::TestWithParam<std::string> {};

TEST_P(HashInTable, TableCountsAndExportsEveryFlowExactly) {
    // 3 000 flows of 3 packets into 2^8 records: heavy eviction, so rows, tags and key compares
    // are all exercised; packets and flows must be conserved whatever the hash.
    testing::TableHarness t("cache;size=8;line=16;seed=5;hash=" + GetParam());
    std::vector<ParsedPacket> pkts;
    for (unsigned round = 0; round < 3; ++round) {
        for (unsigned f = 0; f < 3000; ++f) {
            pkts.push_back(testing::packet("10.0.0.1", static_cast<std::uint16_t>(1000 + f),
                                           "10.0.1.1", 53, testing::at(0.001 * (round * 3000 + f)),
                                           0, 100, 17));
        }
    }
    t.feed(pkts);
    EXPECT_EQ(t.table().checkInvariants(), "");
    t.flushAll();
    const CacheStats s = t.stats();
    EXPECT_EQ(s.hits + s.missFree + s.missEvict + s.missReclaim, pkts.size());
    std::uint64_t exportedPackets = 0;
    for (const auto& r : t.exported()) exportedPackets += r.packets[0] + r.packets[1];
    EXPECT_EQ(exportedPackets, pkts.size());
    EXPECT_EQ(t.exported().size(), s.flowsCreated);
    EXPECT_GT(s.missEvict, 0U);
}

TEST_P(HashInTable, NoEvictionMeansEveryLaterPacketHits) {
    // 200 flows in 2^12 records: whatever the hash, no row overflows and every flow stays one
    // record (identity never rests on the hash).
    testing::TableHarness t("cache;size=12;line=16;seed=9;hash=" + GetParam());
    std::vector<ParsedPacket> pkts;
    for (unsigned round = 0; round < 5; ++round) {
        for (unsigned f = 0; f < 200; ++f) {
            pkts.push_back(testing::packet("10.0.0.2", static_cast<std::uint16_t>(2000 + f),
                                           "10.0.9.9", 80, testing::at(0.01 * round), 0x10));
        }
    }
    t.feed(pkts);
    EXPECT_EQ(t.stats().missEvict, 0U);
    EXPECT_EQ(t.stats().hits, 4U * 200);
    EXPECT_EQ(t.stats().flowsCreated, 200U);
}

INSTANTIATE_TEST_SUITE_P(EveryHashFunction, HashInTable, ::testing::ValuesIn(hashNames()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             std::string n = param.param;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });

}  // namespace
}  // namespace rowprobe::storage
