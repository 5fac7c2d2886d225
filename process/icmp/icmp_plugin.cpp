// The "icmp" process plugin: ICMP / ICMPv6 type and code of a flow's first packet as one 16-bit
// value, type << 8 | code (ipfixprobe 5.7's L4_ICMP_TYPE_CODE, IANA icmpTypeCodeIPv4, 32).
// A flow gets the field only when its first packet is ICMP or ICMPv6 with at least the two
// type/code bytes captured. Tier-1 state only.
#include <cstddef>
#include <cstdint>

#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::icmp {

namespace {

struct Fields {
    std::uint16_t typeCode;
};

constexpr FieldSpec kFields[] = {
    {.name = "l4_icmp_type_code",
     .description = "ICMP/ICMPv6 type << 8 | code of the flow's first packet",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, typeCode),
     .ipfix = {kPenIana, 32, 2},
     .unirec = {"L4_ICMP_TYPE_CODE", "uint16"}},
};

constexpr std::uint8_t kProtoIcmp = 1;
constexpr std::uint8_t kProtoIcmpv6 = 58;

class IcmpPlugin final : public ProcessPluginBase<IcmpPlugin> {
public:
    struct State {
        std::uint16_t typeCode;
        bool present;
    };

    explicit IcmpPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "icmp"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    // For ICMP the payload a plugin sees starts at the ICMP header (ipfixprobe's parser rule).
    HookResult postCreate(FlowContext& ctx) const noexcept {
        const std::uint8_t proto = ctx.packet->key.proto;
        const auto payload = ctx.packet->payload();
        if ((proto == kProtoIcmp || proto == kProtoIcmpv6) && payload.size() >= 2) {
            State& s = ctx.stateAs<State>();
            s.typeCode = static_cast<std::uint16_t>(payload[0] << 8 | payload[1]);
            s.present = true;
        }
        return kDone;
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& s = ctx.stateAs<State>();
        if (!s.present) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->typeCode = s.typeCode;
        out.commit();
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, IcmpPlugin,
                         {.name = "icmp",
                          .summary = "ICMP/ICMPv6 type and code of the flow's first packet"});

}  // namespace rowprobe::icmp
