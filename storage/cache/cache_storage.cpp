// The `cache` storage plugin: option table, validation, and the choice of row policy and row
// length, which selects one FlowTable<Policy<L>, L> instantiation at start-up.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cache/hash.hpp"
#include "cache/policy_registry.hpp"
#include "cache/table_config.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/paths.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::storage {

namespace {

constexpr std::string_view kExpiryModes[] = {"inline", "thread"};
constexpr std::string_view kPoolPages[] = {"4k", "huge"};
constexpr std::string_view kAdmissionModes[] = {"off", "second-packet", "back"};

constexpr OptionSpec kOptions[] = {
    {.name = "size",
     .shortName = "s",
     .type = OptionType::Int,
     .defaultValue = "17",
     .help = "2^size records, an exponent as in ipfixprobe",
     .min = 4,
     .max = 30},
    {.name = "line",
     .shortName = "l",
     .type = OptionType::Int,
     .defaultValue = "16",
     .help = "slots per row: 4, 8, 16 or 32. A slot COUNT, not ipfixprobe's exponent "
             "(ipfixprobe line=4 is line=16 here)"},
    {.name = "active",
     .shortName = "a",
     .type = OptionType::Duration,
     .defaultValue = "300",
     .help = "active timeout: a flow whose first packet is older is exported and continues as a "
             "new flow",
     .min = 0,
     .max = 31536000},
    {.name = "inactive",
     .shortName = "i",
     .type = OptionType::Duration,
     .defaultValue = "30",
     .help = "inactive timeout: a flow idle this long is exported",
     .min = 0,
     .max = 31536000},
    {.name = "hash",
     .shortName = "h",
     .type = OptionType::Choice,
     .defaultValue = "xxh3",
     .help = "hash function of the flow key",
     .choices = kHashNames},
    {.name = "seed",
     .type = OptionType::Int,
     .help = "hash seed (default: random at start-up; set it for reproducible runs)"},
    {.name = "policy",
     .shortName = "p",
     .type = OptionType::String,
     .defaultValue = "lru",
     .help = "row replacement policy (listed below), or the path of a policy library (.so)"},
    {.name = "policy-dir",
     .type = OptionType::String,
     .help = "directories (colon-separated) searched for policy libraries named "
             "librowprobe-policy-NAME.so or NAME.so, before $ROWPROBE_POLICY_PATH and the "
             "installed plugin directory"},
    {.name = "frag-enable",
     .shortName = "fe",
     .type = OptionType::Flag,
     .defaultValue = "true",
     .help = "fill the ports of non-first IP fragments from the first fragment"},
    {.name = "frag-size",
     .shortName = "fs",
     .type = OptionType::Int,
     .defaultValue = "10007",
     .help = "fragment cache entries",
     .min = 1,
     .max = 100000000},
    {.name = "frag-timeout",
     .shortName = "ft",
     .type = OptionType::Duration,
     .defaultValue = "3",
     .help = "how long a first fragment's ports are used for later fragments",
     .min = 0,
     .max = 3600},
    {.name = "expiry",
     .shortName = "e",
     .type = OptionType::Choice,
     .defaultValue = "inline",
     .help = "who finds expired flows: the worker, a few rows per batch (inline), or the export "
             "thread under per-row try-locks (thread)",
     .choices = kExpiryModes},
    {.name = "pool-pages",
     .type = OptionType::Choice,
     .defaultValue = "4k",
     .help = "pages of the process plugins' per-flow records: 4 KiB (4k; cheaper to fault in, "
             "measured faster on VMs) or transparent huge pages (huge; fewer TLB misses)",
     .choices = kPoolPages},
    {.name = "table-pages",
     .type = OptionType::Choice,
     .defaultValue = "4k",
     .help = "pages of the flow records: 4 KiB (4k; cheaper to fault in, faster for runs of "
             "minutes on VMs; huge pages from a minute of packet time after the table is a "
             "quarter full) or transparent huge pages from the start (huge)",
     .choices = kPoolPages},
    {.name = "prefault",
     .type = OptionType::Flag,
     .defaultValue = "true",
     .help = "the input thread, while it waits for the worker, maps in the next 8 MiB of each "
             "process plugin's per-flow records and the table's record planes the flows are "
             "about to reach, so the worker creating flows takes no page fault there (needs "
             "Linux 5.14; an input without a thread of its own does not)"},
    {.name = "flood",
     .type = OptionType::Flag,
     .defaultValue = "true",
     .help = "flood detector: EWMA + CUSUM over new flows per interval of packet time"},
    {.name = "flood-interval",
     .type = OptionType::Duration,
     .defaultValue = "5",
     .help = "flood detector interval (packet time)",
     .min = 0.001,
     .max = 3600},
    {.name = "flood-alpha",
     .type = OptionType::Double,
     .defaultValue = "0.3",
     .help = "flood detector EWMA weight of the newest interval",
     .min = 0.001,
     .max = 1},
    {.name = "flood-k",
     .type = OptionType::Double,
     .defaultValue = "5",
     .help = "flood detector threshold and alarm level in standard deviations",
     .min = 0,
     .max = 1000},
    {.name = "flood-floor",
     .type = OptionType::Double,
     .defaultValue = "7000",
     .help = "flood detector: least excess of new flows per interval over the forecast",
     .min = 0,
     .max = 1e12},
    {.name = "flood-warmup",
     .type = OptionType::Int,
     .defaultValue = "3",
     .help = "flood detector intervals that only learn the baseline (the first one, the table "
             "filling up, is only counted)",
     .min = 0,
     .max = 1000},
    {.name = "flood-admission",
     .type = OptionType::Choice,
     .defaultValue = "off",
     .help = "while a flood is detected: nothing (off), admit a new flow on its second packet "
             "(second-packet), or evict flows admitted during the flood first (back)",
     .choices = kAdmissionModes},
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
    for (const auto* p : RowPolicyRegistry::instance().list())
        width = std::max(width, p->name.size());
    for (const auto* p : RowPolicyRegistry::instance().list()) {
        out += "  " + std::string(p->name) + std::string(width - p->name.size() + 2, ' ') +
               std::string(p->summary) + "\n";
    }
    out +=
        "  (policy=/path/lib.so, or a NAME found in policy-dir or $ROWPROBE_POLICY_PATH, loads a\n"
        "   policy library built against the installed SDK headers; see "
        "docs/writing-a-row-policy.md)\n";
    out += "hash functions (hash=NAME):\n";
    width = 0;
    for (const auto& h : kHashFunctions) width = std::max(width, h.name.size());
    for (const auto& h : kHashFunctions) {
        out += "  " + std::string(h.name) + std::string(width - h.name.size() + 2, ' ') +
               std::string(h.summary) + "\n";
    }
    out +=
        "note: size is an exponent as in ipfixprobe, but line is a slot count here (ipfixprobe's "
        "line is an exponent: its line=4 is line=16)\n";
    return out;
}

}  // namespace

