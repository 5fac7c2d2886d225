// libFuzzer target for plugin strings: splitPluginString + parseOptions against a table with
// every option type, then every getter. Anything but ConfigError escaping is a bug, and so is
// a ConfigError whose rendering fails; a parse that succeeds must give values within the
// table's bounds.
//
//   build/fuzz/plugin_string_fuzz -max_len=256
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"

namespace {

using rowprobe::OptionSpec;
using rowprobe::OptionType;

constexpr std::string_view kChoices[] = {"lru", "lirs", "2q", "s3-fifo"};

constexpr OptionSpec kSpecs[] = {
    {.name = "size",
     .shortName = "s",
     .type = OptionType::Int,
     .defaultValue = "17",
     .help = "log2 records",
     .min = 4,
     .max = 30},
    {.name = "ratio",
     .type = OptionType::Double,
     .defaultValue = "0.5",
     .help = "share",
     .min = 0,
     .max = 1},
    {.name = "active",
     .shortName = "a",
     .type = OptionType::Duration,
     .defaultValue = "300",
     .help = "timeout",
     .min = 0,
     .max = 86400},
    {.name = "file", .shortName = "f", .type = OptionType::String, .help = "path"},
    {.name = "verbose", .shortName = "v", .type = OptionType::Flag, .help = "log more"},
    {.name = "policy",
     .shortName = "p",
     .type = OptionType::Choice,
     .defaultValue = "lru",
     .help = "row policy",
     .choices = kChoices},
    {.name = "big",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "wide range",
     .min = -9.2e18,
     .max = 9.2e18},
};

void check(bool condition) {
    if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const rowprobe::PluginString ps = rowprobe::splitPluginString(text, "storage");
        const rowprobe::Options o =
            rowprobe::parseOptions("storage 'fuzz'", ps, kSpecs, "rowprobe -h fuzz", "-s");
        const std::int64_t sizeValue = o.getInt("size");
        check(sizeValue >= 4 && sizeValue <= 30);
        const double ratio = o.getDouble("ratio");
        check(ratio >= 0 && ratio <= 1);
        check(o.getDurationNs("active") <= 86400ULL * 1000000000ULL);
        static_cast<void>(o.getString("file"));
        static_cast<void>(o.getFlag("verbose"));
        const std::string policy = o.getString("policy");
        bool known = false;
        for (const auto c : kChoices) known = known || policy == c;
        check(known);
        static_cast<void>(o.getInt("big"));
    } catch (const rowprobe::ConfigError& e) {
        check(!e.render().empty());
    }
    std::uint64_t ns = 0;
    if (rowprobe::parseDuration(text, ns)) {
        // A duration is a plain decimal with an optional unit: no sign, space or exponent.
        check(text.find_first_of(" +eExX\t") == std::string::npos);
    }
    return 0;
}
