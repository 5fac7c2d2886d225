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
#include "process/common/quic/gquic.hpp"
#include "process/common/quic/quic_initial.hpp"
#include "process/quic/quic_record.hpp"
#include "quic_protect.hpp"
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

// RFC 9001 A.2: the whole protected client Initial (1200 bytes) decrypts to the RFC's CRYPTO
// frame followed by PADDING up to 1162 bytes, packet number 2.
const char* const kRfc9001A2Packet =
    "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11d242b123dc9bd8bab936b47d"
    "92ec356c0bab7df5976d27cd449f63300099f3991c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad"
    "67500cadb8e7378c8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df621230c83711"
    "b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5457afd84d05dfffdb20392844ae81215"
    "4682e9cf012f9021a6f0be17ddd0c2084dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948"
    "838a3aec4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3485e8a94dc250ae3"
    "fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db059ae0648db2f64264ed5e39be2e20d82df566da"
    "8dd5998ccabdae053060ae6c7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8"
    "9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556be52afe3f565636ad1b17d50"
    "8b73d8743eeb524be22b3dcbc2c7468d54119c7468449a13d8e3b95811a198f3491de3e7fe942b330407abf8"
    "2a4ed7c1b311663ac69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00f064c99e"
    "3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632291d6a418211cc2962e20fe47feb3edf"
    "330f2c603a9d48c0fcb5699dbfe5896425c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2"
    "c25e50fd14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ffef132eef2fa09346"
    "aee33c28eb130ff28f5b766953334113211996d20011a198e3fc433f9f2541010ae17c1bf202580f6047472f"
    "b36857fe843b19f5984009ddc324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73"
    "203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77fcb2c0e0eb605cb0504db8763"
    "2cf3d8b4dae6e705769d1de354270123cb11450efc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d06"
    "9fc33bd801b03adea2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e72404790a21810"
    "14f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2162f40a29f0c3c8745c0f50fba3852e5"
    "66d44575c29d39a03f0cda721984b6f440591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b6"
    "5bfc5ca06948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e8f2e6ff5800175f1"
    "13253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8"
    "078cdfcb3868263ff8f0940054da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab"
    "760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9f96f3ca9ec1dde434da7d2d3"
    "92b905ddf3d1f9af93d1af5950bd493f5aa731b4056df31bd267b6b90a079831aaf579be0a39013137aac6d4"
    "04f518cfd46840647e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241e221af44"
    "860018ab0856972e194cd934";
const char* const kRfc9001A2Crypto =
    "060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c0000"
    "0413011302010000c000000010000e00000b6578616d706c652e636f6dff01000100000a00080006001d0017"
    "001800100007000504616c706e000500050100000000003300260024001d00209370b2c9caa47fbabaf4559f"
    "edba753de171fa71f50f1ce15d43e994ec74d748002b0003020304000d0010000e0403050306030203080408"
    "050806002d00020101001c00024001003900320408ffffffffffffffff05048000ffff07048000ffff080110"
    "0104800075300901100f088394c8f03e51570806048000ffff";

