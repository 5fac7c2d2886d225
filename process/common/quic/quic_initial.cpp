#include "process/common/quic/quic_initial.hpp"

#include <openssl/evp.h>

#include <cstring>

namespace rowprobe::quic {

namespace {

using Salt = std::array<std::uint8_t, 20>;

constexpr Salt kSaltDraft7 = {0xaf, 0xc8, 0x24, 0xec, 0x5f, 0xc7, 0x7e, 0xca, 0x1e, 0x9d,
                              0x36, 0xf3, 0x7f, 0xb2, 0xd4, 0x65, 0x18, 0xc3, 0x66, 0x39};
constexpr Salt kSaltDraft10 = {0x9c, 0x10, 0x8f, 0x98, 0x52, 0x0a, 0x5c, 0x5c, 0x32, 0x96,
                               0x8e, 0x95, 0x0e, 0x8a, 0x2c, 0x5f, 0xe0, 0x6d, 0x6c, 0x38};
constexpr Salt kSaltDraft17 = {0xef, 0x4f, 0xb0, 0xab, 0xb4, 0x74, 0x70, 0xc4, 0x1b, 0xef,
                               0xcf, 0x80, 0x31, 0x33, 0x4f, 0xae, 0x48, 0x5e, 0x09, 0xa0};
constexpr Salt kSaltDraft21 = {0x7f, 0xbc, 0xdb, 0x0e, 0x7c, 0x66, 0xbb, 0xe9, 0x19, 0x3a,
                               0x96, 0xcd, 0x21, 0x51, 0x9e, 0xbd, 0x7a, 0x02, 0x64, 0x4a};
constexpr Salt kSaltDraft23 = {0xc3, 0xee, 0xf7, 0x12, 0xc7, 0x2e, 0xbb, 0x5a, 0x11, 0xa7,
                               0xd2, 0x43, 0x2b, 0xb4, 0x63, 0x65, 0xbe, 0xf9, 0xf5, 0x02};
constexpr Salt kSaltDraft29 = {0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97,
                               0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43, 0x90, 0xa8, 0x99};
constexpr Salt kSaltV1 = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
                          0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a};
constexpr Salt kSaltPicoquic = {0x30, 0x67, 0x16, 0xd7, 0x63, 0x75, 0xd5, 0x55, 0x4b, 0x2f,
                                0x60, 0x5e, 0xef, 0x78, 0xd8, 0x33, 0x3d, 0xc1, 0xca, 0x36};
constexpr Salt kSaltV2Provisional = {0xa7, 0x07, 0xc2, 0x03, 0xa5, 0x9b, 0x47, 0x18, 0x4a, 0x1d,
                                     0x62, 0xca, 0x57, 0x04, 0x06, 0xea, 0x7a, 0xe3, 0xe5, 0xd3};
constexpr Salt kSaltV2 = {0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
                          0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9};
// Google QUIC T051 (QUIC crypto replaced by TLS 1.3, IETF long header), as Chromium sets it.
constexpr Salt kSaltT051 = {0x7a, 0x4e, 0xde, 0xf4, 0xe7, 0xcc, 0xee, 0x5f, 0xa4, 0x50,
                            0x6c, 0x19, 0x12, 0x4f, 0xc8, 0xcc, 0xda, 0x6e, 0x03, 0x3d};
// Google QUIC Q050 (QUIC crypto CHLO) and T050 (TLS), as Chromium, Wireshark and nDPI set them.
constexpr Salt kSaltQ050 = {0x50, 0x45, 0x74, 0xef, 0xd0, 0x66, 0xfe, 0x2f, 0x9d, 0x94,
                            0x5c, 0xfc, 0xdb, 0xd3, 0xa7, 0xf0, 0xd3, 0xb5, 0x6b, 0x45};
constexpr Salt kSaltT050 = {0x7f, 0xf5, 0x79, 0xe5, 0xac, 0xd0, 0x72, 0x91, 0x55, 0x80,
                            0x30, 0x4c, 0x43, 0xa2, 0x36, 0x7c, 0x60, 0x48, 0x83, 0x10};

// ipfixprobe 5.7's version → "draft number" mapping (0: unknown), which picks the salt.
// 100/101: v2 provisional / RFC 9369; 36: picoquic's internal versions; 200/201/202: Google
// T051, Q050, T050.
unsigned draftOf(std::uint32_t v) noexcept {
    if ((v >> 8) == 0xff0000U && (v & 0xff) >= 1 && (v & 0xff) <= 34) return v & 0xff;
    if ((v & 0x0F0F0F0FU) == 0x0a0a0a0aU) return 35;  // forced version negotiation
    switch (v & 0xfffffff0U) {
        case 0xabcd0000U:  // msquic
            return 29;
        case 0xf0f0f0f0U:  // ETH Zürich
        case 0xf0f0f1f0U:  // Telecom Italia
        case 0x07007000U:  // Tencent
        case 0xf0f0f2f0U:  // quinn noise
        case 0x5c100000U:  // QUIC over SCION
            return 35;
        case 0xf123f0c0U:  // MozQuic
            return 14;
        default:
            break;
    }
    switch (v & 0xffffff00U) {
        case 0x45474700U:  // quant: its low byte is the draft
            return v & 0xff;
        case 0x51474f00U:  // quic-go
        case 0x91c17000U:  // quicly
            return 35;
        default:
            break;
    }
    switch (v) {
        case 0xfaceb000U:
            return 20;
        case 0xfaceb001U:
            return 22;
        case 0xfaceb002U:
        case 0xfaceb00dU:
        case 0xfaceb00eU:
        case 0xfaceb00fU:
        case 0xfaceb010U:
        case 0xfaceb011U:
        case 0xfaceb012U:
        case 0xfaceb013U:
            return 27;
        case 0xfaceb003U:  // mvfst's alias of v1 (ipfixprobe: unknown; nDPI: v1)
        case 0x00000001U:
            return 35;
        case 0x50435130U:
        case 0x50435131U:
            return 36;
        case 0xff020000U:
        case 0x709a50c4U:
            return 100;
        case 0x6b3343cfU:
            return 101;
        case 0x54303531U:  // "T051"
            return 200;
        case 0x51303530U:  // "Q050"
            return 201;
        case 0x54303530U:  // "T050"
            return 202;
        default:
            return 0;
    }
}

// HMAC-SHA256 and AES contexts of this thread, created once and re-keyed for every use. The
// algorithms are fetched once too: OpenSSL 3 looks an implicit EVP_sha256() / EVP_aes_*() up in
// its provider on every init, which cost more than the packet's decryption.
struct CryptoContexts {
    EVP_MD* sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_CIPHER* aesGcm = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
    EVP_CIPHER* aesEcb = EVP_CIPHER_fetch(nullptr, "AES-128-ECB", nullptr);
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    EVP_CIPHER_CTX* gcm = EVP_CIPHER_CTX_new();
    EVP_CIPHER_CTX* ecb = EVP_CIPHER_CTX_new();
    CryptoContexts() = default;
    CryptoContexts(const CryptoContexts&) = delete;
    CryptoContexts& operator=(const CryptoContexts&) = delete;
    ~CryptoContexts() {
        EVP_MD_CTX_free(md);
        EVP_CIPHER_CTX_free(gcm);
        EVP_CIPHER_CTX_free(ecb);
        EVP_MD_free(sha256);
        EVP_CIPHER_free(aesGcm);
        EVP_CIPHER_free(aesEcb);
    }
    bool ok() const noexcept {
        return md != nullptr && gcm != nullptr && ecb != nullptr && sha256 != nullptr &&
               aesGcm != nullptr && aesEcb != nullptr;
    }
};

CryptoContexts& contexts() noexcept {
    thread_local CryptoContexts c;
    return c;
}

constexpr std::size_t kHashLen = 32;
constexpr std::size_t kBlock = 64;

// HMAC-SHA256 (RFC 2104) of up to three message pieces, on the thread's digest context.
bool hmacSha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> m1,
                std::span<const std::uint8_t> m2, std::span<const std::uint8_t> m3,
                std::uint8_t* out) noexcept {
    CryptoContexts& c = contexts();
    EVP_MD_CTX* md = c.md;
    std::array<std::uint8_t, kBlock> k{};
    if (key.size() > kBlock) {
        unsigned n = 0;
        if (EVP_DigestInit_ex(md, c.sha256, nullptr) != 1 ||
            EVP_DigestUpdate(md, key.data(), key.size()) != 1 ||
            EVP_DigestFinal_ex(md, k.data(), &n) != 1)
            return false;
    } else if (!key.empty()) {
        std::memcpy(k.data(), key.data(), key.size());
    }
    std::array<std::uint8_t, kBlock> pad{};
    for (std::size_t i = 0; i < kBlock; ++i) pad[i] = static_cast<std::uint8_t>(k[i] ^ 0x36);
    std::array<std::uint8_t, kHashLen> inner{};
    unsigned n = 0;
    if (EVP_DigestInit_ex(md, c.sha256, nullptr) != 1 ||
        EVP_DigestUpdate(md, pad.data(), pad.size()) != 1 ||
        (!m1.empty() && EVP_DigestUpdate(md, m1.data(), m1.size()) != 1) ||
        (!m2.empty() && EVP_DigestUpdate(md, m2.data(), m2.size()) != 1) ||
        (!m3.empty() && EVP_DigestUpdate(md, m3.data(), m3.size()) != 1) ||
        EVP_DigestFinal_ex(md, inner.data(), &n) != 1)
        return false;
    for (std::size_t i = 0; i < kBlock; ++i) pad[i] = static_cast<std::uint8_t>(k[i] ^ 0x5c);
    const bool ok = EVP_DigestInit_ex(md, c.sha256, nullptr) == 1 &&
                    EVP_DigestUpdate(md, pad.data(), pad.size()) == 1 &&
                    EVP_DigestUpdate(md, inner.data(), inner.size()) == 1 &&
                    EVP_DigestFinal_ex(md, out, &n) == 1;
    OPENSSL_cleanse(k.data(), k.size());
    OPENSSL_cleanse(pad.data(), pad.size());
    return ok;
}

