// The field schema: every exported field described once.
//
// An exported field has one description here, and every output builds its layout from it:
//
//   FieldSpec "bytes_rev"
//     name / JSON key   bytes_rev
//     value             u64 at FlowRecord::bytes[kReverse]        (origin + offset + type)
//     IPFIX             reverseOctetDeltaCount = PEN 29305, id 1, 8 bytes (RFC 5103)
//     UniRec            uint64 BYTES_REV
//
//   ipfix output   template records = the IPFIX elements of a field list, in list order; the
//                  encoder compiles the list into (offset, conversion) steps once at start-up
//   unirec output  the UniRec names and types of a field list, sorted as libunirec sorts
//   text / json    the names and values of the Record-origin fields
//
// Values live either in the FlowRecord (origin Record) or in per-exporter constants that the
// output plugin owns (origin Exporter: ipfixprobe's DIR_BIT_FIELD / ingressInterface and
// LINK_BIT_FIELD / ODID). A field is located by (origin, byte offset, FieldType), so reading
// it is a fixed-size load and no per-field function pointer is called on the export path.
//
// Biflows (RFC 5103): a reverse counter is its own field (`bytes_rev`) whose IPFIX element is
// the forward element with PEN 29305 (`reverseElement`), and whose `direction` says so. Flow
// keys, timestamps and flowEndReason have no reverse variant (as in ipfixprobe).
//
// Adding fields: a process plugin declares its own `std::span<const FieldSpec>` with origin Plugin:
// `offset` is relative to the fixed part of one of its exported instances, and the variable-length
// types (String, Binary, Array) store a VarRef there that points into the instance's variable part
// (rowprobe/plugin_data.hpp has the layout and the readers; docs/design/process-runtime.md the
// design). Outputs append those fields to their lists. Core fields are listed once in
// `coreFields()`; the ipfixprobe "basic" templates are ordered lists of FieldIds into it.
//
// Thread safety: everything here is immutable static data; the functions are pure and may be
// called from any thread. Nothing allocates.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "rowprobe/flow_record.hpp"

