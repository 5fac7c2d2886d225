// The "http" process plugin: first request line + Host/User-Agent/Referer and first response
// status + Content-Type/Server/Set-Cookie names of a flow; a second request or response starts
// a new flow record (flush-reinsert), as in ipfixprobe 5.7. Semantics: http_record.hpp.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "process/http/http_parser.hpp"
#include "process/http/http_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::http {

namespace {

struct Fields {
    std::uint16_t status;
    VarRef method;
    VarRef host;
    VarRef url;
    VarRef userAgent;
    VarRef referer;
    VarRef contentType;
    VarRef server;
    VarRef setCookieNames;
};

constexpr FieldSpec string(std::string_view name, std::string_view description, std::size_t offset,
                           IpfixElement ipfix, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::String,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = ipfix,
            .unirec = {unirec, "string"}};
}

// IPFIX template order of ipfixprobe: USERAGENT, METHOD, DOMAIN, REFERER, URI, CONTENT_TYPE,
// SERVER, SET_COOKIE_NAMES, STATUS.
constexpr FieldSpec kFields[] = {
    string("http_user_agent", "User-Agent of the first request", offsetof(Fields, userAgent),
           {kPenFlowmon, 20, kIpfixVarLen}, "HTTP_REQUEST_AGENT"),
    string("http_method", "method of the first request", offsetof(Fields, method),
           {kPenCesnet, 200, kIpfixVarLen}, "HTTP_REQUEST_METHOD"),
    string("http_host", "Host of the first request", offsetof(Fields, host),
           {kPenFlowmon, 1, kIpfixVarLen}, "HTTP_REQUEST_HOST"),
    string("http_referer", "Referer of the first request", offsetof(Fields, referer),
           {kPenFlowmon, 3, kIpfixVarLen}, "HTTP_REQUEST_REFERER"),
    string("http_url", "URI of the first request", offsetof(Fields, url),
           {kPenFlowmon, 2, kIpfixVarLen}, "HTTP_REQUEST_URL"),
    string("http_content_type", "Content-Type of the first response", offsetof(Fields, contentType),
           {kPenFlowmon, 10, kIpfixVarLen}, "HTTP_RESPONSE_CONTENT_TYPE"),
    string("http_server", "Server of the first response", offsetof(Fields, server),
           {kPenCesnet, 201, kIpfixVarLen}, "HTTP_RESPONSE_SERVER"),
    string("http_set_cookie_names", "names of the first response's cookies, ';'-joined",
           offsetof(Fields, setCookieNames), {kPenCesnet, 202, kIpfixVarLen},
           "HTTP_RESPONSE_SET_COOKIE_NAMES"),
    {.name = "http_status",
     .description = "status code of the first response",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, status),
     .ipfix = {kPenFlowmon, 12, 2},
     .unirec = {"HTTP_RESPONSE_STATUS_CODE", "uint16"}},
};

class HttpPlugin final : public ProcessPluginBase<HttpPlugin> {
public:
    using Ext = HttpRecord;

    explicit HttpPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "http"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        tryAttach(ctx);
        return kContinue;
    }

    HookResult preUpdate(FlowContext& ctx) const noexcept {
        const auto payload = ctx.packet->payload();
        if (classifyHttp(payload) == HttpKind::None) return kContinue;
        HttpRecord* rec = ctx.ext<HttpRecord>();
        if (rec == nullptr) {
            tryAttach(ctx);
            return kContinue;
        }
        return applyHttpPacket(payload, *rec) == HttpUpdate::FlushReinsert ? kFlushReinsert
                                                                           : kContinue;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const HttpRecord* rec = ctx.ext<HttpRecord>();
        return rec != nullptr ? std::string_view{"http"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const HttpRecord* rec = ctx.ext<HttpRecord>();
        if (rec == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const auto str = [&](const char* s) { return out.appendString({s, std::strlen(s)}); };
        f->status = rec->status;
        f->method = str(rec->method);
        f->host = str(rec->host);
        f->url = str(rec->uri);
        f->userAgent = str(rec->userAgent);
        f->referer = str(rec->referer);
        f->contentType = str(rec->contentType);
        f->server = str(rec->server);
        f->setCookieNames = str(rec->setCookieNames);
        out.commit();
    }

private:
    // The flow has no record yet: parse into a fresh one, keep it if the parse counts or read
    // the request/status line before the packet ended (a head split across segments).
    static void tryAttach(FlowContext& ctx) noexcept {
        const auto payload = ctx.packet->payload();
        if (classifyHttp(payload) == HttpKind::None) return;
        HttpRecord* rec = ctx.attachExt<HttpRecord>();
        if (rec == nullptr) return;  // pool exhausted (counted by the table)
        const HttpUpdate u = applyHttpPacket(payload, *rec);
        if (u != HttpUpdate::Stored && u != HttpUpdate::Partial) ctx.detachExt();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, HttpPlugin,
                         {.name = "http",
                          .summary = "HTTP request line, Host, User-Agent, Referer; response "
                                     "status, Content-Type, Server, Set-Cookie names"});

}  // namespace rowprobe::http
