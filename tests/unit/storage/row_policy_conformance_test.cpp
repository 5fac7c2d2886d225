// Behaviour every registered row policy must show, whatever its order (docs/style.md). The
// suite runs over rowPolicyNames(), so a new built-in policy is covered without test edits; the
// example shared-object policy (docs/examples/fifo_policy.cpp) is loaded before the suite's
// parameters are generated and is covered the same way.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "cache/policy_registry.hpp"
#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

#ifdef ROWPROBE_EXAMPLE_POLICY_LIBRARY
// Static initialisation runs before InitGoogleTest generates the parameters below.
[[maybe_unused]] const bool kExampleLoaded = [] {
    registerRowPolicyLibrary(ROWPROBE_EXAMPLE_POLICY_LIBRARY);
    return true;
}();
#endif

struct Case {
    std::string policy;
    unsigned line;
};

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& name : rowPolicyNames()) {
        for (unsigned line : {4U, 8U, 16U, 32U}) out.push_back({name, line});
    }
    return out;
}

class RowPolicyConformance : public ::testing::TestWithParam<Case> {
protected:
    std::string plugin(unsigned size, const std::string& extra = "") const {
        return "cache;policy=" + GetParam().policy + ";line=" + std::to_string(GetParam().line) +
               ";size=" + std::to_string(size) + ";seed=11" + extra;
    }
};

