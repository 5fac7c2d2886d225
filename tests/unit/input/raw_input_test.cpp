// The `raw` input (AF_PACKET TPACKET_V3) on live interfaces: the tests send their own traffic
// on `lo` (and across a veth pair into a network namespace) while an input reads, and check
// that exactly their packets come out, once each, with the right sizes. Each test on `lo` runs
// in a network namespace of its own (PrivateLoopback), so test suites running beside it on the
// machine neither fill its ring nor add flows; frames are still matched by the tests' own ports.
// Skipped without CAP_NET_RAW.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "live_traffic.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using test::live::packetSocketsAllowed;
using test::live::PrivateLoopback;
using test::live::tcpConversation;
using test::live::UdpSocket;

#define REQUIRE_PACKET_SOCKETS()                                                           \
    do {                                                                                   \
        if (!packetSocketsAllowed()) GTEST_SKIP() << "AF_PACKET sockets need CAP_NET_RAW"; \
    } while (0)

std::unique_ptr<InputPlugin> makeInput(const std::string& text) {
    return Registry::instance().createAs<InputPlugin>(PluginKind::Input, text, "-i");
}

/// What the tests need to know about a captured IPv4 frame.
struct Summary {
    bool ok = false;
    std::uint8_t proto = 0;
    std::uint32_t src = 0;  ///< host order
    std::uint32_t dst = 0;
    std::uint16_t sport = 0;
    std::uint16_t dport = 0;
    std::uint8_t tcpFlags = 0;
    std::uint32_t payload = 0;  ///< L4 payload bytes according to the IP total length
    int vlan = -1;
};

std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }
std::uint32_t be32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

Summary summarize(const RawPacket& pkt) {
    Summary s;
    const std::uint8_t* p = pkt.data;
    std::uint32_t off = 12;
    if (pkt.capLen < 14) return s;
    std::uint16_t type = be16(p + off);
    if (type == 0x8100 && pkt.capLen >= 18) {
        s.vlan = be16(p + 14) & 0x0FFF;
        off += 4;
        type = be16(p + off);
    }
    off += 2;
    if (type != 0x0800 || pkt.capLen < off + 20) return s;
    const std::uint8_t* ip = p + off;
    const std::uint32_t ihl = (ip[0] & 0x0Fu) * 4;
    const std::uint32_t total = be16(ip + 2);
    s.proto = ip[9];
    s.src = be32(ip + 12);
    s.dst = be32(ip + 16);
    const std::uint32_t l4Header = s.proto == IPPROTO_TCP ? 20 : 8;
    if (pkt.capLen < off + ihl + l4Header) return s;
    const std::uint8_t* l4 = ip + ihl;
    s.sport = be16(l4);
    s.dport = be16(l4 + 2);
    if (s.proto == IPPROTO_UDP) {
        s.payload = total - ihl - 8;
    } else if (s.proto == IPPROTO_TCP) {
        s.tcpFlags = l4[13];
        s.payload = total - ihl - (l4[12] >> 4) * 4u;
    }
    s.ok = true;
    return s;
}

struct Captured {
    Summary sum;
    std::vector<std::uint8_t> bytes;
    std::uint32_t wireLen = 0;
    TimeNs ts = 0;
};

