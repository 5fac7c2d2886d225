// The process-plugin data path an output relies on: instances written by InstanceWriter, carried
// through an ExtRing, read back through pluginInstances() and the field readers.
#include "rowprobe/plugin_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace rowprobe {
namespace {

struct Fixed {
    std::uint16_t port = 0;
    std::int8_t dir = 0;
    float ratio = 0;
    VarRef name;
    VarRef lengths;
    VarRef times;
};

constexpr FieldSpec kFields[] = {
    {.name = "port",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fixed, port)},
    {.name = "dir",
     .type = FieldType::Int8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fixed, dir)},
    {.name = "ratio",
     .type = FieldType::Float32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fixed, ratio)},
    {.name = "name",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fixed, name)},
    {.name = "lengths",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fixed, lengths),
     .element = FieldType::Unsigned16},
    {.name = "times",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fixed, times),
     .element = FieldType::Timestamp},
};

TEST(PluginData, WriterRingReaderRoundTrip) {
    std::vector<std::uint8_t> scratch(kMaxPluginData);
    InstanceWriter w(scratch.data(), scratch.size());
    w.setPlugin(2);
    for (int i = 0; i < 3; ++i) {  // several instances of one plugin (passivedns style)
        Fixed* f = w.begin<Fixed>();
        ASSERT_NE(f, nullptr);
        f->port = static_cast<std::uint16_t>(53 + i);
        f->dir = -1;
        f->ratio = 0.5F;
        f->name = w.appendString("host" + std::to_string(i) + ".example\"q");
        const std::array<std::uint16_t, 3> lengths{1, 2, static_cast<std::uint16_t>(i)};
        f->lengths = w.append(std::span<const std::uint16_t>(lengths));
        const std::array<TimeNs, 2> times{1'000'000'000ULL, 2'000'000'000ULL};
        f->times = w.append(std::span<const TimeNs>(times));
        w.commit();
    }
    w.setPlugin(5);
    ASSERT_NE(w.begin<Fixed>(), nullptr);  // an instance with empty variable parts
    w.commit();
    EXPECT_EQ(w.instances(), 4U);
    EXPECT_EQ(w.size() % 8, 0U);

    ExtRing ring(1 << 18);
    FlowRecord rec;
    rec.ext = ring.tryPush(w.data(), w.size());
    ASSERT_NE(rec.ext, nullptr);
    rec.extLen = static_cast<std::uint32_t>(w.size());

    std::vector<PluginInstance> seen;
    for (const PluginInstance inst : pluginInstances(rec)) seen.push_back(inst);
    ASSERT_EQ(seen.size(), 4U);
    for (int i = 0; i < 3; ++i) {
        const auto& d = seen[i].data;
        EXPECT_EQ(seen[i].plugin, 2);
        EXPECT_EQ(readPluginUnsigned(kFields[0], d), 53U + i);
        EXPECT_EQ(readPluginSigned(kFields[1], d), -1);
        EXPECT_FLOAT_EQ(readPluginFloat(kFields[2], d), 0.5F);
        EXPECT_EQ(readPluginString(kFields[3], d), "host" + std::to_string(i) + ".example\"q");
        const ArrayView lengths = readPluginArray(kFields[4], d);
        ASSERT_EQ(lengths.size(), 3U);
        EXPECT_EQ(lengths.unsignedAt(1), 2U);
        EXPECT_EQ(lengths.unsignedAt(2), static_cast<std::uint64_t>(i));
        const ArrayView times = readPluginArray(kFields[5], d);
        ASSERT_EQ(times.size(), 2U);
        EXPECT_EQ(times.unsignedAt(1), 2'000'000'000ULL);
    }
    EXPECT_EQ(seen[3].plugin, 5);
    EXPECT_TRUE(readPluginString(kFields[3], seen[3].data).empty());
    EXPECT_EQ(readPluginArray(kFields[4], seen[3].data).size(), 0U);

    FlowRecord none;  // a flow without plugin data has no instances
    EXPECT_TRUE(pluginInstances(none).empty());
}

TEST(PluginData, WriterDropsWhatDoesNotFitAndKeepsTheRest) {
    std::vector<std::uint8_t> scratch(256);
    InstanceWriter w(scratch.data(), scratch.size());
    Fixed* f = w.begin<Fixed>();
    ASSERT_NE(f, nullptr);
    f->port = 1;
    w.commit();
    const std::size_t kept = w.size();
    f = w.begin<Fixed>();
    ASSERT_NE(f, nullptr);
    const std::string big(1000, 'x');
    f->name = w.appendString(big);  // does not fit: the whole instance is dropped
    w.commit();
    EXPECT_EQ(w.size(), kept);
    EXPECT_EQ(w.instances(), 1U);
    EXPECT_EQ(w.dropped(), 1U);
}

TEST(PluginData, ReadersRejectReferencesOutsideTheInstance) {
    Fixed f;
    f.name = {4, 1000};  // corrupt: beyond the data
    std::array<std::uint8_t, sizeof(Fixed)> bytes{};
    std::memcpy(bytes.data(), &f, sizeof f);
    EXPECT_TRUE(readPluginBytes(kFields[3], bytes).empty());
    EXPECT_EQ(readPluginUnsigned(kFields[0], std::span<const std::uint8_t>(bytes).first(1)), 0U);
}

TEST(PluginData, ExtRingWrapsAndReleasesInOrder) {
    ExtRing ring(2 * kMaxPluginData);  // the smallest ring
    // Blobs whose size does not divide the capacity: the producer wraps with padding, and the
    // consumer's releases free the padding too.
    std::vector<std::uint8_t> blob(ring.capacity() / 3 + 8, 0xAB);
    const std::atomic<bool> never{false};
    std::deque<const std::uint8_t*> pending;
    std::size_t fullSeen = 0;
    for (int i = 0; i < 50; ++i) {
        blob[0] = static_cast<std::uint8_t>(i);
        const std::uint8_t* p = ring.tryPush(blob.data(), blob.size());
        if (p == nullptr) {  // full: the consumer releases the oldest, then it fits
            ++fullSeen;
            ASSERT_FALSE(pending.empty());
            ring.releaseThrough(pending.front(), blob.size());
            pending.pop_front();
            p = ring.waitPush(blob.data(), blob.size(), never);
        }
        ASSERT_NE(p, nullptr);
        ASSERT_TRUE(ring.owns(p) && ring.owns(p + blob.size() - 1));  // never split by the wrap
        EXPECT_EQ(p[0], static_cast<std::uint8_t>(i));
        for (const std::uint8_t* q : pending) EXPECT_NE(q, p);  // live blobs are not overwritten
        pending.push_back(p);
    }
    EXPECT_GT(fullSeen, 10U);  // the ring did fill and wrap many times
    EXPECT_LE(pending.size(), 3U);
}

struct Mixed {
    VarRef text;
    VarRef blob;
    VarRef blobText;
    VarRef dirs;
    VarRef times;
    std::array<std::uint8_t, 16> addr;
    float ratio;
    std::int8_t dir;
};

std::string json(const FieldSpec& f, std::span<const std::uint8_t> data) {
    std::string out(pluginValueMaxChars(data.size()), '\0');
    char* end = formatPluginValueJson(out.data(), f, data);
    out.resize(static_cast<std::size_t>(end - out.data()));
    return out;
}

TEST(PluginData, JsonFormOfEveryType) {
    std::vector<std::uint8_t> scratch(4096);
    InstanceWriter w(scratch.data(), scratch.size());
    Mixed* m = w.begin<Mixed>();
    ASSERT_NE(m, nullptr);
    m->text = w.appendString(std::string_view("a\"b\\c\n\x01\xE9", 8));
    const std::uint8_t blob[] = {0x00, 0xAB, 0xFF};
    m->blob = w.appendBytes(blob, sizeof blob);
    m->blobText = w.appendString("v=1");
    const std::int8_t dirs[] = {1, -1, -128};
    m->dirs = w.append(std::span<const std::int8_t>(dirs));
    const TimeNs times[] = {1'477'674'472'625'696'000ULL};
    m->times = w.append(std::span<const TimeNs>(times));
    m->addr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 5, 5, 1};
    m->ratio = 0.25F;
    m->dir = -3;
    w.commit();
    const auto data = (*PluginInstances(w.data(), w.size()).begin()).data;
    const auto spec = [](FieldType t, std::uint16_t off, FieldType el = FieldType::Unsigned8,
                         FieldHint hint = FieldHint::None) {
        FieldSpec f;
        f.type = t;
        f.origin = FieldOrigin::Plugin;
        f.offset = off;
        f.element = el;
        f.hint = hint;
        return f;
    };
    EXPECT_EQ(json(spec(FieldType::String, offsetof(Mixed, text)), data),
              "\"a\\\"b\\\\c\\u000a\\u0001\\u00e9\"");
    EXPECT_EQ(json(spec(FieldType::Binary, offsetof(Mixed, blob)), data), "\"00abff\"");
    EXPECT_EQ(json(spec(FieldType::Binary, offsetof(Mixed, blobText), FieldType::Unsigned8,
                        FieldHint::Text),
                   data),
              "\"v=1\"");
    EXPECT_EQ(json(spec(FieldType::Array, offsetof(Mixed, dirs), FieldType::Int8), data),
              "[1,-1,-128]");
    EXPECT_EQ(json(spec(FieldType::Array, offsetof(Mixed, times), FieldType::Timestamp), data),
              "[\"2016-10-28T17:07:52.625696000Z\"]");
    EXPECT_EQ(json(spec(FieldType::IpAddress, offsetof(Mixed, addr)), data), "\"10.5.5.1\"");
    EXPECT_EQ(json(spec(FieldType::Float32, offsetof(Mixed, ratio)), data), "0.25");
    EXPECT_EQ(json(spec(FieldType::Int8, offsetof(Mixed, dir)), data), "-3");
}

