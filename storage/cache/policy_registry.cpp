#include "cache/policy_registry.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <mutex>

#include "cache/table_config.hpp"
#include "rowprobe/errors.hpp"

namespace rowprobe::storage {

namespace {

/// Storage of the union option table. Fixed capacity, so a span handed out (to the plugin
/// registry, to an Options object) never dangles when a later registration appends to it.
struct OptionUnion {
    static constexpr std::size_t kCapacity = 128;
    std::array<OptionSpec, kCapacity> specs{};
    std::size_t count = 0;
    std::size_t publishedPolicies = 0;  ///< registry size when the union was last built
    std::deque<std::string> help;       ///< "[policy NAME] ..." lines (deque: stable addresses)
    std::mutex mutex;                   ///< cacheOptionTable() may be called from any thread
};

OptionUnion& optionUnion() {
    static OptionUnion u;
    return u;
}

/// Rebuilds the union from the cache's own options and every policy's, in registration order,
/// and points the `cache` plugin's registry entry at it. Runs during static initialisation
/// (from every policy registration and from the cache plugin's own), so the final table is
/// complete whatever the initialisation order.
///
/// Rebuilding happens only when a policy was added since the last build, so the table a
/// reader holds is never rewritten under it and the help lines do not accumulate.
void publishCacheOptions() {
    OptionUnion& u = optionUnion();
    const std::scoped_lock lock(u.mutex);
    const std::size_t policies = RowPolicyRegistry::instance().list().size();
    if (u.count != 0 && u.publishedPolicies == policies) return;
    u.publishedPolicies = policies;
    u.help.clear();
    const std::span<const OptionSpec> base = cacheOptionSpecs();
    std::size_t n = 0;
    auto append = [&](const OptionSpec& spec) {
        if (n < OptionUnion::kCapacity) u.specs[n++] = spec;
    };
    for (const auto& spec : base) append(spec);
    for (const RowPolicyInfo* p : RowPolicyRegistry::instance().list()) {
        for (OptionSpec spec : p->options) {
            u.help.push_back("[policy " + std::string(p->name) + "] " + std::string(spec.help));
            spec.help = u.help.back();
            append(spec);
        }
    }
    u.count = n;
    // The registry copies PluginInfo at registration; the cache plugin may have registered
    // before some policies, so its entry is updated in place (the entry lives in a vector the
    // registry owns and never shrinks; only static initialisers get here).
    if (const Registry::Entry* e = Registry::instance().find(PluginKind::Storage, "cache")) {
        const_cast<Registry::Entry*>(e)->info.options =
            std::span<const OptionSpec>(u.specs.data(), u.count);
    }
}

}  // namespace

RowPolicyRegistry& RowPolicyRegistry::instance() {
    static RowPolicyRegistry registry;
    return registry;
}

bool RowPolicyRegistry::add(const RowPolicyInfo& info) {
    if (const RowPolicyInfo* existing = find(info.name)) {
        m_duplicates.push_back("row policy '" + std::string(info.name) + "' is registered twice (" +
                               std::string(existing->summary) + " / " + std::string(info.summary) +
                               ")");
        return false;
    }
    m_entries.push_back(info);
    if (info.options.size() != 0) publishCacheOptions();
    return true;
}

void RowPolicyRegistry::checkConsistent() const {
    if (!m_duplicates.empty()) {
        throw ConfigError({.component = "row policy registry", .problem = m_duplicates.front()});
    }
    const std::span<const OptionSpec> base = cacheOptionSpecs();
    for (const auto& p : m_entries) {
        for (const auto& spec : p.options) {
            auto clash = [&](const OptionSpec& other) {
                return other.name == spec.name ||
                       (!spec.shortName.empty() && other.shortName == spec.shortName);
            };
            if (std::any_of(base.begin(), base.end(), clash)) {
                throw ConfigError({.component = "row policy registry",
                                   .problem = "option '" + std::string(spec.name) +
                                              "' of policy '" + std::string(p.name) +
                                              "' clashes with a cache option"});
            }
            for (const auto& q : m_entries) {
                if (&q == &p) break;
                if (std::any_of(q.options.begin(), q.options.end(), clash)) {
                    throw ConfigError({.component = "row policy registry",
                                       .problem = "option '" + std::string(spec.name) +
                                                  "' is declared by policies '" +
                                                  std::string(q.name) + "' and '" +
                                                  std::string(p.name) + "'"});
                }
            }
        }
    }
    if (optionUnion().count == OptionUnion::kCapacity) {
        throw ConfigError({.component = "row policy registry",
                           .problem = "more cache and policy options than the table holds (" +
                                      std::to_string(OptionUnion::kCapacity) + ")"});
    }
}

const RowPolicyInfo* RowPolicyRegistry::ownerOf(std::string_view option) const {
    for (const auto& e : m_entries) {
        for (const auto& spec : e.options) {
            if (spec.name == option) return &e;
        }
    }
    return nullptr;
}

const RowPolicyInfo* RowPolicyRegistry::find(std::string_view name) const {
    for (const auto& e : m_entries) {
        if (e.name == name) return &e;
    }
    return nullptr;
}

std::vector<const RowPolicyInfo*> RowPolicyRegistry::list() const {
    std::vector<const RowPolicyInfo*> out;
    for (const auto& e : m_entries) out.push_back(&e);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
    return out;
}

std::vector<std::string> rowPolicyNames() {
    std::vector<std::string> names;
    for (const auto* p : RowPolicyRegistry::instance().list()) names.emplace_back(p->name);
    return names;
}

std::span<const OptionSpec> cacheOptionTable() {
    publishCacheOptions();
    return {optionUnion().specs.data(), optionUnion().count};
}

std::uint64_t cacheLayoutFingerprint() noexcept { return detail::cacheLayoutFingerprintOf(); }

const RowPolicyInfo& registerRowPolicyLibrary(const std::string& path) {
    const LoadedRowPolicy lib = loadRowPolicyLibrary(path, "storage 'cache'", "policy");
    const RowPolicyDescriptor& d = *lib.descriptor;
    if (d.cacheLayout != cacheLayoutFingerprint()) {
        throw ConfigError(
            {.component = "storage 'cache'",
             .option = "policy",
             .value = path,
             .problem = "row policy library '" + path +
                        "' was built against different flow-table headers; rebuild it against "
                        "this rowprobe's SDK headers"});
    }
    RowPolicyRegistry& reg = RowPolicyRegistry::instance();
    if (const RowPolicyInfo* existing = reg.find(d.name)) {
        if (existing->factory == d.factory) return *existing;
        throw ConfigError(
            {.component = "storage 'cache'",
             .option = "policy",
             .value = path,
             .problem = "row policy library '" + path + "' defines policy '" + std::string(d.name) +
                        "', which is already " +
                        (existing->library.empty()
                             ? std::string("built in")
                             : "loaded from '" + std::string(existing->library) + "'")});
    }
    static std::deque<std::string> paths;  // keeps the library path alive for RowPolicyInfo
    paths.push_back(path);
    reg.add({.name = d.name,
             .summary = d.summary != nullptr ? d.summary : "",
             .factory = d.factory,
             .library = paths.back()});
    return *reg.find(d.name);
}

}  // namespace rowprobe::storage
