#include "cli.hpp"

#include <gtest/gtest.h>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::core {
namespace {

CliResult parse(std::vector<const char*> args) {
    args.insert(args.begin(), "rowprobe");
    return parseCommandLine(static_cast<int>(args.size()), args.data());
}

std::string errorOf(std::vector<const char*> args) {
    try {
        parse(std::move(args));
    } catch (const ConfigError& e) {
        return e.render();
    }
    return "(no error)";
}

TEST(CommandLine, DefaultsToCacheStorageAndTextOutput) {
    const CliResult r = parse({"-i", "pcap;file=x.pcap"});
    EXPECT_EQ(r.action, CliResult::Action::Run);
    EXPECT_EQ(r.config.inputs, std::vector<std::string>{"pcap;file=x.pcap"});
    EXPECT_EQ(r.config.storage, "cache");
    EXPECT_EQ(r.config.output, "text");
    EXPECT_EQ(r.config.packetLimit, 0U);
}

TEST(CommandLine, ReadsEveryOption) {
    const CliResult r =
        parse({"-i", "pcap;file=a", "-i", "pcap;file=b", "-s", "cache;size=10", "-o", "json", "-c",
               "1000", "-t", "2.5", "--stats-json", "s.json", "-Q"});
    EXPECT_EQ(r.config.inputs.size(), 2U);
    EXPECT_EQ(r.config.storage, "cache;size=10");
    EXPECT_EQ(r.config.output, "json");
    EXPECT_EQ(r.config.packetLimit, 1000U);
    EXPECT_DOUBLE_EQ(r.config.statsInterval, 2.5);
    EXPECT_EQ(r.config.statsJson, "s.json");
    EXPECT_TRUE(r.config.quiet);
}

TEST(CommandLine, HelpTakesAnOptionalTopic) {
    EXPECT_EQ(parse({"-h"}).action, CliResult::Action::Help);
    EXPECT_EQ(parse({"-h", "cache"}).helpTopic, "cache");
    EXPECT_EQ(parse({"-V"}).action, CliResult::Action::Version);
}

TEST(CommandLine, ErrorsAreClear) {
    EXPECT_NE(errorOf({}).find("an input is required"), std::string::npos);
    EXPECT_NE(errorOf({"-i", "pcap", "-c", "ten"}).find("whole number"), std::string::npos);
    const std::string unknown = errorOf({"-i", "pcap", "--stats-jsn", "x"});
    EXPECT_NE(unknown.find("unknown option"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("did you mean '--stats-json'"), std::string::npos) << unknown;
}

TEST(CommandLine, ConfigFileSuppliesTheSameOptions) {
    const std::string path = (test::tempDir() / "rowprobe_cli_test.conf").string();
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("input = pcap;file=from-config.pcap\noutput = json\ncount = 5\n", f);
        std::fclose(f);
    }
    const CliResult r = parse({"--config", path.c_str()});
    EXPECT_EQ(r.config.inputs, std::vector<std::string>{"pcap;file=from-config.pcap"});
    EXPECT_EQ(r.config.output, "json");
    EXPECT_EQ(r.config.packetLimit, 5U);
    EXPECT_NE(errorOf({"--config", "/nonexistent/rowprobe.conf"}).find("cannot read"),
              std::string::npos);
}

// Issue 21 item 10: only a line starting with '#' is a comment (rowprobe.conf(5)); a '#' in a
// value (a path, a Kafka password) is kept.
TEST(CommandLine, AHashInsideAConfigValueIsPartOfTheValue) {
    const std::string path = (test::tempDir() / "rowprobe_cli_hash.conf").string();
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(
            "# a comment\n   # an indented comment\ninput = pcap;file=/x/in#1.pcap\n"
            "output = kafka;brokers=b:9092;topic=t;conf=sasl.password=pa#ss\n",
            f);
        std::fclose(f);
    }
    const CliResult r = parse({"--config", path.c_str()});
    EXPECT_EQ(r.config.inputs, std::vector<std::string>{"pcap;file=/x/in#1.pcap"});
    EXPECT_EQ(r.config.output, "kafka;brokers=b:9092;topic=t;conf=sasl.password=pa#ss");
}

// Issue 21 item 16: a 10 MB configuration line is refused with a short message (it took 550 MB
// and printed a 10-million-character caret line).
TEST(CommandLine, AHugeConfigLineIsRefusedWithAShortMessage) {
    const std::string path = (test::tempDir() / "rowprobe_cli_long.conf").string();
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        const std::string line = "output = json;file=" + std::string(10'000'000, 'x') + "\n";
        std::fputs(line.c_str(), f);
        std::fclose(f);
    }
    const std::string msg = errorOf({"--config", path.c_str()});
    EXPECT_NE(msg.find("at most 65536"), std::string::npos) << msg.substr(0, 500);
    EXPECT_LT(msg.size(), 2000U);
}

// The same bound on any error's source line: a window around the column, a short caret line.
TEST(CommandLine, AnErrorInAHugePluginStringShowsAWindow) {
    ConfigError::Details d;
    d.component = "json";
    d.option = "nosuchoption";
    d.value = "nosuchoption";
    d.problem = "unknown option";
    d.source = "json;file=" + std::string(1'000'000, 'x') + ";nosuchoption=1";
    d.column = d.source.find("nosuchoption");
    d.flag = "-o";
    const std::string msg = ConfigError(d).render();
    EXPECT_LT(msg.size(), 1000U) << msg.substr(0, 500);
    const std::size_t quote = msg.find("...xxx");
    const std::size_t caret = msg.find('^');
    ASSERT_NE(quote, std::string::npos) << msg;
    ASSERT_NE(caret, std::string::npos) << msg;
    // the caret sits under the option's name on the line above
    const std::size_t lineStart = msg.rfind('\n', quote) + 1;
    const std::size_t caretCol = caret - (msg.rfind('\n', caret) + 1);
    EXPECT_EQ(msg.substr(lineStart + caretCol, 12), "nosuchoption") << msg;
}

TEST(Registry, BuiltInPluginsAreAllRegistered) {
    const Registry& reg = Registry::instance();
    EXPECT_NO_THROW(reg.checkConsistent());
    for (auto name : {"pcap"}) EXPECT_NE(reg.find(PluginKind::Input, name), nullptr) << name;
    for (auto name : {"cache"}) EXPECT_NE(reg.find(PluginKind::Storage, name), nullptr) << name;
    for (auto name : {"text", "json"})
        EXPECT_NE(reg.find(PluginKind::Output, name), nullptr) << name;
}

TEST(Registry, UnknownPluginSuggestsTheClosestName) {
    try {
        Registry::instance().create(PluginKind::Output, "jsn;file=x", "-o");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        const std::string msg = e.render();
        EXPECT_NE(msg.find("unknown output plugin 'jsn'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("did you mean 'json'"), std::string::npos) << msg;
    }
}

TEST(Help, ListsPluginsPerKindAndOptionsPerPlugin) {
    const std::string outputs = helpText("output");
    EXPECT_NE(outputs.find("json"), std::string::npos);
    EXPECT_NE(outputs.find("text"), std::string::npos);
    const std::string cache = helpText("cache");
    EXPECT_NE(cache.find("size"), std::string::npos);
    EXPECT_NE(cache.find("policy"), std::string::npos);
    EXPECT_THROW(helpText("no-such-plugin"), ConfigError);
}

}  // namespace
}  // namespace rowprobe::core
