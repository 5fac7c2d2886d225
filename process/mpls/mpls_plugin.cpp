// The "mpls" process plugin: the top MPLS label stack entry of a flow's first packet, exported
// as IANA mplsTopLabelStackSection (70): 3 bytes, label (20 bits), traffic class (3), bottom of
// stack (1) — ipfixprobe 5.7's MPLS_TOP_LABEL_STACK_SECTION. Flows whose first packet carried no
// MPLS label get no instance. Tier-1 state only; the reader is mpls_label.hpp.
#include <array>
#include <cstddef>
#include <cstdint>

#include "process/mpls/mpls_label.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::mpls {

namespace {

struct Fields {
    VarRef section;
};

constexpr FieldSpec kFields[] = {
    {.name = "mpls_top_label_stack_section",
     .description = "top MPLS label stack entry without its TTL: label, TC, S (3 bytes)",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, section),
     .ipfix = {kPenIana, 70, kIpfixVarLen},
     .unirec = {"MPLS_TOP_LABEL_STACK_SECTION", "bytes"}},
};

class MplsPlugin final : public ProcessPluginBase<MplsPlugin> {
public:
    struct State {
        std::uint32_t top;  ///< the label stack entry, 0 = none
    };

    explicit MplsPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "mpls"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (p.frame != nullptr && p.l3Offset <= p.capLen)
            ctx.stateAs<State>().top = topLabelEntry({p.frame, p.l3Offset});
        return kDone;
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const std::uint32_t top = ctx.stateAs<State>().top;
        if (top == 0) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const std::array<std::uint8_t, 3> section = {static_cast<std::uint8_t>(top >> 24),
                                                     static_cast<std::uint8_t>(top >> 16),
                                                     static_cast<std::uint8_t>(top >> 8)};
        f->section = out.appendBytes(section.data(), section.size());
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, MplsPlugin,
                         {.name = "mpls",
                          .summary = "Top MPLS label stack entry (label, TC, S) of the first "
                                     "packet"});

}  // namespace rowprobe::mpls
