// The traffic model behind the `gen` input and rowprobe-tracegen: reproducible for a seed, the
// flow shapes each pattern promises, flows that never share a key, timestamps at `pps`, and
// frames the real parser reads back to the same facts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "input/gen/traffic_model.hpp"
#include "rowprobe/errors.hpp"

namespace rowprobe::gen {
namespace {

using Bytes = std::vector<std::uint8_t>;

GenConfig config(const std::string& options) { return parseGenString(options, "test"); }

struct Captured {
    GenPacket pkt;
    Bytes frame;
};

std::vector<Captured> generate(const GenConfig& c) {
    TrafficModel model(c);
    std::vector<Captured> out;
    GenPacket pkt;
    Bytes buf(16384);
    while (model.next(pkt)) {
        const std::uint32_t n = writeFrame(pkt, buf.data());
        out.push_back({pkt, Bytes(buf.begin(), buf.begin() + n)});
    }
    return out;
}

bool parse(const Captured& c, ParsedPacket& out) {
    AnomalyCounters anomalies;
    const RawPacket raw{c.frame.data(), static_cast<std::uint32_t>(c.frame.size()), c.pkt.frameLen,
                        c.pkt.ts};
    return parsePacket(raw, LinkType::Ethernet, ParserConfig{}, out, anomalies);
}

std::string keyText(const FlowKey& k) {
    return std::string(reinterpret_cast<const char*>(&k), sizeof k);
}

TEST(GenTrafficModel, SameSeedGivesTheSameFramesBitForBit) {
    const GenConfig c =
        config("pattern=random;flows=300;packets=20000;seed=42;ipv6=0.3;reverse=0.3");
    const auto a = generate(c);
    const auto b = generate(c);
    ASSERT_EQ(a.size(), 20000U);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].frame, b[i].frame) << "packet " << i;
        ASSERT_EQ(a[i].pkt.ts, b[i].pkt.ts) << "packet " << i;
    }
}

TEST(GenTrafficModel, AnotherSeedGivesOtherFlows) {
    const auto a = generate(config("pattern=random;flows=100;packets=1000;seed=1"));
    const auto b = generate(config("pattern=random;flows=100;packets=1000;seed=2"));
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i].frame == b[i].frame ? 1 : 0;
    EXPECT_LT(same, 10U);
}

TEST(GenTrafficModel, DeterministicPatternIsOneFlow) {
    const auto pkts = generate(config("pattern=deterministic;packets=5000;reverse=0.5"));
    std::set<std::string> keys;
    for (const auto& c : pkts) {
        ParsedPacket p;
        ASSERT_TRUE(parse(c, p));
        keys.insert(keyText(p.key));
    }
    EXPECT_EQ(keys.size(), 1U);
}

TEST(GenTrafficModel, RandomPatternKeepsExactlyTheConfiguredNumberOfFlows) {
    const auto pkts = generate(config("pattern=random;flows=1000;packets=100000;ipv6=0.5"));
    std::set<std::string> keys;
    for (const auto& c : pkts) {
        ParsedPacket p;
        ASSERT_TRUE(parse(c, p));
        keys.insert(keyText(p.key));
    }
    EXPECT_EQ(keys.size(), 1000U);
}

// Every serial must have its own canonical key, whatever the pattern: the truth file relies on it.
void expectUniqueKeys(const std::string& options, std::size_t minFlows) {
    const GenConfig c = config(options);
    TrafficModel model(c);
    std::map<std::string, std::uint64_t> serialOf;
    std::set<std::uint64_t> serials;
    GenPacket pkt;
    while (model.next(pkt)) {
        serials.insert(pkt.serial);
        ParsedPacket p;
        toParsed(pkt, p);
        const auto [it, fresh] = serialOf.emplace(keyText(p.key), pkt.serial);
        ASSERT_EQ(it->second, pkt.serial)
            << options << ": serials " << it->second << " and " << pkt.serial << " share a key";
    }
    EXPECT_EQ(serialOf.size(), serials.size()) << options;
    EXPECT_GE(serialOf.size(), minFlows) << options;
}

