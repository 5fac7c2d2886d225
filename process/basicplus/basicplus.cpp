// `basicplus`: per direction the highest IP TTL, the IP flags, TCP window, MSS and options of
// the direction's first packet (options OR-ed over all its packets), and the IP length of an
// opening SYN — ipfixprobe's BASICPLUS (fields: README.md). Tier-1 state only.
//
// MSS (A7): by default the MSS option's real 16-bit value (RFC 9293). ipfixprobe reads 4 bytes
// from the 2-byte option (MSS << 16 | the next two option bytes); `mss=ipfixprobe` exports that.
#include <array>
#include <cstddef>
#include <cstdint>

#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::process {

namespace {

constexpr std::string_view kMssModes[] = {"rfc", "ipfixprobe"};

constexpr OptionSpec kOptions[] = {
    {.name = "mss",
     .type = OptionType::Choice,
     .defaultValue = "rfc",
     .help = "TCP MSS: the option's 16-bit value (rfc), or ipfixprobe 5.7's 32-bit reading of "
             "4 bytes from it (ipfixprobe)",
     .choices = kMssModes},
};

struct Fields {
    std::uint64_t opt;
    std::uint64_t optRev;
    std::uint32_t mss;
    std::uint32_t mssRev;
    std::uint16_t win;
    std::uint16_t winRev;
    std::uint16_t synSize;
    std::uint8_t ttl;
    std::uint8_t ttlRev;
    std::uint8_t flags;
    std::uint8_t flagsRev;
};

constexpr FieldSpec field(std::string_view name, std::string_view description, FieldType type,
                          std::uint16_t offset, FieldDirection direction, IpfixElement ipfix,
                          std::string_view unirec, std::string_view unirecType) {
    return {.name = name,
            .description = description,
            .type = type,
            .origin = FieldOrigin::Plugin,
            .offset = offset,
            .direction = direction,
            .ipfix = ipfix,
            .unirec = {unirec, unirecType}};
}

using enum FieldDirection;
// IPFIX order as ipfixprobe's template: TTL, TTL_REV, FLG, FLG_REV, WIN, WIN_REV, OPT, OPT_REV,
// MSS, MSS_REV, SYN_SIZE.
constexpr FieldSpec kFields[] = {
    field("ip_ttl", "highest IP TTL src -> dst", FieldType::Unsigned8, offsetof(Fields, ttl),
          Forward, {kPenIana, 192, 1}, "IP_TTL", "uint8"),
    field("ip_ttl_rev", "highest IP TTL dst -> src", FieldType::Unsigned8, offsetof(Fields, ttlRev),
          Reverse, {kPenReverse, 192, 1}, "IP_TTL_REV", "uint8"),
    field("ip_flags", "IP flags of the first packet src -> dst (DF = 2)", FieldType::Unsigned8,
          offsetof(Fields, flags), Forward, {kPenIana, 197, 1}, "IP_FLG", "uint8"),
    field("ip_flags_rev", "IP flags of the first packet dst -> src", FieldType::Unsigned8,
          offsetof(Fields, flagsRev), Reverse, {kPenReverse, 197, 1}, "IP_FLG_REV", "uint8"),
    field("tcp_win", "TCP window of the first packet src -> dst", FieldType::Unsigned16,
          offsetof(Fields, win), Forward, {kPenIana, 186, 2}, "TCP_WIN", "uint16"),
    field("tcp_win_rev", "TCP window of the first packet dst -> src", FieldType::Unsigned16,
          offsetof(Fields, winRev), Reverse, {kPenReverse, 186, 2}, "TCP_WIN_REV", "uint16"),
    field("tcp_options", "TCP options seen src -> dst (IANA tcpOptions bitmap)",
          FieldType::Unsigned64, offsetof(Fields, opt), Forward, {kPenIana, 209, 8}, "TCP_OPT",
          "uint64"),
    field("tcp_options_rev", "TCP options seen dst -> src", FieldType::Unsigned64,
          offsetof(Fields, optRev), Reverse, {kPenReverse, 209, 8}, "TCP_OPT_REV", "uint64"),
    field("tcp_mss", "TCP MSS of the first packet src -> dst", FieldType::Unsigned32,
          offsetof(Fields, mss), Forward, {kPenCesnet, 900, 4}, "TCP_MSS", "uint32"),
    field("tcp_mss_rev", "TCP MSS of the first packet dst -> src", FieldType::Unsigned32,
          offsetof(Fields, mssRev), Reverse, {kPenCesnet, 901, 4}, "TCP_MSS_REV", "uint32"),
    field("tcp_syn_size", "IP length of the first packet when it is a bare SYN",
          FieldType::Unsigned16, offsetof(Fields, synSize), None, {kPenCesnet, 902, 2},
          "TCP_SYN_SIZE", "uint16"),
};

class Basicplus final : public ProcessPluginBase<Basicplus> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    struct State {
        std::array<std::uint64_t, 2> opt;
        std::array<std::uint32_t, 2> mss;
        std::array<std::uint16_t, 2> win;
        std::uint16_t synSize;
        std::array<std::uint8_t, 2> ttl;
        std::array<std::uint8_t, 2> flags;
        bool revFilled;
    };

    explicit Basicplus(const Options& options)
        : m_ipfixprobeMss(options.getString("mss") == "ipfixprobe") {}

    std::string_view name() const noexcept override { return "basicplus"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        State& s = ctx.stateAs<State>();
        s.ttl[0] = p.ttl;
        s.flags[0] = p.ipFlags;
        s.mss[0] = mss(p);
        s.opt[0] = p.tcpOptions;
        s.win[0] = p.tcpWindow;
        if (p.tcpFlags == 0x02) s.synSize = static_cast<std::uint16_t>(p.ipLen);
        return kContinue;
    }
    HookResult preUpdate(FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        State& s = ctx.stateAs<State>();
        const std::size_t d = ctx.forward ? 0 : 1;
        if (s.ttl[d] < p.ttl) s.ttl[d] = p.ttl;
        if (d == 1 && !s.revFilled) {
            s.ttl[1] = p.ttl;
            s.flags[1] = p.ipFlags;
            s.mss[1] = mss(p);
            s.win[1] = p.tcpWindow;
            s.revFilled = true;
        }
        s.opt[d] |= p.tcpOptions;
        return kContinue;
    }
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& s = ctx.stateAs<State>();
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->opt = s.opt[0];
        f->optRev = s.opt[1];
        f->mss = s.mss[0];
        f->mssRev = s.mss[1];
        f->win = s.win[0];
        f->winRev = s.win[1];
        f->synSize = s.synSize;
        f->ttl = s.ttl[0];
        f->ttlRev = s.ttl[1];
        f->flags = s.flags[0];
        f->flagsRev = s.flags[1];
        out.commit();
    }

private:
    std::uint32_t mss(const ParsedPacket& p) const noexcept {
        return m_ipfixprobeMss ? p.tcpMssRaw : p.tcpMss;
    }
    bool m_ipfixprobeMss;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, Basicplus,
                         {.name = "basicplus",
                          .summary = "IP TTL and flags, TCP window, options, MSS and SYN size per "
                                     "direction (ipfixprobe BASICPLUS)",
                          .options = kOptions});

}  // namespace rowprobe::process
