// libFuzzer target for --config files: the file text goes through configFileArguments (the
// strict `name = value` reader) and, when accepted, through parseCommandLine with an input
// added. Anything but ConfigError escaping is a bug; so is an accepted file whose on/off
// options ended up with a value other than the documented ones.
//
//   build/fuzz/config_file_fuzz -max_len=512
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "rowprobe/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    try {
        const std::vector<std::string> args = rowprobe::core::configFileArguments("fuzz.conf", in);
        std::vector<std::string> argv = {"rowprobe", "-i", "gen"};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<const char*> raw;
        for (const auto& a : argv) raw.push_back(a.c_str());
        const auto result =
            rowprobe::core::parseCommandLine(static_cast<int>(raw.size()), raw.data());
        if (result.action == rowprobe::core::CliResult::Action::Run &&
            result.config.inputs.empty()) {
            std::abort();  // an accepted command line always has its input
        }
    } catch (const rowprobe::ConfigError& e) {
        if (e.render().empty()) std::abort();
    }
    return 0;
}
