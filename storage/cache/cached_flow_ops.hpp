// What happens to one CachedFlow (row.hpp) on the packet path and at export, as free inline
// functions: they know neither the policy nor the row length, so every FlowTable<P, L>
// instantiation shares them.
//
//   startFlow(f, pkt, h)        a new flow's record from its first packet
//   addPacket(f, pkt, dir)      a packet joins the flow in direction dir (0 = from initiator)
//   makeFlowRecord(f, why, ...) the oriented FlowRecord (src = initiator) an export pushes
//
// Thread ownership: whoever holds the flow's row (the worker; under expiry=thread the export
// thread for the records it detaches under the row's lock). No allocation, no branch beyond
// the per-direction first-packet test and the tunnel test.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cache/row.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::storage {

/// Writes every field of `f` the table reads for a new flow (the record is never zeroed).
inline void startFlow(CachedFlow& f, const ParsedPacket& pkt, std::uint64_t h) noexcept {
    f.key = pkt.key;
    f.timeFirst = pkt.ts;
    f.timeLast = pkt.ts;
    f.packets = {1, 0};
    f.bytes = {pkt.ipLen, 0};
    f.hashHi = static_cast<std::uint32_t>(h >> 32);
    f.icmpTypeCode = {pkt.icmpTypeCode, 0};
    f.tcpFlags = {pkt.tcpFlags, 0};
    f.ttl = {pkt.ttl, 0};
    f.srcMac = pkt.srcMac;
    f.dstMac = pkt.dstMac;
    f.initiatorIsA = pkt.fromA;
    f.tunnelled = pkt.tunnel.type != TunnelType::None;
}

inline void addPacket(CachedFlow& f, const ParsedPacket& pkt, std::size_t dir) noexcept {
    if (f.packets[dir] == 0) {
        f.ttl[dir] = pkt.ttl;
        f.icmpTypeCode[dir] = pkt.icmpTypeCode;
    }
    ++f.packets[dir];
    f.bytes[dir] += pkt.ipLen;
    f.tcpFlags[dir] |= pkt.tcpFlags;
    f.timeLast = std::max(f.timeLast, pkt.ts);
}

/// The oriented FlowRecord of a cached flow ending with `why`; `tunnel` is the flow's tunnel
/// facts, read only when the flow is tunnelled.
inline FlowRecord makeFlowRecord(const CachedFlow& f, EndReason why, std::uint8_t queue,
                                 const FlowTunnel& tunnel) noexcept {
    FlowRecord out;
    const bool a = f.initiatorIsA;
    out.srcAddr = a ? f.key.addrA : f.key.addrB;
    out.dstAddr = a ? f.key.addrB : f.key.addrA;
    out.srcPort = a ? f.key.portA : f.key.portB;
    out.dstPort = a ? f.key.portB : f.key.portA;
    out.timeFirst = f.timeFirst;
    out.timeLast = f.timeLast;
    out.bytes = f.bytes;
    out.packets = f.packets;
    out.vlan = f.key.vlan;
    out.icmpTypeCode = f.icmpTypeCode;
    out.srcMac = f.srcMac;
    out.dstMac = f.dstMac;
    out.tcpFlags = f.tcpFlags;
    out.ttl = f.ttl;
    out.proto = f.key.proto;
    out.ipVersion = f.key.ipVersion;
    out.endReason = why;
    out.queue = queue;
    if (f.tunnelled) out.tunnel = tunnel;
    return out;
}

}  // namespace rowprobe::storage
