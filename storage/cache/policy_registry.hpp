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
//   3. registers the factory under PolicyTemplate<16>::kName.
//
// Thread ownership: written by static initialisers before main, read-only afterwards.
// Costs: start-up only; nothing here runs per packet.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/flow_table.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::storage {

/// Builds the flow table for one policy; `line` is already validated (4, 8, 16 or 32).
using RowPolicyFactory = std::unique_ptr<StoragePlugin> (*)(const Options& options, unsigned line);

struct RowPolicyInfo {
    std::string_view name;
    std::string_view summary;
    RowPolicyFactory factory = nullptr;
};

class RowPolicyRegistry {
public:
    /// The process-wide registry (function-local static).
    static RowPolicyRegistry& instance();

    /// Called from static initialisers. A duplicate name is remembered and reported by
    /// checkConsistent, naming both registrations.
    bool add(const RowPolicyInfo& info);
    /// Throws ConfigError if two policies registered the same name.
    void checkConsistent() const;

    const RowPolicyInfo* find(std::string_view name) const;
    /// Every policy, sorted by name.
    std::vector<const RowPolicyInfo*> list() const;

private:
    std::vector<RowPolicyInfo> m_entries;
    std::vector<std::string> m_duplicates;
};

/// The registered policy names, sorted (tests iterate over them).
std::vector<std::string> rowPolicyNames();

/// Builds the `cache` plugin's table from its options: looks up `policy` (ConfigError with the
/// registered names and a "did you mean" when unknown), validates `line`, calls the factory.
std::unique_ptr<StoragePlugin> createCacheTable(const Options& options);

/// "line must be 4, 8, 16 or 32": reads and validates the option (throws ConfigError).
unsigned parseLine(const Options& options);

namespace detail {

template <template <unsigned> class P>
std::unique_ptr<StoragePlugin> makeFlowTable(const Options& options, unsigned line) {
    switch (line) {
        case 4: return std::make_unique<FlowTable<P<4>, 4>>(options);
        case 8: return std::make_unique<FlowTable<P<8>, 8>>(options);
        case 16: return std::make_unique<FlowTable<P<16>, 16>>(options);
        case 32: return std::make_unique<FlowTable<P<32>, 32>>(options);
        default: return nullptr;
    }
}

}  // namespace detail

/// Registers row policy template POLICY (a class template over L) with a one-line SUMMARY.
#define ROWPROBE_REGISTER_ROW_POLICY(POLICY, SUMMARY)                                              \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<4>, 4>, #POLICY " is not a RowPolicy (L=4)");    \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<8>, 8>, #POLICY " is not a RowPolicy (L=8)");    \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<16>, 16>, #POLICY " is not a RowPolicy (L=16)"); \
    static_assert(::rowprobe::storage::RowPolicy<POLICY<32>, 32>, #POLICY " is not a RowPolicy (L=32)"); \
    namespace {                                                                                    \
    [[maybe_unused]] const bool ROWPROBE_CONCAT(kRowPolicyRegistered, __LINE__) =                  \
        ::rowprobe::storage::RowPolicyRegistry::instance().add(                                    \
            {POLICY<16>::kName, SUMMARY, &::rowprobe::storage::detail::makeFlowTable<POLICY>});     \
    }                                                                                              \
    static_assert(true, "ROWPROBE_REGISTER_ROW_POLICY takes a trailing semicolon")

}  // namespace rowprobe::storage
