// QUIC Initial decryption and the quic plugin's record: RFC 9001 / RFC 9369 key vectors, the
// header-protection mask of RFC 9001 A.2, real client Initials (ipfixprobe's draft-29 sample,
// nDPI's quic-29 capture), Initials this test protects itself (split and reordered CRYPTO
// frames, a bad tag), truncated and hostile datagrams.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <pcap/pcap.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "process/common/quic/crypto_assembly.hpp"
#include "process/common/quic/quic_initial.hpp"
#include "process/quic/quic_record.hpp"
#include "test_support.hpp"

namespace {

using namespace rowprobe::quic;
using rowprobe::test::testdataDir;
using Bytes = std::vector<std::uint8_t>;

Bytes unhex(const std::string& s) {
    Bytes b;
    for (std::size_t i = 0; i + 1 < s.size(); i += 2)
        b.push_back(static_cast<std::uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
    return b;
}

template <class C>
std::string hex(const C& c, std::size_t n) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        s += kHex[c[i] >> 4];
        s += kHex[c[i] & 15];
    }
    return s;
}

VersionInfo info(std::uint32_t v) {
    VersionInfo vi;
    EXPECT_TRUE(versionInfo(v, vi));
    return vi;
}

// UDP payloads of a capture (Ethernet, IPv4 or IPv6 without extension headers).
struct Datagram {
    Bytes payload;
    std::uint16_t sport = 0;
    std::uint16_t dport = 0;
};
std::vector<Datagram> udpPayloads(const std::filesystem::path& file) {
    std::vector<Datagram> out;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(file.c_str(), err);
    if (p == nullptr) return out;
    pcap_pkthdr* h = nullptr;
    const u_char* d = nullptr;
    while (pcap_next_ex(p, &h, &d) == 1) {
        if (h->caplen < 14) continue;
        const unsigned type = d[12] << 8 | d[13];
        std::size_t l4 = 0;
        if (type == 0x0800 && h->caplen >= 34 && d[23] == 17) {
            l4 = 14 + (d[14] & 15U) * 4;
        } else if (type == 0x86dd && h->caplen >= 62 && d[20] == 17) {
            l4 = 54;
        } else {
            continue;
        }
        if (h->caplen < l4 + 8) continue;
        Datagram g;
        g.sport = static_cast<std::uint16_t>(d[l4] << 8 | d[l4 + 1]);
        g.dport = static_cast<std::uint16_t>(d[l4 + 2] << 8 | d[l4 + 3]);
        g.payload.assign(d + l4 + 8, d + h->caplen);
        out.push_back(std::move(g));
    }
    pcap_close(p);
    return out;
}

std::filesystem::path samplePcap() {
    return testdataDir() / "ipfixprobe" / "inputs" / "quic_initial-sample.pcap";
}

// ---- RFC vectors ----------------------------------------------------------------------------

TEST(QuicInitial, Rfc9001AppendixA1ClientInitialKeys) {
    const Bytes dcid = unhex("8394c8f03e515708");
    InitialKeys k;
    std::array<std::uint8_t, 32> secret{};
    ASSERT_TRUE(deriveClientInitialKeys(info(1), dcid, k, secret.data()));
    EXPECT_EQ(hex(secret, 32), "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea");
    EXPECT_EQ(hex(k.key, 16), "1f369613dd76d5467730efcbe3b1a22d");
    EXPECT_EQ(hex(k.iv, 12), "fa044b2f42a3fd3b46fb255c");
    EXPECT_EQ(hex(k.hp, 16), "9f50449e04a0e810283a1e9933adedd2");
}

TEST(QuicInitial, Rfc9369AppendixA1V2ClientInitialKeys) {
    const Bytes dcid = unhex("8394c8f03e515708");
    InitialKeys k;
    std::array<std::uint8_t, 32> secret{};
    const VersionInfo vi = info(0x6b3343cf);
    EXPECT_TRUE(vi.v2);
    ASSERT_TRUE(deriveClientInitialKeys(vi, dcid, k, secret.data()));
    EXPECT_EQ(hex(secret, 32), "14ec9d6eb9fd7af83bf5a668bc17a7e283766aade7ecd0891f70f9ff7f4bf47b");
    EXPECT_EQ(hex(k.key, 16), "8b1a0bc121284290a29e0971b5cd045d");
    EXPECT_EQ(hex(k.iv, 12), "91f73e2351d8fa91660e909f");
    EXPECT_EQ(hex(k.hp, 16), "45b95e15235d6f45a6b19cbcb0294ba9");
}

