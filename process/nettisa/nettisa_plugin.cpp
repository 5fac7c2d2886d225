// The "nettisa" process plugin: NetTiSA time-series statistics of a flow's payload lengths and
// packet times — ipfixprobe 5.7's nettisa plugin (experimental there). Every packet updates the
// tier-1 state; preExport finalises it; one-packet flows get no instance. Semantics and
// arithmetic: nettisa_stats.hpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "process/nettisa/nettisa_stats.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::nettisa {

namespace {

struct Fields {
    float mean;
    float stdev;
    float kurtosis;
    float rootMeanSquare;
    float averageDispersion;
    float meanScaledTime;
    float meanDifftimes;
    float minDifftimes;
    float maxDifftimes;
    float timeDistribution;
    float switchingRatio;
    std::uint16_t min;
    std::uint16_t max;
};

constexpr FieldSpec real(std::string_view name, std::string_view description, std::size_t offset,
                         std::uint16_t id, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::Float32,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = {kPenCesnet, id, 4},
            .unirec = {unirec, "float"}};
}
constexpr FieldSpec u16(std::string_view name, std::string_view description, std::size_t offset,
                        std::uint16_t id, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::Unsigned16,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = {kPenCesnet, id, 2},
            .unirec = {unirec, "uint16"}};
}

// IPFIX order of ipfixprobe's template: MEAN, MIN, MAX, STDEV, KURTOSIS, ROOT_MEAN_SQUARE,
// AVERAGE_DISPERSION, MEAN_SCALED_TIME, MEAN_DIFFTIMES, MIN_DIFFTIMES, MAX_DIFFTIMES,
// TIME_DISTRIBUTION, SWITCHING_RATIO.
constexpr FieldSpec kFields[] = {
    real("nts_mean", "mean payload length", offsetof(Fields, mean), 1020, "NTS_MEAN"),
    u16("nts_min", "smallest payload length", offsetof(Fields, min), 1021, "NTS_MIN"),
    u16("nts_max", "largest payload length", offsetof(Fields, max), 1022, "NTS_MAX"),
    real("nts_stdev", "standard deviation of the payload lengths", offsetof(Fields, stdev), 1023,
         "NTS_STDEV"),
    real("nts_kurtosis", "kurtosis of the payload lengths", offsetof(Fields, kurtosis), 1024,
         "NTS_KURTOSIS"),
    real("nts_root_mean_square", "root mean square of the payload lengths",
         offsetof(Fields, rootMeanSquare), 1025, "NTS_ROOT_MEAN_SQUARE"),
    real("nts_average_dispersion", "mean absolute deviation from the running mean",
         offsetof(Fields, averageDispersion), 1026, "NTS_AVERAGE_DISPERSION"),
    real("nts_mean_scaled_time", "mean packet time since the flow's start (us)",
         offsetof(Fields, meanScaledTime), 1027, "NTS_MEAN_SCALED_TIME"),
    real("nts_mean_difftimes", "mean inter-packet time (us)", offsetof(Fields, meanDifftimes), 1028,
         "NTS_MEAN_DIFFTIMES"),
    real("nts_min_difftimes", "smallest inter-packet time (us; the first packet counts 0)",
         offsetof(Fields, minDifftimes), 1029, "NTS_MIN_DIFFTIMES"),
    real("nts_max_difftimes", "largest inter-packet time (us)", offsetof(Fields, maxDifftimes),
         1030, "NTS_MAX_DIFFTIMES"),
    real("nts_time_distribution", "time distribution (ipfixprobe's formula)",
         offsetof(Fields, timeDistribution), 1031, "NTS_TIME_DISTRIBUTION"),
    real("nts_switching_ratio", "share of packets whose frame length differs from the previous",
         offsetof(Fields, switchingRatio), 1032, "NTS_SWITCHING_RATIO"),
};

constexpr std::uint64_t kNsPerUs = 1000;

class NettisaPlugin final : public ProcessPluginBase<NettisaPlugin> {
public:
    using State = NettisaState;

    explicit NettisaPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "nettisa"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    void preExport(FlowContext& ctx) const noexcept {
        nettisaFinalise(ctx.stateAs<State>(), packets(ctx));
    }

    // A one-packet flow has no instance; a flow flushed by another plugin skips preExport and
    // exports its running sums, as ipfixprobe does.
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& s = ctx.stateAs<State>();
        if (!s.started || packets(ctx) < 2) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->mean = s.mean;
        f->min = s.min;
        f->max = s.max;
        f->stdev = s.stdev;
        f->kurtosis = s.kurtosis;
        f->rootMeanSquare = s.rootMeanSquare;
        f->averageDispersion = s.averageDispersion;
        f->meanScaledTime = s.meanScaledTime;
        f->meanDifftimes = s.meanDifftimes;
        f->minDifftimes = s.minDifftimes;
        f->maxDifftimes = s.maxDifftimes;
        f->timeDistribution = s.timeDistribution;
        f->switchingRatio = s.switchingRatio;
        out.commit();
    }

private:
    static std::uint32_t packets(const FlowContext& ctx) noexcept {
        return static_cast<std::uint32_t>(ctx.flow->totalPackets());
    }

    static HookResult onPacket(FlowContext& ctx) noexcept {
        const ParsedPacket& p = *ctx.packet;
        // ipfixprobe's packet fields are 16-bit.
        const auto payload =
            static_cast<std::uint16_t>(std::min<std::uint32_t>(p.payloadWireLen, 0xFFFF));
        const auto frame = static_cast<std::uint16_t>(std::min<std::uint32_t>(p.wireLen, 0xFFFF));
        nettisaUpdate(ctx.stateAs<State>(), payload, frame,
                      static_cast<std::uint64_t>(p.ts) / kNsPerUs,
                      static_cast<std::uint64_t>(ctx.flow->timeFirst) / kNsPerUs, packets(ctx));
        return kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, NettisaPlugin,
                         {.name = "nettisa",
                          .summary = "NetTiSA time-series statistics of payload lengths and "
                                     "packet times"});

}  // namespace rowprobe::nettisa
