// TLS hello parser, fingerprints and digests on hand-made and truncated input.
#include "process/common/tls/tls_parser.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "process/common/tls/digest.hpp"

namespace {

using rowprobe::tls::Hello;
using rowprobe::tls::HelloType;
using rowprobe::tls::Ja4Mode;
using Bytes = std::vector<std::uint8_t>;

template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& d) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (const auto b : d) {
        s += kHex[b >> 4];
        s += kHex[b & 15];
    }
    return s;
}

void put16(Bytes& b, unsigned v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}

struct Ext {
    unsigned type;
    Bytes data;
};

Ext ext(unsigned type, Bytes data) { return {type, std::move(data)}; }

Bytes u16list(std::initializer_list<unsigned> values, int prefix = 2) {
    Bytes b;
    const unsigned len = static_cast<unsigned>(values.size() * 2);
    if (prefix == 2) put16(b, len);
    if (prefix == 1) b.push_back(static_cast<std::uint8_t>(len));
    for (const auto v : values) put16(b, v);
    return b;
}

Bytes sni(std::string_view name) {
    Bytes b;
    put16(b, static_cast<unsigned>(name.size() + 3));
    b.push_back(0);
    put16(b, static_cast<unsigned>(name.size()));
    b.insert(b.end(), name.begin(), name.end());
    return b;
}

Bytes alpn(std::initializer_list<std::string_view> protos) {
    Bytes list;
    for (const auto p : protos) {
        list.push_back(static_cast<std::uint8_t>(p.size()));
        list.insert(list.end(), p.begin(), p.end());
    }
    Bytes b;
    put16(b, static_cast<unsigned>(list.size()));
    b.insert(b.end(), list.begin(), list.end());
    return b;
}

// A TLS record holding one hello. Client: `ciphers` is the offered list; Server: its first
// element is the selected suite.
Bytes hello(int type, unsigned version, std::vector<unsigned> ciphers, const std::vector<Ext>& exts,
            bool withExtensionsBlock = true) {
    Bytes body;
    put16(body, version);
    body.insert(body.end(), 32, 0x11);  // random
    body.push_back(4);                  // session id
    body.insert(body.end(), 4, 0x22);
    if (type == 1) {
        put16(body, static_cast<unsigned>(ciphers.size() * 2));
        for (const auto c : ciphers) put16(body, c);
        body.push_back(1);  // compression methods: null
        body.push_back(0);
    } else {
        put16(body, ciphers.at(0));
        body.push_back(0);
    }
    if (withExtensionsBlock) {
        Bytes block;
        for (const auto& e : exts) {
            put16(block, e.type);
            put16(block, static_cast<unsigned>(e.data.size()));
            block.insert(block.end(), e.data.begin(), e.data.end());
        }
        put16(body, static_cast<unsigned>(block.size()));
        body.insert(body.end(), block.begin(), block.end());
    }
    Bytes hs{static_cast<std::uint8_t>(type), 0, 0, 0};
    hs[2] = static_cast<std::uint8_t>(body.size() >> 8);
    hs[3] = static_cast<std::uint8_t>(body.size());
    hs.insert(hs.end(), body.begin(), body.end());
    Bytes rec{22, 3, 1};
    put16(rec, static_cast<unsigned>(hs.size()));
    rec.insert(rec.end(), hs.begin(), hs.end());
    return rec;
}

// Chrome 110's ClientHello as it appears in ipfixprobe's tls.pcap reference (first record of
// outputs/tls: same extension types and lengths, same lists).
Bytes chromeHello(std::string_view host = "chrek.stdout.cz") {
    return hello(
        1, 0x0303,
        {0x4a4a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013,
         0xc014, 0x009c, 0x009d, 0x002f, 0x0035},
        {ext(0x7a7a, {}), ext(0, sni(host)), ext(23, {}), ext(65281, {0}),
         ext(10, u16list({0x6a6a, 29, 23, 24})), ext(11, {1, 0}), ext(35, {}),
         ext(16, alpn({"h2", "http/1.1"})), ext(5, {1, 0, 0, 0, 0}),
         ext(13, u16list({0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601})),
         ext(18, {}), ext(51, Bytes(43, 0x33)), ext(45, {1, 1}),
         ext(43, u16list({0x2a2a, 0x0304, 0x0303}, 1)), ext(27, {2, 0, 2}),
         ext(17513, {0, 3, 2, 'h', '2'}), ext(0x2a2a, {0}), ext(21, Bytes(200, 0))});
}