TEST(GenTrafficModel, FlowsNeverShareAKey) {
    expectUniqueKeys("pattern=random;packets=200000;packets-per-flow=1;ipv6=0.5", 200000);
    expectUniqueKeys("pattern=zipf;flows=5000;packets=100000;packets-per-flow=2;tcp=0.3", 50000);
    expectUniqueKeys("pattern=netscan;packets=100000;ipv6=0.2", 100000);
    // More than 65535 ports: the source port moves on, the pair of addresses stays.
    expectUniqueKeys("pattern=portscan;packets=150000", 150000);
}

TEST(GenTrafficModel, NetScanHasOneSourceAndADestinationPerFlow) {
    const auto pkts = generate(config("pattern=netscan;packets=3000;tcp=1"));
    std::set<std::string> sources;
    std::set<std::string> destinations;
    for (const auto& c : pkts) {
        const FlowTuple& t = c.pkt.tuple;
        sources.emplace(reinterpret_cast<const char*>(t.src.data()), 4);
        destinations.emplace(reinterpret_cast<const char*>(t.dst.data()), 4);
        EXPECT_EQ(t.dstPort, 22);
        EXPECT_EQ(c.pkt.tcpFlags, 0x02) << "a scan probe is a lone SYN";
    }
    EXPECT_EQ(sources.size(), 1U);
    EXPECT_EQ(destinations.size(), 3000U);
}

TEST(GenTrafficModel, PortScanHasOnePairAndAPortPerFlow) {
    const auto pkts = generate(config("pattern=portscan;packets=4000"));
    std::set<std::string> pairs;
    std::set<std::uint16_t> ports;
    for (const auto& c : pkts) {
        const FlowTuple& t = c.pkt.tuple;
        pairs.emplace(std::string(reinterpret_cast<const char*>(t.src.data()), 4) +
                      std::string(reinterpret_cast<const char*>(t.dst.data()), 4));
        ports.insert(t.dstPort);
    }
    EXPECT_EQ(pairs.size(), 1U);
    EXPECT_EQ(ports.size(), 4000U);
}

TEST(GenTrafficModel, ZipfPopularityFollowsTheSkew) {
    // P(rank k) = k^-s / H(n, s); with s = 1, n = 1000: rank 1 gets 1/7.4855 = 13.36 %, and
    // rank 1 gets twice the packets of rank 2. Slot k-1 keeps serial k-1 without replacement.
    const auto pkts = generate(config("pattern=zipf;flows=1000;packets=400000;skew=1"));
    std::vector<std::uint64_t> count(1000);
    for (const auto& c : pkts) ++count[c.pkt.serial];
    const double share1 = static_cast<double>(count[0]) / 400000.0;
    EXPECT_NEAR(share1, 1.0 / 7.4855, 0.005);
    EXPECT_NEAR(static_cast<double>(count[0]) / static_cast<double>(count[1]), 2.0, 0.1);
    EXPECT_NEAR(static_cast<double>(count[0]) / static_cast<double>(count[9]), 10.0, 0.8);

    const auto steep = generate(config("pattern=zipf;flows=1000;packets=100000;skew=2"));
    std::vector<std::uint64_t> steepCount(1000);
    for (const auto& c : steep) ++steepCount[c.pkt.serial];
    EXPECT_NEAR(static_cast<double>(steepCount[0]) / static_cast<double>(steepCount[1]), 4.0, 0.3);
}

TEST(GenTrafficModel, PacketsPerFlowBoundsEveryFlowAndFinEndsIt) {
    const auto pkts =
        generate(config("pattern=random;flows=50;packets=10000;packets-per-flow=7;tcp=1;fin"));
    std::map<std::uint64_t, std::vector<GenPacket>> flows;
    for (const auto& c : pkts) flows[c.pkt.serial].push_back(c.pkt);
    std::size_t complete = 0;
    for (const auto& [serial, list] : flows) {
        ASSERT_LE(list.size(), 7U) << "serial " << serial;
        EXPECT_EQ(list.front().tcpFlags, 0x02) << "first packet is a SYN";
        for (std::size_t i = 0; i < list.size(); ++i) EXPECT_EQ(list[i].index, i);
        if (list.size() == 7) {
            ++complete;
            EXPECT_TRUE(list.back().last);
            EXPECT_EQ(list.back().tcpFlags & 0x01, 0x01) << "last packet carries FIN";
        }
    }
    EXPECT_GE(complete, 10000U / 7 - 50);
}

