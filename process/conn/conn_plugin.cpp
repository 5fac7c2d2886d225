// The "conn" process plugin: Zeek's conn.log summary of each flow (conn_state, history,
// orig_bytes / resp_bytes from sequence numbers, missed_bytes) and its `service`, the Zeek
// service names the flow's other plugins reported through the SDK (FlowServices). Every
// packet of the flow goes through Zeek's rules (conn_tracker.hpp) in a 192-byte tier-2 record
// from the worker's pool; nothing is allocated. Option `pen`: the operator's Private Enterprise
// Number under which the fields go into IPFIX (rowprobe has none of its own); without it IPFIX
// leaves them out.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "process/conn/conn_tracker.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/prefetch.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::conn {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "Private Enterprise Number under which IPFIX carries the conn fields (elements "
             "100-105); 0: the fields are not in IPFIX (JSON, text and UniRec carry them)",
     .min = 0,
     .max = 4294967295.0},
};

struct Fields {
    std::uint64_t origBytes;
    std::uint64_t respBytes;
    std::uint64_t missedBytes;
    VarRef state;
    VarRef history;
    VarRef service;
};

constexpr std::uint16_t kFirstElement = 100;

constexpr FieldSpec field(std::string_view name, std::string_view description, FieldType type,
                          std::size_t offset, std::string_view unirec,
                          std::string_view unirecType) {
    return {.name = name,
            .description = description,
            .type = type,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .unirec = {unirec, unirecType}};
}

constexpr std::array<FieldSpec, 6> kFields = {
    field("conn_state", "Zeek conn_state: S0 S1 SF REJ S2 S3 RSTO RSTR RSTOS0 RSTRH SH SHR OTH",
          FieldType::String, offsetof(Fields, state), "CONN_STATE", "string"),
    field("conn_history",
          "Zeek history letters (upper case: Zeek's originator; ^: Zeek flipped the roles)",
          FieldType::String, offsetof(Fields, history), "CONN_HISTORY", "string"),
    field("conn_orig_bytes", "payload bytes of Zeek's originator, from sequence numbers",
          FieldType::Unsigned64, offsetof(Fields, origBytes), "CONN_ORIG_BYTES", "uint64"),
    field("conn_resp_bytes", "payload bytes of Zeek's responder, from sequence numbers",
          FieldType::Unsigned64, offsetof(Fields, respBytes), "CONN_RESP_BYTES", "uint64"),
    field("conn_missed_bytes", "bytes in content gaps (acknowledged but never seen)",
          FieldType::Unsigned64, offsetof(Fields, missedBytes), "CONN_MISSED_BYTES", "uint64"),
    field("conn_service", "Zeek service names the flow's plugins recognised, comma-separated",
          FieldType::String, offsetof(Fields, service), "CONN_SERVICE", "string"),
};

constexpr std::uint32_t kBroadcast = 0xffffffffU;
constexpr std::uint8_t kProtoTcp = 6;

