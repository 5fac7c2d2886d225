#include "process/common/dns/dns_parser.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace rowprobe::dns {

namespace {

std::uint16_t be16(std::span<const std::uint8_t> s, std::size_t off) noexcept {
    return static_cast<std::uint16_t>(s[off] << 8 | s[off + 1]);
}

std::uint32_t be32(std::span<const std::uint8_t> s, std::size_t off) noexcept {
    return std::uint32_t{s[off]} << 24 | std::uint32_t{s[off + 1]} << 16 |
           std::uint32_t{s[off + 2]} << 8 | std::uint32_t{s[off + 3]};
}

// Appends to a fixed buffer, dropping what does not fit (ipfixprobe truncates the whole text).
struct Text {
    std::span<char> out;
    std::size_t len = 0;
    void put(std::string_view s) noexcept {
        const std::size_t n = std::min(s.size(), out.size() - std::min(len, out.size()));
        if (n != 0) std::memcpy(out.data() + len, s.data(), n);
        len += n;
    }
    void putChar(char c) noexcept { put({&c, 1}); }
    void putNumber(std::uint32_t v) noexcept {
        char buf[10];
        std::size_t n = 0;
        do {
            buf[sizeof buf - 1 - n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        put({buf + sizeof buf - n, n});
    }
    // A name; false when malformed.
    bool putName(std::span<const std::uint8_t> msg, std::size_t offset) noexcept {
        char buf[256];
        const NameText t = decodeName(msg, offset, buf);
        if (!t.ok) return false;
        put({buf, t.len});
        return true;
    }
};

// ipfixprobe's SRV owner-name rewrite: drop the first two '_' and turn the first two '.' into
// spaces ("_ldap._tcp.example.com" → "ldap tcp example.com").
std::size_t rewriteSrvOwner(char* s, std::size_t len) noexcept {
    std::size_t w = 0;
    int underscores = 0;
    for (std::size_t r = 0; r < len; ++r) {
        if (s[r] == '_' && underscores < 2) {
            ++underscores;
            continue;
        }
        s[w++] = s[r];
    }
    int dots = 0;
    for (std::size_t i = 0; i < w && dots < 2; ++i) {
        if (s[i] == '.') {
            s[i] = ' ';
            ++dots;
        }
    }
    return w;
}

}  // namespace

std::span<const std::uint8_t> dnsMessage(std::span<const std::uint8_t> payload, bool tcp) noexcept {
    if (!tcp) return payload;
    if (payload.size() < 2 || be16(payload, 0) != payload.size() - 2) return {};
    return payload.subspan(2);
}

bool readHeader(std::span<const std::uint8_t> msg, DnsHeader& out) noexcept {
    if (msg.size() < kHeaderLen) return false;
    out.id = be16(msg, 0);
    out.flags = be16(msg, 2);
    out.qdCount = be16(msg, 4);
    out.anCount = be16(msg, 6);
    out.nsCount = be16(msg, 8);
    out.arCount = be16(msg, 10);
    return true;
}

std::size_t skipName(std::span<const std::uint8_t> msg, std::size_t off) noexcept {
    // Every step moves forward by at least one byte, so this ends within msg.size() steps.
    while (off < msg.size()) {
        const std::uint8_t len = msg[off];
        if (len == 0) return off + 1;
        if ((len & 0xc0) == 0xc0) return off + 2 <= msg.size() ? off + 2 : 0;
        off += std::size_t{len} + 1;
    }
    return 0;
}

NameText decodeName(std::span<const std::uint8_t> msg, std::size_t off,
                    std::span<char> out) noexcept {
    NameText r;
    bool first = true;
    for (int steps = 0;; ++steps) {
        if (off >= msg.size() || steps >= kMaxNameSteps) return r;  // Malformed
        const std::uint8_t len = msg[off];
        if (len == 0) break;
        if ((len & 0xc0) == 0xc0) {
            if (off + 1 >= msg.size()) return r;
            off = static_cast<std::size_t>((len & 0x3f) << 8 | msg[off + 1]);
            continue;
        }
        if (len > 63 || off + len + 2 > msg.size()) return r;
        // Copy as much as fits; a longer name is cut mid-label, as truncating its text would.
        if (!first) {
            if (r.len < out.size()) {
                out[r.len++] = '.';
            } else {
                r.truncated = true;
            }
        }
        const std::size_t n = std::min<std::size_t>(len, out.size() - r.len);
        if (n != 0) std::memcpy(out.data() + r.len, msg.data() + off + 1, n);
        r.len += n;
        if (n < len) r.truncated = true;
        first = false;
        off += std::size_t{len} + 1;
    }
    r.ok = true;
    return r;
}

DnsCursor::DnsCursor(std::span<const std::uint8_t> msg, const DnsHeader& h) noexcept
    : m_msg(msg), m_questionsLeft(h.qdCount), m_rrLeft{h.anCount, h.nsCount, h.arCount} {}

DnsStatus DnsCursor::nextQuestion(DnsQuestion& q) noexcept {
    if (m_questionsLeft == 0) return DnsStatus::End;
    char scratch[1];
    if (!decodeName(m_msg, m_off, scratch).ok) return DnsStatus::Malformed;
    const std::size_t end = skipName(m_msg, m_off);
    if (end == 0) return DnsStatus::Malformed;
    if (end + 4 > m_msg.size()) return DnsStatus::Truncated;
    q.nameOffset = static_cast<std::uint16_t>(m_off);
    q.type = be16(m_msg, end);
    q.qclass = be16(m_msg, end + 2);
    m_off = end + 4;
    --m_questionsLeft;
    return DnsStatus::Ok;
}

DnsStatus DnsCursor::nextRr(DnsRr& rr) noexcept {
    while (m_section < 3 && m_rrLeft[m_section] == 0) ++m_section;
    if (m_section == 3) return DnsStatus::End;
    // skipName fails only when the owner name runs past the end of the message: the message
    // was cut (first IP fragment, short snaplen), not malformed, so what was read so far counts.
    const std::size_t end = skipName(m_msg, m_off);
    if (end == 0) return DnsStatus::Truncated;
    if (end + 10 > m_msg.size()) return DnsStatus::Truncated;
    const std::uint16_t rdLength = be16(m_msg, end + 8);
    if (end + 10 + rdLength > m_msg.size()) return DnsStatus::Truncated;
    rr.nameOffset = static_cast<std::uint16_t>(m_off);
    rr.type = be16(m_msg, end);
    rr.rclass = be16(m_msg, end + 2);
    rr.ttl = be32(m_msg, end + 4);
    rr.rdataOffset = static_cast<std::uint16_t>(end + 10);
    rr.rdLength = rdLength;
    m_off = end + 10 + rdLength;
    --m_rrLeft[m_section];
    return DnsStatus::Ok;
}

RdataText formatRdata(std::span<const std::uint8_t> msg, const DnsRr& rr,
                      std::span<char> out) noexcept {
    Text t{out};
    RdataText r;
    const std::size_t d = rr.rdataOffset;
    const std::size_t n = rr.rdLength;
    const auto have = [&](std::size_t bytes) { return d + bytes <= msg.size() && bytes <= n; };
    switch (rr.type) {
        case kTypeA:
            if (have(4)) {
                for (int i = 0; i < 4; ++i) {
                    if (i != 0) t.putChar('.');
                    t.putNumber(msg[d + i]);
                }
            }
            break;
        case kTypeAaaa:
            if (have(16)) {
                char buf[INET6_ADDRSTRLEN];
                if (inet_ntop(AF_INET6, msg.data() + d, buf, sizeof buf) != nullptr) t.put(buf);
            }
            break;
        case kTypeNs:
        case kTypeCname:
        case kTypePtr:
        case kTypeDname:
            if (!t.putName(msg, d)) return r;
            break;
        case kTypeSoa: {
            if (!t.putName(msg, d)) return r;
            const std::size_t rname = skipName(msg, d);
            if (rname == 0) return r;
            t.putChar(' ');
            if (!t.putName(msg, rname)) return r;
            const std::size_t nums = skipName(msg, rname);
            if (nums == 0) return r;
            if (nums + 20 <= msg.size()) {
                for (int i = 0; i < 5; ++i) {
                    t.putChar(' ');
                    t.putNumber(be32(msg, nums + 4 * i));
                }
            }
            break;
        }
        case kTypeSrv: {
            char owner[256];
            const NameText o = decodeName(msg, rr.nameOffset, owner);
            if (!o.ok) return r;
            t.put({owner, rewriteSrvOwner(owner, o.len)});
            t.putChar(' ');
            if (!have(6)) break;
            if (!t.putName(msg, d + 6)) return r;
            for (int i = 0; i < 3; ++i) {
                t.putChar(' ');
                t.putNumber(be16(msg, d + 2 * i));
            }
            break;
        }
        case kTypeMx:
            if (!have(2)) break;
            t.putNumber(be16(msg, d));
            t.putChar(' ');
            if (!t.putName(msg, d + 2)) return r;
            break;
        case kTypeTxt: {
            // Character-strings joined by spaces, as long as they lie within the RDATA.
            std::size_t off = 0;
            bool first = true;
            while (off < n && d + off < msg.size()) {
                const std::size_t len = msg[d + off];
                if (off + 1 + len > n) break;
                if (!first) t.putChar(' ');
                t.put({reinterpret_cast<const char*>(msg.data() + d + off + 1), len});
                first = false;
                off += 1 + len;
            }
            break;
        }
        case kTypeMinfo: {
            if (!t.putName(msg, d)) return r;
            const std::size_t second = skipName(msg, d);
            if (second == 0) return r;
            t.putChar(' ');
            if (!t.putName(msg, second)) return r;
            break;
        }
        case kTypeHinfo:
        case kTypeIsdn:
            t.put({reinterpret_cast<const char*>(msg.data() + d), n});
            break;
        case kTypeDs:
            if (!have(4)) break;
            t.putNumber(be16(msg, d));
            t.putChar(' ');
            t.putNumber(msg[d + 2]);
            t.putChar(' ');
            t.putNumber(msg[d + 3]);
            t.put(" <key>");
            break;
        case kTypeRrsig: {
            if (!have(18)) break;
            t.putNumber(be16(msg, d));  // type covered
            t.putChar(' ');
            t.putNumber(msg[d + 2]);  // algorithm
            t.putChar(' ');
            t.putNumber(msg[d + 3]);                               // labels
            for (const std::size_t at : {d + 4, d + 8, d + 12}) {  // TTL, expiration, inception
                t.putChar(' ');
                t.putNumber(be32(msg, at));
            }
            t.putChar(' ');
            t.putNumber(be16(msg, d + 16));  // key tag
            t.put(" <key>");
            char scratch[1];
            if (!decodeName(msg, d + 18, scratch).ok) return r;  // signer's name
            break;
        }
        case kTypeDnskey:
            if (!have(4)) break;
            t.putNumber(be16(msg, d));
            t.putChar(' ');
            t.putNumber(msg[d + 2]);
            t.putChar(' ');
            t.putNumber(msg[d + 3]);
            t.put(" <key>");
            break;
        default:
            t.put("(not_impl)");
            break;
    }
    r.ok = true;
    r.len = t.len;
    return r;
}

bool reverseNameToAddress(std::string_view name, IpAddress& out) noexcept {
    out = IpAddress{};
    if (!name.empty() && name.back() == '.') name.remove_suffix(1);
    const auto endsWithNoCase = [&](std::string_view suffix) {
        if (name.size() < suffix.size()) return false;
        const auto tail = name.substr(name.size() - suffix.size());
        for (std::size_t i = 0; i < suffix.size(); ++i) {
            char c = tail[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c != suffix[i]) return false;
        }
        return true;
    };
    if (endsWithNoCase(".in-addr.arpa")) {
        name.remove_suffix(13);
        int count = 0;
        std::size_t pos = 0;
        while (true) {
            const std::size_t dot = name.find('.', pos);
            const auto label =
                name.substr(pos, dot == std::string_view::npos ? name.npos : dot - pos);
            if (label.empty() || label.size() > 3 || count == 4) return false;
            unsigned v = 0;
            for (const char c : label) {
                if (c < '0' || c > '9') return false;
                v = v * 10 + static_cast<unsigned>(c - '0');
            }
            if (v > 255) return false;
            out.bytes[3 - count++] = static_cast<std::uint8_t>(v);
            if (dot == std::string_view::npos) break;
            pos = dot + 1;
        }
        return count == 4;
    }
    if (endsWithNoCase(".ip6.arpa")) {
        name.remove_suffix(9);
        // 32 single-hex-digit labels, least significant nibble first.
        if (name.size() != 63) return false;
        for (std::size_t i = 0; i < 32; ++i) {
            const char c = name[2 * i];
            if (i != 31 && name[2 * i + 1] != '.') return false;
            unsigned v;
            if (c >= '0' && c <= '9') {
                v = static_cast<unsigned>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v = static_cast<unsigned>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                v = static_cast<unsigned>(c - 'A' + 10);
            } else {
                return false;
            }
            const std::size_t nibble = 31 - i;  // position from the most significant nibble
            out.bytes[nibble / 2] |= static_cast<std::uint8_t>(nibble % 2 == 0 ? v << 4 : v);
        }
        out.v6 = true;
        return true;
    }
    return false;
}

}  // namespace rowprobe::dns
