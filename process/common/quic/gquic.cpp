#include "process/common/quic/gquic.hpp"

#include <cstring>

namespace rowprobe::quic {

namespace {

constexpr std::size_t kMessageHash = 12;  // FNV-1a-128 of the cleartext, truncated
constexpr std::size_t kPublicCid = 8;

std::uint32_t be32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

std::uint32_t le32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[3]} << 24 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[1]} << 8 | p[0];
}

bool isDigit(std::uint32_t c) noexcept { return c >= '0' && c <= '9'; }

}  // namespace

unsigned gquicVersionNumber(std::uint32_t v) noexcept {
    const std::uint32_t a = v >> 24;
    const std::uint32_t b = (v >> 16) & 0xff;
    const std::uint32_t c = (v >> 8) & 0xff;
    const std::uint32_t d = v & 0xff;
    if ((a != 'Q' && a != 'T') || b != '0' || !isDigit(c) || !isDigit(d)) return 0;
    return (c - '0') * 10 + (d - '0');
}

bool isGquicCleartextVersion(std::uint32_t version) noexcept {
    const unsigned n = gquicVersionNumber(version);
    return (version >> 24) == 'Q' && n >= 24 && n <= 46;
}

bool readGquicUint(std::span<const std::uint8_t> p, std::size_t& off, std::size_t len,
                   bool bigEndian, std::uint64_t& v) noexcept {
    if (len > 8 || off > p.size() || len > p.size() - off) return false;
    v = 0;
    for (std::size_t i = 0; i < len; ++i) {
        const std::uint64_t byte = p[off + i];
        v = bigEndian ? (v << 8 | byte) : (v | byte << (8 * i));
    }
    off += len;
    return true;
}

bool parseGquicHeader(std::span<const std::uint8_t> d, GquicHeader& h) noexcept {
    h = GquicHeader{};
    if (d.size() < 6) return false;
    const std::uint8_t f = d[0];
    std::size_t off = 0;
    if ((f & 0x80) == 0) {
        // public header: a version, no reset, the 8-byte connection id. Only the client sends
        // a version, and only the server a diversification nonce: 0x04 here is the legacy
        // "8-byte connection id" bit Chrome still sets (0x0c), not a nonce.
        if ((f & 0x01) == 0 || (f & 0x02) != 0 || (f & 0x08) == 0) return false;
        if (d.size() < 1 + kPublicCid + 4) return false;
        h.version = be32(d.data() + 1 + kPublicCid);
        const unsigned n = gquicVersionNumber(h.version);
        if (!isGquicCleartextVersion(h.version) || n > 43) return false;
        h.dcid = d.subspan(1, kPublicCid);
        off = 1 + kPublicCid + 4;
        static constexpr std::size_t kPn[] = {1, 2, 4, 6};
        h.packetNumberLength = kPn[(f >> 4) & 3U];
        off += h.packetNumberLength + kMessageHash + (n <= 33 ? 1 : 0);
    } else {
        h.version = be32(d.data() + 1);
        const unsigned n = gquicVersionNumber(h.version);
        if (!isGquicCleartextVersion(h.version) || n < 44) return false;
        h.longHeader = true;
        h.initial = ((f >> 4) & 3U) == 0;
        const std::size_t dl = d[5] >> 4;
        const std::size_t sl = d[5] & 15U;
        const std::size_t dcidLen = dl == 0 ? 0 : dl + 3;
        const std::size_t scidLen = sl == 0 ? 0 : sl + 3;
        off = 6;
        if (dcidLen + scidLen > d.size() - off) return false;
        h.dcid = d.subspan(off, dcidLen);
        h.scid = d.subspan(off + dcidLen, scidLen);
        off += dcidLen + scidLen;
        h.packetNumberLength = (f & 3U) + 1;
        off += h.packetNumberLength + kMessageHash;
    }
    if (off > d.size()) return false;
    h.frames = off;
    return true;
}

std::size_t chloLength(std::span<const std::uint8_t> p) noexcept {
    if (p.size() < 8 || std::memcmp(p.data(), "CHLO", 4) != 0) return 0;
    const std::size_t tags = std::size_t{p[4]} | std::size_t{p[5]} << 8;
    const std::size_t table = 8 + 8 * tags;
    if (tags == 0) return table;
    if (p.size() < table) return 0;
    return table + le32(p.data() + table - 4);
}

bool parseChlo(std::span<const std::uint8_t> msg, Chlo& out) noexcept {
    out = Chlo{};
    if (msg.size() < 8 || std::memcmp(msg.data(), "CHLO", 4) != 0) return false;
    const std::size_t tags = std::size_t{msg[4]} | std::size_t{msg[5]} << 8;
    const std::size_t base = 8 + 8 * tags;
    std::size_t prev = 0;
    for (std::size_t i = 0; i < tags; ++i) {
        const std::size_t entry = 8 + 8 * i;
        if (entry + 8 > msg.size()) break;
        const std::size_t end = le32(msg.data() + entry + 4);
        if (end < prev || base > msg.size() || end > msg.size() - base) break;
        const auto value = msg.subspan(base + prev, end - prev);
        const std::string_view text(reinterpret_cast<const char*>(value.data()), value.size());
        const std::uint8_t* tag = msg.data() + entry;
        if (std::memcmp(tag, "SNI\0", 4) == 0) {
            out.sni = text;
        } else if (std::memcmp(tag, "UAID", 4) == 0) {
            out.userAgent = text;
        } else if (std::memcmp(tag, "VER\0", 4) == 0 && value.size() == 4) {
            out.version = be32(value.data());
        }
        prev = end;
    }
    return true;
}

}  // namespace rowprobe::quic
