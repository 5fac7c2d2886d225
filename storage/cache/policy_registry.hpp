// Registry of row policies: the names `policy=` accepts, each with a one-line summary and a
// factory that builds FlowTable<Policy<L>, L> for the requested row length.
//
//   storage/policies/lru.cpp:  ROWPROBE_REGISTER_ROW_POLICY(LruPolicy, "ipfixprobe LRU: ...")
//        │ static initialiser (order-independent: the registry is a function-local static)
//        ▼
//   RowPolicyRegistry { "lru" → makeFlowTable<LruPolicy> }   ◀── cache plugin at start-up:
//                                                               find(policy)->factory(opts, line)
//
// ROWPROBE_REGISTER_ROW_POLICY(PolicyTemplate, summary), used once in the policy's own .cpp:
//   1. static_asserts RowPolicy<PolicyTemplate<L>, L> for L = 4, 8, 16, 32 (a mistake is a
//      one-line compile error naming the policy);
//   2. instantiates FlowTable<PolicyTemplate<L>, L> for those four L in that .cpp only, so adding
//      a policy touches one file and rebuilds one file;
//   3. registers the factory under PolicyTemplate<16>::kName, with the policy's own options
//      (optional third argument: a span of OptionSpec, see below).
//
// Policy options. Each policy declares its options next to its code:
//     constexpr OptionSpec kOptions[] = {{.name = "2q-ratio", ...}};
//     ROWPROBE_REGISTER_ROW_POLICY(TwoQPolicy, "summary", kOptions);
// The `cache` plugin's option table is the union of its own options and every policy's, built
// during static initialisation (whatever the order: each registration republishes the union)
// and frozen once main() runs. So `-h cache` shows every option, the plugin string parser
// accepts them, and the policy constructor reads them from the Options it is given. Setting
// an option of a policy other than the selected one is an error naming the owner:
//     option 'a1-ratio' belongs to policy '2q' (policy=lru)
// Option names are global across policies; a clash is reported by checkConsistent.
//
// Shared-object policies (rowprobe/row_policy_plugin.hpp): ROWPROBE_EXPORT_ROW_POLICY(P, summary)
// in the library defines the C entry point returning a descriptor whose factory is
// makeFlowTable<P>. `policy=/path/lib.so`, or a bare name found in `policy-dir` /
// $ROWPROBE_POLICY_PATH, loads it (createCacheTable) and registers it here under its own name.
// Library policies take no options in ABI 1 (the option table is frozen before they load).
//
// Thread ownership: written by static initialisers before main, read-only afterwards.
// Costs: start-up only; nothing here runs per packet.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_layout.hpp"
#include "cache/flow_table.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"
#include "rowprobe/row_policy_plugin.hpp"

namespace rowprobe::storage {

/// Builds the flow table for one policy; `line` is already validated (4, 8, 16 or 32).
using RowPolicyFactory = std::unique_ptr<StoragePlugin> (*)(const Options& options, unsigned line);

struct RowPolicyInfo {
    std::string_view name;
    std::string_view summary;
    RowPolicyFactory factory = nullptr;
    std::span<const OptionSpec> options{};  ///< options only this policy reads
    std::string_view library;               ///< shared object it came from; empty = built in
};

class RowPolicyRegistry {
public:
    /// The process-wide registry (function-local static).
    static RowPolicyRegistry& instance();

    /// Called from static initialisers. A duplicate name is remembered and reported by
    /// checkConsistent, naming both registrations.
    bool add(const RowPolicyInfo& info);
    /// Throws ConfigError if two policies registered the same name, or two declared the same
    /// option name (or one of the cache's own).
    void checkConsistent() const;
    /// The policy that declares option `name`, or nullptr for the cache's own options.
    const RowPolicyInfo* ownerOf(std::string_view option) const;

