// The IPFIX message encoder (RFC 7011, RFC 5103 biflows), in ipfixprobe's dialect.
//
// Layout of the work buffers, one per template (IPv4 and IPv6 variant of each field set):
//
//   SetBuffer  [16 bytes room for a message header][set header: id, length][rec][rec]...[rec]
//              |<------------------------------- maxMessageSize -------------------------->|
//
// A record is encoded straight into its template's set buffer by a list of steps compiled
// once from the field schema (fields.hpp): (source offset, conversion, encoded length). The
// steps hold no pointers to functions; one switch per field and no allocation per record.
// When a record does not fit, that set alone becomes a message: the header is written into
// the 16 reserved bytes and the buffer is handed to the sink as it is (no copy). `flush()`
// packs every non-empty set into as few messages as fit `maxMessageSize` (copying sets after
// the first into a message buffer), as ipfixprobe does at its flush points.
//
// Templates: one per (set of extensions present x IP version), as ipfixprobe: ids from 258 in
// order of first use, IPv4 then IPv6 variant created together (basic: 258 / 259, at start-up).
// A template = the basic fields, then the fields of each extension present in extension
// order; records of templates with variable-length fields (strings, bytes, basicLists) are
// sized first, then encoded straight into the set. All templates go out in one template
// message (split if they do not fit) before the first data message, again before the next
// data message after a template was added, whenever `resendTemplates()` is called (the TCP
// transport re-sends them itself on every new connection), and, when configured (UDP),
// periodically by time and/or by number of data messages (RFC 7011 §8.4).
//
// Uniflow export (EncoderConfig::uniflow, for collectors that ignore RFC 5103 reverse
// elements): each biflow leaves as two records of the same template, the forward one and,
// when the flow saw packets from the responder, the reverse one (addresses, ports and MACs
// swapped, the reverse counters and flags in the forward elements, flowDirection 0 and 1).
// The template holds IANA elements only (ipfixUniflowFields()); every template carries both
// step lists (IpfixTemplate::steps, reverseSteps) so a reverse record costs the same steps as
// a forward one, with no copy of the FlowRecord. Process-plugin and tunnel fields go with the
// forward record only.
//
// Element type records (RFC 5610, EncoderConfig::typeInfo): once a template holds an element
// the config describes, every template batch starts with the options template 256 (scope: privateEnterpriseNumber,
// informationElementId; then informationElementDataType, -Semantics, -Units, -RangeBegin,
// -RangeEnd, -Name, -Description) and one options data record per such element, in data sets of template 256
// split to the message size. They go wherever templates go (first message, refresh, a new
// template, every TCP connection), so a collector that reads them (libfixbuf, Wireshark) names
// and types every enterprise element without a configuration file. They are data records:
// they advance the sequence number, but the sink gets them as a template message and does not
// count them as exported flows.
//
// Sequence numbers (RFC 7011 §3.1): the number of data records sent before the message in
// this transport session, modulo 2^32; a template message carries the current value. The
// counter advances only when the sink accepts the message.
//
// Timestamps: flowStart/End{Seconds,Milliseconds,Microseconds,Nanoseconds} (150-157); the
// µs and ns forms are NTP64. ipfixprobe truncates the NTP fraction, which makes truncating
// decoders read 1 µs less for most values; here the fraction sits strictly above the exact
// value by less than half the precision (µs: the next 2^-21 s step, low 11 bits zero as RFC
// 7011 §6.1.9 asks), so truncating, rounding, floating-point and bit-masking decoders (libfixbuf,
// nfdump, tshark, libfds) all read back exactly the encoded microsecond or nanosecond.
//
// Thread ownership: one encoder per output instance, used by the export thread only.
// Cost: about 40-60 ns per basic record on a 2020s x86 core (tools/bench_ipfix).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rowprobe/byte_order.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"

