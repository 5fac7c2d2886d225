// NetFlow v9 export packets (RFC 3954) of rowprobe's flows, as uniflow records (v9 has no
// biflows): a biflow becomes its forward record and, when it saw packets from the responder,
// its reverse record (addresses, ports and MACs swapped; the reverse counters and flags in the
// forward fields; DIRECTION 0 / 1), like `ipfix;uniflow`.
//
// Packet layout (one buffer, sent as one UDP datagram):
//
//   header  [version 9][count][sysUptime ms][unix secs][sequence][source id]    20 bytes
//   flowset [0][length][template 256 (IPv4)][template 257 (IPv6)]               when owed
//   flowset [256 or 257][length][record][record]...[padding to 4 bytes]
//   flowset ...   (a new data flowset whenever the IP version changes)
//
//   count = template records + data records in the packet; sequence = packets sent before
//   (RFC 3954 §5.1: a per-packet counter, unlike IPFIX's per-record one).
//
// Templates (v9 field types, all defined by RFC 3954 §8), by default:
//   IN_BYTES(1) 8, IN_PKTS(2) 8, FIRST_SWITCHED(22) 4, LAST_SWITCHED(21) 4,
//   IP_PROTOCOL_VERSION(60) 1, PROTOCOL(4) 1, TCP_FLAGS(6) 1, L4_SRC_PORT(7) 2,
//   L4_DST_PORT(11) 2, DIRECTION(61) 1, IPV4_SRC_ADDR(8) 4 | IPV6_SRC_ADDR(27) 16,
//   IPV4_DST_ADDR(12) 4 | IPV6_DST_ADDR(28) 16, IN_SRC_MAC(56) 6, IN_DST_MAC(80) 6
//   = 52 bytes per IPv4 record, 76 per IPv6 record. ICMP flows have ports 0 (as in every
//   rowprobe output; the type and code are not in the v9 template). Left out (no v9 field type): the end reason, process-plugin and tunnel
//   fields, CESNET/Flowmon enterprise elements.
// `fields=` (Netflow9Config::fields) picks a subset of these, plus SRC_VLAN(58) 2 (vlan) and
// ICMP_TYPE(32) | ICMP_IPV6_TYPE(139) 2 (icmp_type_code, the reverse record's from the
// responder), always in this order (netflow9FieldVocabulary()); the record layout is compiled
// once into a list of (field type, length, FieldId) and encoded by one switch per field; the
// default template keeps a straight-line encoder (its cost is in docs/performance.md).
//
// Timestamps: FIRST/LAST_SWITCHED are milliseconds of sysUptime, and a collector turns them
// into times through the header: time = unix_secs * 1000 - sysUptime + FIRST_SWITCHED. The
// encoder keeps a boot time B (ms since 1970, whole seconds); a packet's header holds
// unix_secs = S (the latest flow end in the packet rounded up to a whole second) and
// sysUptime = S * 1000 - B, so the formula gives back every record's millisecond exactly.
// sysUptime is a u32 that wraps after 49.7 days; before a record would take it past 2^31 ms
// (24.8 days), or a record starts before B, the encoder sends the packet it has and moves B
// (the exporter appears to restart): every packet stays self-consistent, exact for collectors
// with and without wrap handling, over runs of any length. Times come from the flows (trace
// time for a capture file), not the wall clock.
//
// Thread ownership: one encoder per output, export thread only. No allocation per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "output/common/ipfix_encoder.hpp"
#include "rowprobe/flow_record.hpp"