TEST(QuicInitial, Rfc9001AppendixA2HeaderProtectionMask) {
    // hp key of A.1, sample d1b1c98dd7689fb8ec11d242b123dc9b -> mask 437b9aec36
    const Bytes hp = unhex("9f50449e04a0e810283a1e9933adedd2");
    const Bytes sample = unhex("d1b1c98dd7689fb8ec11d242b123dc9b");
    EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
    std::array<std::uint8_t, 32> mask{};
    int n = 0;
    ASSERT_EQ(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), nullptr, hp.data(), nullptr), 1);
    EVP_CIPHER_CTX_set_padding(c, 0);
    ASSERT_EQ(EVP_EncryptUpdate(c, mask.data(), &n, sample.data(), 16), 1);
    EVP_CIPHER_CTX_free(c);
    EXPECT_EQ(hex(mask, 5), "437b9aec36");
    // The protected header of A.2 unmasks to packet number 2 (4 bytes) with that mask.
    const Bytes prot = unhex("c000000001088394c8f03e5157080000449e7b9aec34");
    EXPECT_EQ((prot[0] ^ (mask[0] & 0x0f)) & 0x0f, 0x03);
    EXPECT_EQ(prot[18] ^ mask[1], 0);
    EXPECT_EQ(prot[21] ^ mask[4], 2);
}

TEST(QuicInitial, VersionsAndSalts) {
    VersionInfo a, b, c;
    ASSERT_TRUE(versionInfo(0xff00001b, a));  // draft-27
    ASSERT_TRUE(versionInfo(0xff00001d, b));  // draft-29
    ASSERT_TRUE(versionInfo(0xff000022, c));  // draft-34 (v1 salt)
    EXPECT_NE(a.salt, b.salt);
    EXPECT_EQ(c.salt, info(1).salt);
    EXPECT_EQ(info(0xfaceb002).salt, a.salt);  // mvfst: draft-27's
    EXPECT_EQ(info(0xfaceb003).salt, info(1).salt);
    EXPECT_TRUE(info(0x709a50c4).v2);
    EXPECT_TRUE(info(0x54303531).google);
    VersionInfo vn;
    ASSERT_TRUE(versionInfo(0, vn));
    EXPECT_EQ(vn.salt, nullptr);
    VersionInfo none;
    EXPECT_FALSE(versionInfo(0x12345678, none));
    EXPECT_FALSE(versionInfo(0xff000000, none));
    EXPECT_FALSE(versionInfo(0xff000023, none));  // draft-35 never existed
}

TEST(QuicInitial, V2PacketTypeBitsAreRotated) {
    // v2 Initial has type bits 01, Retry 00 (RFC 9369 §3.2).
    Bytes p = {0xd0, 0x6b, 0x33, 0x43, 0xcf, 1, 0xaa, 0, 0, 2, 0, 0};
    LongHeader h;
    ASSERT_TRUE(parseLongHeader(p, 0, h));
    EXPECT_EQ(h.type, PacketType::Initial);
    p[0] = 0xc0;
    p.resize(40);
    ASSERT_TRUE(parseLongHeader(p, 0, h));
    EXPECT_EQ(h.type, PacketType::Retry);
    p[1] = 0;
    p[2] = 0;
    p[3] = 0;
    p[4] = 1;  // v1: 00 is Initial
    p[9] = 2;
    ASSERT_TRUE(parseLongHeader(p, 0, h));
    EXPECT_EQ(h.type, PacketType::Initial);
}

TEST(QuicInitial, VarintsCutShortAreRejected) {
    const Bytes b = {0x40};
    std::size_t off = 0;
    std::uint64_t v = 0;
    EXPECT_FALSE(readVarint(b, off, v));
    const Bytes c = {0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c};  // RFC 9000 A.1
    off = 0;
    ASSERT_TRUE(readVarint(c, off, v));
    EXPECT_EQ(v, 151288809941952652ULL);
    EXPECT_EQ(off, 8U);
}

// ---- real Initials --------------------------------------------------------------------------

