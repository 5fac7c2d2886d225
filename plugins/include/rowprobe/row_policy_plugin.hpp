// Row policies in shared objects: the C entry point a policy library exports, the descriptor it
// returns, and the loader that opens the library and checks it (plugins/src/loader.cpp).
//
//   libmypolicy.so                                   rowprobe (started with -rdynamic)
//   ┌──────────────────────────────────────────┐     ┌──────────────────────────────────────┐
//   │ FlowTable<MyPolicy<L>, L>, L = 4..32     │     │ -s 'cache;policy=/path/libmypolicy.so'│
//   │ extern "C" rowprobe_row_policy()  ───────┼────▶│ loadRowPolicyLibrary: dlopen, ABI     │
//   │   → RowPolicyDescriptor{abi, name, ...}  │     │ check, then the cache registers it    │
//   └──────────────────────────────────────────┘     └──────────────────────────────────────┘
//
// * The library instantiates the whole flow table for its policy, so policy calls inline inside
//   the library exactly as for built-in policies; the host calls the table once per batch
//   through StoragePlugin. Policy writers never fill the descriptor by hand: the macro
//   ROWPROBE_EXPORT_ROW_POLICY (storage/cache/policy_registry.hpp) does it.
// * Compatibility: `abiVersion` is the first member and never moves, so a host can read it from
//   any library. The host also compares `sdkLayout` (sizes of the SDK types the factory
//   exchanges) and `cacheLayout` (sizes of the flow-table types the library compiled in); any
//   difference is a ConfigError asking to rebuild against the installed headers.
// * Libraries are never unloaded: tables built by them live until exit.
// * Start-up only (the main thread, before workers start); nothing here runs per packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe {

/// Version of the row-policy library interface. Bumped on any change to RowPolicyDescriptor,
/// to the flow-table contract (row_policy.hpp) or to the types a factory exchanges.
inline constexpr std::uint32_t kRowPolicyAbiVersion = 1;

/// The exported C symbol every policy library defines.
inline constexpr const char* kRowPolicyEntryPoint = "rowprobe_row_policy";

/// Builds the flow table of the library's policy for `line` slots per row (4, 8, 16 or 32;
/// validated by the host). Throws ConfigError for bad options, like a built-in constructor.
using RowPolicyTableFactory = std::unique_ptr<StoragePlugin> (*)(const Options& options,
                                                                 unsigned line);

/// Fingerprint of the SDK types a library and the host must agree on.
constexpr std::uint64_t sdkLayoutFingerprint() noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    for (const std::size_t v :
         {sizeof(Options), sizeof(OptionSpec), sizeof(FlowRecord), sizeof(ParsedPacket),
          sizeof(FlowKey), sizeof(CacheStats), sizeof(ExportTarget), alignof(FlowRecord),
          sizeof(std::string), sizeof(std::unique_ptr<StoragePlugin>)}) {
        h = (h ^ v) * 1099511628211ULL;
    }
    return h;
}

/// What `rowprobe_row_policy()` returns. Filled by ROWPROBE_EXPORT_ROW_POLICY.
struct RowPolicyDescriptor {
    std::uint32_t abiVersion = kRowPolicyAbiVersion;  ///< first member, never moves
    std::uint32_t descriptorSize = sizeof(RowPolicyDescriptor);
    std::uint64_t sdkLayout = sdkLayoutFingerprint();
    std::uint64_t cacheLayout = 0;  ///< storage/cache's fingerprint
    const char* name = nullptr;     ///< policy name, as in policy=NAME
    const char* summary = nullptr;  ///< one line for `rowprobe -h cache`
    RowPolicyTableFactory factory = nullptr;
};

/// The signature of the entry point: returns a pointer to a static RowPolicyDescriptor whose
/// first member is the ABI version (read before anything else).
using RowPolicyEntryPoint = const void* (*)();

/// A library opened and checked by loadRowPolicyLibrary.
struct LoadedRowPolicy {
    std::string path;  ///< as given (or as found in a directory)
    const RowPolicyDescriptor* descriptor = nullptr;
};

/// Opens `path` with dlopen, calls its entry point and checks the ABI version, the descriptor
/// size and the SDK layout. Throws ConfigError naming `component` / `option` and the path, with
/// dlerror()'s text or the mismatch (built for ABI N, this rowprobe provides M). Loading the
/// same file twice returns the same descriptor. Main thread, start-up only.
LoadedRowPolicy loadRowPolicyLibrary(const std::string& path, const std::string& component,
                                     const std::string& option);

/// Candidate files for a bare policy `name` in `dirs` (in order): DIR/librowprobe-policy-NAME.so,
/// then DIR/NAME.so. Returns the first that exists, or an empty string.
std::string findRowPolicyLibrary(const std::string& name, const std::vector<std::string>& dirs);

/// Splits a colon-separated search path (as in $ROWPROBE_POLICY_PATH), dropping empty items.
std::vector<std::string> splitSearchPath(const std::string& path);

}  // namespace rowprobe
