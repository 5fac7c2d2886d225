#include "traffic_model.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "rowprobe/byte_order.hpp"
#include "rowprobe/errors.hpp"

namespace rowprobe::gen {

namespace {

constexpr std::string_view kPatternNames[] = {"deterministic", "random", "netscan", "portscan",
                                              "zipf"};

constexpr OptionSpec kOptions[] = {
    {.name = "pattern",
     .shortName = "p",
     .type = OptionType::Choice,
     .defaultValue = "random",
     .help = "which flow each packet belongs to: one flow, uniform over the flows, a network "
             "scan, a port scan, or Zipf popularity (rank^-skew)",
     .choices = kPatternNames},
    {.name = "flows",
     .shortName = "f",
     .type = OptionType::Int,
     .defaultValue = "1024",
     .help = "concurrent flows (1 for deterministic)",
     .min = 1,
     .max = 33554432},
    {.name = "packets",
     .shortName = "n",
     .type = OptionType::Int,
     .defaultValue = "10000000",
     .help = "packets in total, then end of input (0 = no limit; unlimited by default when "
             "'duration' is given)",
     .min = 0,
     .max = 999999999999999.0},
    {.name = "duration",
     .shortName = "d",
     .type = OptionType::Duration,
     .help = "packet time in total, then end of input (e.g. 60s)",
     .min = 1e-9,
     .max = 1e9},
    {.name = "packets-per-flow",
     .shortName = "ppf",
     .type = OptionType::Int,
     .help = "a flow ends after this many packets and a new one takes its place (0 = flows live "
             "until the end; default 1 for netscan/portscan, else 0)",
     .min = 0,
     .max = 4294967295.0},
    {.name = "size",
     .shortName = "s",
     .type = OptionType::Int,
     .defaultValue = "64",
     .help = "frame length in bytes without FCS (raised to the headers' length: 54 for "
             "IPv4+TCP, 74 for IPv6+TCP)",
     .min = 42,
     .max = 9000},
    {.name = "snaplen",
     .type = OptionType::Int,
     .defaultValue = "65535",
     .help = "bytes of each frame actually written (headers are never cut)",
     .min = 42,
     .max = 65535},
    {.name = "seed",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "PRNG seed: the same seed and options give the same packets, bit for bit",
     .min = 0,
     .max = 999999999999999.0},
    {.name = "tcp",
     .type = OptionType::Double,
     .defaultValue = "0.5",
     .help = "share of flows that are TCP, the rest UDP",
     .min = 0,
     .max = 1},
    {.name = "ipv6",
     .shortName = "6",
     .type = OptionType::Double,
     .defaultValue = "0",
     .help = "share of flows that are IPv6",
     .min = 0,
     .max = 1},
    {.name = "reverse",
     .shortName = "r",
     .type = OptionType::Double,
     .defaultValue = "0",
     .help = "share of a flow's packets after the first sent back from the destination",
     .min = 0,
     .max = 1},
    {.name = "skew",
     .shortName = "z",
     .type = OptionType::Double,
     .defaultValue = "1.0",
     .help = "Zipf exponent for pattern=zipf (0 = uniform)",
     .min = 0,
     .max = 10},
    {.name = "pps",
     .type = OptionType::Int,
     .defaultValue = "1000000",
     .help = "packet-time rate: timestamps advance 1/pps seconds per packet",
     .min = 1,
     .max = 1e12},
    {.name = "start",
     .type = OptionType::Double,
     .defaultValue = "1700000000",
     .help = "timestamp of the first packet, seconds since the epoch",
     .min = 0,
     .max = 4e9},
    {.name = "fin",
     .type = OptionType::Flag,
     .help = "TCP flows send FIN|ACK with their last packet (needs packets-per-flow >= 2)"},
};

// The splitmix64 finaliser: a bijection on 64 bits.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

// A keyed bijection on [0, 2^40): xor, odd multiply, xorshift and add are each invertible
// modulo 2^40.
constexpr std::uint64_t permute40(std::uint64_t x, std::uint64_t key) noexcept {
    constexpr std::uint64_t kMask = (std::uint64_t{1} << 40) - 1;
    x = (x ^ key) & kMask;
    x = (x * 0x9E3779B97F4A7C15ULL) & kMask;
    x ^= x >> 21;
    x = (x * 0xC2B2AE3D27D4EB4FULL) & kMask;
    x ^= x >> 17;
    x = (x + (key >> 24)) & kMask;
    return x;
}

// Uniform double in [0, 1) from 53 bits of h.
constexpr double unitOf(std::uint64_t h) noexcept {
    return static_cast<double>(h >> 11) * 0x1.0p-53;
}

constexpr std::uint16_t kServerPorts[] = {80,  443,  53,   22,   25,   123, 8080, 3389,
                                          993, 5060, 1194, 8443, 3306, 161, 514,  4739};

// Ones'-complement sum of the big-endian 16-bit words at p (RFC 1071), folded to 16 bits but
// not complemented. Native-order 16-bit loads summed and byte-swapped once at the end (the sum
// is byte-order independent, RFC 1071 §2.B); `len` is even here.
std::uint32_t sum16(const std::uint8_t* p, std::uint32_t len) noexcept {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < len; i += 2) {
        std::uint16_t w;
        std::memcpy(&w, p + i, 2);
        sum += w;
    }
    while ((sum >> 16) != 0) sum = (sum & 0xFFFF) + (sum >> 16);
    auto folded = static_cast<std::uint16_t>(sum);
    if constexpr (std::endian::native == std::endian::little) folded = __builtin_bswap16(folded);
    return folded;
}

std::uint16_t fold(std::uint32_t sum) noexcept {
    while ((sum >> 16) != 0) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum & 0xFFFF);
}

