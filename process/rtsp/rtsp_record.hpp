// The rtsp plugin's per-flow record (tier-2 extension) and how one packet updates it — the
// semantics of ipfixprobe 5.7's rtsp plugin (an HTTP plugin for RTSP/1.0), kept apart from the
// plugin glue so they are tested without a flow table. The request/status line and header
// lines are read by the HTTP-style head parser in its RTSP dialect
// (process/common/http/http_head.hpp: lines end at '\n', "RTSP" after the URI).
//
//   packet payload ──classifyRtsp──▶ request  (first 4 bytes one of the RTSP or HTTP methods)
//                                  ▶ response (starts with "RTSP")
//        no record yet:  parse into a scratch record; keep it only when the head was complete
//                        (Stored) — ipfixprobe's add_ext_rtsp_*
//        record present: a second request (or response) → FlushReinsert (nothing written);
//                        otherwise the fields are written as far as the parse got, and the
//                        request/response counts as seen only when it was complete
//
// Field limits are ipfixprobe's buffers (NUL included): method 10, user agent 128, uri 128,
// content type 32, server 128.
#pragma once

#include <cstdint>
#include <span>

namespace rowprobe::rtsp {

struct RtspRecord {
    bool request = false;   ///< a complete request was parsed
    bool response = false;  ///< a complete response was parsed
    std::uint16_t status = 0;
    char method[10] = {};
    char userAgent[128] = {};
    char uri[128] = {};
    char contentType[32] = {};
    char server[128] = {};
};

enum class RtspKind : std::uint8_t { None, Request, Response };

/// Request: the first 4 bytes are one of DESC, SETU, PLAY, PAUS, TEAR, RECO, ANNO or HTTP's
/// GET /POST/PUT /HEAD/DELE/TRAC/OPTI/CONN/PATC (ipfixprobe's list); response: starts with
/// "RTSP"; otherwise None.
RtspKind classifyRtsp(std::span<const std::uint8_t> payload) noexcept;

enum class RtspUpdate : std::uint8_t {
    Ignored,        ///< not RTSP, or a parse that left nothing to keep
    Stored,         ///< the record holds this packet's request/response
    FlushReinsert,  ///< second request or response: export the flow without this packet and
                    ///< start a new one from it
};

/// Applies one packet to `rec`: the flow's record, or — when the flow has none yet — a
/// default-constructed scratch record that the caller keeps only on Stored.
RtspUpdate applyRtspPacket(std::span<const std::uint8_t> payload, RtspRecord& rec) noexcept;

}  // namespace rowprobe::rtsp
