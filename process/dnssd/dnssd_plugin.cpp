// The "dnssd" process plugin: DNS service discovery over multicast DNS (port 5353) — the
// service names a host asks for and the services (SRV port and target, HINFO, TXT) it
// announces. Every message of a flow to or from port 5353 adds to one record per flow.
// Option `txt`: also export TXT strings (`txt=all`, or `txt=FILE` with a whitelist of services
// and keys). Semantics: dnssd_record.hpp.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "process/dnssd/dnssd_record.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::dns {

namespace {

constexpr std::uint16_t kMdnsPort = 5353;

constexpr OptionSpec kOptions[] = {
    {.name = "txt",
     .shortName = "t",
     .type = OptionType::String,
     .help = "export TXT records: 'all', or a file of lines 'service.domain,key1,key2,...' "
             "naming the services and keys to export"},
};

struct Fields {
    VarRef queries;
    VarRef responses;
};

constexpr FieldSpec kFields[] = {
    {.name = "dnssd_queries",
     .description = "names asked for, each followed by ';'",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, queries),
     .ipfix = {kPenCesnet, 826, kIpfixVarLen},
     .unirec = {"DNSSD_QUERIES", "string"}},
    {.name = "dnssd_responses",
     .description = "announced services, 'name;srv port;srv target;cpu:os;txt;' each",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, responses),
     .ipfix = {kPenCesnet, 827, kIpfixVarLen},
     .unirec = {"DNSSD_RESPONSES", "string"}},
};

class DnssdPlugin final : public ProcessPluginBase<DnssdPlugin> {
public:
    using Ext = DnssdRecord;

    explicit DnssdPlugin(const Options& options) {
        // mDNS flows are few; a worker's pool of 4096 records (about 15 MB reserved).
        m_extPoolRecords = 4096;
        if (!options.explicitlySet("txt")) return;
        m_options.txt = true;
        const std::string value = options.getString("txt");
        if (value == "all") return;
        std::ifstream in(value);
        if (!in) {
            options.fail("txt", "cannot read the TXT whitelist '" + value + "': " +
                                    std::strerror(errno) + " (give 'all' or a readable file)");
        }
        std::ostringstream content;
        content << in.rdbuf();
        m_whitelist = parseDnssdTxtConfig(content.str());
        m_options.filtered = true;
        m_options.whitelist = m_whitelist;
    }
    DnssdPlugin(const DnssdPlugin&) = delete;
    DnssdPlugin& operator=(const DnssdPlugin&) = delete;

    std::string_view name() const noexcept override { return "dnssd"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const DnssdRecord* rec = ctx.ext<DnssdRecord>();
        return rec != nullptr ? std::string_view{"dns"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const DnssdRecord* r = ctx.ext<DnssdRecord>();
        if (r == nullptr) return;
        char queries[kDnssdArenaBytes + kDnssdMaxQueries];
        char responses[kDnssdArenaBytes + kDnssdMaxResponses * 24];
        const std::size_t q = dnssdQueriesText(*r, queries);
        const std::size_t a = dnssdResponsesText(*r, responses);
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->queries = out.appendString({queries, q});
        f->responses = out.appendString({responses, a});
        out.commit();
    }

private:
    HookResult onPacket(FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        // A flow's ports never change: a flow not on port 5353 is never looked at again.
        if (p.srcPort() != kMdnsPort && p.dstPort() != kMdnsPort) return kDone;
        const bool tcp = p.key.proto == 6;
        if (DnssdRecord* r = ctx.ext<DnssdRecord>(); r != nullptr) {
            applyDnssdMessage(p.payload(), tcp, m_options, *r);
            return kContinue;
        }
        DnssdRecord* r = ctx.attachExt<DnssdRecord>();
        if (r == nullptr) return kContinue;  // pool exhausted (counted by the table)
        if (!applyDnssdMessage(p.payload(), tcp, m_options, *r)) ctx.detachExt();
        return kContinue;
    }

    DnssdOptions m_options;
    std::vector<DnssdTxtService> m_whitelist;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, DnssdPlugin,
                         {.name = "dnssd",
                          .summary = "DNS-SD over mDNS: service queries and announced services",
                          .options = kOptions});

}  // namespace rowprobe::dns
