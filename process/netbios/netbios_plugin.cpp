// The "netbios" process plugin: the first queried NetBIOS name (and its suffix) of every NBNS
// packet (port 137) of a flow; each packet's name is its own instance, so a flow with three
// NBNS packets is exported as three records, as ipfixprobe does. Semantics: netbios_parser.hpp.
#include <cstddef>
#include <string_view>

#include "process/netbios/netbios_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::netbios {

namespace {

constexpr std::uint16_t kNbnsPort = 137;

/// Names kept per flow; a (rare) longer flow's further names are counted in `dropped` and not
/// exported (README).
constexpr std::size_t kMaxNames = 64;

struct NetbiosExt {
    std::uint16_t count = 0;
    std::uint16_t dropped = 0;
    NbnsName names[kMaxNames];
};

struct Fields {
    std::uint8_t suffix;
    VarRef name;
};

constexpr FieldSpec kFields[] = {
    {.name = "nb_suffix",
     .description = "NetBIOS suffix (16th character) of the first queried name",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, suffix),
     .ipfix = {kPenCesnet, 832, 1},
     .unirec = {"NB_SUFFIX", "uint8"}},
    {.name = "nb_name",
     .description = "first queried NetBIOS name (15 characters, space-padded)",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, name),
     .ipfix = {kPenCesnet, 831, kIpfixVarLen},
     .unirec = {"NB_NAME", "string"}},
};

class NetbiosPlugin final : public ProcessPluginBase<NetbiosPlugin> {
public:
    using Ext = NetbiosExt;

    explicit NetbiosPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "netbios"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const NetbiosExt* rec = ctx.ext<NetbiosExt>();
        return rec != nullptr && rec->count != 0 ? std::string_view{"netbios-ns"}
                                                 : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const NetbiosExt* ext = ctx.ext<NetbiosExt>();
        if (ext == nullptr) return;
        for (std::size_t i = 0; i < ext->count; ++i) {
            Fields* f = out.begin<Fields>();
            if (f == nullptr) return;
            f->suffix = ext->names[i].suffix;
            f->name = out.appendString(ext->names[i].text());
            out.commit();
        }
    }

private:
    static HookResult onPacket(FlowContext& ctx) noexcept {
        const ParsedPacket& p = *ctx.packet;
        // A flow's ports never change: a flow not on port 137 is never looked at again.
        if (p.srcPort() != kNbnsPort && p.dstPort() != kNbnsPort) return kDone;
        NbnsName n;
        if (!parseNbnsName(p.payload(), n)) return kContinue;
        NetbiosExt* ext = ctx.attachExt<NetbiosExt>();
        if (ext == nullptr) return kContinue;  // pool exhausted (counted by the table)
        if (ext->count < kMaxNames) {
            ext->names[ext->count++] = n;
        } else {
            ++ext->dropped;
        }
        return kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, NetbiosPlugin,
                         {.name = "netbios",
                          .summary = "NetBIOS name service: first queried name and suffix, per "
                                     "packet"});

}  // namespace rowprobe::netbios
