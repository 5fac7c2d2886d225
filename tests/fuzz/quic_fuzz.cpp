// libFuzzer target for the QUIC Initial path: long-header parsing of coalesced packets, header
// protection, AES-128-GCM decryption, the frame walk, CRYPTO reassembly and the ClientHello
// parse into the quic plugin's record. Random bytes rarely pass the AEAD tag, so the input has
// two modes (first byte):
//   even: the rest is one UDP datagram, applied as the first packet of a flow and again as a
//         later one (header parsing, rejected tags, Retry, Version Negotiation, and legacy
//         Google QUIC's cleartext Q024..Q046 packets with their CHLO);
//   odd:  byte 1 picks a version (v1, draft-29, v2, T051, draft-27/mvfst, Google Q050 and T050,
//         a forced-negotiation version, v2 draft-00); the rest is up to 4
//         chunks [u16 length][plaintext frames], each protected here as a client Initial with
//         the same DCID, and the datagrams are applied in order to one record, so the fuzzer
//         steers the decrypted frames, the reassembly and the ClientHello parser.
// Inputs are copied into buffers of exactly their length so ASan sees every overread; the
// record's invariants are checked after every packet.
//
//   ./quic_fuzz -max_len=4096 corpus/quic_fuzz

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <vector>

#include "process/quic/quic_record.hpp"
#include "quic_protect.hpp"

namespace {

using namespace rowprobe::quic;
using Bytes = std::vector<std::uint8_t>;

void check(bool condition) {
    if (!condition) std::abort();
}

void checkRecord(const QuicRecord& r) {
    check(r.lastPacketType < kMaxPacketTypes);
    check(r.extCount <= kMaxExtensions);
    check(r.tlsExtLen < kTlsExtBytes);
    check(r.ja4Len <= r.ja4.size());
    check(r.occid.len <= kMaxCidLen && r.oscid.len <= kMaxCidLen && r.scid.len <= kMaxCidLen);
    check(r.retryScid.len <= kMaxCidLen && r.initialDcid.len <= kMaxCidLen);
    check(r.assembly.rangeCount <= r.assembly.kMaxRanges);
    check(std::memchr(r.sni, 0, sizeof r.sni) != nullptr);
    check(std::memchr(r.userAgent, 0, sizeof r.userAgent) != nullptr);
    check(std::memchr(r.alpn, 0, sizeof r.alpn) != nullptr);
}

void apply(const Bytes& d, QuicRecord& rec, std::uint32_t n, bool fresh) {
    const auto buf = std::make_unique<std::uint8_t[]>(d.empty() ? 1 : d.size());
    if (!d.empty()) std::memcpy(buf.get(), d.data(), d.size());
    QuicPacket p{.payload = {buf.get(), d.size()},
                 .srcPort = 40000,
                 .dstPort = 443,
                 .flowSrcPort = 40000,
                 .flowPackets = {n, 0}};
    applyQuicPacket(p, rec, fresh);
    checkRecord(rec);
}

Bytes protect(std::uint32_t version, std::uint32_t pn, const Bytes& frames) {
    static const Bytes dcid = {0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08};
    VersionInfo vi;
    InitialKeys k;
    if (!versionInfo(version, vi) || !deriveClientInitialKeys(vi, dcid, k)) return {};
    Bytes body = frames;
    if (body.size() < 20) body.resize(20, 0);
    return rowprobe::test::protectClientInitial(k, vi.rotatedTypes ? 0xd3 : 0xc3, version, dcid, {},
                                                pn, body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    QuicRecord rec{};
    initRecord(rec);
    if ((data[0] & 1) == 0) {
        const Bytes d(data + 1, data + size);
        apply(d, rec, 1, true);
        apply(d, rec, 2, false);
        return 0;
    }
    // v1, draft-29, v2, T051, mvfst draft-27, Q050 (a CHLO in the CRYPTO frames), T050, a
    // forced-negotiation version (keyed with v1's salt here), draft-ietf-quic-v2-00
    constexpr std::uint32_t kVersions[] = {0x00000001, 0xff00001d, 0x6b3343cf,
                                           0x54303531, 0xfaceb002, 0x51303530,
                                           0x54303530, 0x1a2a3a4a, 0xff020000};
    const std::uint32_t version = kVersions[data[1] % std::size(kVersions)];
    std::size_t off = 2;
    bool fresh = true;
    for (std::uint32_t pn = 0; pn < 4 && off + 2 <= size; ++pn) {
        const std::size_t len =
            std::min<std::size_t>(data[off] << 8 | data[off + 1], size - off - 2);
        const Bytes frames(data + off + 2, data + off + 2 + len);
        off += 2 + len;
        const Bytes d = protect(version, pn, frames);
        if (d.empty()) break;
        apply(d, rec, pn + 1, fresh);
        fresh = false;
    }
    return 0;
}
