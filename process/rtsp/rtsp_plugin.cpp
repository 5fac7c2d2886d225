// The "rtsp" process plugin: first request line + User-Agent and first response status +
// Content-Type/Server of an RTSP flow; a second request or response starts a new flow record
// (flush-reinsert), as in ipfixprobe 5.7. Semantics: rtsp_record.hpp.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "process/rtsp/rtsp_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::rtsp {

namespace {

struct Fields {
    std::uint16_t status;
    VarRef method;
    VarRef userAgent;
    VarRef uri;
    VarRef contentType;
    VarRef server;
};

constexpr FieldSpec string(std::string_view name, std::string_view description, std::size_t offset,
                           std::uint16_t id, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::String,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = {kPenCesnet, id, kIpfixVarLen},
            .unirec = {unirec, "string"}};
}

// IPFIX template order of ipfixprobe: METHOD, USERAGENT, URI, STATUS, SERVER, CONTENT_TYPE.
constexpr FieldSpec kFields[] = {
    string("rtsp_method", "method of the first request", offsetof(Fields, method), 1040,
           "RTSP_REQUEST_METHOD"),
    string("rtsp_user_agent", "User-Agent of the first request", offsetof(Fields, userAgent), 1041,
           "RTSP_REQUEST_AGENT"),
    string("rtsp_uri", "URI of the first request", offsetof(Fields, uri), 1042, "RTSP_REQUEST_URI"),
    {.name = "rtsp_status",
     .description = "status code of the first response",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, status),
     .ipfix = {kPenCesnet, 1043, 2},
     .unirec = {"RTSP_RESPONSE_STATUS_CODE", "uint16"}},
    string("rtsp_server", "Server of the first response", offsetof(Fields, server), 1045,
           "RTSP_RESPONSE_SERVER"),
    string("rtsp_content_type", "Content-Type of the first response", offsetof(Fields, contentType),
           1044, "RTSP_RESPONSE_CONTENT_TYPE"),
};

class RtspPlugin final : public ProcessPluginBase<RtspPlugin> {
public:
    using Ext = RtspRecord;

    explicit RtspPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "rtsp"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        tryAttach(ctx);
        return kContinue;
    }

    HookResult preUpdate(FlowContext& ctx) const noexcept {
        const auto payload = ctx.packet->payload();
        if (classifyRtsp(payload) == RtspKind::None) return kContinue;
        RtspRecord* rec = ctx.ext<RtspRecord>();
        if (rec == nullptr) {
            tryAttach(ctx);
            return kContinue;
        }
        return applyRtspPacket(payload, *rec) == RtspUpdate::FlushReinsert ? kFlushReinsert
                                                                           : kContinue;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const RtspRecord* rec = ctx.ext<RtspRecord>();
        return rec != nullptr ? std::string_view{"rtsp"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const RtspRecord* rec = ctx.ext<RtspRecord>();
        if (rec == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const auto str = [&](const char* s) { return out.appendString({s, std::strlen(s)}); };
        f->status = rec->status;
        f->method = str(rec->method);
        f->userAgent = str(rec->userAgent);
        f->uri = str(rec->uri);
        f->contentType = str(rec->contentType);
        f->server = str(rec->server);
        out.commit();
    }

private:
    // The flow has no record yet: parse into a fresh one, keep it only if the parse counts.
    static void tryAttach(FlowContext& ctx) noexcept {
        const auto payload = ctx.packet->payload();
        if (classifyRtsp(payload) == RtspKind::None) return;
        RtspRecord* rec = ctx.attachExt<RtspRecord>();
        if (rec == nullptr) return;  // pool exhausted (counted by the table)
        if (applyRtspPacket(payload, *rec) != RtspUpdate::Stored) ctx.detachExt();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, RtspPlugin,
                         {.name = "rtsp",
                          .summary = "RTSP request method, URI, User-Agent; response status, "
                                     "Content-Type, Server"});

}  // namespace rowprobe::rtsp
