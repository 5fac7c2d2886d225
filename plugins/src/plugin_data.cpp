// Formatting of process-plugin values (rowprobe/plugin_data.hpp), shared by the text outputs.
#include "rowprobe/plugin_data.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

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

/// Signed values; the one-digit ones and -1 (pstats' directions, flowstats' SPLT padding: most
/// of an array's elements) without a call.
char* putSigned(char* p, std::int64_t v) noexcept {
    if (v >= 0 && v < 10) {
        *p = static_cast<char>('0' + v);
        return p + 1;
    }
    if (v == -1) {
        std::memcpy(p, "-1", 2);
        return p + 2;
    }
    if (v < 0) {
        *p++ = '-';
        return formatUint(p, static_cast<std::uint64_t>(-(v + 1)) + 1);
    }
    return formatUint(p, static_cast<std::uint64_t>(v));
}

/// Floats as JSON numbers (formatFloatJson).
char* putFloat(char* p, float v) noexcept { return formatFloatJson(p, v); }

char* putTime(char* p, TimeNs t) noexcept {
    *p++ = '"';
    p = formatTimeIso(p, t, 9);
    *p++ = '"';
    return p;
}

/// An address (16 bytes) or MAC (6) at `bytes`, quoted; empty quotes when the bytes are not
/// there.
char* putAddress(char* p, FieldType t, std::span<const std::uint8_t> b) noexcept {
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

/// "-1," 32 times: a run of NFStream's SPLT padding is copied from it, 32 values at a time.
constexpr std::array<char, 96> kMinusOnes = [] {
    std::array<char, 96> t{};
    for (std::size_t i = 0; i < t.size(); i += 3) {
        t[i] = '-';
        t[i + 1] = '1';
        t[i + 2] = ',';
    }
    return t;
}();

/// The bytes at the end of `b` that are 0xFF, in whole elements of `size` bytes: the length of
/// a trailing run of -1 in an array of signed integers (all ones at any width).
std::size_t trailingMinusOnes(std::span<const std::uint8_t> b, std::size_t size) noexcept {
    std::size_t ones = 0;
    for (; ones + 8 <= b.size(); ones += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, b.data() + b.size() - ones - 8, 8);
        if (w != ~std::uint64_t{0}) break;
    }
    while (ones < b.size() && b[b.size() - ones - 1] == 0xFF) ++ones;
    return ones / size;
}

/// Writes "-1," k times from kMinusOnes, with fixed-size copies only.
char* putMinusOnes(char* p, std::size_t k) noexcept {
    for (; k >= 32; k -= 32, p += 96) std::memcpy(p, kMinusOnes.data(), 96);
    if (k >= 16) {
        std::memcpy(p, kMinusOnes.data(), 48);
        p += 48;
        k -= 16;
    }
    if (k >= 8) {
        std::memcpy(p, kMinusOnes.data(), 24);
        p += 24;
        k -= 8;
    }
    for (; k > 0; --k, p += 3) std::memcpy(p, kMinusOnes.data(), 3);
    return p;
}

/// [v,...] of the elements of type T in `b` (a partial last element left out); each value is
/// followed by a ',' and the last one is overwritten by the ']'. Signed arrays often end in a
/// run of -1 (flowstats pads its SPLT arrays to their length with it, as NFStream does: with
/// `splt=255` most of a record's text): that run is found 8 bytes at a time and its text
/// copied whole, "-1," per value, instead of written value by value.
template <typename T, auto Put>
char* putArrayOf(char* p, std::span<const std::uint8_t> b) noexcept {
    const std::size_t n = b.size() / sizeof(T);
    b = b.first(n * sizeof(T));
    std::size_t run = 0;  // the trailing run of -1
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        run = trailingMinusOnes(b, sizeof(T));
    *p++ = '[';
    for (std::size_t i = 0; i < n - run; ++i) {
        T v;
        std::memcpy(&v, b.data() + i * sizeof(T), sizeof v);
        p = Put(p, v);
        *p++ = ',';
    }
    p = putMinusOnes(p, run);
    if (n != 0) --p;
    *p++ = ']';
    return p;
}

/// [v,...] of addresses or MACs (the element types without a loop of their own).
char* putAddressArray(char* p, const ArrayView& a) noexcept {
    const std::span<const std::uint8_t> b = a.bytes();
    const std::size_t size = fieldTypeSize(a.element());
    *p++ = '[';
    for (std::size_t i = 0; i < a.size(); ++i) {
        p = putAddress(p, a.element(), b.subspan(i * size, size));
        *p++ = ',';
    }
    if (a.size() != 0) --p;
    *p++ = ']';
    return p;
}