constexpr std::array<std::uint8_t, 6> kMacA = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr std::array<std::uint8_t, 6> kMacB = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
constexpr std::uint8_t kTtl = 64;
constexpr std::uint16_t kTcpWindow = 65535;

// Sequence numbers: deterministic functions of the flow and the packet index (one multiply).
std::uint32_t seqOf(const GenPacket& pkt, bool forward) noexcept {
    const auto base = static_cast<std::uint32_t>(
        ((pkt.serial * 2 + (forward ? 0 : 1)) * 0x9E3779B97F4A7C15ULL) >> 32);
    return base + pkt.index * 1000U;
}

}  // namespace

std::string_view patternName(Pattern p) noexcept {
    return kPatternNames[static_cast<std::size_t>(p)];
}

std::span<const OptionSpec> genOptionSpecs() noexcept { return kOptions; }

GenConfig parseGenConfig(const Options& options) {
    GenConfig c;
    const std::string pattern = options.getString("pattern");
    for (std::size_t i = 0; i < std::size(kPatternNames); ++i) {
        if (pattern == kPatternNames[i]) c.pattern = static_cast<Pattern>(i);
    }
    c.flows = static_cast<std::uint64_t>(options.getInt("flows"));
    if (c.pattern == Pattern::Deterministic) {
        if (options.explicitlySet("flows") && c.flows != 1) {
            options.fail("flows", "pattern 'deterministic' has exactly one flow, got flows=" +
                                      std::to_string(c.flows) + " (use pattern=random)");
        }
        c.flows = 1;
    }
    const bool hasDuration = options.explicitlySet("duration");
    c.duration = hasDuration ? options.getDurationNs("duration") : 0;
    c.packets = static_cast<std::uint64_t>(options.getInt("packets"));
    if (hasDuration && !options.explicitlySet("packets")) c.packets = 0;
    const bool scan = c.pattern == Pattern::NetScan || c.pattern == Pattern::PortScan;
    c.packetsPerFlow = options.explicitlySet("packets-per-flow")
                           ? static_cast<std::uint64_t>(options.getInt("packets-per-flow"))
                           : (scan ? 1 : 0);
    c.size = static_cast<std::uint32_t>(options.getInt("size"));
    c.snaplen = static_cast<std::uint32_t>(options.getInt("snaplen"));
    c.seed = static_cast<std::uint64_t>(options.getInt("seed"));
    c.tcpShare = options.getDouble("tcp");
    c.ipv6Share = options.getDouble("ipv6");
    c.reverseShare = options.getDouble("reverse");
    c.skew = options.getDouble("skew");
    if (options.explicitlySet("skew") && c.pattern != Pattern::Zipf) {
        options.fail("skew", "applies only to pattern=zipf, the pattern is '" + pattern + "'");
    }
    c.pps = static_cast<std::uint64_t>(options.getInt("pps"));
    c.start = static_cast<TimeNs>(std::llround(options.getDouble("start") * 1e9));
    c.fin = options.getFlag("fin");
    if (c.fin && c.packetsPerFlow < 2) {
        options.fail("fin",
                     "needs packets-per-flow >= 2 (the last packet of each flow carries "
                     "the FIN), got packets-per-flow=" +
                         std::to_string(c.packetsPerFlow));
    }
    if (c.fin && c.tcpShare == 0.0) {
        options.fail("fin", "has no effect with tcp=0 (every flow is UDP)");
    }
    return c;
}