// Int16 / Int32 scalars: sign-extended when read, written as JSON integers, their extremes
// included; an offset past the instance reads 0 (bounds-checked).
TEST(PluginData, SignedScalarsOfEveryWidth) {
    struct Signed {
        std::int16_t a;
        std::int16_t b;
        std::int32_t c;
        std::int32_t d;
    };
    const Signed s{-32768, 32767, -2'147'483'647 - 1, -1};
    const std::span<const std::uint8_t> data(reinterpret_cast<const std::uint8_t*>(&s), sizeof s);
    auto spec = [](FieldType t, std::size_t off) {
        FieldSpec f;
        f.type = t;
        f.origin = FieldOrigin::Plugin;
        f.offset = static_cast<std::uint16_t>(off);
        return f;
    };
    EXPECT_EQ(json(spec(FieldType::Int16, offsetof(Signed, a)), data), "-32768");
    EXPECT_EQ(json(spec(FieldType::Int16, offsetof(Signed, b)), data), "32767");
    EXPECT_EQ(json(spec(FieldType::Int32, offsetof(Signed, c)), data), "-2147483648");
    EXPECT_EQ(json(spec(FieldType::Int32, offsetof(Signed, d)), data), "-1");
    EXPECT_EQ(readPluginSigned(spec(FieldType::Int32, offsetof(Signed, d)), data), -1);
    EXPECT_EQ(readPluginSigned(spec(FieldType::Int32, sizeof s - 2), data), 0);  // past the end
    EXPECT_EQ(readPluginUnsigned(spec(FieldType::Int16, 0), data), 0U);  // not an unsigned type
    EXPECT_TRUE(isSigned(FieldType::Int16) && isSigned(FieldType::Int32) &&
                isSigned(FieldType::Int8) && !isSigned(FieldType::Unsigned16));
    EXPECT_EQ(fieldTypeSize(FieldType::Int16), 2U);
    EXPECT_EQ(fieldTypeSize(FieldType::Int32), 4U);
    const std::int16_t values[] = {-2, 300};
    const ArrayView a(FieldType::Int16,
                      {reinterpret_cast<const std::uint8_t*>(values), sizeof values});
    ASSERT_EQ(a.size(), 2U);
    EXPECT_EQ(a.signedAt(0), -2);
    EXPECT_EQ(a.signedAt(1), 300);
}

/// One instance holding a single variable-length value; `spec` reads it.
struct OneVar {
    std::vector<std::uint8_t> scratch = std::vector<std::uint8_t>(kMaxPluginData);
    std::span<const std::uint8_t> data;
    FieldSpec spec;

    OneVar(FieldType type, FieldType element, std::span<const std::uint8_t> bytes) {
        InstanceWriter w(scratch.data(), scratch.size());
        VarRef* ref = w.begin<VarRef>();
        *ref = w.appendBytes(bytes.data(), bytes.size());
        w.commit();
        data = (*PluginInstances(w.data(), w.size()).begin()).data;
        spec.type = type;
        spec.origin = FieldOrigin::Plugin;
        spec.offset = 0;
        spec.element = element;
    }
};

/// The documented escaping, one byte at a time (what the output wrote before the 8-byte fast
/// path): printable ASCII as is (DEL too), '"' and '\\' backslashed, everything else \u00XX.
std::string escapedReference(std::span<const std::uint8_t> bytes) {
    std::string out = "\"";
    for (const std::uint8_t c : bytes) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x80) {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u00%02x", c);
            out += buf;
        }
    }
    return out + '"';
}

