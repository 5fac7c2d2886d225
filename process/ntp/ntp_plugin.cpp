// The "ntp" process plugin: the NTP header of every NTP packet, one record per packet — ipfixprobe
// 5.7's NTP plugin. A flow whose first packet has port 123 on either side is exported at once
// (kFlush from postCreate), so each packet of such a conversation becomes a flow of its own; the
// record carries the NTP fields when the packet passes the header checks (ntp_parser.hpp).
// Option `format`: `rfc` (default) writes the root delay / dispersion and the timestamps as the
// packet holds them; `ipfixprobe` reproduces ipfixprobe's output (delay and dispersion always 9,
// its hex reading of the timestamps), for byte-compatibility with its consumers.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "process/ntp/ntp_parser.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::ntp {

namespace {

constexpr std::string_view kFormats[] = {"rfc", "ipfixprobe"};
constexpr OptionSpec kOptions[] = {
    {.name = "format",
     .type = OptionType::Choice,
     .defaultValue = "rfc",
     .help = "rfc: root delay, root dispersion and timestamps as the packet holds them; "
             "ipfixprobe: ipfixprobe 5.7's values (delay and dispersion 9, its hex reading of "
             "the timestamps)",
     .choices = kFormats},
};

struct Fields {
    std::uint32_t delay;
    std::uint32_t dispersion;
    std::uint8_t leap;
    std::uint8_t version;
    std::uint8_t mode;
    std::uint8_t stratum;
    std::uint8_t poll;
    std::uint8_t precision;
    VarRef refId;
    VarRef reference;
    VarRef origin;
    VarRef receive;
    VarRef sent;
};

constexpr FieldSpec u8(std::string_view name, std::string_view description, std::size_t offset,
                       std::uint16_t id, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::Unsigned8,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = {kPenCesnet, id, 1},
            .unirec = {unirec, "uint8"}};
}
constexpr FieldSpec u32(std::string_view name, std::string_view description, std::size_t offset,
                        std::uint16_t id, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::Unsigned32,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = {kPenCesnet, id, 4},
            .unirec = {unirec, "uint32"}};
}
constexpr FieldSpec text(std::string_view name, std::string_view description, std::size_t offset,
                         std::uint16_t id, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::String,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = {kPenCesnet, id, kIpfixVarLen},
            .unirec = {unirec, "string"}};
}

// IPFIX template order of ipfixprobe: LEAP, VERSION, MODE, STRATUM, POLL, PRECISION, DELAY,
// DISPERSION, REF_ID, REF, ORIG, RECV, SENT.
constexpr FieldSpec kFields[] = {
    u8("ntp_leap", "leap indicator", offsetof(Fields, leap), 18, "NTP_LEAP"),
    u8("ntp_version", "NTP version", offsetof(Fields, version), 19, "NTP_VERSION"),
    u8("ntp_mode", "mode (3 client, 4 server)", offsetof(Fields, mode), 20, "NTP_MODE"),
    u8("ntp_stratum", "stratum", offsetof(Fields, stratum), 21, "NTP_STRATUM"),
    u8("ntp_poll", "poll interval (log2 s)", offsetof(Fields, poll), 22, "NTP_POLL"),
    u8("ntp_precision", "precision (log2 s, the raw byte)", offsetof(Fields, precision), 23,
       "NTP_PRECISION"),
    u32("ntp_delay", "root delay (NTP short format)", offsetof(Fields, delay), 24, "NTP_DELAY"),
    u32("ntp_dispersion", "root dispersion (NTP short format)", offsetof(Fields, dispersion), 25,
        "NTP_DISPERSION"),
    text("ntp_ref_id", "reference id: dotted decimal, or a stratum-0 kiss code",
         offsetof(Fields, refId), 26, "NTP_REF_ID"),
    text("ntp_ref", "reference timestamp, seconds.micro", offsetof(Fields, reference), 27,
         "NTP_REF"),
    text("ntp_orig", "origin timestamp, seconds.micro", offsetof(Fields, origin), 28, "NTP_ORIG"),
    text("ntp_recv", "receive timestamp, seconds.micro", offsetof(Fields, receive), 29, "NTP_RECV"),
    text("ntp_sent", "transmit timestamp, seconds.micro", offsetof(Fields, sent), 30, "NTP_SENT"),
};

constexpr std::uint16_t kNtpPort = 123;
constexpr std::uint32_t kIpfixprobeUnset = 9;  // ipfixprobe never reads delay and dispersion

class NtpPlugin final : public ProcessPluginBase<NtpPlugin> {
public:
    struct State {
        NtpHeader header;
        bool present;
    };

    explicit NtpPlugin(const Options& options)
        : m_mode(options.getString("format") == "ipfixprobe" ? NtpTextMode::Ipfixprobe
                                                             : NtpTextMode::Rfc) {}

    std::string_view name() const noexcept override { return "ntp"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (p.srcPort() != kNtpPort && p.dstPort() != kNtpPort) return kDone;
        State& s = ctx.stateAs<State>();
        s.present = parseNtp(p.payload(), s.header);
        return kFlush;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const auto& rec = ctx.stateAs<State>();
        return rec.present ? std::string_view{"ntp"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& s = ctx.stateAs<State>();
        if (!s.present) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const NtpHeader& h = s.header;
        const bool compat = m_mode == NtpTextMode::Ipfixprobe;
        f->leap = h.leap;
        f->version = h.version;
        f->mode = h.mode;
        f->stratum = h.stratum;
        f->poll = h.poll;
        f->precision = h.precision;
        f->delay = compat ? kIpfixprobeUnset : h.rootDelay;
        f->dispersion = compat ? kIpfixprobeUnset : h.rootDispersion;
        std::array<char, kNtpTextSize> buf{};
        f->refId = out.appendString({buf.data(), formatRefId(h.refId, h.stratum, buf)});
        const auto stamp = [&](std::uint64_t ts) {
            return out.appendString({buf.data(), formatNtpTimestamp(ts, m_mode, buf)});
        };
        f->reference = stamp(h.reference);
        f->origin = stamp(h.origin);
        f->receive = stamp(h.receive);
        f->sent = stamp(h.transmit);
        out.commit();
    }

private:
    NtpTextMode m_mode;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, NtpPlugin,
                         {.name = "ntp",
                          .summary = "NTP header of every NTP packet (UDP 123), one record per "
                                     "packet",
                          .options = kOptions});

}  // namespace rowprobe::ntp
