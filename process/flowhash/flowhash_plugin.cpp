// The "flowhash" process plugin: a 64-bit flow identifier, ipfixprobe 5.7's FLOW_ID (IANA
// flowId, 148). ipfixprobe exports its cache's hash of the flow key (XXH64, seed 0). rowprobe's
// table hash depends on the configured hash function and a per-run seed, so the plugin computes
// its own: XXH64 with seed 0 over the canonical 40-byte flow key (both directions give the same
// key, so the same id), stable across runs, workers and storage options. Tier-1 state only.
#include <cstddef>
#include <cstdint>

#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

#ifndef XXH_INLINE_ALL
// xxhash's own switch (compile XXH64 inline here); the name is xxhash.h's, not ours.
#define XXH_INLINE_ALL  // NOLINT(readability-identifier-naming)
#endif
#include <xxhash.h>

namespace rowprobe::flowhash {

namespace {

struct Fields {
    std::uint64_t flowId;
};

constexpr FieldSpec kFields[] = {
    {.name = "flow_id",
     .description = "XXH64 (seed 0) of the flow's canonical key",
     .type = FieldType::Unsigned64,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, flowId),
     .ipfix = {kPenIana, 148, 8},
     .unirec = {"FLOW_ID", "uint64"}},
};

class FlowHashPlugin final : public ProcessPluginBase<FlowHashPlugin> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    explicit FlowHashPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "flowhash"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    // The key is in the flow view at export time: nothing to keep per flow.
    HookResult postCreate(FlowContext&) const noexcept { return kDone; }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const auto key = ctx.flow->key->bytes();
        f->flowId = XXH64(key.data(), key.size(), 0);
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, FlowHashPlugin,
                         {.name = "flowhash",
                          .summary = "64-bit flow id: a hash of the flow key (ipfixprobe's "
                                     "FLOW_ID)"});

}  // namespace rowprobe::flowhash
