// The "tcpperf" process plugin: TCP health per connection (Tstat's log_tcp_complete view, as
// DPDKStat exports it): handshake RTTs, RTT samples, retransmissions, out-of-order segments,
// duplicate ACKs, zero windows, MSS and window scale. Every TCP packet goes through
// tcpperfUpdate (tcpperf_analysis.hpp) on the tier-1 state; non-TCP flows are dropped at
// creation (kDone) and get no instance. Fields and definitions: README.md.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "process/tcpperf/tcpperf_analysis.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::tcpperf {

namespace {

constexpr std::uint8_t kProtoTcp = 6;
constexpr std::uint64_t kWindowScaleOptionBit = std::uint64_t{1} << 4;  // tcpOptions, kind 3
constexpr std::size_t kTcpFixedHeader = 20;

constexpr OptionSpec kOptions[] = {
    {.name = "pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "your Private Enterprise Number: the fields without an IANA element go to IPFIX as "
             "elements first-id, first-id+1, ... of it; 0: they are left out of IPFIX",
     .min = 0,
     .max = 4294967295.0},
    {.name = "first-id",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "element id of the first field under pen= (the others follow in the README's order)",
     .min = 1,
     .max = 32746},
};

struct Fields {
    std::uint32_t rttSyn;
    std::uint32_t rttSynAck;
    std::array<std::uint32_t, 2> rttMin;
    std::array<std::uint32_t, 2> rttAvg;
    std::array<std::uint32_t, 2> rttMax;
    std::array<std::uint32_t, 2> rttCount;
    std::array<std::uint32_t, 2> retxPkts;
    std::array<std::uint32_t, 2> retxBytes;
    std::array<std::uint32_t, 2> oooPkts;
    std::array<std::uint32_t, 2> dupAcks;
    std::array<std::uint32_t, 2> zeroWindows;
    std::array<std::uint16_t, 2> mss;
    std::array<std::uint8_t, 2> wscale;
};

using enum FieldDirection;

constexpr FieldSpec u32(std::string_view name, std::string_view description, std::size_t offset,
                        FieldDirection direction, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::Unsigned32,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .direction = direction,
            .unirec = {unirec, "uint32"}};
}

constexpr std::size_t kRev32 = sizeof(std::uint32_t);

// README.md's order; under pen= the ids follow it (the window scale has IANA's element).
constexpr std::array<FieldSpec, 22> kFields = {{
    u32("tcpperf_rtt_syn_us", "handshake: SYN -> SYN-ACK at the probe (us; 0 = not seen)",
        offsetof(Fields, rttSyn), None, "TCPPERF_RTT_SYN"),
    u32("tcpperf_rtt_synack_us", "handshake: SYN-ACK -> the client's ACK at the probe (us)",
        offsetof(Fields, rttSynAck), None, "TCPPERF_RTT_SYNACK"),
    u32("tcpperf_rtt_min_us", "smallest RTT sample of src -> dst data (us)",
        offsetof(Fields, rttMin), Forward, "TCPPERF_RTT_MIN"),
    u32("tcpperf_rtt_min_us_rev", "smallest RTT sample of dst -> src data (us)",
        offsetof(Fields, rttMin) + kRev32, Reverse, "TCPPERF_RTT_MIN_REV"),
    u32("tcpperf_rtt_avg_us", "mean RTT sample of src -> dst data (us)", offsetof(Fields, rttAvg),
        Forward, "TCPPERF_RTT_AVG"),
    u32("tcpperf_rtt_avg_us_rev", "mean RTT sample of dst -> src data (us)",
        offsetof(Fields, rttAvg) + kRev32, Reverse, "TCPPERF_RTT_AVG_REV"),
    u32("tcpperf_rtt_max_us", "largest RTT sample of src -> dst data (us)",
        offsetof(Fields, rttMax), Forward, "TCPPERF_RTT_MAX"),
    u32("tcpperf_rtt_max_us_rev", "largest RTT sample of dst -> src data (us)",
        offsetof(Fields, rttMax) + kRev32, Reverse, "TCPPERF_RTT_MAX_REV"),
    u32("tcpperf_rtt_cnt", "RTT samples of src -> dst data", offsetof(Fields, rttCount), Forward,
        "TCPPERF_RTT_CNT"),
    u32("tcpperf_rtt_cnt_rev", "RTT samples of dst -> src data",
        offsetof(Fields, rttCount) + kRev32, Reverse, "TCPPERF_RTT_CNT_REV"),
    u32("tcpperf_retx_pkts", "retransmitted segments src -> dst", offsetof(Fields, retxPkts),
        Forward, "TCPPERF_RETX_PKTS"),
    u32("tcpperf_retx_pkts_rev", "retransmitted segments dst -> src",
        offsetof(Fields, retxPkts) + kRev32, Reverse, "TCPPERF_RETX_PKTS_REV"),
    u32("tcpperf_retx_bytes", "payload bytes of the retransmitted segments src -> dst",
        offsetof(Fields, retxBytes), Forward, "TCPPERF_RETX_BYTES"),
    u32("tcpperf_retx_bytes_rev", "payload bytes of the retransmitted segments dst -> src",
        offsetof(Fields, retxBytes) + kRev32, Reverse, "TCPPERF_RETX_BYTES_REV"),
    u32("tcpperf_ooo_pkts", "out-of-order (reordered) segments src -> dst",
        offsetof(Fields, oooPkts), Forward, "TCPPERF_OOO_PKTS"),
    u32("tcpperf_ooo_pkts_rev", "out-of-order (reordered) segments dst -> src",
        offsetof(Fields, oooPkts) + kRev32, Reverse, "TCPPERF_OOO_PKTS_REV"),
    u32("tcpperf_dup_acks", "duplicate ACKs src -> dst", offsetof(Fields, dupAcks), Forward,
        "TCPPERF_DUP_ACKS"),
    u32("tcpperf_dup_acks_rev", "duplicate ACKs dst -> src", offsetof(Fields, dupAcks) + kRev32,
        Reverse, "TCPPERF_DUP_ACKS_REV"),
    u32("tcpperf_zero_win", "segments src -> dst announcing a zero window",
        offsetof(Fields, zeroWindows), Forward, "TCPPERF_ZERO_WIN"),
    u32("tcpperf_zero_win_rev", "segments dst -> src announcing a zero window",
        offsetof(Fields, zeroWindows) + kRev32, Reverse, "TCPPERF_ZERO_WIN_REV"),
    {.name = "tcpperf_mss",
     .description = "MSS option of the src -> dst SYN (0 = none)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, mss),
     .direction = Forward,
     .unirec = {"TCPPERF_MSS", "uint16"}},
    {.name = "tcpperf_mss_rev",
     .description = "MSS option of the dst -> src SYN (0 = none)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, mss) + sizeof(std::uint16_t),
     .direction = Reverse,
     .unirec = {"TCPPERF_MSS_REV", "uint16"}},
}};

