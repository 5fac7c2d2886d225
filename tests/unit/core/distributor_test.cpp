// FlowDistributor (-q N with one input): both directions of a flow, and all fragments of a
// datagram, go to one worker; flows spread evenly.
#include "distributor.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::core {
namespace {

using rowprobe::test::ethIpv4Tcp;
using rowprobe::test::ethIpv4Udp;

constexpr TimeNs kT0 = 1'700'000'000ULL * kNsPerSec;

std::size_t pick(FlowDistributor& d, const std::vector<std::uint8_t>& frame, TimeNs ts = kT0) {
    const RawPacket raw{frame.data(), static_cast<std::uint32_t>(frame.size()),
                        static_cast<std::uint32_t>(frame.size()), ts};
    return d.pick(raw, LinkType::Ethernet);
}

std::string ip(unsigned i) {
    return "10." + std::to_string(i >> 16 & 255) + "." + std::to_string(i >> 8 & 255) + "." +
           std::to_string(i & 255);
}

/// An IPv4 fragment of a UDP datagram: `offset` in 8-byte units; the first one carries the ports.
std::vector<std::uint8_t> ipv4Fragment(const std::string& src, std::uint16_t sport,
                                       const std::string& dst, std::uint16_t dport,
                                       std::uint16_t id, std::uint16_t offset, bool more) {
    std::vector<std::uint8_t> f =
        ethIpv4Udp(src, offset == 0 ? sport : 0, dst, offset == 0 ? dport : 0, 64);
    f[18] = static_cast<std::uint8_t>(id >> 8);
    f[19] = static_cast<std::uint8_t>(id);
    const std::uint16_t frag = static_cast<std::uint16_t>((more ? 0x2000 : 0) | offset);
    f[20] = static_cast<std::uint8_t>(frag >> 8);
    f[21] = static_cast<std::uint8_t>(frag);
    return f;
}

/// An IPv6 UDP fragment (fragment header after the fixed header).
std::vector<std::uint8_t> ipv6Fragment(std::uint8_t srcLast, std::uint16_t sport,
                                       std::uint8_t dstLast, std::uint16_t dport, std::uint32_t id,
                                       std::uint16_t offset, bool more) {
    std::vector<std::uint8_t> f(14 + 40 + 8 + 8 + 32, 0);
    f[0] = 0x02;
    f[6] = 0x02;
    f[12] = 0x86;
    f[13] = 0xdd;
    std::uint8_t* ip6 = f.data() + 14;
    ip6[0] = 0x60;
    const std::uint16_t payload = 8 + 8 + 32;
    ip6[4] = static_cast<std::uint8_t>(payload >> 8);
    ip6[5] = static_cast<std::uint8_t>(payload);
    ip6[6] = 44;  // fragment header
    ip6[7] = 64;
    const std::uint8_t prefix[4] = {0x20, 0x01, 0x0d, 0xb8};
    std::copy(prefix, prefix + 4, ip6 + 8);
    std::copy(prefix, prefix + 4, ip6 + 24);
    ip6[23] = srcLast;
    ip6[39] = dstLast;
    std::uint8_t* fh = ip6 + 40;
    fh[0] = 17;
    const std::uint16_t off = static_cast<std::uint16_t>(offset << 3 | (more ? 1 : 0));
    fh[2] = static_cast<std::uint8_t>(off >> 8);
    fh[3] = static_cast<std::uint8_t>(off);
    fh[4] = static_cast<std::uint8_t>(id >> 24);
    fh[5] = static_cast<std::uint8_t>(id >> 16);
    fh[6] = static_cast<std::uint8_t>(id >> 8);
    fh[7] = static_cast<std::uint8_t>(id);
    if (offset == 0) {
        std::uint8_t* udp = fh + 8;
        udp[0] = static_cast<std::uint8_t>(sport >> 8);
        udp[1] = static_cast<std::uint8_t>(sport);
        udp[2] = static_cast<std::uint8_t>(dport >> 8);
        udp[3] = static_cast<std::uint8_t>(dport);
    }
    return f;
}

TEST(FlowDistributor, BothDirectionsOfAFlowGoToTheSameQueue) {
    FlowDistributor d(4, ParserConfig{});
    for (unsigned i = 0; i < 2000; ++i) {
        const auto port = static_cast<std::uint16_t>(1024 + i * 7);
        if (i % 2 == 0) {
            ASSERT_EQ(pick(d, ethIpv4Tcp(ip(i), port, "93.184.216.34", 443, 0x02)),
                      pick(d, ethIpv4Tcp("93.184.216.34", 443, ip(i), port, 0x12)))
                << i;
        } else {
            ASSERT_EQ(pick(d, ethIpv4Udp(ip(i), port, "8.8.8.8", 53)),
                      pick(d, ethIpv4Udp("8.8.8.8", 53, ip(i), port)))
                << i;
        }
    }
}

TEST(FlowDistributor, FlowsSpreadEvenlyOverTheQueuesEvenBetweenTwoHosts) {
    for (const std::size_t queues : {2U, 3U, 4U}) {
        FlowDistributor d(queues, ParserConfig{});
        std::map<std::size_t, unsigned> count;
        for (unsigned i = 0; i < 12000; ++i) {  // one host pair, many ports: ports are hashed
            ++count[pick(d, ethIpv4Tcp("10.0.0.1", static_cast<std::uint16_t>(1024 + i), "10.0.0.2",
                                       80, 0x02))];
        }
        ASSERT_EQ(count.size(), queues);
        for (const auto& [q, n] : count) {
            EXPECT_NEAR(static_cast<double>(n), 12000.0 / static_cast<double>(queues),
                        0.1 * 12000.0 / static_cast<double>(queues))
                << queues << " queues, queue " << q;
        }
    }
}

TEST(FlowDistributor, FragmentsFollowTheFirstFragmentToTheQueueOfTheirFlow) {
    FlowDistributor d(4, ParserConfig{});
    std::set<std::size_t> used;
    for (std::uint16_t i = 0; i < 200; ++i) {
        const auto sport = static_cast<std::uint16_t>(5000 + i);
        const std::size_t flowQueue = pick(d, ethIpv4Udp("10.0.0.1", sport, "10.0.0.2", 53));
        const TimeNs t = kT0 + i * kNsPerSec / 100;
        EXPECT_EQ(pick(d, ipv4Fragment("10.0.0.1", sport, "10.0.0.2", 53, i, 0, true), t),
                  flowQueue);
        EXPECT_EQ(pick(d, ipv4Fragment("10.0.0.1", sport, "10.0.0.2", 53, i, 9, true), t),
                  flowQueue);
        EXPECT_EQ(pick(d, ipv4Fragment("10.0.0.1", sport, "10.0.0.2", 53, i, 18, false), t),
                  flowQueue);
        used.insert(flowQueue);
    }
    EXPECT_EQ(used.size(), 4U);  // same host pair, different ports: different queues
}

TEST(FlowDistributor, Ipv6FragmentsFollowTheirFirstFragmentToo) {
    FlowDistributor d(4, ParserConfig{});
    std::set<std::size_t> used;
    for (std::uint32_t i = 0; i < 100; ++i) {
        const auto sport = static_cast<std::uint16_t>(7000 + i);
        const std::size_t first = pick(d, ipv6Fragment(1, sport, 2, 4500, 0xabc000 + i, 0, true));
        EXPECT_EQ(pick(d, ipv6Fragment(1, sport, 2, 4500, 0xabc000 + i, 6, true)), first);
        EXPECT_EQ(pick(d, ipv6Fragment(1, sport, 2, 4500, 0xabc000 + i, 12, false)), first);
        used.insert(first);
    }
    EXPECT_GT(used.size(), 1U);
}

TEST(FlowDistributor, OrphanFragmentsOfAHostPairMeetOnTheQueueOfTheirPortlessFlow) {
    FlowDistributor d(4, ParserConfig{});
    const std::size_t q = pick(d, ipv4Fragment("10.0.0.7", 1, "10.0.0.8", 2, 1, 100, true));
    for (std::uint16_t id = 2; id < 100; ++id) {
        EXPECT_EQ(pick(d, ipv4Fragment("10.0.0.7", 1, "10.0.0.8", 2, id, 100, false)), q);
        EXPECT_EQ(pick(d, ipv4Fragment("10.0.0.8", 1, "10.0.0.7", 2, id, 50, false)),
                  q);  // and the reverse
    }
}

TEST(FlowDistributor, AForgottenFirstFragmentNoLongerRoutesItsDatagram) {
    FlowDistributor d(8, ParserConfig{});
    std::size_t followed = 0;
    for (std::uint16_t i = 0; i < 64; ++i) {
        const auto sport = static_cast<std::uint16_t>(9000 + i);
        const std::size_t first =
            pick(d, ipv4Fragment("10.1.0.1", sport, "10.1.0.2", 53, i, 0, true), kT0);
        const std::size_t late =
            pick(d, ipv4Fragment("10.1.0.1", sport, "10.1.0.2", 53, i, 9, false),
                 kT0 + FlowDistributor::kFragmentTimeout + 1);
        followed += first == late ? 1 : 0;
    }
    EXPECT_LT(followed, 32U);  // routed as orphans: mostly elsewhere
}

TEST(FlowDistributor, NonIpFramesGoToTheFirstQueueAndOneQueueTakesEverything) {
    FlowDistributor d(4, ParserConfig{});
    std::vector<std::uint8_t> arp(60, 0);
    arp[12] = 0x08;
    arp[13] = 0x06;
    EXPECT_EQ(pick(d, arp), 0U);
    FlowDistributor one(1, ParserConfig{});
    for (unsigned i = 0; i < 100; ++i)
        EXPECT_EQ(pick(one, ethIpv4Udp(ip(i), 1, "10.9.9.9", 2)), 0U);
}

// --tunnel both: a VXLAN-style tunnel whose two directions use different outer source ports
// (the inner flow's hash) must still be counted by one worker, with its inner flows.
TEST(FlowDistributor, TunnelBothRoutesUdpByTheOuterAddressPair) {
    FlowDistributor both(8, ParserConfig{.tunnels = TunnelMode::Both});
    FlowDistributor outer(8, ParserConfig{});
    std::size_t splitWithoutTunnels = 0;
    for (unsigned i = 0; i < 64; ++i) {
        const auto there =
            ethIpv4Udp(ip(i), static_cast<std::uint16_t>(40000 + i), "10.9.9.9", 4789);
        const auto back =
            ethIpv4Udp("10.9.9.9", static_cast<std::uint16_t>(50000 + i), ip(i), 4789);
        EXPECT_EQ(pick(both, there), pick(both, back)) << i;
        if (pick(outer, there) != pick(outer, back)) ++splitWithoutTunnels;
    }
    EXPECT_GT(splitWithoutTunnels, 32U);  // two different 5-tuples: hashed apart otherwise
}

}  // namespace
}  // namespace rowprobe::core
