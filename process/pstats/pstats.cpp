// `pstats`: the first 30 packets of a biflow in arrival order — payload length on the wire,
// time, TCP flags, direction — ipfixprobe's PSTATS (fields: README.md), for traffic
// classifiers. Per flow: the count of recorded packets in tier 1 (2 bytes) and a tier-2 record
// (skipdup's last-packet header and 30 entries of 12 bytes, 384 bytes) taken at the flow's first
// packet; the plugin stops taking packets once 30 are recorded (kDone).
#include <array>
#include <cstddef>
#include <cstdint>

#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::process {

namespace {

constexpr std::size_t kMaxPackets = 30;  // ipfixprobe's PSTATS_MAXELEMCOUNT
constexpr std::uint8_t kSyn = 0x02;

constexpr OptionSpec kOptions[] = {
    {.name = "includezeroes",
     .shortName = "i",
     .type = OptionType::Flag,
     .defaultValue = "false",
     .help = "also record packets without payload (default: skipped)"},
    {.name = "skipdup",
     .shortName = "s",
     .type = OptionType::Flag,
     .defaultValue = "false",
     .help = "skip TCP retransmissions: seq and ack not above the previous packet's of that "
             "direction, same captured payload length and flags"},
};

/// One exported instance: four arrays of `count` values.
struct Fields {
    VarRef lengths;
    VarRef times;
    VarRef flags;
    VarRef directions;
};

constexpr FieldSpec kFields[] = {
    arrayField("ppi_pkt_lengths", "payload length on the wire of the first 30 packets",
               offsetof(Fields, lengths), {"PPI_PKT_LENGTHS", "uint16*"}, FieldType::Unsigned16,
               {kPenCesnet, 1013, 2}),
    arrayField("ppi_pkt_times", "times of the first 30 packets", offsetof(Fields, times),
               {"PPI_PKT_TIMES", "time*"}, FieldType::Timestamp, {kPenCesnet, 1014, 8}),
    arrayField("ppi_pkt_flags", "TCP flags of the first 30 packets", offsetof(Fields, flags),
               {"PPI_PKT_FLAGS", "uint8*"}, FieldType::Unsigned8, {kPenCesnet, 1015, 1}),
    arrayField("ppi_pkt_directions",
               "directions of the first 30 packets: 1 src -> dst, -1 dst -> src",
               offsetof(Fields, directions), {"PPI_PKT_DIRECTIONS", "int8*"}, FieldType::Int8,
               {kPenCesnet, 1016, 1}),
};

/// ipfixprobe's test for a sequence number that wrapped.
bool seqOverflowed(std::uint32_t curr, std::uint32_t prev) noexcept {
    return static_cast<std::int64_t>(curr) - static_cast<std::int64_t>(prev) < -4252017623LL;
}

/// `a` is not after `b` in ipfixprobe's sense (a <= b unless wrapped, or wrapped above).
bool notAfter(std::uint32_t a, std::uint32_t b) noexcept {
    return (a <= b && !seqOverflowed(a, b)) || (a > b && seqOverflowed(a, b));
}

class Pstats final : public ProcessPluginBase<Pstats> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    /// One recorded packet: 12 bytes, so a packet's update writes one or two lines of entries
    /// (the time is kept as two words to stay 4-byte aligned).
    struct Entry {
        std::array<std::uint32_t, 2> time;  ///< TimeNs, low word first
        std::uint16_t length;
        std::uint8_t flags;
        std::int8_t direction;
    };
    /// Tier 1: the packets recorded so far. Here rather than in the tier-2 record so that a
    /// packet finds its entry without reading that record first: the table loads this state
    /// with the flow, and the entry's line is then fetched for writing, not read.
    struct State {
        std::uint16_t count;
    };
    /// skipdup's view of each direction's last packet, then the entries in arrival order.
    struct Ext {
        std::array<std::uint32_t, 2> seq;
        std::array<std::uint32_t, 2> ack;
        std::array<std::uint16_t, 2> len;
        std::array<std::uint8_t, 2> tcpFlags;
        std::array<Entry, kMaxPackets> entries;
    };
    static_assert(sizeof(Entry) == 12 && sizeof(Ext) <= 384, "six cache lines");
    /// The record is never read before it is written: entries up to the count (state), and
    /// skipdup's header, which postCreate clears. So a new flow does not zero six lines.
    static constexpr bool kZeroExt = false;

