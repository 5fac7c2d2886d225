// The "idpcontent" process plugin: the first 100 bytes of the first packet with payload in each
// direction of every flow (ipfixprobe 5.7's IDP_CONTENT / IDP_CONTENT_REV). Stops looking at a
// flow once both directions are filled. Semantics: idpcontent_record.hpp.
#include <cstddef>

#include "process/idpcontent/idpcontent_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::idpcontent {

namespace {

struct Fields {
    VarRef content;
    VarRef contentRev;
};

constexpr FieldSpec kFields[] = {
    {.name = "idp_content",
     .description = "first 100 payload bytes, initiator to responder",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, content),
     .ipfix = {kPenCesnet, 850, kIpfixVarLen},
     .unirec = {"IDP_CONTENT", "bytes"}},
    {.name = "idp_content_rev",
     .description = "first 100 payload bytes, responder to initiator",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, contentRev),
     .ipfix = {kPenCesnet, 851, kIpfixVarLen},
     .unirec = {"IDP_CONTENT_REV", "bytes"}},
};

class IdpContentPlugin final : public ProcessPluginBase<IdpContentPlugin> {
public:
    using Ext = IdpContentRecord;

    explicit IdpContentPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "idpcontent"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    // ipfixprobe adds the record to every flow, data or not.
    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const IdpContentRecord* rec = ctx.ext<IdpContentRecord>();
        if (rec == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->content = out.appendBytes(rec->data[0].data(), rec->size[0]);
        f->contentRev = out.appendBytes(rec->data[1].data(), rec->size[1]);
        out.commit();
    }

private:
    static HookResult onPacket(FlowContext& ctx) noexcept {
        IdpContentRecord* rec = ctx.attachExt<IdpContentRecord>();
        if (rec == nullptr) return kDone;  // pool exhausted (counted by the table)
        return rec->update(!ctx.forward, ctx.packet->payload()) ? kDone : kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, IdpContentPlugin,
                         {.name = "idpcontent",
                          .summary = "First 100 payload bytes of each direction"});

}  // namespace rowprobe::idpcontent
