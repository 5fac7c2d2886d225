// The passivedns plugin's records — one per A, AAAA or PTR answer of a DNS response — and how a
// response payload yields them (ipfixprobe 5.7's semantics, with the IPv6 PTR address decoded
// correctly, see README). Uses the dns plugin's message parser (process/common/dns/dns_parser.hpp).
//
//   A / AAAA answer ─▶ { id, type, owner name, TTL, address from RDATA }
//   PTR answer      ─▶ { id, type, target name, TTL, address from the in-addr/ip6.arpa owner }
//
// The walk stops at the first answer whose name cannot be decoded or that runs past the end of
// the message; the answers before it are still reported.
#pragma once

#include <cstdint>
#include <span>

#include "process/common/dns/dns_parser.hpp"

namespace rowprobe::dns {

struct PassiveDnsRecord {
    std::uint16_t id = 0;
    std::uint16_t type = 0;  ///< 1 (A), 28 (AAAA) or 12 (PTR)
    std::uint32_t ttl = 0;
    IpAddress ip;
    char name[255] = {};  ///< NUL-terminated, at most 254 bytes
};

/// Calls onRecord(const PassiveDnsRecord&) for each A/AAAA/PTR answer of the message in
/// `payload` (`tcp`: with the 2-byte length prefix). Returns the number of records reported.
template <class F>
std::size_t forEachPassiveDnsRecord(std::span<const std::uint8_t> payload, bool tcp,
                                    F&& onRecord) noexcept;

namespace detail {
/// Fills `rec` from answer `rr`; false if it is not a usable A/AAAA/PTR answer, and `stop` set
/// when the walk must end (undecodable name).
bool passiveDnsFromAnswer(std::span<const std::uint8_t> msg, const DnsHeader& h, const DnsRr& rr,
                          PassiveDnsRecord& rec, bool& stop) noexcept;
}  // namespace detail

template <class F>
std::size_t forEachPassiveDnsRecord(std::span<const std::uint8_t> payload, bool tcp,
                                    F&& onRecord) noexcept {
    const auto msg = dnsMessage(payload, tcp);
    DnsHeader h;
    if (!readHeader(msg, h)) return 0;
    DnsCursor cursor(msg, h);
    DnsQuestion q;
    DnsStatus st;
    while ((st = cursor.nextQuestion(q)) == DnsStatus::Ok) {
    }
    if (st != DnsStatus::End) return 0;
    std::size_t count = 0;
    DnsRr rr;
    while (cursor.nextRr(rr) == DnsStatus::Ok && cursor.section() == 0) {
        PassiveDnsRecord rec;
        bool stop = false;
        if (detail::passiveDnsFromAnswer(msg, h, rr, rec, stop)) {
            onRecord(static_cast<const PassiveDnsRecord&>(rec));
            ++count;
        }
        if (stop) break;
    }
    return count;
}

}  // namespace rowprobe::dns