struct Decrypted {
    LongHeader h;
    Bytes plain;
};
Decrypted decryptFirst(const Bytes& d) {
    Decrypted out;
    EXPECT_TRUE(parseLongHeader(d, 0, out.h));
    InitialKeys k;
    EXPECT_TRUE(deriveClientInitialKeys(info(out.h.version), out.h.dcid, k));
    out.plain.resize(2048);
    out.plain.resize(decryptInitial(d, out.h, k, out.plain));
    return out;
}

TEST(QuicInitial, DecryptsIpfixprobesDraft29SampleAndRejectsABadTagWithoutLeakingState) {
    const auto pkts = udpPayloads(samplePcap());
    if (pkts.empty()) GTEST_SKIP() << samplePcap() << " not available";
    const Bytes& good = pkts[0].payload;
    const Decrypted d = decryptFirst(good);
    ASSERT_GT(d.plain.size(), 100U);
    EXPECT_EQ(d.h.version, 0xff00001dU);
    EXPECT_EQ(hex(d.h.dcid, d.h.dcid.size()), "d3e8e06049a4f6b2");
    // every tampered byte of the protected part (including the tag) is rejected
    InitialKeys k;
    ASSERT_TRUE(deriveClientInitialKeys(info(d.h.version), d.h.dcid, k));
    Bytes out(2048);
    for (const std::size_t at : {d.h.pnOffset + 30, d.h.end - 1, d.h.end - 16, d.h.pnOffset}) {
        Bytes bad = good;
        bad[at] ^= 0x01;
        LongHeader h;
        ASSERT_TRUE(parseLongHeader(bad, 0, h));
        EXPECT_EQ(decryptInitial(bad, h, k, out), 0U) << "tampered byte " << at;
        // the next good packet decrypts exactly as before
        EXPECT_EQ(decryptInitial(good, d.h, k, out), d.plain.size());
        EXPECT_EQ(std::memcmp(out.data(), d.plain.data(), d.plain.size()), 0);
    }
    // a wrong key (another DCID) is rejected too
    InitialKeys other;
    const Bytes dcid = unhex("0001020304050607");
    ASSERT_TRUE(deriveClientInitialKeys(info(d.h.version), dcid, other));
    EXPECT_EQ(decryptInitial(good, d.h, other, out), 0U);
}

TEST(QuicInitial, TruncatedAndMutatedDatagramsNeverCrash) {
    const auto pkts = udpPayloads(samplePcap());
    if (pkts.empty()) GTEST_SKIP() << samplePcap() << " not available";
    const Bytes& good = pkts[0].payload;
    Bytes out(2048);
    InitialKeys k;
    for (std::size_t n = 0; n < good.size(); ++n) {
        // a copy of exactly n bytes, so that ASan sees any read past the end
        const Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
        LongHeader h;
        if (!parseLongHeader(cut, 0, h)) continue;
        EXPECT_LE(h.end, cut.size());
        if (h.type == PacketType::Initial && deriveClientInitialKeys(info(h.version), h.dcid, k)) {
            EXPECT_EQ(decryptInitial(cut, h, k, out), 0U) << n;
        }
    }
    std::mt19937 rng(7);
    QuicRecord rec{};
    for (int i = 0; i < 3000; ++i) {
        Bytes m = good;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; f < flips; ++f) m[rng() % 64] = static_cast<std::uint8_t>(rng());
        m.resize(rng() % (m.size() + 1));
        QuicPacket pkt{.payload = m, .srcPort = 5000, .dstPort = 443, .flowSrcPort = 5000};
        pkt.flowPackets = {static_cast<std::uint32_t>(i % 40 + 1), 0};
        if (i % 50 == 0) {
            rec = QuicRecord{};
            initRecord(rec);
        }
        applyQuicPacket(pkt, rec, i % 50 == 0);
        EXPECT_LE(rec.lastPacketType, kMaxPacketTypes - 1);
        EXPECT_LE(rec.extCount, kMaxExtensions);
    }
}

// ---- Initials protected here ----------------------------------------------------------------