TEST(QuicInitial, Rfc9001AppendixA2WholeClientInitialDecrypts) {
    const Bytes d = unhex(kRfc9001A2Packet);
    ASSERT_EQ(d.size(), 1200U);
    LongHeader h;
    ASSERT_TRUE(parseLongHeader(d, 0, h));
    EXPECT_EQ(h.type, PacketType::Initial);
    EXPECT_EQ(h.end, d.size());
    InitialKeys k;
    ASSERT_TRUE(deriveClientInitialKeys(info(1), h.dcid, k));
    Bytes out(2048);
    std::uint64_t pn = 0;
    const std::size_t n = decryptInitial(d, h, k, out, &pn);
    ASSERT_EQ(n, 1162U);
    EXPECT_EQ(pn, 2U);
    const Bytes crypto = unhex(kRfc9001A2Crypto);
    ASSERT_EQ(crypto.size(), 245U);
    EXPECT_EQ(hex(out, crypto.size()), kRfc9001A2Crypto);
    for (std::size_t i = crypto.size(); i < n; ++i) ASSERT_EQ(out[i], 0) << i;
    // the CRYPTO frame walk finds the 241-byte ClientHello at offset 0 and parses it
    std::size_t frames = 0;
    ASSERT_TRUE(forEachCryptoFrame(std::span<const std::uint8_t>(out.data(), n),
                                   [&](std::uint64_t off, std::span<const std::uint8_t> b) {
                                       EXPECT_EQ(off, 0U);
                                       EXPECT_EQ(b.size(), 241U);
                                       ++frames;
                                   }));
    EXPECT_EQ(frames, 1U);
    // one flipped bit anywhere in the protected payload fails the tag
    Bytes bad = d;
    bad[600] ^= 0x10;
    EXPECT_EQ(decryptInitial(bad, h, k, out), 0U);
    // and as the first packet of a flow, the record gets the RFC's server name
    QuicRecord rec;
    initRecord(rec);
    QuicPacket p{.payload = d, .srcPort = 50000, .dstPort = 443, .flowSrcPort = 50000};
    p.flowPackets = {1, 0};
    EXPECT_EQ(applyQuicPacket(p, rec, true), QuicUpdate::Quic);
    EXPECT_STREQ(rec.sni, "example.com");
    EXPECT_STREQ(rec.alpn, "alpn");
    EXPECT_EQ(rec.chParsed, 1);
}