GenConfig parseGenString(std::string_view text, std::string_view flag) {
    std::string full(text);
    if (full.rfind("gen", 0) != 0 || (full.size() > 3 && full[3] != ';')) full = "gen;" + full;
    if (full.back() == ';') full.pop_back();
    const PluginString ps = splitPluginString(full, "input");
    const Options options =
        parseOptions("input 'gen'", ps, genOptionSpecs(), "rowprobe -h gen", flag);
    return parseGenConfig(options);
}

TupleKeys tupleKeys(std::uint64_t seed) noexcept {
    return TupleKeys{mix64(seed ^ 0x5851F42D4C957F2DULL), mix64(seed + 0x14057B7EF767814FULL)};
}

FlowTuple flowTuple(const GenConfig& config, std::uint64_t serial) noexcept {
    return flowTuple(config, tupleKeys(config.seed), serial);
}

FlowTuple flowTuple(const GenConfig& config, const TupleKeys& keys, std::uint64_t serial) noexcept {
    const std::uint64_t h1 = mix64(serial * 0x9E3779B97F4A7C15ULL + keys.attr);
    const std::uint64_t h2 = mix64(h1 ^ 0xD6E8FEB86659FD93ULL);
    const std::uint64_t h3 = mix64(h2 + 0xA0761D6478BD642FULL);
    FlowTuple t;
    t.ipVersion = unitOf(h1) < config.ipv6Share ? 6 : 4;
    t.proto = unitOf(h2) < config.tcpShare ? 6 : 17;
    const bool v6 = t.ipVersion == 6;
    switch (config.pattern) {
        case Pattern::Deterministic:
        case Pattern::Random:
        case Pattern::Zipf: {
            if (v6) {
                // fd00::/64 + bijection(serial); destination 2001:db8::/32 + 96 random bits.
                t.src[0] = 0xfd;
                storeBe64(t.src.data() + 8, mix64(serial ^ keys.perm));
                t.srcPort = static_cast<std::uint16_t>(1024 + (h3 >> 48) % 64512);
                storeBe32(t.dst.data(), 0x20010db8U);
                storeBe32(t.dst.data() + 4, static_cast<std::uint32_t>(h3));
                storeBe64(t.dst.data() + 8, h2);
            } else {
                // 10.0.0.0/8 + 24 bits and the source port from a 40-bit bijection of the serial;
                // the destination is outside 10/8.
                const std::uint64_t m = permute40(serial, keys.perm);
                storeBe32(t.src.data(), 0x0A000000U | static_cast<std::uint32_t>(m & 0xFFFFFF));
                t.srcPort = static_cast<std::uint16_t>(m >> 24);
                std::uint32_t dst = static_cast<std::uint32_t>(h3 >> 8);
                std::uint32_t first =
                    11 + static_cast<std::uint32_t>((h3 & 0xFF) % 213);  // 11..223
                if (first == 127) first = 128;
                dst = (first << 24) | (dst & 0xFFFFFF);
                storeBe32(t.dst.data(), dst);
            }
            t.dstPort = kServerPorts[(h3 >> 40) % std::size(kServerPorts)];
            break;
        }
        case Pattern::NetScan: {
            // One source; the destination address counts up; the source port changes only after
            // 2^24 (IPv4) targets, so targets stay unique for 2^40 flows.
            if (v6) {
                t.src[0] = 0xfd;
                t.src[15] = 1;
                storeBe32(t.dst.data(), 0x20010db8U);
                storeBe32(t.dst.data() + 4, 1);
                storeBe64(t.dst.data() + 8, serial);
                t.srcPort = 40000;
            } else {
                storeBe32(t.src.data(), 0x0A000001U);
                storeBe32(t.dst.data(),
                          0x14000000U | static_cast<std::uint32_t>(serial & 0xFFFFFF));
                t.srcPort = static_cast<std::uint16_t>(40000 + (serial >> 24));
            }
            t.dstPort = t.proto == 6 ? 22 : 53;
            break;
        }
        case Pattern::PortScan: {
            if (v6) {
                t.src[0] = 0xfd;
                t.src[15] = 1;
                storeBe32(t.dst.data(), 0x20010db8U);
                t.dst[15] = 1;
            } else {
                storeBe32(t.src.data(), 0x0A000001U);
                storeBe32(t.dst.data(), 0x14000001U);
            }
            t.dstPort = static_cast<std::uint16_t>(1 + serial % 65535);
            t.srcPort = static_cast<std::uint16_t>(40000 + serial / 65535);
            break;
        }
    }
    return t;
}