/// Reads `input` until `enough` holds for the frames kept so far (then `linger` more, to
/// catch duplicates) or `limit` passes. Keeps the frames for which `keep` is true.
std::vector<Captured> captureFrom(InputPlugin& input,
                                  const std::function<bool(const Summary&)>& keep,
                                  const std::function<bool(const std::vector<Captured>&)>& enough,
                                  std::chrono::milliseconds linger = 300ms,
                                  std::chrono::milliseconds limit = 5000ms) {
    auto block = std::make_unique<PacketBlock>();
    std::vector<Captured> out;
    const auto start = Clock::now();
    auto deadline = start + limit;
    bool satisfied = false;
    while (Clock::now() < deadline) {
        block->clear();
        const InputPlugin::Status status = input.read(*block);
        if (status == InputPlugin::Status::End) break;
        EXPECT_EQ(block->link, LinkType::Ethernet);
        for (std::size_t i = 0; i < block->count; ++i) {
            const RawPacket& raw = block->packets[i];
            const Summary s = summarize(raw);
            if (!s.ok || !keep(s)) continue;
            out.push_back({s, std::vector<std::uint8_t>(raw.data, raw.data + raw.capLen),
                           raw.wireLen, raw.ts});
        }
        if (!satisfied && enough(out)) {
            satisfied = true;
            deadline = std::min(deadline, Clock::now() + linger);
        }
    }
    return out;
}

std::uint32_t loopback() { return INADDR_LOOPBACK; }

constexpr std::uint8_t kFin = 0x01;
constexpr std::uint8_t kSyn = 0x02;
constexpr std::uint8_t kAck = 0x10;

// --- configuration errors (no privileges needed) ---------------------------------------------

TEST(RawInput, UnknownInterfaceIsAConfigErrorNamingTheOptionAndTheInterfaces) {
    try {
        makeInput("raw;ifc=rowprobe-nope0");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "ifc");
        EXPECT_NE(e.details().problem.find("rowprobe-nope0"), std::string::npos)
            << e.details().problem;
        const auto& c = e.details().choices;
        EXPECT_NE(std::find(c.begin(), c.end(), "lo"), c.end()) << "available interfaces listed";
    }
}

TEST(RawInput, InterfaceIsRequired) {
    try {
        makeInput("raw;blocks=4");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "ifc");
    }
}

TEST(RawInput, RingGeometryIsValidatedWithTheBounds) {
    try {
        makeInput("raw;ifc=lo;block-size=5000");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "block-size");
        EXPECT_NE(e.details().problem.find("power of two"), std::string::npos)
            << e.details().problem;
    }
    try {
        makeInput("raw;ifc=lo;block-size=4096;frame-size=8192");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.details().option, "frame-size");
        EXPECT_NE(e.details().problem.find("4096"), std::string::npos) << e.details().problem;
    }
    EXPECT_THROW(makeInput("raw;ifc=lo;frame-size=100"), ConfigError);
    EXPECT_THROW(makeInput("raw;ifc=lo;blocks=1"), ConfigError);
}

// --- capture on lo -------------------------------------------------------------------------------

TEST(RawInput, CapturesOwnUdpDatagramsOnLoopbackOnceEachWithExactSizes) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;blocks=8;block-size=65536;timeout=20ms");
    EXPECT_TRUE(input->live());
    UdpSocket rx;
    UdpSocket tx;
    const std::vector<std::size_t> sizes = {0, 1, 100, 1000, 1400, 1900};
    const auto before = std::chrono::system_clock::now();
    for (std::size_t s : sizes) tx.sendTo(rx.port(), s);
    const auto after = std::chrono::system_clock::now();
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_UDP && s.sport == tx.port() && s.dport == rx.port();
    };
    const auto frames =
        captureFrom(*input, mine, [&](const auto& v) { return v.size() >= sizes.size(); });
    ASSERT_EQ(frames.size(), sizes.size())
        << "each datagram exactly once (outgoing copies skipped)";
    const auto toNs = [](auto t) {
        return static_cast<TimeNs>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
    };
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const std::uint32_t wire = static_cast<std::uint32_t>(14 + 20 + 8 + sizes[i]);
        EXPECT_EQ(frames[i].sum.payload, sizes[i]) << "in sending order";
        EXPECT_EQ(frames[i].wireLen, wire);
        EXPECT_EQ(frames[i].bytes.size(), wire)
            << "default frame-size 2048 keeps a 1942-byte frame whole";
        EXPECT_EQ(frames[i].sum.src, loopback());
        EXPECT_GE(frames[i].ts + 1'000'000, toNs(before))
            << "kernel time stamps in ns since the epoch";
        EXPECT_LE(frames[i].ts, toNs(after) + 1'000'000);
    }
    const InputStats st = input->stats();
    EXPECT_GE(st.received, sizes.size());
    EXPECT_EQ(st.kernelDrops, 0u);
}

