// The installed SDK, as a third party sees it: `cmake --install` into a scratch prefix, then
//  * every installed SDK header compiles on its own (include what you use, no hidden order);
//  * the example row policy of docs/writing-a-row-policy.md builds against the installed headers
//    only (no path into the source tree), with the command the document gives;
//  * the installed rowprobe loads it by path and by `policy-dir=` and exports the same flows as
//    `lru` on a capture that never fills a row.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

/// Installs the build into one scratch prefix for the whole test program.
const fs::path& prefix() {
    static const fs::path dir = [] {
        const fs::path p = tempDir() / "prefix";
        const CommandResult r =
            runCommand({"cmake", "--install", ROWPROBE_BUILD_DIR, "--prefix", p.string()}, 300);
        if (r.exitCode != 0) ADD_FAILURE() << "cmake --install failed:\n" << r.out << r.err;
        return p;
    }();
    return dir;
}

/// The compiler command a third party would use: rowprobe's compiler and target flags.
std::vector<std::string> compiler() {
    std::vector<std::string> cmd = {ROWPROBE_SDK_CXX, "-std=c++20"};
    if (const std::string flags = ROWPROBE_SDK_CXXFLAGS; !flags.empty()) cmd.push_back(flags);
    return cmd;
}

std::vector<std::string> sortedLines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        const std::size_t stop = end == std::string::npos ? text.size() : end;
        if (stop > start) lines.push_back(text.substr(start, stop - start));
        start = stop + 1;
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST(SdkInstall, EveryInstalledHeaderCompilesOnItsOwn) {
    const fs::path include = prefix() / "include";
    ASSERT_TRUE(fs::is_directory(include / "rowprobe")) << "no headers installed under " << include;
    std::size_t headers = 0;
    for (const auto& entry : fs::directory_iterator(include / "rowprobe")) {
        if (entry.path().extension() != ".hpp") continue;
        ++headers;
        std::vector<std::string> cmd = compiler();
        cmd.insert(cmd.end(),
                   {"-fsyntax-only", "-I", include.string(), "-x", "c++", entry.path().string()});
        const CommandResult r = runCommand(cmd, 120);
        EXPECT_EQ(r.exitCode, 0) << entry.path().filename() << " does not compile alone:\n"
                                 << r.err;
    }
    EXPECT_GE(headers, 10U) << "the SDK headers (packet, plugin, options, registry, ...)";
}

TEST(SdkInstall, ExamplePolicyBuiltAgainstInstalledHeadersLoadsAndMatchesLru) {
    const fs::path include = prefix() / "include";
    const fs::path rowprobe = prefix() / "bin" / "rowprobe";
    ASSERT_TRUE(fs::exists(rowprobe));
    const fs::path libDir = tempDir();
    const fs::path lib = libDir / "librowprobe-policy-fifo.so";
    // docs/writing-a-row-policy.md: "-I$PREFIX/include -I$PREFIX/include/rowprobe/storage".
    std::vector<std::string> cmd = compiler();
    cmd.insert(cmd.end(), {"-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-I", include.string(),
                           "-I", (include / "rowprobe" / "storage").string(),
                           (sourceDir() / "docs" / "examples" / "fifo_policy.cpp").string(), "-o",
                           lib.string()});
    const CommandResult build = runCommand(cmd, 300);
    ASSERT_EQ(build.exitCode, 0) << "example policy does not build against the installed SDK:\n"
                                 << build.err;

    const std::string pcap = (sourceDir() / "pcaps" / "mixed.pcap").string();
    auto flows = [&](const std::string& storage) {
        const fs::path out = tempDir() / "flows.json";
        const CommandResult r = runCommand({rowprobe.string(), "-i", "pcap;file=" + pcap, "-s",
                                            storage, "-o", "json;file=" + out.string(), "-Q"});
        EXPECT_EQ(r.exitCode, 0) << storage << ": " << r.err;
        return sortedLines(readFile(out));
    };
    const auto lru = flows("cache;seed=1;policy=lru");
    ASSERT_FALSE(lru.empty());
    EXPECT_EQ(flows("cache;seed=1;policy=" + lib.string()), lru);
    EXPECT_EQ(flows("cache;seed=1;policy=fifo;policy-dir=" + libDir.string()), lru);
}

TEST(SdkInstall, ExampleProcessPluginBuiltAgainstInstalledHeadersLoadsAndExportsItsFields) {
    const fs::path include = prefix() / "include";
    const fs::path rowprobe = prefix() / "bin" / "rowprobe";
    ASSERT_TRUE(fs::exists(rowprobe));
    const fs::path lib = tempDir() / "librowprobe-process-minmax.so";
    // docs/writing-a-process-plugin.md: "-I$PREFIX/include", nothing else.
    std::vector<std::string> cmd = compiler();
    cmd.insert(cmd.end(), {"-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-I", include.string(),
                           (sourceDir() / "docs" / "examples" / "minmax_process.cpp").string(),
                           "-o", lib.string()});
    const CommandResult build = runCommand(cmd, 300);
    ASSERT_EQ(build.exitCode, 0) << "example process plugin does not build against the SDK:\n"
                                 << build.err;

    const std::string pcap = (sourceDir() / "pcaps" / "mixed.pcap").string();
    const fs::path out = tempDir() / "flows.json";
    const CommandResult r =
        runCommand({rowprobe.string(), "-i", "pcap;file=" + pcap, "-p",
                    lib.string() + ";min-packets=2", "-o", "json;file=" + out.string(), "-Q"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::size_t with = 0;
    std::size_t without = 0;
    for (const JsonObject& f : parseJsonLines(readFile(out))) {
        const std::uint64_t packets = std::stoull(f.at("packets"));
        const std::uint64_t bytes = std::stoull(f.at("bytes"));
        if (f.count("ip_len_min") == 0) {
            EXPECT_LT(packets + std::stoull(f.at("packets_rev")), 2U) << "min-packets=2";
            ++without;
            continue;
        }
        ++with;
        const std::uint64_t lo = std::stoull(f.at("ip_len_min"));
        const std::uint64_t hi = std::stoull(f.at("ip_len_max"));
        // The fields are the real bounds of the flow's packets.
        EXPECT_LE(lo, hi);
        EXPECT_LE(lo * packets, bytes);
        EXPECT_GE(hi * packets, bytes);
        if (packets == 1) {
            EXPECT_EQ(lo, bytes);
        }
    }
    EXPECT_GT(with, 0U);
    EXPECT_GT(without, 0U);

    // Errors are the usual exit-2 ConfigErrors naming the library.
    const CommandResult bad = runCommand({rowprobe.string(), "-i", "pcap;file=" + pcap, "-p",
                                          lib.string() + ";min-packet=2", "-o", "json", "-Q"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("min-packets"), std::string::npos) << bad.err;
    const CommandResult missing = runCommand({rowprobe.string(), "-i", "pcap;file=" + pcap, "-p",
                                              "/nonexistent/libx.so", "-o", "json", "-Q"});
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("cannot load process plugin library"), std::string::npos)
        << missing.err;
}

}  // namespace
}  // namespace rowprobe::test
