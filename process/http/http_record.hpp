// The http plugin's per-flow record (tier-2 extension) and how one packet updates it — the
// semantics of ipfixprobe 5.7's http plugin, kept apart from the plugin glue so they are tested
// without a flow table.
//
//   packet payload ──classifyHttp──▶ request ──parseHttpRequest──┐
//                                  ▶ response ─parseHttpResponse─┤
//                                                                 ▼
//        no record yet:  parse into a scratch record; keep it when the headers were complete
//                        (Stored) or when the request/status line was read and the packet
//                        ended inside the headers (Partial: the fields read so far are kept,
//                        as ipfixprobe's record keeps them; it does not count as seen)
//        record present: a second request (or response) → FlushReinsert (nothing written);
//                        otherwise the fields are written as far as the parse got, and the
//                        request/response counts as seen only when it was complete
//
// Field limits are ipfixprobe's buffers (NUL included): method 16, host 64, uri 128, agent 128,
// referer 128, content type 32, server 128, Set-Cookie names 512.
#pragma once

#include <cstdint>
#include <span>

namespace rowprobe::http {

struct HttpRecord {
    bool request = false;   ///< a complete request was parsed
    bool response = false;  ///< a complete response was parsed
    std::uint16_t status = 0;
    char method[16] = {};
    char host[64] = {};
    char uri[128] = {};
    char userAgent[128] = {};
    char referer[128] = {};
    char contentType[32] = {};
    char server[128] = {};
    char setCookieNames[512] = {};
};

enum class HttpUpdate : std::uint8_t {
    Ignored,        ///< not HTTP, or a parse that left nothing to keep
    Stored,         ///< the record holds this packet's request/response
    Partial,        ///< the packet ended inside the headers: the record holds the fields read
                    ///< before the cut, the request/response does not count as seen
    FlushReinsert,  ///< second request or response: export the flow without this packet and
                    ///< start a new one from it
};

/// Applies one packet to `rec`: the flow's record, or — when the flow has none yet — a
/// default-constructed scratch record that the caller keeps on Stored or Partial.
HttpUpdate applyHttpPacket(std::span<const std::uint8_t> payload, HttpRecord& rec) noexcept;

}  // namespace rowprobe::http
