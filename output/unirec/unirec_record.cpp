#include "unirec_record.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "rowprobe/plugin_data.hpp"

namespace rowprobe::output {

namespace {

struct TypeRow {
    std::string_view name;
    int sortSize;
};

// libunirec's type strings and sort sizes (negative: variable, element size).
constexpr TypeRow kTypes[] = {
    {"int8", 1},     {"uint8", 1},    {"char", 1},    {"int16", 2},     {"uint16", 2},
    {"int32", 4},    {"uint32", 4},   {"float", 4},   {"int64", 8},     {"uint64", 8},
    {"double", 8},   {"macaddr", 6},  {"time", 8},    {"ipaddr", 16},   {"string", -1},
    {"bytes", -1},   {"uint8*", -1},  {"int8*", -1},  {"uint16*", -2},  {"int16*", -2},
    {"uint32*", -4}, {"int32*", -4},  {"float*", -4}, {"macaddr*", -6}, {"uint64*", -8},
    {"int64*", -8},  {"double*", -8}, {"time*", -8},  {"ipaddr*", -16},
};

bool validName(std::string_view n) {
    if (n.empty() || !((n[0] >= 'A' && n[0] <= 'Z') || (n[0] >= 'a' && n[0] <= 'z'))) return false;
    return std::all_of(n.begin(), n.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

void putLe(std::uint8_t* p, std::uint64_t v, std::size_t size) noexcept {
    for (std::size_t i = 0; i < size; ++i) {
        p[i] = static_cast<std::uint8_t>(v);
        v >>= 8;
    }
}

}  // namespace

UnirecType unirecType(std::string_view typeName) noexcept {
    for (const auto& t : kTypes) {
        if (t.name == typeName) return {t.name, t.sortSize, true};
    }
    return {};
}

std::uint64_t unirecTimeFromNs(TimeNs t) noexcept {
    const std::uint64_t sec = t / kNsPerSec;
    const std::uint64_t nsec = t % kNsPerSec;
    return (sec << 32) | ((nsec * 0x44B82FA0AULL) >> 32);
}

UnirecLayout::UnirecLayout(const std::vector<std::pair<std::string, std::string>>& fields) {
    for (const auto& [type, name] : fields) {
        const UnirecType t = unirecType(type);
        if (!t.known) throw std::invalid_argument("unknown UniRec type '" + type + "'");
        if (!validName(name))
            throw std::invalid_argument("invalid UniRec field name '" + name + "'");
        for (const auto& f : m_fields) {
            if (f.name == name)
                throw std::invalid_argument("UniRec field '" + name + "' given twice");
        }
        m_fields.push_back({name, type, t.sortSize, 0});
    }
    std::sort(m_fields.begin(), m_fields.end(), [](const Field& a, const Field& b) {
        if (a.sortSize != b.sortSize) return a.sortSize > b.sortSize;
        return std::strcmp(a.name.c_str(), b.name.c_str()) < 0;
    });
    for (auto& f : m_fields) {
        f.offset = m_staticSize;
        m_staticSize += f.size();
        if (!m_specifier.empty()) m_specifier += ',';
        m_specifier += f.type + ' ' + f.name;
    }
}

int UnirecLayout::find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < m_fields.size(); ++i) {
        if (m_fields[i].name == name) return static_cast<int>(i);
    }
    return -1;
}

UnirecRecordBuilder::UnirecRecordBuilder(const UnirecLayout& layout)
    : m_layout(layout), m_fixed(layout.staticSize(), 0), m_variable(layout.fields().size()) {}

void UnirecRecordBuilder::setFixed(std::string_view name, std::span<const std::uint8_t> encoded) {
    const int i = m_layout.find(name);
    if (i < 0 || m_layout.fields()[i].variable() || encoded.size() != m_layout.fields()[i].size()) {
        throw std::invalid_argument("not a fixed field of this size: " + std::string(name));
    }
    std::memcpy(m_fixed.data() + m_layout.fields()[i].offset, encoded.data(), encoded.size());
}

void UnirecRecordBuilder::setVariable(std::string_view name, std::span<const std::uint8_t> data) {
    const int i = m_layout.find(name);
    if (i < 0 || !m_layout.fields()[i].variable()) {
        throw std::invalid_argument("not a variable field: " + std::string(name));
    }
    m_variable[i].assign(data.begin(), data.end());
}

std::vector<std::uint8_t> UnirecRecordBuilder::build() const {
    std::vector<std::uint8_t> out = m_fixed;
    std::size_t dataOffset = 0;
    const auto fields = m_layout.fields();
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (!fields[i].variable()) continue;
        const auto& data = m_variable[i];
        putLe(out.data() + fields[i].offset, dataOffset, 2);
        putLe(out.data() + fields[i].offset + 2, data.size(), 2);
        out.insert(out.end(), data.begin(), data.end());
        dataOffset += data.size();
    }
    return out;
}

std::vector<const FieldSpec*> fieldSpecs(std::span<const FieldId> ids) {
    std::vector<const FieldSpec*> out;
    for (FieldId id : ids) out.push_back(&fieldSpec(id));
    return out;
}

