// rowprobe/byte_order.hpp: network-order loads and stores, checked against the byte sequences
// RFC 791/IPFIX specify (most significant byte first) and against the C library's htons/htonl,
// at compile time and at unaligned addresses.
#include "rowprobe/byte_order.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace rowprobe {
namespace {

constexpr std::array<std::uint8_t, 8> kBytes = {0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF};

static_assert(loadBe16(kBytes.data()) == 0x0123);
static_assert(loadBe32(kBytes.data()) == 0x01234567);
static_assert(loadBe64(kBytes.data()) == 0x0123456789ABCDEFULL);
static_assert([] {
    std::array<std::uint8_t, 8> b{};
    storeBe64(b.data(), 0x0123456789ABCDEFULL);
    return b == kBytes;
}());

TEST(ByteOrder, StoresMostSignificantByteFirstAtAnyAlignment) {
    std::array<std::uint8_t, 16> buf{};
    for (std::size_t at = 0; at < 8; ++at) {
        buf.fill(0);
        storeBe16(buf.data() + at, 0xBEEF);
        EXPECT_EQ(buf[at], 0xBE);
        EXPECT_EQ(buf[at + 1], 0xEF);
        storeBe32(buf.data() + at, 0xDEADBEEF);
        EXPECT_EQ(std::memcmp(buf.data() + at, "\xDE\xAD\xBE\xEF", 4), 0);
        storeBe64(buf.data() + at, 0x0123456789ABCDEFULL);
        EXPECT_EQ(std::memcmp(buf.data() + at, kBytes.data(), 8), 0);
        EXPECT_EQ(buf[at + 8], 0) << "wrote past the 8 bytes";
    }
}

TEST(ByteOrder, AgreesWithHtonsAndHtonl) {
    for (std::uint32_t v : {0U, 1U, 0x80U, 0xFFFFU, 0x12345678U, 0xFFFFFFFFU}) {
        std::array<std::uint8_t, 4> ours{};
        storeBe32(ours.data(), v);
        const std::uint32_t net = htonl(v);
        EXPECT_EQ(std::memcmp(ours.data(), &net, 4), 0) << v;
        EXPECT_EQ(loadBe32(ours.data()), v);
        const auto v16 = static_cast<std::uint16_t>(v);
        storeBe16(ours.data(), v16);
        const std::uint16_t net16 = htons(v16);
        EXPECT_EQ(std::memcmp(ours.data(), &net16, 2), 0) << v16;
        EXPECT_EQ(loadBe16(ours.data()), v16);
    }
}

TEST(ByteOrder, RoundTrips64) {
    std::array<std::uint8_t, 9> buf{};
    for (std::uint64_t v :
         {0ULL, 1ULL, 0x8000000000000000ULL, 0xFFFFFFFFFFFFFFFFULL, 0x00000001FFFFFFFFULL}) {
        storeBe64(buf.data() + 1, v);
        EXPECT_EQ(loadBe64(buf.data() + 1), v);
    }
}

}  // namespace
}  // namespace rowprobe