namespace rowprobe::output {

inline constexpr std::size_t kIpfixHeaderSize = 16;
inline constexpr std::size_t kIpfixSetHeaderSize = 4;
inline constexpr std::uint16_t kIpfixVersion = 10;
inline constexpr std::uint16_t kTemplateSetId = 2;
inline constexpr std::uint16_t kFirstTemplateId = 258;         ///< as ipfixprobe
inline constexpr std::uint32_t kNtpEpochOffset = 2208988800U;  ///< 1900-01-01 to 1970-01-01 in s
inline constexpr std::uint16_t kOptionsTemplateSetId = 3;
inline constexpr std::uint16_t kTypeInfoTemplateId = 256;  ///< RFC 5610 records; below data ids
/// Smallest message size with RFC 5610 type records (a record with a 200-byte name fits).
inline constexpr std::size_t kTypeInfoMinMessage = 512;

/// informationElementDataType values (RFC 5610 §3.1, IANA "IPFIX Information Element Data Types").
enum class IpfixDataType : std::uint8_t {
    OctetArray = 0,
    Unsigned8 = 1,
    Unsigned16 = 2,
    Unsigned32 = 3,
    Unsigned64 = 4,
    Signed8 = 5,
    Signed16 = 6,
    Signed32 = 7,
    Signed64 = 8,
    Float32 = 9,
    Float64 = 10,
    Boolean = 11,
    MacAddress = 12,
    String = 13,
    DateTimeSeconds = 14,
    DateTimeMilliseconds = 15,
    DateTimeMicroseconds = 16,
    DateTimeNanoseconds = 17,
    Ipv4Address = 18,
    Ipv6Address = 19,
    BasicList = 20,
};

/// One RFC 5610 information element type record: what a collector needs to name and decode an
/// enterprise element it has no definition for.
struct IpfixTypeInfo {
    std::uint32_t pen = 0;
    std::uint16_t id = 0;
    IpfixDataType dataType = IpfixDataType::OctetArray;
    std::uint8_t semantics = 0;  ///< informationElementSemantics: 0 default, 4 identifier, ...
    std::uint16_t units = 0;     ///< informationElementUnits: 0 none, 2 octets, 3 packets, ...
    std::string name;
    std::string description;
};

enum class TimePrecision : std::uint8_t { Seconds, Milliseconds, Microseconds, Nanoseconds };

/// Receives complete IPFIX messages from the encoder (export thread).
class MessageSink {
public:
    virtual ~MessageSink() = default;
    /// `message` is one complete IPFIX message, valid only during the call. `dataRecords` is
    /// the number of data records in it; for a template message (`templates`) the RFC 5610
    /// type records it holds, which count for sequence numbers but are not flows. Returns false when the
    /// message was not accepted (it is then lost; the sink counts its records as dropped).
    virtual bool sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                             bool templates) = 0;
};

/// A plugin field's value in one record, as the encoders take it (the output fills these from
/// the process-plugin runtime's read API). Scalars: `data` points at the host-order value of the
/// codec's source width, count 1. Strings and bytes: the bytes, count = their number. Arrays:
/// the host-order elements, count = their number. count 0 = absent: a scalar exports 0, a
/// string or list exports empty.
struct FieldValue {
    const void* data = nullptr;
    std::uint32_t count = 0;
};

/// How one plugin field goes on the wire (compiled from the field schema by the output).
struct IpfixFieldCodec {
    enum class Kind : std::uint8_t {
        Scalar,  ///< fixed length: element.length bytes BE (reduced-size when shorter)
        Bytes,   ///< the bytes (strings without a terminator): variable length, or exactly
                 ///< element.length bytes (cut or zero-padded) when the element is fixed
        List,    ///< basicList (0/291, variable length) of `inner` elements
    };
    Kind kind = Kind::Scalar;
    IpfixElement element;          ///< as announced in the template
    IpfixElement inner;            ///< List: the element inside the list (PEN, id, length)
    std::uint8_t sourceWidth = 0;  ///< Scalar / List: bytes of one value at the source
    bool timeNsToMs = false;       ///< values are TimeNs, encoded as dateTimeMilliseconds
};