// Protects a v1/draft client Initial carrying `frames` (RFC 9001 §5: AES-128-GCM, then header
// protection), padded to at least 1200 bytes as clients do.
Bytes protect(std::uint32_t version, const Bytes& dcid, const Bytes& scid, std::uint32_t pn,
              Bytes frames) {
    if (frames.size() < 1100) frames.resize(1100, 0);  // PADDING
    InitialKeys k;
    EXPECT_TRUE(deriveClientInitialKeys(info(version), dcid, k));
    Bytes p;
    p.reserve(2048);
    for (const unsigned b :
         {0xc3U, version >> 24, version >> 16 & 0xff, version >> 8 & 0xff, version & 0xff})
        p.push_back(static_cast<std::uint8_t>(b));
    p.push_back(static_cast<std::uint8_t>(dcid.size()));
    p.insert(p.end(), dcid.begin(), dcid.end());
    p.push_back(static_cast<std::uint8_t>(scid.size()));
    p.insert(p.end(), scid.begin(), scid.end());
    p.push_back(0);  // token length
    const std::size_t len = 4 + frames.size() + 16;
    p.push_back(static_cast<std::uint8_t>(0x40 | len >> 8));
    p.push_back(static_cast<std::uint8_t>(len));
    const std::size_t pnOff = p.size();
    for (int i = 3; i >= 0; --i) p.push_back(static_cast<std::uint8_t>(pn >> (8 * i)));
    std::array<std::uint8_t, 12> nonce = k.iv;
    for (int i = 0; i < 4; ++i) nonce[11 - i] ^= static_cast<std::uint8_t>(pn >> (8 * i));
    EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
    int n = 0;
    Bytes ct(frames.size() + 16);
    EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), nullptr, nullptr, nullptr);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 12, nullptr);
    EVP_EncryptInit_ex(c, nullptr, nullptr, k.key.data(), nonce.data());
    EVP_EncryptUpdate(c, nullptr, &n, p.data(), static_cast<int>(p.size()));
    EVP_EncryptUpdate(c, ct.data(), &n, frames.data(), static_cast<int>(frames.size()));
    EVP_EncryptFinal_ex(c, ct.data() + n, &n);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, ct.data() + frames.size());
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

Bytes cryptoFrame(std::size_t offset, const Bytes& data, std::size_t from, std::size_t len) {
    Bytes f;
    f.reserve(5 + len);
    for (const std::size_t b :
         {std::size_t{0x06}, 0x40 | offset >> 8, offset & 0xff, 0x40 | len >> 8, len & 0xff})
        f.push_back(static_cast<std::uint8_t>(b));
    f.insert(f.end(), data.begin() + static_cast<std::ptrdiff_t>(from),
             data.begin() + static_cast<std::ptrdiff_t>(from + len));
    return f;
}

// The ClientHello of ipfixprobe's sample, as carried in its CRYPTO frames.
Bytes sampleClientHello() {
    const auto pkts = udpPayloads(samplePcap());
    if (pkts.empty()) return {};
    const Decrypted d = decryptFirst(pkts[0].payload);
    CryptoAssembly<4096> as{};
    forEachCryptoFrame(d.plain,
                       [&](std::uint64_t off, std::span<const std::uint8_t> b) { as.add(off, b); });
    const auto m = as.message();
    return Bytes(m.begin(), m.end());
}

QuicPacket clientPacket(const Bytes& d, std::uint32_t n) {
    QuicPacket p{.payload = d, .srcPort = 50000, .dstPort = 443, .flowSrcPort = 50000};
    p.flowPackets = {n, 0};
    return p;
}

