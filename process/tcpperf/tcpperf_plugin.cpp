// The "tcpperf" process plugin: TCP health per connection (Tstat's log_tcp_complete view, as
// DPDKStat exports it): handshake RTTs, RTT samples, retransmissions, out-of-order segments,
// duplicate ACKs, zero windows, MSS and window scale. Every TCP packet goes through
// tcpperfUpdate (tcpperf_analysis.hpp) on a 192-byte tier-2 record from the worker's pool;
// non-TCP flows are dropped at creation (kDone) and get no record and no instance. Fields and
// definitions: README.md.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

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

// The field table. Every metric but the two handshake RTTs is measured per direction: one row
// names the forward field (src -> dst) and the reverse twin follows from it (`_rev` and
// `_REV` appended, "dst -> src" in the description, the value one element further in Fields'
// two-element array), built at compile time, so a metric is declared once.

/// A string literal as a template argument (C++20 class-type template parameter).
template <std::size_t N>
struct Literal {
    std::array<char, N> chars{};
    consteval Literal(const char (&s)[N]) noexcept {  // NOLINT(google-explicit-constructor)
        for (std::size_t i = 0; i < N; ++i) chars[i] = s[i];
    }
    static constexpr std::size_t kLength = N - 1;  ///< without the terminating NUL
};

/// `S` with `Suffix` appended, in static storage.
template <Literal S, Literal Suffix>
inline constexpr auto kJoined = [] {
    std::array<char, S.kLength + Suffix.kLength> out{};
    for (std::size_t i = 0; i < S.kLength; ++i) out[i] = S.chars[i];
    for (std::size_t i = 0; i < Suffix.kLength; ++i) out[S.kLength + i] = Suffix.chars[i];
    return out;
}();

/// `S` with its one "src -> dst" turned into "dst -> src", in static storage.
template <Literal S>
inline constexpr auto kReversed = [] {
    constexpr std::string_view kFwd = "src -> dst";
    std::array<char, S.kLength> out{};
    for (std::size_t i = 0; i < S.kLength; ++i) out[i] = S.chars[i];
    const std::string_view text(S.chars.data(), S.kLength);
    const std::size_t at = text.find(kFwd);
    if (at == std::string_view::npos || text.find(kFwd, at + 1) != std::string_view::npos)
        throw "a per-direction description names \"src -> dst\" exactly once";
    for (std::size_t i = 0; i < 3; ++i) {
        out[at + i] = kFwd[7 + i];
        out[at + 7 + i] = kFwd[i];
    }
    return out;
}();

template <std::size_t N>
constexpr std::string_view view(const std::array<char, N>& a) noexcept {
    return {a.data(), N};
}

constexpr std::uint16_t fieldBytes(FieldType type) noexcept {
    return type == FieldType::Unsigned8 ? 1 : type == FieldType::Unsigned16 ? 2 : 4;
}

constexpr std::string_view unirecType(FieldType type) noexcept {
    return type == FieldType::Unsigned8    ? "uint8"
           : type == FieldType::Unsigned16 ? "uint16"
                                           : "uint32";
}

/// A field measured once per connection.
constexpr FieldSpec connectionField(std::string_view name, std::string_view description,
                                    std::size_t offset, std::string_view unirec) noexcept {
    return {.name = name,
            .description = description,
            .type = FieldType::Unsigned32,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .unirec = {unirec, "uint32"}};
}

/// A metric per direction: its forward field and the reverse twin. `ipfix`: the forward
/// field's element, when it has one of its own (the twin then takes its RFC 5103 reverse).
template <Literal Name, Literal Description, Literal Unirec>
constexpr std::array<FieldSpec, 2> perDirection(std::size_t offset, FieldType type,
                                                IpfixElement ipfix = {}) noexcept {
    const FieldSpec forward{
        .name = view(Name.chars).substr(0, Name.kLength),
        .description = view(Description.chars).substr(0, Description.kLength),
        .type = type,
        .origin = FieldOrigin::Plugin,
        .offset = static_cast<std::uint16_t>(offset),
        .direction = Forward,
        .ipfix = ipfix,
        .unirec = {view(Unirec.chars).substr(0, Unirec.kLength), unirecType(type)}};
    FieldSpec reverse = forward;
    reverse.name = view(kJoined<Name, "_rev">);
    reverse.description = view(kReversed<Description>);
    reverse.offset = static_cast<std::uint16_t>(offset + fieldBytes(type));
    reverse.direction = Reverse;
    reverse.ipfix = ipfix.exported() ? reverseElement(ipfix) : IpfixElement{};
    reverse.unirec.name = view(kJoined<Unirec, "_REV">);
    return {forward, reverse};
}

template <std::size_t... N>
constexpr auto concat(const std::array<FieldSpec, N>&... parts) noexcept {
    std::array<FieldSpec, (N + ...)> out{};
    std::size_t i = 0;
    ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(i)), i += N),
     ...);
    return out;
}

constexpr FieldType kU32 = FieldType::Unsigned32;