namespace rowprobe::output {

inline constexpr std::uint16_t kNetflow9Version = 9;
inline constexpr std::size_t kNetflow9HeaderSize = 20;
inline constexpr std::uint16_t kNetflow9TemplateV4 = 256;
inline constexpr std::uint16_t kNetflow9TemplateV6 = 257;
inline constexpr std::size_t kNetflow9RecordV4 = 52;
inline constexpr std::size_t kNetflow9RecordV6 = 76;
/// sysUptime is kept below this (ms), half the u32 range.
inline constexpr std::uint64_t kNetflow9MaxUptimeMs = std::uint64_t{1} << 31;
/// How far before the first flow of an epoch its boot time is put (ms).
inline constexpr std::uint64_t kNetflow9BootSlackMs = 3'600'000;

/// The core fields the netflow9 output's `fields=` may name, in template order.
std::span<const FieldId> netflow9FieldVocabulary() noexcept;
/// The default template's fields (the 14 of the table above).
std::span<const FieldId> netflow9DefaultFields() noexcept;

struct Netflow9Config {
    std::vector<FieldId> fields;  ///< template fields (vocabulary order); empty = the default
    std::uint32_t sourceId = 0;
    std::size_t maxPacketSize = 1400;          ///< bytes incl. the 20-byte header
    std::uint64_t templateRefreshNs = 0;       ///< re-send templates after this time; 0 = never
    std::uint64_t templateRefreshPackets = 0;  ///< ... or after this many packets; 0 = never
    std::uint64_t (*monotonicNs)() = nullptr;  ///< refresh timer; null = CLOCK_MONOTONIC
};

class Netflow9Encoder {
public:
    /// Throws std::invalid_argument when maxPacketSize cannot hold the templates and one
    /// IPv6 record, or exceeds 65535, or a field is not in netflow9FieldVocabulary().
    Netflow9Encoder(const Netflow9Config& config, MessageSink& sink);

    /// The smallest packet size accepted for `fields` (empty: the default template).
    static std::size_t minPacketSize(std::span<const FieldId> fields = {});

    /// Encodes the forward record and, with reverse packets, the reverse one.
    void add(const FlowRecord& record);
    /// Sends the packet being built (and templates still owed with it).
    void flush();
    /// The next packet starts with the templates.
    void resendTemplates() noexcept { m_templatesOwed = true; }

    /// Encodes one data record of the default template into `out` (kNetflow9RecordV4/V6 bytes)
    /// relative to boot time `bootMs`; returns its length. For tests and the benchmark.
    static std::size_t encodeRecord(const FlowRecord& r, bool reverse, std::uint64_t bootMs,
                                    std::uint8_t* out) noexcept;

    /// One field of a compiled template: v9 field type, length, the core field it encodes.
    struct Field {
        std::uint16_t type = 0;
        std::uint16_t length = 0;
        FieldId id = FieldId::Bytes;
    };
    /// A template compiled for one IP version.
    struct Layout {
        std::vector<Field> fields;
        std::size_t recordLength = 0;
        bool isDefault = false;  ///< the default 14 fields: encoded by the straight-line path
    };
    static Layout compile(std::span<const FieldId> fields, bool v6);
    const Layout& layout(bool v6) const noexcept { return v6 ? m_v6 : m_v4; }

    std::uint32_t sequence() const noexcept { return m_sequence; }
    std::uint64_t bootMs() const noexcept { return m_bootMs; }
    std::uint64_t packetsSent() const noexcept { return m_packets; }
    std::uint64_t templatePacketsSent() const noexcept { return m_templatePackets; }
    std::uint64_t rebases() const noexcept { return m_rebases; }

private:
    static std::size_t encode(const Layout& layout, const FlowRecord& r, bool reverse,
                              std::uint64_t bootMs, std::uint8_t* out) noexcept;
    static std::size_t encodeDefault(const FlowRecord& r, bool reverse, std::uint64_t bootMs,
                                     std::uint8_t* out) noexcept;
    void addOne(const FlowRecord& r, bool reverse);
    void startPacket();
    void closeFlowset();
    void send();
    bool refreshDue() const;

    Netflow9Config m_config;
    MessageSink& m_sink;
    Layout m_v4;
    Layout m_v6;
    std::size_t m_templateFlowsetSize = 0;
    std::vector<std::uint8_t> m_packet;
    std::size_t m_used = 0;          ///< bytes of m_packet in use
    std::size_t m_flowsetStart = 0;  ///< offset of the open data flowset; 0 = none
    std::uint16_t m_flowsetId = 0;
    std::uint32_t m_count = 0;  ///< records (template and data) in the packet
    std::uint32_t m_dataRecords = 0;
    std::uint64_t m_maxLastMs = 0;  ///< latest flow end in the packet
    std::uint64_t m_bootMs = 0;     ///< the epoch's boot time, ms since 1970
    bool m_haveBoot = false;
    std::uint32_t m_sequence = 0;
    bool m_templatesOwed = true;
    bool m_templatesInPacket = false;
    std::uint64_t m_lastTemplatesNs = 0;
    std::uint64_t m_packetsSinceTemplates = 0;
    std::uint64_t m_packets = 0;
    std::uint64_t m_templatePackets = 0;
    std::uint64_t m_rebases = 0;
};

}  // namespace rowprobe::output