constexpr std::array<FieldSpec, 2> kWindowScaleFields = {{
    {.name = "tcpperf_wscale",
     .description = "window-scale shift of the src -> dst SYN (255 = no option)",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, wscale),
     .direction = Forward,
     .ipfix = {kPenIana, 238, 1},
     .unirec = {"TCPPERF_WSCALE", "uint8"}},
    {.name = "tcpperf_wscale_rev",
     .description = "window-scale shift of the dst -> src SYN (255 = no option)",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, wscale) + 1,
     .direction = Reverse,
     .ipfix = {kPenReverse, 238, 1},
     .unirec = {"TCPPERF_WSCALE_REV", "uint8"}},
}};

constexpr std::size_t kFieldCount = kFields.size() + kWindowScaleFields.size();

class TcpperfPlugin final : public ProcessPluginBase<TcpperfPlugin> {
public:
    using State = TcpPerfState;

    explicit TcpperfPlugin(const Options& options) {
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        const auto first = static_cast<std::uint16_t>(options.getInt("first-id"));
        std::size_t i = 0;
        for (FieldSpec f : kFields) {
            if (pen != 0) {
                const std::uint16_t length = f.type == FieldType::Unsigned16 ? 2 : 4;
                f.ipfix = {pen, static_cast<std::uint16_t>(first + i), length};
            }
            m_fields[i++] = f;
        }
        for (const FieldSpec& f : kWindowScaleFields) m_fields[i++] = f;
    }
    std::string_view name() const noexcept override { return "tcpperf"; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        if (ctx.flow->proto() != kProtoTcp) return kDone;
        onPacket(ctx);
        return kContinue;
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        onPacket(ctx);
        return kContinue;
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        if (ctx.flow->proto() != kProtoTcp) return;
        const State& s = ctx.stateAs<State>();
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->rttSyn = s.rttSynUs;
        f->rttSynAck = s.rttSynAckUs;
        for (std::size_t d = 0; d < 2; ++d) {
            const TcpPerfDir& x = s.dir[d];
            f->rttMin[d] = x.rttMinUs;
            f->rttAvg[d] = rttMeanUs(x);
            f->rttMax[d] = x.rttMaxUs;
            f->rttCount[d] = x.rttCount;
            f->retxPkts[d] = x.retxPkts;
            f->retxBytes[d] = x.retxBytes;
            f->oooPkts[d] = x.oooPkts;
            f->dupAcks[d] = x.dupAcks;
            f->zeroWindows[d] = x.zeroWindows;
            f->mss[d] = x.mss;
            f->wscale[d] = announcedWindowScale(x);
        }
        out.commit();
    }

private:
    static void onPacket(FlowContext& ctx) noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (!p.hasPorts || p.payloadOffset < p.l4Offset + kTcpFixedHeader) return;
        TcpSegment seg;
        seg.tsNs = p.ts;
        seg.seq = p.tcpSeq;
        seg.ack = p.tcpAck;
        seg.len = p.payloadWireLen;
        seg.window = p.tcpWindow;
        seg.flags = p.tcpFlags;
        seg.dir = ctx.forward ? 0 : 1;
        if ((p.tcpFlags & kSyn) != 0) {
            seg.mss = p.tcpMss;
            if ((p.tcpOptions & kWindowScaleOptionBit) != 0 && p.frame != nullptr &&
                p.payloadOffset <= p.capLen) {
                const std::size_t start = p.l4Offset + kTcpFixedHeader;
                std::uint16_t mss = 0;
                parseTcpOptions({p.frame + start, p.payloadOffset - start}, mss, seg.wscale);
            }
        }
        tcpperfUpdate(ctx.stateAs<State>(), seg);
    }

    std::array<FieldSpec, kFieldCount> m_fields{};
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, TcpperfPlugin,
                         {.name = "tcpperf",
                          .summary = "TCP health per direction (Tstat's view): handshake and "
                                     "data RTTs, retransmissions, out-of-order, duplicate ACKs, "
                                     "zero windows, MSS, window scale",
                          .options = kOptions});

}  // namespace rowprobe::tcpperf
