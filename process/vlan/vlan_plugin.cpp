// The "vlan" process plugin: the outermost VLAN id of a flow's first packet as ipfixprobe 5.7's
// VLAN_ID extension (IANA vlanId, 58). rowprobe's core record already carries the same value as
// `vlan`; this plugin exists so that `-p vlan` and a UniRec interface mapped to it keep working
// for an operator moving from ipfixprobe. Tier-1 state only, nothing per packet after the first.
#include <cstddef>
#include <cstdint>

#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::vlan {

namespace {

struct Fields {
    std::uint16_t vlanId;
};

constexpr FieldSpec kFields[] = {
    {.name = "vlan_id",
     .description = "outermost VLAN id of the flow's first packet (0: untagged)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, vlanId),
     .ipfix = {kPenIana, 58, 2},
     .unirec = {"VLAN_ID", "uint16"}},
};

class VlanPlugin final : public ProcessPluginBase<VlanPlugin> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    struct State {
        std::uint16_t vlanId;
    };

    explicit VlanPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "vlan"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    // The key carries the wire's outermost VLAN id (0 when untagged); with the VLAN left out
    // of the key (parser option) it is 0 for every flow, as the core `vlan` field is.
    HookResult postCreate(FlowContext& ctx) const noexcept {
        ctx.stateAs<State>().vlanId = ctx.packet->key.vlan;
        return kDone;
    }

    // ipfixprobe adds the extension to every flow, tagged or not.
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->vlanId = ctx.stateAs<State>().vlanId;
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, VlanPlugin,
                         {.name = "vlan",
                          .summary = "VLAN id of the flow's first packet (ipfixprobe's VLAN_ID)"});

}  // namespace rowprobe::vlan
