// The "tls" process plugin: SNI, the server's ALPN, version, JA3, JA4, the ClientHello's
// extension types and lengths (ipfixprobe 5.7's fields), plus JA3S and the selected cipher.
// Stops looking at a flow once its ServerHello is parsed. Semantics: tls_record.hpp.
#include <cstddef>
#include <cstring>
#include <string_view>

#include "process/tls/tls_record.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::tls {

namespace {

constexpr std::string_view kJa4Modes[] = {"spec", "ipfixprobe"};

constexpr OptionSpec kOptions[] = {
    {.name = "ja4",
     .type = OptionType::Choice,
     .defaultValue = "spec",
     .help = "JA4 flavour: 'spec' (FoxIO's, GREASE never counted) or 'ipfixprobe' (ipfixprobe "
             "5.7's: GREASE extensions counted, counts not zero-padded)",
     .choices = kJa4Modes},
};

struct Fields {
    std::uint16_t version;
    std::uint16_t cipher;
    VarRef sni;
    VarRef alpn;
    VarRef ja3;
    VarRef ja4;
    VarRef extTypes;
    VarRef extLengths;
    VarRef ja3s;
};

constexpr FieldSpec kFields[] = {
    {.name = "tls_version",
     .description = "ClientHello version, replaced by the ServerHello's supported_versions",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, version),
     .ipfix = {kPenFlowmon, 333, 2},
     .unirec = {"TLS_VERSION", "uint16"}},
    {.name = "tls_sni",
     .description = "server name of the ClientHello",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, sni),
     .ipfix = {kPenCesnet, 808, kIpfixVarLen},
     .unirec = {"TLS_SNI", "string"}},
    {.name = "tls_alpn",
     .description = "protocol selected by the server (ServerHello ALPN)",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, alpn),
     .ipfix = {kPenFlowmon, 337, kIpfixVarLen},
     .unirec = {"TLS_ALPN", "string"}},
    {.name = "tls_ja3",
     .description = "JA3 of the ClientHello (MD5, 16 bytes)",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, ja3),
     .ipfix = {kPenFlowmon, 357, kIpfixVarLen},
     .unirec = {"TLS_JA3", "bytes"}},
    {.name = "tls_ja4",
     .description = "JA4 of the ClientHello (option ja4 picks the flavour)",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, ja4),
     .ipfix = {kPenCesnet, 809, kIpfixVarLen},
     .unirec = {"TLS_JA4", "string"}},
    {.name = "tls_ext_types",
     .description = "ClientHello extension types in order, GREASE included (up to 30)",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, extTypes),
     .ipfix = {kPenIana, 291, kIpfixVarLen},
     .unirec = {"TLS_EXT_TYPE", "uint16*"},
     .element = FieldType::Unsigned16,
     .ipfixItem = {kPenCesnet, 802, 2}},
    {.name = "tls_ext_lengths",
     .description = "ClientHello extension lengths, as tls_ext_types",
     .type = FieldType::Array,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, extLengths),
     .ipfix = {kPenIana, 291, kIpfixVarLen},
     .unirec = {"TLS_EXT_LEN", "uint16*"},
     .element = FieldType::Unsigned16,
     .ipfixItem = {kPenCesnet, 803, 2}},
    // Not in ipfixprobe: no IPFIX element or UniRec field exists for these (JSON/text only).
    {.name = "tls_cipher",
     .description = "cipher suite selected by the server (0: no ServerHello seen)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, cipher)},
    {.name = "tls_ja3s",
     .description = "JA3S of the ServerHello (MD5, 16 bytes; empty without one)",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, ja3s)},
};

// A TLS handshake record carrying a ClientHello (type 22, version 3.x, handshake type 1).
bool looksLikeClientHello(std::span<const std::uint8_t> p) noexcept {
    return p.size() > 5 && p[0] == 22 && p[1] == 3 && p[5] == 1;
}

class TlsPlugin final : public ProcessPluginBase<TlsPlugin> {
public:
    using Ext = TlsRecord;

    explicit TlsPlugin(const Options& options) {
        m_options.ja4 =
            options.getString("ja4") == "ipfixprobe" ? Ja4Mode::Ipfixprobe : Ja4Mode::Spec;
    }
    std::string_view name() const noexcept override { return "tls"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult preUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const TlsRecord* rec = ctx.ext<TlsRecord>();
        return rec != nullptr ? std::string_view{"ssl"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const TlsRecord* rec = ctx.ext<TlsRecord>();
        if (rec == nullptr) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->version = rec->version;
        f->cipher = rec->cipher;
        f->sni = out.appendString({rec->sni, std::strlen(rec->sni)});
        f->alpn = out.appendString({rec->alpn, std::strlen(rec->alpn)});
        f->ja3 = out.appendBytes(rec->ja3.data(), rec->ja3.size());
        f->ja4 = out.appendString({rec->ja4.data(), rec->ja4Len});
        f->extTypes =
            out.append(std::span<const std::uint16_t>(rec->extTypes.data(), rec->extCount));
        f->extLengths =
            out.append(std::span<const std::uint16_t>(rec->extLengths.data(), rec->extCount));
        if (rec->serverHello) f->ja3s = out.appendBytes(rec->ja3s.data(), rec->ja3s.size());
        out.commit();
    }

private:
    HookResult onPacket(FlowContext& ctx) const noexcept {
        const auto payload = ctx.packet->payload();
        TlsOptions options = m_options;
        options.quic = ctx.flow->proto() == 17;
        if (TlsRecord* rec = ctx.ext<TlsRecord>()) {
            return applyTlsPacket(payload, *rec, true, options) == TlsUpdate::Done ? kDone
                                                                                   : kContinue;
        }
        if (!looksLikeClientHello(payload)) return kContinue;
        TlsRecord* rec = ctx.attachExt<TlsRecord>();
        if (rec == nullptr) return kContinue;  // pool exhausted (counted by the table)
        if (applyTlsPacket(payload, *rec, false, options) != TlsUpdate::Stored) ctx.detachExt();
        return kContinue;
    }

    TlsOptions m_options;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, TlsPlugin,
                         {.name = "tls",
                          .summary = "TLS SNI, ALPN, version, JA3, JA4, JA3S, cipher, "
                                     "ClientHello extension types and lengths",
                          .options = kOptions});

}  // namespace rowprobe::tls