// RFC 9001 A.3: the server's Initial (2-byte packet number 1, ACK + CRYPTO with the
// ServerHello) decrypts with the server keys of the client's first DCID.
TEST(QuicInitial, Rfc9001AppendixA3ServerInitialDecrypts) {
    const Bytes d = unhex(
        "cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a5816b6394100f37a1c697975"
        "54780bb38cc5a99f5ede4cf73c3ec2493a1839b3dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bde"
        "d74b562bfb19fb84022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc42158407d"
        "d074ee");
    ASSERT_EQ(d.size(), 135U);
    LongHeader h;
    ASSERT_TRUE(parseLongHeader(d, 0, h));
    EXPECT_EQ(h.type, PacketType::Initial);
    EXPECT_EQ(hex(h.scid, h.scid.size()), "f067a5502a4262b5");
    InitialKeys k;
    std::array<std::uint8_t, 32> secret{};
    ASSERT_TRUE(deriveServerInitialKeys(info(1), unhex("8394c8f03e515708"), k, secret.data()));
    EXPECT_EQ(hex(secret, 32), "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b");
    EXPECT_EQ(hex(k.key, 16), "cf3a5331653c364c88f0f379b6067e37");
    EXPECT_EQ(hex(k.iv, 12), "0ac1493ca1905853b0bba03e");
    EXPECT_EQ(hex(k.hp, 16), "c206b8d9b9f0f37644430b490eeaa314");
    Bytes out(256);
    std::uint64_t pn = 0;
    const std::size_t n = decryptInitial(d, h, k, out, &pn);
    ASSERT_EQ(n, 99U);
    EXPECT_EQ(pn, 1U);
    EXPECT_EQ(
        hex(out, n),
        "02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf73988cfc79825df566dc5430b9a"
        "045a1200130100002e00330024001d00209d3c940d89690b84d08a60993c144eca684d1081287c834d5311bc"
        "f32bb9da1a002b00020304");
    // the client's keys do not open it
    InitialKeys client;
    ASSERT_TRUE(deriveClientInitialKeys(info(1), unhex("8394c8f03e515708"), client));
    EXPECT_EQ(decryptInitial(d, h, client, out), 0U);
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
// `keysOf`: the version whose salt and labels key the packet (a forced-negotiation version has
// none of its own).
Bytes protect(std::uint32_t version, const Bytes& dcid, const Bytes& scid, std::uint32_t pn,
              Bytes frames, std::uint32_t keysOf = 0) {
    if (frames.size() < 1100) frames.resize(1100, 0);  // PADDING
    InitialKeys k;
    EXPECT_TRUE(deriveClientInitialKeys(info(keysOf != 0 ? keysOf : version), dcid, k));
    return rowprobe::test::protectClientInitial(k, 0xc3, version, dcid, scid, pn, frames);
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

// ---- Google QUIC ------------------------------------------------------------------------------

// Appends bytes one by one (GCC 12's -Warray-bounds misfires on inserting into a vector built
// from an initializer list).
void append(Bytes& p, std::initializer_list<std::size_t> bytes) {
    for (const std::size_t b : bytes) p.push_back(static_cast<std::uint8_t>(b));
}
void append(Bytes& p, std::span<const std::uint8_t> bytes) {
    for (const std::uint8_t b : bytes) p.push_back(b);
}

// A CHLO message: tag count, padding, (tag, end offset) table, values (gQUIC's QUIC crypto).
Bytes chlo(const std::vector<std::pair<std::string, std::string>>& tags) {
    Bytes m;
    append(m, {'C', 'H', 'L', 'O', tags.size(), 0, 0, 0});
    std::uint32_t end = 0;
    for (const auto& [tag, value] : tags) {
        m.insert(m.end(), tag.begin(), tag.end());
        end += static_cast<std::uint32_t>(value.size());
        for (int i = 0; i < 4; ++i) m.push_back(static_cast<std::uint8_t>(end >> (8 * i)));
    }
    for (const auto& kv : tags) m.insert(m.end(), kv.second.begin(), kv.second.end());
    return m;
}

const Bytes kGquicCid = {0x8a, 0x2b, 0x5b, 0xa4, 0x2c, 0x01, 0x02, 0x03};

Bytes sampleChlo() {
    return chlo({{std::string("PAD\0", 4), std::string(400, '-')},
                 {std::string("SNI\0", 4), "www.example.org"},
                 {std::string("VER\0", 4), "Q043"},
                 {"UAID", "Chrome/70.0.3538.110 Linux x86_64"}});
}

// A client packet of a public-header version (Q024..Q043): flags 0x0d (version, 8-byte
// connection id, 1-byte packet number), id, version, packet number, 12-byte hash, a private
// flags byte up to Q033, then one STREAM frame of stream 1 with `data` at `offset`, padded.
Bytes gquicPublic(const char* version, const Bytes& data, std::uint16_t offset = 0,
                  const Bytes& cid = kGquicCid) {
    const bool be = std::strcmp(version, "Q039") >= 0;
    Bytes p;
    p.push_back(0x0d);
    append(p, cid);
    append(p, std::span(reinterpret_cast<const std::uint8_t*>(version), 4));
    p.push_back(1);                                         // packet number
    p.insert(p.end(), 12, 0x5a);                            // message hash
    if (std::strcmp(version, "Q033") <= 0) p.push_back(0);  // private flags
    p.push_back(offset == 0 ? 0xa0 : 0xa4);  // STREAM, data length, offset 0 or 2 bytes
    p.push_back(1);                          // stream 1
    const auto u16 = [&](std::uint16_t v) {
        p.push_back(static_cast<std::uint8_t>(be ? v >> 8 : v & 0xff));
        p.push_back(static_cast<std::uint8_t>(be ? v & 0xff : v >> 8));
    };
    if (offset != 0) u16(offset);
    u16(static_cast<std::uint16_t>(data.size()));
    p.insert(p.end(), data.begin(), data.end());
    if (p.size() < 1350) p.resize(1350, 0);  // PADDING
    return p;
}

// A Q046 client packet: IETF-style long header 0xc3 (Initial, 4-byte packet number), one byte
// of id lengths (0x50: 8-byte destination, no source), hash, STREAM frame as above.
Bytes gquicQ046(const Bytes& data, std::uint16_t offset) {
    Bytes p;
    append(p, {0xc3, 'Q', '0', '4', '6', 0x50});
    append(p, kGquicCid);
    append(p, {0, 0, 0, 1});
    p.insert(p.end(), 12, 0x5a);
    append(p, {0xa4, 1, std::size_t{offset} >> 8, std::size_t{offset} & 0xff, data.size() >> 8,
               data.size() & 0xff});
    append(p, data);
    if (p.size() < 1350) p.resize(1350, 0);
    return p;
}

TEST(Gquic, ChloTagsAreReadInOrderAndStopAtABadOffset) {
    const Bytes m = sampleChlo();
    EXPECT_EQ(chloLength(m), m.size());
    Chlo c;
    ASSERT_TRUE(parseChlo(m, c));
    EXPECT_EQ(c.sni, "www.example.org");
    EXPECT_EQ(c.userAgent, "Chrome/70.0.3538.110 Linux x86_64");
    EXPECT_EQ(c.version, 0x51303433U);
    // cut anywhere: the length is known once the table is there, and nothing reads past
    for (std::size_t n = 0; n < m.size(); ++n) {
        const Bytes cut(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
        const std::size_t len = chloLength(cut);
        EXPECT_TRUE(len == 0 || len == m.size()) << n;
        Chlo part;
        parseChlo(cut, part);
        EXPECT_LE(part.sni.size() + part.userAgent.size(), n);
    }
    // an end offset that goes backwards ends the walk (nDPI does the same)
    Bytes bad = m;
    bad[8 + 8 + 4] = 0;  // SNI's end offset -> 0 (< PAD's 400)
    bad[8 + 8 + 5] = 0;
    ASSERT_TRUE(parseChlo(bad, c));
    EXPECT_TRUE(c.sni.empty());
    EXPECT_TRUE(c.userAgent.empty());
    // not a CHLO
    const Bytes rej = {'R', 'E', 'J', 0, 0, 0, 0, 0};
    EXPECT_FALSE(parseChlo(rej, c));
    EXPECT_EQ(chloLength(rej), 0U);
}

TEST(Gquic, PublicHeaderAndQ046HeaderAreParsed) {
    GquicHeader h;
    const Bytes q43 = gquicPublic("Q043", sampleChlo());
    ASSERT_TRUE(parseGquicHeader(q43, h));
    EXPECT_EQ(h.version, 0x51303433U);
    EXPECT_EQ(hex(h.dcid, h.dcid.size()), hex(kGquicCid, 8));
    EXPECT_EQ(h.frames, 1U + 8 + 4 + 1 + 12);
    EXPECT_FALSE(h.longHeader);
    const Bytes q30 = gquicPublic("Q030", sampleChlo());
    ASSERT_TRUE(parseGquicHeader(q30, h));
    EXPECT_EQ(h.frames, 1U + 8 + 4 + 1 + 12 + 1) << "private flags up to Q033";
    const Bytes q46 = gquicQ046(sampleChlo(), 0);
    ASSERT_TRUE(parseGquicHeader(q46, h));
    EXPECT_TRUE(h.longHeader);
    EXPECT_TRUE(h.initial);
    EXPECT_EQ(h.frames, 6U + 8 + 4 + 12);
    // not gQUIC: no version flag, a reset, no connection id, IETF or unknown versions
    Bytes x = q43;
    x[0] = 0x0c;
    EXPECT_FALSE(parseGquicHeader(x, h));
    x[0] = 0x0f;
    EXPECT_FALSE(parseGquicHeader(x, h));
    x[0] = 0x05;
    EXPECT_FALSE(parseGquicHeader(x, h));
    x = q43;
    x[12] = '7';  // "Q047": no cleartext CHLO
    x[11] = '4';
    EXPECT_FALSE(parseGquicHeader(x, h));
    x = q46;
    x[1] = 0;
    x[2] = 0;
    x[3] = 0;
    x[4] = 1;
    EXPECT_FALSE(parseGquicHeader(x, h)) << "v1 is not gQUIC";
    EXPECT_FALSE(isGquicCleartextVersion(0x51303530U)) << "Q050 encrypts its CHLO";
    EXPECT_TRUE(isGquicCleartextVersion(0x51303234U));
}

QuicRecord applyAll(const std::vector<Bytes>& datagrams) {
    QuicRecord rec;
    initRecord(rec);
    std::uint32_t n = 0;
    for (const Bytes& d : datagrams) {
        ++n;
        EXPECT_NE(applyQuicPacket(clientPacket(d, n), rec, n == 1), QuicUpdate::NotQuic);
    }
    return rec;
}

TEST(Gquic, CleartextChloOfEveryHeaderStyleFillsTheRecord) {
    for (const char* v : {"Q024", "Q030", "Q035", "Q039", "Q043"}) {
        const QuicRecord rec = applyAll({gquicPublic(v, sampleChlo())});
        EXPECT_STREQ(rec.sni, "www.example.org") << v;
        EXPECT_STREQ(rec.userAgent, "Chrome/70.0.3538.110 Linux x86_64") << v;
        EXPECT_EQ(rec.chParsed, 1) << v;
        EXPECT_EQ(rec.version, std::uint32_t(v[0]) << 24 | std::uint32_t(v[1]) << 16 |
                                   std::uint32_t(v[2]) << 8 | std::uint32_t(v[3]));
        EXPECT_EQ(rec.clientVersion, rec.version);
        EXPECT_EQ(rec.serverPort, 443);
        EXPECT_EQ(hex(rec.oscid.bytes, rec.oscid.len), hex(kGquicCid, 8));
        EXPECT_EQ(rec.packetTypes[0], kPktInitial);
        EXPECT_EQ(rec.extCount, 0) << "a CHLO has no TLS extensions";
        EXPECT_EQ(rec.ja4Len, 0);
        EXPECT_STREQ(rec.alpn, "");
    }
    // Q046: a CHLO sent again after the server's REJ starts at stream offset 1024
    const QuicRecord q46 = applyAll({gquicQ046(sampleChlo(), 1024)});
    EXPECT_STREQ(q46.sni, "www.example.org");
    EXPECT_EQ(q46.version, 0x51303436U);
    EXPECT_EQ(q46.packetTypes[0], kPktQuicBit | kPktInitial);
}

TEST(Gquic, ChloSplitOverTwoPacketsIsReassembledAndAnotherConnectionIsMultiplexing) {
    Bytes big = chlo({{std::string("PAD\0", 4), std::string(1500, '-')},
                      {std::string("SNI\0", 4), "split.example.org"},
                      {"UAID", "Chrome/60"}});
    const std::size_t cut = 1000;
    const Bytes first(big.begin(), big.begin() + cut);
    const Bytes second(big.begin() + cut, big.end());
    QuicRecord rec = applyAll({gquicPublic("Q043", first), gquicPublic("Q043", second, cut)});
    EXPECT_STREQ(rec.sni, "split.example.org");
    EXPECT_STREQ(rec.userAgent, "Chrome/60");
    EXPECT_EQ(rec.multiplexed, 0);
    // the second half alone is nothing
    const QuicRecord half = applyAll({gquicPublic("Q043", second, cut)});
    EXPECT_EQ(half.chParsed, 0);
    EXPECT_STREQ(half.sni, "");
    // the same CHLO again: a repeat; another connection id and server name: multiplexed
    const Bytes other = chlo({{std::string("SNI\0", 4), "other.example.org"}});
    const Bytes otherCid = {9, 9, 9, 9, 9, 9, 9, 9};
    rec = applyAll({gquicPublic("Q043", sampleChlo()), gquicPublic("Q043", sampleChlo()),
                    gquicPublic("Q043", other, 0, otherCid)});
    EXPECT_STREQ(rec.sni, "www.example.org");
    EXPECT_EQ(rec.multiplexed, 1);
}

TEST(Gquic, TruncatedAndMutatedCleartextPacketsNeverCrash) {
    const Bytes whole = gquicPublic("Q043", sampleChlo());
    for (std::size_t n = 0; n <= whole.size(); n += (n < 600 ? 1 : 37)) {
        const Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
        QuicRecord rec;
        initRecord(rec);
        applyQuicPacket(clientPacket(cut, 1), rec, true);
        // header 26 bytes, STREAM frame header 4, then the CHLO
        const bool complete = n >= 26 + 4 + sampleChlo().size();
        EXPECT_EQ(rec.chParsed, complete ? 1 : 0) << n;
    }
    std::mt19937 rng(22);
    for (int i = 0; i < 3000; ++i) {
        Bytes m = i % 2 == 0 ? whole : gquicQ046(sampleChlo(), 0);
        const int flips = 1 + static_cast<int>(rng() % 6);
        for (int f = 0; f < flips; ++f) m[rng() % 120] = static_cast<std::uint8_t>(rng());
        m.resize(rng() % (m.size() + 1));
        QuicRecord rec;
        initRecord(rec);
        applyQuicPacket(clientPacket(m, 1), rec, true);
        ASSERT_NE(std::memchr(rec.sni, 0, sizeof rec.sni), nullptr);
        ASSERT_NE(std::memchr(rec.userAgent, 0, sizeof rec.userAgent), nullptr);
    }
}

// Q050: IETF-style Initial under Google's Q050 salt, whose CRYPTO frame (type 0x08) carries a
// CHLO; T050: the same around a TLS ClientHello.
Bytes googleCryptoFrame(const Bytes& data) {
    Bytes f;
    append(f, {0x08, 0x00, 0x40 | data.size() >> 8, data.size() & 0xff});
    append(f, data);
    return f;
}

TEST(Gquic, Q050EncryptedChloAndT050ClientHelloAreDecrypted) {
    const Bytes dcid = {1, 2, 3, 4, 5, 6, 7, 8};
    const QuicRecord q50 =
        applyAll({protect(0x51303530U, dcid, {}, 1, googleCryptoFrame(sampleChlo()))});
    EXPECT_STREQ(q50.sni, "www.example.org");
    EXPECT_STREQ(q50.userAgent, "Chrome/70.0.3538.110 Linux x86_64");
    EXPECT_EQ(q50.version, 0x51303530U);
    EXPECT_EQ(q50.chParsed, 1);
    // keyed with another version's salt: the tag fails, nothing is parsed
    const QuicRecord wrong =
        applyAll({protect(0x51303530U, dcid, {}, 1, googleCryptoFrame(sampleChlo()), 0x54303530U)});
    EXPECT_EQ(wrong.chParsed, 0);
    const Bytes ch = sampleClientHello();
    if (ch.empty()) GTEST_SKIP() << samplePcap() << " not available";
    const QuicRecord t50 = applyAll({protect(0x54303530U, dcid, {}, 1, googleCryptoFrame(ch))});
    EXPECT_EQ(t50.chParsed, 1);
    EXPECT_STRNE(t50.sni, "");
    EXPECT_NE(t50.extCount, 0);
}

TEST(QuicRecord, ForcedNegotiationVersionsTryDraft29sSaltAndV2Draft00KeepsV1Types) {
    const Bytes ch = sampleClientHello();
    if (ch.empty()) GTEST_SKIP() << samplePcap() << " not available";
    const Bytes dcid = {1, 2, 3, 4, 5, 6, 7, 8};
    // 0x?a?a?a?a keyed as draft-29 (quic-interop-runner's "V" test) or as v1
    for (const std::uint32_t keys : {0xff00001dU, 1U}) {
        const QuicRecord rec =
            applyAll({protect(0x1a2a3a4aU, dcid, {}, 0, cryptoFrame(0, ch, 0, ch.size()), keys)});
        EXPECT_EQ(rec.chParsed, 1) << std::hex << keys;
        EXPECT_STRNE(rec.sni, "");
    }
    // draft-ietf-quic-v2-00 (0xff020000): "quicv2" labels, v1 packet types (0xc3 = Initial)
    VersionInfo v;
    ASSERT_TRUE(versionInfo(0xff020000U, v));
    EXPECT_TRUE(v.v2);
    EXPECT_FALSE(v.rotatedTypes);
    EXPECT_TRUE(info(0x709a50c4U).rotatedTypes);
    const QuicRecord rec =
        applyAll({protect(0xff020000U, dcid, {}, 0, cryptoFrame(0, ch, 0, ch.size()))});
    EXPECT_EQ(rec.chParsed, 1);
    EXPECT_EQ(rec.packetTypes[0], kPktQuicBit | kPktInitial);
}

}  // namespace
