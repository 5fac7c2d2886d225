// The "ndpi" process plugin: nDPI 4.2's application label of every flow (docs: README.md here).
//
// Per worker a DetectionModule (ctx.worker: the SDK's per-worker state); per flow a FlowSlot in
// the tier-2 pool holding nDPI's flow struct. Packets are given to nDPI in arrival order from
// the flow's first packet on, up to `packets` of them, until nDPI has a label and nothing more
// to dissect (ndpiReader's rule); a flow that reaches the cap undetected is given up at once,
// one that ends undetected is given up at export (`guess`: with nDPI's guess by port and
// address, as ndpiReader does by default). The label and what nDPI extracted are written at
// export (ndpi_record.hpp), then nDPI's heap members of the flow are freed (release).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "process/ndpi/ndpi_module.hpp"
#include "process/ndpi/ndpi_record.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::ndpi {

namespace {

constexpr std::string_view kYesNo[] = {"yes", "no"};
constexpr OptionSpec kOptions[] = {
    {.name = "packets",
     .shortName = "n",
     .type = OptionType::Int,
     .defaultValue = "32",
     .help = "packets of a flow given to nDPI at most (1-65535); a flow still undetected then is "
             "given up",
     .min = 1,
     .max = 65535},
    {.name = "guess",
     .shortName = "g",
     .type = OptionType::Choice,
     .defaultValue = "yes",
     .help = "yes: an undetected flow gets nDPI's guess by port and address when it is given up "
             "(as ndpiReader by default); no: it stays Unknown",
     .choices = kYesNo},
    {
        .name = "protos",
        .shortName = "p",
        .type = OptionType::String,
        .help = "nDPI protocols file (ndpiReader -p): custom protocols by host, port, IP",
    },
    {
        .name = "categories",
        .shortName = "c",
        .type = OptionType::String,
        .help = "nDPI categories file (ndpiReader -c)",
    },
    {
        .name = "risky-domains",
        .shortName = "r",
        .type = OptionType::String,
        .help = "nDPI risky domains file (ndpiReader -r)",
    },
    {
        .name = "ja3",
        .shortName = "j",
        .type = OptionType::String,
        .help = "malicious JA3 fingerprints file (ndpiReader -j)",
    },
    {
        .name = "sha1",
        .shortName = "S",
        .type = OptionType::String,
        .help = "malicious certificate SHA-1 fingerprints file (ndpiReader -S)",
    },
    {.name = "pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "IPFIX: number the fields that have no standard or ntop element 1, 2, ... under this "
             "Private Enterprise Number (yours); 0 leaves them out of IPFIX",
     .min = 0,
     .max = 4294967295.0},
};

class NdpiPlugin final : public ProcessPluginBase<NdpiPlugin> {
public:
    using Ext = FlowSlot;
    using Worker = DetectionModule;

    explicit NdpiPlugin(const Options& options)
        : m_cap(static_cast<std::uint16_t>(options.getInt("packets"))),
          m_guess(options.getString("guess") == "yes") {
        m_config.protos = options.getString("protos");
        m_config.categories = options.getString("categories");
        m_config.riskyDomains = options.getString("risky-domains");
        m_config.ja3 = options.getString("ja3");
        m_config.sha1 = options.getString("sha1");
        const auto base = ndpiFields();
        m_fields.assign(base.begin(), base.end());
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        if (pen != 0) {
            for (std::size_t i = 0; i < m_fields.size(); ++i) {
                const std::uint16_t id = operatorElementId(i);
                if (id == 0) continue;
                const bool fixed =
                    m_fields[i].type != FieldType::String && m_fields[i].type != FieldType::Binary;
                m_fields[i].ipfix = {
                    pen, id,
                    fixed ? static_cast<std::uint16_t>(fieldTypeSize(m_fields[i].type))
                          : kIpfixVarLen};
            }
        }
        // Checked now, so that a missing file stops start-up before any table exists; a file
        // nDPI refuses stops it when the first table makes its module (also exit code 2).
        checkConfigFiles(m_config);
        installHeapHooks();
    }

    std::string_view name() const noexcept override { return "ndpi"; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }

    std::unique_ptr<Worker> createWorker() const { return std::make_unique<Worker>(m_config); }

    void workerStats(const Worker& w, CacheStats& out) const noexcept {
        const HeapCounters& f = w.flowHeap();
        out.pluginHeapAllocations += f.allocations.load(std::memory_order_relaxed);
        out.pluginHeapFrees += f.frees.load(std::memory_order_relaxed);
        out.pluginHeapAllocatedBytes += f.allocatedBytes.load(std::memory_order_relaxed);
        out.pluginHeapFreedBytes += f.freedBytes.load(std::memory_order_relaxed);
        out.pluginHeapRetainedBytes += f.retainedBytes.load(std::memory_order_relaxed);
        out.pluginHeapRetainedAllocations += f.retainedAllocations.load(std::memory_order_relaxed);
        out.pluginModuleBytes +=
            w.moduleHeap().liveBytes() + f.retainedBytes.load(std::memory_order_relaxed);
    }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        FlowSlot* s = ctx.attachExt<FlowSlot>();
        if (s == nullptr) return kDone;  // pool exhausted (counted): exported without a label
        return feed(ctx, *s);
    }

    HookResult postUpdate(FlowContext& ctx) const noexcept {
        FlowSlot* s = ctx.ext<FlowSlot>();
        if (s == nullptr) return kDone;
        return feed(ctx, *s);
    }

    // The Zeek service name of the label (rowprobe/process.hpp, FlowServices), for conn's
    // `service`: the flow is given up here when still undetected, so the name is final.
    std::string_view service(FlowContext& ctx) const noexcept {
        FlowSlot* s = ctx.ext<FlowSlot>();
        if (s == nullptr || ctx.worker == nullptr) return {};
        if (!s->done) ctx.workerAs<Worker>().giveUp(*s, m_guess);
        return zeekService(s->proto, s->flow.confidence);
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        FlowSlot* s = ctx.ext<FlowSlot>();
        if (s == nullptr || ctx.worker == nullptr) return;
        Worker& w = ctx.workerAs<Worker>();
        if (!s->done) w.giveUp(*s, m_guess);
        writeInstance(w, *s, out);
    }

    void release(FlowContext& ctx) const noexcept {
        FlowSlot* s = ctx.ext<FlowSlot>();
        if (s == nullptr || ctx.worker == nullptr) return;
        ctx.workerAs<Worker>().release(*s);
    }

private:
    HookResult feed(FlowContext& ctx, FlowSlot& s) const noexcept {
        if (s.done) return kDone;
        const ParsedPacket& p = *ctx.packet;
        if (p.frame == nullptr || p.l3Offset >= p.capLen) return kContinue;
        NdpiPacket ip{};
        const std::span<const std::uint8_t> fromIp{p.frame + p.l3Offset,
                                                   static_cast<std::size_t>(p.capLen - p.l3Offset)};
        if (ipPacketForNdpi(fromIp, p.frag.offset, ip) != Skip::None) return kContinue;
        return ctx.workerAs<Worker>().step(s, ip, p.ts, m_cap, m_guess) ? kDone : kContinue;
    }

    ModuleConfig m_config;
    std::vector<FieldSpec> m_fields;
    std::uint16_t m_cap;
    bool m_guess;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, NdpiPlugin,
                         {.name = "ndpi",
                          .summary = "application label of nDPI 4.2 (ndpiReader's), its category, "
                                     "confidence, risks and what it extracted",
                          .options = kOptions});

}  // namespace rowprobe::ndpi
