// `bstats`: per direction up to 15 bursts — runs of >= 3 packets with payload whose gaps are
// under 1 s — with packets, payload bytes on the wire, start and stop time; ipfixprobe's
// BSTATS (fields: README.md). Per flow: a tier-2 record (720 bytes) taken at the
// flow's first packet; packets are taken before they are counted (preUpdate), as ipfixprobe.
#include <array>
#include <cstddef>
#include <cstdint>

#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::process {

namespace {

constexpr std::size_t kMaxBursts = 15;       // BSTATS_MAXELENCOUNT
constexpr std::uint32_t kMinPackets = 3;     // MINIMAL_PACKETS_IN_BURST
constexpr TimeNs kMaxGap = 1000 * 1000'000;  // MAXIMAL_INTERPKT_TIME: 1000 ms

struct Fields {
    VarRef packets;
    VarRef bytes;
    VarRef start;
    VarRef stop;
    VarRef packetsRev;
    VarRef bytesRev;
    VarRef startRev;
    VarRef stopRev;
};

// Burst arrays: CESNET elements 1050-1057 inside basicLists, as ipfixprobe.
constexpr FieldSpec burstArray(std::string_view name, std::string_view description,
                               std::uint16_t offset, std::string_view unirec,
                               std::string_view unirecType, FieldType element, std::uint16_t id,
                               std::uint16_t length) noexcept {
    return arrayField(name, description, offset, {unirec, unirecType}, element,
                      {kPenCesnet, id, length});
}

constexpr FieldSpec kFields[] = {
    burstArray("burst_packets", "src -> dst packets per burst", offsetof(Fields, packets),
               "SBI_BRST_PACKETS", "uint32*", FieldType::Unsigned32, 1050, 4),
    burstArray("burst_bytes", "src -> dst payload bytes per burst", offsetof(Fields, bytes),
               "SBI_BRST_BYTES", "uint32*", FieldType::Unsigned32, 1051, 4),
    burstArray("burst_start", "src -> dst burst start times", offsetof(Fields, start),
               "SBI_BRST_TIME_START", "time*", FieldType::Timestamp, 1052, 8),
    burstArray("burst_stop", "src -> dst burst stop times", offsetof(Fields, stop),
               "SBI_BRST_TIME_STOP", "time*", FieldType::Timestamp, 1053, 8),
    burstArray("burst_packets_rev", "dst -> src packets per burst", offsetof(Fields, packetsRev),
               "DBI_BRST_PACKETS", "uint32*", FieldType::Unsigned32, 1054, 4),
    burstArray("burst_bytes_rev", "dst -> src payload bytes per burst", offsetof(Fields, bytesRev),
               "DBI_BRST_BYTES", "uint32*", FieldType::Unsigned32, 1055, 4),
    burstArray("burst_start_rev", "dst -> src burst start times", offsetof(Fields, startRev),
               "DBI_BRST_TIME_START", "time*", FieldType::Timestamp, 1056, 8),
    burstArray("burst_stop_rev", "dst -> src burst stop times", offsetof(Fields, stopRev),
               "DBI_BRST_TIME_STOP", "time*", FieldType::Timestamp, 1057, 8),
};

class Bstats final : public ProcessPluginBase<Bstats> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    struct Ext {
        std::array<std::array<TimeNs, kMaxBursts>, 2> start;
        std::array<std::array<TimeNs, kMaxBursts>, 2> stop;
        std::array<std::array<std::uint32_t, kMaxBursts>, 2> packets;
        std::array<std::array<std::uint32_t, kMaxBursts>, 2> bytes;
        std::array<std::uint16_t, 2> count;
        std::array<bool, 2> started;
    };

    explicit Bstats(const Options& /*options*/) {}

    std::string_view name() const noexcept override { return "bstats"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.attachExt<Ext>();
        if (e == nullptr) return kDone;
        return add(*e, ctx);
    }
    HookResult preUpdate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return kDone;
        return add(*e, ctx);
    }
    void preExport(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return;
        if (ctx.flow->totalPackets() <= kMinPackets) {
            ctx.detachExt();
            return;
        }
        for (std::size_t d = 0; d < 2; ++d) {  // close the last open burst
            if (e->count[d] < kMaxBursts && e->packets[d][e->count[d]] >= kMinPackets)
                ++e->count[d];
        }
    }
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        VarRef* refs[2][4] = {{&f->packets, &f->bytes, &f->start, &f->stop},
                              {&f->packetsRev, &f->bytesRev, &f->startRev, &f->stopRev}};
        for (std::size_t d = 0; d < 2; ++d) {
            const std::size_t n = e->count[d];
            *refs[d][0] = out.append(std::span<const std::uint32_t>(e->packets[d].data(), n));
            *refs[d][1] = out.append(std::span<const std::uint32_t>(e->bytes[d].data(), n));
            *refs[d][2] = out.append(std::span<const TimeNs>(e->start[d].data(), n));
            *refs[d][3] = out.append(std::span<const TimeNs>(e->stop[d].data(), n));
        }
        out.commit();
    }

private:
    static void begin(Ext& e, std::size_t d, const ParsedPacket& p) noexcept {
        const std::size_t i = e.count[d];
        e.packets[d][i] = 1;
        e.bytes[d][i] = p.payloadWireLen;
        e.start[d][i] = p.ts;
        e.stop[d][i] = p.ts;
    }

    static HookResult add(Ext& e, const FlowContext& ctx) noexcept {
        const ParsedPacket& p = *ctx.packet;
        const std::size_t d = ctx.forward ? 0 : 1;
        if (p.payloadWireLen == 0 || e.count[d] >= kMaxBursts) return kContinue;
        if (!e.started[d]) {
            e.started[d] = true;
            begin(e, d, p);
            return kContinue;
        }
        const std::size_t i = e.count[d];
        // ipfixprobe: timersub(ts, stop) < 1 s (a packet earlier than stop belongs too)
        const bool inBurst = p.ts < e.stop[d][i] || p.ts - e.stop[d][i] < kMaxGap;
        if (inBurst) {
            ++e.packets[d][i];
            e.bytes[d][i] += p.payloadWireLen;
            e.stop[d][i] = p.ts;
            return kContinue;
        }
        if (e.packets[d][i] >= kMinPackets) ++e.count[d];
        if (e.count[d] < kMaxBursts) begin(e, d, p);
        return kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, Bstats,
                         {.name = "bstats",
                          .summary = "packet bursts per direction: packets, bytes, start and stop "
                                     "(ipfixprobe BSTATS)"});

}  // namespace rowprobe::process
