#include "cli.hpp"

#include <gtest/gtest.h>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

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
    const std::string path = ::testing::TempDir() + "/rowprobe_cli_test.conf";
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
