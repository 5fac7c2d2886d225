#include "process/quic/quic_record.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace rowprobe::quic {

namespace {

constexpr std::uint16_t kTpV1 = 0x39;       // quic_transport_parameters, draft-33+ and v1
constexpr std::uint16_t kTpDraft = 0xffa5;  // draft-13 .. draft-32
constexpr std::uint16_t kTpOld = 0x26;      // draft-02 .. draft-12
constexpr std::uint64_t kGoogleUserAgent = 0x3129;
constexpr int kUnknown = -1;

bool isTransportParameters(std::uint16_t t) noexcept {
    return t == kTpV1 || t == kTpDraft || t == kTpOld;
}

// ipfixprobe's save_to_buffer(): the text plus two bytes must fit, else nothing is stored.
void saveText(std::string_view s, char (&dst)[255]) noexcept {
    if (s.size() + 2 > sizeof dst) return;
    if (!s.empty()) std::memcpy(dst, s.data(), s.size());
    dst[s.size()] = 0;
}

// The decrypted plaintext of one Initial: per thread, so that no packet allocates.
std::span<std::uint8_t> plaintextBuffer() noexcept {
    thread_local std::array<std::uint8_t, 65536> buf;
    return buf;
}

// A ClientHello completed (or repeated) by this datagram.
struct ClientHelloEvent {
    bool seen = false;
    tls::Hello hello;
    std::span<const std::uint8_t> dcid;  ///< of the Initial that carried it
    std::span<const std::uint8_t> scid;
    std::uint64_t tokenLength = kNoToken;
    std::uint32_t version = 0;
};

// What one datagram holds (ipfixprobe's QUICParser state after quic_parse_headers).
struct Datagram {
    std::uint8_t packets = 0;
    bool detected = false;
    std::uint32_t version = 0;
    PacketType type = PacketType::Handshake;
    std::span<const std::uint8_t> dcid;  ///< of the last long-header packet
    std::span<const std::uint8_t> scid;
    std::uint64_t tokenLength = kNoToken;
    std::uint8_t zeroRtt = 0;
    std::uint16_t serverPort = 0;
    ClientHelloEvent ch;
};

thread_local CryptoAssembly<kCryptoCap> t_scratch;

bool ensureKeys(QuicRecord& rec, std::uint32_t version, std::span<const std::uint8_t> dcid) {
    if (rec.keysValid && rec.keysDcid.equals(dcid)) return true;
    VersionInfo vi;
    if (!versionInfo(version, vi) || vi.salt == nullptr) return false;
    rec.keysValid = deriveClientInitialKeys(vi, dcid, rec.keys);
    rec.keysDcid.set(dcid);
    return rec.keysValid;
}

// Decrypts a client Initial and feeds its CRYPTO frames; fills `ev` when a ClientHello is
// complete with this packet (first time: the flow's assembly; later: one datagram's own).
void handleInitial(std::span<const std::uint8_t> d, const LongHeader& h, const QuicPacket& pkt,
                   QuicRecord& rec, Datagram& out) noexcept {
    // A packet towards the known server port is the client's; others carry server keys.
    if (rec.serverPort != 0 && pkt.dstPort != rec.serverPort) return;
    if (h.dcid.empty() && rec.initialDcid.len == 0) return;
    const auto plain = plaintextBuffer();
    std::size_t n = 0;
    const std::span<const std::uint8_t> first =
        rec.initialDcid.len != 0 ? rec.initialDcid.view() : h.dcid;
    if (ensureKeys(rec, h.version, first)) n = decryptInitial(d, h, rec.keys, plain);
    if (n == 0 && !h.dcid.empty() && !rec.initialDcid.equals(h.dcid)) {
        // a new connection on the same 5-tuple: its keys come from its own DCID
        if (ensureKeys(rec, h.version, h.dcid)) n = decryptInitial(d, h, rec.keys, plain);
    }
    if (n == 0) return;
    if (rec.initialDcid.len == 0) rec.initialDcid.set(h.dcid);
    const std::span<const std::uint8_t> frames(plain.data(), n);
    CryptoAssembly<kCryptoCap>* as = &rec.assembly;
    if (rec.assemblyDone) {
        // After the flow's ClientHello: a repeated or a new one counts only when whole here.
        as = &t_scratch;
        as->clear();
    }
    bool any = false;
    forEachCryptoFrame(
        frames,
        [&](std::uint64_t off, std::span<const std::uint8_t> data) {
            any = as->add(off, data) || any;
        },
        h.cryptoFrameType);
    if (!any) return;
    const auto msg = as->message();
    if (msg.empty()) return;
    tls::Hello hello;
    if (!tls::parseHandshake(msg, hello)) {
        if (!rec.assemblyDone) rec.assemblyDone = msg.size() > 0;  // a whole, bad message
        return;
    }
    if (hello.type != tls::HelloType::Client) return;
    rec.assemblyDone = true;
    out.ch.seen = true;
    out.ch.hello = hello;
    out.ch.dcid = h.dcid;
    out.ch.scid = h.scid;
    out.ch.tokenLength = h.tokenLength;
    out.ch.version = h.version;
    out.serverPort = pkt.dstPort;
}

void parseDatagram(const QuicPacket& pkt, QuicRecord& rec, Datagram& out) noexcept {
    const auto d = pkt.payload;
    if (d.empty()) return;
    out.packets = static_cast<std::uint8_t>((d[0] & 0x40) << 1);
    std::size_t off = 0;
    bool initial = false;
    LongHeader h;
    while (off < d.size() && parseLongHeader(d, off, h)) {
        out.detected = true;
        out.version = h.version;
        out.type = h.type;
        out.dcid = h.dcid;
        out.scid = h.scid;
        switch (h.type) {
            case PacketType::VersionNegotiation:
                out.packets |= kPktVersionNegotiation;
                out.serverPort = pkt.srcPort;
                break;
            case PacketType::Retry:
                out.packets |= kPktRetry;
                out.tokenLength = h.tokenLength;
                out.serverPort = pkt.srcPort;
                break;
            case PacketType::ZeroRtt:
                out.packets |= kPktZeroRtt;
                if (out.zeroRtt < 0xff) ++out.zeroRtt;
                if (out.serverPort == 0) out.serverPort = pkt.dstPort;
                break;
            case PacketType::Handshake:
                out.packets |= kPktHandshake;
                break;
            case PacketType::Initial:
                out.packets |= kPktInitial;
                out.tokenLength = h.tokenLength;
                initial = true;
                handleInitial(d, h, pkt, rec, out);
                break;
        }
        if (h.type == PacketType::Retry || h.type == PacketType::VersionNegotiation) break;
        if (h.end <= off) break;
        off = h.end;
    }
    if (initial) out.type = PacketType::Initial;
}

std::uint32_t packetsFromServer(const QuicPacket& pkt, std::uint16_t serverPort) noexcept {
    return serverPort == pkt.flowSrcPort ? pkt.flowPackets[0] : pkt.flowPackets[1];
}

int directionToServer(std::uint16_t parsedPort, const QuicRecord& rec, const QuicPacket& pkt,
                      bool fresh) noexcept {
    if (parsedPort != 0) return pkt.dstPort == parsedPort ? 1 : 0;
    if (!fresh && rec.serverPort != 0) return pkt.dstPort == rec.serverPort ? 1 : 0;
    return kUnknown;
}

int directionAndPort(std::uint16_t parsedPort, QuicRecord& rec, const QuicPacket& pkt,
                     bool fresh) noexcept {
    const int toServer = directionToServer(parsedPort, rec, pkt, fresh);
    if (toServer != kUnknown && rec.serverPort == 0) rec.serverPort = parsedPort;
    if (toServer == 0) rec.packetFromServerSeen = true;
    return toServer;
}

void setIfUnset(bool& flag, const Cid& from, Cid& to) noexcept {
    if (!flag) {
        to = from;
        flag = true;
    }
}

void setIfUnset(bool& flag, std::span<const std::uint8_t> from, Cid& to) noexcept {
    if (!flag) {
        to.set(from);
        flag = true;
    }
}

// ipfixprobe's set_stored_cid_fields: ids kept while the direction was unknown.
void applyStored(QuicRecord& rec, bool fresh, std::uint16_t& dport, const Cid& scid,
                 const Cid& dcid) noexcept {
    if (dport == rec.serverPort) {
        if (rec.clientHelloSeen && rec.packetFromServerSeen)
            setIfUnset(rec.scidSet, dcid, rec.scid);
        setIfUnset(rec.occidSet, scid, rec.occid);
    } else {
        setIfUnset(rec.scidSet, scid, rec.scid);
        setIfUnset(rec.occidSet, dcid, rec.occid);
    }
    dport = 0;
    (void)fresh;
}

void setStoredCids(QuicRecord& rec, bool fresh) noexcept {
    if (fresh || rec.serverPort == 0 || rec.dirDport == 0) return;
    applyStored(rec, fresh, rec.dirDport, rec.dirScid, rec.dirDcid);
    if (rec.dirDport2 != 0) applyStored(rec, fresh, rec.dirDport2, rec.dirScid2, rec.dirDcid2);
}

void setCids(QuicRecord& rec, const Datagram& dg, int toServer, bool fresh,
             const QuicPacket& pkt) noexcept {
    switch (toServer) {
        case 1: {
            setStoredCids(rec, fresh);
            const std::uint32_t fromServer = packetsFromServer(pkt, dg.serverPort);
            if (!rec.scidSet && rec.packetFromServerSeen &&
                static_cast<std::uint8_t>(fromServer - 1) != rec.retryCount) {
                rec.scid.set(dg.dcid);
                rec.scidSet = true;
            }
            setIfUnset(rec.occidSet, dg.scid, rec.occid);
            break;
        }
        case 0:
            setStoredCids(rec, fresh);
            setIfUnset(rec.occidSet, dg.dcid, rec.occid);
            if (!rec.scidSet && rec.packetFromServerSeen) {
                rec.scid.set(dg.scid);
                rec.scidSet = true;
            }
            break;
        default:
            if (rec.dirDport != 0 && rec.dirDport2 == 0 && rec.dirDport != pkt.dstPort) {
                rec.dirScid2.set(dg.scid);
                rec.dirDcid2.set(dg.dcid);
                rec.dirDport2 = pkt.dstPort;
            }
            if (rec.dirDport == 0) {
                rec.dirScid.set(dg.scid);
                rec.dirDcid.set(dg.dcid);
                rec.dirDport = pkt.dstPort;
            }
            break;
    }
}

void appendAlpn(std::span<const std::uint8_t> ext, QuicRecord& rec) noexcept {
    if (ext.size() < 2) return;
    std::size_t off = 2;
    std::size_t len = std::strlen(rec.alpn);
    const std::size_t end = std::min<std::size_t>(ext.size(), 2 + (ext[0] << 8 | ext[1]));
    while (off < end) {
        const std::size_t n = ext[off];
        if (off + 1 + n > end) break;
        const std::size_t need = n + (len != 0 ? 1 : 0);
        if (len + need + 1 > sizeof rec.alpn) break;
        if (len != 0) rec.alpn[len++] = ',';
        std::memcpy(rec.alpn + len, ext.data() + off + 1, n);
        len += n;
        rec.alpn[len] = 0;
        off += 1 + n;
    }
}

std::string_view userAgentOf(std::span<const std::uint8_t> params) noexcept {
    std::size_t off = 0;
    while (off < params.size()) {
        std::uint64_t id = 0;
        std::uint64_t len = 0;
        if (!readVarint(params, off, id) || !readVarint(params, off, len) ||
            len > params.size() - off)
            return {};
        if (id == kGoogleUserAgent)
            return {reinterpret_cast<const char*>(params.data() + off),
                    static_cast<std::size_t>(len)};
        off += static_cast<std::size_t>(len);
    }
    return {};
}

// ipfixprobe's set_client_hello_fields, plus ALPN and JA4.
void applyClientHello(QuicRecord& rec, const ClientHelloEvent& ch, bool fresh) noexcept {
    rec.tokenLength = ch.tokenLength;
    const bool afterRetry = rec.tokenLength != kNoToken && rec.tokenLength > 0 &&
                            rec.retryScid.len == ch.dcid.size() && rec.retryScid.equals(ch.dcid);
    if (afterRetry) return;  // everything is known from the ClientHello before the Retry
    std::string_view sni = ch.hello.hasSniName ? ch.hello.sni : std::string_view{};
    const bool same =
        std::string_view(rec.sni) == sni &&
        (rec.oscid.equals(ch.dcid) || (rec.packetFromServerSeen && rec.scid.equals(ch.dcid)));
    if (!(fresh || !rec.clientHelloSeen || same)) {
        if (rec.multiplexed < 0xff) ++rec.multiplexed;
        return;
    }
    if (!rec.clientHelloSeen || same) {
        rec.sni[0] = 0;
        rec.userAgent[0] = 0;
        rec.alpn[0] = 0;
        if (ch.hello.hasSniName) saveText(sni, rec.sni);
        tls::forEachExtension(ch.hello.extensions,
                              [&](std::uint16_t type, std::span<const std::uint8_t> data) {
                                  if (type == tls::kExtAlpn) appendAlpn(data, rec);
                                  if (isTransportParameters(type) && rec.userAgent[0] == 0) {
                                      const auto ua = userAgentOf(data);
                                      if (!ua.empty()) saveText(ua, rec.userAgent);
                                  }
                              });
        rec.ja4Len =
            static_cast<std::uint8_t>(tls::ja4(ch.hello, true, tls::Ja4Mode::Spec, rec.ja4));
    }
    setIfUnset(rec.oscidSet, ch.dcid, rec.oscid);
    setIfUnset(rec.occidSet, ch.scid, rec.occid);
    if (!rec.clientVersionSet) {
        rec.clientVersion = ch.version;
        rec.clientVersionSet = true;
    }
}

void applyExtensions(QuicRecord& rec, const tls::Hello& hello) noexcept {
    if (rec.extSet) return;
    rec.extSet = true;
    tls::forEachExtension(
        hello.extensions, [&](std::uint16_t type, std::span<const std::uint8_t> data) {
            if (rec.extCount < kMaxExtensions) {
                rec.extTypes[rec.extCount] = type;
                rec.extLengths[rec.extCount] = static_cast<std::uint16_t>(data.size());
                ++rec.extCount;
            }
            if ((type == tls::kExtAlpn || isTransportParameters(type)) &&
                rec.tlsExtLen + data.size() < kTlsExtBytes) {
                std::memcpy(rec.tlsExt.data() + rec.tlsExtLen, data.data(), data.size());
                rec.tlsExtLen = static_cast<std::uint16_t>(rec.tlsExtLen + data.size());
            }
        });
}

void setPacketType(QuicRecord& rec, const QuicPacket& pkt, std::uint8_t packets) noexcept {
    const std::uint64_t total = std::uint64_t{pkt.flowPackets[0]} + pkt.flowPackets[1];
    if (total == 0) return;
    const std::uint64_t pos = total - 1;
    if (pos < kMaxPacketTypes) {
        rec.packetTypes[pos] = packets;
        rec.lastPacketType = static_cast<std::uint8_t>(pos);
    }
}

}  // namespace