namespace {

// One frame layout per (IP version, transport): every length is a constant, the checksum loops
// unroll, and the only data-dependent branch left per packet is the switch in writeFrame.
template <bool kV6, bool kTcp>
std::uint32_t writeFrameAs(const GenPacket& pkt, std::uint8_t* dst) noexcept {
    constexpr std::uint32_t kIpHeader = kV6 ? 40 : 20;
    constexpr std::uint32_t kL4Header = kTcp ? 20 : 8;
    constexpr std::uint32_t kHeaders = GenPacket::kEthHeaderLen + kIpHeader + kL4Header;
    constexpr std::uint8_t kProto = kTcp ? 6 : 17;
    const FlowTuple& t = pkt.tuple;
    const std::uint32_t ipLen = pkt.ipLen();
    const std::uint32_t l4Len = ipLen - kIpHeader;
    const std::uint8_t* srcAddr = pkt.forward ? t.src.data() : t.dst.data();
    const std::uint8_t* dstAddr = pkt.forward ? t.dst.data() : t.src.data();
    const std::uint16_t srcPort = pkt.forward ? t.srcPort : t.dstPort;
    const std::uint16_t dstPort = pkt.forward ? t.dstPort : t.srcPort;

    std::uint8_t* p = dst;
    std::memcpy(p, pkt.forward ? kMacB.data() : kMacA.data(), 6);
    std::memcpy(p + 6, pkt.forward ? kMacA.data() : kMacB.data(), 6);
    storeBe16(p + 12, kV6 ? 0x86DD : 0x0800);
    std::uint8_t* ip = p + GenPacket::kEthHeaderLen;
    std::uint32_t pseudo = 0;
    if constexpr (kV6) {
        storeBe32(ip, 0x60000000U);
        storeBe16(ip + 4, static_cast<std::uint16_t>(l4Len));
        ip[6] = kProto;
        ip[7] = kTtl;
        std::memcpy(ip + 8, srcAddr, 16);
        std::memcpy(ip + 24, dstAddr, 16);
        pseudo = sum16(ip + 8, 32);
    } else {
        ip[0] = 0x45;
        ip[1] = 0;
        storeBe16(ip + 2, static_cast<std::uint16_t>(ipLen));
        storeBe16(ip + 4, static_cast<std::uint16_t>(pkt.index));
        storeBe16(ip + 6, 0x4000);  // DF
        ip[8] = kTtl;
        ip[9] = kProto;
        storeBe16(ip + 10, 0);
        std::memcpy(ip + 12, srcAddr, 4);
        std::memcpy(ip + 16, dstAddr, 4);
        storeBe16(ip + 10, fold(sum16(ip, 20)));
        pseudo = sum16(ip + 12, 8);
    }
    pseudo += kProto + l4Len;
    std::uint8_t* l4 = ip + kIpHeader;
    storeBe16(l4, srcPort);
    storeBe16(l4 + 2, dstPort);
    if constexpr (kTcp) {
        storeBe32(l4 + 4, seqOf(pkt, pkt.forward));
        storeBe32(l4 + 8, (pkt.tcpFlags & 0x10) != 0 ? seqOf(pkt, !pkt.forward) : 0);
        l4[12] = 0x50;
        l4[13] = pkt.tcpFlags;
        storeBe16(l4 + 14, kTcpWindow);
        storeBe16(l4 + 16, 0);
        storeBe16(l4 + 18, 0);
        storeBe16(l4 + 16, fold(pseudo + sum16(l4, 20)));  // the payload is zeros
    } else {
        storeBe16(l4 + 4, static_cast<std::uint16_t>(l4Len));
        storeBe16(l4 + 6, 0);
        std::uint16_t sum = fold(pseudo + sum16(l4, 8));
        if (sum == 0) sum = 0xFFFF;  // 0 means "no checksum" in UDP
        storeBe16(l4 + 6, sum);
    }
    if (pkt.capLen > kHeaders) std::memset(p + kHeaders, 0, pkt.capLen - kHeaders);
    return pkt.capLen;
}

}  // namespace

