// The "quic" process plugin: ipfixprobe 5.7's QUIC fields (SNI, user agent, versions,
// connection ids, token length, packet types, 0-RTT, multiplexing, ClientHello extensions)
// plus the client's ALPN list and JA4 ('q' prefix). Semantics: quic_record.hpp and README.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "process/quic/quic_record.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::quic {

namespace {

struct Fields {
    std::uint64_t tokenLength;
    std::uint32_t version;
    std::uint32_t clientVersion;
    std::uint16_t serverPort;
    std::uint8_t multiplexed;
    std::uint8_t zeroRtt;
    std::uint8_t chParsed;
    VarRef sni;
    VarRef userAgent;
    VarRef occid;
    VarRef oscid;
    VarRef scid;
    VarRef retryScid;
    VarRef packets;
    VarRef extTypes;
    VarRef extLengths;
    VarRef tlsExt;
    VarRef alpn;
    VarRef ja4;
};

// The IPFIX order is ipfixprobe's (fill_ipfix); ALPN and JA4 are rowprobe's own.
constexpr FieldSpec kFields[] = {
    {.name = "quic_sni",
     .description = "server name of the ClientHello",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, sni),
     .ipfix = {kPenCesnet, 890, kIpfixVarLen},
     .unirec = {"QUIC_SNI", "string"}},
    {.name = "quic_user_agent",
     .description = "Google user agent transport parameter (0x3129)",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, userAgent),
     .ipfix = {kPenCesnet, 891, kIpfixVarLen},
     .unirec = {"QUIC_USER_AGENT", "string"}},
    {.name = "quic_version",
     .description = "QUIC version of the last long-header packet (0-RTT excluded)",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, version),
     .ipfix = {kPenCesnet, 892, 4},
     .unirec = {"QUIC_VERSION", "uint32"}},
    {.name = "quic_client_version",
     .description = "QUIC version of the first ClientHello's Initial",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, clientVersion),
     .ipfix = {kPenCesnet, 893, 4},
     .unirec = {"QUIC_CLIENT_VERSION", "uint32"}},
    {.name = "quic_token_length",
     .description = "token length of the ClientHello's Initial or the Retry (2^64-1: none)",
     .type = FieldType::Unsigned64,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, tokenLength),
     .ipfix = {kPenCesnet, 894, 8},
     .unirec = {"QUIC_TOKEN_LENGTH", "uint64"}},
    {.name = "quic_occid",
     .description = "original client connection id",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, occid),
     .ipfix = {kPenCesnet, 895, kIpfixVarLen},
     .unirec = {"QUIC_OCCID", "bytes"}},
    {.name = "quic_oscid",
     .description = "original server connection id (the ClientHello's DCID)",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, oscid),
     .ipfix = {kPenCesnet, 896, kIpfixVarLen},
     .unirec = {"QUIC_OSCID", "bytes"}},
    {.name = "quic_scid",
     .description = "server connection id chosen by the server",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, scid),
     .ipfix = {kPenCesnet, 897, kIpfixVarLen},
     .unirec = {"QUIC_SCID", "bytes"}},
    {.name = "quic_retry_scid",
     .description = "source connection id of the first Retry",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, retryScid),
     .ipfix = {kPenCesnet, 898, kIpfixVarLen},
     .unirec = {"QUIC_RETRY_SCID", "bytes"}},
    {.name = "quic_multiplexed",
     .description = "ClientHellos of other connections seen in this flow",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, multiplexed),
     .ipfix = {kPenCesnet, 899, 1},
     .unirec = {"QUIC_MULTIPLEXED", "uint8"}},
    {.name = "quic_zero_rtt",
     .description = "0-RTT packets seen",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, zeroRtt),
     .ipfix = {kPenCesnet, 889, 1},
     .unirec = {"QUIC_ZERO_RTT", "uint8"}},
    {.name = "quic_server_port",
     .description = "UDP port of the server",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, serverPort),
     .ipfix = {kPenCesnet, 887, 2},
     .unirec = {"QUIC_SERVER_PORT", "uint16"}},
    {.name = "quic_packet_types",
     .description = "per packet (first 30): 0x01 Initial, 0x02 0-RTT, 0x04 Handshake, 0x08 "
                    "Retry, 0x10 Version Negotiation, 0x80 QUIC bit",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, packets),
     .ipfix = {kPenIana, 291, kIpfixVarLen},
     .unirec = {"QUIC_PACKETS", "uint8*"},
     .element = FieldType::Unsigned8,
     .ipfixItem = {kPenCesnet, 888, 1}},
    {.name = "quic_ch_parsed",
     .description = "1 when a ClientHello was parsed",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, chParsed),
     .ipfix = {kPenCesnet, 886, 1},
     .unirec = {"QUIC_CH_PARSED", "uint8"}},
    {.name = "quic_tls_ext_types",
     .description = "ClientHello extension types in order, GREASE included (up to 30)",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, extTypes),
     .ipfix = {kPenIana, 291, kIpfixVarLen},
     .unirec = {"QUIC_TLS_EXT_TYPE", "uint16*"},
     .element = FieldType::Unsigned16,
     .ipfixItem = {kPenCesnet, 885, 2}},
    {.name = "quic_tls_ext_lengths",
     .description = "ClientHello extension lengths, as quic_tls_ext_types",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, extLengths),
     .ipfix = {kPenIana, 291, kIpfixVarLen},
     .unirec = {"QUIC_TLS_EXT_LEN", "uint16*"},
     .element = FieldType::Unsigned16,
     .ipfixItem = {kPenCesnet, 884, 2}},
    {.name = "quic_tls_ext",
     .description = "ALPN and QUIC transport parameters extension data, concatenated",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, tlsExt),
     .ipfix = {kPenCesnet, 883, kIpfixVarLen},
     .unirec = {"QUIC_TLS_EXT", "bytes"}},
    // Not in ipfixprobe: no IPFIX element or UniRec field exists for these (JSON/text only).
    {.name = "quic_alpn",
     .description = "protocols the client offers (ALPN), ',' separated",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, alpn)},
    {.name = "quic_ja4",
     .description = "JA4 of the ClientHello ('q' prefix, FoxIO's specification)",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, ja4)},
};

