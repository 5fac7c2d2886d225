// FlowDistributor: the software counterpart of symmetric RSS, for `-q N` with one input that
// cannot itself be shared (a pcap file, gen, a pcap interface). One reader thread reads blocks
// from the input and copies every frame into the open block of the worker pick() names.
//
//   input ──read──▶ scratch block ──pick(frame)──▶ open block of worker q ──full──▶ worker q
//
// What pick() guarantees (the properties a per-worker flow table needs):
// * Both directions of a flow go to the same worker: the hash is taken over the canonical,
//   direction-free FlowKey that rowprobe::parsePacket builds (addresses, ports, protocol, IP
//   version and, unless --no-vlan-key, the VLAN id: exactly the flow table's key).
// * Per-flow packet order is kept: frames are handed on in reading order, each worker gets its
//   blocks in order, and a worker processes its blocks in order.
// * All fragments of a datagram go to the worker of their flow, so that worker's fragment cache
//   can give them their ports. The first fragment (offset 0) carries the ports: it is routed by
//   the full key like any packet of the flow, and its (src, dst, IP id, protocol, VLAN) is
//   remembered in a small direct-mapped table (4096 entries, 3 s of packet time) together with
//   the chosen worker. A later fragment of the same datagram follows it. A fragment whose first
//   fragment was not seen (or was forgotten) is routed by its own key, whose ports are 0: that
//   is the key of the port-less flow it will be kept in, so all such orphans of an address pair
//   still meet on one worker. Hashing only the addresses for every packet would also keep
//   fragments together, but puts all flows of a busy host pair on one worker.
// * Non-IP frames go to worker 0, which counts them as skipped.
// * --tunnel inner routes by the innermost key. --tunnel both routes UDP, GRE and IP-in-IP by
//   the outer address pair alone, so that a tunnel's outer flow and all its inner flows (whose
//   outer source ports may differ per direction, as VXLAN's do) are counted by one worker.
// The hash is independent of the flow table's (different function and seed, top 32 bits
// reduced by multiply-shift), so each worker's table still spreads its flows over all rows.
//
// Thread ownership: one instance per reader thread. Costs: one parse (~20-40 ns; the worker
// parses again) and a ~3 ns hash per frame, plus the frame copy into the worker's block.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe::core {

class FlowDistributor {
public:
    FlowDistributor(std::size_t queues, const ParserConfig& parser);

    /// The worker (0 .. queues-1) this frame belongs to.
    std::size_t pick(const RawPacket& raw, LinkType link) noexcept;

    /// The symmetric hash pick() uses for a canonical key (tests).
    static std::uint64_t flowHash(const FlowKey& key) noexcept;
    std::size_t queueOf(const FlowKey& key) const noexcept { return reduce(flowHash(key)); }

    /// How long a first fragment routes the later fragments of its datagram.
    static constexpr TimeNs kFragmentTimeout = 3 * kNsPerSec;

private:
    struct FragmentRoute {
        std::array<std::uint8_t, 16> src{};
        std::array<std::uint8_t, 16> dst{};
        std::uint32_t id = 0;
        std::uint16_t vlan = 0;
        std::uint8_t proto = 0;
        std::uint8_t queue = 0;
        TimeNs ts = 0;
        bool used = false;
    };
    static constexpr std::size_t kFragmentRoutes = 4096;

    std::size_t reduce(std::uint64_t h) const noexcept {
        return static_cast<std::size_t>(((h >> 32) * m_queues) >> 32);
    }
    std::size_t routeFragment(const ParsedPacket& pkt) noexcept;

    std::uint64_t m_queues;
    ParserConfig m_parser;
    ParsedPacket m_packet;
    AnomalyCounters m_anomalies;  ///< discarded: the worker counts anomalies when it parses
    std::vector<FragmentRoute> m_routes;
};

}  // namespace rowprobe::core
