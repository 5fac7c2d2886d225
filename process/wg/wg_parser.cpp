#include "process/wg/wg_parser.hpp"

namespace rowprobe::wg {

namespace {

std::uint32_t le32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
           std::uint32_t{p[3]} << 24;
}

}  // namespace

WgVerdict applyWgPacket(std::span<const std::uint8_t> payload, bool forward, WgState& s) noexcept {
    const std::size_t n = payload.size();
    if (n < kMinTransportLen) return WgVerdict::NotWg;
    const std::uint8_t* d = payload.data();
    const std::uint8_t type = d[0];
    if (type < 1 || type > 4 || d[1] != 0 || d[2] != 0 || d[3] != 0) return WgVerdict::NotWg;
    std::uint32_t& sender = forward ? s.srcPeer : s.dstPeer;
    std::uint32_t& receiver = forward ? s.dstPeer : s.srcPeer;
    switch (type) {
        case 1: {
            if (n != kInitiationLen) return WgVerdict::NotWg;
            const std::uint32_t peer = le32(d + 4);
            if (sender != 0 && sender != peer) return WgVerdict::NewSession;
            sender = peer;
            break;
        }
        case 2:
            if (n != kResponseLen) return WgVerdict::NotWg;
            sender = le32(d + 4);
            receiver = le32(d + 8);
            break;
        case 3:
            if (n != kCookieReplyLen) return WgVerdict::NotWg;
            receiver = le32(d + 4);
            break;
        default:  // 4: transport data, any size from the minimum up
            receiver = le32(d + 4);
            break;
    }
    // A DNS query with id 1..4, no flags and one question has the same first eight bytes.
    const bool dnsLike = d[4] == 0x00 && d[5] == 0x01 && d[6] == 0x00 && d[7] == 0x00;
    s.confidence = dnsLike ? 1 : 100;
    return WgVerdict::Wg;
}

}  // namespace rowprobe::wg
