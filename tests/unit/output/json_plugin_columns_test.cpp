// JsonPluginColumns::writeFields writes unsigned scalars and floats inline: the same bytes as
// each field's own JSON writer (formatPluginValueJson), checked value by value at the edges of
// every type, beside arrays (which go through their writers), and on an instance too short to
// hold the fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fake_plugins.hpp"
#include "output/common/json_layout.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin_data.hpp"

namespace rowprobe::output {
namespace {

struct Values {
    std::uint8_t u8 = 0;
    std::uint16_t u16 = 0;
    std::uint32_t u32 = 0;
    std::uint64_t u64 = 0;
    float f32 = 0;
    VarRef i8s;
    VarRef i32s;
    VarRef u16s;  // an array type writeFields leaves to its writer
};

constexpr FieldSpec kFields[] = {
    {.name = "u8",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Values, u8)},
    {.name = "u16",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Values, u16)},
    {.name = "u32",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Values, u32)},
    {.name = "u64",
     .type = FieldType::Unsigned64,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Values, u64)},
    {.name = "f32",
     .type = FieldType::Float32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Values, f32)},
    arrayField("i8s", "", offsetof(Values, i8s), {}, FieldType::Int8, {}),
    arrayField("i32s", "", offsetof(Values, i32s), {}, FieldType::Int32, {}),
    arrayField("u16s", "", offsetof(Values, u16s), {}, FieldType::Unsigned16, {}),
};

/// What the fields' own writers make of `data`: `,"name":value` per field.
std::string expectedOf(std::span<const FieldSpec> fields, std::span<const std::uint8_t> data) {
    std::string out;
    std::vector<char> buf(1 << 16);
    for (const FieldSpec& f : fields) {
        out += ",\"" + std::string(f.name) + "\":";
        out.append(buf.data(), formatPluginValueJson(buf.data(), f, data));
    }
    return out;
}

std::string expected(std::span<const std::uint8_t> data) { return expectedOf(kFields, data); }

/// What writeFields writes for a record carrying `data` as its one instance.
std::string written(const JsonPluginColumns& columns, std::span<const std::uint8_t> data) {
    std::vector<std::uint8_t> buffer(kMaxPluginData);
    InstanceWriter w(buffer.data(), buffer.size());
    w.setPlugin(0);
    void* fixed = w.beginRaw(data.size());
    if (!data.empty()) std::memcpy(fixed, data.data(), data.size());
    w.commit();
    FlowRecord r;
    r.ext = buffer.data();
    r.extLen = static_cast<std::uint32_t>(w.size());
    InstanceGroups groups(1);
    groups.load(r);
    std::vector<char> out(1 << 16);
    return {out.data(), columns.writeFields(out.data(), groups, 0)};
}

class Builder {
public:
    Builder() : m_buffer(kMaxPluginData), m_writer(m_buffer.data(), m_buffer.size()) {}
    /// One instance's bytes (fixed part and arrays) as the plugin would write them.
    std::vector<std::uint8_t> make(const Values& v, std::span<const std::int8_t> i8s,
                                   std::span<const std::int32_t> i32s,
                                   std::span<const std::uint16_t> u16s) {
        m_writer.setPlugin(0);
        auto* f = m_writer.begin<Values>();
        *f = v;
        f->i8s = m_writer.append(i8s);
        f->i32s = m_writer.append(i32s);
        f->u16s = m_writer.append(u16s);
        m_writer.commit();
        FlowRecord r;
        r.ext = m_buffer.data();
        r.extLen = static_cast<std::uint32_t>(m_writer.size());
        const PluginInstance i = *pluginInstances(r).begin();
        return {i.data.begin(), i.data.end()};
    }

private:
    std::vector<std::uint8_t> m_buffer;
    InstanceWriter m_writer;
};