TEST(RawInput, CapturesBothDirectionsOfATcpConnection) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;timeout=20ms");
    std::uint16_t serverPort = 0;
    const std::uint16_t clientPort = tcpConversation(3000, 700, INADDR_LOOPBACK, &serverPort);
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_TCP && ((s.sport == clientPort && s.dport == serverPort) ||
                                          (s.sport == serverPort && s.dport == clientPort));
    };
    int fins = 0;
    const auto frames = captureFrom(*input, mine, [&](const auto& v) {
        fins = 0;
        for (const auto& f : v) fins += (f.sum.tcpFlags & kFin) != 0;
        return fins >= 2;
    });
    std::uint32_t up = 0, down = 0;
    int syn = 0, synAck = 0;
    for (const auto& f : frames) {
        (f.sum.sport == clientPort ? up : down) += f.sum.payload;
        syn += (f.sum.tcpFlags & (kSyn | kAck)) == kSyn && f.sum.sport == clientPort;
        synAck += (f.sum.tcpFlags & (kSyn | kAck)) == (kSyn | kAck) && f.sum.sport == serverPort;
        EXPECT_EQ(f.bytes.size(), std::min<std::uint32_t>(f.wireLen, 2048 - 96)) << "snap length";
    }
    EXPECT_EQ(syn, 1) << "the SYN once: no outgoing duplicate";
    EXPECT_EQ(synAck, 1);
    EXPECT_EQ(fins, 2);
    EXPECT_EQ(up, 3000u) << "client payload bytes";
    EXPECT_EQ(down, 700u) << "server payload bytes";
}

TEST(RawInput, OutgoingOptionAlsoCapturesTheLoopbackTransmitCopy) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;outgoing;timeout=20ms");
    UdpSocket rx;
    UdpSocket tx;
    for (int i = 0; i < 5; ++i) tx.sendTo(rx.port(), 64);
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_UDP && s.sport == tx.port() && s.dport == rx.port();
    };
    const auto frames = captureFrom(*input, mine, [](const auto& v) { return v.size() >= 10; });
    EXPECT_EQ(frames.size(), 10u) << "on lo each frame leaves and enters once";
}

TEST(RawInput, FrameSizeTruncatesLongFramesAndKeepsTheWireLength) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;frame-size=256;timeout=20ms");
    UdpSocket rx;
    UdpSocket tx;
    tx.sendTo(rx.port(), 1000);
    tx.sendTo(rx.port(), 10);
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_UDP && s.sport == tx.port() && s.dport == rx.port();
    };
    const auto frames = captureFrom(*input, mine, [](const auto& v) { return v.size() >= 2; });
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].wireLen, 1042u);
    EXPECT_EQ(frames[0].bytes.size(), 256u - 96u)
        << "snap length = frame-size - 96-byte ring header";
    EXPECT_EQ(frames[0].sum.payload, 1000u) << "the IP total length still tells the real size";
    EXPECT_EQ(frames[1].wireLen, 52u);
    EXPECT_EQ(frames[1].bytes.size(), 52u);
}