    explicit Pstats(const Options& options)
        : m_zeroes(options.getFlag("includezeroes")), m_skipDup(options.getFlag("skipdup")) {}

    std::string_view name() const noexcept override { return "pstats"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.attachExt<Ext>();
        if (e == nullptr) return kDone;  // pool exhausted: exported without pstats
        if (m_skipDup) {  // not zeroed by the pool (kZeroExt): both directions start clear
            e->seq = {};
            e->ack = {};
            e->len = {};
            e->tcpFlags = {};
        }
        return add(ctx.stateAs<State>(), *e, ctx);
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return kDone;
        return add(ctx.stateAs<State>(), *e, ctx);
    }
    void preExport(FlowContext& ctx) const noexcept {
        // Not for 1-packet flows with SYN (port scans), as ipfixprobe (PSTATS_MINLEN 1).
        const FlowView& f = *ctx.flow;
        if (f.totalPackets() <= 1 && ((f.tcpFlags[0] | f.tcpFlags[1]) & kSyn) != 0) ctx.detachExt();
    }
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const std::size_t n = ctx.stateAs<State>().count;
        std::array<std::uint16_t, kMaxPackets> lengths;
        std::array<TimeNs, kMaxPackets> times;
        std::array<std::uint8_t, kMaxPackets> flags;
        std::array<std::int8_t, kMaxPackets> directions;
        for (std::size_t i = 0; i < n; ++i) {
            const Entry& x = e->entries[i];
            lengths[i] = x.length;
            times[i] = TimeNs{x.time[0]} | (TimeNs{x.time[1]} << 32);
            flags[i] = x.flags;
            directions[i] = x.direction;
        }
        f->lengths = out.append(std::span<const std::uint16_t>(lengths.data(), n));
        f->times = out.append(std::span<const TimeNs>(times.data(), n));
        f->flags = out.append(std::span<const std::uint8_t>(flags.data(), n));
        f->directions = out.append(std::span<const std::int8_t>(directions.data(), n));
        out.commit();
    }
    /// What the next packet touches: the entry it will write, fetched for writing (both ends:
    /// an entry may straddle two lines), and with skipdup the line it compares against. The
    /// count comes from the state the table has just loaded, so no miss waits behind another
    /// (worker time per packet on the 100 k-flow capture with pstats: 158 ns when the count
    /// lived in this record and both lines were loaded, 140 with the entry prefetched).
    std::uint64_t touch(const State& st, const Ext& e) const noexcept {
        const std::size_t n = st.count < kMaxPackets ? st.count : kMaxPackets - 1;
        const auto* entry = reinterpret_cast<const unsigned char*>(&e.entries[n]);
        __builtin_prefetch(entry, 1, 3);
        __builtin_prefetch(entry + sizeof(Entry) - 1, 1, 3);
        return m_skipDup ? e.seq[0] : st.count;
    }

private:
    HookResult add(State& st, Ext& e, const FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (m_skipDup) {
            const std::size_t dir = ctx.forward ? 0 : 1;
            if (p.key.proto == 6 && notAfter(p.tcpSeq, e.seq[dir]) &&
                notAfter(p.tcpAck, e.ack[dir]) && p.payloadLen == e.len[dir] &&
                p.tcpFlags == e.tcpFlags[dir] && st.count != 0)
                return kContinue;
            e.seq[dir] = p.tcpSeq;
            e.ack[dir] = p.tcpAck;
            e.len[dir] = p.payloadLen;
            e.tcpFlags[dir] = p.tcpFlags;
        }
        if (p.payloadWireLen == 0 && !m_zeroes) return kContinue;
        if (st.count < kMaxPackets) {
            Entry& x = e.entries[st.count];
            x.length = static_cast<std::uint16_t>(p.payloadWireLen);
            x.flags = p.tcpFlags;
            x.time = {static_cast<std::uint32_t>(p.ts), static_cast<std::uint32_t>(p.ts >> 32)};
            x.direction = static_cast<std::int8_t>(ctx.forward ? 1 : -1);
            ++st.count;
        }
        return st.count == kMaxPackets ? kDone : kContinue;
    }

    bool m_zeroes;
    bool m_skipDup;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, Pstats,
                         {.name = "pstats",
                          .summary = "lengths, times, TCP flags and directions of the first 30 "
                                     "packets (ipfixprobe PSTATS)",
                          .options = kOptions});

}  // namespace rowprobe::process
