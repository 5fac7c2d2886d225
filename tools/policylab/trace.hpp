// A capture decoded once into memory, shared read-only by every configuration the policy lab
// and the tuner replay.
//
//   pcap file ──libpcap──▶ frames, in blocks of 64 (as the pcap input delivers them)
//             ──rowprobe::parsePacket──▶ ParsedPacket[]   (frame pointers cleared: never read)
//                                         blockEnds[]      one entry per block of 64 frames
//                                         keyId[]          dense id of each packet's canonical key
//                                         keys[]           id → FlowKey
//
// Replaying block by block with one processBatch per block reproduces exactly what the rowprobe
// worker does with `-i pcap;file=...` (same batches, same sweep schedule), so a lab run of a
// policy gives the same counters as rowprobe's own statistics for that policy.
//
// Sessions. `Sessions` splits each key's packets into the flows an unbounded table would build
// under the table's rules (docs/design/flow-cache.md; flow_table.hpp): a packet starts a new flow
// if it comes `inactive` or more after the previous packet of its key, `active` or more after the
// flow's first packet, or is a SYN without ACK sent in a direction whose flags already hold FIN or
// RST. No policy can avoid those flow starts; every other miss is the policy's doing. For each
// packet: whether it starts a flow, and the index of the next packet of the same flow (the "next
// use" Belady's optimum needs).
//
// Thread ownership: built on one thread, then only read (any number of replay threads).
// Costs: ~120 bytes per packet (ParsedPacket) + 8 per packet for keyId/next; a 10^6-packet
// capture takes ~130 MB and decodes in well under a second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe::lab {

/// Hash of a FlowKey's 40 bytes (for the lab's own maps; not a table hash).
struct FlowKeyHash {
    std::size_t operator()(const FlowKey& k) const noexcept;
};

struct Trace {
    std::string source;
    std::vector<ParsedPacket> packets;     ///< parsed packets in capture order
    std::vector<std::uint32_t> blockEnds;  ///< end index (exclusive) of each block of frames
    std::vector<std::uint32_t> keyId;      ///< per packet
    std::vector<FlowKey> keys;             ///< per key id
    std::unordered_map<FlowKey, std::uint32_t, FlowKeyHash> idOfKey;
    std::uint64_t frames = 0;  ///< frames read (parsed or not)
    AnomalyCounters anomalies;

    /// The id of `key`, or UINT32_MAX when the capture never had it.
    std::uint32_t find(const FlowKey& key) const;
};

/// Reads a pcap/pcapng capture with libpcap (nanosecond timestamps), parses every frame with the
/// project's parser. Throws std::runtime_error naming the file on failure.
Trace loadCapture(const std::string& path, const ParserConfig& parser = {});

/// Fills keyId / keys / idOfKey from trace.packets (used by loaders of other formats).
void assignKeyIds(Trace& trace);

inline constexpr std::uint32_t kNoNext = UINT32_MAX;

/// Flow boundaries of an unbounded table (see the essay above).
struct Sessions {
    std::vector<std::uint32_t> next;   ///< next packet of the same flow, or kNoNext
    std::vector<std::uint8_t> starts;  ///< 1 when the packet starts a flow
    std::uint64_t flows = 0;           ///< number of flows (= compulsory misses)
};

/// What the flow rules need of one packet.
struct PacketFacts {
    TimeNs ts = 0;
    std::uint32_t key = 0;  ///< dense key id
    std::uint8_t tcpFlags = 0;
    bool fromA = true;
};

/// Sessions of any packet sequence: facts(i) gives packet i's PacketFacts, key ids < keys.
template <class Facts>
Sessions computeSessionsOf(std::size_t count, std::size_t keys, Facts facts, TimeNs inactive,
                           TimeNs active) {
    constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
    struct Open {
        bool open = false;
        bool initiatorIsA = true;
        TimeNs first = 0;
        TimeNs last = 0;
        std::uint8_t flags[2] = {0, 0};
        std::uint32_t lastIndex = 0;
    };
    std::vector<Open> open(keys);
    Sessions s;
    s.next.assign(count, kNoNext);
    s.starts.assign(count, 0);
    for (std::size_t i = 0; i < count; ++i) {
        const PacketFacts p = facts(i);
        Open& f = open[p.key];
        bool starts = !f.open;
        if (!starts) {  // the table's rules (flow_table.hpp endBefore / expiryAt)
            const std::uint8_t seen = f.flags[p.fromA == f.initiatorIsA ? 0 : 1];
            if ((p.tcpFlags & (kSyn | kAck)) == kSyn && (seen & (kFin | kRst)) != 0) starts = true;
            if (p.ts >= f.last && p.ts - f.last >= inactive) starts = true;
            if (p.ts >= f.first && p.ts - f.first >= active) starts = true;
        }
        if (starts) {
            f.open = true;
            f.initiatorIsA = p.fromA;
            f.first = p.ts;
            f.last = p.ts;
            f.flags[0] = p.tcpFlags;
            f.flags[1] = 0;
            s.starts[i] = 1;
            ++s.flows;
        } else {
            s.next[f.lastIndex] = static_cast<std::uint32_t>(i);
            f.flags[p.fromA == f.initiatorIsA ? 0 : 1] |= p.tcpFlags;
            f.last = f.last > p.ts ? f.last : p.ts;
        }
        f.lastIndex = static_cast<std::uint32_t>(i);
    }
    return s;
}

Sessions computeSessions(const Trace& trace, TimeNs inactive, TimeNs active);

/// Total packets per key id.
std::vector<std::uint32_t> packetsPerKey(const Trace& trace);

/// Marks the `topN` key ids with the most packets (ties broken by lower id).
std::vector<std::uint8_t> topKeys(const Trace& trace, std::size_t topN);
/// The same from packet counts per key id.
std::vector<std::uint8_t> topKeysOf(const std::vector<std::uint32_t>& packetsPerKey,
                                    std::size_t topN);

}  // namespace rowprobe::lab