// HKDF-Expand-Label (RFC 8446 §7.1) with an empty context, output ≤ 32 bytes (one block).
bool expandLabel(std::span<const std::uint8_t, kHashLen> secret, const char* label,
                 std::uint8_t* out, std::size_t len) noexcept {
    std::array<std::uint8_t, 2 + 1 + 6 + 32 + 1> info{};
    const std::size_t labelLen = std::strlen(label);
    if (labelLen > 32 || len > kHashLen) return false;
    info[0] = 0;
    info[1] = static_cast<std::uint8_t>(len);
    info[2] = static_cast<std::uint8_t>(6 + labelLen);
    std::memcpy(&info[3], "tls13 ", 6);
    std::memcpy(&info[9], label, labelLen);
    info[9 + labelLen] = 0;  // context length
    const std::uint8_t one = 1;
    std::array<std::uint8_t, kHashLen> t{};
    if (!hmacSha256(secret, std::span(info.data(), 10 + labelLen), std::span(&one, 1), {},
                    t.data()))
        return false;
    std::memcpy(out, t.data(), len);
    OPENSSL_cleanse(t.data(), t.size());
    return true;
}

std::uint64_t readPacketNumber(const std::uint8_t* p, std::size_t len) noexcept {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) v = v << 8 | p[i];
    return v;
}

}  // namespace