TEST(RawInput, VlanTagStrippedByTheKernelIsPutBackIntoTheFrame) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;timeout=20ms");
    UdpSocket rx;  // owns the destination port, so the frame is addressed to this test
    const std::uint16_t sport = static_cast<std::uint16_t>(40000 + getpid() % 20000);
    // Ethernet + 802.1Q (PCP 3, VLAN 100) + IPv4 + UDP + 12 bytes, injected on lo.
    std::vector<std::uint8_t> frame = {0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0x81,
                                       0x00,
                                       0x60,
                                       0x64,
                                       0x08,
                                       0x00,
                                       0x45,
                                       0,
                                       0,
                                       40,
                                       0,
                                       1,
                                       0,
                                       0,
                                       64,
                                       IPPROTO_UDP,
                                       0,
                                       0,
                                       127,
                                       0,
                                       0,
                                       1,
                                       127,
                                       0,
                                       0,
                                       1,
                                       static_cast<std::uint8_t>(sport >> 8),
                                       static_cast<std::uint8_t>(sport),
                                       static_cast<std::uint8_t>(rx.port() >> 8),
                                       static_cast<std::uint8_t>(rx.port()),
                                       0,
                                       20,
                                       0,
                                       0};
    const std::vector<std::uint8_t> payload(12, 0xab);
    frame.insert(frame.end(), payload.begin(), payload.end());
    const int fd = ::socket(AF_PACKET, SOCK_RAW, 0);
    ASSERT_GE(fd, 0);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
    to.sll_halen = 6;
    ASSERT_EQ(
        ::sendto(fd, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
        static_cast<ssize_t>(frame.size()))
        << std::strerror(errno);
    ::close(fd);
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_UDP && s.sport == sport && s.dport == rx.port();
    };
    const auto frames = captureFrom(*input, mine, [](const auto& v) { return !v.empty(); });
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].sum.vlan, 100);
    EXPECT_EQ(frames[0].bytes, frame) << "byte for byte, tag included";
    EXPECT_EQ(frames[0].wireLen, frame.size());
}

// --- fanout ------------------------------------------------------------------------------------

TEST(RawInput, FanoutSplitsFlowsDisjointlyAndKeepsBothDirectionsOnOneInput) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    const std::string group = std::to_string(1000 + getpid() % 50000);
    auto a = makeInput("raw;ifc=lo;timeout=10ms;fanout=" + group);
    auto b = makeInput("raw;ifc=lo;timeout=10ms;F=" + group);

    // 48 UDP request/response flows and 6 TCP connections, all between distinct port pairs.
    UdpSocket server;
    std::vector<std::unique_ptr<UdpSocket>> clients;
    std::set<std::uint16_t> udpClients;
    for (int i = 0; i < 48; ++i) {
        clients.push_back(std::make_unique<UdpSocket>());
        clients.back()->sendTo(server.port(), 50);
        server.echo(30);
        udpClients.insert(clients.back()->port());
    }
    std::map<std::uint16_t, std::uint16_t> tcpClients;  // client port -> server port
    for (int i = 0; i < 6; ++i) {
        std::uint16_t sp = 0;
        const std::uint16_t cp = tcpConversation(100, 100, INADDR_LOOPBACK, &sp);
        tcpClients[cp] = sp;
    }
    // Flow id: protocol << 16 | client port; direction: whether the client sent it.
    auto flowOf = [&](const Summary& s) -> int {
        if (s.proto == IPPROTO_UDP) {
            if (s.dport == server.port() && udpClients.count(s.sport))
                return IPPROTO_UDP << 16 | s.sport;
            if (s.sport == server.port() && udpClients.count(s.dport))
                return IPPROTO_UDP << 16 | s.dport;
        } else if (s.proto == IPPROTO_TCP) {
            auto up = tcpClients.find(s.sport);
            if (up != tcpClients.end() && up->second == s.dport) return IPPROTO_TCP << 16 | s.sport;
            auto down = tcpClients.find(s.dport);
            if (down != tcpClients.end() && down->second == s.sport)
                return IPPROTO_TCP << 16 | s.dport;
        }
        return -1;
    };
    auto clientSent = [](const Summary& s, int flow) { return s.sport == (flow & 0xFFFF); };
    auto mine = [&](const Summary& s) { return flowOf(s) >= 0; };
    const auto fromA = captureFrom(
        *a, mine, [](const auto&) { return true; }, 500ms);
    const auto fromB = captureFrom(
        *b, mine, [](const auto&) { return true; }, 500ms);

    std::map<int, std::set<char>> inputsOfFlow;
    std::map<int, std::set<bool>> directionsOfFlow;
    std::map<int, int> packetsOfFlow;
    for (const auto* frames : {&fromA, &fromB}) {
        for (const auto& f : *frames) {
            const int flow = flowOf(f.sum);
            inputsOfFlow[flow].insert(frames == &fromA ? 'a' : 'b');
            directionsOfFlow[flow].insert(clientSent(f.sum, flow));
            ++packetsOfFlow[flow];
        }
    }
    ASSERT_EQ(inputsOfFlow.size(), udpClients.size() + tcpClients.size()) << "every flow captured";
    for (const auto& [flow, inputs] : inputsOfFlow) {
        EXPECT_EQ(inputs.size(), 1u)
            << "flow " << (flow >> 16) << "/" << (flow & 0xFFFF) << " split across inputs";
        EXPECT_EQ(directionsOfFlow[flow].size(), 2u)
            << "both directions of flow " << (flow & 0xFFFF);
        if ((flow >> 16) == IPPROTO_UDP) {
            EXPECT_EQ(packetsOfFlow[flow], 2) << "request + response, each once, on one input";
        }
    }
    EXPECT_FALSE(fromA.empty()) << "54 flows all hashed to one input: fanout not in effect";
    EXPECT_FALSE(fromB.empty()) << "54 flows all hashed to one input: fanout not in effect";
}

