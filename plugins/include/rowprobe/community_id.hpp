// Community ID v1 (corelight/community-id-spec): a flow identifier that Zeek, Suricata, nDPI
// and Elastic compute the same way, so records of one flow from different tools can be joined.
//
//   "1:" + base64(SHA-1(seed (u16 BE) . addrA . addrB . proto (u8) . 0x00 . portA . portB))
//
// * Endpoints are ordered so that the smaller (address, port) comes first (addresses compared
//   as bytes, ports when the addresses are equal); IPv4 addresses are hashed as 4 bytes.
// * ICMP / ICMPv6: the "ports" are the type and the counterpart type of request/reply pairs
//   (echo 8<->0, ...), then ordered like ports; other types are one-way: (type, code), never
//   reordered.
// * TCP, UDP, SCTP, ICMP and ICMPv6 carry ports; for any other protocol the input ends after
//   the pad byte and only the addresses are ordered.
//
// Cost: one SHA-1 of at most 40 bytes (libcrypto) and a 20-byte base64, about 0.3 us; meant for
// exported records (the export thread), never per packet. Thread-safe, no allocation in the
// char* form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "rowprobe/flow_record.hpp"

namespace rowprobe {

/// Length of a Community ID v1 string: "1:" + 28 base64 characters.
inline constexpr std::size_t kCommunityIdLength = 30;

/// The endpoints of one flow as Community ID hashes them. Addresses are 4 or 16 bytes.
struct CommunityIdTuple {
    std::span<const std::uint8_t> srcAddr;
    std::span<const std::uint8_t> dstAddr;
    std::uint8_t proto = 0;
    std::uint16_t srcPort = 0;  ///< ICMP / ICMPv6: the type
    std::uint16_t dstPort = 0;  ///< ICMP / ICMPv6: the code
};

/// Writes the Community ID of `tuple` (kCommunityIdLength characters, no terminator) to `out`
/// and returns the end. Returns `out` unchanged (nothing written) when an address is neither 4
/// nor 16 bytes or the two differ in length.
char* communityId(char* out, const CommunityIdTuple& tuple, std::uint16_t seed) noexcept;

/// The Community ID of an exported record: IPv4-mapped addresses are hashed as IPv4, ICMP
/// type/code come from the record's first forward ICMP header (icmpTypeCode[0]).
char* communityId(char* out, const FlowRecord& record, std::uint16_t seed) noexcept;

/// Convenience forms returning a string (empty when the tuple is invalid).
std::string communityId(const CommunityIdTuple& tuple, std::uint16_t seed);
std::string communityId(const FlowRecord& record, std::uint16_t seed);

}  // namespace rowprobe
