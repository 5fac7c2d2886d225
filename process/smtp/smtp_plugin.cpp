// The "smtp" process plugin: SMTP command and status-code statistics, the HELO/EHLO domain and
// the first sender and recipient of flows to or from port 25. Semantics: smtp_parser.hpp.
#include <cstddef>
#include <string_view>

#include "process/smtp/smtp_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::smtp {

namespace {

constexpr std::uint16_t kSmtpPort = 25;

struct Fields {
    std::uint32_t commandFlags;
    std::uint32_t mailCount;
    std::uint32_t rcptCount;
    std::uint32_t codeFlags;
    std::uint32_t codes[4];
    VarRef domain;
    VarRef sender;
    VarRef recipient;
};

constexpr FieldSpec kFields[] = {
    {.name = "smtp_command_flags",
     .description = "bits of the commands seen (EHLO 0x1, HELO 0x2, MAIL 0x4, RCPT 0x8, DATA "
                    "0x10, VRFY 0x40, EXPN 0x80, HELP 0x100, NOOP 0x200, QUIT 0x400, other 0x8000)",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, commandFlags),
     .ipfix = {kPenCesnet, 810, 4},
     .unirec = {"SMTP_COMMAND_FLAGS", "uint32"}},
    {.name = "smtp_mail_cmd_count",
     .description = "MAIL commands",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, mailCount),
     .ipfix = {kPenCesnet, 811, 4},
     .unirec = {"SMTP_MAIL_CMD_COUNT", "uint32"}},
    {.name = "smtp_rcpt_cmd_count",
     .description = "RCPT commands",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, rcptCount),
     .ipfix = {kPenCesnet, 812, 4},
     .unirec = {"SMTP_RCPT_CMD_COUNT", "uint32"}},
    {.name = "smtp_stat_code_flags",
     .description = "bits of the reply codes seen (README), 0x40000000 SPAM, 0x80000000 other",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, codeFlags),
     .ipfix = {kPenCesnet, 815, 4},
     .unirec = {"SMTP_STAT_CODE_FLAGS", "uint32"}},
    {.name = "smtp_2xx_stat_code_count",
     .description = "2xx replies",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, codes) + 0 * sizeof(std::uint32_t),
     .ipfix = {kPenCesnet, 816, 4},
     .unirec = {"SMTP_2XX_STAT_CODE_COUNT", "uint32"}},
    {.name = "smtp_3xx_stat_code_count",
     .description = "3xx replies",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, codes) + 1 * sizeof(std::uint32_t),
     .ipfix = {kPenCesnet, 817, 4},
     .unirec = {"SMTP_3XX_STAT_CODE_COUNT", "uint32"}},
    {.name = "smtp_4xx_stat_code_count",
     .description = "4xx replies",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, codes) + 2 * sizeof(std::uint32_t),
     .ipfix = {kPenCesnet, 818, 4},
     .unirec = {"SMTP_4XX_STAT_CODE_COUNT", "uint32"}},
    {.name = "smtp_5xx_stat_code_count",
     .description = "5xx replies",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, codes) + 3 * sizeof(std::uint32_t),
     .ipfix = {kPenCesnet, 819, 4},
     .unirec = {"SMTP_5XX_STAT_CODE_COUNT", "uint32"}},
    {.name = "smtp_domain",
     .description = "domain of the first HELO/EHLO",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, domain),
     .ipfix = {kPenCesnet, 820, kIpfixVarLen},
     .unirec = {"SMTP_DOMAIN", "string"}},
    {.name = "smtp_first_sender",
     .description = "text after ':' of the first MAIL command",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, sender),
     .ipfix = {kPenCesnet, 813, kIpfixVarLen},
     .unirec = {"SMTP_FIRST_SENDER", "string"}},
    {.name = "smtp_first_recipient",
     .description = "text after ':' of the first RCPT command",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, recipient),
     .ipfix = {kPenCesnet, 814, kIpfixVarLen},
     .unirec = {"SMTP_FIRST_RECIPIENT", "string"}},
};

class SmtpPlugin final : public ProcessPluginBase<SmtpPlugin> {
public:
    using Ext = SmtpRecord;

    explicit SmtpPlugin(const Options&) {}
    std::string_view name() const noexcept override { return "smtp"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return onPacket(ctx); }
    HookResult preUpdate(FlowContext& ctx) const noexcept { return onPacket(ctx); }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const SmtpRecord* rec = ctx.ext<SmtpRecord>();
        return rec != nullptr && rec->present != 0 ? std::string_view{"smtp"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const SmtpRecord* r = ctx.ext<SmtpRecord>();
        if (r == nullptr || r->present == 0) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->commandFlags = r->commandFlags;
        f->mailCount = r->mailCount;
        f->rcptCount = r->rcptCount;
        f->codeFlags = r->codeFlags;
        for (std::size_t i = 0; i < 4; ++i) f->codes[i] = r->codes[i];
        f->domain = out.appendString(r->domainText());
        f->sender = out.appendString(r->senderText());
        f->recipient = out.appendString(r->recipientText());
        out.commit();
    }

private:
    static HookResult onPacket(FlowContext& ctx) noexcept {
        const ParsedPacket& p = *ctx.packet;
        const bool reply = p.srcPort() == kSmtpPort;
        if (!reply && p.dstPort() != kSmtpPort) {
            // Ports never change within a flow: a flow that is not SMTP never will be.
            return ctx.flow->srcPort() != kSmtpPort && ctx.flow->dstPort() != kSmtpPort ? kDone
                                                                                        : kContinue;
        }
        SmtpRecord* r = ctx.attachExt<SmtpRecord>();
        if (r == nullptr) return kDone;  // pool exhausted (counted by the table)
        const bool ok = reply ? applySmtpReply(p.payload(), *r) : applySmtpCommand(p.payload(), *r);
        if (ok) r->present = 1;
        return kContinue;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, SmtpPlugin,
                         {.name = "smtp",
                          .summary = "SMTP: command and reply-code statistics, HELO domain, "
                                     "first sender and recipient"});

}  // namespace rowprobe::smtp