// --- statistics and stopping ------------------------------------------------------------------

TEST(RawInput, KernelDropsAreReportedWhenTheRingOverflows) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    // Two 4 KiB blocks hold a handful of 1 KB frames; nobody reads while 400 are sent.
    auto input = makeInput("raw;ifc=lo;blocks=2;block-size=4096;timeout=10ms");
    UdpSocket rx;
    UdpSocket tx;
    for (int i = 0; i < 400; ++i) tx.sendTo(rx.port(), 1000);
    const InputStats st = input->stats();
    EXPECT_GT(st.kernelDrops, 300u);
    auto mine = [&](const Summary& s) { return s.proto == IPPROTO_UDP && s.sport == tx.port(); };
    const auto frames = captureFrom(
        *input, mine, [](const auto&) { return true; }, 300ms);
    EXPECT_LT(frames.size(), 20u);
    const InputStats later = input->stats();
    EXPECT_GE(later.kernelDrops, st.kernelDrops)
        << "the kernel's reset-on-read counter is accumulated";
    EXPECT_GE(later.kernelDrops + frames.size(), 400u)
        << "every datagram either captured or counted";
}

TEST(RawInput, StopEndsABlockingReadPromptly) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;timeout=30s");
    std::atomic<bool> ended{false};
    Clock::time_point endedAt;
    std::thread reader([&] {
        auto block = std::make_unique<PacketBlock>();
        for (;;) {
            block->clear();
            if (input->read(*block) == InputPlugin::Status::End) break;
        }
        endedAt = Clock::now();
        ended = true;
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(ended.load()) << "a 30 s poll timeout keeps read() waiting";
    const auto stoppedAt = Clock::now();
    input->stop();
    reader.join();
    EXPECT_LT(endedAt - stoppedAt, 1s) << "stop() wakes the poll instead of waiting 30 s";
}

TEST(RawInput, PacketsCapturedBeforeStopAreStillDelivered) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    auto input = makeInput("raw;ifc=lo;timeout=100ms");
    UdpSocket rx;
    UdpSocket tx;
    for (int i = 0; i < 20; ++i) tx.sendTo(rx.port(), 200);
    input->stop();  // the kernel has not retired the ring block holding them yet
    auto mine = [&](const Summary& s) { return s.proto == IPPROTO_UDP && s.sport == tx.port(); };
    const auto frames = captureFrom(*input, mine, [](const auto&) { return false; });
    EXPECT_EQ(frames.size(), 20u);
}