void Cid::set(std::span<const std::uint8_t> s) noexcept {
    len = static_cast<std::uint8_t>(std::min(s.size(), bytes.size()));
    if (len != 0) std::memcpy(bytes.data(), s.data(), len);
}

bool Cid::equals(std::span<const std::uint8_t> s) const noexcept {
    return s.size() == len && (len == 0 || std::memcmp(bytes.data(), s.data(), len) == 0);
}

void initRecord(QuicRecord& rec) noexcept {
    // Everything before the bulk buffers; tlsExt and the assembly's bytes are read only up to
    // tlsExtLen and within the assembly's ranges.
    std::memset(static_cast<void*>(&rec), 0, offsetof(QuicRecord, tlsExt));
    rec.keys = InitialKeys{};
    rec.assembly.clear();
    rec.tokenLength = kNoToken;
}

QuicUpdate applyQuicPacket(const QuicPacket& pkt, QuicRecord& rec, bool fresh) noexcept {
    Datagram dg;
    parseDatagram(pkt, rec, dg);
    setPacketType(rec, pkt, dg.packets);
    if (!dg.detected) return QuicUpdate::NotQuic;
    if ((dg.packets & kPktZeroRtt) == 0) rec.version = dg.version;
    int toServer = directionAndPort(dg.serverPort, rec, pkt, fresh);
    if ((dg.packets & kPktZeroRtt) != 0)
        rec.zeroRtt = static_cast<std::uint8_t>(std::min(0xff, rec.zeroRtt + dg.zeroRtt));
    if (dg.version == 0) {
        setCids(rec, dg, toServer, fresh, pkt);
        return QuicUpdate::Flush;
    }
    if (dg.ch.seen) rec.chParsed = 1;
    switch (dg.type) {
        case PacketType::Initial:
            if (dg.ch.seen) {
                setStoredCids(rec, fresh);
                applyClientHello(rec, dg.ch, fresh);
                rec.clientHelloSeen = true;
                applyExtensions(rec, dg.ch.hello);
                break;
            }
            toServer = directionAndPort(dg.serverPort, rec, pkt, fresh);
            [[fallthrough]];
        case PacketType::Handshake:
            setCids(rec, dg, toServer, fresh, pkt);
            break;
        case PacketType::Retry:
            ++rec.retryCount;
            if (rec.retryCount == 1) {
                rec.retryScid.set(dg.scid);
                rec.initialDcid.set(dg.scid);  // the client's next Initials are keyed from it
                rec.tokenLength = dg.tokenLength;
            }
            setIfUnset(rec.occidSet, dg.dcid, rec.occid);
            break;
        case PacketType::ZeroRtt:
            setIfUnset(rec.occidSet, dg.scid, rec.occid);
            break;
        case PacketType::VersionNegotiation:
            break;
    }
    return QuicUpdate::Quic;
}

}  // namespace rowprobe::quic