/// The fields one extension (a process plugin) adds to a template, in template order.
struct IpfixExtension {
    std::string name;
    std::vector<IpfixFieldCodec> fields;
};

struct EncoderConfig {
    std::uint32_t observationDomain = 1;
    std::size_t maxMessageSize = 1458;  ///< bytes incl. the 16-byte header (ipfixprobe `mtu`)
    TimePrecision timePrecision = TimePrecision::Microseconds;
    ExportConstants constants;
    std::uint64_t templateRefreshNs = 0;        ///< re-send templates after this time; 0 = never
    std::uint64_t templateRefreshMessages = 0;  ///< ... or after this many data messages; 0 = never
    std::uint32_t (*exportTime)() = nullptr;    ///< unix seconds for the header; null = time()
    std::uint64_t (*monotonicNs)() = nullptr;   ///< for the refresh timer; null = CLOCK_MONOTONIC
    /// ingressInterface (IE 10) per FlowRecord::queue. When any entry is non-zero, every
    /// template carries ingressInterface right after flowDirection, and a record of a queue
    /// beyond the table exports 0. Empty or all zero: the element is left out (0 is not a
    /// valid interface index).
    std::vector<std::uint32_t> interfaceByQueue;
    /// Extensions (process plugins), at most 64; bit i of a record's extension set is
    /// extensions[i]. A template holds the basic fields, then the fields of every extension
    /// present, in this order.
    std::vector<IpfixExtension> extensions;
    /// Two uniflow records per biflow (forward, then reverse when packets[1] != 0); build the
    /// encoder with ipfixUniflowFields() (or another list without reverse elements).
    bool uniflow = false;
    /// RFC 5610 type records sent with every template batch (empty: none, the default).
    std::vector<IpfixTypeInfo> typeInfo;
};

/// The uniflow template: ipfixBasicFields() without its reverse elements (IANA elements only):
/// flowEndReason, octetDeltaCount, packetDeltaCount, flowStart/End, ipVersion,
/// protocolIdentifier, tcpControlBits, ports, flowDirection, addresses, MACs.
std::span<const FieldId> ipfixUniflowFields() noexcept;

/// The core fields the ipfix output's `fields=` may name, in template order: the basic (or
/// uniflow) template's, then vlan, icmp_type_code, ttl (and their reverse twins for biflows).
std::span<const FieldId> ipfixFieldVocabulary(bool uniflow) noexcept;

/// The field a reverse uniflow record reads for `id`'s element (BytesRev for Bytes, DstIp for
/// SrcIp, ...); `id` itself for fields without a direction.
FieldId reverseFieldOf(FieldId id) noexcept;

/// One template (a field list for one IP version) compiled for encoding.
struct IpfixTemplate {
    enum class Op : std::uint8_t {
        Int1,       ///< 1-byte source to 1 byte
        Int2,       ///< u16 to 2 bytes BE
        Int4,       ///< u32 to 4 bytes BE
        Int4To8,    ///< u32 widened to 8 bytes BE
        Int8,       ///< u64 to 8 bytes BE
        IntAny,     ///< any width to any length BE (reduced-size encoding)
        Ipv4,       ///< IPv4-mapped address: its last 4 bytes
        Copy16,     ///< IPv6 address
        Copy6,      ///< MAC address
        Constant,   ///< pre-encoded exporter constant
        TimeSec,    ///< dateTimeSeconds u32
        TimeMs,     ///< dateTimeMilliseconds u64
        TimeUsNtp,  ///< dateTimeMicroseconds NTP64
        TimeNsNtp,  ///< dateTimeNanoseconds NTP64
        Interface,  ///< ingressInterface: u32 BE from the per-queue table, FlowRecord::queue
    };
    struct Step {
        Op op = Op::Int1;
        std::uint8_t sourceSize = 0;  ///< IntAny: source width
        std::uint8_t length = 0;      ///< encoded length
        std::uint8_t constantIndex = 0;
        std::uint16_t offset = 0;  ///< in FlowRecord
    };