TEST(PluginData, JsonStringEscapesControlBytesAndInvalidUtf8ByteByByte) {
    const auto str = [](std::string_view text) {
        const OneVar v(FieldType::String, FieldType::Unsigned8,
                       {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
        return json(v.spec, v.data);
    };
    EXPECT_EQ(str(""), "\"\"");
    EXPECT_EQ(str("www.example.com/index.html?q=1"), "\"www.example.com/index.html?q=1\"");
    EXPECT_EQ(str(std::string_view("\x00\x1f \x7f", 4)), "\"\\u0000\\u001f \x7f\"");
    EXPECT_EQ(str("tab\there\r\n"), "\"tab\\u0009here\\u000d\\u000a\"");
    EXPECT_EQ(str("caf\xc3\xa9"), "\"caf\\u00c3\\u00a9\"");         // UTF-8 too: bytes >= 0x80
    EXPECT_EQ(str("\xff\xfe\xc3("), "\"\\u00ff\\u00fe\\u00c3(\"");  // invalid UTF-8
    EXPECT_EQ(str("12345678\"\\"), "\"12345678\\\"\\\\\"");         // escapes after a clean block
}

/// Random byte strings of every length up to 40, clean or with a byte needing an escape at any
/// position (inside and across the 8-byte blocks), against the byte-by-byte rule.
TEST(PluginData, JsonStringFastPathMatchesTheByteRule) {
    std::mt19937_64 rng(5);
    static constexpr std::uint8_t kSpecial[] = {0x00, 0x01, 0x1f, 0x20, 0x21, '"',  '\\',
                                                0x5b, 0x5d, 0x7e, 0x7f, 0x80, 0xc3, 0xff};
    for (unsigned k = 0; k < 20'000; ++k) {
        std::vector<std::uint8_t> bytes(k % 41);
        for (auto& b : bytes) b = static_cast<std::uint8_t>('a' + rng() % 26);
        for (auto e = static_cast<unsigned>(rng() % 3); e > 0 && !bytes.empty(); --e) {
            bytes[rng() % bytes.size()] = kSpecial[rng() % std::size(kSpecial)];
        }
        const OneVar v(FieldType::String, FieldType::Unsigned8, bytes);
        ASSERT_EQ(json(v.spec, v.data), escapedReference(bytes)) << k;
    }
}

template <typename T>
std::string jsonArray(FieldType element, const std::vector<T>& values) {
    const OneVar v(
        FieldType::Array, element,
        {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(T)});
    return json(v.spec, v.data);
}

TEST(PluginData, JsonArraysOfEveryElementTypeEdges) {
    EXPECT_EQ(jsonArray<std::uint16_t>(FieldType::Unsigned16, {}), "[]");
    EXPECT_EQ(jsonArray<std::uint8_t>(FieldType::Unsigned8, {0, 9, 10, 255}), "[0,9,10,255]");
    EXPECT_EQ(jsonArray<std::uint16_t>(FieldType::Unsigned16, {1500}), "[1500]");
    EXPECT_EQ(jsonArray<std::uint32_t>(FieldType::Unsigned32, {0, 4'294'967'295U}),
              "[0,4294967295]");
    EXPECT_EQ(jsonArray<std::uint64_t>(FieldType::Unsigned64, {~std::uint64_t{0}, 0}),
              "[18446744073709551615,0]");
    EXPECT_EQ(jsonArray<std::int8_t>(FieldType::Int8, {-128, 0, 127, -1}), "[-128,0,127,-1]");
    // Around the one-digit and -1 shortcut.
    EXPECT_EQ(jsonArray<std::int8_t>(FieldType::Int8, {-11, -10, -9, -2, -1, 0, 1, 9, 10, 11}),
              "[-11,-10,-9,-2,-1,0,1,9,10,11]");
    EXPECT_EQ(jsonArray<std::int32_t>(FieldType::Int32, {-1, -1, 10, 9, -10, 100000}),
              "[-1,-1,10,9,-10,100000]");
    EXPECT_EQ(jsonArray<std::int16_t>(FieldType::Int16, {-32768, -1, 0, 32767}),
              "[-32768,-1,0,32767]");
    EXPECT_EQ(
        jsonArray<std::int32_t>(FieldType::Int32, {-2'147'483'647 - 1, -1, 65535, 2'147'483'647}),
        "[-2147483648,-1,65535,2147483647]");
    EXPECT_EQ(jsonArray<float>(FieldType::Float32, {0.5F, std::numeric_limits<float>::quiet_NaN(),
                                                    std::numeric_limits<float>::infinity(), -2.0F}),
              "[0.5,null,null,-2]");
    EXPECT_EQ(jsonArray<TimeNs>(FieldType::Timestamp, {0, 1'700'000'000'000'000'001ULL}),
              "[\"1970-01-01T00:00:00.000000000Z\",\"2023-11-14T22:13:20.000000001Z\"]");
    // A byte count that is not a whole number of elements: the partial element is left out.
    const std::uint8_t odd[] = {1, 0, 2};
    const OneVar v(FieldType::Array, FieldType::Unsigned16, odd);
    EXPECT_EQ(json(v.spec, v.data), "[1]");
}

/// The text of `values` written one by one, as the writer did before its -1 runs.
template <typename T>
std::string oneByOne(const std::vector<T>& values) {
    std::string s = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        s += (i == 0 ? "" : ",") + std::to_string(static_cast<long long>(values[i]));
    return s + "]";
}

// flowstats' SPLT arrays end in NFStream's -1 padding, which the writer copies as whole runs:
// every run length around its 32-value blocks, after heads with and without -1 in them, reads
// as the values written one by one.
TEST(PluginData, JsonSignedArraysEndingInMinusOneRuns) {
    for (const std::size_t run : {0, 1, 2, 31, 32, 33, 64, 65, 254, 255, 1000}) {
        for (const std::vector<std::int32_t>& head : std::vector<std::vector<std::int32_t>>{
                 {}, {0}, {-1, 7}, {1500, -1, -2}, {-2'147'483'647 - 1}}) {
            std::vector<std::int32_t> v32 = head;
            v32.insert(v32.end(), run, -1);
            EXPECT_EQ(jsonArray<std::int32_t>(FieldType::Int32, v32), oneByOne(v32))
                << "run " << run << " after " << head.size();
            std::vector<std::int16_t> v16(v32.begin(), v32.end());
            for (auto& x : v16) x = x == -2'147'483'647 - 1 ? std::int16_t{-32768} : x;
            EXPECT_EQ(jsonArray<std::int16_t>(FieldType::Int16, v16), oneByOne(v16));
            std::vector<std::int8_t> v8(v16.size());
            for (std::size_t i = 0; i < v8.size(); ++i)
                v8[i] = static_cast<std::int8_t>(std::clamp<int>(v16[i], -128, 127));
            EXPECT_EQ(jsonArray<std::int8_t>(FieldType::Int8, v8), oneByOne(v8));
        }
    }
    EXPECT_EQ(jsonArray<std::int8_t>(FieldType::Int8, {-1}), "[-1]");
    EXPECT_EQ(jsonArray<std::int8_t>(FieldType::Int8, {-1, -1, 0}), "[-1,-1,0]");
    // Unsigned arrays have no such run: 255 and 65535 are values, not padding.
    EXPECT_EQ(jsonArray<std::uint8_t>(FieldType::Unsigned8, {255, 255}), "[255,255]");
    EXPECT_EQ(jsonArray<std::uint16_t>(FieldType::Unsigned16, {65535}), "[65535]");
}

// Floats are written as std::to_chars writes them (shortest exact form); whole values below
// 10^5 take an integer shortcut, which must give the same bytes: every one of them, their
// neighbours, -0, the first values where the scientific form is shorter, and random bit
// patterns (NaN and infinities are null).
TEST(PluginData, JsonFloatsAreStdToCharsExactly) {
    const auto expected = [](float v) {
        if (std::isnan(v) || std::isinf(v)) return std::string("null");
        std::array<char, 64> b{};
        return std::string(b.data(), std::to_chars(b.data(), b.data() + b.size(), v).ptr);
    };
    const auto written = [](float v) { return jsonArray<float>(FieldType::Float32, {v}); };
    for (std::uint32_t i = 0; i <= 100001; ++i) {
        const auto v = static_cast<float>(i);
        ASSERT_EQ(written(v), "[" + expected(v) + "]") << i;
        const float up = std::nextafter(v, 1e9F);
        ASSERT_EQ(written(up), "[" + expected(up) + "]") << i;
        const float down = std::nextafter(v, -1e9F);
        ASSERT_EQ(written(down), "[" + expected(down) + "]") << i;
        ASSERT_EQ(written(-v), "[" + expected(-v) + "]") << i;
    }
    EXPECT_EQ(written(-0.0F), "[-0]");
    EXPECT_EQ(written(100000.0F), "[1e+05]");
    EXPECT_EQ(written(99999.0F), "[99999]");
    std::mt19937 rng(24);
    for (int i = 0; i < 200000; ++i) {
        const auto v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
        ASSERT_EQ(written(v), "[" + expected(v) + "]") << i;
    }
}

// Each field's writer resolved once (jsonValueWriter, what the JSON outputs keep per column)
// writes what formatPluginValueJson writes, for every type the JSON form knows.
TEST(PluginData, ResolvedJsonWritersMatchFormatPluginValueJson) {
    struct Row {
        std::uint8_t u8;
        std::uint16_t u16;
        std::uint32_t u32;
        std::uint64_t u64;
        TimeNs time;
        std::array<std::uint8_t, 16> addr;
        std::array<std::uint8_t, 6> mac;
        std::int8_t i8;
        std::int16_t i16;
        std::int32_t i32;
        float f;
        VarRef text;
        VarRef addrs;
    };
    std::vector<std::uint8_t> scratch(4096);
    InstanceWriter w(scratch.data(), scratch.size());
    Row* r = w.begin<Row>();
    ASSERT_NE(r, nullptr);
    *r = Row{.u8 = 200,
             .u16 = 1500,
             .u32 = 70000,
             .u64 = 1ULL << 40,
             .time = 1'700'000'000'123'456'789ULL,
             .addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
             .mac = {2, 0, 0, 0, 0, 1},
             .i8 = -5,
             .i16 = -300,
             .i32 = -70000,
             .f = 12.5F,
             .text = {},
             .addrs = {}};
    r->text = w.appendString("x\"y");
    const std::array<std::uint8_t, 32> two{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1,
                                           0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 2};
    r->addrs = w.append(std::span<const std::uint8_t>(two));
    w.commit();
    const auto data = (*PluginInstances(w.data(), w.size()).begin()).data;
    struct Case {
        FieldType type;
        std::size_t offset;
        FieldType element;
        std::string_view json;
    };
    const Case cases[] = {
        {FieldType::Unsigned8, offsetof(Row, u8), FieldType::Unsigned8, "200"},
        {FieldType::Unsigned16, offsetof(Row, u16), FieldType::Unsigned8, "1500"},
        {FieldType::Unsigned32, offsetof(Row, u32), FieldType::Unsigned8, "70000"},
        {FieldType::Unsigned64, offsetof(Row, u64), FieldType::Unsigned8, "1099511627776"},
        {FieldType::Timestamp, offsetof(Row, time), FieldType::Unsigned8,
         "\"2023-11-14T22:13:20.123456789Z\""},
        {FieldType::IpAddress, offsetof(Row, addr), FieldType::Unsigned8, "\"2001:db8::1\""},
        {FieldType::MacAddress, offsetof(Row, mac), FieldType::Unsigned8, "\"02:00:00:00:00:01\""},
        {FieldType::Int8, offsetof(Row, i8), FieldType::Unsigned8, "-5"},
        {FieldType::Int16, offsetof(Row, i16), FieldType::Unsigned8, "-300"},
        {FieldType::Int32, offsetof(Row, i32), FieldType::Unsigned8, "-70000"},
        {FieldType::Float32, offsetof(Row, f), FieldType::Unsigned8, "12.5"},
        {FieldType::String, offsetof(Row, text), FieldType::Unsigned8, "\"x\\\"y\""},
        {FieldType::Binary, offsetof(Row, text), FieldType::Unsigned8, "\"782279\""},
        {FieldType::Array, offsetof(Row, addrs), FieldType::IpAddress,
         "[\"10.0.0.1\",\"10.0.0.2\"]"},
        {FieldType::Array, offsetof(Row, addrs), FieldType::String, "[]"},
        // Past the instance: the bounds checks read nothing.
        {FieldType::Unsigned64, 4000, FieldType::Unsigned8, "0"},
        {FieldType::Array, 4000, FieldType::Int32, "[]"},
    };
    for (const Case& c : cases) {
        FieldSpec f;
        f.type = c.type;
        f.origin = FieldOrigin::Plugin;
        f.offset = static_cast<std::uint16_t>(c.offset);
        f.element = c.element;
        std::string viaSwitch(pluginValueMaxChars(data.size()), '\0');
        viaSwitch.resize(static_cast<std::size_t>(formatPluginValueJson(viaSwitch.data(), f, data) -
                                                  viaSwitch.data()));
        std::string resolved(pluginValueMaxChars(data.size()), '\0');
        resolved.resize(static_cast<std::size_t>(jsonValueWriter(f)(resolved.data(), f, data) -
                                                 resolved.data()));
        EXPECT_EQ(resolved, c.json) << static_cast<int>(c.type) << " at " << c.offset;
        EXPECT_EQ(viaSwitch, resolved);
    }
}

// The one instance-to-line rule every output uses (InstanceGroups): a plugin with one instance
// is on every line, one with several has its instance k on line k only; a mask restricts the
// line count to some plugins; instances of unlisted plugins are ignored.
TEST(InstanceGroups, OneLinePerInstanceOfTheBusiestPlugin) {
    std::vector<std::uint8_t> scratch(kMaxPluginData);
    InstanceWriter w(scratch.data(), scratch.size());
    w.setPlugin(0);
    ASSERT_NE(w.begin<Fixed>(), nullptr);
    w.commit();
    w.setPlugin(1);
    for (int i = 0; i < 3; ++i) {
        Fixed* f = w.begin<Fixed>();
        ASSERT_NE(f, nullptr);
        f->port = static_cast<std::uint16_t>(100 + i);
        w.commit();
    }
    w.setPlugin(7);  // beyond the -p list below
    for (int i = 0; i < 5; ++i) {
        ASSERT_NE(w.begin<Fixed>(), nullptr);
        w.commit();
    }
    FlowRecord r;
    r.ext = scratch.data();
    r.extLen = static_cast<std::uint32_t>(w.size());

    InstanceGroups g(3);
    g.load(r);
    EXPECT_EQ(g.lines(), 3U);
    EXPECT_EQ(g.lines(0b001), 1U);
    EXPECT_EQ(g.lines(0b010), 3U);
    EXPECT_EQ(g.lines(0b100), 0U);
    for (std::size_t k = 0; k < 3; ++k) {
        const PluginInstance* p0 = g.at(0, k);
        ASSERT_NE(p0, nullptr) << k;
        EXPECT_EQ(p0->plugin, 0U);
        const PluginInstance* p1 = g.at(1, k);
        ASSERT_NE(p1, nullptr) << k;
        EXPECT_EQ(readPluginUnsigned(kFields[0], p1->data), 100 + k);
        EXPECT_EQ(g.at(2, k), nullptr);
    }
    EXPECT_EQ(g.at(1, 3), nullptr);
    EXPECT_EQ(g.at(7, 0), nullptr);
    EXPECT_EQ(g.bytes(), 4 * sizeof(Fixed));

    FlowRecord none;
    g.load(none);  // reused: nothing of the previous record is left
    EXPECT_EQ(g.lines(), 0U);
    EXPECT_EQ(g.at(0, 0), nullptr);
    EXPECT_EQ(g.bytes(), 0U);
}

}  // namespace
}  // namespace rowprobe
