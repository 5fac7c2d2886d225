// Policy-specific options in the `cache` plugin's table, and policies loaded from shared objects
// (rowprobe/row_policy_plugin.hpp, docs/examples/fifo_policy.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cache/policy_registry.hpp"
#include "table_harness.hpp"
#include "test_support.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

ConfigError::Details errorOf(const std::string& pluginString) {
    try {
        TableHarness h(pluginString);
    } catch (const ConfigError& e) {
        return e.details();
    }
    ADD_FAILURE() << "no error for " << pluginString;
    return {};
}

TEST(PolicyOptions, EveryPolicyOptionIsInTheCachePluginTableWithItsOwner) {
    const Registry::Entry* cache = Registry::instance().find(PluginKind::Storage, "cache");
    ASSERT_NE(cache, nullptr);
    for (const char* name :
         {"2q-ratio", "2q-full-ratio", "2q-ghost-kin", "2q-ghost-out", "fdrc-tmax", "lirs-hir",
          "lirs-ghosts", "adaptive-config", "s3-small", "s3-ghosts", "size", "policy-dir"}) {
        const auto it = std::find_if(cache->info.options.begin(), cache->info.options.end(),
                                     [&](const OptionSpec& s) { return s.name == name; });
        ASSERT_NE(it, cache->info.options.end()) << name;
    }
    EXPECT_EQ(RowPolicyRegistry::instance().ownerOf("2q-ratio")->name, "2q");
    EXPECT_EQ(RowPolicyRegistry::instance().ownerOf("size"), nullptr);
    const std::string help = formatOptionHelp(cache->info.options);
    EXPECT_NE(help.find("[policy 2q] Am:A1 proportion"), std::string::npos) << help;
    EXPECT_NE(help.find("fdrc-tmax"), std::string::npos);
}

TEST(PolicyOptions, AnOptionOfAnotherPolicyIsAnErrorNamingItsOwner) {
    const auto d = errorOf("cache;policy=lru;2q-ratio=1:3");
    EXPECT_EQ(d.option, "2q-ratio");
    EXPECT_NE(d.problem.find("option '2q-ratio' belongs to policy '2q' (policy=lru)"),
              std::string::npos)
        << d.problem;
    EXPECT_NO_THROW(TableHarness("cache;size=8;policy=2q;2q-ratio=1:3"));
}

TEST(PolicyOptions, PolicyOptionValuesAreValidatedWithTheirBounds) {
    auto d = errorOf("cache;size=8;policy=2q;2q-ratio=1:0");
    EXPECT_EQ(d.option, "2q-ratio");
    EXPECT_NE(d.problem.find("2 positive integers separated by ':' (Am:A1), got '1:0'"),
              std::string::npos)
        << d.problem;
    d = errorOf("cache;size=8;policy=2q-full;2q-full-ratio=1:2");
    EXPECT_NE(d.problem.find("A1in:A1out:Am"), std::string::npos) << d.problem;
    d = errorOf("cache;size=8;policy=lirs;line=4;lirs-hir=4");
    EXPECT_NE(d.problem.find("must be below line (4)"), std::string::npos) << d.problem;
    d = errorOf("cache;size=8;policy=s3-fifo;s3-ghosts=9");
    EXPECT_EQ(d.option, "s3-ghosts");
}

TEST(PolicyLibrary, UnknownPolicyNamesListTheBuiltInsAndTheSearchedDirectories) {
    const auto d = errorOf("cache;policy=lur");
    EXPECT_NE(d.problem.find("unknown row policy 'lur'"), std::string::npos);
    EXPECT_NE(std::find(d.choices.begin(), d.choices.end(), "s3-fifo"), d.choices.end());
    const auto e = errorOf("cache;policy=nosuch;policy-dir=/nonexistent-a:/nonexistent-b");
    EXPECT_NE(e.problem.find("no policy library librowprobe-policy-nosuch.so or nosuch.so in "
                             "/nonexistent-a /nonexistent-b"),
              std::string::npos)
        << e.problem;
}

TEST(PolicyLibrary, AMissingFileIsAConfigErrorWithTheLoadersReason) {
    const auto d = errorOf("cache;policy=/nonexistent/librowprobe-policy-x.so");
    EXPECT_EQ(d.option, "policy");
    EXPECT_NE(d.problem.find("cannot load row policy library"), std::string::npos) << d.problem;
    EXPECT_NE(d.problem.find("No such file"), std::string::npos) << d.problem;
}

#ifdef ROWPROBE_EXAMPLE_POLICY_LIBRARY

