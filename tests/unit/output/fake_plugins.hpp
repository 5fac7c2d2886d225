// Process plugins for the output tests: field schemas shaped like http, pstats and passivedns
// (their UniRec names, types and IPFIX elements as in the plugins' READMEs), no hooks, and
// records carrying their instances as the flow table exports them (rowprobe/plugin_data.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"

namespace rowprobe::test::plugins {

struct HttpFields {
    VarRef method;
    VarRef host;
    std::uint16_t status = 0;
};
struct StatsFields {
    VarRef lengths;     // u16
    VarRef times;       // TimeNs
    VarRef directions;  // i8
};
struct SignedFields {  // flowstats-like: signed scalars and -1-padded signed arrays
    std::int16_t a = 0;
    std::int32_t b = 0;
    VarRef shorts;  // i16
    VarRef ints;    // i32
};
struct DnsFields {
    std::array<std::uint8_t, 16> ip{};
    std::uint32_t ttl = 0;
    std::uint16_t id = 0;
    VarRef name;
};

inline constexpr FieldSpec kHttpFields[] = {
    {.name = "http_host",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(HttpFields, host),
     .ipfix = {kPenFlowmon, 1, kIpfixVarLen},
     .unirec = {"HTTP_REQUEST_HOST", "string"}},
    {.name = "http_method",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(HttpFields, method),
     .ipfix = {kPenCesnet, 200, kIpfixVarLen},
     .unirec = {"HTTP_REQUEST_METHOD", "string"}},
    {.name = "http_status",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(HttpFields, status),
     .ipfix = {kPenFlowmon, 12, 2},
     .unirec = {"HTTP_RESPONSE_STATUS_CODE", "uint16"}},
};

inline constexpr FieldSpec kStatsFields[] = {
    arrayField("ppi_pkt_lengths", "", offsetof(StatsFields, lengths),
               {"PPI_PKT_LENGTHS", "uint16*"}, FieldType::Unsigned16, {kPenCesnet, 1013, 2}),
    arrayField("ppi_pkt_times", "", offsetof(StatsFields, times), {"PPI_PKT_TIMES", "time*"},
               FieldType::Timestamp, {kPenCesnet, 1014, 8}),
    arrayField("ppi_pkt_directions", "", offsetof(StatsFields, directions),
               {"PPI_PKT_DIRECTIONS", "int8*"}, FieldType::Int8, {kPenCesnet, 1016, 1}),
};

/// Signed fields under an operator's PEN (32473, RFC 5612's documentation PEN), as a plugin
/// with `pen=` declares them: signed16 / signed32 scalars and basicLists of them.
inline constexpr std::uint32_t kSignedPen = 32473;
inline constexpr FieldSpec kSignedFields[] = {
    {.name = "s16",
     .type = FieldType::Int16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(SignedFields, a),
     .ipfix = {kSignedPen, 1, 2},
     .unirec = {"S16", "int16"}},
    {.name = "s32",
     .type = FieldType::Int32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(SignedFields, b),
     .ipfix = {kSignedPen, 2, 4},
     .unirec = {"S32", "int32"}},
    arrayField("s16_list", "", offsetof(SignedFields, shorts), {"S16_LIST", "int16*"},
               FieldType::Int16, {kSignedPen, 3, 2}),
    arrayField("s32_list", "", offsetof(SignedFields, ints), {"S32_LIST", "int32*"},
               FieldType::Int32, {kSignedPen, 4, 4}),
};

inline constexpr FieldSpec kDnsFields[] = {
    {.name = "dns_id",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(DnsFields, id),
     .ipfix = {kPenCesnet, 10, 2},
     .unirec = {"DNS_ID", "uint16"}},
    {.name = "dns_ttl",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(DnsFields, ttl),
     .ipfix = {kPenCesnet, 5, 4},
     .unirec = {"DNS_RR_TTL", "uint32"}},
    {.name = "dns_ip",
     .type = FieldType::IpAddress,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(DnsFields, ip),
     .ipfix = {kPenCesnet, 7, kIpfixVarLen},
     .unirec = {"DNS_IP", "ipaddr"}},
    {.name = "dns_name",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(DnsFields, name),
     .ipfix = {kPenCesnet, 2, kIpfixVarLen},
     .unirec = {"DNS_NAME", "string"}},
};

/// A plugin that only declares fields.
class FakePlugin final : public ProcessPlugin {
public:
    FakePlugin(std::string name, std::span<const FieldSpec> fields)
        : m_name(std::move(name)), m_fields(fields) {}
    std::string_view name() const noexcept override { return m_name; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }
    ProcessHooks hooks() const noexcept override { return {}; }

private:
    std::string m_name;
    std::span<const FieldSpec> m_fields;
};

/// Builds a record's plugin data; the record points into the builder (keep it alive).
class Instances {
public:
    Instances() : m_buffer(kMaxPluginData), m_writer(m_buffer.data(), m_buffer.size()) {}

    void http(std::uint16_t plugin, const std::string& method, const std::string& host,
              std::uint16_t status) {
        m_writer.setPlugin(plugin);
        auto* f = m_writer.begin<HttpFields>();
        f->status = status;
        f->method = m_writer.appendString(method);
        f->host = m_writer.appendString(host);
        m_writer.commit();
    }
    void stats(std::uint16_t plugin, std::vector<std::uint16_t> lengths, std::vector<TimeNs> times,
               std::vector<std::int8_t> directions) {
        m_writer.setPlugin(plugin);
        auto* f = m_writer.begin<StatsFields>();  // the buffer never moves: f stays valid
        f->lengths = m_writer.append(std::span<const std::uint16_t>(lengths));
        f->times = m_writer.append(std::span<const TimeNs>(times));
        f->directions = m_writer.append(std::span<const std::int8_t>(directions));
        m_writer.commit();
    }
    void signedValues(std::uint16_t plugin, std::int16_t a, std::int32_t b,
                      std::vector<std::int16_t> shorts, std::vector<std::int32_t> ints) {
        m_writer.setPlugin(plugin);
        auto* f = m_writer.begin<SignedFields>();
        f->a = a;
        f->b = b;
        f->shorts = m_writer.append(std::span<const std::int16_t>(shorts));
        f->ints = m_writer.append(std::span<const std::int32_t>(ints));
        m_writer.commit();
    }
    void dns(std::uint16_t plugin, std::array<std::uint8_t, 16> ip, std::uint32_t ttl,
             std::uint16_t id, const std::string& name) {
        m_writer.setPlugin(plugin);
        auto* f = m_writer.begin<DnsFields>();
        f->ip = ip;
        f->ttl = ttl;
        f->id = id;
        f->name = m_writer.appendString(name);
        m_writer.commit();
    }
    void attach(FlowRecord& r) const {
        r.ext = m_buffer.data();
        r.extLen = static_cast<decltype(r.extLen)>(m_writer.size());
    }

private:
    std::vector<std::uint8_t> m_buffer;
    InstanceWriter m_writer;
};

}  // namespace rowprobe::test::plugins