TEST_P(RowPolicyConformance, FullRowEvictsExactlyOneFlowPerNewFlow) {
    const unsigned line = GetParam().line;
    TableHarness h(plugin(10));
    const std::vector<ParsedPacket> flows = h.flowsInRow(2, line + 10, at(0));
    std::vector<ParsedPacket> fill(flows.begin(), flows.begin() + line);
    h.feed(fill, 1);
    EXPECT_EQ(h.stats().missFree, line);
    for (unsigned i = 0; i < 10; ++i) {
        ParsedPacket p = flows[line + i];
        p.ts = at(1 + i);
        h.feed(p);
        EXPECT_EQ(h.stats().missEvict, i + 1);
        EXPECT_EQ(h.exported().size(), i + 1);
        EXPECT_EQ(h.exported().back().endReason, EndReason::LackOfResources);
        EXPECT_TRUE(h.find(p.key).has_value()) << "the new flow is cached";
        EXPECT_EQ(h.stats().flowsInCache, line);
    }
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST_P(RowPolicyConformance, PacketAndByteCountsSurviveHeavyEviction) {
    // 64 records, 5000 flows, Zipf-ish popularity: most packets cause evictions, yet every packet
    // and byte fed must come out in exactly one exported record.
    TableHarness h(plugin(6, ";inactive=5;active=60"));
    std::mt19937 rng(2024);
    std::vector<ParsedPacket> pkts;
    std::uint64_t bytes = 0;
    double t = 0;
    for (int i = 0; i < 40000; ++i) {
        const auto flow = static_cast<std::uint16_t>(std::min(rng() % 5000, rng() % 5000));
        const bool reverse = rng() % 3 == 0;
        const auto len = static_cast<std::uint32_t>(40 + rng() % 1460);
        t += static_cast<double>(rng() % 1000) / 1e5;
        ParsedPacket p = reverse ? packet("10.0.2.2", 443, "10.0.1.1", flow, at(t), 0, len)
                                 : packet("10.0.1.1", flow, "10.0.2.2", 443, at(t), 0, len);
        bytes += len;
        pkts.push_back(p);
    }
    h.feed(pkts);
    EXPECT_EQ(h.table().checkInvariants(), "");
    EXPECT_GT(h.stats().missEvict, 1000U);
    h.flushAll();
    std::uint64_t outPackets = 0;
    std::uint64_t outBytes = 0;
    for (const auto& r : h.exported()) {
        outPackets += r.packets[0] + r.packets[1];
        outBytes += r.bytes[0] + r.bytes[1];
    }
    EXPECT_EQ(outPackets, pkts.size());
    EXPECT_EQ(outBytes, bytes);
    const CacheStats st = h.stats();
    EXPECT_EQ(st.hits + st.flowsCreated, pkts.size());
    EXPECT_EQ(st.flowsCreated, h.exported().size());
    EXPECT_EQ(st.exportedTotal(), h.exported().size());
    EXPECT_EQ(st.missFree + st.missEvict + st.missReclaim, st.flowsCreated);
    EXPECT_EQ(st.flowsInCache, 0U);
}

TEST_P(RowPolicyConformance, MatchesAnUnboundedReferenceWhenTheTableNeverFills) {
    TableHarness h(plugin(16));
    std::mt19937 rng(5);
    std::vector<ParsedPacket> pkts;
    std::map<std::uint16_t, std::uint32_t> reference;
    for (int i = 0; i < 5000; ++i) {
        const auto port = static_cast<std::uint16_t>(rng() % 300);
        pkts.push_back(packet("10.0.1.1", port, "10.0.2.2", 53, at(i * 0.001), 0, 100, 17));
        ++reference[port];
    }
    h.feed(pkts);
    h.flushAll();
    ASSERT_EQ(h.exported().size(), reference.size());
    for (const auto& r : h.exported()) {
        EXPECT_EQ(r.packets[kForward], reference[r.srcPort]);
        EXPECT_EQ(r.endReason, EndReason::ForcedEnd);
    }
}

TEST_P(RowPolicyConformance, InvariantsHoldAfterEveryPacket) {
    // One packet per batch through a small table: hits, new flows into free and full rows, TCP
    // ends, a SYN re-using a finished 5-tuple, and idle flows swept out (holes). After every
    // packet: ranks are a permutation, every tag has its live record in the right row and vice
    // versa, flows in cache = occupied slots, and the policy's own invariants (checkRow).
    TableHarness h(plugin(6, ";inactive=2;active=20"));
    std::mt19937 rng(7);
    double t = 0;
    for (int i = 0; i < 3000; ++i) {
        const auto port = static_cast<std::uint16_t>(std::min(rng() % 400, rng() % 400));
        t += static_cast<double>(rng() % 100) / 2000.0;
        std::uint8_t flags = kAck;
        const auto dice = static_cast<unsigned>(rng() % 50);
        if (dice == 0) flags = kFin | kAck;
        if (dice == 1) flags = kRst;
        if (dice == 2) flags = kSyn;
        h.feed(packet("10.0.1.1", port, "10.0.2.2", 80, at(t), flags));
        const std::string broken = h.table().checkInvariants();
        ASSERT_EQ(broken, "") << "after packet " << i;
        if (i % 500 == 499) {
            t += 3;  // every flow goes idle: the sweep leaves holes everywhere
            h.advanceTime(at(t));
            ASSERT_EQ(h.table().checkInvariants(), "") << "after the sweep at packet " << i;
        }
    }
    const CacheStats st = h.stats();
    EXPECT_GT(st.missEvict, 100U);
    EXPECT_GT(st.hits, 100U);
    EXPECT_GT(st.exported[static_cast<std::size_t>(EndReason::InactiveTimeout)], 10U);
}

TEST_P(RowPolicyConformance, HolesLeftByTimeoutsAreFilledBeforeAnyEviction) {
    const unsigned line = GetParam().line;
    TableHarness h(plugin(10, ";inactive=10;active=300"));
    const std::vector<ParsedPacket> flows = h.flowsInRow(5, 2 * line + 1, at(0));
    // Fill the row; half the flows stay busy, the other half go idle and time out.
    for (unsigned i = 0; i < line; ++i) {
        ParsedPacket p = flows[i];
        p.ts = at(0);
        h.feed(p);
    }
    for (unsigned i = 0; i < line; i += 2) {
        ParsedPacket p = flows[i];
        p.ts = at(8);
        h.feed(p);  // (2Q-style policies may evict on a promotion here)
    }
    h.advanceTime(at(11));  // flows 1, 3, 5 ... expired: at least line/2 holes
    EXPECT_EQ(h.exportedWith(EndReason::InactiveTimeout).size(), line / 2);
    ASSERT_EQ(h.table().checkInvariants(), "");
    std::vector<unsigned> busy;
    for (unsigned i = 0; i < line; i += 2) {
        if (h.find(flows[i].key)) busy.push_back(i);
    }
    const auto holes = static_cast<unsigned>(line - h.stats().flowsInCache);
    ASSERT_GE(holes, line / 2);
    const std::size_t evictedBefore = h.exportedWith(EndReason::LackOfResources).size();
    // New flows take the holes: no eviction, every cached busy flow stays.
    for (unsigned i = 0; i < holes; ++i) {
        ParsedPacket p = flows[line + i];
        p.ts = at(12);
        h.feed(p);
        ASSERT_EQ(h.table().checkInvariants(), "");
    }
    EXPECT_EQ(h.stats().missEvict, 0U);
    EXPECT_EQ(h.exportedWith(EndReason::LackOfResources).size(), evictedBefore);
    EXPECT_EQ(h.stats().missFree, line + holes);
    for (unsigned i : busy) EXPECT_TRUE(h.find(flows[i].key).has_value()) << "busy flow " << i;
    // The row is full again: the next new flow evicts exactly one.
    ParsedPacket p = flows[line + holes];
    p.ts = at(13);
    h.feed(p);
    EXPECT_EQ(h.stats().missEvict, 1U);
    EXPECT_EQ(h.exportedWith(EndReason::LackOfResources).size(), evictedBefore + 1);
    EXPECT_EQ(h.stats().flowsInCache, line);
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST_P(RowPolicyConformance, HitPositionsStayInsideTheRow) {
    const unsigned line = GetParam().line;
    TableHarness h(plugin(8));
    const std::vector<ParsedPacket> flows = h.flowsInRow(1, line + 4, at(0));
    std::mt19937 rng(3);
    for (int i = 0; i < 400; ++i) {
        ParsedPacket p = flows[rng() % flows.size()];
        p.ts = at(i * 0.01);
        h.feed(p);
        for (const SlotView& v : h.table().inspectRow(1)) ASSERT_LT(v.position, line);
    }
    const CacheStats st = h.stats();
    ASSERT_GT(st.hits, 0U);
    EXPECT_GE(st.hitPositionMean(), 1.0);
    EXPECT_LE(st.hitPositionMean(), static_cast<double>(line));
}

TEST_P(RowPolicyConformance, SameInputGivesTheSameExportsTwice) {
    // Policies are deterministic: no clock, no RNG, no state outside the table.
    auto run = [&] {
        TableHarness h(plugin(6, ";inactive=5"));
        std::mt19937 rng(99);
        std::vector<ParsedPacket> pkts;
        for (int i = 0; i < 5000; ++i) {
            const auto port = static_cast<std::uint16_t>(std::min(rng() % 2000, rng() % 2000));
            pkts.push_back(packet("10.0.1.1", port, "10.0.2.2", 443, at(i * 0.002)));
        }
        h.feed(pkts);
        h.flushAll();
        std::vector<std::pair<std::uint16_t, std::uint32_t>> out;
        for (const auto& r : h.exported()) out.emplace_back(r.srcPort, r.packets[kForward]);
        return out;
    };
    EXPECT_EQ(run(), run());
}

INSTANTIATE_TEST_SUITE_P(EveryRegisteredPolicy, RowPolicyConformance, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                             std::string name =
                                 p.param.policy + "_L" + std::to_string(p.param.line);
                             for (char& ch : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             }
                             return name;
                         });

TEST(RowPolicyRegistry, ListsEveryBuiltInPolicy) {
    const auto names = rowPolicyNames();
    const std::set<std::string> have(names.begin(), names.end());
    for (const char* expected : {"lru", "heap-lru", "lirs", "2q", "2q-full", "2q-ghost", "fdrc",
                                 "lru-2", "adaptive", "s3-fifo"}) {
        EXPECT_EQ(have.count(expected), 1U) << expected;
    }
    EXPECT_NO_THROW(RowPolicyRegistry::instance().checkConsistent());
}

#ifdef ROWPROBE_EXAMPLE_POLICY_LIBRARY
TEST(RowPolicyRegistry, TheExampleLibraryPolicyIsInTheSuite) {
    const auto names = rowPolicyNames();
    ASSERT_NE(std::find(names.begin(), names.end(), "fifo"), names.end());
    EXPECT_EQ(RowPolicyRegistry::instance().find("fifo")->library, ROWPROBE_EXAMPLE_POLICY_LIBRARY);
}
#endif

}  // namespace
}  // namespace rowprobe::storage