TEST(PolicyLibrary, TheExamplePolicyLoadsByPathAndBehavesAsFifo) {
    TableHarness h(std::string("cache;size=8;seed=5;line=4;policy=") +
                   ROWPROBE_EXAMPLE_POLICY_LIBRARY);
    EXPECT_EQ(h.table().policyName(), "fifo");
    const auto f = h.flowsInRow(3, 6, at(0));
    h.feed({f[0], f[1], f[2], f[3]}, 1);
    ParsedPacket again = f[0];
    again.ts = at(1);
    h.feed(again);  // a hit does not save the oldest flow
    ParsedPacket n = f[4];
    n.ts = at(2);
    h.feed(n);
    ASSERT_EQ(h.exported().size(), 1U);
    EXPECT_EQ(h.exported()[0].srcPort, f[0].srcPort());
    EXPECT_EQ(h.exported()[0].packets[kForward], 2U);
    EXPECT_EQ(h.table().checkInvariants(), "");
}

TEST(PolicyLibrary, ABareNameIsFoundInPolicyDirOrTheEnvironment) {
    TableHarness byDir(std::string("cache;size=8;policy=fifo;policy-dir=/nonexistent:") +
                       ROWPROBE_EXAMPLE_POLICY_DIR);
    EXPECT_EQ(byDir.table().policyName(), "fifo");
    ::setenv("ROWPROBE_POLICY_PATH", ROWPROBE_EXAMPLE_POLICY_DIR, 1);
    TableHarness byEnv("cache;size=8;policy=fifo");
    ::unsetenv("ROWPROBE_POLICY_PATH");
    EXPECT_EQ(byEnv.table().policyName(), "fifo");
    EXPECT_EQ(findRowPolicyLibrary("fifo", {"/nonexistent", ROWPROBE_EXAMPLE_POLICY_DIR}),
              std::string(ROWPROBE_EXAMPLE_POLICY_DIR) + "/librowprobe-policy-fifo.so");
    EXPECT_EQ(splitSearchPath("a::b:"), (std::vector<std::string>{"a", "b"}));
}

TEST(PolicyLibrary, ALibraryBuiltForAnotherAbiIsRefusedWithAClearMessage) {
    const auto d =
        errorOf(std::string("cache;size=8;policy=") + ROWPROBE_ABI_MISMATCH_POLICY_LIBRARY);
    EXPECT_EQ(d.option, "policy");
    EXPECT_EQ(d.value, ROWPROBE_ABI_MISMATCH_POLICY_LIBRARY);
    EXPECT_NE(d.problem.find(
                  "was built for row-policy ABI 999, this rowprobe provides ABI 1; rebuild it"),
              std::string::npos)
        << d.problem;
    const auto names = rowPolicyNames();
    EXPECT_EQ(std::find(names.begin(), names.end(), "future"), names.end())
        << "a refused library registers nothing";
}

// Issue 21 item 13: libraries that crashed the process (SIGSEGV) are configuration errors.
TEST(PolicyLibrary, AnEntrySymbolThatIsDataIsRefused) {
    const auto d =
        errorOf(std::string("cache;size=8;policy=") + ROWPROBE_DATA_ENTRY_POLICY_LIBRARY);
    EXPECT_EQ(d.option, "policy");
    EXPECT_NE(d.problem.find("is data, not a function"), std::string::npos) << d.problem;
}

TEST(PolicyLibrary, ADescriptorEndingAtAnUnmappedPageIsRefused) {
    const auto d =
        errorOf(std::string("cache;size=8;policy=") + ROWPROBE_SHORT_DESCRIPTOR_POLICY_LIBRARY);
    EXPECT_EQ(d.option, "policy");
    EXPECT_NE(d.problem.find("ends in unmapped memory"), std::string::npos) << d.problem;
}

TEST(PolicyLibrary, AWorldWritableLibraryOrDirectoryIsRefused) {
    namespace fs = std::filesystem;
    // A directory of this process's own: suites running side by side share /tmp.
    const fs::path dir = test::tempDir() / "open-plugin-dir";
    fs::create_directories(dir);
    const fs::path lib = dir / "fifo.so";
    fs::copy_file(ROWPROBE_EXAMPLE_POLICY_LIBRARY, lib);
    fs::permissions(dir, fs::perms::others_write, fs::perm_options::add);
    auto d = errorOf("cache;size=8;policy=" + lib.string());
    EXPECT_NE(d.problem.find("is writable by anyone"), std::string::npos) << d.problem;
    fs::permissions(dir, fs::perms::others_write, fs::perm_options::remove);
    fs::permissions(lib, fs::perms::others_write, fs::perm_options::add);
    d = errorOf("cache;size=8;policy=" + lib.string());
    EXPECT_NE(d.problem.find("anyone may write to it"), std::string::npos) << d.problem;
    fs::remove_all(dir);
}

TEST(PolicyLibrary, LoadingTheSameLibraryAgainReturnsTheRegisteredPolicy) {
    const RowPolicyInfo& fifo = registerRowPolicyLibrary(ROWPROBE_EXAMPLE_POLICY_LIBRARY);
    EXPECT_EQ(&registerRowPolicyLibrary(ROWPROBE_EXAMPLE_POLICY_LIBRARY), &fifo);
    EXPECT_EQ(fifo.library, ROWPROBE_EXAMPLE_POLICY_LIBRARY);
}

#endif

}  // namespace
}  // namespace rowprobe::storage
