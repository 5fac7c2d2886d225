// The "dns" process plugin: one record per DNS message on port 53 (UDP, or TCP with one whole
// message per segment): header id, answer count, rcode, the first question, the first answer's
// TTL and RDATA as text, EDNS size and DO bit. Each parsed message flushes its flow, as in
// ipfixprobe 5.7, so a query and its response are two records. Semantics: dns_record.hpp.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "process/dns/dns_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::dns {

namespace {

constexpr std::uint16_t kDnsPort = 53;

struct Fields {
    std::uint32_t ttl;
    std::uint16_t answers;
    std::uint16_t qtype;
    std::uint16_t qclass;
    std::uint16_t rdataLen;
    std::uint16_t ednsSize;
    std::uint16_t id;
    std::uint8_t rcode;
    std::uint8_t dnssecOk;
    VarRef qname;
    VarRef rdata;
};

constexpr FieldSpec scalar(std::string_view name, std::string_view description, FieldType type,
                           std::size_t offset, IpfixElement ipfix, std::string_view unirecName,
                           std::string_view unirecType) {
    return {.name = name,
            .description = description,
            .type = type,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = ipfix,
            .unirec = {unirecName, unirecType}};
}

// IPFIX template order of ipfixprobe: ANSWERS, RCODE, QTYPE, CLASS, RR_TTL, RLENGTH, PSIZE, DO,
// ID, NAME, RDATA.
constexpr FieldSpec kFields[] = {
    scalar("dns_answers", "answer count of the message", FieldType::Unsigned16,
           offsetof(Fields, answers), {kPenCesnet, 14, 2}, "DNS_ANSWERS", "uint16"),
    scalar("dns_rcode", "response code", FieldType::Unsigned8, offsetof(Fields, rcode),
           {kPenCesnet, 1, 1}, "DNS_RCODE", "uint8"),
    scalar("dns_qtype", "type of the first question", FieldType::Unsigned16,
           offsetof(Fields, qtype), {kPenCesnet, 3, 2}, "DNS_QTYPE", "uint16"),
    scalar("dns_qclass", "class of the first question", FieldType::Unsigned16,
           offsetof(Fields, qclass), {kPenCesnet, 4, 2}, "DNS_CLASS", "uint16"),
    scalar("dns_ttl", "TTL of the first answer", FieldType::Unsigned32, offsetof(Fields, ttl),
           {kPenCesnet, 5, 4}, "DNS_RR_TTL", "uint32"),
    scalar("dns_rdata_len", "length of dns_rdata", FieldType::Unsigned16,
           offsetof(Fields, rdataLen), {kPenCesnet, 6, 2}, "DNS_RLENGTH", "uint16"),
    scalar("dns_edns_size", "EDNS UDP payload size (OPT record class)", FieldType::Unsigned16,
           offsetof(Fields, ednsSize), {kPenCesnet, 8, 2}, "DNS_PSIZE", "uint16"),
    scalar("dns_do", "EDNS DNSSEC OK bit", FieldType::Unsigned8, offsetof(Fields, dnssecOk),
           {kPenCesnet, 9, 1}, "DNS_DO", "uint8"),
    scalar("dns_id", "message id", FieldType::Unsigned16, offsetof(Fields, id), {kPenCesnet, 10, 2},
           "DNS_ID", "uint16"),
    scalar("dns_qname", "name of the first question (at most 127 bytes)", FieldType::String,
           offsetof(Fields, qname), {kPenCesnet, 2, kIpfixVarLen}, "DNS_NAME", "string"),
    {.name = "dns_rdata",
     .description = "RDATA of the first answer as text (at most 159 bytes)",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, rdata),
     .ipfix = {kPenCesnet, 7, kIpfixVarLen},
     .unirec = {"DNS_RDATA", "bytes"},
     .hint = FieldHint::Text},
};

class DnsPlugin final : public ProcessPluginBase<DnsPlugin> {
public:
    using Ext = DnsRecord;

    explicit DnsPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "dns"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        if (!onPort53(ctx)) return kDone;  // ports never change: nothing to do for this flow
        return tryAttach(ctx) ? kFlush : kContinue;
    }

    HookResult postUpdate(FlowContext& ctx) const noexcept {
        if (!onPort53(ctx)) return kDone;
        DnsRecord* rec = ctx.ext<DnsRecord>();
        if (rec == nullptr) return tryAttach(ctx) ? kFlush : kContinue;
        // ipfixprobe re-parses into the record it has (fields overwritten as far as the parse
        // gets) and flushes either way.
        applyDnsPayload(ctx.packet->payload(), ctx.flow->proto() == 6, *rec);
        return kFlush;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const DnsRecord* rec = ctx.ext<DnsRecord>();
        return rec != nullptr ? std::string_view{"dns"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const DnsRecord* rec = ctx.ext<DnsRecord>();
        if (rec == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->ttl = rec->ttl;
        f->answers = rec->answers;
        f->qtype = rec->qtype;
        f->qclass = rec->qclass;
        f->rdataLen = rec->rdataLen;
        f->ednsSize = rec->ednsSize;
        f->id = rec->id;
        f->rcode = rec->rcode;
        f->dnssecOk = rec->dnssecOk;
        f->qname = out.appendString({rec->qname, std::strlen(rec->qname)});
        f->rdata = out.appendBytes(rec->rdata, rec->rdataLen);
        out.commit();
    }

private:
    static bool onPort53(const FlowContext& ctx) noexcept {
        const std::uint8_t proto = ctx.flow->proto();
        return (proto == 6 || proto == 17) &&
               (ctx.flow->srcPort() == kDnsPort || ctx.flow->dstPort() == kDnsPort);
    }

    // The flow has no record yet: parse into a fresh one, keep it only if the message parsed.
    static bool tryAttach(FlowContext& ctx) noexcept {
        DnsRecord* rec = ctx.attachExt<DnsRecord>();
        if (rec == nullptr) return false;  // pool exhausted (counted by the table)
        if (applyDnsPayload(ctx.packet->payload(), ctx.flow->proto() == 6, *rec)) return true;
        ctx.detachExt();
        return false;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, DnsPlugin,
                         {.name = "dns",
                          .summary = "DNS id, rcode, answer count, first question and answer, "
                                     "EDNS; one record per message (port 53)"});

}  // namespace rowprobe::dns