    std::uint16_t id = 0;
    std::uint8_t ipVersion = 4;
    std::uint64_t extensions = 0;  ///< the extension set (bit i = EncoderConfig::extensions[i])
    std::vector<Step> steps;
    std::vector<Step> reverseSteps;  ///< uniflow: the reverse record's (same ops, other sources)
    std::vector<const FieldSpec*> fields;
    std::vector<IpfixElement> elements;                   ///< as announced in the template record
    std::vector<const IpfixFieldCodec*> extensionFields;  ///< after the steps, in order
    /// How encodeExtensions writes each of extensionFields (same order). A scalar whose source
    /// width is its encoded length (1, 2, 4 or 8 bytes), or a u32 widened to 8, is one load and
    /// one byte-swapped store; anything else (reduced-size, time conversion, bytes, lists)
    /// goes through its codec (Codec). flowstats' 75 scalars are all of the first kind.
    enum class ExtOp : std::uint8_t { Be1, Be2, Be4, Be8, Widen4To8, Codec };
    std::vector<ExtOp> extensionOps;
    /// The indexes of the variable-length extension fields (strings, basicLists): all that
    /// extensionSize adds to the fixed part, recordLength - basicLength.
    std::vector<std::uint16_t> variableExtensions;
    std::size_t recordLength = 0;      ///< record bytes when fixed; the fixed fields' when variable
    std::size_t basicLength = 0;       ///< bytes of the basic fields (extensions follow them)
    std::vector<std::uint8_t> record;  ///< the template record (id, count, field specifiers)
    std::vector<std::uint64_t> constants;   ///< BE-encoded constants (left-aligned bytes)
    std::vector<std::uint32_t> interfaces;  ///< ingressInterface by queue (Op::Interface)
};

class IpfixEncoder {
public:
    /// Compiles one template per IP version for `fields` (ids 258 for IPv4, 259 for IPv6).
    /// Throws std::invalid_argument if a field has no IPFIX element or is variable-length, or
    /// if `maxMessageSize` is below `minMessageSize(fields)` or above 65535.
    IpfixEncoder(const EncoderConfig& config, std::span<const FieldId> fields, MessageSink& sink);

    /// Smallest message size that holds one data record and one template of `fields` (with
    /// ingressInterface, the largest variant).
    static std::size_t minMessageSize(std::span<const FieldId> fields);

    /// Encodes one record into its template's set; sends a message when the set is full.
    /// Uniflow: the forward record, then the reverse one when the flow has reverse packets.
    void add(const FlowRecord& record) {
        addBasic(record, false);
        if (m_config.uniflow && record.packets[1] != 0) addBasic(record, true);
    }
    void add(std::span<const FlowRecord> records) {
        for (const auto& r : records) add(r);
    }

    /// Encodes a record with extensions: bit i of `extensions` set when extension i is
    /// present; `values` holds the present extensions' fields, extension by extension
    /// (ascending i), field by field. The template of this extension set and IP version is
    /// created on first use (ids from 258, IPv4 and IPv6 together) and announced before the
    /// next data message. Returns false, and counts it in oversized(), when the record cannot
    /// fit one message; the record is then not sent.
    bool add(const FlowRecord& record, std::uint64_t extensions,
             std::span<const FieldValue> values);

    /// Records dropped because they exceed the message size (ipfixprobe drops them too).
    std::uint64_t oversized() const noexcept { return m_oversized; }

    /// The template index for an extension set and IP version (created when new).
    std::size_t templateIndex(std::uint64_t extensions, std::uint8_t ipVersion);

    /// Sends every buffered record (and templates still owed) now.
    void flush();

    /// The next data message is preceded by a template message.
    void resendTemplates() noexcept { m_templatesOwed = true; }

