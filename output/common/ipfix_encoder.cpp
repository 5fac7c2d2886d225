#include "output/common/ipfix_encoder.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "rowprobe/byte_order.hpp"

namespace rowprobe::output {

namespace {

template <class T>
inline T load(const std::uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline std::uint64_t loadAny(const std::uint8_t* p, std::size_t width) noexcept {
    switch (width) {
        case 1:
            return *p;
        case 2:
            return load<std::uint16_t>(p);
        case 4:
            return load<std::uint32_t>(p);
        default:
            return load<std::uint64_t>(p);
    }
}

inline void putAny(std::uint8_t* p, std::uint64_t v, std::size_t length) noexcept {
    for (std::size_t i = length; i-- > 0;) {
        p[i] = static_cast<std::uint8_t>(v);
        v >>= 8;
    }
}

std::uint32_t defaultExportTime() { return static_cast<std::uint32_t>(std::time(nullptr)); }

std::uint64_t defaultMonotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * kNsPerSec +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

/// IANA flowStart/End timestamps come in four precisions two ids apart: 150/151 seconds,
/// 152/153 milliseconds, 154/155 microseconds, 156/157 nanoseconds. The schema names the
/// microsecond ids (ipfixprobe's); this maps them to the configured precision.
IpfixElement timeElement(IpfixElement e, TimePrecision p) {
    if (e.pen != kPenIana || e.id < 150 || e.id > 157) return e;
    const unsigned end = (e.id - 150U) % 2U;
    e.id = static_cast<std::uint16_t>(150 + 2 * static_cast<unsigned>(p) + end);
    e.length = p == TimePrecision::Seconds ? 4 : 8;
    return e;
}

constexpr IpfixElement kIngressInterface{kPenIana, 10, 4};

bool hasInterfaces(const EncoderConfig& config) {
    return std::any_of(config.interfaceByQueue.begin(), config.interfaceByQueue.end(),
                       [](std::uint32_t i) { return i != 0; });
}

IpfixTemplate compile(std::span<const FieldId> ids, std::uint8_t ipVersion,
                      std::uint16_t templateId, const EncoderConfig& config) {
    using Op = IpfixTemplate::Op;
    IpfixTemplate t;
    t.id = templateId;
    t.ipVersion = ipVersion;
    for (FieldId id : ids) {
        const FieldSpec& f = fieldSpec(id);
        IpfixElement e = f.ipfixFor(ipVersion);
        if (!e.exported()) {
            throw std::invalid_argument("field '" + std::string(f.name) + "' has no IPFIX element");
        }
        if (e.length == kIpfixVarLen) {
            throw std::invalid_argument("field '" + std::string(f.name) + "' is variable-length");
        }
        IpfixTemplate::Step step;
        step.offset = f.offset;
        step.sourceSize = static_cast<std::uint8_t>(fieldTypeSize(f.type));
        if (f.type == FieldType::Timestamp) e = timeElement(e, config.timePrecision);
        step.length = static_cast<std::uint8_t>(e.length);
        if (f.origin == FieldOrigin::Exporter) {
            // Uniflow: flowDirection says which half of the biflow a record is (0 forward).
            const std::uint64_t v = config.uniflow && id == FieldId::DirBitField
                                        ? 0
                                        : readUnsigned(f, FlowRecord{}, config.constants);
            std::uint8_t bytes[8] = {};
            putAny(bytes, v, e.length);
            t.constants.push_back(load<std::uint64_t>(bytes));
            step.op = Op::Constant;
            step.constantIndex = static_cast<std::uint8_t>(t.constants.size() - 1);
        } else {
            switch (f.type) {
                case FieldType::IpAddress:
                    step.op = e.length == 4 ? Op::Ipv4 : Op::Copy16;
                    break;
                case FieldType::MacAddress:
                    step.op = Op::Copy6;
                    break;
                case FieldType::Timestamp:
                    switch (config.timePrecision) {
                        case TimePrecision::Seconds:
                            step.op = Op::TimeSec;
                            break;
                        case TimePrecision::Milliseconds:
                            step.op = Op::TimeMs;
                            break;
                        case TimePrecision::Microseconds:
                            step.op = Op::TimeUsNtp;
                            break;
                        case TimePrecision::Nanoseconds:
                            step.op = Op::TimeNsNtp;
                            break;
                    }
                    break;
                default:
                    if (step.sourceSize == e.length) {
                        step.op = e.length == 1   ? Op::Int1
                                  : e.length == 2 ? Op::Int2
                                  : e.length == 4 ? Op::Int4
                                                  : Op::Int8;
                    } else if (step.sourceSize == 4 && e.length == 8) {
                        step.op = Op::Int4To8;
                    } else {
                        step.op = Op::IntAny;
                    }
                    break;
            }
        }
        t.steps.push_back(step);
        if (config.uniflow) {
            IpfixTemplate::Step reverse = step;
            if (id == FieldId::DirBitField) {
                std::uint8_t bytes[8] = {};
                putAny(bytes, 1, e.length);
                t.constants.push_back(load<std::uint64_t>(bytes));
                reverse.constantIndex = static_cast<std::uint8_t>(t.constants.size() - 1);
            } else {
                reverse.offset = fieldSpec(reverseFieldOf(id)).offset;
            }
            t.reverseSteps.push_back(reverse);
        }
        t.fields.push_back(&f);
        t.elements.push_back(e);
        t.recordLength += e.length;
        if (id == FieldId::DirBitField && hasInterfaces(config)) {
            // ingressInterface (IE 10) right after flowDirection, from the queue's input.
            IpfixTemplate::Step s;
            s.op = Op::Interface;
            s.length = 4;
            s.offset = static_cast<std::uint16_t>(offsetof(FlowRecord, queue));
            t.steps.push_back(s);
            if (config.uniflow) t.reverseSteps.push_back(s);
            t.fields.push_back(&fieldSpec(FieldId::Queue));
            t.elements.push_back(kIngressInterface);
            t.recordLength += 4;
            t.interfaces = config.interfaceByQueue;
        }
    }
    return t;
}

/// The template record: id, field count, then per field (id | enterprise bit, length[, PEN]).
void buildTemplateRecord(IpfixTemplate& t) {
    const std::uint16_t templateId = t.id;
    t.record.clear();
    t.record.resize(4);
    storeBe16(t.record.data(), templateId);
    storeBe16(t.record.data() + 2, static_cast<std::uint16_t>(t.elements.size()));
    for (const IpfixElement& e : t.elements) {
        const std::size_t at = t.record.size();
        t.record.resize(at + (e.enterprise() ? 8 : 4));
        storeBe16(t.record.data() + at,
                  static_cast<std::uint16_t>(e.id | (e.enterprise() ? 0x8000U : 0U)));
        storeBe16(t.record.data() + at + 2, e.length);
        if (e.enterprise()) storeBe32(t.record.data() + at + 4, e.pen);
    }
}

/// A scalar plugin value read as Source and written big-endian in sizeof(Wire) bytes (0 when
/// absent); returns the end.
template <class Source, class Wire = Source>
std::uint8_t* putNumber(std::uint8_t* out, const FieldValue& v) noexcept {
    Wire x = 0;
    if (v.count != 0) x = load<Source>(static_cast<const std::uint8_t*>(v.data));
    storeBe<Wire>(out, x);
    return out + sizeof(Wire);
}

/// How encodeExtensions writes the field of codec `c` (IpfixTemplate::ExtOp).
IpfixTemplate::ExtOp extensionOp(const IpfixFieldCodec& c) noexcept {
    using Op = IpfixTemplate::ExtOp;
    if (c.kind != IpfixFieldCodec::Kind::Scalar || c.timeNsToMs) return Op::Codec;
    if (c.sourceWidth == 4 && c.element.length == 8) return Op::Widen4To8;
    if (c.sourceWidth != c.element.length) return Op::Codec;
    switch (c.element.length) {
        case 1:
            return Op::Be1;
        case 2:
            return Op::Be2;
        case 4:
            return Op::Be4;
        case 8:
            return Op::Be8;
        default:
            return Op::Codec;
    }
}

IpfixTemplate compileWithExtensions(std::span<const FieldId> ids, std::uint8_t ipVersion,
                                    std::uint16_t templateId, const EncoderConfig& config,
                                    std::uint64_t extensions) {
    IpfixTemplate t = compile(ids, ipVersion, templateId, config);
    t.extensions = extensions;
    t.basicLength = t.recordLength;
    for (std::size_t i = 0; i < config.extensions.size(); ++i) {
        if ((extensions >> i & 1U) == 0) continue;
        for (const IpfixFieldCodec& c : config.extensions[i].fields) {
            t.extensionOps.push_back(extensionOp(c));
            t.extensionFields.push_back(&c);
            t.elements.push_back(c.element);
            if (c.element.length != kIpfixVarLen) {  // a basicList's element is always variable
                t.recordLength += c.element.length;
            } else {
                t.variableExtensions.push_back(
                    static_cast<std::uint16_t>(t.extensionFields.size() - 1));
            }
        }
    }
    buildTemplateRecord(t);
    return t;
}

/// Encoded bytes of one value; a string longer than 65535 bytes is cut (cannot be encoded).
inline std::size_t bytesLength(const FieldValue& v) noexcept {
    return std::min<std::size_t>(v.count, 65535);
}
inline std::size_t listCount(const IpfixFieldCodec& c, const FieldValue& v) noexcept {
    const std::size_t room = (65535 - 9) / std::max<std::size_t>(c.inner.length, 1);
    return std::min<std::size_t>(v.count, room);
}

constexpr FieldId kUniflowFields[] = {
    FieldId::EndReason,   FieldId::Bytes, FieldId::Packets,  FieldId::TimeFirst, FieldId::TimeLast,
    FieldId::IpVersion,   FieldId::Proto, FieldId::TcpFlags, FieldId::SrcPort,   FieldId::DstPort,
    FieldId::DirBitField, FieldId::SrcIp, FieldId::DstIp,    FieldId::SrcMac,    FieldId::DstMac};

constexpr FieldId kBiflowVocabulary[] = {
    FieldId::EndReason,       FieldId::Bytes,       FieldId::BytesRev,    FieldId::Packets,
    FieldId::PacketsRev,      FieldId::TimeFirst,   FieldId::TimeLast,    FieldId::IpVersion,
    FieldId::Proto,           FieldId::TcpFlags,    FieldId::TcpFlagsRev, FieldId::SrcPort,
    FieldId::DstPort,         FieldId::DirBitField, FieldId::SrcIp,       FieldId::DstIp,
    FieldId::SrcMac,          FieldId::DstMac,      FieldId::Vlan,        FieldId::IcmpTypeCode,
    FieldId::IcmpTypeCodeRev, FieldId::Ttl,         FieldId::TtlRev};

constexpr FieldId kUniflowVocabulary[] = {
    FieldId::EndReason,    FieldId::Bytes,     FieldId::Packets,     FieldId::TimeFirst,
    FieldId::TimeLast,     FieldId::IpVersion, FieldId::Proto,       FieldId::TcpFlags,
    FieldId::SrcPort,      FieldId::DstPort,   FieldId::DirBitField, FieldId::SrcIp,
    FieldId::DstIp,        FieldId::SrcMac,    FieldId::DstMac,      FieldId::Vlan,
    FieldId::IcmpTypeCode, FieldId::Ttl};

}  // namespace

std::span<const FieldId> ipfixUniflowFields() noexcept { return kUniflowFields; }

std::span<const FieldId> ipfixFieldVocabulary(bool uniflow) noexcept {
    return uniflow ? std::span<const FieldId>(kUniflowVocabulary)
                   : std::span<const FieldId>(kBiflowVocabulary);
}

FieldId reverseFieldOf(FieldId id) noexcept {
    switch (id) {
        case FieldId::Bytes:
            return FieldId::BytesRev;
        case FieldId::BytesRev:
            return FieldId::Bytes;
        case FieldId::Packets:
            return FieldId::PacketsRev;
        case FieldId::PacketsRev:
            return FieldId::Packets;
        case FieldId::TcpFlags:
            return FieldId::TcpFlagsRev;
        case FieldId::TcpFlagsRev:
            return FieldId::TcpFlags;
        case FieldId::SrcPort:
            return FieldId::DstPort;
        case FieldId::DstPort:
            return FieldId::SrcPort;
        case FieldId::SrcIp:
            return FieldId::DstIp;
        case FieldId::DstIp:
            return FieldId::SrcIp;
        case FieldId::SrcMac:
            return FieldId::DstMac;
        case FieldId::DstMac:
            return FieldId::SrcMac;
        case FieldId::Ttl:
            return FieldId::TtlRev;
        case FieldId::TtlRev:
            return FieldId::Ttl;
        case FieldId::IcmpTypeCode:
            return FieldId::IcmpTypeCodeRev;
        case FieldId::IcmpTypeCodeRev:
            return FieldId::IcmpTypeCode;
        default:
            return id;
    }
}

namespace {

// RFC 5610 §3.9: scope privateEnterpriseNumber, informationElementId; then the type, semantics,
// units, range (0, 0: none) name and description: every element libfixbuf requires before it
// takes a template's records as type records.
constexpr IpfixElement kTypeInfoFields[] = {
    {kPenIana, 346, 4},             // privateEnterpriseNumber (scope)
    {kPenIana, 303, 2},             // informationElementId (scope)
    {kPenIana, 339, 1},             // informationElementDataType
    {kPenIana, 344, 1},             // informationElementSemantics
    {kPenIana, 345, 2},             // informationElementUnits
    {kPenIana, 342, 8},             // informationElementRangeBegin
    {kPenIana, 343, 8},             // informationElementRangeEnd
    {kPenIana, 341, kIpfixVarLen},  // informationElementName
    {kPenIana, 340, kIpfixVarLen},  // informationElementDescription
};
constexpr std::uint16_t kTypeInfoScopeFields = 2;
constexpr std::size_t kTypeInfoFixed = 4 + 2 + 1 + 1 + 2 + 8 + 8;
constexpr std::size_t kMaxTypeName = 200;

}  // namespace

std::vector<std::uint8_t> typeInfoTemplateRecord() {
    std::vector<std::uint8_t> r(6 + 4 * std::size(kTypeInfoFields));
    storeBe16(r.data(), kTypeInfoTemplateId);
    storeBe16(r.data() + 2, static_cast<std::uint16_t>(std::size(kTypeInfoFields)));
    storeBe16(r.data() + 4, kTypeInfoScopeFields);
    std::size_t at = 6;
    for (const IpfixElement& e : kTypeInfoFields) {
        storeBe16(r.data() + at, e.id);
        storeBe16(r.data() + at + 2, e.length);
        at += 4;
    }
    return r;
}

std::vector<std::uint8_t> encodeTypeInfoRecord(const IpfixTypeInfo& info, std::size_t room) {
    const std::size_t nameLength = std::min(info.name.size(), kMaxTypeName);  // room >= 492
    const std::size_t fixed = kTypeInfoFixed + ipfixVarLenSize(nameLength);
    // The description is what gives way when the record would not fit one message.
    std::size_t descLength = info.description.size();
    while (descLength != 0 && fixed + ipfixVarLenSize(descLength) > room) --descLength;
    std::vector<std::uint8_t> r(fixed + ipfixVarLenSize(descLength));
    storeBe32(r.data(), info.pen);
    storeBe16(r.data() + 4, info.id);
    r[6] = static_cast<std::uint8_t>(info.dataType);
    r[7] = info.semantics;
    storeBe16(r.data() + 8, info.units);
    std::memset(r.data() + 10, 0, 16);  // range begin, end: none
    std::size_t at = kTypeInfoFixed;
    at += putIpfixVarLen(r.data() + at,
                         {reinterpret_cast<const std::uint8_t*>(info.name.data()), nameLength});
    putIpfixVarLen(r.data() + at,
                   {reinterpret_cast<const std::uint8_t*>(info.description.data()), descLength});
    return r;
}

std::size_t IpfixEncoder::minMessageSize(std::span<const FieldId> fields) {
    EncoderConfig config;
    config.interfaceByQueue = {1};  // the largest variant: with ingressInterface
    std::size_t largest = 0;
    for (std::uint8_t v : {std::uint8_t{4}, std::uint8_t{6}}) {
        IpfixTemplate t = compile(fields, v, kFirstTemplateId, config);
        buildTemplateRecord(t);
        largest = std::max({largest, t.recordLength, t.record.size()});
    }
    return kIpfixHeaderSize + kIpfixSetHeaderSize + largest;
}

IpfixEncoder::IpfixEncoder(const EncoderConfig& config, std::span<const FieldId> fields,
                           MessageSink& sink)
    : m_config(config), m_sink(sink) {
    if (m_config.exportTime == nullptr) m_config.exportTime = &defaultExportTime;
    if (m_config.monotonicNs == nullptr) m_config.monotonicNs = &defaultMonotonicNs;
    if (m_config.maxMessageSize > 65535) {
        throw std::invalid_argument("IPFIX messages are at most 65535 bytes");
    }
    if (m_config.maxMessageSize < minMessageSize(fields)) {
        throw std::invalid_argument("message size " + std::to_string(m_config.maxMessageSize) +
                                    " is below the minimum " +
                                    std::to_string(minMessageSize(fields)));
    }
    if (m_config.extensions.size() > 64) {
        throw std::invalid_argument("at most 64 IPFIX extensions");
    }
    m_basicFields.assign(fields.begin(), fields.end());
    m_message.assign(m_config.maxMessageSize, 0);
    if (!m_config.typeInfo.empty()) {
        if (m_config.maxMessageSize < kTypeInfoMinMessage) {
            throw std::invalid_argument("type records need messages of at least " +
                                        std::to_string(kTypeInfoMinMessage) + " bytes");
        }
        m_typeTemplate = typeInfoTemplateRecord();
        const std::size_t room = m_config.maxMessageSize - kIpfixHeaderSize - kIpfixSetHeaderSize;
        for (const IpfixTypeInfo& info : m_config.typeInfo)
            m_typeRecords.push_back(encodeTypeInfoRecord(info, room));
        m_typeUsed.assign(m_typeRecords.size(), false);
    }
    templateIndex(0, 4);
    m_templatesOwed = true;
}

std::size_t IpfixEncoder::templateIndex(std::uint64_t extensions, std::uint8_t ipVersion) {
    const std::size_t v6 = ipVersion == 6 ? 1 : 0;
    if (extensions == 0 && !m_templates.empty()) return v6;
    for (const auto& [set, index] : m_templateIndex) {
        if (set == extensions) return index + v6;
    }
    const std::size_t index = m_templates.size();
    for (std::uint8_t v : {std::uint8_t{4}, std::uint8_t{6}}) {
        const auto id = static_cast<std::uint16_t>(kFirstTemplateId + m_templates.size());
        m_templates.push_back(compileWithExtensions(m_basicFields, v, id, m_config, extensions));
        SetBuffer s;
        s.data.assign(kIpfixHeaderSize + m_config.maxMessageSize, 0);
        m_sets.push_back(std::move(s));
        resetSet(m_templates.back(), m_sets.back());
    }
    m_templateIndex.emplace_back(extensions, index);
    markTypeRecordsUsed(m_templates[index]);
    m_templatesOwed = true;  // announced before the next data message
    return index + v6;
}

void IpfixEncoder::markTypeRecordsUsed(const IpfixTemplate& t) {
    auto mark = [&](const IpfixElement& e) {
        for (std::size_t i = 0; i < m_config.typeInfo.size(); ++i) {
            const IpfixTypeInfo& info = m_config.typeInfo[i];
            if (info.pen == e.pen && info.id == e.id) m_typeUsed[i] = true;
        }
    };
    for (const IpfixElement& e : t.elements) mark(e);
    for (const IpfixFieldCodec* c : t.extensionFields) {
        if (c->kind == IpfixFieldCodec::Kind::List) mark(c->inner);
    }
}

std::size_t IpfixEncoder::extensionSize(const IpfixTemplate& t,
                                        std::span<const FieldValue> values) noexcept {
    std::size_t n = t.recordLength - t.basicLength;
    for (const std::uint16_t i : t.variableExtensions) {
        const IpfixFieldCodec& c = *t.extensionFields[i];
        const FieldValue& v = values[i];
        n += c.kind == IpfixFieldCodec::Kind::List ? ipfixBasicListSize(c.inner, listCount(c, v))
                                                   : ipfixVarLenSize(bytesLength(v));
    }
    return n;
}

void IpfixEncoder::encodeExtensions(const IpfixTemplate& t, std::span<const FieldValue> values,
                                    std::uint8_t* out) noexcept {
    using Op = IpfixTemplate::ExtOp;
    for (std::size_t i = 0; i < t.extensionOps.size(); ++i) {
        const FieldValue& v = values[i];
        const auto* src = static_cast<const std::uint8_t*>(v.data);
        switch (t.extensionOps[i]) {
            case Op::Be1:
                out = putNumber<std::uint8_t>(out, v);
                continue;
            case Op::Be2:
                out = putNumber<std::uint16_t>(out, v);
                continue;
            case Op::Be4:
                out = putNumber<std::uint32_t>(out, v);
                continue;
            case Op::Be8:
                out = putNumber<std::uint64_t>(out, v);
                continue;
            case Op::Widen4To8:
                out = putNumber<std::uint32_t, std::uint64_t>(out, v);
                continue;
            case Op::Codec:
                break;
        }
        const IpfixFieldCodec& c = *t.extensionFields[i];
        switch (c.kind) {
            case IpfixFieldCodec::Kind::Scalar: {
                std::uint64_t x = v.count != 0 ? loadAny(src, c.sourceWidth) : 0;
                if (c.timeNsToMs) x /= 1'000'000;
                putAny(out, x, c.element.length);
                out += c.element.length;
                break;
            }
            case IpfixFieldCodec::Kind::Bytes:
                if (c.element.length != kIpfixVarLen) {
                    const std::size_t n = std::min<std::size_t>(v.count, c.element.length);
                    if (n != 0) std::memcpy(out, v.data, n);
                    std::memset(out + n, 0, c.element.length - n);
                    out += c.element.length;
                    break;
                }
                out +=
                    putIpfixVarLen(out, {static_cast<const std::uint8_t*>(v.data), bytesLength(v)});
                break;
            case IpfixFieldCodec::Kind::List: {
                const std::size_t count = listCount(c, v);
                if (!c.timeNsToMs) {
                    out += putIpfixBasicList(out, c.inner, v.data, count, c.sourceWidth);
                    break;
                }
                // TimeNs values to dateTimeMilliseconds: header, then each value converted.
                const std::size_t total = putIpfixBasicList(out, c.inner, v.data, 0, 8);
                const std::size_t content = total - 3 + count * c.inner.length;
                out[1] = static_cast<std::uint8_t>(content >> 8);
                out[2] = static_cast<std::uint8_t>(content);
                out += total;
                for (std::size_t k = 0; k < count; ++k) {
                    putAny(out, load<std::uint64_t>(src + 8 * k) / 1'000'000, c.inner.length);
                    out += c.inner.length;
                }
                break;
            }
        }
    }
}

bool IpfixEncoder::add(const FlowRecord& record, std::uint64_t extensions,
                       std::span<const FieldValue> values) {
    if (extensions == 0) {
        add(record);
        return true;
    }
    const std::size_t index = templateIndex(extensions, record.ipVersion);
    const IpfixTemplate& t = m_templates[index];
    SetBuffer& s = m_sets[index];
    if (values.size() < t.extensionFields.size()) {
        ++m_oversized;  // a caller bug; never read past the values
        return false;
    }
    const std::size_t length = t.basicLength + extensionSize(t, values);
    if (kIpfixHeaderSize + kIpfixSetHeaderSize + length > m_config.maxMessageSize) {
        ++m_oversized;
        return false;
    }
    if (s.used + length > m_config.maxMessageSize) sendFullSet(t, s);
    std::uint8_t* out = s.data.data() + s.used;
    encode(t, t.steps, record, out);
    encodeExtensions(t, values, out + t.basicLength);
    s.used += length;
    ++s.records;
    if (m_config.uniflow && record.packets[1] != 0) addBasic(record, true);
    return true;
}

void IpfixEncoder::resetSet(const IpfixTemplate& t, SetBuffer& s) noexcept {
    storeBe16(s.data.data() + kSetStart, t.id);
    s.used = kSetStart + kIpfixSetHeaderSize;
    s.records = 0;
}

void IpfixEncoder::encode(const IpfixTemplate& t, std::span<const IpfixTemplate::Step> steps,
                          const FlowRecord& r, std::uint8_t* out) const noexcept {
    using Op = IpfixTemplate::Op;
    const auto* base = reinterpret_cast<const std::uint8_t*>(&r);
    for (const IpfixTemplate::Step& s : steps) {
        const std::uint8_t* src = base + s.offset;
        switch (s.op) {
            case Op::Int1:
                *out = *src;
                break;
            case Op::Int2:
                storeBe16(out, load<std::uint16_t>(src));
                break;
            case Op::Int4:
                storeBe32(out, load<std::uint32_t>(src));
                break;
            case Op::Int4To8:
                storeBe64(out, load<std::uint32_t>(src));
                break;
            case Op::Int8:
                storeBe64(out, load<std::uint64_t>(src));
                break;
            case Op::IntAny:
                putAny(out, loadAny(src, s.sourceSize), s.length);
                break;
            case Op::Ipv4:
                std::memcpy(out, src + 12, 4);
                break;
            case Op::Copy16:
                std::memcpy(out, src, 16);
                break;
            case Op::Copy6:
                std::memcpy(out, src, 6);
                break;
            case Op::Constant: {
                std::uint8_t bytes[8];
                const std::uint64_t c = t.constants[s.constantIndex];
                std::memcpy(bytes, &c, 8);
                std::memcpy(out, bytes, s.length);
                break;
            }
            case Op::TimeSec:
                storeBe32(out, static_cast<std::uint32_t>(load<std::uint64_t>(src) / kNsPerSec));
                break;
            case Op::TimeMs:
                storeBe64(out, load<std::uint64_t>(src) / 1'000'000);
                break;
            case Op::TimeUsNtp:
                storeBe64(out, ntpMicroseconds(load<std::uint64_t>(src)));
                break;
            case Op::TimeNsNtp:
                storeBe64(out, ntpNanoseconds(load<std::uint64_t>(src)));
                break;
            case Op::Interface:
                storeBe32(out, *src < t.interfaces.size() ? t.interfaces[*src] : 0);
                break;
        }
        out += s.length;
    }
}

std::size_t IpfixEncoder::encodeRecord(const FlowRecord& record, std::uint8_t* out,
                                       bool reverse) const {
    const IpfixTemplate& t = templateFor(record.ipVersion);
    encode(t, reverse && m_config.uniflow ? t.reverseSteps : t.steps, record, out);
    return t.recordLength;
}

void IpfixEncoder::writeHeader(std::uint8_t* message, std::size_t length) const noexcept {
    storeBe16(message, kIpfixVersion);
    storeBe16(message + 2, static_cast<std::uint16_t>(length));
    storeBe32(message + 4, m_config.exportTime());
    storeBe32(message + 8, m_sequence);
    storeBe32(message + 12, m_config.observationDomain);
}

bool IpfixEncoder::send(std::uint8_t* message, std::size_t length, std::uint32_t records,
                        bool templates) {
    writeHeader(message, length);
    const bool ok = m_sink.sendMessage({message, length}, records, templates);
    if (ok) m_sequence += records;
    ++m_messages;
    if (templates) {
        ++m_templateMessages;
    } else {
        ++m_dataMessagesSinceTemplates;
    }
    return ok;
}

template <class Emit>
void IpfixEncoder::buildTemplateBatch(Emit&& emit) {
    // Built into m_message without allocating: the RFC 5610 options template and records, then
    // the templates in order, a new message whenever the next piece does not fit.
    std::size_t used = 0;
    std::size_t setStart = 0;
    std::uint16_t setId = 0;
    std::uint32_t typeRecords = 0;
    auto closeSet = [&] {
        if (setStart == 0) return;
        storeBe16(m_message.data() + setStart + 2, static_cast<std::uint16_t>(used - setStart));
        setStart = 0;
    };
    auto finish = [&] {
        if (used == 0) return;
        closeSet();
        emit(used, typeRecords);
        used = 0;
        typeRecords = 0;
    };
    auto put = [&](std::uint16_t id, std::span<const std::uint8_t> piece) {
        const std::size_t header = setStart != 0 && setId == id ? 0 : kIpfixSetHeaderSize;
        if (used != 0 && used + header + piece.size() > m_config.maxMessageSize) finish();
        if (used == 0) used = kIpfixHeaderSize;
        if (setStart == 0 || setId != id) {
            closeSet();
            setStart = used;
            setId = id;
            storeBe16(m_message.data() + used, id);
            used += kIpfixSetHeaderSize;
        }
        std::memcpy(m_message.data() + used, piece.data(), piece.size());
        used += piece.size();
    };
    // Type records first: a collector (libfixbuf) resolves a template's elements when the
    // template arrives, so it must know them by then.
    if (std::find(m_typeUsed.begin(), m_typeUsed.end(), true) != m_typeUsed.end()) {
        put(kOptionsTemplateSetId, m_typeTemplate);
        for (std::size_t i = 0; i < m_typeRecords.size(); ++i) {
            if (!m_typeUsed[i]) continue;
            put(kTypeInfoTemplateId, m_typeRecords[i]);
            ++typeRecords;
        }
    }
    for (const auto& t : m_templates) put(kTemplateSetId, t.record);
    finish();
}

std::vector<std::vector<std::uint8_t>> IpfixEncoder::templateMessages(
    std::vector<std::uint32_t>* typeRecords) {
    std::vector<std::vector<std::uint8_t>> out;
    if (typeRecords != nullptr) typeRecords->clear();
    std::uint32_t sequence = m_sequence;
    buildTemplateBatch([&](std::size_t length, std::uint32_t records) {
        storeBe16(m_message.data(), kIpfixVersion);
        storeBe16(m_message.data() + 2, static_cast<std::uint16_t>(length));
        storeBe32(m_message.data() + 4, m_config.exportTime());
        storeBe32(m_message.data() + 8, sequence);
        storeBe32(m_message.data() + 12, m_config.observationDomain);
        out.emplace_back(m_message.begin(),
                         m_message.begin() + static_cast<std::ptrdiff_t>(length));
        if (typeRecords != nullptr) typeRecords->push_back(records);
        sequence += records;
    });
    return out;
}

void IpfixEncoder::sendTemplates() {
    buildTemplateBatch([&](std::size_t length, std::uint32_t records) {
        // Type records are data records for the sequence number (RFC 7011 §3.1); the sink
        // does not count a template message's records as exported flows.
        send(m_message.data(), length, records, true);
    });
    m_templatesOwed = false;
    m_lastTemplatesNs = m_config.monotonicNs();
    m_dataMessagesSinceTemplates = 0;
}

void IpfixEncoder::sendTemplatesIfDue() {
    if (!m_templatesOwed) {
        if (m_config.templateRefreshNs != 0 &&
            m_config.monotonicNs() - m_lastTemplatesNs >= m_config.templateRefreshNs) {
            m_templatesOwed = true;
        }
        if (m_config.templateRefreshMessages != 0 &&
            m_dataMessagesSinceTemplates >= m_config.templateRefreshMessages) {
            m_templatesOwed = true;
        }
    }
    if (m_templatesOwed) sendTemplates();
}

void IpfixEncoder::sendFullSet(const IpfixTemplate& t, SetBuffer& s) {
    sendTemplatesIfDue();
    const std::size_t setLength = s.used - kSetStart;
    storeBe16(s.data.data() + kSetStart + 2, static_cast<std::uint16_t>(setLength));
    // The set buffer has the header room in front: the message is the buffer itself.
    send(s.data.data(), s.used, s.records, false);
    resetSet(t, s);
}

void IpfixEncoder::flush() {
    bool any = false;
    for (const auto& s : m_sets) any = any || s.records != 0;
    if (!any) {
        if (m_templatesOwed) sendTemplates();
        return;
    }
    // Greedy packing: start a message with the first non-empty set (in place); if others fit
    // after it, copy everything into m_message instead. A flush can send several messages, so
    // the template refresh is checked before each one.
    std::size_t i = 0;
    while (i < m_sets.size()) {
        if (m_sets[i].records == 0) {
            ++i;
            continue;
        }
        sendTemplatesIfDue();
        std::size_t total = kIpfixHeaderSize + (m_sets[i].used - kSetStart);
        std::size_t last = i;
        for (std::size_t j = i + 1; j < m_sets.size(); ++j) {
            if (m_sets[j].records == 0) continue;
            const std::size_t len = m_sets[j].used - kSetStart;
            if (total + len > m_config.maxMessageSize) break;
            total += len;
            last = j;
        }
        for (std::size_t j = i; j <= last; ++j) {
            SetBuffer& s = m_sets[j];
            if (s.records != 0) {
                storeBe16(s.data.data() + kSetStart + 2,
                          static_cast<std::uint16_t>(s.used - kSetStart));
            }
        }
        if (last == i) {
            send(m_sets[i].data.data(), m_sets[i].used, m_sets[i].records, false);
        } else {
            std::size_t at = kIpfixHeaderSize;
            std::uint32_t records = 0;
            for (std::size_t j = i; j <= last; ++j) {
                const SetBuffer& s = m_sets[j];
                if (s.records == 0) continue;
                std::memcpy(m_message.data() + at, s.data.data() + kSetStart, s.used - kSetStart);
                at += s.used - kSetStart;
                records += s.records;
            }
            send(m_message.data(), at, records, false);
        }
        for (std::size_t j = i; j <= last; ++j) {
            if (m_sets[j].records != 0) resetSet(m_templates[j], m_sets[j]);
        }
        i = last + 1;
    }
}

}  // namespace rowprobe::output
