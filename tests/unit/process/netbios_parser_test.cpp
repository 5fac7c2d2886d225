// NBNS first-name decoding: the half-ASCII encoding, the suffix, names cut at NUL, packets
// without a question or with a short name; truncated and hostile input.
#include "process/netbios/netbios_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "l7_test_bytes.hpp"

namespace {

using rowprobe::netbios::NbnsName;
using rowprobe::netbios::parseNbnsName;

/// An NBNS query for the 16-byte NetBIOS name `name16` (RFC 1001 first-level encoding).
std::vector<std::uint8_t> query(const std::string& name16, std::uint16_t questions = 1) {
    std::vector<std::uint8_t> p = {
        0x12, 0x34, 0x01, 0x10, 0, static_cast<std::uint8_t>(questions), 0, 0, 0, 0, 0, 0, 32};
    for (const char c : name16) {
        const auto u = static_cast<std::uint8_t>(c);
        p.push_back(static_cast<std::uint8_t>('A' + (u >> 4)));
        p.push_back(static_cast<std::uint8_t>('A' + (u & 15)));
    }
    p.insert(p.end(), {0, 0, 0x20, 0, 1});  // root label, type NB, class IN
    return p;
}

}  // namespace

TEST(NetbiosParser, DecodesNameAndSuffix) {
    NbnsName n;
    ASSERT_TRUE(parseNbnsName(query(std::string("TISKARNA       ") + '\x20'), n));
    EXPECT_EQ(n.text(), "TISKARNA       ");
    EXPECT_EQ(n.suffix, 0x20);
    // The master-browser name has control bytes and suffix 0x01; they are kept.
    ASSERT_TRUE(parseNbnsName(query(std::string("\x01\x02__MSBROWSE__\x02") + '\x01'), n));
    EXPECT_EQ(n.text(), "\x01\x02__MSBROWSE__\x02");
    EXPECT_EQ(n.suffix, 0x01);
}

TEST(NetbiosParser, NameEndsAtNul) {
    NbnsName n;
    ASSERT_TRUE(parseNbnsName(query(std::string("AB\0CDEFGHIJKLMN", 15) + '\x00'), n));
    EXPECT_EQ(n.text(), "AB");
    EXPECT_EQ(n.suffix, 0);
}

TEST(NetbiosParser, RejectsPacketsWithoutAName) {
    NbnsName n;
    EXPECT_FALSE(parseNbnsName(query("WORKSTATION0000\x00", 0), n));  // no question
    auto p = query("WORKSTATION0000\x00");
    p[12] = 31;  // not a 32-byte encoded name
    EXPECT_FALSE(parseNbnsName(p, n));
    EXPECT_FALSE(parseNbnsName({}, n));
}

TEST(NetbiosParser, TruncatedAndHostileInput) {
    const auto q = query("WORKSTATION0000\x00");
    rowprobe::test::forEachPrefix(q, [&](std::span<const std::uint8_t> p) {
        NbnsName n;
        EXPECT_EQ(parseNbnsName(p, n), p.size() >= 12 + 1 + 32);
    });
    rowprobe::test::forEachMutation(q, 5000, [](std::span<const std::uint8_t> p) {
        NbnsName n;
        if (parseNbnsName(p, n)) {
            EXPECT_LE(n.nameLen, 15);
        }
    });
}