TEST(QuicRecord, ClientHelloSplitOverThreeInitialsOutOfOrderIsReassembled) {
    const Bytes ch = sampleClientHello();
    if (ch.empty()) GTEST_SKIP() << samplePcap() << " not available";
    ASSERT_GT(ch.size(), 300U);
    const Bytes dcid = unhex("1122334455667788");
    const Bytes scid = unhex("a1a2a3a4");
    const std::size_t a = 100;
    const std::size_t b = 250;
    // packet 1: the last part; packet 2: the middle then the first part; packet 3: a repeat
    Bytes f2 = cryptoFrame(a, ch, a, b - a);
    const Bytes f0 = cryptoFrame(0, ch, 0, a);
    f2.push_back(0x01);  // PING between them
    f2.insert(f2.end(), f0.begin(), f0.end());
    const Bytes p1 = protect(1, dcid, scid, 0, cryptoFrame(b, ch, b, ch.size() - b));
    const Bytes p2 = protect(1, dcid, scid, 1, f2);
    QuicRecord rec{};
    initRecord(rec);
    EXPECT_EQ(applyQuicPacket(clientPacket(p1, 1), rec, true), QuicUpdate::Quic);
    EXPECT_EQ(rec.chParsed, 0);
    EXPECT_STREQ(rec.sni, "");
    EXPECT_EQ(applyQuicPacket(clientPacket(p2, 2), rec, false), QuicUpdate::Quic);
    EXPECT_EQ(rec.chParsed, 1);
    EXPECT_STREQ(rec.sni, "www.google.com");
    EXPECT_STREQ(rec.alpn, "h3-29");
    EXPECT_EQ(std::string(rec.userAgent).rfind("Chrome/92.0.4515.107", 0), 0U);
    EXPECT_EQ(rec.version, 1U);
    EXPECT_EQ(rec.serverPort, 443);
    EXPECT_EQ(hex(rec.oscid.bytes, rec.oscid.len), "1122334455667788");
    EXPECT_EQ(hex(rec.occid.bytes, rec.occid.len), "a1a2a3a4");
    EXPECT_EQ(rec.extCount, 12);
    EXPECT_EQ(std::string(rec.ja4.data(), rec.ja4Len).substr(0, 4), "q13d");
    // an Initial retransmission (same CRYPTO offsets) changes nothing and is not multiplexing
    const Bytes p3 = protect(1, dcid, scid, 2, cryptoFrame(0, ch, 0, ch.size()));
    EXPECT_EQ(applyQuicPacket(clientPacket(p3, 3), rec, false), QuicUpdate::Quic);
    EXPECT_EQ(rec.multiplexed, 0);
    EXPECT_STREQ(rec.sni, "www.google.com");
    // another connection's ClientHello on the same 5-tuple (other DCID, own keys): multiplexed
    const Bytes p4 =
        protect(1, unhex("99999999aaaaaaaa"), scid, 0, cryptoFrame(0, ch, 0, ch.size()));
    EXPECT_EQ(applyQuicPacket(clientPacket(p4, 4), rec, false), QuicUpdate::Quic);
    EXPECT_EQ(rec.multiplexed, 1);
    EXPECT_EQ(hex(rec.oscid.bytes, rec.oscid.len), "1122334455667788");
    EXPECT_EQ(rec.lastPacketType, 3);
    EXPECT_EQ(rec.packetTypes[0], kPktInitial | kPktQuicBit);
}

TEST(QuicRecord, BadTagInTheMiddleOfAReassemblyLeavesNoTrace) {
    const Bytes ch = sampleClientHello();
    if (ch.empty()) GTEST_SKIP() << samplePcap() << " not available";
    const Bytes dcid = unhex("0102030405060708");
    const Bytes p1 = protect(1, dcid, {}, 0, cryptoFrame(0, ch, 0, 200));
    Bytes bad =
        protect(1, dcid, {}, 1,
                cryptoFrame(200, unhex(std::string(2 * ch.size(), 'e')), 200, ch.size() - 200));
    bad[bad.size() - 3] ^= 0x40;  // the tag
    const Bytes p2 = protect(1, dcid, {}, 2, cryptoFrame(200, ch, 200, ch.size() - 200));
    QuicRecord rec{};
    initRecord(rec);
    applyQuicPacket(clientPacket(p1, 1), rec, true);
    applyQuicPacket(clientPacket(bad, 2), rec, false);
    EXPECT_EQ(rec.chParsed, 0);
    EXPECT_EQ(rec.assembly.prefix(), 200U) << "nothing of the rejected packet was kept";
    applyQuicPacket(clientPacket(p2, 3), rec, false);
    EXPECT_EQ(rec.chParsed, 1);
    EXPECT_STREQ(rec.sni, "www.google.com");
}

