#include "rowprobe/fields.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>

#include "rowprobe/options.hpp"

namespace rowprobe {

namespace {

static_assert(std::is_standard_layout_v<FlowRecord>, "fields address FlowRecord by offset");
static_assert(std::is_standard_layout_v<ExportConstants>,
              "fields address ExportConstants by offset");

constexpr std::uint16_t recordOffset(std::size_t offset) {
    return static_cast<std::uint16_t>(offset);
}

#define ROWPROBE_AT(member) recordOffset(offsetof(FlowRecord, member))
#define ROWPROBE_AT_REV(member, type) recordOffset(offsetof(FlowRecord, member) + sizeof(type))
#define ROWPROBE_CONST_AT(member) recordOffset(offsetof(ExportConstants, member))

constexpr IpfixElement iana(std::uint16_t id, std::uint16_t length) {
    return {kPenIana, id, length};
}

using enum FieldType;
using enum FieldDirection;

// Indexed by FieldId. IPFIX elements and lengths follow ipfixprobe (docs/design/wire-formats.md);
// UniRec names and types are NEMEA's standard fields.
constexpr FieldSpec kCoreFields[] = {
    {.name = "end_reason",
     .description = "why the flow ended (IPFIX flowEndReason)",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(endReason),
     .ipfix = iana(136, 1)},
    {.name = "bytes",
     .description = "IP bytes src -> dst",
     .type = Unsigned64,
     .offset = ROWPROBE_AT(bytes),
     .direction = Forward,
     .ipfix = iana(1, 8),
     .unirec = {"BYTES", "uint64"}},
    {.name = "bytes_rev",
     .description = "IP bytes dst -> src",
     .type = Unsigned64,
     .offset = ROWPROBE_AT_REV(bytes, std::uint64_t),
     .direction = Reverse,
     .ipfix = reverseElement(iana(1, 8)),
     .unirec = {"BYTES_REV", "uint64"}},
    {.name = "packets",
     .description = "packets src -> dst",
     .type = Unsigned32,
     .offset = ROWPROBE_AT(packets),
     .direction = Forward,
     .ipfix = iana(2, 8),
     .unirec = {"PACKETS", "uint32"}},
    {.name = "packets_rev",
     .description = "packets dst -> src",
     .type = Unsigned32,
     .offset = ROWPROBE_AT_REV(packets, std::uint32_t),
     .direction = Reverse,
     .ipfix = reverseElement(iana(2, 8)),
     .unirec = {"PACKETS_REV", "uint32"}},
    {.name = "time_first",
     .description = "time of the first packet",
     .type = Timestamp,
     .offset = ROWPROBE_AT(timeFirst),
     .ipfix = iana(154, 8),
     .unirec = {"TIME_FIRST", "time"}},
    {.name = "time_last",
     .description = "time of the last packet",
     .type = Timestamp,
     .offset = ROWPROBE_AT(timeLast),
     .ipfix = iana(155, 8),
     .unirec = {"TIME_LAST", "time"}},
    {.name = "ip_version",
     .description = "IP version, 4 or 6",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(ipVersion),
     .ipfix = iana(60, 1)},
    {.name = "proto",
     .description = "IP protocol number",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(proto),
     .ipfix = iana(4, 1),
     .unirec = {"PROTOCOL", "uint8"}},
    {.name = "tcp_flags",
     .description = "OR of the TCP flags src -> dst",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(tcpFlags),
     .direction = Forward,
     .ipfix = iana(6, 1),
     .unirec = {"TCP_FLAGS", "uint8"}},
    {.name = "tcp_flags_rev",
     .description = "OR of the TCP flags dst -> src",
     .type = Unsigned8,
     .offset = ROWPROBE_AT_REV(tcpFlags, std::uint8_t),
     .direction = Reverse,
     .ipfix = reverseElement(iana(6, 1)),
     .unirec = {"TCP_FLAGS_REV", "uint8"}},
    {.name = "src_port",
     .description = "source transport port",
     .type = Unsigned16,
     .offset = ROWPROBE_AT(srcPort),
     .ipfix = iana(7, 2),
     .unirec = {"SRC_PORT", "uint16"}},
    {.name = "dst_port",
     .description = "destination transport port",
     .type = Unsigned16,
     .offset = ROWPROBE_AT(dstPort),
     .ipfix = iana(11, 2),
     .unirec = {"DST_PORT", "uint16"}},
    {.name = "dir_bit_field",
     .description = "exporter constant: IPFIX flowDirection / UniRec DIR_BIT_FIELD",
     .type = Unsigned32,
     .origin = FieldOrigin::Exporter,
     .offset = ROWPROBE_CONST_AT(dirBitField),
     .ipfix = iana(61, 1),
     .unirec = {"DIR_BIT_FIELD", "uint8"}},
    {.name = "src_ip",
     .description = "source address",
     .type = IpAddress,
     .offset = ROWPROBE_AT(srcAddr),
     .ipfix = iana(8, 4),
     .ipfix6 = iana(27, 16),
     .unirec = {"SRC_IP", "ipaddr"}},
    {.name = "dst_ip",
     .description = "destination address",
     .type = IpAddress,
     .offset = ROWPROBE_AT(dstAddr),
     .ipfix = iana(12, 4),
     .ipfix6 = iana(28, 16),
     .unirec = {"DST_IP", "ipaddr"}},
    {.name = "src_mac",
     .description = "source MAC of the first packet",
     .type = MacAddress,
     .offset = ROWPROBE_AT(srcMac),
     .ipfix = iana(56, 6),
     .unirec = {"SRC_MAC", "macaddr"}},
    {.name = "dst_mac",
     .description = "destination MAC of the first packet",
     .type = MacAddress,
     .offset = ROWPROBE_AT(dstMac),
     .ipfix = iana(80, 6),
     .unirec = {"DST_MAC", "macaddr"}},
    {.name = "link_bit_field",
     .description = "exporter constant: UniRec LINK_BIT_FIELD",
     .type = Unsigned64,
     .origin = FieldOrigin::Exporter,
     .offset = ROWPROBE_CONST_AT(linkBitField),
     .unirec = {"LINK_BIT_FIELD", "uint64"}},
    {.name = "odid",
     .description = "exporter constant: UniRec ODID",
     .type = Unsigned32,
     .origin = FieldOrigin::Exporter,
     .offset = ROWPROBE_CONST_AT(odid),
     .unirec = {"ODID", "uint32"}},
    {.name = "vlan",
     .description = "outermost VLAN id",
     .type = Unsigned16,
     .offset = ROWPROBE_AT(vlan),
     .ipfix = iana(58, 2),
     .unirec = {"VLAN_ID", "uint16"}},
    {.name = "icmp_type_code",
     .description = "first ICMP type << 8 | code src -> dst",
     .type = Unsigned16,
     .offset = ROWPROBE_AT(icmpTypeCode),
     .direction = Forward,
     .ipfix = iana(32, 2),
     .ipfix6 = iana(139, 2),
     .unirec = {"L4_ICMP_TYPE_CODE", "uint16"}},
    {.name = "icmp_type_code_rev",
     .description = "first ICMP type << 8 | code dst -> src",
     .type = Unsigned16,
     .offset = ROWPROBE_AT_REV(icmpTypeCode, std::uint16_t),
     .direction = Reverse,
     .ipfix = reverseElement(iana(32, 2)),
     .ipfix6 = reverseElement(iana(139, 2))},
    {.name = "ttl",
     .description = "TTL / hop limit of the first packet src -> dst",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(ttl),
     .direction = Forward,
     .ipfix = iana(192, 1),
     .unirec = {"IP_TTL", "uint8"}},
    {.name = "ttl_rev",
     .description = "TTL / hop limit of the first packet dst -> src",
     .type = Unsigned8,
     .offset = ROWPROBE_AT_REV(ttl, std::uint8_t),
     .direction = Reverse,
     .ipfix = reverseElement(iana(192, 1)),
     .unirec = {"IP_TTL_REV", "uint8"}},
    {.name = "queue",
     .description = "worker queue that built the record (not exported on a wire)",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(queue)},
    // Tunnel of an inner flow (--tunnel inner|both). IANA has no elements for a tunnel's outer
    // addresses, type or id (layer2SegmentId, 351, covers only VXLAN/NVGRE with a type byte),
    // and rowprobe has no enterprise number of its own: no fixed element here (id 0); the ipfix
    // output sends them under the operator's `tunnel-pen` (output/ipfix/ipfix_output.hpp).
    {.name = "tunnel_type",
     .description = "tunnel of an inner flow: 0 none, 1 GRE, 2 ERSPAN, 3 VXLAN, 4 Geneve, "
                    "5 GTP-U, 6 Teredo, 7 AYIYA, 8 CAPWAP, 9 IP-in-IP, 10 MPLS/UDP",
     .type = Unsigned8,
     .offset = ROWPROBE_AT(tunnel.type),
     .unirec = {"TUNNEL_TYPE", "uint8"}},
    {.name = "tunnel_id",
     .description = "tunnel id of an inner flow: VNI, TEID, GRE key or ERSPAN session",
     .type = Unsigned32,
     .offset = ROWPROBE_AT(tunnel.id),
     .unirec = {"TUNNEL_ID", "uint32"}},
    {.name = "tunnel_src",
     .description = "outer source address of an inner flow's tunnel",
     .type = IpAddress,
     .offset = ROWPROBE_AT(tunnel.src),
     .unirec = {"TUNNEL_SRC_IP", "ipaddr"}},
    {.name = "tunnel_dst",
     .description = "outer destination address of an inner flow's tunnel",
     .type = IpAddress,
     .offset = ROWPROBE_AT(tunnel.dst),
     .unirec = {"TUNNEL_DST_IP", "ipaddr"}},
};
static_assert(std::size(kCoreFields) == kCoreFieldCount, "one FieldSpec per FieldId");

#undef ROWPROBE_AT
#undef ROWPROBE_AT_REV
#undef ROWPROBE_CONST_AT

constexpr bool namesMatchIds() {
    constexpr std::string_view kExpected[] = {"end_reason",
                                              "bytes",
                                              "bytes_rev",
                                              "packets",
                                              "packets_rev",
                                              "time_first",
                                              "time_last",
                                              "ip_version",
                                              "proto",
                                              "tcp_flags",
                                              "tcp_flags_rev",
                                              "src_port",
                                              "dst_port",
                                              "dir_bit_field",
                                              "src_ip",
                                              "dst_ip",
                                              "src_mac",
                                              "dst_mac",
                                              "link_bit_field",
                                              "odid",
                                              "vlan",
                                              "icmp_type_code",
                                              "icmp_type_code_rev",
                                              "ttl",
                                              "ttl_rev",
                                              "queue",
                                              "tunnel_type",
                                              "tunnel_id",
                                              "tunnel_src",
                                              "tunnel_dst"};
    for (std::size_t i = 0; i < kCoreFieldCount; ++i) {
        if (kCoreFields[i].name != kExpected[i]) return false;
    }
    return true;
}
static_assert(namesMatchIds(), "kCoreFields must be in FieldId order");

using enum FieldId;

constexpr FieldId kIpfixBasic[] = {
    EndReason, Bytes,       BytesRev, Packets, PacketsRev,  TimeFirst, TimeLast, IpVersion, Proto,
    TcpFlags,  TcpFlagsRev, SrcPort,  DstPort, DirBitField, SrcIp,     DstIp,    SrcMac,    DstMac};

constexpr FieldId kUnirecBasic[] = {
    SrcIp,     DstIp,    SrcPort,  DstPort,     Proto,       Packets, Bytes,  PacketsRev,  BytesRev,
    TimeFirst, TimeLast, TcpFlags, TcpFlagsRev, DirBitField, SrcMac,  DstMac, LinkBitField};

constexpr FieldId kUnirecBasicOdid[] = {
    SrcIp,     DstIp,    SrcPort,  DstPort,     Proto,       Packets, Bytes,  PacketsRev, BytesRev,
    TimeFirst, TimeLast, TcpFlags, TcpFlagsRev, DirBitField, SrcMac,  DstMac, Odid};

}  // namespace

std::span<const FieldSpec> coreFields() noexcept { return kCoreFields; }

const FieldSpec& fieldSpec(FieldId id) noexcept {
    return kCoreFields[static_cast<std::size_t>(id)];
}

const FieldSpec* findField(std::string_view name) noexcept {
    for (const auto& f : kCoreFields) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

std::span<const FieldId> ipfixBasicFields() noexcept { return kIpfixBasic; }

bool addressIsIpv4(const FieldSpec& f, const FlowRecord& r) noexcept {
    if (f.origin == FieldOrigin::Record && f.offset >= offsetof(FlowRecord, tunnel)) {
        // Outside a tunnel the (zero) outer address takes the flow's own family: 0.0.0.0 for an
        // IPv4 flow, :: for an IPv6 one (as the json README shows).
        if (r.tunnel.type == 0) return r.isIpv4();
        return isIpv4Mapped(readBytes(f, r, ExportConstants{}));
    }
    return r.isIpv4();
}

std::vector<const FieldSpec*> parseRecordFieldList(const Options& options,
                                                   std::string_view option) {
    const std::string list = options.getString(option);
    std::vector<const FieldSpec*> fields;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string name = list.substr(pos, comma - pos);
        const FieldSpec* spec = findField(name);
        if (spec == nullptr || spec->origin != FieldOrigin::Record) {
            std::vector<std::string> known;
            for (const FieldSpec& f : kCoreFields) {
                if (f.origin == FieldOrigin::Record) known.emplace_back(f.name);
            }
            options.fail(option, "unknown field '" + name + "'", known, name);
        }
        fields.push_back(spec);
        pos = comma + 1;
    }
    return fields;
}

std::span<const FieldId> unirecBasicFields(bool odid) noexcept {
    return odid ? std::span<const FieldId>(kUnirecBasicOdid)
                : std::span<const FieldId>(kUnirecBasic);
}

}  // namespace rowprobe