bool versionInfo(std::uint32_t version, VersionInfo& out) noexcept {
    out = VersionInfo{};
    if (version == 0) return true;  // Version Negotiation
    const unsigned d = draftOf(version);
    if (d == 0) return false;
    if (d <= 9) {
        out.salt = kSaltDraft7.data();
    } else if (d <= 16) {
        out.salt = kSaltDraft10.data();
    } else if (d <= 20) {
        out.salt = kSaltDraft17.data();
    } else if (d <= 22) {
        out.salt = kSaltDraft21.data();
    } else if (d <= 28) {
        out.salt = kSaltDraft23.data();
    } else if (d <= 32) {
        out.salt = kSaltDraft29.data();
    } else if (d <= 35) {
        out.salt = kSaltV1.data();
    } else if (d == 36) {
        out.salt = kSaltPicoquic.data();
    } else if (d == 100) {
        // draft-ietf-quic-v2-00 (0xff020000) kept v1's packet types; -01 on rotated them
        out.salt = kSaltV2Provisional.data();
        out.v2 = true;
        out.rotatedTypes = version != 0xff020000U;
    } else if (d == 101) {
        out.salt = kSaltV2.data();
        out.v2 = true;
        out.rotatedTypes = true;
    } else {
        out.salt = d == 200 ? kSaltT051.data() : d == 201 ? kSaltQ050.data() : kSaltT050.data();
        out.google = true;
        out.chlo = d == 201;
    }
    if ((version & 0x0F0F0F0FU) == 0x0a0a0a0aU) out.altSalt = kSaltDraft29.data();
    return true;
}

