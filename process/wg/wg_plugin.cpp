// The "wg" process plugin: WireGuard detection with the peers' session indexes. The flow's
// first UDP packet decides (a WireGuard message: the fields are exported; anything else: the
// plugin leaves the flow alone); later packets update the peers until one is not WireGuard.
// A new handshake initiation with a different sender index exports the flow and starts a new
// one (kFlushReinsert). Semantics: wg_parser.hpp.
#include <cstddef>
#include <string_view>

#include "process/wg/wg_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::wg {

namespace {

struct Fields {
    std::uint32_t srcPeer;
    std::uint32_t dstPeer;
    std::uint8_t confidence;
};

constexpr FieldSpec kFields[] = {
    {.name = "wg_conf_level",
     .description = "WireGuard confidence: 100, or 1 when the packets also look like DNS queries",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, confidence),
     .ipfix = {kPenCesnet, 1100, 1},
     .unirec = {"WG_CONF_LEVEL", "uint8"}},
    {.name = "wg_src_peer",
     .description = "session index chosen by the flow's initiator",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, srcPeer),
     .ipfix = {kPenCesnet, 1101, 4},
     .unirec = {"WG_SRC_PEER", "uint32"}},
    {.name = "wg_dst_peer",
     .description = "session index chosen by the responder",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, dstPeer),
     .ipfix = {kPenCesnet, 1102, 4},
     .unirec = {"WG_DST_PEER", "uint32"}},
};

class WgPlugin final : public ProcessPluginBase<WgPlugin> {
public:
    using State = WgState;

    explicit WgPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "wg"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        auto& s = ctx.stateAs<WgState>();
        if (ctx.flow->proto() != 17) return kDone;
        if (applyWgPacket(ctx.packet->payload(), ctx.forward, s) != WgVerdict::Wg) {
            s = WgState{};
            return kDone;
        }
        s.present = 1;
        return kContinue;
    }

    HookResult preUpdate(FlowContext& ctx) const noexcept {
        auto& s = ctx.stateAs<WgState>();
        if (s.present == 0 || s.confidence == 0) return kDone;
        switch (applyWgPacket(ctx.packet->payload(), ctx.forward, s)) {
            case WgVerdict::Wg:
                return kContinue;
            case WgVerdict::NewSession:
                return kFlushReinsert;
            case WgVerdict::NotWg:
                break;
        }
        s.confidence = 0;  // exported with confidence 0, as ipfixprobe does
        return kDone;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const auto& rec = ctx.stateAs<WgState>();
        return rec.present != 0 ? std::string_view{"wireguard"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const auto& s = ctx.stateAs<WgState>();
        if (s.present == 0) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->srcPeer = s.srcPeer;
        f->dstPeer = s.dstPeer;
        f->confidence = s.confidence;
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, WgPlugin,
                         {.name = "wg",
                          .summary = "WireGuard detection: confidence and the peers' indexes"});

}  // namespace rowprobe::wg
