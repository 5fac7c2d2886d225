// The `cache` plugin's options: defaults, bounds, and the messages a user sees.
#include <gtest/gtest.h>

#include "cache/flow_table.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::storage {
namespace {

std::unique_ptr<CacheTable> create(const std::string& text) {
    auto p = Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, text, "-s");
    auto* t = dynamic_cast<CacheTable*>(p.get());
    if (t != nullptr) p.release();
    return std::unique_ptr<CacheTable>(t);
}

/// The rendered error for `text`, or "" if it was accepted.
std::string errorFor(const std::string& text) {
    try {
        create(text);
    } catch (const ConfigError& e) {
        return e.render();
    }
    return "";
}

TEST(CacheOptions, DefaultsAreIpfixprobesTable) {
    auto t = create("cache");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->policyName(), "lru");
    EXPECT_EQ(t->line(), 16U);
    EXPECT_EQ(t->rowCount(), (1U << 17) / 16);
    EXPECT_EQ(t->config().active, 300 * kNsPerSec);
    EXPECT_EQ(t->config().inactive, 30 * kNsPerSec);
    EXPECT_EQ(t->config().hash->name, "xxh3");
    EXPECT_TRUE(t->config().fragEnabled);
    EXPECT_EQ(t->config().fragSize, 10007U);
    EXPECT_EQ(t->config().fragTimeout, 3 * kNsPerSec);
    EXPECT_EQ(t->stats().capacity, 1U << 17);
}

TEST(CacheOptions, ShortNamesAndDurationsAreAccepted) {
    auto t = create("cache;s=10;l=8;a=1m;i=500ms;h=xxh64;seed=7;p=lru;fs=101;ft=1s");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->line(), 8U);
    EXPECT_EQ(t->rowCount(), 128U);
    EXPECT_EQ(t->config().active, 60 * kNsPerSec);
    EXPECT_EQ(t->config().inactive, kNsPerSec / 2);
    EXPECT_EQ(t->config().hash->name, "xxh64");
    EXPECT_EQ(t->config().seed, 7U);
    EXPECT_EQ(t->config().fragSize, 101U);
}

TEST(CacheOptions, SizeOutOfRangeNamesTheBounds) {
    const std::string e = errorFor("cache;size=31");
    EXPECT_NE(e.find("option 'size'"), std::string::npos) << e;
    EXPECT_NE(e.find("[4, 30]"), std::string::npos) << e;
    EXPECT_NE(e.find("got 31"), std::string::npos) << e;
}

TEST(CacheOptions, LineMustBeAPowerOfTwoBetweenFourAndThirtyTwo) {
    const std::string e = errorFor("cache;line=12");
    EXPECT_NE(e.find("option 'line'"), std::string::npos) << e;
    EXPECT_NE(e.find("must be 4, 8, 16 or 32"), std::string::npos) << e;
    EXPECT_NE(e.find("got 12"), std::string::npos) << e;
    EXPECT_NE(errorFor("cache;line=64").find("must be 4, 8, 16 or 32"), std::string::npos);
}

TEST(CacheOptions, SizeMustHoldAtLeastOneRow) {
    const std::string e = errorFor("cache;size=4;line=32");
    EXPECT_NE(e.find("option 'size'"), std::string::npos) << e;
    EXPECT_NE(e.find("at least 5"), std::string::npos) << e;
    EXPECT_EQ(errorFor("cache;size=4;line=16"), "");
}

TEST(CacheOptions, UnknownPolicyListsThePoliciesAndSuggestsTheClosest) {
    const std::string e = errorFor("cache;policy=lur;line=16");
    EXPECT_NE(e.find("unknown row policy 'lur'"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'lru'"), std::string::npos) << e;
    EXPECT_NE(e.find("available: "), std::string::npos) << e;
    EXPECT_NE(e.find("policy=lur"), std::string::npos) << e;  // the source line with a caret
}

TEST(CacheOptions, UnknownOptionSuggestsTheClosestName) {
    const std::string e = errorFor("cache;sise=18");
    EXPECT_NE(e.find("unknown option 'sise'"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'size'"), std::string::npos) << e;
}

TEST(CacheOptions, UnknownHashListsTheChoices) {
    const std::string e = errorFor("cache;hash=md5");
    EXPECT_NE(e.find("xxh3"), std::string::npos) << e;
    EXPECT_NE(e.find("xxh64"), std::string::npos) << e;
}

TEST(CacheOptions, HelpListsTheRowPoliciesAndSaysLineIsASlotCount) {
    const Registry::Entry* entry = Registry::instance().find(PluginKind::Storage, "cache");
    ASSERT_NE(entry, nullptr);
    ASSERT_NE(entry->info.extraHelp, nullptr);
    const std::string help = entry->info.extraHelp();
    EXPECT_NE(help.find("lru"), std::string::npos) << help;
    EXPECT_NE(help.find("ipfixprobe LRU"), std::string::npos) << help;
    const std::string table = formatOptionHelp(entry->info.options);
    EXPECT_NE(table.find("exponent"), std::string::npos) << table;
    EXPECT_NE(table.find("slot"), std::string::npos) << table;
}

TEST(CacheOptions, WithoutASeedEachTableDrawsItsOwn) {
    auto a = create("cache;size=10");
    auto b = create("cache;size=10");
    EXPECT_NE(a->config().seed, b->config().seed);
}

}  // namespace
}  // namespace rowprobe::storage