TEST(RawInput, IdleInterfaceReturnsTimeoutAfterThePollTimeout) {
    REQUIRE_PACKET_SOCKETS();
    // A veth whose peer stays down: up, but nothing can arrive.
    const std::string name = "rpidle" + std::to_string(getpid() % 100000);
    if (std::system(("ip link add " + name + " type veth peer name " + name +
                     "p >/dev/null 2>&1 && ip link set " + name + " up >/dev/null 2>&1")
                        .c_str()) != 0) {
        GTEST_SKIP() << "cannot create a veth pair (needs CAP_NET_ADMIN)";
    }
    struct Cleanup {
        std::string name;
        ~Cleanup() {
            [[maybe_unused]] int rc =
                std::system(("ip link del " + name + " >/dev/null 2>&1").c_str());
        }
    } cleanup{name};
    auto input = makeInput("raw;ifc=" + name + ";timeout=50ms;promisc=false");
    auto block = std::make_unique<PacketBlock>();
    const auto t0 = Clock::now();
    EXPECT_EQ(input->read(*block), InputPlugin::Status::Timeout);
    const auto waited = Clock::now() - t0;
    EXPECT_EQ(block->count, 0u);
    EXPECT_GE(waited, 40ms);
    EXPECT_LT(waited, 1s);
}

// --- a real (veth) interface with traffic from another network namespace ----------------------

class RawVethTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!packetSocketsAllowed()) GTEST_SKIP() << "AF_PACKET sockets need CAP_NET_RAW";
        if (!m_veth.ok())
            GTEST_SKIP() << "cannot create a veth pair in a network namespace: "
                         << m_veth.command();
        m_host = m_veth.hostIfc();
        m_hostAddr = m_veth.hostAddr();
        m_peerAddr = m_veth.peerAddr();
    }
    void inPeerNamespace(const std::function<void()>& body) { m_veth.inPeerNamespace(body); }

    test::live::VethPair m_veth;
    std::string m_host;
    std::uint32_t m_hostAddr = 0, m_peerAddr = 0;
};

TEST_F(RawVethTest, CapturesTrafficArrivingFromAnotherNamespace) {
    auto input = makeInput("raw;ifc=" + m_host + ";timeout=20ms");
    UdpSocket rx(m_hostAddr);
    std::uint16_t peerPort = 0;
    inPeerNamespace([&] {
        UdpSocket tx(m_peerAddr);
        peerPort = tx.port();
        for (std::size_t s : {10u, 500u, 1400u}) tx.sendTo(rx.port(), s, m_hostAddr);
    });
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_UDP && s.sport == peerPort && s.dport == rx.port();
    };
    const auto frames = captureFrom(*input, mine, [](const auto& v) { return v.size() >= 3; });
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].wireLen, 52u);
    EXPECT_EQ(frames[1].wireLen, 542u);
    EXPECT_EQ(frames[2].wireLen, 1442u);
    EXPECT_EQ(frames[2].sum.src, m_peerAddr);
    EXPECT_EQ(frames[2].sum.dst, m_hostAddr);
}

