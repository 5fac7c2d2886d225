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

// A ClientHello (or gQUIC CHLO) completed (or repeated) by this datagram.
struct ClientHelloEvent {
    bool seen = false;
    bool chlo = false;  ///< a gQUIC CHLO: `sni` and `userAgent` below, `hello` unused
    tls::Hello hello;
    std::string_view sni;
    std::string_view userAgent;
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

// Decrypts the Initial `h` with the client keys of `dcid` (cached per flow). A version with a
// second candidate salt (forced version negotiation) tries it when the first fails the tag and
// keeps whichever keys worked.
std::size_t decryptWith(std::span<const std::uint8_t> d, const LongHeader& h,
                        std::span<const std::uint8_t> dcid, QuicRecord& rec,
                        std::span<std::uint8_t> plain) noexcept {
    VersionInfo vi;
    if (!versionInfo(h.version, vi) || vi.salt == nullptr) return 0;
    if (!rec.keysValid || !rec.keysDcid.equals(dcid) || rec.keysVersion != h.version) {
        rec.keysValid = deriveClientInitialKeys(vi, dcid, rec.keys);
        rec.keysDcid.set(dcid);
        rec.keysVersion = h.version;
        rec.keysAlt = false;
    }
    std::size_t n = rec.keysValid ? decryptInitial(d, h, rec.keys, plain) : 0;
    if (n == 0 && vi.altSalt != nullptr) {
        VersionInfo other = vi;
        other.salt = rec.keysAlt ? vi.salt : vi.altSalt;
        InitialKeys k;
        if (deriveClientInitialKeys(other, dcid, k)) n = decryptInitial(d, h, k, plain);
        if (n != 0) {
            rec.keys = k;
            rec.keysValid = true;
            rec.keysAlt = !rec.keysAlt;
        }
    }
    return n;
}

// A whole gQUIC CHLO (tag-value map): its SNI and user agent, the server port, the assembly
// done. Nothing when it does not parse.
void takeChlo(std::span<const std::uint8_t> msg, const QuicPacket& pkt, QuicRecord& rec,
              Datagram& out) noexcept {
    Chlo c;
    if (!parseChlo(msg, c)) return;
    rec.assemblyDone = true;
    out.ch.seen = true;
    out.ch.chlo = true;
    out.ch.sni = c.sni;
    out.ch.userAgent = c.userAgent;
    out.serverPort = pkt.dstPort;
}

// The first handshake message of the assembly once whole: a TLS ClientHello, or a gQUIC CHLO
// (Q0xx, whose messages are tag-value maps). Fills `out.ch` and the server port.
void finishHandshake(const CryptoAssembly<kCryptoCap>& as, bool chlo, const QuicPacket& pkt,
                     QuicRecord& rec, Datagram& out) noexcept {
    if (chlo) {
        const auto prefix = as.received();
        const std::size_t need = chloLength(prefix);
        if (need == 0 || need > prefix.size()) return;
        takeChlo(prefix.first(need), pkt, rec, out);
        return;
    }
    const auto msg = as.message();
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
    out.serverPort = pkt.dstPort;
}

// The assembly a client handshake packet feeds: the flow's until its first hello is whole;
// after it a repeated or a new one counts only when whole in this datagram.
CryptoAssembly<kCryptoCap>& assemblyFor(QuicRecord& rec) noexcept {
    if (!rec.assemblyDone) return rec.assembly;
    t_scratch.clear();
    return t_scratch;
}

// Decrypts a client Initial and feeds its CRYPTO frames; fills `out.ch` when a ClientHello is
// complete with this packet (first time: the flow's assembly; later: one datagram's own).
void handleInitial(std::span<const std::uint8_t> d, const LongHeader& h, const QuicPacket& pkt,
                   QuicRecord& rec, Datagram& out) noexcept {
    // A packet towards the known server port is the client's; others carry server keys.
    if (rec.serverPort != 0 && pkt.dstPort != rec.serverPort) return;
    if (h.dcid.empty() && rec.initialDcid.len == 0) return;
    const auto plain = plaintextBuffer();
    const std::span<const std::uint8_t> first =
        rec.initialDcid.len != 0 ? rec.initialDcid.view() : h.dcid;
    std::size_t n = decryptWith(d, h, first, rec, plain);
    if (n == 0 && !h.dcid.empty() && !rec.initialDcid.equals(h.dcid)) {
        // a new connection on the same 5-tuple: its keys come from its own DCID
        n = decryptWith(d, h, h.dcid, rec, plain);
    }
    if (n == 0) return;
    if (rec.initialDcid.len == 0) rec.initialDcid.set(h.dcid);
    const std::span<const std::uint8_t> frames(plain.data(), n);
    CryptoAssembly<kCryptoCap>& as = assemblyFor(rec);
    bool any = false;
    forEachCryptoFrame(
        frames,
        [&](std::uint64_t off, std::span<const std::uint8_t> data) {
            any = as.add(off, data) || any;
        },
        h.cryptoFrameType);
    if (!any) return;
    finishHandshake(as, h.chlo, pkt, rec, out);
    if (!out.ch.seen) return;
    out.ch.dcid = h.dcid;
    out.ch.scid = h.scid;
    out.ch.tokenLength = h.tokenLength;
    out.ch.version = h.version;
}

// A legacy gQUIC packet with a version (Q024..Q046): the CHLO travels in clear in stream 1.
// Stream 1 carries every handshake message of the connection one after the other (a CHLO
// sent again after the server's REJ starts at the REJ's end, 1024 in nDPI's quic_q46), so a
// frame that holds a whole CHLO is parsed as it is, at any offset (as nDPI and Wireshark do);
// one spread over several packets is reassembled from offset 0.
void handleGquic(const QuicPacket& pkt, const GquicHeader& g, QuicRecord& rec,
                 Datagram& out) noexcept {
    out.detected = true;
    out.version = g.version;
    out.type = g.initial ? PacketType::Initial : PacketType::Handshake;
    out.packets |= g.initial ? kPktInitial : kPktHandshake;
    out.dcid = g.dcid;
    out.scid = g.scid;
    if (!g.initial) return;
    if (rec.serverPort != 0 && pkt.dstPort != rec.serverPort) return;
    CryptoAssembly<kCryptoCap>& as = assemblyFor(rec);
    bool any = false;
    std::span<const std::uint8_t> whole;
    forEachGquicStreamData(pkt.payload.subspan(g.frames), g,
                           [&](std::uint64_t off, std::span<const std::uint8_t> data) {
                               const std::size_t n = chloLength(data);
                               if (whole.empty() && n != 0 && n <= data.size()) {
                                   whole = data.first(n);
                               } else {
                                   any = as.add(off, data) || any;
                               }
                           });
    if (!whole.empty()) {
        takeChlo(whole, pkt, rec, out);
    } else if (any) {
        finishHandshake(as, true, pkt, rec, out);
    }
    if (!out.ch.seen) return;
    out.ch.dcid = g.dcid;
    out.ch.scid = g.scid;
    out.ch.version = g.version;
}

void parseDatagram(const QuicPacket& pkt, QuicRecord& rec, Datagram& out) noexcept {
    const auto d = pkt.payload;
    if (d.empty()) return;
    out.packets = static_cast<std::uint8_t>((d[0] & 0x40) << 1);
    GquicHeader g;
    if (mayBeGquic(d) && parseGquicHeader(d, g)) {
        handleGquic(pkt, g, rec, out);
        return;
    }
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

// Transport parameters are (u16 type, u16 length) after a u16 list length before draft-27
// (and in mvfst's draft-22 and Google's T050); varints from draft-27 on (as nDPI reads them).
bool fixedWidthTransportParams(std::uint32_t version) noexcept {
    if ((version >> 8) == 0xff0000U) return (version & 0xff) < 27;
    return version == 0xfaceb000U || version == 0xfaceb001U || version == 0x54303530U;
}

std::string_view userAgentOf(std::span<const std::uint8_t> params, std::uint32_t version) noexcept {
    std::size_t off = 0;
    if (fixedWidthTransportParams(version)) {
        if (params.size() < 2) return {};
        const std::size_t end =
            std::min<std::size_t>(params.size(), 2 + (params[0] << 8 | params[1]));
        off = 2;
        while (end - off >= 4) {
            const std::size_t id = params[off] << 8 | params[off + 1];
            const std::size_t len = params[off + 2] << 8 | params[off + 3];
            off += 4;
            if (len > end - off) return {};
            if (id == kGoogleUserAgent)
                return {reinterpret_cast<const char*>(params.data() + off), len};
            off += len;
        }
        return {};
    }
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
    std::string_view sni =
        ch.chlo ? ch.sni : (ch.hello.hasSniName ? ch.hello.sni : std::string_view{});
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
        if (ch.chlo) {
            saveText(sni, rec.sni);
            saveText(ch.userAgent, rec.userAgent);
        } else if (ch.hello.hasSniName) {
            saveText(sni, rec.sni);
        }
        if (!ch.chlo) {
            tls::forEachExtension(ch.hello.extensions,
                                  [&](std::uint16_t type, std::span<const std::uint8_t> data) {
                                      if (type == tls::kExtAlpn) appendAlpn(data, rec);
                                      if (isTransportParameters(type) && rec.userAgent[0] == 0) {
                                          const auto ua = userAgentOf(data, ch.version);
                                          if (!ua.empty()) saveText(ua, rec.userAgent);
                                      }
                                  });
            rec.ja4Len =
                static_cast<std::uint8_t>(tls::ja4(ch.hello, true, tls::Ja4Mode::Spec, rec.ja4));
        }
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

bool mayStartFlow(std::span<const std::uint8_t> payload) noexcept {
    if (payload.size() < kMinPacketLen) return false;
    if ((payload[0] & 0x80) != 0) {
        const std::uint32_t version = std::uint32_t{payload[1]} << 24 |
                                      std::uint32_t{payload[2]} << 16 |
                                      std::uint32_t{payload[3]} << 8 | payload[4];
        VersionInfo known;
        return versionInfo(version, known) || isGquicCleartextVersion(version);
    }
    GquicHeader g;
    return mayBeGquic(payload) && parseGquicHeader(payload, g);
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
                if (!dg.ch.chlo) applyExtensions(rec, dg.ch.hello);
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
