// Fragment cache: gives non-first IP fragments the ports of their datagram's first fragment,
// so all fragments of a datagram count into the same flow (ipfixprobe's fe/fs/ft options).
//
//   first fragment (offset 0, ports known)  ──store──▶ entry[h(src,dst,id,proto,vlan) % size]
//                                                       = {key, ports, ts}
//   later fragment (offset > 0, ports 0)    ──lookup─▶ match and ts - entry.ts < timeout ?
//        yes: ports filled, key re-canonicalised, fragmentsFilled++
//        no:  kept as a flow without ports, fragmentsNoPorts++ (Anomaly::FragmentNoPorts)
//
// Layout: one flat array of `size` entries (default 10 007, 56 bytes each, 550 KiB),
// direct-mapped by a seeded XXH3 of the 40-byte fragment key; a newer first fragment
// overwrites whatever shared its index. Allocated once at construction; nothing allocates per
// packet.
//
// Invariants
//   * The fragment key is in packet orientation (src, dst of the IP header): every fragment of a
//     datagram carries the same src, dst, id and protocol.
//   * Entries never vouch for more than `timeout` (default 3 s) of packet time; an entry whose
//     key does not match is a miss, never a wrong fill (full key compare).
//   * Filling keeps FlowKey canonical: ports are placed by the packet's direction and the
//     (addr, port) pairs re-ordered exactly like the parser does, so the filled fragment finds
//     the flow of its first fragment.
//   * A fragment that arrives before its first fragment cannot be fixed later (the table has
//     already counted it): it stays a port-less flow, counted as FragmentNoPorts.
//
// Thread ownership: owned by one flow table, used by its worker only.
// Costs: one hash and one entry (1-2 cache lines) per fragment; nothing for other packets
// (the caller tests pkt.frag.isFragment first).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rowprobe/packet.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::storage {

class FragCache {
public:
    /// `size` entries (>= 1), first fragments usable for `timeout` ns, hashes seeded by `seed`.
    FragCache(std::size_t size, TimeNs timeout, std::uint64_t seed);

    /// For a fragment (pkt.frag.isFragment): remembers the ports of a first fragment, or fills
    /// the ports of a later one. Counts into stats.fragmentsFilled / fragmentsNoPorts.
    void process(ParsedPacket& pkt, CacheStats& stats) noexcept;

    std::size_t size() const noexcept { return m_entries.size(); }

private:
    struct Key {
        std::array<std::uint8_t, 16> src{};
        std::array<std::uint8_t, 16> dst{};
        std::uint32_t id = 0;
        std::uint16_t vlan = 0;
        std::uint8_t proto = 0;
        std::uint8_t ipVersion = 0;
        friend bool operator==(const Key&, const Key&) = default;
    };
    static_assert(sizeof(Key) == 40, "fragment key is hashed as 40 raw bytes");

    struct Entry {
        Key key;
        TimeNs ts = 0;
        std::uint16_t srcPort = 0;
        std::uint16_t dstPort = 0;
        bool used = false;
    };

    static Key keyOf(const ParsedPacket& pkt) noexcept;
    Entry& entryFor(const Key& key) noexcept;

    std::vector<Entry> m_entries;
    TimeNs m_timeout;
    std::uint64_t m_seed;
};

/// Puts (src, srcPort) → (dst, dstPort) of a packet back into canonical FlowKey order, setting
/// pkt.fromA: the parser's rule, (addrA, portA) <= (addrB, portB) compared as bytes.
void setPorts(ParsedPacket& pkt, std::uint16_t srcPort, std::uint16_t dstPort) noexcept;

}  // namespace rowprobe::storage