TEST_F(RawVethTest, OutgoingOptionAddsTheHostsOwnRepliesOnARealInterface) {
    auto incoming = makeInput("raw;ifc=" + m_host + ";timeout=20ms");
    auto both = makeInput("raw;ifc=" + m_host + ";outgoing;timeout=20ms");
    std::uint16_t serverPort = 0;
    std::uint16_t clientPort = 0;
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(m_hostAddr);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    serverPort = ntohs(a.sin_port);
    std::thread server([&] {
        const int s = ::accept(listener, nullptr, nullptr);
        char buf[4096];
        ssize_t got = 0;
        while (got < 2000) {
            const ssize_t n = ::recv(s, buf, sizeof buf, 0);
            if (n <= 0) break;
            got += n;
        }
        EXPECT_EQ(::send(s, buf, 1000, 0), 1000);
        while (::recv(s, buf, sizeof buf, 0) > 0) {
        }
        ::close(s);
    });
    inPeerNamespace([&] {
        const int c = ::socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a), 0)
            << std::strerror(errno);
        sockaddr_in me{};
        socklen_t l = sizeof me;
        ::getsockname(c, reinterpret_cast<sockaddr*>(&me), &l);
        clientPort = ntohs(me.sin_port);
        std::vector<char> buf(2000, 'z');
        EXPECT_EQ(::send(c, buf.data(), buf.size(), 0), 2000);
        std::size_t got = 0;
        while (got < 1000) {
            const ssize_t n = ::recv(c, buf.data(), buf.size(), 0);
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        ::close(c);
    });
    server.join();
    ::close(listener);
    auto mine = [&](const Summary& s) {
        return s.proto == IPPROTO_TCP && ((s.sport == clientPort && s.dport == serverPort) ||
                                          (s.sport == serverPort && s.dport == clientPort));
    };
    auto bytes = [&](const std::vector<Captured>& frames, std::uint16_t from) {
        std::uint32_t n = 0;
        for (const auto& f : frames) n += f.sum.sport == from ? f.sum.payload : 0;
        return n;
    };
    const auto in = captureFrom(
        *incoming, mine, [](const auto&) { return true; }, 400ms);
    const auto all = captureFrom(
        *both, mine, [](const auto&) { return true; }, 400ms);
    EXPECT_EQ(bytes(in, clientPort), 2000u);
    EXPECT_EQ(bytes(in, serverPort), 0u)
        << "the host's own replies are outgoing: skipped by default";
    EXPECT_EQ(bytes(all, clientPort), 2000u);
    EXPECT_EQ(bytes(all, serverPort), 1000u);
}

// --- the rowprobe binary with raw inputs ------------------------------------------------------

TEST(RawRowprobe, TwoFanoutQueuesExportEveryFlowOnceWithBothDirections) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    const std::string group = std::to_string(1000 + (getpid() + 7) % 50000);
    test::live::Rowprobe probe({"raw;ifc=lo;fanout=" + group, "raw;ifc=lo;fanout=" + group});
    ASSERT_TRUE(probe.started()) << probe.finish(0, 1).err;

    UdpSocket server;
    std::vector<std::unique_ptr<UdpSocket>> clients;
    for (int i = 0; i < 40; ++i) {
        clients.push_back(std::make_unique<UdpSocket>());
        clients.back()->sendTo(server.port(), 50);
        server.echo(30);
    }
    std::vector<std::pair<std::uint16_t, std::uint16_t>> tcp;
    for (int i = 0; i < 4; ++i) {
        std::uint16_t sp = 0;
        const std::uint16_t cp = tcpConversation(1000, 2000, INADDR_LOOPBACK, &sp);
        tcp.emplace_back(cp, sp);
    }
    std::this_thread::sleep_for(300ms);  // one ring-block retire timeout (100 ms) and then some
    const test::CommandResult r = probe.finish(SIGINT);
    ASSERT_EQ(r.exitCode, 0) << r.err;

    const auto flows = probe.flows();
    std::set<std::string> queues;
    for (const auto& c : clients) {
        const auto mine = test::live::flowsBetween(flows, IPPROTO_UDP, c->port(), server.port());
        ASSERT_EQ(mine.size(), 1u) << "UDP flow " << c->port() << " exported once, as one biflow";
        const auto& f = mine[0];
        EXPECT_EQ(f.at("src_port"), std::to_string(c->port())) << "the request opened the flow";
        EXPECT_EQ(f.at("packets"), "1");
        EXPECT_EQ(f.at("bytes"), "78") << "IP bytes of the request: 20 + 8 + 50";
        EXPECT_EQ(f.at("packets_rev"), "1") << "the response reached the same queue";
        EXPECT_EQ(f.at("bytes_rev"), "58");
        queues.insert(f.at("queue"));
    }
    for (const auto& [cp, sp] : tcp) {
        const auto mine = test::live::flowsBetween(flows, IPPROTO_TCP, cp, sp);
        ASSERT_EQ(mine.size(), 1u) << "TCP flow " << cp << " exported once";
        EXPECT_NE(mine[0].at("packets"), "0");
        EXPECT_NE(mine[0].at("packets_rev"), "0") << "both directions on one queue";
        queues.insert(mine[0].at("queue"));
    }
    EXPECT_EQ(queues, (std::set<std::string>{"0", "1"}))
        << "44 flows spread over both fanout queues";
    const auto stats = probe.stats();
    EXPECT_GE(std::stoull(stats.at("queues.0.input.received")) +
                  std::stoull(stats.at("queues.1.input.received")),
              80u + 4 * 6);
}

