#include "process/common/tls/tls_parser.hpp"

#include <algorithm>
#include <cstring>

#include "process/common/tls/digest.hpp"

namespace rowprobe::tls {

namespace {

constexpr std::uint8_t kContentHandshake = 22;
constexpr std::size_t kRecordHeaderLen = 5;
constexpr std::size_t kRandomLen = 32;

std::uint16_t be16(std::span<const std::uint8_t> s, std::size_t off) noexcept {
    return static_cast<std::uint16_t>(s[off] << 8 | s[off + 1]);
}

void parseServerNames(std::span<const std::uint8_t> ext, Hello& out) noexcept {
    out.hasSni = true;
    if (ext.size() < 2) return;
    const std::size_t listLen = be16(ext, 0);
    if (2 + listLen > ext.size()) return;
    const auto list = ext.subspan(2, listLen);
    // Entry: name_type (1), length (2), name. The first complete entry is the SNI.
    if (list.size() < 3) return;
    const std::size_t nameLen = be16(list, 1);
    if (3 + nameLen > list.size()) return;
    out.sni = {reinterpret_cast<const char*>(list.data() + 3), nameLen};
    out.hasSniName = true;
}

void parseAlpn(std::span<const std::uint8_t> ext, Hello& out) noexcept {
    if (ext.size() < 2) return;
    const std::size_t listLen = be16(ext, 0);
    if (2 + listLen > ext.size() || listLen < 1) return;
    const std::size_t protoLen = ext[2];
    if (1 + protoLen > listLen) return;
    out.alpn = {reinterpret_cast<const char*>(ext.data() + 3), protoLen};
    out.hasAlpn = true;
}

// A list with a length prefix of `prefix` bytes (1 or 2); empty span when malformed.
std::span<const std::uint8_t> prefixedList(std::span<const std::uint8_t> ext,
                                           std::size_t prefix) noexcept {
    if (ext.size() < prefix) return {};
    const std::size_t len = prefix == 1 ? ext[0] : be16(ext, 0);
    if (prefix + len > ext.size()) return {};
    return ext.subspan(prefix, len);
}

void parseExtensions(std::span<const std::uint8_t> block, Hello& out) noexcept {
    std::size_t used = 0;
    forEachExtension(block, [&](std::uint16_t type, std::span<const std::uint8_t> data) {
        used += 4 + data.size();
        ++out.extensionCount;
        if (isGrease(type)) ++out.greaseExtensionCount;
        if (out.type == HelloType::Server) {
            if (type == kExtAlpn) {
                parseAlpn(data, out);
            } else if (type == kExtSupportedVersions && data.size() >= 2) {
                out.supportedVersion = be16(data, 0);
            }
            return;
        }
        switch (type) {
            case kExtServerName:
                parseServerNames(data, out);
                break;
            case kExtAlpn:
                parseAlpn(data, out);
                break;
            case kExtSupportedGroups:
                out.supportedGroups = prefixedList(data, 2);
                break;
            case kExtEcPointFormats:
                out.pointFormats = prefixedList(data, 1);
                break;
            case kExtSignatureAlgorithms:
                out.signatureAlgorithms = data;
                break;
            case kExtSupportedVersions: {
                const auto list = prefixedList(data, 1);
                out.supportedVersions = list.first(list.size() & ~std::size_t{1});
                for (std::size_t i = 0; i + 1 < list.size(); i += 2) {
                    const std::uint16_t v = be16(list, i);
                    if (!isGrease(v)) out.supportedVersion = std::max(out.supportedVersion, v);
                }
                break;
            }
            default:
                break;
        }
    });
    out.extensions = block.first(used);
}

// ---- text building (shared by the hashers and the *String() debug helpers) -----------------

struct BufferSink {
    std::span<char> out;
    std::size_t len = 0;
    void put(std::string_view s) noexcept {
        if (len < out.size()) {
            const std::size_t n = std::min(s.size(), out.size() - len);
            if (n != 0) std::memcpy(out.data() + len, s.data(), n);
        }
        len += s.size();
    }
};

// Collects the text in a small buffer so the hash sees a few large updates, not one per number.
template <class H>
struct HashSink {
    H h;
    char buf[512];
    std::size_t n = 0;
    void put(std::string_view s) noexcept {
        if (n + s.size() > sizeof buf) {
            flush();
            if (s.size() > sizeof buf) {
                h.update(s);
                return;
            }
        }
        std::memcpy(buf + n, s.data(), s.size());
        n += s.size();
    }
    void flush() noexcept {
        if (n != 0) h.update({buf, n});
        n = 0;
    }
    auto finish() noexcept {
        flush();
        return h.finish();
    }
};

template <class Sink>
void putDecimal(Sink& sink, unsigned v) noexcept {
    char buf[10];
    std::size_t n = 0;
    do {
        buf[sizeof buf - 1 - n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    sink.put({buf + sizeof buf - n, n});
}

template <class Sink>
void putHex4(Sink& sink, std::uint16_t v) noexcept {
    static constexpr char kHex[] = "0123456789abcdef";
    const char buf[4] = {kHex[v >> 12], kHex[(v >> 8) & 15], kHex[(v >> 4) & 15], kHex[v & 15]};
    sink.put({buf, 4});
}

// "a-b-c" of the u16 list (stride 2) or u8 list (stride 1), GREASE removed.
template <class Sink>
void putDashList(Sink& sink, std::span<const std::uint8_t> list, std::size_t stride) noexcept {
    bool first = true;
    for (std::size_t i = 0; i + stride <= list.size(); i += stride) {
        const std::uint16_t v = stride == 2 ? be16(list, i) : list[i];
        if (stride == 2 && isGrease(v)) continue;
        if (!first) sink.put("-");
        putDecimal(sink, v);
        first = false;
    }
}

template <class Sink>
void putExtensionTypes(Sink& sink, std::span<const std::uint8_t> block) noexcept {
    bool first = true;
    forEachExtension(block, [&](std::uint16_t type, std::span<const std::uint8_t>) {
        if (isGrease(type)) return;
        if (!first) sink.put("-");
        putDecimal(sink, type);
        first = false;
    });
}

template <class Sink>
void buildJa3(Sink& sink, const Hello& h) noexcept {
    putDecimal(sink, h.handshakeVersion);
    sink.put(",");
    putDashList(sink, h.ciphers, 2);
    sink.put(",");
    putExtensionTypes(sink, h.extensions);
    sink.put(",");
    putDashList(sink, h.supportedGroups, 2);
    sink.put(",");
    putDashList(sink, h.pointFormats, 1);
}

template <class Sink>
void buildJa3s(Sink& sink, const Hello& h) noexcept {
    putDecimal(sink, h.handshakeVersion);
    sink.put(",");
    putDecimal(sink, h.cipher);
    sink.put(",");
    putExtensionTypes(sink, h.extensions);
}

// ---- JA4 --------------------------------------------------------------------------------------

const char* versionLabel(std::uint16_t v) noexcept {
    switch (v) {
        case 0x0304:
            return "13";
        case 0x0303:
            return "12";
        case 0x0302:
            return "11";
        case 0x0301:
            return "10";
        case 0x0300:
            return "s3";
        case 0x0002:
            return "s2";
        case 0xfeff:
            return "d1";
        case 0xfefd:
            return "d2";
        case 0xfefc:
            return "d3";
        default:
            return "00";
    }
}

bool isAsciiAlnum(std::uint8_t c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// 12 hex digits of SHA-256 over the sorted u16 list ("%04x" comma-joined), or "000000000000"
// for an empty list (the `suffix` is hashed after the list when given).
template <class Suffix>
void truncatedHash(std::span<const std::uint16_t> sorted, bool zerosIfEmpty, Suffix&& suffix,
                   char* out) noexcept {
    static constexpr char kHex[] = "0123456789abcdef";
    if (sorted.empty() && zerosIfEmpty) {
        std::memset(out, '0', 12);
        return;
    }
    HashSink<Sha256> sink;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (i != 0) sink.put(",");
        putHex4(sink, sorted[i]);
    }
    suffix(sink);
    const auto digest = sink.finish();
    for (std::size_t i = 0; i < 6; ++i) {
        out[2 * i] = kHex[digest[i] >> 4];
        out[2 * i + 1] = kHex[digest[i] & 15];
    }
}

}  // namespace

bool parseHandshake(std::span<const std::uint8_t> hs, Hello& out) noexcept {
    out = Hello{};
    // type (1), length (3), legacy_version (2), random (32), session id length (1)
    if (hs.size() < 4 + 2 + kRandomLen + 1) return false;
    if (hs[0] != 1 && hs[0] != 2) return false;
    if (hs[4] != 3) return false;
    const auto type = hs[0] == 1 ? HelloType::Client : HelloType::Server;
    std::size_t off = 4 + 2 + kRandomLen;
    off += 1 + hs[off];  // session id
    if (type == HelloType::Client) {
        if (off + 2 > hs.size()) return false;
        const std::size_t cipherLen = be16(hs, off);
        if (off + 2 + cipherLen > hs.size()) return false;
        out.ciphers = hs.subspan(off + 2, cipherLen & ~std::size_t{1});
        off += 2 + cipherLen;
        if (off + 1 > hs.size()) return false;
        off += 1 + hs[off];  // compression methods
        if (off > hs.size()) return false;
    } else {
        if (off + 3 > hs.size()) return false;
        out.cipher = be16(hs, off);
        off += 3;  // cipher suite, compression method
    }
    out.type = type;
    out.handshakeVersion = be16(hs, 4);
    // A hello without extensions (SSL 3.0 era) ends here by its handshake length; otherwise the
    // extensions block must be in the payload.
    const std::size_t messageEnd = 4 + (std::size_t{hs[1]} << 16 | std::size_t{hs[2]} << 8 | hs[3]);
    if (off >= messageEnd) return true;
    if (off + 2 > hs.size() || off + 2 + be16(hs, off) > hs.size()) {
        out = Hello{};
        return false;
    }
    parseExtensions(hs.subspan(off + 2, be16(hs, off)), out);
    return true;
}

bool parseHello(std::span<const std::uint8_t> payload, Hello& out) noexcept {
    out = Hello{};
    if (payload.size() < kRecordHeaderLen || payload[0] != kContentHandshake || payload[1] != 3) {
        return false;
    }
    if (!parseHandshake(payload.subspan(kRecordHeaderLen), out)) return false;
    out.recordVersion = be16(payload, 1);
    return true;
}

std::array<std::uint8_t, 16> ja3(const Hello& h) noexcept {
    HashSink<Md5> sink;
    buildJa3(sink, h);
    return sink.finish();
}

std::array<std::uint8_t, 16> ja3s(const Hello& h) noexcept {
    HashSink<Md5> sink;
    buildJa3s(sink, h);
    return sink.finish();
}

std::size_t ja3String(const Hello& h, std::span<char> out) noexcept {
    BufferSink sink{out};
    buildJa3(sink, h);
    return sink.len;
}

std::size_t ja3sString(const Hello& h, std::span<char> out) noexcept {
    BufferSink sink{out};
    buildJa3s(sink, h);
    return sink.len;
}

std::size_t ja4(const Hello& h, bool quic, Ja4Mode mode, std::array<char, kJa4Len>& out) noexcept {
    const bool ipx = mode == Ja4Mode::Ipfixprobe;
    std::uint16_t ciphers[kJa4MaxListLen];
    std::uint16_t exts[kJa4MaxListLen];
    std::uint16_t sigs[kJa4MaxListLen];
    std::size_t nCiphers = 0, nExts = 0, nSigs = 0;

    for (std::size_t i = 0; i + 1 < h.ciphers.size(); i += 2) {
        const std::uint16_t c = be16(h.ciphers, i);
        if (isGrease(c)) continue;
        if (nCiphers == kJa4MaxListLen) return 0;
        ciphers[nCiphers++] = c;
    }
    bool overflow = false;
    forEachExtension(h.extensions, [&](std::uint16_t type, std::span<const std::uint8_t>) {
        if (type == kExtServerName || type == kExtAlpn || isGrease(type)) return;
        if (nExts == kJa4MaxListLen) {
            overflow = true;
            return;
        }
        exts[nExts++] = type;
    });
    if (overflow) return 0;
    if (ipx) {
        // ipfixprobe reads the whole extension as u16 values and drops the first one (the list
        // length); GREASE is kept.
        for (std::size_t i = 2; i + 1 < h.signatureAlgorithms.size(); i += 2) {
            if (nSigs == kJa4MaxListLen) return 0;
            sigs[nSigs++] = be16(h.signatureAlgorithms, i);
        }
    } else {
        const auto list = prefixedList(h.signatureAlgorithms, 2);
        for (std::size_t i = 0; i + 1 < list.size(); i += 2) {
            const std::uint16_t s = be16(list, i);
            if (isGrease(s)) continue;
            if (nSigs == kJa4MaxListLen) return 0;
            sigs[nSigs++] = s;
        }
    }

    // Part a.
    std::uint16_t version = h.handshakeVersion;
    if (ipx) {
        // max_element over int16_t values (GREASE removed) in ipfixprobe.
        bool any = false;
        std::int16_t best = 0;
        for (std::size_t i = 0; i + 1 < h.supportedVersions.size(); i += 2) {
            const std::uint16_t v = be16(h.supportedVersions, i);
            if (isGrease(v)) continue;
            const auto s = static_cast<std::int16_t>(v);
            if (!any || s > best) best = s;
            any = true;
        }
        // Without supported_versions ipfixprobe reads the hello's version field in host byte
        // order (little-endian): 03 03 is still TLS 1.2, but TLS 1.1, 1.0, SSL 3 and DTLS
        // become values it has no label for, so their part a says "00".
        version = any ? static_cast<std::uint16_t>(best)
                      : static_cast<std::uint16_t>(version >> 8 | (version & 0xff) << 8);
    } else if (h.supportedVersion != 0) {
        version = h.supportedVersion;
    }
    const std::size_t extCount =
        ipx ? h.extensionCount
            : static_cast<std::size_t>(h.extensionCount - h.greaseExtensionCount);
    const std::size_t nc = std::min<std::size_t>(nCiphers, 99);
    const std::size_t ne = std::min<std::size_t>(extCount, 99);

    BufferSink a{out};
    a.put(quic ? "q" : "t");
    a.put(versionLabel(version));
    a.put((ipx ? h.hasSniName : h.hasSni) ? "d" : "i");
    if (ipx) {
        putDecimal(a, static_cast<unsigned>(nc));
        putDecimal(a, static_cast<unsigned>(ne));
    } else {
        const char counts[4] = {static_cast<char>('0' + nc / 10), static_cast<char>('0' + nc % 10),
                                static_cast<char>('0' + ne / 10), static_cast<char>('0' + ne % 10)};
        a.put({counts, 4});
    }
    if (!h.hasAlpn || h.alpn.empty()) {
        a.put("00");
    } else {
        const auto first = static_cast<std::uint8_t>(h.alpn.front());
        const auto last = static_cast<std::uint8_t>(h.alpn.back());
        char label[2];
        if (ipx) {
            static constexpr char kUpper[] = "0123456789ABCDEF";
            label[0] = isAsciiAlnum(first) ? static_cast<char>(first) : kUpper[first >> 4];
            label[1] = isAsciiAlnum(last) ? static_cast<char>(last) : kUpper[last & 15];
        } else if (isAsciiAlnum(first) && isAsciiAlnum(last)) {
            label[0] = static_cast<char>(first);
            label[1] = static_cast<char>(last);
        } else {
            static constexpr char kLower[] = "0123456789abcdef";
            label[0] = kLower[first >> 4];
            label[1] = kLower[last & 15];
        }
        a.put({label, 2});
    }
    a.put("_");

    // Parts b and c.
    char hashes[12 + 1 + 12];
    std::sort(ciphers, ciphers + nCiphers);
    std::sort(exts, exts + nExts);
    truncatedHash(
        {ciphers, nCiphers}, true, [](auto&) {}, hashes);
    hashes[12] = '_';
    const bool extsZero = !ipx && nExts == 0;
    truncatedHash(
        {exts, nExts}, extsZero,
        [&](auto& sink) {
            if (!ipx && nSigs == 0) return;
            sink.put("_");
            for (std::size_t i = 0; i < nSigs; ++i) {
                if (i != 0) sink.put(",");
                putHex4(sink, sigs[i]);
            }
        },
        hashes + 13);
    a.put({hashes, sizeof hashes});
    return a.len <= out.size() ? a.len : 0;
}

}  // namespace rowprobe::tls