TEST(QuicRecord, VersionNegotiationFlushesAndRetryIsRecorded) {
    // Version Negotiation from the server: version 0, then the supported versions.
    const Bytes vn = unhex("80000000000408090a0b000000000100000001ff00001d");
    QuicRecord rec{};
    initRecord(rec);
    QuicPacket p{.payload = vn, .srcPort = 443, .dstPort = 50000, .flowSrcPort = 50000};
    p.flowPackets = {1, 1};
    EXPECT_EQ(applyQuicPacket(p, rec, false), QuicUpdate::Flush);
    EXPECT_EQ(rec.packetTypes[1], kPktVersionNegotiation);
    EXPECT_EQ(rec.serverPort, 443);
    // Retry: new SCID (the client's next DCID) and a token
    const Bytes retry = unhex("f0000000010401020304080a0b0c0d0e0f1011");
    Bytes r = retry;
    for (int i = 0; i < 20; ++i) r.push_back(0x77);  // token
    for (int i = 0; i < 16; ++i) r.push_back(0x00);  // integrity tag
    QuicRecord rr{};
    initRecord(rr);
    QuicPacket q{.payload = r, .srcPort = 443, .dstPort = 50000, .flowSrcPort = 50000};
    q.flowPackets = {1, 1};
    EXPECT_EQ(applyQuicPacket(q, rr, false), QuicUpdate::Quic);
    EXPECT_EQ(rr.retryCount, 1);
    EXPECT_EQ(rr.tokenLength, 20U);
    EXPECT_EQ(hex(rr.retryScid.bytes, rr.retryScid.len), "0a0b0c0d0e0f1011");
    EXPECT_EQ(hex(rr.initialDcid.bytes, rr.initialDcid.len), "0a0b0c0d0e0f1011");
    EXPECT_EQ(rr.packetTypes[1], kPktRetry | kPktQuicBit);
}

TEST(QuicRecord, NotQuicDatagramsAttachNothing) {
    QuicRecord rec{};
    initRecord(rec);
    const Bytes dns = unhex("12340100000100000000000003777777076578616d706c6503636f6d0000010001");
    EXPECT_EQ(applyQuicPacket(clientPacket(dns, 1), rec, true), QuicUpdate::NotQuic);
    const Bytes shortHeader = unhex("4011223344556677889900aabbccddeeff");
    EXPECT_EQ(applyQuicPacket(clientPacket(shortHeader, 1), rec, true), QuicUpdate::NotQuic);
    const Bytes unknownVersion = unhex("c01234567808010203040506070800");
    EXPECT_EQ(applyQuicPacket(clientPacket(unknownVersion, 1), rec, true), QuicUpdate::NotQuic);
}

TEST(CryptoAssembly, RangesMergeAndTheMessageNeedsEveryByte) {
    CryptoAssembly<64> as{};
    const Bytes msg = {1, 0, 0, 8, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
    EXPECT_TRUE(as.add(8, std::span(msg).subspan(8)));
    EXPECT_TRUE(as.message().empty());
    EXPECT_TRUE(as.add(0, std::span(msg).subspan(0, 4)));
    EXPECT_TRUE(as.message().empty());
    EXPECT_EQ(as.prefix(), 4U);
    EXPECT_TRUE(as.add(2, std::span(msg).subspan(2, 7)));  // overlaps both
    ASSERT_EQ(as.message().size(), 12U);
    EXPECT_EQ(as.rangeCount, 1);
    EXPECT_FALSE(as.add(64, std::span(msg)));  // beyond the buffer
    EXPECT_TRUE(as.add(60, std::span(msg)));   // clipped
    // too many disjoint ranges: refused, nothing written
    CryptoAssembly<64> many{};
    for (int i = 0; i < 8; ++i)
        EXPECT_TRUE(many.add(std::size_t(i) * 4 + 1, std::span(msg).subspan(0, 1)));
    EXPECT_FALSE(many.add(50, std::span(msg).subspan(0, 1)));
}

TEST(QuicRecord, Quic29CaptureFromNdpiParsesItsClientHelloAndRetry) {
    const auto pcap = testdataDir() / "ndpi-4.2" / "pcap" / "quic-29.pcap";
    const auto pkts = udpPayloads(pcap);
    if (pkts.empty()) GTEST_SKIP() << pcap << " not available";
    QuicRecord rec{};
    initRecord(rec);
    std::array<std::uint32_t, 2> counts{};
    const std::uint16_t client = pkts[0].sport;
    bool fresh = true;
    for (const auto& d : pkts) {
        ++counts[d.sport == client ? 0 : 1];
        QuicPacket p{.payload = d.payload,
                     .srcPort = d.sport,
                     .dstPort = d.dport,
                     .flowSrcPort = client,
                     .flowPackets = counts};
        applyQuicPacket(p, rec, fresh);
        fresh = false;
    }
    EXPECT_STREQ(rec.sni, "localhost");
    EXPECT_STREQ(rec.alpn, "h3-29");
    EXPECT_EQ(rec.chParsed, 1);
    EXPECT_EQ(rec.retryCount, 1);
    EXPECT_EQ(rec.multiplexed, 0) << "the ClientHello after the Retry is the same connection";
    EXPECT_NE(rec.tokenLength, kNoToken);
}

}  // namespace
