// StoragePlugin::hashBatch + processHashedBatch: the flow hashes computed ahead of the worker
// (by the pipeline's input thread while the worker is behind) give the table exactly what it
// would have computed itself, and a fragment whose ports the fragment cache fills is hashed
// again rather than filed under its portless hash.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

std::vector<ParsedPacket> randomTraffic(std::size_t flows, std::size_t packets) {
    std::mt19937 rng(7);
    std::vector<ParsedPacket> out;
    for (std::size_t i = 0; i < packets; ++i) {
        const TimeNs ts = at(static_cast<double>(i) * 0.001);
        const auto f = static_cast<std::uint16_t>(rng() % flows);
        const bool reply = rng() % 3 == 0;
        ParsedPacket p = reply ? packet("10.1.0.2", 443, "10.0.0.1", 1024 + f, ts, 0x10)
                               : packet("10.0.0.1", 1024 + f, "10.1.0.2", 443, ts, 0x18);
        p.fromA = !reply;
        if (reply) {  // the canonical key stays that of the first direction
            ParsedPacket fwd = packet("10.0.0.1", 1024 + f, "10.1.0.2", 443, ts);
            p.key = fwd.key;
        }
        p.ipLen = 40 + static_cast<std::uint32_t>(rng() % 1400);
        out.push_back(p);
    }
    return out;
}

auto tupleOf(const FlowRecord& r) {
    return std::make_tuple(r.srcAddr, r.dstAddr, r.srcPort, r.dstPort, r.packets[0], r.packets[1],
                           r.bytes[0], r.bytes[1], r.timeFirst, r.timeLast, r.endReason);
}

TEST(HashedBatch, GivesTheRecordsOfTheTablesOwnHashing) {
    // A small table (2^10 records) for 3000 flows: evictions make the outcome depend on every
    // packet's row, so a hash that differed anywhere would change the records.
    const auto traffic = randomTraffic(3000, 40000);
    TableHarness own("cache;size=10;seed=5");
    TableHarness given("cache;size=10;seed=5");
    own.feed(traffic);
    given.feedHashed(traffic);
    own.flushAll();
    given.flushAll();
    ASSERT_EQ(own.exported().size(), given.exported().size());
    EXPECT_GT(own.stats().missEvict, 1000U);
    for (std::size_t i = 0; i < own.exported().size(); ++i)
        ASSERT_EQ(tupleOf(own.exported()[i]), tupleOf(given.exported()[i])) << "record " << i;
}

TEST(HashedBatch, FragmentsWhosePortsTheCacheFillsAreHashedAgain) {
    std::vector<ParsedPacket> train;
    for (unsigned k = 0; k < 3; ++k) {
        ParsedPacket p = packet("10.0.0.9", k == 0 ? 5000 : 0, "10.0.0.1", k == 0 ? 53 : 0,
                                at(k * 0.001), 0, 1500, 17);
        p.frag.isFragment = true;
        p.frag.id = 77;
        p.frag.offset = static_cast<std::uint16_t>(k * 185);
        p.frag.moreFragments = k != 2;
        p.hasPorts = k == 0;
        train.push_back(p);
    }
    TableHarness h("cache;size=8;line=4;seed=1");
    h.feedHashed(train);
    h.flushAll();
    ASSERT_EQ(h.exported().size(), 1U);  // one flow, not a portless second one
    EXPECT_EQ(h.exported()[0].packets[kForward], 3U);
    EXPECT_EQ(h.stats().fragmentsFilled, 2U);
}

}  // namespace
}  // namespace rowprobe::storage