    const RowPolicyInfo* find(std::string_view name) const;
    /// Every policy, sorted by name.
    std::vector<const RowPolicyInfo*> list() const;

private:
    std::vector<RowPolicyInfo> m_entries;
    std::vector<std::string> m_duplicates;
};

/// The registered policy names, sorted (tests iterate over them).
std::vector<std::string> rowPolicyNames();

/// The `cache` plugin's option table: its own options followed by every registered policy's
/// (help lines prefixed "[policy NAME]"). Stable storage: spans handed out stay valid.
std::span<const OptionSpec> cacheOptionTable();

/// Loads a shared-object policy (rowprobe/row_policy_plugin.hpp), checks the cache layout and
/// registers it under its own name (ConfigError if a different policy has that name). Loading
/// the same library again returns the existing entry. Start-up only.
const RowPolicyInfo& registerRowPolicyLibrary(const std::string& path);

/// The fingerprint of the flow-table types a policy library compiles in (checked at load;
/// cache_layout.hpp).
std::uint64_t cacheLayoutFingerprint() noexcept;

/// Builds the `cache` plugin's table from its options: looks up `policy` (ConfigError with the
/// registered names and a "did you mean" when unknown), validates `line`, calls the factory.
std::unique_ptr<StoragePlugin> createCacheTable(const Options& options);

/// "line must be 4, 8, 16 or 32": reads and validates the option (throws ConfigError).
unsigned parseLine(const Options& options);

namespace detail {

constexpr std::span<const OptionSpec> policyOptions() noexcept { return {}; }
constexpr std::span<const OptionSpec> policyOptions(std::span<const OptionSpec> options) noexcept {
    return options;
}

template <template <unsigned> class P>
std::unique_ptr<StoragePlugin> makeFlowTable(const Options& options, unsigned line) {
    switch (line) {
        case 4:
            return std::make_unique<FlowTable<P<4>, 4>>(options);
        case 8:
            return std::make_unique<FlowTable<P<8>, 8>>(options);
        case 16:
            return std::make_unique<FlowTable<P<16>, 16>>(options);
        case 32:
            return std::make_unique<FlowTable<P<32>, 32>>(options);
        default:
            return nullptr;
    }
}

}  // namespace detail

/// Registers row policy template POLICY (a class template over L) with a one-line SUMMARY and,
/// optionally, the policy's option table (an array or span of OptionSpec).
#define ROWPROBE_REGISTER_ROW_POLICY(POLICY, SUMMARY, ...)                                    \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<4>, 4>,                               \
                  #POLICY " is not a RowPolicy (L=4)");                                       \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<8>, 8>,                               \
                  #POLICY " is not a RowPolicy (L=8)");                                       \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<16>, 16>,                             \
                  #POLICY " is not a RowPolicy (L=16)");                                      \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<32>, 32>,                             \
                  #POLICY " is not a RowPolicy (L=32)");                                      \
    namespace {                                                                               \
    [[maybe_unused]] const bool ROWPROBE_CONCAT(kRowPolicyRegistered, __LINE__) =             \
        ::rowprobe::storage::RowPolicyRegistry::instance().add(                               \
            {POLICY<16>::kName, SUMMARY, &::rowprobe::storage::detail::makeFlowTable<POLICY>, \
             ::rowprobe::storage::detail::policyOptions(__VA_ARGS__)});                       \
    }                                                                                         \
    static_assert(true, "ROWPROBE_REGISTER_ROW_POLICY takes a trailing semicolon")

/// Defines the entry point of a shared-object policy library for POLICY (a class template over
/// L): the same static checks as ROWPROBE_REGISTER_ROW_POLICY, FlowTable instantiated for
/// L = 4, 8, 16, 32 inside the library, and `rowprobe_row_policy()` returning the descriptor.
/// Use it once, at global scope, in a library built against the installed headers.
// POLICY names a class template (POLICY<4>), which cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ROWPROBE_EXPORT_ROW_POLICY(POLICY, SUMMARY)                                       \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<4>, 4>,                           \
                  #POLICY " is not a RowPolicy (L=4)");                                   \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<8>, 8>,                           \
                  #POLICY " is not a RowPolicy (L=8)");                                   \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<16>, 16>,                         \
                  #POLICY " is not a RowPolicy (L=16)");                                  \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<32>, 32>,                         \
                  #POLICY " is not a RowPolicy (L=32)");                                  \
    extern "C" __attribute__((visibility("default"))) const void* rowprobe_row_policy() { \
        static const ::rowprobe::RowPolicyDescriptor descriptor{                          \
            .cacheLayout = ::rowprobe::storage::detail::cacheLayoutFingerprintOf(),       \
            .name = POLICY<16>::kName.data(),                                             \
            .summary = (SUMMARY),                                                         \
            .factory = &::rowprobe::storage::detail::makeFlowTable<POLICY>};              \
        return &descriptor;                                                               \
    }                                                                                     \
    static_assert(true, "ROWPROBE_EXPORT_ROW_POLICY takes a trailing semicolon")
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace rowprobe::storage
