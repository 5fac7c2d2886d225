// The dnssd plugin's per-flow record: the service names a host asks for and the services it
// announces over multicast DNS (ipfixprobe 5.7's dnssd semantics), built from DNS messages with
// the shared parser (process/common/dns/dns_parser.hpp).
//
//   message ─questions───────────────▶ queries:   name (no "arpa"), each once
//           ─answers (responses only),
//            authority (always),
//            additional (responses only,
//            not OPT): SRV/HINFO/TXT ──▶ responses: one entry per owner name (no "arpa"):
//                                         SRV → port, target   HINFO → cpu, os
//                                         TXT → "k=v:k=v:" (only with the txt option, all
//                                               strings or a whitelist of keys per service)
//
// Text export (ipfixprobe's): queries "q1;q2;", responses "name;port;target;cpu:os;txt;" per
// entry (port -1 when no SRV was seen; ";" alone when no HINFO).
//
// DnssdRecord is the tier-2 record (about 3.6 kB): at most kMaxQueries queries and
// kMaxResponses responses whose strings live in one arena of kArenaBytes; what does not fit
// is counted in `dropped` and not exported (ipfixprobe keeps unbounded lists). A message that
// runs past its end keeps what was read before (ipfixprobe's "return 1"); an undecodable name
// makes the message fail, and a flow whose first message fails gets no record.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rowprobe::dns {

inline constexpr std::size_t kDnssdMaxQueries = 32;
inline constexpr std::size_t kDnssdMaxResponses = 16;
inline constexpr std::size_t kDnssdArenaBytes = 3072;
/// Longest TXT text kept from one TXT record.
inline constexpr std::size_t kDnssdMaxTxt = 512;

struct DnssdSlice {
    std::uint16_t off = 0;
    std::uint16_t len = 0;
};

struct DnssdResponse {
    DnssdSlice name;
    std::int32_t srvPort = -1;
    DnssdSlice target;
    DnssdSlice hinfo[2];
    DnssdSlice txt;
};

struct DnssdRecord {
    std::uint16_t arenaUsed = 0;
    std::uint8_t queryCount = 0;
    std::uint8_t responseCount = 0;
    std::uint32_t dropped = 0;  ///< queries, responses or values that did not fit
    DnssdSlice queries[kDnssdMaxQueries];
    DnssdResponse responses[kDnssdMaxResponses];
    char arena[kDnssdArenaBytes];

    std::string_view text(DnssdSlice s) const noexcept { return {arena + s.off, s.len}; }
};

/// One line of the txt option's file: "service.domain,key1,key2,..." — the TXT strings whose
/// key (the text before '=') is listed are exported for instances of that service.
struct DnssdTxtService {
    std::string service;  ///< e.g. "_device-info._tcp.local"
    std::vector<std::string> keys;
};

struct DnssdOptions {
    bool txt = false;       ///< export TXT strings
    bool filtered = false;  ///< with txt: only the services and keys of `whitelist`
    std::span<const DnssdTxtService> whitelist = {};
};

/// Parses one DNS message (`tcp`: with the 2-byte length prefix) into `r`; false when it is
/// not a DNS message or a name in it is malformed (what was added before stays). A message cut
/// short by the end of the captured data, inside a name too, counts with what was read.
bool applyDnssdMessage(std::span<const std::uint8_t> payload, bool tcp, const DnssdOptions& opt,
                       DnssdRecord& r) noexcept;

/// "My Mac._device-info._tcp.local" → "_device-info._tcp.local" (from the second '_' from the
/// end; the whole name when it has fewer).
std::string_view dnssdServiceOf(std::string_view instance) noexcept;

/// Parses the txt option's file content (one service per line); an empty line is skipped.
std::vector<DnssdTxtService> parseDnssdTxtConfig(std::string_view content);

/// Writes the exported texts into `out`; returns the bytes written (cut at out.size()).
std::size_t dnssdQueriesText(const DnssdRecord& r, std::span<char> out) noexcept;
std::size_t dnssdResponsesText(const DnssdRecord& r, std::span<char> out) noexcept;

}  // namespace rowprobe::dns