TEST(GenTrafficModel, TimestampsAdvanceAtThePacketRate) {
    const auto pkts = generate(config("pattern=random;packets=7;pps=3;start=100"));
    ASSERT_EQ(pkts.size(), 7U);
    EXPECT_EQ(pkts[0].pkt.ts, 100 * kNsPerSec);
    EXPECT_EQ(pkts[3].pkt.ts, 101 * kNsPerSec);  // three packets per second, exactly
    EXPECT_EQ(pkts[6].pkt.ts, 102 * kNsPerSec);
    for (std::size_t i = 1; i < pkts.size(); ++i) {
        const TimeNs step = pkts[i].pkt.ts - pkts[i - 1].pkt.ts;
        EXPECT_TRUE(step == 333333333 || step == 333333334) << step;
    }
}

TEST(GenTrafficModel, DurationEndsTheTraffic) {
    const auto pkts = generate(config("pattern=zipf;flows=10;duration=2s;pps=1000"));
    EXPECT_EQ(pkts.size(), 2000U);
    EXPECT_LT(pkts.back().pkt.ts - pkts.front().pkt.ts, 2 * kNsPerSec);
}

TEST(GenTrafficModel, SharesOfIpv6TcpAndReversePacketsFollowTheOptions) {
    const auto pkts =
        generate(config("pattern=random;flows=4000;packets=40000;ipv6=0.25;tcp=0.75;reverse=0.4"));
    std::set<std::uint64_t> v6;
    std::set<std::uint64_t> tcp;
    std::set<std::uint64_t> all;
    std::size_t reverse = 0;
    std::size_t later = 0;
    for (const auto& c : pkts) {
        all.insert(c.pkt.serial);
        if (c.pkt.tuple.ipVersion == 6) v6.insert(c.pkt.serial);
        if (c.pkt.tuple.proto == 6) tcp.insert(c.pkt.serial);
        if (c.pkt.index == 0) {
            EXPECT_TRUE(c.pkt.forward) << "a flow opens in the forward direction";
        } else {
            ++later;
            reverse += c.pkt.forward ? 0 : 1;
        }
    }
    const auto n = static_cast<double>(all.size());
    EXPECT_NEAR(static_cast<double>(v6.size()) / n, 0.25, 0.03);
    EXPECT_NEAR(static_cast<double>(tcp.size()) / n, 0.75, 0.03);
    EXPECT_NEAR(static_cast<double>(reverse) / static_cast<double>(later), 0.4, 0.02);
}

TEST(GenTrafficModel, ToParsedEqualsWhatTheParserReadsFromTheFrame) {
    for (const char* options :
         {"pattern=random;flows=200;packets=3000;ipv6=0.5;reverse=0.5",
          "pattern=portscan;packets=500;tcp=0.5;ipv6=0.5;size=300",
          "pattern=zipf;flows=100;packets=2000;size=1500;snaplen=100;reverse=0.3",
          "pattern=netscan;packets=500;ipv6=1;size=42"}) {
        for (const auto& c : generate(config(options))) {
            ParsedPacket fromFrame;
            ParsedPacket direct;
            ASSERT_TRUE(parse(c, fromFrame)) << options;
            toParsed(c.pkt, direct);
            fromFrame.frame = nullptr;  // the only field toParsed leaves out
            ASSERT_EQ(std::memcmp(&fromFrame.key, &direct.key, sizeof(FlowKey)), 0) << options;
            ASSERT_EQ(fromFrame.fromA, direct.fromA);
            EXPECT_EQ(fromFrame.ts, direct.ts);
            EXPECT_EQ(fromFrame.ipLen, direct.ipLen);
            EXPECT_EQ(fromFrame.wireLen, direct.wireLen);
            EXPECT_EQ(fromFrame.capLen, direct.capLen);
            EXPECT_EQ(fromFrame.tcpFlags, direct.tcpFlags);
            EXPECT_EQ(fromFrame.tcpWindow, direct.tcpWindow);
            EXPECT_EQ(fromFrame.ttl, direct.ttl);
            EXPECT_EQ(fromFrame.srcMac, direct.srcMac);
            EXPECT_EQ(fromFrame.dstMac, direct.dstMac);
            EXPECT_EQ(fromFrame.l3Offset, direct.l3Offset);
            EXPECT_EQ(fromFrame.l4Offset, direct.l4Offset);
            EXPECT_EQ(fromFrame.payloadOffset, direct.payloadOffset);
            EXPECT_EQ(fromFrame.payloadLen, direct.payloadLen);
            EXPECT_EQ(fromFrame.frag.id, direct.frag.id);
            EXPECT_EQ(fromFrame.hasPorts, direct.hasPorts);
        }
    }
}

