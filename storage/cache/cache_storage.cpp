// The `cache` storage plugin: option table, validation, and the choice of row policy and row
// length, which selects one FlowTable<Policy<L>, L> instantiation at start-up.
#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <vector>

#include "cache/hash.hpp"
#include "cache/policy_registry.hpp"
#include "cache/table_config.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::storage {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "size", .shortName = "s", .type = OptionType::Int, .defaultValue = "17",
     .help = "2^size records, an exponent as in ipfixprobe", .min = 4, .max = 30},
    {.name = "line", .shortName = "l", .type = OptionType::Int, .defaultValue = "16",
     .help = "slots per row: 4, 8, 16 or 32. A slot COUNT, not ipfixprobe's exponent "
             "(ipfixprobe line=4 is line=16 here)"},
    {.name = "active", .shortName = "a", .type = OptionType::Duration, .defaultValue = "300",
     .help = "active timeout: a flow whose first packet is older is exported and continues as a "
             "new flow",
     .min = 0, .max = 31536000},
    {.name = "inactive", .shortName = "i", .type = OptionType::Duration, .defaultValue = "30",
     .help = "inactive timeout: a flow idle this long is exported", .min = 0, .max = 31536000},
    {.name = "hash", .shortName = "h", .type = OptionType::Choice, .defaultValue = "xxh3",
     .help = "hash function of the flow key", .choices = kHashNames},
    {.name = "seed", .type = OptionType::Int,
     .help = "hash seed (default: random at start-up; set it for reproducible runs)"},
    {.name = "policy", .shortName = "p", .type = OptionType::String, .defaultValue = "lru",
     .help = "row replacement policy (listed below)"},
    {.name = "frag-enable", .shortName = "fe", .type = OptionType::Flag, .defaultValue = "true",
     .help = "fill the ports of non-first IP fragments from the first fragment"},
    {.name = "frag-size", .shortName = "fs", .type = OptionType::Int, .defaultValue = "10007",
     .help = "fragment cache entries", .min = 1, .max = 100000000},
    {.name = "frag-timeout", .shortName = "ft", .type = OptionType::Duration, .defaultValue = "3",
     .help = "how long a first fragment's ports are used for later fragments", .min = 0,
     .max = 3600},
};

/// Edit distance counting an adjacent transposition as one edit ("lur" → "lru" is 1).
std::size_t osaDistance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

std::string extraHelp() {
    std::string out = "row policies (policy=NAME):\n";
    std::size_t width = 0;
    for (const auto* p : RowPolicyRegistry::instance().list()) width = std::max(width, p->name.size());
    for (const auto* p : RowPolicyRegistry::instance().list()) {
        out += "  " + std::string(p->name) + std::string(width - p->name.size() + 2, ' ') +
               std::string(p->summary) + "\n";
    }
    out += "hash functions (hash=NAME):\n";
    width = 0;
    for (const auto& h : kHashFunctions) width = std::max(width, h.name.size());
    for (const auto& h : kHashFunctions) {
        out += "  " + std::string(h.name) + std::string(width - h.name.size() + 2, ' ') +
               std::string(h.summary) + "\n";
    }
    out += "note: size is an exponent as in ipfixprobe, but line is a slot count here (ipfixprobe's "
           "line is an exponent: its line=4 is line=16)\n";
    return out;
}

}  // namespace

std::span<const OptionSpec> cacheOptionSpecs() noexcept { return kOptions; }

unsigned parseLine(const Options& options) {
    const std::int64_t line = options.getInt("line");
    if (line < 0 || !isSupportedLine(static_cast<unsigned>(line))) {
        options.fail("line", "must be 4, 8, 16 or 32 (slots per row; ipfixprobe's line=4 is line=16 "
                             "here), got " + std::to_string(line));
    }
    return static_cast<unsigned>(line);
}

TableConfig parseTableConfig(const Options& options) {
    TableConfig c;
    c.line = parseLine(options);
    c.sizeLog2 = static_cast<unsigned>(options.getInt("size"));
    const auto minSize = static_cast<unsigned>(std::countr_zero(c.line));
    if (c.sizeLog2 < minSize) {
        options.fail("size", "must be at least " + std::to_string(minSize) + " with line=" +
                                 std::to_string(c.line) + " (2^size records must fill one row), got " +
                                 std::to_string(c.sizeLog2));
    }
    c.active = options.getDurationNs("active");
    c.inactive = options.getDurationNs("inactive");
    const std::string hash = options.getString("hash");
    c.hash = findHashFunction(hash);
    if (c.hash == nullptr) {
        options.fail("hash", "unknown hash function '" + hash + "'",
                     std::vector<std::string>(kHashNames.begin(), kHashNames.end()));
    }
    if (options.explicitlySet("seed")) {
        c.seed = static_cast<std::uint64_t>(options.getInt("seed"));
    } else {
        std::random_device rd;
        c.seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }
    c.fragEnabled = options.getFlag("frag-enable");
    c.fragSize = static_cast<std::size_t>(options.getInt("frag-size"));
    c.fragTimeout = options.getDurationNs("frag-timeout");
    return c;
}

std::unique_ptr<StoragePlugin> createCacheTable(const Options& options) {
    RowPolicyRegistry::instance().checkConsistent();
    const std::string name = options.getString("policy");
    const RowPolicyInfo* policy = RowPolicyRegistry::instance().find(name);
    if (policy == nullptr) {
        const std::vector<std::string> names = rowPolicyNames();
        std::string problem = "unknown row policy '" + name + "'";
        if (names.empty()) problem += " (no row policies are built in)";
        // The generic hint (ConfigError::render) misses transpositions such as "lur"; add ours
        // only when it would not print one itself.
        if (closestMatch(name, names).empty()) {
            for (const auto& n : names) {
                if (osaDistance(name, n) == 1) {
                    problem += " (did you mean '" + n + "'?)";
                    break;
                }
            }
        }
        options.fail("policy", problem, names);
    }
    return policy->factory(options, parseLine(options));
}

/// Tag type of the `cache` plugin: its factory is createCacheTable, which picks the concrete
/// FlowTable<Policy<L>, L> from the options (specialisation of detail::makePlugin below).
class CacheStorage;

}  // namespace rowprobe::storage

namespace rowprobe::detail {
template <>
std::unique_ptr<Plugin> makePlugin<storage::CacheStorage>(const Options& options) {
    return storage::createCacheTable(options);
}
}  // namespace rowprobe::detail

namespace rowprobe::storage {
ROWPROBE_REGISTER_PLUGIN(PluginKind::Storage, CacheStorage,
                         {.name = "cache",
                          .summary = "flow cache: rows of L slots, selectable row policy and hash",
                          .options = kOptions,
                          .extraHelp = &extraHelp});
}  // namespace rowprobe::storage
