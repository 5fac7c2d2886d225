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

/// A JSON string body: '"' and '\\' escaped, control characters and bytes >= 0x80 as \u00XX
/// (so any byte string gives valid JSON). At most 6 characters per byte.
char* putEscaped(char* p, std::span<const std::uint8_t> s) noexcept {
    for (const std::uint8_t c : s) {
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
    }
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
        case FieldType::Array: {
            const ArrayView a = readPluginArray(f, data);
            const std::size_t size = fieldTypeSize(a.element());
            *p++ = '[';
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (i != 0) *p++ = ',';
                p = putScalar(p, a.element(), a.bytes(), i * size);
            }
            *p++ = ']';
            return p;
        }
        default:
            return putScalar(p, f.type, data, f.offset);
    }
}

}  // namespace rowprobe
