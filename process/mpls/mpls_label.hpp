// The outermost MPLS label stack entry of a frame, found again from the bytes the parser
// already walked (the frame's start up to the IP header, ParsedPacket::l3Offset).
//
//   frame: [ link header ][ VLAN tags ... ][ EtherType 8847/8848 ][ entry ][ entry ] ... [ IP
//          0                                                      ^ top              ^ l3Offset
//
// The packet parser does not keep the MPLS entries (it only skips them), and a process plugin
// does not know the link type, so the reader tries the link headers that can carry MPLS —
// Ethernet (EtherType at byte 12) and Linux cooked captures (SLL: protocol at byte 14, SLL2:
// at byte 0) — walks the VLAN tags and the label stack, and accepts a reading only when the
// stack's bottom entry (S bit set) ends exactly at the IP header the parser found. Bounded by
// the frame: never reads at or past `l3Offset`.
#pragma once

#include <cstdint>
#include <span>

namespace rowprobe::mpls {

/// The top label stack entry (label << 12 | TC << 9 | S << 8 | TTL), or 0 when the bytes
/// before the IP header are not a link header followed by an MPLS label stack.
std::uint32_t topLabelEntry(std::span<const std::uint8_t> beforeIp) noexcept;

}  // namespace rowprobe::mpls