TEST(JsonPluginColumns, InlineValuesAreTheFieldWritersBytesAtEveryEdge) {
    const test::plugins::FakePlugin plugin("edges", kFields);
    const ProcessPlugin* const plugins[] = {&plugin};
    const JsonPluginColumns columns(plugins);
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> floats = {0.0F,          -0.0F,     1.0F,   9.0F,       10.0F,
                                       99999.0F,      100000.0F, 1e6F,   0.5F,       40.286472F,
                                       -1.0F,         -3.25F,    1e-45F, 3.4e38F,    99999.5F,
                                       std::nanf(""), inf,       -inf,   16777216.0F};
    const std::vector<std::uint64_t> unsigneds = {
        0, 1, 9, 10, 99, 100, 255, 65535, 4294967295U, std::numeric_limits<std::uint64_t>::max()};
    const std::vector<std::int8_t> i8s = {-128, -2, -1, 0, 1, 9, 10, 127};
    const std::vector<std::int32_t> i32s = {
        std::numeric_limits<std::int32_t>::min(), -100, -10, -9, -1, 0, 9, 10, 2147483647};
    const std::vector<std::uint16_t> u16s = {0, 7, 65535};
    std::size_t checked = 0;
    for (std::size_t k = 0; k < std::max(floats.size(), unsigneds.size()); ++k) {
        const std::uint64_t u = unsigneds[k % unsigneds.size()];
        const Values v{.u8 = static_cast<std::uint8_t>(u),
                       .u16 = static_cast<std::uint16_t>(u),
                       .u32 = static_cast<std::uint32_t>(u),
                       .u64 = u,
                       .f32 = floats[k % floats.size()]};
        Builder b;
        // Whole arrays, an empty one, and a single element of each edge.
        const std::vector<std::uint8_t> data =
            k == 0 ? b.make(v, {}, {}, {})
                   : b.make(v, k == 1 ? std::span(i8s) : std::span(i8s).subspan(k % i8s.size(), 1),
                            k == 1 ? std::span(i32s) : std::span(i32s).subspan(k % i32s.size(), 1),
                            u16s);
        EXPECT_EQ(written(columns, data), expected(data))
            << "case " << k << ", float " << v.f32 << ", unsigned " << u;
        ++checked;
    }
    EXPECT_EQ(checked, floats.size());
}

TEST(JsonPluginColumns, AnInstanceTooShortForItsFieldsWritesWhatTheWritersWrite) {
    // The fixed part cut after the u32: the later scalars read as 0, the arrays as empty.
    const test::plugins::FakePlugin plugin("short", kFields);
    const ProcessPlugin* const plugins[] = {&plugin};
    const JsonPluginColumns columns(plugins);
    Values v{.u8 = 200, .u16 = 4000, .u32 = 123456789, .u64 = 5, .f32 = 2.5F};
    std::vector<std::uint8_t> data(offsetof(Values, u64));
    std::memcpy(data.data(), &v, data.size());
    const std::string text = written(columns, data);
    EXPECT_EQ(text, expected(data));
    EXPECT_NE(text.find("\"u32\":123456789,\"u64\":0,\"f32\":0,\"i8s\":[]"), std::string::npos)
        << text;
}

/// Shaped like flowstats: a series of eight statistics (36 bytes), then sixteen counters whose
/// columns take every other one (f0 flags[0], f1 flags[2], ..., f8 flags[1], ...), then a lone
/// counter: three runs of eight columns, the last two with the other run's values inside their
/// spans, and one column.
struct Sparse {
    std::uint64_t minPiat;
    std::uint64_t maxPiat;
    float mean;
    float stddev;
    float meanPiat;
    float stddevPiat;
    std::uint16_t minPs;
    std::uint16_t maxPs;
    std::array<std::uint32_t, 16> flags;
    std::uint8_t last;
};

constexpr FieldSpec sparseField(std::string_view name, FieldType type, std::size_t offset) {
    return {.name = name,
            .type = type,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset)};
}

constexpr std::string_view kFlagNames[] = {"f0", "f1", "f2",  "f3",  "f4",  "f5",  "f6",  "f7",
                                           "f8", "f9", "f10", "f11", "f12", "f13", "f14", "f15"};