// README.md's order; under pen= the ids follow it, all but the window scale, which has IANA's
// element (the last two fields).
constexpr auto kFields = concat(
    std::array{connectionField("tcpperf_rtt_syn_us",
                               "handshake: SYN -> SYN-ACK at the probe (us; 0 = not seen)",
                               offsetof(Fields, rttSyn), "TCPPERF_RTT_SYN"),
               connectionField("tcpperf_rtt_synack_us",
                               "handshake: SYN-ACK -> the client's ACK at the probe (us)",
                               offsetof(Fields, rttSynAck), "TCPPERF_RTT_SYNACK")},
    perDirection<"tcpperf_rtt_min_us", "smallest RTT sample of src -> dst data (us)",
                 "TCPPERF_RTT_MIN">(offsetof(Fields, rttMin), kU32),
    perDirection<"tcpperf_rtt_avg_us", "mean RTT sample of src -> dst data (us)",
                 "TCPPERF_RTT_AVG">(offsetof(Fields, rttAvg), kU32),
    perDirection<"tcpperf_rtt_max_us", "largest RTT sample of src -> dst data (us)",
                 "TCPPERF_RTT_MAX">(offsetof(Fields, rttMax), kU32),
    perDirection<"tcpperf_rtt_cnt", "RTT samples of src -> dst data", "TCPPERF_RTT_CNT">(
        offsetof(Fields, rttCount), kU32),
    perDirection<"tcpperf_retx_pkts", "retransmitted segments src -> dst", "TCPPERF_RETX_PKTS">(
        offsetof(Fields, retxPkts), kU32),
    perDirection<"tcpperf_retx_bytes", "payload bytes of the retransmitted segments src -> dst",
                 "TCPPERF_RETX_BYTES">(offsetof(Fields, retxBytes), kU32),
    perDirection<"tcpperf_ooo_pkts", "out-of-order (reordered) segments src -> dst",
                 "TCPPERF_OOO_PKTS">(offsetof(Fields, oooPkts), kU32),
    perDirection<"tcpperf_dup_acks", "duplicate ACKs src -> dst", "TCPPERF_DUP_ACKS">(
        offsetof(Fields, dupAcks), kU32),
    perDirection<"tcpperf_zero_win", "segments src -> dst announcing a zero window",
                 "TCPPERF_ZERO_WIN">(offsetof(Fields, zeroWindows), kU32),
    perDirection<"tcpperf_mss", "MSS option of the src -> dst SYN (0 = none)", "TCPPERF_MSS">(
        offsetof(Fields, mss), FieldType::Unsigned16),
    perDirection<"tcpperf_wscale", "window-scale shift of the src -> dst SYN (255 = no option)",
                 "TCPPERF_WSCALE">(offsetof(Fields, wscale), FieldType::Unsigned8,
                                   {kPenIana, 238, 1}));

constexpr std::size_t kFieldCount = kFields.size();
/// The fields that go under pen= (all but the window scale's two).
constexpr std::size_t kPenFields = kFieldCount - 2;

class TcpperfPlugin final : public ProcessPluginBase<TcpperfPlugin> {
public:
    // Tier 2 rather than tier 1: the records of live flows stay packed at the front of the
    // pool (a 192-byte tier-1 state per slot is spread over the whole plugin area, whose pages
    // the kernel must zero), and `touch` names the two lines an ordinary segment uses, so the
    // third (events) is not loaded ahead of every packet (docs/performance.md, "conn and
    // tcpperf together").
    using Ext = TcpPerfState;

    explicit TcpperfPlugin(const Options& options) : m_fields(kFields) {
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        const auto first = static_cast<std::uint16_t>(options.getInt("first-id"));
        if (pen == 0) return;
        for (std::size_t i = 0; i < kPenFields; ++i) {
            m_fields[i].ipfix = {pen, static_cast<std::uint16_t>(first + i),
                                 fieldBytes(m_fields[i].type)};
        }
    }
    std::string_view name() const noexcept override { return "tcpperf"; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        if (ctx.flow->proto() != kProtoTcp) return kDone;
        TcpPerfState* s = ctx.attachExt<TcpPerfState>();
        if (s == nullptr) return kDone;  // pool exhausted: counted, no fields
        onPacket(ctx, *s);
        return kContinue;
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        TcpPerfState* s = ctx.ext<TcpPerfState>();
        if (s == nullptr) return kDone;
        onPacket(ctx, *s);
        return kContinue;
    }

    // The first two lines: every segment's per-direction state, and the RTT timing that data
    // segments and ACKs use. The third, the event counters, misses only on the (rare) segments
    // that count an event.
    std::uint64_t touch(const TcpPerfState& s) const noexcept {
        const auto* b = reinterpret_cast<const unsigned char*>(&s);
        return std::uint64_t{b[0]} ^ b[64];
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const TcpPerfState* s = ctx.ext<TcpPerfState>();
        if (s == nullptr) return;  // not TCP
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->rttSyn = s->rttSynUs;
        f->rttSynAck = s->rttSynAckUs;
        for (std::size_t d = 0; d < 2; ++d) {
            const TcpPerfRtt& r = s->rtt[d];
            const TcpPerfDir& x = s->dir[d];
            f->rttMin[d] = r.rttMinUs;
            f->rttAvg[d] = rttMeanUs(r);
            f->rttMax[d] = r.rttMaxUs;
            f->rttCount[d] = r.rttCount;
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
    static void onPacket(const FlowContext& ctx, TcpPerfState& state) noexcept {
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
        tcpperfUpdate(state, seg);
    }

    std::array<FieldSpec, kFieldCount> m_fields;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, TcpperfPlugin,
                         {.name = "tcpperf",
                          .summary = "TCP health per direction (Tstat's view): handshake and "
                                     "data RTTs, retransmissions, out-of-order, duplicate ACKs, "
                                     "zero windows, MSS, window scale",
                          .options = kOptions});

}  // namespace rowprobe::tcpperf