bool readVarint(std::span<const std::uint8_t> p, std::size_t& off, std::uint64_t& v) noexcept {
    if (off >= p.size()) return false;
    const std::size_t len = std::size_t{1} << (p[off] >> 6);
    if (len > p.size() - off) return false;
    v = p[off] & 0x3fU;
    for (std::size_t i = 1; i < len; ++i) v = v << 8 | p[off + i];
    off += len;
    return true;
}

bool parseLongHeader(std::span<const std::uint8_t> d, std::size_t off, LongHeader& h) noexcept {
    h = LongHeader{};
    if (off >= d.size() || d.size() - off < kMinPacketLen) return false;
    if ((d[off] & 0x80) == 0) return false;
    h.start = off;
    h.firstByte = d[off];
    h.version = static_cast<std::uint32_t>(d[off + 1]) << 24 |
                static_cast<std::uint32_t>(d[off + 2]) << 16 |
                static_cast<std::uint32_t>(d[off + 3]) << 8 | d[off + 4];
    VersionInfo vi;
    if (!versionInfo(h.version, vi)) return false;
    h.v2 = vi.v2;
    h.chlo = vi.chlo;
    if (vi.google) h.cryptoFrameType = 0x08;
    std::size_t p = off + 5;
    const std::size_t dcidLen = d[p++];
    if (dcidLen > kMaxCidLen || dcidLen >= d.size() - p) return false;
    h.dcid = d.subspan(p, dcidLen);
    p += dcidLen;
    const std::size_t scidLen = d[p++];
    if (scidLen > kMaxCidLen || scidLen > d.size() - p) return false;
    h.scid = d.subspan(p, scidLen);
    p += scidLen;
    if (h.version == 0) {
        h.type = PacketType::VersionNegotiation;
        h.end = d.size();
        return true;
    }
    const unsigned bits = (h.firstByte >> 4) & 3U;
    constexpr PacketType kV1[] = {PacketType::Initial, PacketType::ZeroRtt, PacketType::Handshake,
                                  PacketType::Retry};
    constexpr PacketType kV2[] = {PacketType::Retry, PacketType::Initial, PacketType::ZeroRtt,
                                  PacketType::Handshake};
    h.type = vi.rotatedTypes ? kV2[bits] : kV1[bits];
    if (h.type == PacketType::Retry) {
        // token, then the 16-byte integrity tag
        if (d.size() - p < 16) return false;
        h.tokenLength = d.size() - p - 16;
        h.end = d.size();
        return true;
    }
    std::uint64_t v = 0;
    if (h.type == PacketType::Initial) {
        if (!readVarint(d, p, v) || v > d.size() - p) return false;
        h.tokenLength = v;
        p += static_cast<std::size_t>(v);
    }
    if (!readVarint(d, p, v) || v > d.size() - p) return false;
    h.pnOffset = p;
    h.end = p + static_cast<std::size_t>(v);
    return true;
}

namespace {

bool deriveInitialKeys(const VersionInfo& version, std::span<const std::uint8_t> dcid,
                       const char* side, InitialKeys& out, std::uint8_t* secret) noexcept {
    if (version.salt == nullptr || !contexts().ok()) return false;
    std::array<std::uint8_t, kHashLen> initial{};
    std::array<std::uint8_t, kHashLen> client{};
    // HKDF-Extract(salt, dcid) = HMAC(salt, dcid)
    bool ok = hmacSha256(std::span(version.salt, 20), dcid, {}, {}, initial.data()) &&
              expandLabel(initial, side, client.data(), client.size());
    if (ok) {
        ok = expandLabel(client, version.v2 ? "quicv2 key" : "quic key", out.key.data(), 16) &&
             expandLabel(client, version.v2 ? "quicv2 iv" : "quic iv", out.iv.data(), 12) &&
             expandLabel(client, version.v2 ? "quicv2 hp" : "quic hp", out.hp.data(), 16);
    }
    if (ok && secret != nullptr) std::memcpy(secret, client.data(), client.size());
    OPENSSL_cleanse(initial.data(), initial.size());
    OPENSSL_cleanse(client.data(), client.size());
    return ok;
}

}  // namespace

