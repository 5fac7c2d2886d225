// `phists`: per direction, log2 histograms of payload sizes and inter-packet times (ms), 8 bins
// each (0-15, 16-31, ..., 512-1023, >= 1024) — ipfixprobe's PHISTS (fields:
// README.md). Tier-1 state only (136 bytes per flow); saturating u32 counters.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::process {

namespace {

constexpr std::size_t kBins = 8;
constexpr std::uint8_t kSyn = 0x02;

constexpr OptionSpec kOptions[] = {
    {.name = "includezeroes",
     .shortName = "i",
     .type = OptionType::Flag,
     .defaultValue = "false",
     .help = "also count packets without payload (default: skipped)"},
};

struct Fields {
    VarRef sizesRef;
    VarRef iptRef;
    VarRef sizesRevRef;
    VarRef iptRevRef;
};

// Histograms: eight uint32 bins, CESNET elements 1060-1063 inside basicLists.
constexpr FieldSpec histogram(std::string_view name, std::string_view description,
                              std::uint16_t offset, std::string_view unirec,
                              std::uint16_t id) noexcept {
    return arrayField(name, description, offset, {unirec, "uint32*"}, FieldType::Unsigned32,
                      {kPenCesnet, id, 4});
}

// IPFIX order as ipfixprobe: S sizes, S ipt, D sizes, D ipt.
constexpr FieldSpec kFields[] = {
    histogram("phists_sizes", "src -> dst payload size histogram (log2 bins from 16 B)",
              offsetof(Fields, sizesRef), "S_PHISTS_SIZES", 1060),
    histogram("phists_ipt", "src -> dst inter-packet time histogram (log2 bins from 16 ms)",
              offsetof(Fields, iptRef), "S_PHISTS_IPT", 1061),
    histogram("phists_sizes_rev", "dst -> src payload size histogram",
              offsetof(Fields, sizesRevRef), "D_PHISTS_SIZES", 1062),
    histogram("phists_ipt_rev", "dst -> src inter-packet time histogram",
              offsetof(Fields, iptRevRef), "D_PHISTS_IPT", 1063),
};

void bump(std::array<std::uint32_t, kBins>& h, std::uint32_t value) noexcept {
    std::size_t bin = kBins - 1;
    if (value < 16) {
        bin = 0;
    } else if (value <= 1023) {
        bin = static_cast<std::size_t>(std::bit_width(value) - 1) - 3;  // 16..31 → 1
    }
    if (h[bin] != std::numeric_limits<std::uint32_t>::max()) ++h[bin];
}

class Phists final : public ProcessPluginBase<Phists> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    struct State {
        std::array<std::array<std::uint32_t, kBins>, 2> sizes;
        std::array<std::array<std::uint32_t, kBins>, 2> ipt;
        std::array<std::uint32_t, 2> lastMs;  ///< u32 as in ipfixprobe (differences still exact)
        bool dropped;
    };

    explicit Phists(const Options& options) : m_zeroes(options.getFlag("includezeroes")) {}

    std::string_view name() const noexcept override { return "phists"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return add(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return add(ctx); }
    void preExport(FlowContext& ctx) const noexcept {
        const FlowView& f = *ctx.flow;
        if (f.totalPackets() <= 1 && ((f.tcpFlags[0] | f.tcpFlags[1]) & kSyn) != 0)
            ctx.stateAs<State>().dropped = true;
    }
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& s = ctx.stateAs<State>();
        if (s.dropped) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->sizesRef = out.append(std::span<const std::uint32_t>(s.sizes[0]));
        f->iptRef = out.append(std::span<const std::uint32_t>(s.ipt[0]));
        f->sizesRevRef = out.append(std::span<const std::uint32_t>(s.sizes[1]));
        f->iptRevRef = out.append(std::span<const std::uint32_t>(s.ipt[1]));
        out.commit();
    }

private:
    HookResult add(FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (p.payloadWireLen == 0 && !m_zeroes) return kContinue;
        State& s = ctx.stateAs<State>();
        const std::size_t dir = ctx.forward ? 0 : 1;
        bump(s.sizes[dir], p.payloadWireLen);
        // ipfixprobe: ms since the epoch, the previous one kept in 32 bits; 0 = none yet.
        const auto ms = static_cast<std::int64_t>(p.ts / 1'000'000);
        if (s.lastMs[dir] == 0) {
            s.lastMs[dir] = static_cast<std::uint32_t>(ms);
            return kContinue;
        }
        std::int64_t diff = ms - static_cast<std::int64_t>(s.lastMs[dir]);
        s.lastMs[dir] = static_cast<std::uint32_t>(ms);
        if (diff < 0) diff = 0;
        const auto ipt = static_cast<std::int32_t>(static_cast<std::uint32_t>(diff));
        if (ipt != -1) bump(s.ipt[dir], static_cast<std::uint32_t>(ipt));
        return kContinue;
    }

    bool m_zeroes;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, Phists,
                         {.name = "phists",
                          .summary = "log2 histograms of payload sizes and inter-packet times per "
                                     "direction (ipfixprobe PHISTS)",
                          .options = kOptions});

}  // namespace rowprobe::process