std::uint32_t writeFrame(const GenPacket& pkt, std::uint8_t* dst) noexcept {
    const bool v6 = pkt.tuple.ipVersion == 6;
    const bool tcp = pkt.tuple.proto == 6;
    if (v6) return tcp ? writeFrameAs<true, true>(pkt, dst) : writeFrameAs<true, false>(pkt, dst);
    return tcp ? writeFrameAs<false, true>(pkt, dst) : writeFrameAs<false, false>(pkt, dst);
}

void toParsed(const GenPacket& pkt, ParsedPacket& out) noexcept {
    const FlowTuple& t = pkt.tuple;
    const bool v6 = t.ipVersion == 6;
    const bool tcp = t.proto == 6;
    std::memset(static_cast<void*>(&out), 0, sizeof(ParsedPacket));
    out.ts = pkt.ts;
    out.wireLen = pkt.frameLen;
    out.frame = nullptr;
    out.capLen = pkt.capLen;
    out.ipLen = pkt.ipLen();
    out.dstMac = pkt.forward ? kMacB : kMacA;
    out.srcMac = pkt.forward ? kMacA : kMacB;
    out.ttl = kTtl;
    out.key.proto = t.proto;
    out.key.ipVersion = t.ipVersion;
    const auto& srcAddr = pkt.forward ? t.src : t.dst;
    const auto& dstAddr = pkt.forward ? t.dst : t.src;
    if (v6) {
        out.key.addrA = srcAddr;
        out.key.addrB = dstAddr;
    } else {
        out.key.addrA[10] = out.key.addrA[11] = 0xFF;
        out.key.addrB[10] = out.key.addrB[11] = 0xFF;
        std::memcpy(out.key.addrA.data() + 12, srcAddr.data(), 4);
        std::memcpy(out.key.addrB.data() + 12, dstAddr.data(), 4);
        out.frag.id = static_cast<std::uint16_t>(pkt.index);
    }
    out.key.portA = pkt.forward ? t.srcPort : t.dstPort;
    out.key.portB = pkt.forward ? t.dstPort : t.srcPort;
    const std::uint32_t l3 = GenPacket::kEthHeaderLen;
    const std::uint32_t l4 = l3 + (v6 ? 40U : 20U);
    const std::uint32_t payload = l4 + (tcp ? 20U : 8U);
    const std::uint32_t end = std::min(pkt.capLen, l3 + out.ipLen);
    out.l3Offset = static_cast<std::uint16_t>(l3);
    out.l4Offset = static_cast<std::uint16_t>(l4);
    out.payloadOffset = static_cast<std::uint16_t>(payload);
    out.payloadLen = static_cast<std::uint16_t>(std::min<std::uint32_t>(end - payload, 0xFFFF));
    if (tcp) {
        out.tcpFlags = pkt.tcpFlags;
        out.tcpWindow = kTcpWindow;
    }
    out.hasPorts = true;
    // Canonical order, as the parser: (addrA, portA) <= (addrB, portB), addresses as bytes.
    const int cmp = std::memcmp(out.key.addrA.data(), out.key.addrB.data(), 16);
    const bool swap = cmp > 0 || (cmp == 0 && out.key.portA > out.key.portB);
    if (swap) {
        std::swap(out.key.addrA, out.key.addrB);
        std::swap(out.key.portA, out.key.portB);
    }
    out.fromA = !swap;
}

Xoshiro256::Xoshiro256(std::uint64_t seed) noexcept {
    std::uint64_t x = seed;
    for (auto& s : m_s) {
        x += 0x9E3779B97F4A7C15ULL;
        s = mix64(x);
    }
}