bool deriveClientInitialKeys(const VersionInfo& version, std::span<const std::uint8_t> dcid,
                             InitialKeys& out, std::uint8_t* secret) noexcept {
    return deriveInitialKeys(version, dcid, "client in", out, secret);
}

bool deriveServerInitialKeys(const VersionInfo& version, std::span<const std::uint8_t> dcid,
                             InitialKeys& out, std::uint8_t* secret) noexcept {
    return deriveInitialKeys(version, dcid, "server in", out, secret);
}

std::size_t decryptInitial(std::span<const std::uint8_t> d, const LongHeader& h,
                           const InitialKeys& keys, std::span<std::uint8_t> out,
                           std::uint64_t* packetNumber) noexcept {
    CryptoContexts& c = contexts();
    if (!c.ok() || h.type != PacketType::Initial || h.end > d.size() || h.pnOffset == 0) return 0;
    // The sample starts 4 bytes after the packet number's first byte; a tag follows the payload.
    if (h.end < h.pnOffset + 4 + 16 || h.end - h.pnOffset < 4 + 16 + 1) return 0;
    std::array<std::uint8_t, 32> mask{};
    int n = 0;
    if (EVP_EncryptInit_ex(c.ecb, c.aesEcb, nullptr, keys.hp.data(), nullptr) != 1) return 0;
    EVP_CIPHER_CTX_set_padding(c.ecb, 0);
    if (EVP_EncryptUpdate(c.ecb, mask.data(), &n, d.data() + h.pnOffset + 4, 16) != 1 || n != 16)
        return 0;
    const std::uint8_t first = static_cast<std::uint8_t>(h.firstByte ^ (mask[0] & 0x0f));
    const std::size_t pnLen = (first & 3U) + 1;
    std::array<std::uint8_t, 4> pn{};
    for (std::size_t i = 0; i < pnLen; ++i)
        pn[i] = static_cast<std::uint8_t>(d[h.pnOffset + i] ^ mask[1 + i]);
    const std::size_t payloadStart = h.pnOffset + pnLen;
    if (h.end - payloadStart < 16 + 1) return 0;
    const std::size_t cipherLen = h.end - payloadStart - 16;
    if (cipherLen > out.size()) return 0;
    const std::uint64_t number = readPacketNumber(pn.data(), pnLen);
    std::array<std::uint8_t, 12> nonce = keys.iv;
    for (std::size_t i = 0; i < 8; ++i)
        nonce[11 - i] = static_cast<std::uint8_t>(nonce[11 - i] ^ (number >> (8 * i)));
    std::array<std::uint8_t, 16> tag{};
    std::memcpy(tag.data(), d.data() + h.end - 16, 16);
    // AAD: the unprotected header (first byte, the rest as sent, the clear packet number).
    const std::size_t middle = h.pnOffset - h.start - 1;
    if (EVP_DecryptInit_ex(c.gcm, c.aesGcm, nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.gcm, EVP_CTRL_AEAD_SET_IVLEN, 12, nullptr) != 1 ||
        EVP_DecryptInit_ex(c.gcm, nullptr, nullptr, keys.key.data(), nonce.data()) != 1 ||
        EVP_DecryptUpdate(c.gcm, nullptr, &n, &first, 1) != 1 ||
        EVP_DecryptUpdate(c.gcm, nullptr, &n, d.data() + h.start + 1, static_cast<int>(middle)) !=
            1 ||
        EVP_DecryptUpdate(c.gcm, nullptr, &n, pn.data(), static_cast<int>(pnLen)) != 1)
        return 0;
    int written = 0;
    if (EVP_DecryptUpdate(c.gcm, out.data(), &written, d.data() + payloadStart,
                          static_cast<int>(cipherLen)) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.gcm, EVP_CTRL_AEAD_SET_TAG, 16, tag.data()) != 1)
        return 0;
    int fin = 0;
    if (EVP_DecryptFinal_ex(c.gcm, out.data() + written, &fin) != 1) return 0;
    if (packetNumber != nullptr) *packetNumber = number;
    return static_cast<std::size_t>(written) + static_cast<std::size_t>(fin);
}

}  // namespace rowprobe::quic