TEST(RawRowprobe, SigtermStopsCleanlyAndExportsTheCapturedFlows) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    test::live::Rowprobe probe({"raw;ifc=lo"});
    ASSERT_TRUE(probe.started()) << probe.finish(0, 1).err;
    UdpSocket rx;
    UdpSocket tx;
    for (int i = 0; i < 7; ++i) tx.sendTo(rx.port(), 100);
    // Received means captured: on a loaded machine the kernel may deliver loopback traffic
    // later than sendto() returns (softirq work deferred to ksoftirqd), and a packet still in
    // its backlog at the signal was not captured before it. No other wait: the datagrams are
    // still in the ring block the kernel is filling, and stopping drains it before the input
    // ends.
    ASSERT_EQ(rx.receive(7, 5000ms), 7u);
    const auto t0 = Clock::now();
    const test::CommandResult r = probe.finish(SIGTERM);
    EXPECT_LT(Clock::now() - t0, 3s);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto mine = test::live::flowsBetween(probe.flows(), IPPROTO_UDP, tx.port(), rx.port());
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_EQ(mine[0].at("packets"), "7");
    EXPECT_EQ(mine[0].at("bytes"), "896");
    EXPECT_EQ(mine[0].at("end_reason"), "forced") << "flushed at shutdown";
}

TEST(RawRowprobe, SigtermWhileTrafficKeepsArrivingStillDrainsWhatWasCaptured) {
    REQUIRE_PACKET_SOCKETS();
    const PrivateLoopback ownLoopback;
    // Small blocks and a steady stream of other traffic: at the signal the ring almost always
    // holds a retired block, so the read in progress returns packets. The input must still be
    // read until it ends, or the blocks behind it (and the one being filled) are lost.
    test::live::Rowprobe probe({"raw;ifc=lo;block-size=65536;blocks=256"});
    ASSERT_TRUE(probe.started()) << probe.finish(0, 1).err;
    std::atomic<bool> flooding{true};
    std::thread flood([&] {
        UdpSocket sink;
        UdpSocket source;
        while (flooding.load()) {
            for (int i = 0; i < 16; ++i) source.sendTo(sink.port(), 1000);
            std::this_thread::sleep_for(1ms);
        }
    });
    std::this_thread::sleep_for(200ms);
    UdpSocket rx;
    UdpSocket tx;
    for (int i = 0; i < 7; ++i) tx.sendTo(rx.port(), 100);
    ASSERT_EQ(rx.receive(7, 5000ms), 7u) << "captured before the signal";
    const test::CommandResult r = probe.finish(SIGTERM);
    flooding = false;
    flood.join();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto mine = test::live::flowsBetween(probe.flows(), IPPROTO_UDP, tx.port(), rx.port());
    ASSERT_EQ(mine.size(), 1u) << "the flow captured before SIGTERM is exported";
    EXPECT_EQ(mine[0].at("packets"), "7");
    EXPECT_EQ(mine[0].at("bytes"), "896");
}

}  // namespace
}  // namespace rowprobe
