// The "ovpn" process plugin: OpenVPN detection. Every flow runs the state machine of
// ovpn_parser.hpp on all its packets; when it ends, flows of more than 5 packets are exported
// with a confidence (0..100).
#include <cstddef>
#include <string_view>

#include "process/ovpn/ovpn_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::ovpn {

namespace {

struct Fields {
    std::uint8_t confidence;
};

constexpr FieldSpec kFields[] = {
    {.name = "ovpn_conf_level",
     .description = "OpenVPN confidence, 0..100",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, confidence),
     .ipfix = {kPenCesnet, 828, 1},
     .unirec = {"OVPN_CONF_LEVEL", "uint8"}},
};

class OvpnPlugin final : public ProcessPluginBase<OvpnPlugin> {
public:
    using State = OvpnState;

    explicit OvpnPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "ovpn"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        ctx.stateAs<OvpnState>().present = 1;
        return onPacket(ctx);
    }
    HookResult preUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    void preExport(FlowContext& ctx) const noexcept {
        auto& s = ctx.stateAs<OvpnState>();
        if (!finishOvpn(ctx.flow->totalPackets(), s)) s.present = 0;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const auto& rec = ctx.stateAs<OvpnState>();
        return rec.present != 0 ? std::string_view{"openvpn"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const auto& s = ctx.stateAs<OvpnState>();
        if (s.present == 0) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->confidence = s.confidence;
        out.commit();
    }

private:
    static HookResult onPacket(FlowContext& ctx) noexcept {
        const ParsedPacket& p = *ctx.packet;
        applyOvpnPacket({.payload = p.payload(),
                         .payloadWireLen = p.payloadWireLen,
                         .proto = p.key.proto,
                         .src = &p.srcAddr(),
                         .dst = &p.dstAddr()},
                        ctx.stateAs<OvpnState>());
        return kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, OvpnPlugin,
                         {.name = "ovpn", .summary = "OpenVPN detection: a confidence level"});

}  // namespace rowprobe::ovpn