namespace rowprobe {

/// What a field's value is, as read from its source (not as encoded on a wire).
enum class FieldType : std::uint8_t {
    Unsigned8,   ///< 1-byte unsigned (also enum-valued bytes such as EndReason)
    Unsigned16,  ///< 2-byte unsigned, host order
    Unsigned32,  ///< 4-byte unsigned, host order
    Unsigned64,  ///< 8-byte unsigned, host order
    IpAddress,   ///< 16 bytes, network order; IPv4 as IPv4-mapped (::ffff:a.b.c.d)
    MacAddress,  ///< 6 bytes, wire order
    Timestamp,   ///< TimeNs: u64 nanoseconds since the Unix epoch
    // Process-plugin types (FieldOrigin::Plugin only; see rowprobe/process.hpp).
    Int8,     ///< 1-byte signed (pstats directions)
    Float32,  ///< IEEE 754 binary32, host order
    String,   ///< VarRef to UTF-8/ASCII bytes, no NUL (JSON: escaped string)
    Binary,   ///< VarRef to raw bytes (UniRec bytes; JSON: hex, or text with FieldHint::Text)
    Array,    ///< VarRef to n packed values of FieldSpec::element (UniRec `T*`, IPFIX basicList)
    // Added after the first SDK release: new types go at the end so that the values above,
    // which a process-plugin library built against an older SDK carries, never change.
    Int16,  ///< 2-byte signed, host order (IPFIX signed16, UniRec int16)
    Int32,  ///< 4-byte signed, host order (IPFIX signed32, UniRec int32; flowstats' SPLT)
};

/// Size in bytes of a value of `type` at its source.
constexpr std::size_t fieldTypeSize(FieldType type) noexcept {
    switch (type) {
        case FieldType::Unsigned8:
            return 1;
        case FieldType::Unsigned16:
            return 2;
        case FieldType::Unsigned32:
            return 4;
        case FieldType::Unsigned64:
            return 8;
        case FieldType::IpAddress:
            return 16;
        case FieldType::MacAddress:
            return 6;
        case FieldType::Timestamp:
            return 8;
        case FieldType::Int8:
            return 1;
        case FieldType::Int16:
            return 2;
        case FieldType::Int32:
        case FieldType::Float32:
            return 4;
        case FieldType::String:
        case FieldType::Binary:
        case FieldType::Array:
            return 8;  // the VarRef {offset, length} in the instance's fixed part
    }
    return 0;
}

/// True for the types read as an unsigned number (`readUnsigned`); false for the byte-string
/// types and the process-plugin types (signed, float, variable length).
constexpr bool isNumeric(FieldType type) noexcept {
    switch (type) {
        case FieldType::Unsigned8:
        case FieldType::Unsigned16:
        case FieldType::Unsigned32:
        case FieldType::Unsigned64:
        case FieldType::Timestamp:
            return true;
        default:
            return false;
    }
}

/// True for the signed integer types (Int8, Int16, Int32), read by `readPluginSigned`.
constexpr bool isSigned(FieldType type) noexcept {
    return type == FieldType::Int8 || type == FieldType::Int16 || type == FieldType::Int32;
}

/// True for the variable-length types, whose fixed part is a VarRef.
constexpr bool isVariable(FieldType type) noexcept {
    return type == FieldType::String || type == FieldType::Binary || type == FieldType::Array;
}

/// Where a field's value lives.
enum class FieldOrigin : std::uint8_t {
    Record,    ///< in the FlowRecord, at `offset`
    Exporter,  ///< in the output's ExportConstants, at `offset` (same for every record)
    Plugin,    ///< in a process plugin's instance data, at `offset` of its fixed part
               ///< (rowprobe/plugin_data.hpp reads it)
};

/// How a text output shows a Binary field (the IPFIX and UniRec encodings do not change).
enum class FieldHint : std::uint8_t {
    None,  ///< Binary: lowercase hex
    Text,  ///< Binary data that holds text (DNS_RDATA): shown as an escaped string
};

/// Which way of a biflow a field describes.
enum class FieldDirection : std::uint8_t {
    None,     ///< key, timestamp or property of the whole flow
    Forward,  ///< src -> dst counter; its reverse twin is another field
    Reverse,  ///< dst -> src counter (RFC 5103: PEN 29305 in IPFIX, `_REV` in UniRec)
};

inline constexpr std::uint32_t kPenIana = 0;
inline constexpr std::uint32_t kPenReverse = 29305;  ///< RFC 5103 reverse information elements
inline constexpr std::uint32_t kPenCesnet = 8057;
inline constexpr std::uint32_t kPenFlowmon = 39499;
inline constexpr std::uint16_t kIpfixVarLen = 0xFFFF;

/// An IPFIX information element as exported: enterprise number, element id (without the
/// enterprise bit) and the encoded length (reduced-size where ipfixprobe reduces it, e.g.
/// tcpControlBits in 1 byte; kIpfixVarLen for variable length). id 0 = not exported.
struct IpfixElement {
    std::uint32_t pen = kPenIana;
    std::uint16_t id = 0;
    std::uint16_t length = 0;