    /// A message holding every template (split into several if needed), with the current
    /// sequence number. Used by transports that re-send templates on their own (TCP).
    /// `typeRecords`, when given, receives the number of RFC 5610 records in each message.
    std::vector<std::vector<std::uint8_t>> templateMessages(
        std::vector<std::uint32_t>* typeRecords = nullptr);

    /// Encodes one data record of the template for `record.ipVersion` into `out` (which must
    /// hold `recordLength(...)` bytes). For tests and the benchmark. `reverse`: the reverse
    /// uniflow record (uniflow encoders only).
    std::size_t encodeRecord(const FlowRecord& record, std::uint8_t* out,
                             bool reverse = false) const;

    const IpfixTemplate& templateFor(std::uint8_t ipVersion) const {
        return m_templates[ipVersion == 6 ? 1 : 0];
    }
    std::span<const IpfixTemplate> templates() const { return m_templates; }
    std::uint32_t sequence() const noexcept { return m_sequence; }
    std::uint64_t messagesSent() const noexcept { return m_messages; }
    std::uint64_t templateMessagesSent() const noexcept { return m_templateMessages; }

private:
    struct SetBuffer {
        std::vector<std::uint8_t> data;  ///< kIpfixHeaderSize + maxMessageSize bytes of room
        std::size_t used = 0;            ///< header room + set header + records
        std::uint32_t records = 0;
    };
    static constexpr std::size_t kSetStart = kIpfixHeaderSize;  // set header offset in data

    void addBasic(const FlowRecord& record, bool reverse) {
        IpfixTemplate& t = m_templates[record.ipVersion == 6 ? 1 : 0];
        SetBuffer& s = m_sets[record.ipVersion == 6 ? 1 : 0];
        if (s.used + t.recordLength > m_config.maxMessageSize) sendFullSet(t, s);
        encode(t, reverse ? t.reverseSteps : t.steps, record, s.data.data() + s.used);
        s.used += t.recordLength;
        ++s.records;
    }
    void encode(const IpfixTemplate& t, std::span<const IpfixTemplate::Step> steps,
                const FlowRecord& r, std::uint8_t* out) const noexcept;
    static std::size_t extensionSize(const IpfixTemplate& t,
                                     std::span<const FieldValue> values) noexcept;
    static void encodeExtensions(const IpfixTemplate& t, std::span<const FieldValue> values,
                                 std::uint8_t* out) noexcept;
    void sendFullSet(const IpfixTemplate& t, SetBuffer& s);
    void sendTemplatesIfDue();
    void sendTemplates();
    /// Marks the type records of the elements of `t` (and of its basicLists) as sent from now.
    void markTypeRecordsUsed(const IpfixTemplate& t);
    /// Builds the template batch (the RFC 5610 options template and records, then templates)
    /// into m_message, message by message, calling `emit(length, typeRecords)` for each.
    template <class Emit>
    void buildTemplateBatch(Emit&& emit);
    bool send(std::uint8_t* message, std::size_t length, std::uint32_t records, bool templates);
    void resetSet(const IpfixTemplate& t, SetBuffer& s) noexcept;
    void writeHeader(std::uint8_t* message, std::size_t length) const noexcept;

    EncoderConfig m_config;
    MessageSink& m_sink;
    std::vector<FieldId> m_basicFields;
    std::vector<IpfixTemplate> m_templates;  ///< [0], [1]: basic; then pairs by extension set
    std::vector<SetBuffer> m_sets;           ///< one per template, same index
    std::vector<std::pair<std::uint64_t, std::size_t>> m_templateIndex;  ///< set -> IPv4 index
    std::uint64_t m_oversized = 0;
    std::vector<std::uint8_t> m_message;  ///< maxMessageSize; for multi-set and template messages
    std::uint32_t m_sequence = 0;
    bool m_templatesOwed = true;
    std::uint64_t m_lastTemplatesNs = 0;
    std::uint64_t m_dataMessagesSinceTemplates = 0;
    std::uint64_t m_messages = 0;
    std::uint64_t m_templateMessages = 0;
    std::vector<std::uint8_t> m_typeTemplate;              ///< options template record (256)
    std::vector<std::vector<std::uint8_t>> m_typeRecords;  ///< encoded RFC 5610 records
    std::vector<bool> m_typeUsed;  ///< record i describes an element of a template made so far
};

