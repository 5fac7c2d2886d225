#include "rowprobe/community_id.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace rowprobe {

namespace {

constexpr std::uint8_t kIcmp = 1;
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kUdp = 17;
constexpr std::uint8_t kIcmpv6 = 58;
constexpr std::uint8_t kSctp = 132;

/// The counterpart of an ICMP request/reply type, or -1 when the type is one-way.
int icmpCounterpart(std::uint8_t proto, std::uint16_t type) noexcept {
    if (proto == kIcmp) {
        switch (type) {
            case 8:
                return 0;  // echo request / reply
            case 0:
                return 8;
            case 13:
                return 14;  // timestamp
            case 14:
                return 13;
            case 15:
                return 16;  // information
            case 16:
                return 15;
            case 10:
                return 9;  // router solicitation / advertisement
            case 9:
                return 10;
            case 17:
                return 18;  // address mask
            case 18:
                return 17;
            default:
                return -1;
        }
    }
    switch (type) {
        case 128:
            return 129;  // echo request / reply
        case 129:
            return 128;
        case 130:
            return 131;  // multicast listener query / report
        case 131:
            return 130;
        case 133:
            return 134;  // router solicitation / advertisement
        case 134:
            return 133;
        case 135:
            return 136;  // neighbor solicitation / advertisement
        case 136:
            return 135;
        case 139:
            return 140;  // node information query / response
        case 140:
            return 139;
        case 144:
            return 145;  // home agent address discovery request / reply
        case 145:
            return 144;
        default:
            return -1;
    }
}

char* base64(char* out, const std::uint8_t* in, std::size_t n) noexcept {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const std::uint32_t v =
            (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8) | in[i + 2];
        *out++ = kAlphabet[(v >> 18) & 63];
        *out++ = kAlphabet[(v >> 12) & 63];
        *out++ = kAlphabet[(v >> 6) & 63];
        *out++ = kAlphabet[v & 63];
    }
    if (n - i == 1) {
        const std::uint32_t v = std::uint32_t{in[i]} << 16;
        *out++ = kAlphabet[(v >> 18) & 63];
        *out++ = kAlphabet[(v >> 12) & 63];
        *out++ = '=';
        *out++ = '=';
    } else if (n - i == 2) {
        const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8);
        *out++ = kAlphabet[(v >> 18) & 63];
        *out++ = kAlphabet[(v >> 12) & 63];
        *out++ = kAlphabet[(v >> 6) & 63];
        *out++ = '=';
    }
    return out;
}

std::uint8_t* putBe16(std::uint8_t* p, std::uint16_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
    return p + 2;
}

}  // namespace

char* communityId(char* out, const CommunityIdTuple& t, std::uint16_t seed) noexcept {
    const std::size_t len = t.srcAddr.size();
    if ((len != 4 && len != 16) || t.dstAddr.size() != len) return out;

    const bool ports = t.proto == kTcp || t.proto == kUdp || t.proto == kSctp || t.proto == kIcmp ||
                       t.proto == kIcmpv6;
    const std::uint8_t* a = t.srcAddr.data();
    const std::uint8_t* b = t.dstAddr.data();
    std::uint16_t pa = t.srcPort;
    std::uint16_t pb = t.dstPort;
    bool oneWay = false;
    if (t.proto == kIcmp || t.proto == kIcmpv6) {
        const int counterpart = icmpCounterpart(t.proto, pa);
        if (counterpart >= 0) {
            pb = static_cast<std::uint16_t>(counterpart);
        } else {
            oneWay = true;  // (type, code) as given
        }
    }
    if (!oneWay) {
        const int cmp = std::memcmp(a, b, len);
        const bool swap = ports ? (cmp > 0 || (cmp == 0 && pa > pb)) : cmp > 0;
        if (swap) {
            std::swap(a, b);
            std::swap(pa, pb);
        }
    }

    std::array<std::uint8_t, 2 + 16 + 16 + 2 + 4> input{};
    std::uint8_t* p = putBe16(input.data(), seed);
    p = std::copy_n(a, len, p);
    p = std::copy_n(b, len, p);
    *p++ = t.proto;
    *p++ = 0;
    if (ports) {
        p = putBe16(p, pa);
        p = putBe16(p, pb);
    }
    std::array<std::uint8_t, SHA_DIGEST_LENGTH> digest{};
    SHA1(input.data(), static_cast<std::size_t>(p - input.data()), digest.data());
    *out++ = '1';
    *out++ = ':';
    return base64(out, digest.data(), digest.size());
}

char* communityId(char* out, const FlowRecord& r, std::uint16_t seed) noexcept {
    const std::size_t offset = r.isIpv4() ? 12 : 0;
    CommunityIdTuple t;
    t.srcAddr = std::span<const std::uint8_t>(r.srcAddr).subspan(offset);
    t.dstAddr = std::span<const std::uint8_t>(r.dstAddr).subspan(offset);
    t.proto = r.proto;
    if (r.proto == kIcmp || r.proto == kIcmpv6) {
        t.srcPort = static_cast<std::uint16_t>(r.icmpTypeCode[kForward] >> 8);
        t.dstPort = static_cast<std::uint16_t>(r.icmpTypeCode[kForward] & 0xFF);
    } else {
        t.srcPort = r.srcPort;
        t.dstPort = r.dstPort;
    }
    return communityId(out, t, seed);
}

std::string communityId(const CommunityIdTuple& tuple, std::uint16_t seed) {
    std::string s(kCommunityIdLength, '\0');
    s.resize(static_cast<std::size_t>(communityId(s.data(), tuple, seed) - s.data()));
    return s;
}

std::string communityId(const FlowRecord& record, std::uint16_t seed) {
    std::string s(kCommunityIdLength, '\0');
    s.resize(static_cast<std::size_t>(communityId(s.data(), record, seed) - s.data()));
    return s;
}

}  // namespace rowprobe