// The writers formatPluginValueJson picks from by the field's type (jsonValueWriter): each reads
// its value with the field's offset and bounds check, and writes it with no further dispatch.

/// How a numeric type is stored (Value) and written in JSON (kPut).
template <typename V, auto Put>
struct NumericAs {
    using Value = V;
    static constexpr auto kPut = Put;
};
template <FieldType T>
struct Numeric;
// clang-format off
template <> struct Numeric<FieldType::Unsigned8> : NumericAs<std::uint8_t, formatUint> {};
template <> struct Numeric<FieldType::Unsigned16> : NumericAs<std::uint16_t, formatUint> {};
template <> struct Numeric<FieldType::Unsigned32> : NumericAs<std::uint32_t, formatUint> {};
template <> struct Numeric<FieldType::Unsigned64> : NumericAs<std::uint64_t, formatUint> {};
template <> struct Numeric<FieldType::Timestamp> : NumericAs<TimeNs, putTime> {};
template <> struct Numeric<FieldType::Int8> : NumericAs<std::int8_t, putSigned> {};
template <> struct Numeric<FieldType::Int16> : NumericAs<std::int16_t, putSigned> {};
template <> struct Numeric<FieldType::Int32> : NumericAs<std::int32_t, putSigned> {};
template <> struct Numeric<FieldType::Float32> : NumericAs<float, putFloat> {};
// clang-format on

template <FieldType T>
char* jsonScalar(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    return Numeric<T>::kPut(p, detail::loadAt<typename Numeric<T>::Value>(data, f.offset));
}

template <FieldType T>
char* jsonArray(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    return putArrayOf<typename Numeric<T>::Value, Numeric<T>::kPut>(
        p, readPluginArray(f, data).bytes());
}

template <FieldType T>
JsonValueFn scalarOrArray(bool array) noexcept {
    return array ? jsonArray<T> : jsonScalar<T>;
}

char* jsonAddress(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    return putAddress(p, f.type, readPluginBytes(f, data));
}

char* jsonAddressArray(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    return putAddressArray(p, readPluginArray(f, data));
}

/// The writer of a fixed-size value of type `t`, or of an array of them; null for the other
/// types.
JsonValueFn fixedSizeWriter(FieldType t, bool array) noexcept {
    switch (t) {
        case FieldType::Unsigned8:
            return scalarOrArray<FieldType::Unsigned8>(array);
        case FieldType::Unsigned16:
            return scalarOrArray<FieldType::Unsigned16>(array);
        case FieldType::Unsigned32:
            return scalarOrArray<FieldType::Unsigned32>(array);
        case FieldType::Unsigned64:
            return scalarOrArray<FieldType::Unsigned64>(array);
        case FieldType::Timestamp:
            return scalarOrArray<FieldType::Timestamp>(array);
        case FieldType::Int8:
            return scalarOrArray<FieldType::Int8>(array);
        case FieldType::Int16:
            return scalarOrArray<FieldType::Int16>(array);
        case FieldType::Int32:
            return scalarOrArray<FieldType::Int32>(array);
        case FieldType::Float32:
            return scalarOrArray<FieldType::Float32>(array);
        case FieldType::IpAddress:
        case FieldType::MacAddress:
            return array ? jsonAddressArray : jsonAddress;
        default:
            return nullptr;
    }
}

char* jsonString(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    *p++ = '"';
    p = putEscaped(p, readPluginBytes(f, data));
    *p++ = '"';
    return p;
}

char* jsonHex(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    *p++ = '"';
    p = putHex(p, readPluginBytes(f, data));
    *p++ = '"';
    return p;
}

/// An array whose element type has no JSON form here (the variable ones): [].
char* jsonEmptyArray(char* p, const FieldSpec&, std::span<const std::uint8_t>) noexcept {
    return put(p, "[]");
}

/// A scalar of a type unknown here: its unsigned value as the readers see it (0).
char* jsonOther(char* p, const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    return formatUint(p, readPluginUnsigned(f, data));
}

}  // namespace

JsonValueFn jsonValueWriter(const FieldSpec& f) noexcept {
    switch (f.type) {
        case FieldType::String:
            return jsonString;
        case FieldType::Binary:
            return f.hint == FieldHint::Text ? jsonString : jsonHex;
        case FieldType::Array: {
            const JsonValueFn w = fixedSizeWriter(f.element, true);
            return w != nullptr ? w : jsonEmptyArray;
        }
        default: {
            const JsonValueFn w = fixedSizeWriter(f.type, false);
            return w != nullptr ? w : jsonOther;
        }
    }
}

char* formatPluginValueJson(char* p, const FieldSpec& f,
                            std::span<const std::uint8_t> data) noexcept {
    return jsonValueWriter(f)(p, f, data);
}

}  // namespace rowprobe