    constexpr bool exported() const noexcept { return id != 0; }
    constexpr bool enterprise() const noexcept { return pen != kPenIana; }
    friend constexpr bool operator==(const IpfixElement&, const IpfixElement&) = default;
};

/// The RFC 5103 reverse twin of an IANA element: same id and length, PEN 29305.
constexpr IpfixElement reverseElement(IpfixElement forward) noexcept {
    return {kPenReverse, forward.id, forward.length};
}

/// A UniRec field: NEMEA name and type string ("uint64", "ipaddr", "time", ...). An empty name
/// means the field is not exported to UniRec.
struct UnirecField {
    std::string_view name;
    std::string_view type;
};

/// One exported field. Plain constexpr data.
struct FieldSpec {
    std::string_view name;         ///< canonical name and JSON key, e.g. "bytes_rev"
    std::string_view description;  ///< one line for docs and `-h`
    FieldType type = FieldType::Unsigned64;
    FieldOrigin origin = FieldOrigin::Record;
    std::uint16_t offset = 0;  ///< byte offset of the value in its origin struct
    FieldDirection direction = FieldDirection::None;
    IpfixElement ipfix;   ///< element for IPv4 records (and for every non-address field)
    IpfixElement ipfix6;  ///< element for IPv6 records when it differs (addresses, ICMP)
    UnirecField unirec;
    // Process-plugin fields (FieldOrigin::Plugin) only:
    FieldType element = FieldType::Unsigned8;  ///< Array: the type of each value (scalar types,
                                               ///< Timestamp included; not variable types)
    IpfixElement ipfixItem;  ///< Array: the element inside the basicList (ipfix is then
                             ///< IANA 291 basicList, variable length); e.g. 8057/1013 length 2
    FieldHint hint = FieldHint::None;