std::uint32_t sum16(const std::uint8_t* p, std::size_t len) {
    std::uint32_t s = 0;
    for (std::size_t i = 0; i + 1 < len; i += 2)
        s += static_cast<std::uint32_t>(p[i] << 8 | p[i + 1]);
    if (len % 2 != 0) s += static_cast<std::uint32_t>(p[len - 1] << 8);
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return s;
}

TEST(GenTrafficModel, FramesCarryValidChecksumsAndTheRequestedLengths) {
    for (const auto& c :
         generate(config("pattern=random;flows=64;packets=2000;ipv6=0.5;size=128;reverse=0.5"))) {
        const Bytes& f = c.frame;
        ASSERT_EQ(f.size(), 128U);
        ASSERT_EQ(c.pkt.frameLen, 128U);
        const bool v6 = c.pkt.tuple.ipVersion == 6;
        const std::uint8_t* ip = f.data() + 14;
        const std::size_t ipHeader = v6 ? 40 : 20;
        const std::size_t l4Len = f.size() - 14 - ipHeader;
        std::uint32_t pseudo = 0;
        if (v6) {
            EXPECT_EQ(ip[4] << 8 | ip[5], static_cast<int>(l4Len));
            pseudo = sum16(ip + 8, 32);
        } else {
            EXPECT_EQ(ip[2] << 8 | ip[3], 114);
            EXPECT_EQ(sum16(ip, 20), 0xFFFFU) << "IPv4 header checksum";
            pseudo = sum16(ip + 12, 8);
        }
        pseudo += c.pkt.tuple.proto + static_cast<std::uint32_t>(l4Len);
        const std::uint32_t total = sum16(ip + ipHeader, l4Len) + pseudo;
        EXPECT_EQ((total & 0xFFFF) + (total >> 16), 0xFFFFU) << "transport checksum";
    }
    // Too small a size is raised to the headers; snaplen cuts the payload, never the headers.
    for (const auto& c :
         generate(config("pattern=random;packets=200;ipv6=0.5;tcp=1;size=42;snaplen=42"))) {
        EXPECT_EQ(c.frame.size(), c.pkt.tuple.ipVersion == 6 ? 74U : 54U);
    }
    for (const auto& c : generate(config("pattern=random;packets=100;size=1000;snaplen=96"))) {
        EXPECT_EQ(c.frame.size(), 96U);
        EXPECT_EQ(c.pkt.frameLen, 1000U);
        EXPECT_EQ(c.pkt.ipLen(), 986U);
    }
}

TEST(GenTrafficModel, PacketsDefaultToUnlimitedOnlyWhenADurationIsGiven) {
    EXPECT_EQ(config("pattern=random").packets, 10000000U);
    EXPECT_EQ(config("pattern=random;duration=5s").packets, 0U);
    EXPECT_EQ(config("pattern=random;duration=5s;packets=7").packets, 7U);
    EXPECT_EQ(config("pattern=netscan").packetsPerFlow, 1U);
    EXPECT_EQ(config("pattern=random").packetsPerFlow, 0U);
    EXPECT_EQ(config("gen;pattern=zipf;skew=0.8").skew, 0.8);
}

}  // namespace
}  // namespace rowprobe::gen
