// The "passivedns" process plugin: one instance per A, AAAA or PTR answer of a DNS response
// (source port 53), each exported as its own record with the flow's fields repeated — what
// NEMEA passive-DNS consumers expect. A response flushes its flow, so a query and its response
// make one record per answer. Semantics: passivedns_record.hpp.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "process/passivedns/passivedns_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::dns {

namespace {

constexpr std::uint16_t kDnsPort = 53;

/// Answers kept per response; the rest of a (rare) larger response is not exported and is
/// counted in PassiveDnsExt::dropped (see README).
constexpr std::size_t kMaxAnswers = 16;

struct PassiveDnsExt {
    std::uint8_t count = 0;
    std::uint16_t dropped = 0;
    PassiveDnsRecord answers[kMaxAnswers];
};

struct Fields {
    std::array<std::uint8_t, 16> ip;
    std::uint32_t ttl;
    std::uint16_t id;
    std::uint16_t type;
    VarRef name;
};

constexpr FieldSpec kFields[] = {
    {.name = "pdns_id",
     .description = "message id",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, id),
     .ipfix = {kPenCesnet, 10, 2},
     .unirec = {"DNS_ID", "uint16"}},
    {.name = "pdns_ttl",
     .description = "TTL of the answer",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, ttl),
     .ipfix = {kPenCesnet, 5, 4},
     .unirec = {"DNS_RR_TTL", "uint32"}},
    {.name = "pdns_atype",
     .description = "type of the answer: 1 (A), 28 (AAAA) or 12 (PTR)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, type),
     .ipfix = {kPenCesnet, 11, 2},
     .unirec = {"DNS_ATYPE", "uint16"}},
    {.name = "pdns_ip",
     .description = "address of an A/AAAA answer, or the address a PTR owner name encodes",
     .type = FieldType::IpAddress,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, ip),
     .ipfix = {kPenCesnet, 7, kIpfixVarLen},
     .unirec = {"DNS_IP", "ipaddr"}},
    {.name = "pdns_name",
     .description = "owner name of an A/AAAA answer, target name of a PTR answer",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, name),
     .ipfix = {kPenCesnet, 2, kIpfixVarLen},
     .unirec = {"DNS_NAME", "string"}},
};

class PassiveDnsPlugin final : public ProcessPluginBase<PassiveDnsPlugin> {
public:
    using Ext = PassiveDnsExt;

    // Responses flush their flow at once, so few records are in use at a time; a worker's pool
    // of 8192 (about 40 MB reserved) is far more than the flows waiting for export.
    explicit PassiveDnsPlugin(const Options&) { m_extPoolRecords = 8192; }
    std::string_view name() const noexcept override { return "passivedns"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const PassiveDnsExt* rec = ctx.ext<PassiveDnsExt>();
        return rec != nullptr && rec->count != 0 ? std::string_view{"dns"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const PassiveDnsExt* ext = ctx.ext<PassiveDnsExt>();
        if (ext == nullptr) return;
        for (std::size_t i = 0; i < ext->count; ++i) {
            const PassiveDnsRecord& a = ext->answers[i];
            Fields* f = out.begin<Fields>();
            if (f == nullptr) return;
            if (a.ip.v6) {
                f->ip = a.ip.bytes;
            } else {  // IPv4-mapped, as FieldType::IpAddress holds IPv4
                f->ip = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
                std::memcpy(f->ip.data() + 12, a.ip.bytes.data(), 4);
            }
            f->ttl = a.ttl;
            f->id = a.id;
            f->type = a.type;
            f->name = out.appendString({a.name, std::strlen(a.name)});
            out.commit();
        }
    }

private:
    static HookResult onPacket(FlowContext& ctx) noexcept;
};

HookResult PassiveDnsPlugin::onPacket(FlowContext& ctx) noexcept {
    const std::uint8_t proto = ctx.flow->proto();
    if ((proto != 6 && proto != 17) ||
        (ctx.flow->srcPort() != kDnsPort && ctx.flow->dstPort() != kDnsPort)) {
        return kDone;  // ports never change: nothing to do for this flow
    }
    if (ctx.packet->srcPort() != kDnsPort) return kContinue;  // a query: wait for the response
    PassiveDnsExt* ext = ctx.attachExt<PassiveDnsExt>();
    if (ext == nullptr) return kFlush;  // pool exhausted (counted by the table)
    forEachPassiveDnsRecord(ctx.packet->payload(), proto == 6, [&](const PassiveDnsRecord& r) {
        if (ext->count < kMaxAnswers) {
            ext->answers[ext->count++] = r;
        } else {
            ++ext->dropped;
        }
    });
    if (ext->count == 0) ctx.detachExt();
    return kFlush;  // ipfixprobe flushes after every response, parsed or not
}

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, PassiveDnsPlugin,
                         {.name = "passivedns",
                          .summary = "One record per A, AAAA and PTR answer of DNS responses"});

}  // namespace rowprobe::dns
