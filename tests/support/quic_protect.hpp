// Protecting a QUIC client Initial in a test (RFC 9001 §5), shared by the quic unit tests and the
// quic fuzz target: the long header is written with a 4-byte packet number, the payload is
// sealed with AES-128-GCM (the header as associated data, the IV xored with the packet number),
// then header protection masks the first byte's low bits and the packet number with AES-128-ECB
// over the 16 bytes that follow the packet number's first byte + 4. Header-only, needs libcrypto.
#pragma once

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <vector>

#include "process/common/quic/quic_initial.hpp"

namespace rowprobe::test {

/// The protected Initial of `version` from `dcid` to `scid` with packet number `pn`, carrying
/// `payload` as it is (pad it first as the caller wants). `firstByte` is the unprotected first
/// byte: 0xc3 (Initial, 4-byte packet number), 0xd3 where the version rotates the packet types.
inline std::vector<std::uint8_t> protectClientInitial(const quic::InitialKeys& k,
                                                      std::uint8_t firstByte, std::uint32_t version,
                                                      const std::vector<std::uint8_t>& dcid,
                                                      const std::vector<std::uint8_t>& scid,
                                                      std::uint32_t pn,
                                                      const std::vector<std::uint8_t>& payload) {
    std::vector<std::uint8_t> p;
    p.reserve(64 + payload.size() + 16);
    p.push_back(firstByte);
    for (int i = 3; i >= 0; --i) p.push_back(static_cast<std::uint8_t>(version >> (8 * i)));
    p.push_back(static_cast<std::uint8_t>(dcid.size()));
    p.insert(p.end(), dcid.begin(), dcid.end());
    p.push_back(static_cast<std::uint8_t>(scid.size()));
    p.insert(p.end(), scid.begin(), scid.end());
    p.push_back(0);  // token length
    const std::size_t len = 4 + payload.size() + 16;
    p.push_back(static_cast<std::uint8_t>(0x40 | len >> 8));
    p.push_back(static_cast<std::uint8_t>(len));
    const std::size_t pnOff = p.size();
    for (int i = 3; i >= 0; --i) p.push_back(static_cast<std::uint8_t>(pn >> (8 * i)));
    std::array<std::uint8_t, 12> nonce = k.iv;
    for (int i = 0; i < 4; ++i) nonce[11 - i] ^= static_cast<std::uint8_t>(pn >> (8 * i));
    std::vector<std::uint8_t> ct(payload.size() + 16);
    int n = 0;
    EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
    EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), nullptr, nullptr, nullptr);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 12, nullptr);
    EVP_EncryptInit_ex(c, nullptr, nullptr, k.key.data(), nonce.data());
    EVP_EncryptUpdate(c, nullptr, &n, p.data(), static_cast<int>(p.size()));
    EVP_EncryptUpdate(c, ct.data(), &n, payload.data(), static_cast<int>(payload.size()));
    EVP_EncryptFinal_ex(c, ct.data() + n, &n);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, ct.data() + payload.size());
    EVP_CIPHER_CTX_free(c);
    p.insert(p.end(), ct.begin(), ct.end());
    std::array<std::uint8_t, 32> mask{};
    c = EVP_CIPHER_CTX_new();
    EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), nullptr, k.hp.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(c, 0);
    EVP_EncryptUpdate(c, mask.data(), &n, p.data() + pnOff + 4, 16);
    EVP_CIPHER_CTX_free(c);
    p[0] = static_cast<std::uint8_t>(p[0] ^ (mask[0] & 0x0f));
    for (std::size_t i = 0; i < 4; ++i) p[pnOff + i] ^= mask[1 + i];
    return p;
}

}  // namespace rowprobe::test
