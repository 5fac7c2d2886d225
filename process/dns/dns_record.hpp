// The dns plugin's per-message record and how one DNS payload fills it (ipfixprobe 5.7's
// semantics), kept apart from the plugin glue so it is tested alone.
//
//   header ─▶ id, answer count, rcode
//   first question ─▶ name (≤ 127 bytes), type, class
//   first answer ─▶ TTL, RDATA as text (≤ 159 bytes; its length is DNS_RLENGTH)
//   additional OPT ─▶ EDNS UDP payload size, DO bit
//
// "Parsed" follows ipfixprobe: a message whose sections end early still counts (the fields read
// so far are kept); a name that cannot be decoded drops the message.
#pragma once

#include <cstdint>
#include <span>

namespace rowprobe::dns {

struct DnsRecord {
    std::uint16_t id = 0;
    std::uint16_t answers = 0;
    std::uint8_t rcode = 0;
    std::uint8_t dnssecOk = 0;  ///< EDNS DO bit
    std::uint16_t qtype = 0;
    std::uint16_t qclass = 0;
    std::uint16_t rdataLen = 0;  ///< bytes of `rdata` used (DNS_RLENGTH)
    std::uint16_t ednsSize = 0;  ///< EDNS requested UDP payload size (DNS_PSIZE)
    std::uint32_t ttl = 0;
    char qname[128] = {};  ///< NUL-terminated
    char rdata[160] = {};  ///< rdataLen bytes (HINFO/ISDN may hold NULs)
};

/// Fills `rec` from one L4 payload (`tcp`: with the 2-byte length prefix). Returns true when
/// the message counts as parsed; `rec` may have been written partly either way.
bool applyDnsPayload(std::span<const std::uint8_t> payload, bool tcp, DnsRecord& rec) noexcept;

}  // namespace rowprobe::dns