std::vector<FieldSpec> sparseFields() {
    std::vector<FieldSpec> f = {
        sparseField("min_ps", FieldType::Unsigned16, offsetof(Sparse, minPs)),
        sparseField("mean_ps", FieldType::Float32, offsetof(Sparse, mean)),
        sparseField("stddev_ps", FieldType::Float32, offsetof(Sparse, stddev)),
        sparseField("max_ps", FieldType::Unsigned16, offsetof(Sparse, maxPs)),
        sparseField("min_piat_ms", FieldType::Unsigned64, offsetof(Sparse, minPiat)),
        sparseField("mean_piat_ms", FieldType::Float32, offsetof(Sparse, meanPiat)),
        sparseField("stddev_piat_ms", FieldType::Float32, offsetof(Sparse, stddevPiat)),
        sparseField("max_piat_ms", FieldType::Unsigned64, offsetof(Sparse, maxPiat))};
    for (std::size_t i = 0; i < 16; ++i) {
        f.push_back(
            sparseField(kFlagNames[i], FieldType::Unsigned32,
                        offsetof(Sparse, flags) + ((i % 8) * 2 + i / 8) * sizeof(std::uint32_t)));
    }
    f.push_back(sparseField("last", FieldType::Unsigned8, offsetof(Sparse, last)));
    return f;
}

TEST(JsonPluginColumns, RunsOfZeroValuesAreTheFieldWritersBytes) {
    // Every value zero or not at random (zero-heavy, as a UDP flow's flag counts or a silent
    // direction's statistics), -0.0 among the floats (not zero bytes: written as -0), and runs
    // whose own values are zero while the other run's, inside their span, are not (then written
    // column by column); each object must be what the writers make of it.
    const std::vector<FieldSpec> fields = sparseFields();
    const test::plugins::FakePlugin plugin("sparse", fields);
    const ProcessPlugin* const plugins[] = {&plugin};
    const JsonPluginColumns columns(plugins);
    std::uint64_t x = 88172645463325252ULL;
    auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    std::size_t allZero = 0;
    for (int k = 0; k < 4000; ++k) {
        Sparse v;
        std::memset(&v, 0, sizeof v);        // padding included: the runs' spans are compared whole
        const bool quiet = next() % 2 == 0;  // most values of a quiet record are zero
        // A value that is not zero is `big` or one non-zero byte anywhere in 8 (cut to the
        // field's width by the caller): a run's last byte must count as much as its first.
        auto pick = [&](std::uint64_t big) -> std::uint64_t {
            if (next() % (quiet ? 8 : 2) != 0) return 0;
            if (next() % 2 == 0) return big;
            return (next() % 255 + 1) << (8 * (next() % 8));
        };
        v.minPiat = pick(next() % 100000);
        v.maxPiat = pick(next());
        v.mean = static_cast<float>(pick(1)) * (next() % 3 == 0 ? -0.0F : 289.5F);
        v.stddev = static_cast<float>(pick(next() % 1000)) / 7.0F;
        v.meanPiat = static_cast<float>(pick(3));
        v.stddevPiat = static_cast<float>(pick(1)) * 0.25F;
        v.minPs = static_cast<std::uint16_t>(pick(next() % 65536));
        v.maxPs = static_cast<std::uint16_t>(pick(1500));
        for (std::uint32_t& f : v.flags) f = static_cast<std::uint32_t>(pick(next() % 5000000000U));
        v.last = static_cast<std::uint8_t>(pick(next() % 256));
        std::vector<std::uint8_t> data(sizeof v);
        std::memcpy(data.data(), &v, sizeof v);
        const std::string text = written(columns, data);
        ASSERT_EQ(text, expectedOf(fields, data)) << "case " << k;
        if (std::all_of(data.begin(), data.end(), [](std::uint8_t b) { return b == 0; })) ++allZero;
    }
    EXPECT_GT(allZero, 10U);  // the all-zero object itself was among them
}

}  // namespace
}  // namespace rowprobe::output
