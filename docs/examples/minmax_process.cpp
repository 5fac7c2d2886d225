// The example process plugin of docs/writing-a-process-plugin.md: the smallest and largest IP
// packet of each direction. Built as a shared object against the installed SDK headers only
// and loaded with   rowprobe -p '/path/librowprobe-process-minmax.so'   (option: `min-packets`).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <rowprobe/process.hpp>
#include <rowprobe/process_plugin_library.hpp>

namespace {

using namespace rowprobe;

constexpr OptionSpec kOptions[] = {
    {.name = "min-packets",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "export the fields only for flows with at least this many packets",
     .min = 1,
     .max = 1000000},
};

struct Fields {  // the fixed part of one exported instance
    std::uint16_t min;
    std::uint16_t max;
    std::uint16_t minRev;
    std::uint16_t maxRev;
};

constexpr FieldSpec field(std::string_view name, std::uint16_t offset, std::string_view unirec) {
    return {.name = name,
            .description = "IP length bound per direction",
            .type = FieldType::Unsigned16,
            .origin = FieldOrigin::Plugin,
            .offset = offset,
            .unirec = {unirec, "uint16"}};
}

constexpr FieldSpec kFields[] = {
    field("ip_len_min", offsetof(Fields, min), "IP_LEN_MIN"),
    field("ip_len_max", offsetof(Fields, max), "IP_LEN_MAX"),
    field("ip_len_min_rev", offsetof(Fields, minRev), "IP_LEN_MIN_REV"),
    field("ip_len_max_rev", offsetof(Fields, maxRev), "IP_LEN_MAX_REV"),
};

class MinMax final : public ProcessPluginBase<MinMax> {
public:
    struct State {  // tier 1: 8 bytes per flow, zeroed when the flow is created
        std::array<std::uint16_t, 2> min;
        std::array<std::uint16_t, 2> max;
    };

    explicit MinMax(const Options& options)
        : m_minPackets(static_cast<std::uint64_t>(options.getInt("min-packets"))) {}

    std::string_view name() const noexcept override { return "minmax"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return add(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return add(ctx); }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        if (ctx.flow->totalPackets() < m_minPackets) return;  // no instance
        const State& s = ctx.stateAs<State>();
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        *f = {s.min[0], s.max[0], s.min[1], s.max[1]};
        out.commit();
    }

private:
    static HookResult add(FlowContext& ctx) noexcept {
        State& s = ctx.stateAs<State>();
        const std::size_t d = ctx.forward ? 0 : 1;
        const auto len =
            static_cast<std::uint16_t>(std::min<std::uint32_t>(ctx.packet->ipLen, 65535));
        s.min[d] = s.min[d] == 0 ? len : std::min(s.min[d], len);
        s.max[d] = std::max(s.max[d], len);
        return kContinue;
    }
    std::uint64_t m_minPackets;
};

}  // namespace

ROWPROBE_EXPORT_PROCESS_PLUGIN(MinMax, "minmax", "smallest and largest IP packet per direction",
                               kOptions)