class QuicPlugin final : public ProcessPluginBase<QuicPlugin> {
public:
    using Ext = QuicRecord;
    /// initRecord() sets every field it reads; the 4 KiB reassembly buffer and the 1.5 KiB
    /// extension bytes are not zeroed per flow.
    static constexpr bool kZeroExt = false;

    explicit QuicPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "quic"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const QuicRecord* rec = ctx.ext<QuicRecord>();
        return rec != nullptr ? std::string_view{"quic"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const QuicRecord* r = ctx.ext<QuicRecord>();
        if (r == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->tokenLength = r->tokenLength;
        f->version = r->version;
        f->clientVersion = r->clientVersion;
        f->serverPort = r->serverPort;
        f->multiplexed = r->multiplexed;
        f->zeroRtt = r->zeroRtt;
        f->chParsed = r->chParsed;
        f->sni = out.appendString({r->sni, ::strnlen(r->sni, sizeof r->sni)});
        f->userAgent =
            out.appendString({r->userAgent, ::strnlen(r->userAgent, sizeof r->userAgent)});
        f->occid = out.appendBytes(r->occid.bytes.data(), r->occid.len);
        f->oscid = out.appendBytes(r->oscid.bytes.data(), r->oscid.len);
        f->scid = out.appendBytes(r->scid.bytes.data(), r->scid.len);
        f->retryScid = out.appendBytes(r->retryScid.bytes.data(), r->retryScid.len);
        f->packets = out.append(std::span<const std::uint8_t>(r->packetTypes.data(),
                                                              r->lastPacketType + std::size_t{1}));
        f->extTypes = out.append(std::span<const std::uint16_t>(r->extTypes.data(), r->extCount));
        f->extLengths =
            out.append(std::span<const std::uint16_t>(r->extLengths.data(), r->extCount));
        f->tlsExt = out.appendBytes(r->tlsExt.data(), r->tlsExtLen);
        f->alpn = out.appendString({r->alpn, ::strnlen(r->alpn, sizeof r->alpn)});
        f->ja4 = out.appendString({r->ja4.data(), r->ja4Len});
        out.commit();
    }

private:
    static HookResult onPacket(FlowContext& ctx) noexcept {
        if (ctx.flow->proto() != 17) return kDone;
        const auto payload = ctx.packet->payload();
        QuicPacket pkt{.payload = payload,
                       .srcPort = ctx.packet->srcPort(),
                       .dstPort = ctx.packet->dstPort(),
                       .flowSrcPort = ctx.flow->srcPort(),
                       .flowPackets = ctx.flow->packets};
        if (QuicRecord* rec = ctx.ext<QuicRecord>()) {
            return applyQuicPacket(pkt, *rec, false) == QuicUpdate::Flush ? kFlush : kContinue;
        }
        // Not QUIC so far: only a long-header packet of a known version, or a legacy gQUIC
        // packet with its version, can start a record (checked before taking one, so that
        // other UDP traffic touches no record).
        if (!mayStartFlow(payload)) return kContinue;
        QuicRecord* rec = ctx.attachExt<QuicRecord>();
        if (rec == nullptr) return kContinue;  // pool exhausted (counted by the table)
        initRecord(*rec);
        const QuicUpdate u = applyQuicPacket(pkt, *rec, true);
        if (u == QuicUpdate::NotQuic) ctx.detachExt();
        return u == QuicUpdate::Flush ? kFlush : kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, QuicPlugin,
                         {.name = "quic",
                          .summary = "QUIC Initial decryption: SNI, ALPN, user agent, versions, "
                                     "connection ids, packet types, JA4, ClientHello extensions"});

}  // namespace rowprobe::quic
