// The policy ABI fingerprint (cache_layout.hpp) against the layout it must cover. A row-policy
// shared object compiles FlowTable<P, L> with everything the table holds; the host refuses a
// library whose fingerprint differs. These tests fail when a covered type changes size,
// alignment or (for the record) field offsets while the expected table below still names the
// old layout, so such a change is noticed and acknowledged here; they also check that every
// fact feeds the fingerprint and that the table's own non-template state is covered.
#include "cache/cache_layout.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string_view>

#include "cache/policy_registry.hpp"

namespace rowprobe::storage {
namespace {

struct Expected {
    std::string_view name;
    std::size_t size;
    std::size_t align;
};

// x86-64 Linux, GCC 12 / clang 14. A change here means policy libraries built before it are
// refused at load (their fingerprint differs): update the entry and say so in the commit.
constexpr Expected kExpected[] = {
    {"kCacheAbiRevision", 2, 0},
    {"TableBase", 1600, 64},
    {"TableConfig", 136, 8},
    {"FloodConfig", 48, 8},
    {"HashFunction", 48, 8},
    {"FragCache", 40, 8},
    {"SweepPace", 24, 8},
    {"RowLocks", 8, 8},
    {"SweepCounters", 72, 8},
    {"Admission", 224, 8},
    {"FloodDetector", 160, 8},
    {"ProcessDispatch", 440, 8},
    {"SlotView", 72, 8},
    {"CachedFlow", 128, 64},
    {"CachedFlow::key", 0, 0},
    {"CachedFlow::timeLast", 40, 0},
    {"CachedFlow::packets", 48, 0},
    {"CachedFlow::timeFirst", 56, 0},
    {"CachedFlow::bytes", 64, 0},
    {"CachedFlow::hashHi", 80, 0},
    {"CachedFlow::icmpTypeCode", 84, 0},
    {"CachedFlow::tcpFlags", 88, 0},
    {"CachedFlow::ttl", 90, 0},
    {"CachedFlow::srcMac", 92, 0},
    {"CachedFlow::dstMac", 98, 0},
    {"CachedFlow::initiatorIsA", 104, 0},
    {"CachedFlow::tunnelled", 105, 0},
    {"CachedFlow::inlineState", 106, 0},
    {"CachedFlow::pluginWants", 108, 0},
    {"CachedFlow::extHandles", 112, 0},
    {"PacketContext", 32, 8},
    {"FlowKey", 40, 2},
    {"ParsedPacket", 184, 8},
    {"ExportTarget", 40, 8},
    {"FlowRecord", 160, 8},
    {"FlowTunnel", 40, 4},
    {"CacheStats", 296, 8},
    {"ExtPool", 48, 8},
    {"ExtRing", 192, 64},
    {"InstanceWriter", 56, 8},
    {"ProcessHooks", 120, 8},
    {"FlowContext", 64, 8},
    {"FlowView", 64, 8},
    {"kMaxLine", 32, 0},
    {"kMaxBatch", 64, 0},
    {"kMaxPluginData", 65536, 0},
    {"kMaxProcessPlugins", 32, 0},
    {"kEndReasonSlots", 6, 0},
};

TEST(CacheLayout, EveryCoveredTypeHasTheExpectedLayout) {
    ASSERT_EQ(std::size(kExpected), kCacheLayout.size())
        << "a type was added to or removed from kCacheLayout: update kExpected";
    for (std::size_t i = 0; i < kCacheLayout.size(); ++i) {
        EXPECT_EQ(kCacheLayout[i].name, kExpected[i].name) << "entry " << i;
        EXPECT_EQ(kCacheLayout[i].size, kExpected[i].size) << kCacheLayout[i].name;
        EXPECT_EQ(kCacheLayout[i].align, kExpected[i].align) << kCacheLayout[i].name;
    }
}

TEST(CacheLayout, EveryFactChangesTheFingerprint) {
    const std::uint64_t base = detail::cacheLayoutFingerprintOf();
    EXPECT_EQ(cacheLayoutFingerprint(), base);
    for (std::size_t i = 0; i < kCacheLayout.size(); ++i) {
        auto facts = kCacheLayout;
        facts[i].size += 8;
        EXPECT_NE(detail::layoutFingerprint(facts), base) << kCacheLayout[i].name << " size";
        facts = kCacheLayout;
        facts[i].align = facts[i].align == 0 ? 1 : facts[i].align * 2;
        EXPECT_NE(detail::layoutFingerprint(facts), base) << kCacheLayout[i].name << " align";
        facts = kCacheLayout;
        facts[i].name = "renamed";
        EXPECT_NE(detail::layoutFingerprint(facts), base) << kCacheLayout[i].name << " name";
    }
}

/// The non-template state of every FlowTable is TableBase; its parts with their own types are
/// each listed too, so a change inside one of them is caught even where TableBase's padding
/// would hide it.
TEST(CacheLayout, CoversTheTablesPartsOutsideThePolicy) {
    const auto has = [](std::string_view name) {
        for (const LayoutFact& f : kCacheLayout)
            if (f.name == name) return true;
        return false;
    };
    for (const std::string_view part :
         {"TableBase", "TableConfig", "FragCache", "SweepPace", "RowLocks", "SweepCounters",
          "Admission", "FloodDetector", "ProcessDispatch", "ExportTarget", "CacheStats",
          "CachedFlow", "FlowRecord", "PacketContext"}) {
        EXPECT_TRUE(has(part)) << part << " is compiled into every policy library";
    }
}

}  // namespace
}  // namespace rowprobe::storage
