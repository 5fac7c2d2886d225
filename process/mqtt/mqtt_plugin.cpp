// The "mqtt" process plugin: MQTT sessions — cumulative packet types, version, connect flags,
// keep-alive, CONNACK return code, publish flags and (option topiccount) the first published
// topics. A flow is MQTT when its first packet is a CONNECT naming "MQTT"; a DISCONNECT exports
// the flow with that packet. Semantics: mqtt_parser.hpp.
#include <cstddef>
#include <string_view>

#include "process/mqtt/mqtt_parser.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::mqtt {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "topiccount",
     .shortName = "tc",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "export the first N topics of PUBLISH packets, '#'-separated (at most 1 kB of "
             "topics per flow)",
     .min = 0,
     .max = 4294967295.0},
};

struct Fields {
    std::uint16_t typeCumulative;
    std::uint16_t keepAlive;
    std::uint8_t version;
    std::uint8_t connectionFlags;
    std::uint8_t returnCode;
    std::uint8_t publishFlags;
    VarRef topics;
};

constexpr FieldSpec kFields[] = {
    {.name = "mqtt_type_cumulative",
     .description = "bit (1 << type) of every MQTT packet type seen; bit 0: CONNACK session "
                    "present",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, typeCumulative),
     .ipfix = {kPenCesnet, 1033, 2},
     .unirec = {"MQTT_TYPE_CUMULATIVE", "uint16"}},
    {.name = "mqtt_version",
     .description = "protocol level of the last CONNECT (4 = 3.1.1, 5 = 5.0)",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, version),
     .ipfix = {kPenCesnet, 1034, 1},
     .unirec = {"MQTT_VERSION", "uint8"}},
    {.name = "mqtt_connection_flags",
     .description = "connect flags of the last CONNECT",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, connectionFlags),
     .ipfix = {kPenCesnet, 1035, 1},
     .unirec = {"MQTT_CONNECTION_FLAGS", "uint8"}},
    {.name = "mqtt_keep_alive",
     .description = "keep-alive of the last CONNECT, seconds",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, keepAlive),
     .ipfix = {kPenCesnet, 1036, 2},
     .unirec = {"MQTT_KEEP_ALIVE", "uint16"}},
    {.name = "mqtt_connection_return_code",
     .description = "return code of the last CONNACK",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, returnCode),
     .ipfix = {kPenCesnet, 1037, 1},
     .unirec = {"MQTT_CONNECTION_RETURN_CODE", "uint8"}},
    {.name = "mqtt_publish_flags",
     .description = "OR of the PUBLISH packets' flags (DUP, QoS, RETAIN)",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, publishFlags),
     .ipfix = {kPenCesnet, 1038, 1},
     .unirec = {"MQTT_PUBLISH_FLAGS", "uint8"}},
    {.name = "mqtt_topics",
     .description = "first topics of PUBLISH packets, each followed by '#' (option topiccount)",
     .type = FieldType::String,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, topics),
     .ipfix = {kPenCesnet, 1039, kIpfixVarLen},
     .unirec = {"MQTT_TOPICS", "string"}},
};

class MqttPlugin final : public ProcessPluginBase<MqttPlugin> {
public:
    using State = MqttState;
    using Ext = MqttTopics;

    explicit MqttPlugin(const Options& options)
        : m_maxTopics(static_cast<std::uint32_t>(options.getInt("topiccount"))) {}
    std::string_view name() const noexcept override { return "mqtt"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        auto& s = ctx.stateAs<MqttState>();
        if (ctx.flow->proto() != 6 || !mqttHasProtocolName(ctx.packet->payload())) return kDone;
        const MqttResult r = apply(ctx, s);
        if (!r.ok) {
            s = MqttState{};
            ctx.detachExt();
            return kDone;
        }
        s.present = 1;
        if (r.disconnect) s.pendingFlush = 1;  // flushed with the flow's next packet
        return kContinue;
    }

    HookResult preUpdate(FlowContext& ctx) const noexcept {
        auto& s = ctx.stateAs<MqttState>();
        if (s.present == 0) return kDone;
        if (apply(ctx, s).disconnect) s.pendingFlush = 1;
        return kContinue;
    }

    HookResult postUpdate(FlowContext& ctx) const noexcept {
        auto& s = ctx.stateAs<MqttState>();
        if (s.pendingFlush == 0) return kContinue;
        s.pendingFlush = 0;
        return kFlush;
    }

    // The Zeek service name of what the flow carried (rowprobe/process.hpp, FlowServices):
    // reported when write exports an instance.
    std::string_view service(FlowContext& ctx) const noexcept {
        const auto& rec = ctx.stateAs<MqttState>();
        return rec.present != 0 ? std::string_view{"mqtt"} : std::string_view{};
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const auto& s = ctx.stateAs<MqttState>();
        if (s.present == 0) return;
        const MqttTopics* t = ctx.ext<MqttTopics>();
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->typeCumulative = static_cast<std::uint16_t>(s.typeCumulative | s.sessionPresent);
        f->keepAlive = s.keepAlive;
        f->version = s.version;
        f->connectionFlags = s.connectionFlags;
        f->returnCode = s.returnCode;
        f->publishFlags = s.publishFlags;
        f->topics = out.appendString(t != nullptr ? t->view() : std::string_view{});
        out.commit();
    }

private:
    MqttResult apply(FlowContext& ctx, MqttState& s) const noexcept {
        MqttTopics* topics = nullptr;
        if (m_maxTopics > 0 && s.topicCount < m_maxTopics) {
            topics = ctx.ext<MqttTopics>();
            if (topics == nullptr) topics = ctx.attachExt<MqttTopics>();
        }
        return applyMqttPayload(ctx.packet->payload(), s, topics, m_maxTopics);
    }

    std::uint32_t m_maxTopics;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, MqttPlugin,
                         {.name = "mqtt",
                          .summary = "MQTT: packet types, version, connect flags, keep-alive, "
                                     "return code, publish flags, topics",
                          .options = kOptions});

}  // namespace rowprobe::mqtt