class ConnPlugin final : public ProcessPluginBase<ConnPlugin> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    // Tier 2 rather than tier 1: the table loads a batch's tier-2 lines together before the
    // hooks run (touch: the hot ones), and the records stay packed at the pool's front, where
    // a tier-1 state of 192 bytes per slot would be spread over the whole plugin area (when
    // the table still loaded only the first line of a slot's area, tier 1 cost 680 ns per
    // packet on the 100k-flow capture, tier 2 156 ns: docs/performance.md, loaded machine).
    using Ext = ConnState;
    // Tier 1, one byte (the flow record keeps it inline when conn is the first plugin with so
    // small a state; it is loaded with the record, before the tier-2 handle is even read): whether
    // the flow is TCP, so that `touch` picks the record's lines without waiting for them.
    struct State {
        std::uint8_t tcp;
    };

    explicit ConnPlugin(const Options& options) : m_fields(kFields) {
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        if (pen == kPenReverse)
            options.fail("pen", "29305 is the RFC 5103 reverse PEN, not an enterprise's");
        if (pen == 0) return;
        for (std::size_t i = 0; i < m_fields.size(); ++i) {
            const bool var = m_fields[i].type == FieldType::String;
            m_fields[i].ipfix = {pen, static_cast<std::uint16_t>(kFirstElement + i),
                                 var ? kIpfixVarLen : std::uint16_t{8}};
        }
    }

    std::string_view name() const noexcept override { return "conn"; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        ctx.stateAs<State>().tcp = ctx.flow->proto() == kProtoTcp ? 1 : 0;
        ConnState* s = ctx.attachExt<ConnState>();
        return s != nullptr ? onPacket(ctx, *s) : kDone;  // pool exhausted: counted, no fields
    }
    HookResult preUpdate(FlowContext& ctx) const noexcept {
        ConnState* s = ctx.ext<ConnState>();
        return s != nullptr ? onPacket(ctx, *s) : kDone;
    }

    // The lines of the record the next packet reads (conn_tracker.hpp): line 1, and for TCP
    // line 0 (the endpoints); the third line, the history, is only written while the flow
    // runs. A UDP packet thus costs one line. Both addresses follow from the record's handle
    // and the tier-1 byte, which arrive together, and they are prefetched for writing, not
    // loaded: on the pools' 4 KiB pages a load of the batch waits for its page walk as well,
    // and prefetching took `-p conn -p tcpperf` from 0.40 to 0.37 s on the 100k-flow capture
    // and from 1.93-2.00 to 1.81-1.89 s on the 1 M-flow one (docs/performance.md, "Session 19").
    std::uint64_t touch(const State& st, const ConnState& s) const noexcept {
        const auto* b = reinterpret_cast<const unsigned char*>(&s);
        prefetchWrite(b + 64);
        if (st.tcp != 0) prefetchWrite(b);
        return st.tcp;
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const ConnState* s = ctx.ext<ConnState>();
        if (s == nullptr || s->started == 0) return;
        const ConnSummary sum = connSummary(*s);
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->origBytes = sum.origBytes;
        f->respBytes = sum.respBytes;
        f->missedBytes = sum.missedBytes;
        f->state = out.appendString(sum.state);
        f->history = out.appendString(sum.history);
        std::array<char, 128> services{};
        const std::size_t n = ctx.services != nullptr ? ctx.services->join(services) : 0;
        f->service = out.appendString({services.data(), n});
        out.commit();
    }

private:
    static HookResult onPacket(FlowContext& ctx, ConnState& state) noexcept {
        const ParsedPacket& p = *ctx.packet;
        // Zeek reassembles fragments and drops packets whose transport header is cut: only
        // whole headers go through its rules.
        if (p.frag.offset != 0 || ((p.key.proto == 6 || p.key.proto == 17) && !p.hasPorts))
            return kContinue;
        const auto& dst = p.dstAddr();
        std::uint32_t dst4 = 0;
        for (std::size_t i = 12; i < 16; ++i) dst4 = dst4 << 8 | dst[i];
        connPacket(state, {.proto = p.key.proto,
                           .fromInitiator = ctx.forward,
                           .srcPort = p.srcPort(),
                           .dstPort = p.dstPort(),
                           .tcpFlags = p.tcpFlags,
                           .seq = p.tcpSeq,
                           .ack = p.tcpAck,
                           .window = p.tcpWindow,
                           .payloadLen = p.payloadWireLen,
                           .broadcastDst = dst4 == kBroadcast});
        return kContinue;
    }

    std::array<FieldSpec, 6> m_fields;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, ConnPlugin,
                         {.name = "conn",
                          .summary = "Zeek's conn_state, history, orig/resp/missed bytes and "
                                     "service (conn.log) per flow",
                          .options = kOptions});

}  // namespace rowprobe::conn