std::string ja4Of(const Hello& h, Ja4Mode mode, bool quic = false) {
    std::array<char, rowprobe::tls::kJa4Len> out{};
    const std::size_t n = rowprobe::tls::ja4(h, quic, mode, out);
    return {out.data(), n};
}

}  // namespace

TEST(TlsDigest, Md5MatchesRfc1321Vectors) {
    const auto md5 = [](std::string_view s) {
        rowprobe::tls::Md5 h;
        h.update(s);
        return hex(h.finish());
    };
    EXPECT_EQ(md5(""), "d41d8cd98f00b204e9800998ecf8427e");
    EXPECT_EQ(md5("abc"), "900150983cd24fb0d6963f7d28e17f72");
    EXPECT_EQ(md5("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
    EXPECT_EQ(md5(std::string(1000000, 'a')), "7707d6ae4e027c70eea2a935c2296f21");
}

TEST(TlsDigest, Sha256MatchesFipsVectorsAndIncrementalFeeding) {
    const auto sha = [](std::string_view s) {
        rowprobe::tls::Sha256 h;
        h.update(s);
        return hex(h.finish());
    };
    EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // 768 bytes fed in uneven pieces straddle the 64-byte blocks.
    std::string data;
    for (int r = 0; r < 3; ++r) {
        for (int i = 0; i < 256; ++i) data += static_cast<char>(i);
    }
    rowprobe::tls::Sha256 s;
    rowprobe::tls::Md5 m;
    for (std::size_t off = 0, step = 1; off < data.size(); off += step, step = step * 3 % 97 + 1) {
        const auto piece = std::string_view(data).substr(off, step);
        s.update(piece);
        m.update(piece);
    }
    EXPECT_EQ(hex(s.finish()), "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363");
    EXPECT_EQ(hex(m.finish()), "e6899eaaf06fd702f3ed3f988eb19362");
}

TEST(TlsParser, ChromeClientHelloFields) {
    const Bytes rec = chromeHello();
    Hello h;
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    EXPECT_EQ(h.type, HelloType::Client);
    EXPECT_EQ(h.recordVersion, 0x0301);
    EXPECT_EQ(h.handshakeVersion, 0x0303);
    EXPECT_EQ(h.sni, "chrek.stdout.cz");
    EXPECT_EQ(h.alpn, "h2");
    EXPECT_EQ(h.supportedVersion, 0x0304);
    EXPECT_EQ(h.extensionCount, 18);
    EXPECT_EQ(h.greaseExtensionCount, 2);
    EXPECT_EQ(h.ciphers.size(), 32u);

    std::vector<unsigned> types, lengths;
    rowprobe::tls::forEachExtension(h.extensions, [&](std::uint16_t t, auto data) {
        types.push_back(t);
        lengths.push_back(static_cast<unsigned>(data.size()));
    });
    // outputs/tls, record 1: TLS_EXT_TYPE and TLS_EXT_LEN.
    EXPECT_EQ(types, (std::vector<unsigned>{31354, 0, 23, 65281, 10, 11, 35, 16, 5, 13, 18, 51, 45,
                                            43, 27, 17513, 10794, 21}));
    EXPECT_EQ(lengths,
              (std::vector<unsigned>{0, 20, 0, 1, 10, 2, 0, 14, 5, 18, 0, 43, 2, 7, 3, 5, 1, 200}));
}

TEST(TlsParser, Ja3OfChromeMatchesTheReference) {
    Hello h;
    const Bytes rec = chromeHello();  // the Hello points into it
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    char text[512];
    const std::size_t n = rowprobe::tls::ja3String(h, text);
    EXPECT_EQ(std::string_view(text, n),
              "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-49172-156-157-47-53,"
              "0-23-65281-10-11-35-16-5-13-18-51-45-43-27-17513-21,29-23-24,0");
    EXPECT_EQ(hex(rowprobe::tls::ja3(h)), "cd08e31494f9531f560d64c695473da9");  // outputs/tls
}

TEST(TlsParser, Ja4SpecAndIpfixprobeModes) {
    Hello h;
    const Bytes rec = chromeHello();  // the Hello points into it
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    // FoxIO: GREASE never counted; ipfixprobe counts the two GREASE extensions (outputs/tls).
    EXPECT_EQ(ja4Of(h, Ja4Mode::Spec), "t13d1516h2_8daaf6152771_e5627efa2ab1");
    EXPECT_EQ(ja4Of(h, Ja4Mode::Ipfixprobe), "t13d1518h2_8daaf6152771_e5627efa2ab1");
    EXPECT_EQ(ja4Of(h, Ja4Mode::Spec, true), "q13d1516h2_8daaf6152771_e5627efa2ab1");
}

TEST(TlsParser, Ja4EdgeCasesFollowTheSpec) {
    // No SNI, no ALPN, no signature algorithms, few ciphers, no supported_versions.
    const Bytes rec = hello(1, 0x0303, {0x1301, 0x0a0a, 0xc02b}, {ext(10, u16list({29}))});
    Hello h;
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    const std::string spec = ja4Of(h, Ja4Mode::Spec);
    EXPECT_EQ(spec.substr(0, 11), "t12i020100_");  // zero-padded counts, "00" ALPN
    // Part c without signature algorithms is the hash of the extension list alone ("000a").
    rowprobe::tls::Sha256 c;
    c.update("000a");
    EXPECT_EQ(spec.substr(24), hex(c.finish()).substr(0, 12));
    // ipfixprobe: counts not padded, "_" appended even without signature algorithms.
    const std::string ipx = ja4Of(h, Ja4Mode::Ipfixprobe);
    EXPECT_EQ(ipx.substr(0, 9), "t12i2100_");
    rowprobe::tls::Sha256 c2;
    c2.update("000a_");
    EXPECT_EQ(ipx.substr(ipx.size() - 12), hex(c2.finish()).substr(0, 12));

    // No ciphers and no extensions at all: both hashes are twelve zeros in the spec.
    const Bytes bare = hello(1, 0x0301, {}, {});
    ASSERT_TRUE(rowprobe::tls::parseHello(bare, h));
    EXPECT_EQ(ja4Of(h, Ja4Mode::Spec), "t10i000000_000000000000_000000000000");

    // A non-alphanumeric end: the first and last characters of the value's hex ("ab2d78").
    const Bytes odd = hello(1, 0x0303, {0x1301}, {ext(16, alpn({std::string_view("\xab-x", 3)}))});
    ASSERT_TRUE(rowprobe::tls::parseHello(odd, h));
    EXPECT_EQ(ja4Of(h, Ja4Mode::Spec).substr(8, 2), "a8");
    // ipfixprobe looks at each end alone (and prints hex in upper case).
    EXPECT_EQ(ja4Of(h, Ja4Mode::Ipfixprobe).substr(6, 2), "Ax");
    EXPECT_EQ(ja4Of(h, Ja4Mode::Spec).substr(0, 8), "t12i0101");
}

// Issue 21 item 7: without supported_versions ipfixprobe 5.7 reads the hello's version in host
// (little-endian) byte order, so only 03 03 keeps its label; ja4=ipfixprobe reproduces "t00".
TEST(TlsParser, Ja4IpfixprobeVersionWithoutSupportedVersionsIsByteSwapped) {
    Hello h;
    for (const auto& [version, spec] : std::initializer_list<std::pair<unsigned, const char*>>{
             {0x0302, "t11"}, {0x0301, "t10"}, {0x0300, "ts3"}}) {
        const Bytes rec = hello(1, version, {0x002f, 0x0035}, {ext(0, sni("old.example"))});
        ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
        EXPECT_EQ(ja4Of(h, Ja4Mode::Spec).substr(0, 3), spec) << std::hex << version;
        EXPECT_EQ(ja4Of(h, Ja4Mode::Ipfixprobe).substr(0, 9), "t00d2100_") << std::hex << version;
    }
    const Bytes tls12 = hello(1, 0x0303, {0x002f}, {});
    ASSERT_TRUE(rowprobe::tls::parseHello(tls12, h));
    EXPECT_EQ(ja4Of(h, Ja4Mode::Ipfixprobe).substr(0, 3), "t12");  // 03 03 reads the same
    // With supported_versions the values are converted from network order: 1.1 is "11".
    const Bytes sv = hello(1, 0x0301, {0x002f}, {ext(43, u16list({0x0302}, 1))});
    ASSERT_TRUE(rowprobe::tls::parseHello(sv, h));
    EXPECT_EQ(ja4Of(h, Ja4Mode::Ipfixprobe).substr(0, 3), "t11");
}

TEST(TlsParser, ServerHelloSelectedAlpnVersionCipherAndJa3s) {
    const Bytes rec = hello(2, 0x0303, {0x1301},
                            {ext(43, {0x03, 0x04}), ext(16, alpn({"h2"})), ext(51, Bytes(36, 1))});
    Hello h;
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    EXPECT_EQ(h.type, HelloType::Server);
    EXPECT_EQ(h.cipher, 0x1301);
    EXPECT_EQ(h.supportedVersion, 0x0304);
    EXPECT_EQ(h.alpn, "h2");
    char text[128];
    const std::size_t n = rowprobe::tls::ja3sString(h, text);
    EXPECT_EQ(std::string_view(text, n), "771,4865,43-16-51");
    rowprobe::tls::Md5 m;
    m.update("771,4865,43-16-51");
    EXPECT_EQ(rowprobe::tls::ja3s(h), m.finish());
}

TEST(TlsParser, HelloWithoutExtensionsBlockIsAccepted) {
    Hello h;
    ASSERT_TRUE(rowprobe::tls::parseHello(hello(1, 0x0301, {0x002f}, {}, false), h));
    EXPECT_EQ(h.extensionCount, 0);
    EXPECT_TRUE(h.sni.empty());
}

TEST(TlsParser, RejectsNonHelloRecords) {
    Hello h;
    Bytes rec = chromeHello();
    rec[0] = 23;  // application data
    EXPECT_FALSE(rowprobe::tls::parseHello(rec, h));
    rec = chromeHello();
    rec[5] = 11;  // Certificate handshake
    EXPECT_FALSE(rowprobe::tls::parseHello(rec, h));
    rec = chromeHello();
    rec[1] = 2;  // record version major 2
    EXPECT_FALSE(rowprobe::tls::parseHello(rec, h));
    const Bytes http{'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1'};
    EXPECT_FALSE(rowprobe::tls::parseHello(http, h));
    EXPECT_EQ(h.type, HelloType::None);
}

TEST(TlsParser, EveryTruncationIsRejectedOrPartialNeverOutOfBounds) {
    // Each prefix of the hello: the parser must either fail or describe only bytes inside the
    // prefix (ASan checks the reads; this checks the views).
    const Bytes rec = chromeHello();
    int parsed = 0;
    for (std::size_t len = 0; len <= rec.size(); ++len) {
        const Bytes cut(rec.begin(), rec.begin() + static_cast<std::ptrdiff_t>(len));
        Hello h;
        if (!rowprobe::tls::parseHello(cut, h)) {
            EXPECT_EQ(h.type, HelloType::None);
            continue;
        }
        ++parsed;
        const auto inside = [&](const void* p, std::size_t n) {
            const auto* b = static_cast<const std::uint8_t*>(p);
            return n == 0 || (b >= cut.data() && b + n <= cut.data() + cut.size());
        };
        EXPECT_TRUE(inside(h.extensions.data(), h.extensions.size())) << len;
        EXPECT_TRUE(inside(h.sni.data(), h.sni.size())) << len;
        EXPECT_TRUE(inside(h.alpn.data(), h.alpn.size())) << len;
        std::array<char, rowprobe::tls::kJa4Len> out{};
        (void)rowprobe::tls::ja4(h, false, Ja4Mode::Spec, out);
        (void)rowprobe::tls::ja3(h);
    }
    // Only the complete record parses: the extensions block must fit (as in ipfixprobe).
    EXPECT_EQ(parsed, 1);
}

TEST(TlsParser, ExtensionRunningPastTheBlockStopsTheWalk) {
    Bytes rec = hello(1, 0x0303, {0x1301}, {ext(23, {}), ext(0, sni("a.example"))});
    // Make the SNI extension claim 200 bytes: it no longer fits in the block.
    const std::size_t sniLenAt = rec.size() - sni("a.example").size() - 2;
    rec[sniLenAt] = 0;
    rec[sniLenAt + 1] = 200;
    Hello h;
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    EXPECT_EQ(h.extensionCount, 1);  // only extension 23
    EXPECT_TRUE(h.sni.empty());
    EXPECT_FALSE(h.hasSni);
}

TEST(TlsParser, OversizedListsGiveNoJa4RatherThanAWrongOne) {
    std::vector<unsigned> many;
    for (unsigned i = 0; i < rowprobe::tls::kJa4MaxListLen + 1; ++i) many.push_back(0x0100 + i);
    Hello h;
    const Bytes rec = hello(1, 0x0303, many, {});
    ASSERT_TRUE(rowprobe::tls::parseHello(rec, h));
    std::array<char, rowprobe::tls::kJa4Len> out{};
    EXPECT_EQ(rowprobe::tls::ja4(h, false, Ja4Mode::Spec, out), 0u);
}
