#include "distributor.hpp"

#include <cstring>

namespace rowprobe::core {

namespace {

constexpr std::uint64_t kSeed = 0x6a09e667f3bcc909ULL;  // not the flow table's seed

constexpr std::uint64_t mix(std::uint64_t h) noexcept {  // Murmur3's 64-bit finaliser
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

}  // namespace

FlowDistributor::FlowDistributor(std::size_t queues, const ParserConfig& parser)
    : m_queues(queues == 0 ? 1 : queues), m_parser(parser), m_routes(kFragmentRoutes) {}

std::uint64_t FlowDistributor::flowHash(const FlowKey& key) noexcept {
    std::array<std::uint64_t, sizeof(FlowKey) / 8> words{};
    std::memcpy(words.data(), &key, sizeof(FlowKey));
    std::uint64_t h = kSeed;
    for (const std::uint64_t w : words) h = (h ^ w) * 0x9fb21c651e98df25ULL ^ (h >> 29);
    return mix(h);
}

std::size_t FlowDistributor::pick(const RawPacket& raw, LinkType link) noexcept {
    if (m_queues == 1) return 0;
    if (m_parser.tunnels == TunnelMode::Both) {
        // The outer tunnel flow and the inner flows of one packet must meet on one queue: a
        // protocol that may carry a tunnel goes by its outer address pair (ports left out, so
        // VXLAN's per-flow source ports and fragments stay together too).
        ParserConfig outer = m_parser;
        outer.tunnels = TunnelMode::Outer;
        if (!parsePacket(raw, link, outer, m_packet, m_anomalies)) return 0;
        const std::uint8_t proto = m_packet.key.proto;
        if (proto == 17 || proto == 47 || proto == 4 || proto == 41) {
            FlowKey pair = m_packet.key;
            pair.portA = 0;
            pair.portB = 0;
            return queueOf(pair);
        }
        if (m_packet.frag.isFragment) return routeFragment(m_packet);
        return queueOf(m_packet.key);
    }
    if (!parsePacket(raw, link, m_parser, m_packet, m_anomalies)) return 0;
    if (m_packet.frag.isFragment) return routeFragment(m_packet);
    return queueOf(m_packet.key);
}

std::size_t FlowDistributor::routeFragment(const ParsedPacket& pkt) noexcept {
    FragmentRoute key;
    key.src = pkt.srcAddr();
    key.dst = pkt.dstAddr();
    key.id = pkt.frag.id;
    key.vlan = pkt.key.vlan;
    key.proto = pkt.key.proto;
    std::uint64_t h =
        kSeed ^ (std::uint64_t{key.id} << 24) ^ (std::uint64_t{key.proto} << 8) ^ key.vlan;
    for (std::size_t i = 0; i < 16; i += 8) {
        std::uint64_t a = 0;
        std::uint64_t b = 0;
        std::memcpy(&a, key.src.data() + i, 8);
        std::memcpy(&b, key.dst.data() + i, 8);
        h = mix(h ^ a) ^ b;
    }
    FragmentRoute& route = m_routes[mix(h) & (kFragmentRoutes - 1)];
    const std::size_t ownQueue = queueOf(pkt.key);  // full key for a first fragment, else no ports
    if (pkt.frag.offset == 0) {
        route = key;
        route.queue = static_cast<std::uint8_t>(ownQueue);
        route.ts = pkt.ts;
        route.used = true;
        return ownQueue;
    }
    const TimeNs age = pkt.ts >= route.ts ? pkt.ts - route.ts : route.ts - pkt.ts;
    const bool same = route.used && route.id == key.id && route.proto == key.proto &&
                      route.vlan == key.vlan && route.src == key.src && route.dst == key.dst;
    return same && age < kFragmentTimeout ? route.queue : ownQueue;
}

}  // namespace rowprobe::core
