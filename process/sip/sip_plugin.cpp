// The "sip" process plugin: SIP signalling — message type, status code, call id, calling and
// called party, via, user agent, Request-URI and CSeq. Every SIP message is exported as its own
// record: a flow's next SIP message ends the record (without that packet) and starts a new one
// with it, as ipfixprobe's FLOW_FLUSH_WITH_REINSERT does. Semantics: sip_parser.hpp.
#include <cstddef>
#include <string_view>

#include "process/sip/sip_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::sip {

namespace {

struct Fields {
    std::uint16_t msgType;
    std::uint16_t statusCode;
    VarRef cseq;
    VarRef callingParty;
    VarRef calledParty;
    VarRef callId;
    VarRef userAgent;
    VarRef requestUri;
    VarRef via;
};

constexpr FieldSpec kFields[] = {
    {.name = "sip_msg_type",
     .description = "INVITE 1, ACK 2, CANCEL 3, BYE 4, REGISTER 5, OPTIONS 6, PUBLISH 7, NOTIFY "
                    "8, INFO 9, SUBSCRIBE 10, response 99",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, msgType),
     .ipfix = {kPenCesnet, 100, 2},
     .unirec = {"SIP_MSG_TYPE", "uint16"}},
    {.name = "sip_status_code",
     .description = "status code of a response (999: none on its first line)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, statusCode),
     .ipfix = {kPenCesnet, 101, 2},
     .unirec = {"SIP_STATUS_CODE", "uint16"}},
    {.name = "sip_cseq",
     .description = "CSeq header",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, cseq),
     .ipfix = {kPenCesnet, 108, kIpfixVarLen},
     .unirec = {"SIP_CSEQ", "string"}},
    {.name = "sip_calling_party",
     .description = "URI of the From header",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, callingParty),
     .ipfix = {kPenCesnet, 103, kIpfixVarLen},
     .unirec = {"SIP_CALLING_PARTY", "string"}},
    {.name = "sip_called_party",
     .description = "URI of the To header",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, calledParty),
     .ipfix = {kPenCesnet, 104, kIpfixVarLen},
     .unirec = {"SIP_CALLED_PARTY", "string"}},
    {.name = "sip_call_id",
     .description = "Call-ID header",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, callId),
     .ipfix = {kPenCesnet, 102, kIpfixVarLen},
     .unirec = {"SIP_CALL_ID", "string"}},
    {.name = "sip_user_agent",
     .description = "User-Agent header",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, userAgent),
     .ipfix = {kPenCesnet, 106, kIpfixVarLen},
     .unirec = {"SIP_USER_AGENT", "string"}},
    {.name = "sip_request_uri",
     .description = "Request-URI of a request",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, requestUri),
     .ipfix = {kPenCesnet, 107, kIpfixVarLen},
     .unirec = {"SIP_REQUEST_URI", "string"}},
    {.name = "sip_via",
     .description = "Via headers, ';'-joined",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, via),
     .ipfix = {kPenCesnet, 105, kIpfixVarLen},
     .unirec = {"SIP_VIA", "string"}},
};

class SipPlugin final : public ProcessPluginBase<SipPlugin> {
public:
    using Ext = SipRecord;

    explicit SipPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "sip"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        const auto payload = ctx.packet->payload();
        const std::uint16_t type = sipMessageType(payload);
        if (type == kTypeInvalid) return kContinue;  // a later packet may still be SIP
        SipRecord* r = ctx.attachExt<SipRecord>();
        if (r == nullptr) return kContinue;  // pool exhausted (counted by the table)
        parseSipMessage(payload, type, *r);
        return kContinue;
    }

    HookResult preUpdate(FlowContext& ctx) const noexcept {
        return sipMessageType(ctx.packet->payload()) != kTypeInvalid ? kFlushReinsert : kContinue;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const SipRecord* rec = ctx.ext<SipRecord>();
        return rec != nullptr ? std::string_view{"sip"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const SipRecord* r = ctx.ext<SipRecord>();
        if (r == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->msgType = r->msgType;
        f->statusCode = r->statusCode;
        f->cseq = out.appendString(r->cseq.view());
        f->callingParty = out.appendString(r->callingParty.view());
        f->calledParty = out.appendString(r->calledParty.view());
        f->callId = out.appendString(r->callId.view());
        f->userAgent = out.appendString(r->userAgent.view());
        f->requestUri = out.appendString(r->requestUri.view());
        f->via = out.appendString(r->via.view());
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, SipPlugin,
                         {.name = "sip",
                          .summary = "SIP: one record per message with type, status, call id, "
                                     "parties, via, user agent, URI, CSeq"});

}  // namespace rowprobe::sip
