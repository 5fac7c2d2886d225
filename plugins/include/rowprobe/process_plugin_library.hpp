// Process plugins in shared objects (docs/design/process-runtime.md): the C entry point a library
// exports, the descriptor it returns, and the loader (plugins/src/loader.cpp).
//
//   libmyplugin.so                                   rowprobe (exports its SDK symbols)
//   ┌──────────────────────────────────────────┐     ┌──────────────────────────────────────┐
//   │ class MyPlugin : ProcessPluginBase<...>  │     │ -p '/path/libmyplugin.so;opt=1'       │
//   │ ROWPROBE_EXPORT_PROCESS_PLUGIN(MyPlugin, │────▶│ loadProcessPluginLibrary: dlopen, ABI │
//   │   "myplugin", "summary", kOptions)       │     │ checks, then registered under the path│
//   └──────────────────────────────────────────┘     └──────────────────────────────────────┘
//
// * A plugin string whose name contains '/' or ends in ".so" names a library; its options are
//   parsed with the library's option table like a built-in plugin's, and errors are the same
//   ConfigErrors (exit 2).
// * Compatibility: `abiVersion` is the first member and never moves; the host also compares
//   the descriptor size and the SDK layout fingerprint (sizes of the types a plugin and the
//   flow table exchange). Any difference is a ConfigError asking for a rebuild.
// * Libraries are never unloaded. Start-up only; nothing here runs per packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "rowprobe/options.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"

namespace rowprobe {

/// Version of the process-plugin library interface. Bumped on any change to the descriptor,
/// to the hook contract (process.hpp) or to the types the hooks exchange.
// 2: ProcessHooks::touch; 3: ExtPool hands out fresh handles lazily (its inline take()),
// and the touch hook receives the flow's tier-1 state.
inline constexpr std::uint32_t kProcessPluginAbiVersion = 3;

/// The exported C symbol every process-plugin library defines.
inline constexpr const char* kProcessPluginEntryPoint = "rowprobe_process_plugin";

/// Fingerprint of the SDK types a process-plugin library and the host must agree on.
constexpr std::uint64_t processSdkLayoutFingerprint() noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    for (const std::size_t v :
         {sizeof(Options), sizeof(OptionSpec), sizeof(ParsedPacket), sizeof(FlowKey),
          sizeof(FlowView), sizeof(FlowContext), sizeof(ProcessHooks), sizeof(ExtPool),
          sizeof(InstanceWriter), sizeof(FieldSpec), sizeof(VarRef), sizeof(InstanceHeader),
          sizeof(std::string), sizeof(std::unique_ptr<Plugin>), alignof(FlowView)}) {
        h = (h ^ v) * 1099511628211ULL;
    }
    return h;
}

/// What `rowprobe_process_plugin()` returns. Filled by ROWPROBE_EXPORT_PROCESS_PLUGIN.
struct ProcessPluginDescriptor {
    std::uint32_t abiVersion = kProcessPluginAbiVersion;  ///< first member, never moves
    std::uint32_t descriptorSize = sizeof(ProcessPluginDescriptor);
    std::uint64_t sdkLayout = processSdkLayoutFingerprint();
    const char* name = nullptr;     ///< the plugin's name (its fields' owner in messages)
    const char* summary = nullptr;  ///< one line for `-h`
    const OptionSpec* options = nullptr;
    std::size_t optionCount = 0;
    /// Builds the plugin from its parsed options (throws ConfigError like a constructor).
    std::unique_ptr<Plugin> (*factory)(const Options& options) = nullptr;
};

/// The signature of the entry point: returns a pointer to a static ProcessPluginDescriptor.
using ProcessPluginEntryPoint = const void* (*)();

/// Opens `path`, checks it and returns its descriptor (the same one for the same path). Throws
/// ConfigError naming `source` (the plugin string) and the path: dlopen's reason, a missing
/// entry point, or the ABI / layout mismatch. Main thread, start-up only.
const ProcessPluginDescriptor& loadProcessPluginLibrary(const std::string& path);

/// True when a plugin string's name names a library rather than a built-in plugin.
bool isPluginLibraryName(std::string_view name) noexcept;

}  // namespace rowprobe

/// Defines the entry point of a process-plugin library for plugin class TYPE (constructible
/// from `const Options&`). OPTIONS is a `constexpr OptionSpec[]` (or an empty span).
#define ROWPROBE_EXPORT_PROCESS_PLUGIN(TYPE, NAME, SUMMARY, OPTIONS)                             \
    extern "C" __attribute__((visibility("default"))) const void* rowprobe_process_plugin() {    \
        static const ::rowprobe::ProcessPluginDescriptor descriptor{                             \
            .name = NAME,                                                                        \
            .summary = SUMMARY,                                                                  \
            .options = std::span<const ::rowprobe::OptionSpec>(OPTIONS).data(),                  \
            .optionCount = std::span<const ::rowprobe::OptionSpec>(OPTIONS).size(),              \
            .factory = [](const ::rowprobe::Options& o) -> std::unique_ptr<::rowprobe::Plugin> { \
                return std::make_unique<TYPE>(o);                                                \
            }};                                                                                  \
        return &descriptor;                                                                      \
    }
