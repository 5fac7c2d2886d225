#include "process/http/http_record.hpp"

#include "process/http/http_parser.hpp"

namespace rowprobe::http {

HttpUpdate applyHttpPacket(std::span<const std::uint8_t> payload, HttpRecord& rec) noexcept {
    switch (classifyHttp(payload)) {
        case HttpKind::Request: {
            HttpRequest r;
            parseHttpRequest(payload, r);
            if (!r.requestLine) return HttpUpdate::Ignored;
            if (rec.request) return HttpUpdate::FlushReinsert;
            copyHttpValue(r.method, rec.method);
            copyHttpValue(r.uri, rec.uri);
            if (r.headers) {  // ipfixprobe resets these three once the request line is whole
                copyHttpValue(r.host, rec.host);
                copyHttpValue(r.userAgent, rec.userAgent);
                copyHttpValue(r.referer, rec.referer);
            }
            if (!r.complete) return HttpUpdate::Partial;
            rec.request = true;
            return HttpUpdate::Stored;
        }
        case HttpKind::Response: {
            HttpResponse r;
            char cookies[sizeof rec.setCookieNames];
            parseHttpResponse(payload, r, cookies);
            if (!r.statusLine) return HttpUpdate::Ignored;
            if (rec.response) return HttpUpdate::FlushReinsert;
            rec.status = r.status;
            if (r.headers) {
                copyHttpValue(r.contentType, rec.contentType);
                copyHttpValue(r.server, rec.server);
                copyHttpValue({cookies, r.setCookieLen}, rec.setCookieNames);
            }
            if (!r.complete) return HttpUpdate::Partial;
            rec.response = true;
            return HttpUpdate::Stored;
        }
        case HttpKind::None:
            break;
    }
    return HttpUpdate::Ignored;
}

}  // namespace rowprobe::http
