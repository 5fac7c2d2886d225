#include "cache/frag_cache.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "cache/hash.hpp"

namespace rowprobe::storage {

FragCache::FragCache(std::size_t size, TimeNs timeout, std::uint64_t seed)
    : m_entries(std::max<std::size_t>(size, 1)), m_timeout(timeout), m_seed(seed) {}

FragCache::Key FragCache::keyOf(const ParsedPacket& pkt) noexcept {
    Key k;
    k.src = pkt.srcAddr();
    k.dst = pkt.dstAddr();
    k.id = pkt.frag.id;
    k.vlan = pkt.key.vlan;
    k.proto = pkt.key.proto;
    k.ipVersion = pkt.key.ipVersion;
    return k;
}

FragCache::Entry& FragCache::entryFor(const Key& key) noexcept {
    const std::uint64_t h = XXH3_64bits_withSeed(&key, sizeof(Key), m_seed);
    return m_entries[h % m_entries.size()];
}

void FragCache::process(ParsedPacket& pkt, CacheStats& stats) noexcept {
    const Key key = keyOf(pkt);
    Entry& e = entryFor(key);
    if (pkt.frag.offset == 0) {  // the first fragment carries the transport header
        e.key = key;
        e.ts = pkt.ts;
        e.srcPort = pkt.srcPort();
        e.dstPort = pkt.dstPort();
        e.used = true;
        return;
    }
    const TimeNs age = pkt.ts >= e.ts ? pkt.ts - e.ts : e.ts - pkt.ts;
    if (!e.used || !(e.key == key) || age >= m_timeout) {
        ++stats.fragmentsNoPorts;
        return;
    }
    setPorts(pkt, e.srcPort, e.dstPort);
    pkt.hasPorts = true;
    ++stats.fragmentsFilled;
}

void setPorts(ParsedPacket& pkt, std::uint16_t srcPort, std::uint16_t dstPort) noexcept {
    FlowKey& k = pkt.key;
    if (!pkt.fromA) {  // back to packet orientation: A = sender
        std::swap(k.addrA, k.addrB);
    }
    k.portA = srcPort;
    k.portB = dstPort;
    const int c = std::memcmp(k.addrA.data(), k.addrB.data(), k.addrA.size());
    const bool swap = c > 0 || (c == 0 && k.portA > k.portB);
    if (swap) {
        std::swap(k.addrA, k.addrB);
        std::swap(k.portA, k.portB);
    }
    pkt.fromA = !swap;
}

}  // namespace rowprobe::storage
