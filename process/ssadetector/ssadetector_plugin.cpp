// The "ssadetector" process plugin: a confidence (0 or 1) that a flow carries TCP handshakes of
// other connections inside it — a tunnel or VPN — from the sizes and timing of its packets
// (ipfixprobe 5.7's ssaDetector, SSA_CONF_LEVEL). Flows of more than 30 packets get an
// instance. Semantics: ssadetector_record.hpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "process/ssadetector/ssadetector_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::ssadetector {

namespace {

struct Fields {
    std::uint8_t confidence;
};

constexpr FieldSpec kFields[] = {
    {.name = "ssa_conf_level",
     .description = "1 when the flow carries SYN/SYN-ACK/ACK-like packet triples (a tunnel)",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, confidence),
     .ipfix = {kPenCesnet, 903, 1},
     .unirec = {"SSA_CONF_LEVEL", "uint8"}},
};

constexpr std::int64_t kNsPerUs = 1000;

class SsaDetectorPlugin final : public ProcessPluginBase<SsaDetectorPlugin> {
public:
    using Ext = SsaRecord;

    explicit SsaDetectorPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "ssadetector"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    // From the 30th packet on (ipfixprobe's post_update: the packet is counted).
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        if (ctx.flow->totalPackets() < kMinPackets) return kContinue;
        SsaRecord* r = ctx.attachExt<SsaRecord>();
        if (r == nullptr) return kDone;  // pool exhausted (counted by the table)
        const auto len = ctx.packet->payload().size();
        ssaUpdate(*r, !ctx.forward, static_cast<std::uint16_t>(std::min<std::size_t>(len, 0xFFFF)),
                  ctx.packet->ts / kNsPerUs);
        return kContinue;
    }

    void preExport(FlowContext& ctx) const noexcept {
        SsaRecord* r = ctx.ext<SsaRecord>();
        if (r == nullptr) return;
        const std::uint64_t packets = ctx.flow->totalPackets();
        if (packets <= kMinPackets) {
            ctx.detachExt();  // ipfixprobe removes the extension of short flows
            return;
        }
        ssaFinalise(*r, packets);
    }

    // A flow flushed by another plugin skips preExport and exports confidence 0, as ipfixprobe.
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const SsaRecord* r = ctx.ext<SsaRecord>();
        if (r == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->confidence = r->confidence;
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, SsaDetectorPlugin,
                         {.name = "ssadetector",
                          .summary = "Confidence that a flow tunnels other TCP connections (SYN, "
                                     "SYN-ACK, ACK-sized packet triples)"});

}  // namespace rowprobe::ssadetector
