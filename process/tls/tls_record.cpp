#include "process/tls/tls_record.hpp"

#include <cstring>

namespace rowprobe::tls {

namespace {

// ipfixprobe's save_to_buffer(): the name plus two bytes must fit, else nothing is stored.
void saveName(std::string_view name, char (&dst)[255]) noexcept {
    if (name.size() + 2 > sizeof dst) return;
    if (!name.empty()) std::memcpy(dst, name.data(), name.size());
    dst[name.size()] = 0;
}

}  // namespace

TlsUpdate applyTlsPacket(std::span<const std::uint8_t> payload, TlsRecord& rec, bool attached,
                         const TlsOptions& options) noexcept {
    // Once the flow has its ClientHello only a ServerHello matters: a repeated ClientHello (a
    // retransmission) is not parsed again (ipfixprobe re-parses it into the same values).
    if (attached && (payload.size() <= 5 || payload[5] != 2)) return TlsUpdate::Ignored;
    Hello h;
    if (!parseHello(payload, h)) return TlsUpdate::Ignored;
    if (h.type == HelloType::Client) {
        if (rec.extCount == 0) {
            forEachExtension(
                h.extensions, [&](std::uint16_t type, std::span<const std::uint8_t> d) {
                    if (rec.extCount == kMaxExtensions) return;
                    rec.extTypes[rec.extCount] = type;
                    rec.extLengths[rec.extCount] = static_cast<std::uint16_t>(d.size());
                    ++rec.extCount;
                });
        }
        rec.version = h.handshakeVersion;
        if (h.hasSniName) saveName(h.sni, rec.sni);
        rec.ja3 = ja3(h);
        rec.ja4Len = static_cast<std::uint8_t>(ja4(h, options.quic, options.ja4, rec.ja4));
        return TlsUpdate::Stored;
    }
    // A ServerHello counts only once the flow has a ClientHello (ipfixprobe adds the record on
    // a ClientHello only).
    if (!attached) return TlsUpdate::Ignored;
    rec.serverHello = true;
    rec.cipher = h.cipher;
    if (h.hasAlpn) saveName(h.alpn, rec.alpn);
    if (h.supportedVersion != 0) rec.version = h.supportedVersion;
    rec.ja3s = ja3s(h);
    return TlsUpdate::Done;
}

}  // namespace rowprobe::tls