/// The encoded RFC 5610 record of `info` (fields of the options template 256), with the
/// description cut so the record fits `room` bytes. For the encoder and tests.
std::vector<std::uint8_t> encodeTypeInfoRecord(const IpfixTypeInfo& info, std::size_t room);

/// The options template record 256 for RFC 5610 records (id, field count, scope count, fields).
std::vector<std::uint8_t> typeInfoTemplateRecord();

// ---- Variable-length values and basicLists (RFC 7011 §7, RFC 6313 §4.5.1) ---------------------
//
// variable-length value   [len u8][bytes]                  when len < 255
//                         [FF][len u16 BE][bytes]          otherwise
// basicList (IE 291)      [FF][len u16 BE]                 always the 3-byte form, as ipfixprobe
//                         [semantic u8 = 3 allOf][id u16 | 0x8000][element length u16][PEN u32]
//                         [n values, each `element length` bytes, BE]
// (the 9-byte list header has the PEN only when the enterprise bit is set; an IANA element
// inside a list gets a 5-byte header.)

inline constexpr std::uint16_t kIpfixBasicList = 291;
inline constexpr std::uint8_t kListSemanticAllOf = 3;

/// Bytes of a variable-length value of `n` bytes, prefix included.
constexpr std::size_t ipfixVarLenSize(std::size_t n) noexcept { return n + (n < 255 ? 1 : 3); }

/// Writes `value` as a variable-length field (short prefix when possible); returns the bytes
/// written (ipfixVarLenSize). `value` must be at most 65535 bytes.
inline std::size_t putIpfixVarLen(std::uint8_t* out, std::span<const std::uint8_t> value) noexcept {
    std::size_t at = 0;
    if (value.size() < 255) {
        out[at++] = static_cast<std::uint8_t>(value.size());
    } else {
        out[at++] = 0xFF;
        out[at++] = static_cast<std::uint8_t>(value.size() >> 8);
        out[at++] = static_cast<std::uint8_t>(value.size());
    }
    if (!value.empty()) std::memcpy(out + at, value.data(), value.size());
    return at + value.size();
}

/// Bytes of a basicList of `count` elements of `element.length` bytes, prefix included.
constexpr std::size_t ipfixBasicListSize(const IpfixElement& element, std::size_t count) noexcept {
    return 3 + 5 + (element.enterprise() ? 4 : 0) + count * element.length;
}

/// Writes the unsigned `v` big-endian in sizeof(T) bytes at `p` (byte_order.hpp's store of
/// that width).
template <class T>
inline void storeBe(std::uint8_t* p, T v) noexcept {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
    if constexpr (sizeof(T) == 1) {
        *p = v;
    } else if constexpr (sizeof(T) == 2) {
        storeBe16(p, v);
    } else if constexpr (sizeof(T) == 4) {
        storeBe32(p, v);
    } else {
        storeBe64(p, v);
    }
}

/// Writes `count` unsigned values of type T, read in host order from `src` (unaligned),
/// big-endian at `out`: one load and one byte-swapped store each.
template <class T>
inline void storeBeEach(std::uint8_t* out, const std::uint8_t* src, std::size_t count) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
        T v = 0;
        std::memcpy(&v, src + sizeof(T) * i, sizeof(T));
        storeBe<T>(out + sizeof(T) * i, v);
    }
}

