// The "communityid" process plugin: the Community ID v1 of each exported flow
// (corelight/community-id-spec) as the field `community_id`, so that every output (JSON, text,
// UniRec, IPFIX, Kafka) carries the identifier Zeek, Suricata, nDPI and Elastic compute for the
// same flow. Option `seed` (the spec's seed, 0 by default, as Zeek and Suricata default it) and
// `pen` (the operator's Private Enterprise Number for IPFIX; rowprobe has none of its own).
//
// Cost: nothing per packet. postCreate keeps the first packet's ICMP type and code (the only
// thing the flow record does not give the write hook) and returns kDone; the write hook computes
// the ID, one SHA-1 of at most 40 bytes, when the flow is exported (on the export thread under
// expiry=thread, else on the worker that exports it). It uses the SDK implementation the kafka
// output's key=community-id uses (rowprobe/community_id.hpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "rowprobe/community_id.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::communityid {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "seed",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "Community ID seed (Zeek's CommunityID::seed, Suricata's community-id-seed)",
     .min = 0,
     .max = 65535},
    {.name = "pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "Private Enterprise Number under which IPFIX carries community_id (element 110, "
             "string); 0: not in IPFIX (JSON, text and UniRec carry it)",
     .min = 0,
     .max = 4294967295.0},
};

struct Fields {
    VarRef id;
};

constexpr std::uint16_t kElement = 110;

constexpr FieldSpec kField = {.name = "community_id",
                              .description = "Community ID v1 of the flow (\"1:\" + base64)",
                              .type = FieldType::String,
                              .origin = FieldOrigin::Plugin,
                              .offset = offsetof(Fields, id),
                              .unirec = {"COMMUNITY_ID", "string"}};

constexpr std::uint8_t kIcmp = 1;
constexpr std::uint8_t kIcmpv6 = 58;

class CommunityIdPlugin final : public ProcessPluginBase<CommunityIdPlugin> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    struct State {
        std::uint16_t icmpTypeCode;
    };

    explicit CommunityIdPlugin(const Options& options)
        : m_seed(static_cast<std::uint16_t>(options.getInt("seed"))), m_fields{kField} {
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        if (pen == kPenReverse)
            options.fail("pen", "29305 is the RFC 5103 reverse PEN, not an enterprise's");
        if (pen != 0) m_fields[0].ipfix = {pen, kElement, kIpfixVarLen};
    }

    std::string_view name() const noexcept override { return "communityid"; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        ctx.stateAs<State>().icmpTypeCode = ctx.packet->icmpTypeCode;
        return kDone;
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const FlowView& v = *ctx.flow;
        const std::size_t offset = v.key->ipVersion == 4 ? 12 : 0;
        CommunityIdTuple t;
        t.srcAddr = std::span<const std::uint8_t>(v.srcAddr()).subspan(offset);
        t.dstAddr = std::span<const std::uint8_t>(v.dstAddr()).subspan(offset);
        t.proto = v.proto();
        if (t.proto == kIcmp || t.proto == kIcmpv6) {
            const std::uint16_t tc = ctx.stateAs<State>().icmpTypeCode;
            t.srcPort = static_cast<std::uint16_t>(tc >> 8);
            t.dstPort = static_cast<std::uint16_t>(tc & 0xFF);
        } else {
            t.srcPort = v.srcPort();
            t.dstPort = v.dstPort();
        }
        std::array<char, kCommunityIdLength> id{};
        const char* end = communityId(id.data(), t, m_seed);
        if (end == id.data()) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->id = out.appendString({id.data(), static_cast<std::size_t>(end - id.data())});
        out.commit();
    }

private:
    std::uint16_t m_seed;
    std::array<FieldSpec, 1> m_fields;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, CommunityIdPlugin,
                         {.name = "communityid",
                          .summary = "Community ID v1 of each flow (community_id), seed option",
                          .options = kOptions});

}  // namespace rowprobe::communityid
