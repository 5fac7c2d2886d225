// The "ssdp" process plugin: UPnP discovery (SSDP) — the LOCATION port and the NT, ST, SERVER
// and USER-AGENT values of the NOTIFY and M-SEARCH messages a flow sends to port 1900. A flow
// whose first packet goes to port 1900 gets the fields (possibly empty); every later packet to
// port 1900 adds to them. Semantics: ssdp_parser.hpp.
#include <cstddef>
#include <string_view>

#include "process/ssdp/ssdp_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::ssdp {

namespace {

constexpr std::uint16_t kSsdpPort = 1900;

struct Fields {
    std::uint16_t port;
    VarRef nt;
    VarRef userAgent;
    VarRef st;
    VarRef server;
};

constexpr FieldSpec kFields[] = {
    {.name = "ssdp_location_port",
     .description = "port of the LOCATION URL of NOTIFY messages",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, port),
     .ipfix = {kPenCesnet, 821, 2},
     .unirec = {"SSDP_LOCATION_PORT", "uint16"}},
    {.name = "ssdp_nt",
     .description = "NT URNs of NOTIFY messages, ';'-separated, without \"urn:\"",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, nt),
     .ipfix = {kPenCesnet, 824, kIpfixVarLen},
     .unirec = {"SSDP_NT", "string"}},
    {.name = "ssdp_user_agent",
     .description = "USER-AGENT values of M-SEARCH messages, ';'-separated",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, userAgent),
     .ipfix = {kPenCesnet, 823, kIpfixVarLen},
     .unirec = {"SSDP_USER_AGENT", "string"}},
    {.name = "ssdp_st",
     .description = "ST URNs of M-SEARCH messages, ';'-separated, without \"urn:\"",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, st),
     .ipfix = {kPenCesnet, 825, kIpfixVarLen},
     .unirec = {"SSDP_ST", "string"}},
    {.name = "ssdp_server",
     .description = "SERVER values of NOTIFY messages, ';'-separated",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, server),
     .ipfix = {kPenCesnet, 822, kIpfixVarLen},
     .unirec = {"SSDP_SERVER", "string"}},
};

class SsdpPlugin final : public ProcessPluginBase<SsdpPlugin> {
public:
    using Ext = SsdpRecord;

    explicit SsdpPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "ssdp"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        if (ctx.packet->dstPort() != kSsdpPort) return kDone;
        SsdpRecord* r = ctx.attachExt<SsdpRecord>();
        if (r == nullptr) return kDone;  // pool exhausted (counted by the table)
        applySsdpPacket(ctx.packet->payload(), ctx.packet->key.ipVersion == 6, *r);
        return kContinue;
    }

    HookResult preUpdate(FlowContext& ctx) const noexcept {
        if (ctx.packet->dstPort() != kSsdpPort) return kContinue;
        SsdpRecord* r = ctx.ext<SsdpRecord>();
        if (r == nullptr) return kDone;
        applySsdpPacket(ctx.packet->payload(), ctx.packet->key.ipVersion == 6, *r);
        return kContinue;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const SsdpRecord* rec = ctx.ext<SsdpRecord>();
        return rec != nullptr ? std::string_view{"ssdp"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const SsdpRecord* r = ctx.ext<SsdpRecord>();
        if (r == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->port = r->locationPort;
        f->nt = out.appendString(r->ntList.view(r->nt));
        f->userAgent = out.appendString(r->userAgentList.view(r->userAgent));
        f->st = out.appendString(r->stList.view(r->st));
        f->server = out.appendString(r->serverList.view(r->server));
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, SsdpPlugin,
                         {.name = "ssdp",
                          .summary = "SSDP (UPnP discovery): location port, NT, ST, server, "
                                     "user agent"});

}  // namespace rowprobe::ssdp