namespace {
// log1p(x) / x and expm1(x) / x, with series near 0 (Apache Commons RNG's helper1/helper2).
double helper1(double x) noexcept {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double helper2(double x) noexcept {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x
                              : 1 + x * 0.5 * (1 + x * (1.0 / 3.0) * (1 + 0.25 * x));
}
}  // namespace

ZipfSampler::ZipfSampler(std::uint64_t n, double s) noexcept : m_n(static_cast<double>(n)), m_s(s) {
    m_hIntegralX1 = hIntegral(1.5) - 1;
    m_hIntegralN = hIntegral(m_n + 0.5);
    m_cut = 2 - hIntegralInverse(hIntegral(2.5) - h(2));
}

double ZipfSampler::hIntegral(double x) const noexcept {
    const double logX = std::log(x);
    return helper2((1 - m_s) * logX) * logX;
}

double ZipfSampler::hIntegralInverse(double x) const noexcept {
    double t = x * (1 - m_s);
    if (t < -1) t = -1;
    return std::exp(helper1(t) * x);
}

std::uint64_t ZipfSampler::sample(Xoshiro256& rng) const noexcept {
    for (;;) {
        const double u = m_hIntegralN + rng.unit() * (m_hIntegralX1 - m_hIntegralN);
        const double x = hIntegralInverse(u);
        double k = std::floor(x + 0.5);
        if (k < 1) k = 1;
        if (k > m_n) k = m_n;
        if (k - x <= m_cut || u >= hIntegral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k);
    }
}

TrafficModel::TrafficModel(const GenConfig& config)
    : m_config(config),
      m_keys(tupleKeys(config.seed)),
      m_pickRng(config.seed),
      m_dirRng(mix64(config.seed ^ 0x2545F4914F6CDD1DULL)),
      m_zipf(config.flows, config.skew > 0 ? config.skew : 1.0),
      m_slots(config.flows) {
    for (std::size_t i = 0; i < m_slots.size(); ++i) m_slots[i].serial = i;
    m_nextSerial = config.flows;
    m_limit = config.packets != 0 ? config.packets : std::numeric_limits<std::uint64_t>::max();
    m_endTs =
        config.duration != 0 ? config.start + config.duration : std::numeric_limits<TimeNs>::max();
    m_ts = config.start;
    m_stepNs = kNsPerSec / config.pps;
    m_stepRem = kNsPerSec % config.pps;
    for (auto& a : m_ahead) a = pickSlot();
    m_tupleCache = std::make_unique<CachedTuple[]>(kTupleCache);
    m_tupleCache[0].serial = 1;  // every other entry's serial (0) misses its index
}

std::size_t TrafficModel::pickSlot() noexcept {
    switch (m_config.pattern) {
        case Pattern::Deterministic:
            return 0;
        case Pattern::Random:
            return static_cast<std::size_t>(m_pickRng.below(m_config.flows));
        case Pattern::NetScan:
        case Pattern::PortScan: {
            const std::size_t s = m_roundRobin;
            m_roundRobin = s + 1 == m_slots.size() ? 0 : s + 1;
            return s;
        }
        case Pattern::Zipf:
            if (m_config.skew == 0.0)
                return static_cast<std::size_t>(m_pickRng.below(m_config.flows));
            return static_cast<std::size_t>(m_zipf.sample(m_pickRng) - 1);
    }
    return 0;
}

bool TrafficModel::next(GenPacket& out) noexcept {
    if (m_emitted >= m_limit || m_ts >= m_endTs) return false;
    Slot& slot = m_slots[m_ahead[m_aheadPos]];
    const std::size_t later = pickSlot();
    m_ahead[m_aheadPos] = later;
    m_aheadPos = (m_aheadPos + 1) % kAhead;
    __builtin_prefetch(&m_slots[later], 1, 3);
    out.serial = slot.serial;
    CachedTuple& cached = m_tupleCache[slot.serial & (kTupleCache - 1)];
    if (cached.serial != slot.serial) {
        cached.serial = slot.serial;
        cached.tuple = flowTuple(m_config, m_keys, slot.serial);
    }
    out.tuple = cached.tuple;
    out.index = slot.sent;
    out.forward =
        slot.sent == 0 || m_config.reverseShare == 0.0 || m_dirRng.unit() >= m_config.reverseShare;
    const std::uint32_t headers = headerLength(out.tuple);
    out.frameLen = std::max(m_config.size, headers);
    out.capLen = std::min(out.frameLen, std::max(m_config.snaplen, headers));
    ++slot.sent;
    out.last = m_config.packetsPerFlow != 0 && slot.sent == m_config.packetsPerFlow;
    if (out.tuple.proto == 6) {
        if (slot.sent == 1) {
            out.tcpFlags = 0x02;  // SYN
        } else if (!out.forward && slot.sentReverse == 0) {
            out.tcpFlags = 0x12;  // SYN|ACK
        } else {
            out.tcpFlags = 0x10;  // ACK
        }
        if (out.last && m_config.fin) out.tcpFlags |= 0x11;  // FIN|ACK
    } else {
        out.tcpFlags = 0;
    }
    if (!out.forward) ++slot.sentReverse;
    if (out.last) {
        slot.serial = m_nextSerial++;
        slot.sent = 0;
        slot.sentReverse = 0;
    }
    out.ts = m_ts;
    m_ts += m_stepNs;
    m_acc += m_stepRem;
    if (m_acc >= m_config.pps) {
        m_acc -= m_config.pps;
        ++m_ts;
    }
    ++m_emitted;
    return true;
}

}  // namespace rowprobe::gen
