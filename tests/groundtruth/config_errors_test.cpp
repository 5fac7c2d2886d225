// Acceptance: a bad plugin string stops start-up with exit code 2 and ONE precise message
// naming the plugin, the option, the value, the allowed range or a "did you mean".
#include <gtest/gtest.h>

#include "flow_truth.hpp"

namespace rowprobe::test {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

CommandResult runWith(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        rowprobeBinary().string(), "-i",
        "pcap;file=" + (sourceDir() / "pcaps" / "mixed.pcap").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return runCommand(argv, 60);
}

TEST(ConfigErrors, MisspelledStorageOptionNamesPluginOptionAndSuggestion) {
    ROWPROBE_REQUIRE_BINARY();
    const CommandResult r = runWith({"-s", "cache;sise=18", "-o", "json;file=/dev/null"});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(count(r.err, "error"), 1U) << "exactly one message:\n" << r.err;
    EXPECT_NE(r.err.find("'cache'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'sise'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'size'"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ConfigErrors, OutOfRangeSizeNamesOptionValueAndAllowedRange) {
    ROWPROBE_REQUIRE_BINARY();
    const CommandResult r = runWith({"-s", "cache;size=31", "-o", "json;file=/dev/null"});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(count(r.err, "error"), 1U) << "exactly one message:\n" << r.err;
    EXPECT_NE(r.err.find("'cache'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'size'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("31"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[4, 30]"), std::string::npos) << r.err;
}

TEST(ConfigErrors, UnknownOutputPluginSuggestsJson) {
    ROWPROBE_REQUIRE_BINARY();
    const CommandResult r = runWith({"-o", "jsn"});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(count(r.err, "error"), 1U) << "exactly one message:\n" << r.err;
    EXPECT_NE(r.err.find("'jsn'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'json'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rowprobe::test