    /// The element used in a template for records of IP version `ipVersion` (4 or 6).
    constexpr const IpfixElement& ipfixFor(std::uint8_t ipVersion) const noexcept {
        return ipVersion == 6 && ipfix6.exported() ? ipfix6 : ipfix;
    }
};

/// IANA basicList (element 291, variable length, RFC 6313): the element of every Array field;
/// the element of the values inside the list is the field's `ipfixItem`.
inline constexpr IpfixElement kBasicList{kPenIana, 291, kIpfixVarLen};

/// A process-plugin Array field (per-packet sequences, histograms): exported to IPFIX as a
/// basicList of `item` (as ipfixprobe encodes them), to UniRec as `unirec` (an array type such as
/// "uint32*"), to JSON as an array of `element` values. `offset` locates its VarRef in the
/// plugin's field struct.
constexpr FieldSpec arrayField(std::string_view name, std::string_view description,
                               std::uint16_t offset, UnirecField unirec, FieldType element,
                               IpfixElement item) noexcept {
    return {.name = name,
            .description = description,
            .type = FieldType::Array,
            .origin = FieldOrigin::Plugin,
            .offset = offset,
            .ipfix = kBasicList,
            .unirec = unirec,
            .element = element,
            .ipfixItem = item};
}

/// Values the output plugin supplies for FieldOrigin::Exporter fields (ipfixprobe's `d` and
/// `I` options). Standard layout so fields can address it by offset.
struct ExportConstants {
    std::uint64_t linkBitField = 1;  ///< UniRec LINK_BIT_FIELD (ipfixprobe `I`)
    std::uint32_t dirBitField = 0;   ///< IPFIX flowDirection (IE 61) / UniRec DIR_BIT_FIELD (`d`)
    std::uint32_t odid = 1;          ///< UniRec ODID (`o` + `I`)
};

/// The core fields, one per value of FlowRecord (and of ExportConstants) that outputs export.
/// Indexes are FieldId values.
enum class FieldId : std::uint16_t {
    EndReason,
    Bytes,
    BytesRev,
    Packets,
    PacketsRev,
    TimeFirst,
    TimeLast,
    IpVersion,
    Proto,
    TcpFlags,
    TcpFlagsRev,
    SrcPort,
    DstPort,
    DirBitField,
    SrcIp,
    DstIp,
    SrcMac,
    DstMac,
    LinkBitField,
    Odid,
    Vlan,
    IcmpTypeCode,
    IcmpTypeCodeRev,
    Ttl,
    TtlRev,
    Queue,
    TunnelType,
    TunnelId,
    TunnelSrc,
    TunnelDst,
    Count
};
inline constexpr std::size_t kCoreFieldCount = static_cast<std::size_t>(FieldId::Count);

/// Every core field, indexed by FieldId. Static storage; valid for the whole program.
std::span<const FieldSpec> coreFields() noexcept;

/// The core field `id`.
const FieldSpec& fieldSpec(FieldId id) noexcept;

/// The core field called `name` ("src_ip"), or null.
const FieldSpec* findField(std::string_view name) noexcept;

class Options;

/// The `fields=` option of the text and json outputs: a comma-separated list of record fields
/// (FieldOrigin::Record; the exporter's constants such as `odid` are refused), in that order.
/// An unknown or empty name ends start-up through `options.fail(option, ...)`, naming the
/// offending part, the known fields and the closest one.
std::vector<const FieldSpec*> parseRecordFieldList(const Options& options, std::string_view option);

/// ipfixprobe's IPFIX basic template (docs/design/wire-formats.md), in template order: 18 elements,
/// 78-byte records for IPv4 and 102 for IPv6. Unlike ipfixprobe, the `dir` constant goes out as
/// flowDirection (IE 61, 1 byte) where ipfixprobe puts it in ingressInterface (IE 10), an interface
/// index for which 0 is invalid (the ipfix output adds a real ingressInterface when the input knows
/// its interface).
std::span<const FieldId> ipfixBasicFields() noexcept;

/// ipfixprobe's UniRec basic template (NEMEA's standard names), in ipfixprobe's name-list order;
/// the UniRec output sorts it. With `odid`, ODID replaces LINK_BIT_FIELD.
std::span<const FieldId> unirecBasicFields(bool odid = false) noexcept;

/// The value of type T at byte `offset` of a record: for outputs that resolve a column's type
/// and offset once at start-up and then read it without a switch on the type.
template <typename T>
T loadRecordField(const FlowRecord& r, std::size_t offset) noexcept {
    T v;
    std::memcpy(&v, reinterpret_cast<const std::uint8_t*>(&r) + offset, sizeof v);
    return v;
}

/// Reads a numeric field (Unsigned*, Timestamp) of origin Record or Exporter widened to 64
/// bits. Cost: one load.
inline std::uint64_t readUnsigned(const FieldSpec& f, const FlowRecord& r,
                                  const ExportConstants& c) noexcept {
    const auto* base = f.origin == FieldOrigin::Record ? reinterpret_cast<const std::uint8_t*>(&r)
                                                       : reinterpret_cast<const std::uint8_t*>(&c);
    const std::uint8_t* p = base + f.offset;
    switch (f.type) {
        case FieldType::Unsigned8:
            return *p;
        case FieldType::Unsigned16: {
            std::uint16_t v;
            std::memcpy(&v, p, sizeof v);
            return v;
        }
        case FieldType::Unsigned32: {
            std::uint32_t v;
            std::memcpy(&v, p, sizeof v);
            return v;
        }
        case FieldType::Unsigned64:
        case FieldType::Timestamp: {
            std::uint64_t v;
            std::memcpy(&v, p, sizeof v);
            return v;
        }
        default:  // byte strings, and the process-plugin types (plugin_data.hpp reads them)
            return 0;
    }
}

/// The bytes of an IpAddress (16) or MacAddress (6) field; empty for numeric fields.
inline std::span<const std::uint8_t> readBytes(const FieldSpec& f, const FlowRecord& r,
                                               const ExportConstants& c) noexcept {
    if (f.type != FieldType::IpAddress && f.type != FieldType::MacAddress) return {};
    const auto* base = f.origin == FieldOrigin::Record ? reinterpret_cast<const std::uint8_t*>(&r)
                                                       : reinterpret_cast<const std::uint8_t*>(&c);
    return {base + f.offset, fieldTypeSize(f.type)};
}

/// True when an address field is printed as IPv4 in record `r`: the flow's own addresses follow
/// the record's IP version; a tunnel's outer addresses (FlowRecord::tunnel) have their own.
bool addressIsIpv4(const FieldSpec& f, const FlowRecord& r) noexcept;

/// True when a 16-byte address is IPv4-mapped (::ffff:a.b.c.d), i.e. an IPv4 address in
/// FlowRecord's representation.
inline bool isIpv4Mapped(std::span<const std::uint8_t> a) noexcept {
    static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    return a.size() == 16 && std::memcmp(a.data(), kPrefix, sizeof kPrefix) == 0;
}

}  // namespace rowprobe