namespace {
std::vector<std::pair<std::string, std::string>> typeNames(
    std::span<const FieldSpec* const> fields, std::span<const UnirecPluginFields> plugins) {
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const FieldSpec* f) {
        if (f->unirec.name.empty()) {
            throw std::invalid_argument("field '" + std::string(f->name) + "' has no UniRec name");
        }
        out.emplace_back(std::string(f->unirec.type), std::string(f->unirec.name));
    };
    for (const FieldSpec* f : fields) add(f);
    for (const auto& p : plugins) {
        for (const FieldSpec* f : p.fields) add(f);
    }
    return out;
}

/// Whether a plugin field of `type` (array element `element`) can be written as UniRec type
/// `unirec`; sets the element / value size.
bool pluginTypeFits(FieldType type, FieldType element, std::string_view unirec, std::uint8_t& size,
                    bool& time) {
    time = false;
    auto scalar = [&](FieldType t, std::string_view u) {
        // Types written in exactly one UniRec type, of the value's own size.
        struct Exact {
            FieldType type;
            std::string_view unirec;
            std::uint8_t size;
        };
        static constexpr Exact kExact[] = {
            {FieldType::Timestamp, "time", 8},    {FieldType::Int8, "int8", 1},
            {FieldType::Int16, "int16", 2},       {FieldType::Int32, "int32", 4},
            {FieldType::Float32, "float", 4},     {FieldType::IpAddress, "ipaddr", 16},
            {FieldType::MacAddress, "macaddr", 6}};
        for (const Exact& x : kExact) {
            if (t != x.type) continue;
            time = t == FieldType::Timestamp;
            size = x.size;
            return u == x.unirec;
        }
        if (!isNumeric(t)) return false;
        const UnirecType ut = unirecType(u);
        if (!ut.known || ut.sortSize <= 0 || u == "time" || u == "float" || u == "double" ||
            u == "ipaddr" || u == "macaddr") {
            return false;
        }
        size = static_cast<std::uint8_t>(ut.sortSize);
        return size >= fieldTypeSize(t);  // never cut a value
    };
    switch (type) {
        case FieldType::String:
            size = 1;
            return unirec == "string";
        case FieldType::Binary:
            size = 1;
            return unirec == "bytes" || unirec == "string";
        case FieldType::Array:
            if (unirec.empty() || unirec.back() != '*') return false;
            return scalar(element, unirec.substr(0, unirec.size() - 1));
        default:
            return scalar(type, unirec);
    }
}

void putIpaddr(std::uint8_t* dst, const std::uint8_t* src) noexcept {
    if (isIpv4Mapped({src, 16})) {
        std::memset(dst, 0, 8);
        std::memcpy(dst + 8, src + 12, 4);
        std::memset(dst + 12, 0xFF, 4);
    } else {
        std::memcpy(dst, src, 16);
    }
}
}  // namespace

UnirecEncoder::UnirecEncoder(std::span<const FieldSpec* const> fields,
                             const ExportConstants& constants,
                             std::span<const UnirecPluginFields> plugins)
    : m_layout(typeNames(fields, plugins)) {
    std::vector<PluginStep> variable;
    for (const UnirecLayout::Field& lf : m_layout.fields()) {
        const auto core = std::find_if(fields.begin(), fields.end(), [&](const FieldSpec* s) {
            return s->unirec.name == lf.name;
        });
        if (core == fields.end()) {
            PluginStep ps;
            for (std::size_t i = 0; i < plugins.size() && ps.field == nullptr; ++i) {
                for (const FieldSpec* f : plugins[i].fields) {
                    if (f->unirec.name == lf.name) {
                        ps.plugin = i;
                        ps.field = f;
                        break;
                    }
                }
            }
            if (!pluginTypeFits(ps.field->type, ps.field->element, lf.type, ps.size, ps.time)) {
                throw std::invalid_argument("field '" + std::string(ps.field->name) +
                                            "' cannot be encoded as UniRec " + lf.type);
            }
            ps.destination = static_cast<std::uint16_t>(lf.offset);
            ps.variable = lf.variable();
            (ps.variable ? variable : m_pluginSteps).push_back(ps);
            continue;
        }
        if (lf.variable()) throw std::invalid_argument("variable UniRec field '" + lf.name + "'");
        const FieldSpec* f = *core;
        Step s;
        s.size = static_cast<std::uint8_t>(lf.size());
        s.destination = static_cast<std::uint16_t>(lf.offset);
        s.source = f->offset;
        s.sourceSize = static_cast<std::uint8_t>(fieldTypeSize(f->type));
        const bool numericUnirec = lf.type != "ipaddr" && lf.type != "macaddr";
        if (f->origin == FieldOrigin::Exporter) {
            if (!numericUnirec)
                throw std::invalid_argument("exporter constant '" + lf.name + "' must be numeric");
            std::uint8_t bytes[8] = {};
            putLe(bytes, readUnsigned(*f, FlowRecord{}, constants), s.size);
            std::memcpy(&s.constant, bytes, 8);
            s.op = Op::Constant;
        } else if (f->type == FieldType::IpAddress && lf.type == "ipaddr") {
            s.op = Op::IpAddr;
        } else if (f->type == FieldType::MacAddress && lf.type == "macaddr") {
            s.op = Op::Copy;
        } else if (f->type == FieldType::Timestamp && lf.type == "time") {
            s.op = Op::Time;
        } else if (isNumeric(f->type) && f->type != FieldType::Timestamp && numericUnirec &&
                   lf.type != "time" && lf.type != "float" && lf.type != "double") {
            s.op = Op::IntLe;
        } else {
            throw std::invalid_argument("field '" + std::string(f->name) +
                                        "' cannot be encoded as UniRec " + lf.type);
        }
        m_steps.push_back(s);
    }
    m_pluginSteps.insert(m_pluginSteps.end(), variable.begin(), variable.end());
}

