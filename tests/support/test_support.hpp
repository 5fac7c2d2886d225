// Helpers shared by the test executables: locating the third-party ground truth, running the
// built rowprobe binary, writing small pcaps, reading JSON-lines output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace rowprobe::test {

/// ../shared/testdata next to the project; tests skip when it (or a file in it) is absent.
std::filesystem::path testdataDir();
/// The project's source tree (pcaps/, tests/golden/ ...).
std::filesystem::path sourceDir();
/// The built rowprobe executable.
std::filesystem::path rowprobeBinary();
/// A fresh temporary directory, removed when the process exits.
std::filesystem::path tempDir();

/// Skips the current test with a clear message when `path` does not exist.
#define ROWPROBE_REQUIRE_FILE(path)                                                   \
    do {                                                                              \
        if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << (path);    \
    } while (0)

struct CommandResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};
/// Runs `argv` (no shell), capturing stdout and stderr. `timeoutSec` kills it (exit -1).
CommandResult runCommand(const std::vector<std::string>& argv, int timeoutSec = 120);
/// Runs a shell command line through /bin/sh -c.
CommandResult runShell(const std::string& command, int timeoutSec = 120);

/// Decompresses `gz` into `dest` once (cached by size/mtime); returns false on failure.
bool gunzip(const std::filesystem::path& gz, const std::filesystem::path& dest);

/// The synthetic 10k-flow trace, gunzipped into a cache under the build dir; empty if absent.
std::filesystem::path synth10kPcap();

/// Writes a classic pcap (microsecond or nanosecond precision) of Ethernet frames.
class PcapWriter {
public:
    PcapWriter(const std::filesystem::path& path, bool nanosecond = true, std::uint32_t linkType = 1);
    ~PcapWriter();
    PcapWriter(const PcapWriter&) = delete;
    PcapWriter& operator=(const PcapWriter&) = delete;
    void write(std::uint64_t tsNs, const std::vector<std::uint8_t>& frame);

private:
    std::FILE* m_file = nullptr;
    bool m_nano;
};

/// Minimal frame builders for tests (valid checksums are not needed by the parser).
std::vector<std::uint8_t> ethIpv4Tcp(const std::string& src, std::uint16_t sport, const std::string& dst,
                                     std::uint16_t dport, std::uint8_t flags, std::size_t payload = 0);
std::vector<std::uint8_t> ethIpv4Udp(const std::string& src, std::uint16_t sport, const std::string& dst,
                                     std::uint16_t dport, std::size_t payload = 0);

/// One JSON object of the `json` output, flattened to key -> raw text value (strings unquoted).
using JsonObject = std::map<std::string, std::string>;
/// Parses JSON-lines text made of flat objects (the json output's format).
std::vector<JsonObject> parseJsonLines(const std::string& text);

}  // namespace rowprobe::test
