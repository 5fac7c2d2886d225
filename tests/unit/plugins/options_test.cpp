#include "rowprobe/options.hpp"

#include <gtest/gtest.h>

#include "rowprobe/errors.hpp"

namespace rowprobe {
namespace {

constexpr std::string_view kHashes[] = {"xxh3", "xxh64"};
constexpr OptionSpec kSpecs[] = {
    {.name = "size",
     .shortName = "s",
     .type = OptionType::Int,
     .defaultValue = "17",
     .help = "log2 of records",
     .min = 4,
     .max = 30},
    {.name = "hash",
     .type = OptionType::Choice,
     .defaultValue = "xxh3",
     .help = "hash function",
     .choices = kHashes},
    {.name = "inactive",
     .shortName = "i",
     .type = OptionType::Duration,
     .defaultValue = "30",
     .help = "inactive timeout",
     .min = 0,
     .max = 86400},
    {.name = "promisc", .type = OptionType::Flag, .help = "promiscuous mode"},
    {.name = "file", .shortName = "f", .type = OptionType::String, .help = "path"},
};

Options parse(std::string_view text) {
    return parseOptions("storage 'cache'", splitPluginString(text, "storage"), kSpecs,
                        "rowprobe -h cache", "-s");
}

ConfigError parseError(std::string_view text) {
    try {
        parse(text);
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no error for " << text;
    return ConfigError({});
}

TEST(PluginString, SplitsNameFlagsAndValuesKeepingColumns) {
    const PluginString ps = splitPluginString("cache;size=18;promisc;file=a=b:c", "storage");
    EXPECT_EQ(ps.name, "cache");
    ASSERT_EQ(ps.items.size(), 3U);
    EXPECT_EQ(ps.items[0].key, "size");
    EXPECT_EQ(ps.items[0].value, "18");
    EXPECT_EQ(ps.items[0].valueColumn, 11U);
    EXPECT_FALSE(ps.items[1].hasValue);
    EXPECT_EQ(ps.items[2].value, "a=b:c");
}

TEST(PluginString, RejectsEmptyNameAndEmptyItems) {
    EXPECT_THROW(splitPluginString(";size=1", "storage"), ConfigError);
    EXPECT_THROW(splitPluginString("cache;;size=1", "storage"), ConfigError);
    EXPECT_NO_THROW(splitPluginString("cache;size=1;", "storage"));
}

TEST(Options, DefaultsLongAndShortNames) {
    const Options o = parse("cache;s=20;i=1.5s;promisc");
    EXPECT_EQ(o.getInt("size"), 20);
    EXPECT_EQ(o.getDurationNs("inactive"), 1'500'000'000ULL);
    EXPECT_TRUE(o.getFlag("promisc"));
    EXPECT_EQ(o.getString("hash"), "xxh3");
    EXPECT_FALSE(o.has("file"));
    EXPECT_FALSE(parse("cache").getFlag("promisc"));
    EXPECT_FALSE(parse("cache;promisc=no").getFlag("promisc"));
}

TEST(Options, MisspeltOptionNamesPluginOptionAndSuggestion) {
    const ConfigError e = parseError("cache;sise=18");
    const std::string msg = e.render();
    EXPECT_NE(msg.find("storage 'cache'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown option 'sise'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'size'?"), std::string::npos) << msg;
    EXPECT_NE(msg.find("-s \"cache;sise=18\""), std::string::npos) << msg;
    // The caret points at the misspelt word.
    const auto lineStart = msg.find('^');
    const auto srcLine = msg.find("cache;sise");
    ASSERT_NE(lineStart, std::string::npos);
    const auto caretColumn = lineStart - msg.rfind('\n', lineStart) - 1;
    const auto sourceColumn = srcLine - msg.rfind('\n', srcLine) - 1;
    EXPECT_EQ(caretColumn, sourceColumn + 6);
}

TEST(Options, OutOfRangeValueStatesBounds) {
    const std::string msg = parseError("cache;size=31").render();
    EXPECT_NE(msg.find("option 'size'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 30]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got 31"), std::string::npos) << msg;
}

TEST(Options, MalformedValuesAreRejectedWithTheirType) {
    EXPECT_NE(parseError("cache;size=abc").render().find("must be an integer"), std::string::npos);
    EXPECT_NE(parseError("cache;inactive=soon").render().find("duration"), std::string::npos);
    EXPECT_NE(parseError("cache;promisc=maybe").render().find("flag"), std::string::npos);
    EXPECT_NE(parseError("cache;file").render().find("needs a value"), std::string::npos);
    EXPECT_NE(parseError("cache;size=5;s=6").render().find("given twice"), std::string::npos);
}

TEST(Options, ChoiceSuggestsTheClosestName) {
    const std::string msg = parseError("cache;hash=xxh4").render();
    EXPECT_NE(msg.find("available: xxh3, xxh64"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean"), std::string::npos) << msg;
}

TEST(Durations, AcceptUnitsAndRejectGarbage) {
    std::uint64_t ns = 0;
    EXPECT_TRUE(parseDuration("30", ns));
    EXPECT_EQ(ns, 30'000'000'000ULL);
    EXPECT_TRUE(parseDuration("500ms", ns));
    EXPECT_EQ(ns, 500'000'000ULL);
    EXPECT_TRUE(parseDuration("2m", ns));
    EXPECT_EQ(ns, 120'000'000'000ULL);
    EXPECT_TRUE(parseDuration("100us", ns));
    EXPECT_EQ(ns, 100'000ULL);
    EXPECT_FALSE(parseDuration("-1", ns));
    EXPECT_FALSE(parseDuration("s", ns));
    EXPECT_FALSE(parseDuration("1x", ns));
}

TEST(DidYouMean, OnlySuggestsPlausibleTypos) {
    const std::vector<std::string> names = {"lru", "lirs", "2q", "heap-lru"};
    EXPECT_EQ(closestMatch("lur", names), "lru");
    EXPECT_EQ(closestMatch("heaplru", names), "heap-lru");
    EXPECT_EQ(closestMatch("completely-else", names), "");
    EXPECT_EQ(editDistance("kitten", "sitting"), 3U);
}

TEST(OptionHelp, ListsEveryOptionWithDefaultsAndBounds) {
    const std::string help = formatOptionHelp(kSpecs);
    EXPECT_NE(help.find("size, s <integer>"), std::string::npos) << help;
    EXPECT_NE(help.find("[4, 30]"), std::string::npos);
    EXPECT_NE(help.find("(default 17)"), std::string::npos);
    EXPECT_NE(help.find("(xxh3, xxh64)"), std::string::npos);
}

}  // namespace
}  // namespace rowprobe