void UnirecEncoder::encode(const FlowRecord& record, std::uint8_t* out) const noexcept {
    const auto* base = reinterpret_cast<const std::uint8_t*>(&record);
    for (const Step& s : m_steps) {
        const std::uint8_t* src = base + s.source;
        std::uint8_t* dst = out + s.destination;
        switch (s.op) {
            case Op::IntLe: {
                std::uint64_t v = 0;
                std::memcpy(&v, src, s.sourceSize);  // little-endian host: low bytes first
                std::memcpy(dst, &v, s.size);
                break;
            }
            case Op::IpAddr:
                if (isIpv4Mapped({src, 16})) {
                    std::memset(dst, 0, 8);
                    std::memcpy(dst + 8, src + 12, 4);
                    std::memset(dst + 12, 0xFF, 4);
                } else {
                    std::memcpy(dst, src, 16);
                }
                break;
            case Op::Copy:
                std::memcpy(dst, src, s.size);
                break;
            case Op::Time: {
                std::uint64_t t = 0;
                std::memcpy(&t, src, 8);
                const std::uint64_t v = unirecTimeFromNs(t);
                std::memcpy(dst, &v, 8);
                break;
            }
            case Op::Constant:
                std::memcpy(dst, &s.constant, s.size);
                break;
        }
    }
}

std::size_t UnirecEncoder::encode(const FlowRecord& record,
                                  std::span<const std::span<const std::uint8_t>> instances,
                                  std::uint8_t* out) const noexcept {
    const std::size_t fixed = m_layout.staticSize();
    std::memset(out, 0, fixed);  // absent plugins: zero values, empty slots (0/0)
    encode(record, out);
    std::size_t used = 0;  // variable part
    for (const PluginStep& ps : m_pluginSteps) {
        const auto data =
            ps.plugin < instances.size() ? instances[ps.plugin] : std::span<const std::uint8_t>{};
        std::uint8_t* dst = out + ps.destination;
        const FieldSpec& f = *ps.field;
        if (!ps.variable) {
            if (data.empty()) continue;
            if (f.type == FieldType::IpAddress) {
                const auto b = readPluginBytes(f, data);
                if (b.size() == 16) putIpaddr(dst, b.data());
            } else if (f.type == FieldType::MacAddress) {
                const auto b = readPluginBytes(f, data);
                if (b.size() == 6) std::memcpy(dst, b.data(), 6);
            } else if (ps.time) {
                const std::uint64_t v = unirecTimeFromNs(readPluginUnsigned(f, data));
                std::memcpy(dst, &v, 8);
            } else if (f.offset + fieldTypeSize(f.type) <= data.size()) {
                std::uint64_t v = 0;  // LE host: the low bytes of the widened value
                std::memcpy(&v, data.data() + f.offset, fieldTypeSize(f.type));
                std::memcpy(dst, &v, ps.size);
            }
            continue;
        }
        std::uint8_t* var = out + fixed + used;
        std::size_t length = 0;
        if (!data.empty()) {
            const auto b = readPluginBytes(f, data);
            if (f.type != FieldType::Array) {
                length = b.size();
                if (used + length > 65535) return 0;
                if (length != 0) std::memcpy(var, b.data(), length);
            } else {
                const std::size_t width = fieldTypeSize(f.element);
                const std::size_t count = b.size() / width;
                length = count * ps.size;
                if (used + length > 65535) return 0;
                if (ps.time) {
                    for (std::size_t i = 0; i < count; ++i) {
                        std::uint64_t t = 0;
                        std::memcpy(&t, b.data() + i * 8, 8);
                        const std::uint64_t v = unirecTimeFromNs(t);
                        std::memcpy(var + i * 8, &v, 8);
                    }
                } else if (width == ps.size) {
                    if (length != 0) std::memcpy(var, b.data(), length);
                } else {
                    for (std::size_t i = 0; i < count; ++i) {
                        std::uint64_t v = 0;
                        std::memcpy(&v, b.data() + i * width, width);
                        std::memcpy(var + i * ps.size, &v, ps.size);
                    }
                }
            }
        }
        putLe(dst, used, 2);
        putLe(dst + 2, length, 2);
        used += length;
    }
    if (fixed + used > 65535) return 0;
    return fixed + used;
}

}  // namespace rowprobe::output