/// Writes a basicList of `count` host-order values of `sourceWidth` bytes each (1, 2, 4, 8),
/// read from `values` (unaligned), each encoded BE in `element.length` bytes (reduced-size
/// encoding truncates to the low bytes). Returns the bytes written (ipfixBasicListSize).
inline std::size_t putIpfixBasicList(std::uint8_t* out, const IpfixElement& element,
                                     const void* values, std::size_t count,
                                     std::size_t sourceWidth) noexcept {
    const std::size_t total = ipfixBasicListSize(element, count);
    const std::size_t content = total - 3;
    out[0] = 0xFF;
    out[1] = static_cast<std::uint8_t>(content >> 8);
    out[2] = static_cast<std::uint8_t>(content);
    out[3] = kListSemanticAllOf;
    const auto id = static_cast<std::uint16_t>(element.id | (element.enterprise() ? 0x8000U : 0U));
    out[4] = static_cast<std::uint8_t>(id >> 8);
    out[5] = static_cast<std::uint8_t>(id);
    out[6] = static_cast<std::uint8_t>(element.length >> 8);
    out[7] = static_cast<std::uint8_t>(element.length);
    std::size_t at = 8;
    if (element.enterprise()) {
        for (int shift = 24; shift >= 0; shift -= 8)
            out[at++] = static_cast<std::uint8_t>(element.pen >> shift);
    }
    const auto* src = static_cast<const std::uint8_t*>(values);
    out += at;
    if (sourceWidth == element.length) {  // the common case: one swapped store per value
        switch (sourceWidth) {
            case 1:
                storeBeEach<std::uint8_t>(out, src, count);
                return total;
            case 2:
                storeBeEach<std::uint16_t>(out, src, count);
                return total;
            case 4:
                storeBeEach<std::uint32_t>(out, src, count);
                return total;
            case 8:
                storeBeEach<std::uint64_t>(out, src, count);
                return total;
            default:
                break;
        }
    }
    at = 0;
    for (std::size_t i = 0; i < count; ++i, src += sourceWidth) {
        std::uint64_t v = 0;
        std::memcpy(&v, src, sourceWidth);  // little-endian host: the low bytes first
        for (std::size_t b = element.length; b-- > 0;) {
            out[at + b] = static_cast<std::uint8_t>(v);
            v >>= 8;
        }
        at += element.length;
    }
    return total;
}

// The NTP fraction counts 2^-32 s, so a microsecond or nanosecond is rarely a whole number of
// units. Decoders convert back in different ways: truncating (libfixbuf, nfdump), rounding,
// in floating point that lands a hair below exact values (tshark: .5 s read as .499999999), or
// ignoring the low 11 bits of a microsecond fraction (RFC 7011 §6.1.9; libfds / ipfixcol2).
// The encodings below sit strictly above the exact value by less than half a unit of the
// precision, so all of them read back the encoded microsecond / nanosecond.

/// NTP64 (seconds since 1900 << 32 | fraction) of `t` truncated to whole microseconds.
inline std::uint64_t ntpMicroseconds(TimeNs t) noexcept {
    const std::uint64_t sec = t / kNsPerSec;
    const std::uint64_t usec = (t % kNsPerSec) / 1000;
    // Next multiple of 2^11 units (0.477 µs) strictly above the exact value; low 11 bits zero.
    const std::uint64_t exact = (usec << 32) / 1'000'000;
    const std::uint64_t frac = ((exact >> 11) + 1) << 11;
    return ((sec + kNtpEpochOffset) << 32) | frac;
}

/// NTP64 of `t` to the nanosecond.
inline std::uint64_t ntpNanoseconds(TimeNs t) noexcept {
    const std::uint64_t sec = t / kNsPerSec;
    const std::uint64_t nsec = t % kNsPerSec;
    // 1 to 2 units (0.23-0.47 ns) above the exact value.
    const std::uint64_t frac = ((nsec << 32) / kNsPerSec) + 2;
    return ((sec + kNtpEpochOffset) << 32) | frac;
}

}  // namespace rowprobe::output
