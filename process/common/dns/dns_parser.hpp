// DNS message parser (RFC 1035) shared by the dns and passivedns plugins. Pure functions on
// byte spans: no allocation, no exceptions, and every loop bounded — a name is at most 128
// labels or pointers long, so compression-pointer loops and absurd lengths end in `Malformed`.
//
//   payload ─dnsMessage(tcp)─▶ message ─DnsCursor─▶ header, questions, resource records
//                                          │
//                                          ├── decodeName(msg, off, buf)   dotted text
//                                          ├── formatRdata(msg, rr, buf)   ipfixprobe's text
//                                          └── reverseNameToAddress(name)  PTR owner → IP
//
// Offsets are relative to the message start (after the TCP length prefix), as compression
// pointers are. The cursor walks the sections in order: qdCount questions, then anCount +
// nsCount + arCount resource records; it reports `Truncated` when a record (its owner name
// included) runs past the end of the message and `Malformed` when a name cannot be walked.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::dns {

inline constexpr std::uint16_t kTypeA = 1;
inline constexpr std::uint16_t kTypeNs = 2;
inline constexpr std::uint16_t kTypeCname = 5;
inline constexpr std::uint16_t kTypeSoa = 6;
inline constexpr std::uint16_t kTypePtr = 12;
inline constexpr std::uint16_t kTypeHinfo = 13;
inline constexpr std::uint16_t kTypeMinfo = 14;
inline constexpr std::uint16_t kTypeMx = 15;
inline constexpr std::uint16_t kTypeTxt = 16;
inline constexpr std::uint16_t kTypeIsdn = 20;
inline constexpr std::uint16_t kTypeAaaa = 28;
inline constexpr std::uint16_t kTypeSrv = 33;
inline constexpr std::uint16_t kTypeDname = 39;
inline constexpr std::uint16_t kTypeOpt = 41;
inline constexpr std::uint16_t kTypeDs = 43;
inline constexpr std::uint16_t kTypeRrsig = 46;
inline constexpr std::uint16_t kTypeDnskey = 48;

inline constexpr std::size_t kHeaderLen = 12;
/// Labels plus pointers followed while decoding one name (ipfixprobe: 128).
inline constexpr int kMaxNameSteps = 128;

struct DnsHeader {
    std::uint16_t id = 0;
    std::uint16_t flags = 0;
    std::uint16_t qdCount = 0;
    std::uint16_t anCount = 0;
    std::uint16_t nsCount = 0;
    std::uint16_t arCount = 0;
    bool isResponse() const noexcept { return (flags & 0x8000) != 0; }
    std::uint8_t rcode() const noexcept { return static_cast<std::uint8_t>(flags & 0x0f); }
};

struct DnsQuestion {
    std::uint16_t nameOffset = 0;
    std::uint16_t type = 0;
    std::uint16_t qclass = 0;
};

struct DnsRr {
    std::uint16_t nameOffset = 0;
    std::uint16_t type = 0;
    std::uint16_t rclass = 0;
    std::uint32_t ttl = 0;
    std::uint16_t rdataOffset = 0;
    std::uint16_t rdLength = 0;
};

enum class DnsStatus : std::uint8_t {
    Ok,
    End,        ///< no more entries in this section
    Truncated,  ///< the entry (a record's owner name included) runs past the end of the message
    Malformed,  ///< a name cannot be walked (bad label, pointer out of range or looping)
};

/// The DNS message inside an L4 payload: for TCP the 2-byte length prefix must equal the rest of
/// the payload (one whole message per segment, as ipfixprobe). Empty span if not.
std::span<const std::uint8_t> dnsMessage(std::span<const std::uint8_t> payload, bool tcp) noexcept;

/// Reads the header; false when the message is shorter than 12 bytes.
bool readHeader(std::span<const std::uint8_t> msg, DnsHeader& out) noexcept;

/// Offset just after the (possibly compressed) name at `offset`, or 0 when the name runs past
/// the end of the message (a name cannot end at offset 0).
std::size_t skipName(std::span<const std::uint8_t> msg, std::size_t offset) noexcept;

struct NameText {
    bool ok = false;         ///< false: Malformed
    std::size_t len = 0;     ///< bytes written to the buffer
    bool truncated = false;  ///< the name was longer than the buffer
};

/// Decodes the name at `offset` to dotted text without a trailing dot (the root is "") into
/// `out`. Label bytes are copied as they are.
NameText decodeName(std::span<const std::uint8_t> msg, std::size_t offset,
                    std::span<char> out) noexcept;

/// Walks the sections of one message.
class DnsCursor {
public:
    /// `msg` must hold at least the header (check with readHeader first).
    DnsCursor(std::span<const std::uint8_t> msg, const DnsHeader& header) noexcept;

    /// The next question; its name is validated (decodable), as ipfixprobe does.
    DnsStatus nextQuestion(DnsQuestion& q) noexcept;
    /// The next resource record of the answer, authority and additional sections (in that
    /// order; `section()` tells which one it came from: 1, 2 or 3). Questions must be read first.
    DnsStatus nextRr(DnsRr& rr) noexcept;
    int section() const noexcept { return m_section; }

private:
    std::span<const std::uint8_t> m_msg;
    std::size_t m_off = kHeaderLen;
    std::uint32_t m_questionsLeft;
    std::uint32_t m_rrLeft[3];
    int m_section = 0;
};

struct RdataText {
    bool ok =
        false;  ///< false: a name inside the RDATA is malformed (ipfixprobe drops the message)
    std::size_t len = 0;
};

/// Formats the RDATA of `rr` as text the way ipfixprobe's DNS_RDATA shows it (A dotted quad,
/// AAAA RFC 5952, names dotted, "MX-pref name", SOA/SRV/TXT/DS/RRSIG/DNSKEY/… as in the plugin
/// README), truncated to out.size() bytes. HINFO and ISDN are copied raw.
RdataText formatRdata(std::span<const std::uint8_t> msg, const DnsRr& rr,
                      std::span<char> out) noexcept;

struct IpAddress {
    std::array<std::uint8_t, 16> bytes{};  ///< IPv4 in the first 4 bytes
    bool v6 = false;
};

/// "4.3.2.1.in-addr.arpa" → 1.2.3.4; 32 nibble labels + ".ip6.arpa" → IPv6. Case-insensitive,
/// a trailing dot allowed. False for anything else.
bool reverseNameToAddress(std::string_view name, IpAddress& out) noexcept;

}  // namespace rowprobe::dns
