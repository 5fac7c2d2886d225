// Community ID v1 against values computed by other implementations: Suricata's expected
// output in suricata-verify (community-id-ipv6 with seed 7, nfs3-01 with seed 1234) and the
// spec's own README/baseline examples (TCP, ICMP echo, ICMPv6 neighbor discovery).
#include "rowprobe/community_id.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <string>

namespace rowprobe {
namespace {

std::array<std::uint8_t, 16> v6(const char* text) {
    std::array<std::uint8_t, 16> a{};
    EXPECT_EQ(inet_pton(AF_INET6, text, a.data()), 1) << text;
    return a;
}

std::array<std::uint8_t, 4> v4(const char* text) {
    std::array<std::uint8_t, 4> a{};
    EXPECT_EQ(inet_pton(AF_INET, text, a.data()), 1) << text;
    return a;
}

/// A record as the flow table exports it: IPv4 addresses IPv4-mapped.
FlowRecord record(const char* src, const char* dst, std::uint8_t proto, std::uint16_t sport,
                  std::uint16_t dport) {
    FlowRecord r;
    r.proto = proto;
    r.srcPort = sport;
    r.dstPort = dport;
    if (std::string(src).find(':') != std::string::npos) {
        r.ipVersion = 6;
        r.srcAddr = v6(src);
        r.dstAddr = v6(dst);
    } else {
        r.ipVersion = 4;
        r.srcAddr = v6((std::string("::ffff:") + src).c_str());
        r.dstAddr = v6((std::string("::ffff:") + dst).c_str());
    }
    return r;
}

FlowRecord reversed(const FlowRecord& r) {
    FlowRecord x = r;
    std::swap(x.srcAddr, x.dstAddr);
    std::swap(x.srcPort, x.dstPort);
    return x;
}

TEST(CommunityId, SuricataVerifyCommunityIdIpv6Seed7) {
    // suricata-verify/community-id-ipv6/test.yaml (community-id-seed: 7).
    const FlowRecord google =
        record("2600:1f13:f8:d400:3a6:303c:e011:18eb", "2607:f8b0:400a:800::200e", 6, 60202, 443);
    EXPECT_EQ(communityId(google, 7), "1:ptJhMvufAbB5nLDNW77cB800wFM=");
    EXPECT_EQ(communityId(reversed(google), 7), "1:ptJhMvufAbB5nLDNW77cB800wFM=");
    const FlowRecord dns =
        record("2600:1f13:f8:d400:3a6:303c:e011:18eb", "2001:4860:4860::8888", 6, 33892, 443);
    EXPECT_EQ(communityId(dns, 7), "1:PGf+a0eBbs1OhuPtJmsF0Sm51v4=");
    EXPECT_EQ(communityId(reversed(dns), 7), "1:PGf+a0eBbs1OhuPtJmsF0Sm51v4=");
}

TEST(CommunityId, SuricataVerifyNfs3Seed1234Ipv4Udp) {
    // suricata-verify/nfs3-01/test.yaml (community-id-seed: 1234): IPv4 hashed as 4 bytes.
    struct Case {
        std::uint16_t sport, dport;
        const char* id;
    };
    const Case cases[] = {
        {1022, 2049, "1:Vz08QRsy2I1yGIXi37yvHKBnVwM="},
        {3296, 1048, "1:AUtTX3EtL8yKo1l/4n744z2c67M="},
        {3298, 2049, "1:7vPYSqvtfQ2cioualTnJzHa1fGs="},
        {722, 1048, "1:Ec8olmeIKk7iDWku79sjHqEjNgI="},
        {3295, 111, "1:Qa82cl2bHpIRvy6bCKNJ8m5uFHc="},
        {3299, 111, "1:5s7E1MtKBUIBA6tevSSCEoo4+nY="},
        {3297, 111, "1:RDDy+TvkuBpmdeE7O38hhFJL50w="},
        {706, 1048, "1:9Pe9/OArRDrWNZ2YKjQF8PEpzcI="},
    };
    for (const Case& c : cases) {
        const FlowRecord r = record("139.25.22.2", "139.25.22.102", 17, c.sport, c.dport);
        EXPECT_EQ(communityId(r, 1234), c.id) << c.sport << " -> " << c.dport;
        EXPECT_EQ(communityId(reversed(r), 1234), c.id) << c.sport << " <- " << c.dport;
    }
}

TEST(CommunityId, SpecExamplesTcpIcmpIcmpv6) {
    // corelight/community-id-spec README / baseline_deflt (seed 0).
    EXPECT_EQ(communityId(record("128.232.110.120", "66.35.250.204", 6, 34855, 80), 0),
              "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
    // ICMP echo request and its reply have one ID: type 8 pairs with 0.
    FlowRecord echo = record("192.168.0.89", "192.168.0.1", 1, 0, 0);
    echo.icmpTypeCode[kForward] = 8 << 8;
    FlowRecord reply = record("192.168.0.1", "192.168.0.89", 1, 0, 0);
    reply.icmpTypeCode[kForward] = 0;
    EXPECT_EQ(communityId(echo, 0), "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=");
    EXPECT_EQ(communityId(reply, 0), "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=");
    // ICMPv6 neighbor solicitation (135) pairs with advertisement (136).
    FlowRecord ns = record("fe80::200:86ff:fe05:80da", "fe80::260:97ff:fe07:69ea", 58, 0, 0);
    ns.icmpTypeCode[kForward] = 135 << 8;
    EXPECT_EQ(communityId(ns, 0), "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=");
    FlowRecord na = reversed(ns);
    na.icmpTypeCode[kForward] = 136 << 8;
    EXPECT_EQ(communityId(na, 0), "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=");
}

TEST(CommunityId, OneWayIcmpIsNotReorderedAndPortlessProtocolsIgnorePorts) {
    // Destination unreachable (3/1) has no counterpart: (type, code) in the given order, so
    // the two directions differ.
    FlowRecord unreach = record("10.0.0.2", "10.0.0.1", 1, 0, 0);
    unreach.icmpTypeCode[kForward] = (3 << 8) | 1;
    FlowRecord back = reversed(unreach);
    EXPECT_NE(communityId(unreach, 0), communityId(back, 0));
    // A protocol without ports (RSVP 46): same ID both ways whatever the record's ports say.
    const FlowRecord rsvp = record("10.1.12.1", "10.1.12.2", 46, 0, 0);
    FlowRecord rsvpPorts = reversed(rsvp);
    rsvpPorts.srcPort = 1234;
    EXPECT_EQ(communityId(rsvp, 0), communityId(rsvpPorts, 0));
    EXPECT_NE(communityId(rsvp, 0), communityId(record("10.1.12.1", "10.1.12.2", 47, 0, 0), 0));
}

TEST(CommunityId, TupleFormMatchesRecordFormAndRejectsBadAddresses) {
    const auto a = v4("139.25.22.2");
    const auto b = v4("139.25.22.102");
    const CommunityIdTuple t{
        .srcAddr = a, .dstAddr = b, .proto = 17, .srcPort = 1022, .dstPort = 2049};
    EXPECT_EQ(communityId(t, 1234), "1:Vz08QRsy2I1yGIXi37yvHKBnVwM=");
    std::array<char, kCommunityIdLength> out{};
    EXPECT_EQ(communityId(out.data(), t, 1234), out.data() + kCommunityIdLength);
    const auto c = v6("::1");
    const CommunityIdTuple mixed{.srcAddr = a, .dstAddr = c, .proto = 6};
    EXPECT_EQ(communityId(mixed, 0), "");
    const std::array<std::uint8_t, 5> odd{};
    const CommunityIdTuple bad{.srcAddr = odd, .dstAddr = odd, .proto = 6};
    EXPECT_EQ(communityId(out.data(), bad, 0), out.data());
}

}  // namespace
}  // namespace rowprobe