std::span<const OptionSpec> cacheOptionSpecs() noexcept { return kOptions; }

unsigned parseLine(const Options& options) {
    const std::int64_t line = options.getInt("line");
    if (line < 0 || !isSupportedLine(static_cast<unsigned>(line))) {
        options.fail("line",
                     "must be 4, 8, 16 or 32 (slots per row; ipfixprobe's line=4 is line=16 "
                     "here), got " +
                         std::to_string(line));
    }
    return static_cast<unsigned>(line);
}

TableConfig parseTableConfig(const Options& options) {
    TableConfig c;
    c.line = parseLine(options);
    c.sizeLog2 = static_cast<unsigned>(options.getInt("size"));
    const auto minSize = static_cast<unsigned>(std::countr_zero(c.line));
    if (c.sizeLog2 < minSize) {
        options.fail("size", "must be at least " + std::to_string(minSize) +
                                 " with line=" + std::to_string(c.line) +
                                 " (2^size records must fill one row), got " +
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
    c.expiryThread = options.getString("expiry") == "thread";
    c.hugePools = options.getString("pool-pages") == "huge";
    c.hugePlanes = options.getString("table-pages") == "huge";
    c.prefault = options.getFlag("prefault");
    c.flood.enabled = options.getFlag("flood");
    c.flood.interval = options.getDurationNs("flood-interval");
    c.flood.alpha = options.getDouble("flood-alpha");
    c.flood.k = options.getDouble("flood-k");
    c.flood.floor = options.getDouble("flood-floor");
    c.flood.warmup = static_cast<unsigned>(options.getInt("flood-warmup"));
    const std::string admission = options.getString("flood-admission");
    c.flood.admission = admission == "second-packet" ? FloodAdmission::SecondPacket
                        : admission == "back"        ? FloodAdmission::Back
                                                     : FloodAdmission::Off;
    if (c.flood.admission != FloodAdmission::Off && !c.flood.enabled) {
        options.fail("flood-admission",
                     "needs the flood detector (flood=false turns it off), got "
                     "flood-admission=" +
                         admission);
    }
    return c;
}

namespace {

/// The policy library `name` refers to: the name itself when it looks like a path, else a file
/// found in `policy-dir` or $ROWPROBE_POLICY_PATH; empty when there is none.
std::string policyLibraryFor(const std::string& name, const Options& options,
                             std::vector<std::string>& searched) {
    if (name.find('/') != std::string::npos || name.ends_with(".so")) return name;
    if (name.empty()) return {};
    std::vector<std::string> dirs;
    if (options.explicitlySet("policy-dir"))
        dirs = splitSearchPath(options.getString("policy-dir"));
    if (const char* env = std::getenv("ROWPROBE_POLICY_PATH")) {
        for (auto& d : splitSearchPath(env)) dirs.push_back(std::move(d));
    }
    dirs.emplace_back(defaultPluginDir());  // the installed plugin directory, last
    searched = dirs;
    return findRowPolicyLibrary(name, dirs);
}

}  // namespace

std::unique_ptr<StoragePlugin> createCacheTable(const Options& options) {
    RowPolicyRegistry::instance().checkConsistent();
    std::string name = options.getString("policy");
    const RowPolicyInfo* policy = RowPolicyRegistry::instance().find(name);
    std::vector<std::string> searched;
    if (policy == nullptr) {
        if (const std::string lib = policyLibraryFor(name, options, searched); !lib.empty()) {
            policy = &registerRowPolicyLibrary(lib);
            name = std::string(policy->name);
        }
    }
    if (policy == nullptr) {
        const std::vector<std::string> names = rowPolicyNames();
        std::string problem = "unknown row policy '" + name + "'";
        if (names.empty()) problem += " (no row policies are built in)";
        if (!searched.empty()) {
            problem +=
                " (no policy library librowprobe-policy-" + name + ".so or " + name + ".so in";
            for (const auto& d : searched) problem += " " + d;
            problem += ")";
        }
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
    // Options of other policies are accepted by the parser (one table for all) but meaningless
    // here: say whose they are rather than ignoring them.
    for (const OptionSpec& spec : cacheOptionTable()) {
        const RowPolicyInfo* owner = RowPolicyRegistry::instance().ownerOf(spec.name);
        if (owner != nullptr && owner->name != policy->name && options.explicitlySet(spec.name)) {
            options.fail(std::string(spec.name),
                         "option '" + std::string(spec.name) + "' belongs to policy '" +
                             std::string(owner->name) + "' (policy=" + name + ")");
        }
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
                          .options = cacheOptionTable(),
                          .extraHelp = &extraHelp});
}  // namespace rowprobe::storage
