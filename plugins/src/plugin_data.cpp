// Formatting of process-plugin values (rowprobe/plugin_data.hpp), shared by the text outputs.
#include "rowprobe/plugin_data.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include "rowprobe/format.hpp"

namespace rowprobe {

namespace {

template <std::size_t N>
char* put(char* out, const char (&text)[N]) noexcept {
    std::memcpy(out, text, N - 1);
    return out + (N - 1);
}

constexpr char kHex[] = "0123456789abcdef";

/// True when one of the 8 bytes of `w` must be escaped in a JSON string here: a control
/// character (< 0x20), a byte >= 0x80, '"' or '\\' (exact as a whole-word test).
constexpr bool needsEscape(std::uint64_t w) noexcept {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    const auto zeroByte = [](std::uint64_t x) { return (x - kOnes) & ~x & kHigh; };
    const std::uint64_t control = (w - kOnes * 0x20) & ~w & kHigh;  // some byte < 0x20
    return ((control | (w & kHigh) | zeroByte(w ^ (kOnes * '"')) | zeroByte(w ^ (kOnes * '\\'))) !=
            0);
}

/// One byte of a JSON string body.
char* putEscapedByte(char* p, std::uint8_t c) noexcept {
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        *p++ = static_cast<char>(c);
    } else if (c == '"' || c == '\\') {
        *p++ = '\\';
        *p++ = static_cast<char>(c);
    } else {
        p = put(p, "\\u00");
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
    }
    return p;
}

/// A JSON string body: '"' and '\\' escaped, control characters and bytes >= 0x80 as \u00XX
/// (so any byte string gives valid JSON). At most 6 characters per byte. Eight bytes at a
/// time while none needs escaping (host names, URLs, user agents: nearly always).
char* putEscaped(char* p, std::span<const std::uint8_t> s) noexcept {
    const std::uint8_t* in = s.data();
    std::size_t n = s.size();
    while (n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, in, 8);
        if (needsEscape(w)) {
            for (std::size_t i = 0; i < 8; ++i) p = putEscapedByte(p, in[i]);
        } else {
            std::memcpy(p, in, 8);
            p += 8;
        }
        in += 8;
        n -= 8;
    }
    for (std::size_t i = 0; i < n; ++i) p = putEscapedByte(p, in[i]);
    return p;
}

char* putHex(char* p, std::span<const std::uint8_t> s) noexcept {
    for (const std::uint8_t c : s) {
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
    }
    return p;
}

char* putSigned(char* p, std::int64_t v) noexcept {
    if (v < 0) {
        *p++ = '-';
        return formatUint(p, static_cast<std::uint64_t>(-(v + 1)) + 1);
    }
    return formatUint(p, static_cast<std::uint64_t>(v));
}

char* putFloat(char* p, float v) noexcept {
    if (v != v || v - v != 0) return put(p, "null");  // NaN, infinities: not JSON numbers
    return std::to_chars(p, p + 32, v).ptr;
}

/// One scalar of type `t` stored at `at` (JSON form).
char* putScalar(char* p, FieldType t, std::span<const std::uint8_t> data, std::size_t at) noexcept {
    FieldSpec f;
    f.type = t;
    f.offset = static_cast<std::uint16_t>(0);
    const auto one = data.subspan(std::min(at, data.size()));
    switch (t) {
        case FieldType::Timestamp:
            *p++ = '"';
            p = formatTimeIso(p, readPluginUnsigned(f, one), 9);
            *p++ = '"';
            return p;
        case FieldType::Int8:
        case FieldType::Int16:
        case FieldType::Int32:
            return putSigned(p, readPluginSigned(f, one));
        case FieldType::Float32:
            return putFloat(p, readPluginFloat(f, one));
        case FieldType::IpAddress:
        case FieldType::MacAddress: {
            const auto b = readPluginBytes(f, one);
            *p++ = '"';
            if (t == FieldType::MacAddress && b.size() == 6) {
                std::array<std::uint8_t, 6> mac{};
                std::memcpy(mac.data(), b.data(), 6);
                p = formatMac(p, mac);
            } else if (b.size() == 16) {
                std::array<std::uint8_t, 16> addr{};
                std::memcpy(addr.data(), b.data(), 16);
                p = formatIp(p, addr, isIpv4Mapped(b));
            }
            *p++ = '"';
            return p;
        }
        default:
            return formatUint(p, readPluginUnsigned(f, one));
    }
}

template <typename T, typename Put>
char* putEach(char* p, std::span<const std::uint8_t> bytes, std::size_t n, Put put) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof v);
        p = put(p, v);
        *p++ = ',';
    }
    return p;
}

/// [v,...]: one loop per element type, no per-element dispatch; each value is followed by a
/// ',' and the last one is overwritten by the ']'.
char* putArray(char* p, const ArrayView& a) noexcept {
    const std::span<const std::uint8_t> b = a.bytes();
    const std::size_t n = a.size();
    *p++ = '[';
    switch (a.element()) {
        case FieldType::Unsigned8:
            p = putEach<std::uint8_t>(p, b, n, formatUint);
            break;
        case FieldType::Unsigned16:
            p = putEach<std::uint16_t>(p, b, n, formatUint);
            break;
        case FieldType::Unsigned32:
            p = putEach<std::uint32_t>(p, b, n, formatUint);
            break;
        case FieldType::Unsigned64:
            p = putEach<std::uint64_t>(p, b, n, formatUint);
            break;
        case FieldType::Timestamp:
            p = putEach<TimeNs>(p, b, n, [](char* q, TimeNs t) {
                *q++ = '"';
                q = formatTimeIso(q, t, 9);
                *q++ = '"';
                return q;
            });
            break;
        case FieldType::Int8:
            p = putEach<std::int8_t>(p, b, n, putSigned);
            break;
        case FieldType::Int16:
            p = putEach<std::int16_t>(p, b, n, putSigned);
            break;
        case FieldType::Int32:
            p = putEach<std::int32_t>(p, b, n, putSigned);
            break;
        case FieldType::Float32:
            p = putEach<float>(p, b, n, putFloat);
            break;
        default: {
            const std::size_t size = fieldTypeSize(a.element());
            for (std::size_t i = 0; i < n; ++i) {
                p = putScalar(p, a.element(), b, i * size);
                *p++ = ',';
            }
            break;
        }
    }
    if (n != 0) --p;
    *p++ = ']';
    return p;
}

}  // namespace

char* formatPluginValueJson(char* p, const FieldSpec& f,
                            std::span<const std::uint8_t> data) noexcept {
    switch (f.type) {
        case FieldType::String:
            *p++ = '"';
            p = putEscaped(p, readPluginBytes(f, data));
            *p++ = '"';
            return p;
        case FieldType::Binary:
            *p++ = '"';
            p = f.hint == FieldHint::Text ? putEscaped(p, readPluginBytes(f, data))
                                          : putHex(p, readPluginBytes(f, data));
            *p++ = '"';
            return p;
        case FieldType::Array:
            return putArray(p, readPluginArray(f, data));
        default:
            return putScalar(p, f.type, data, f.offset);
    }
}

}  // namespace rowprobe
