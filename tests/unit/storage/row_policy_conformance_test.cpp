// Behaviour every registered row policy must show, whatever its order (style.md §3.8).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "cache/policy_registry.hpp"
#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

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

INSTANTIATE_TEST_SUITE_P(EveryRegisteredPolicy, RowPolicyConformance, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                             std::string name = p.param.policy + "_L" + std::to_string(p.param.line);
                             for (char& ch : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             }
                             return name;
                         });

TEST(RowPolicyRegistry, ListsLru) {
    const auto names = rowPolicyNames();
    EXPECT_NE(std::find(names.begin(), names.end(), "lru"), names.end());
}

}  // namespace
}  // namespace rowprobe::storage
