// MQTT (v3.1.1 and v5) control packets in TCP payloads, ipfixprobe 5.7's mqtt semantics.
//
//   flow's first packet: a CONNECT whose protocol name is "MQTT" ─▶ the flow is MQTT
//   every packet: [type<<4|flags][remaining length][...] [next packet]...
//     every type      → bit (1 << type) of the cumulative type mask
//     CONNECT (1)     → version (4 or 5, else the payload fails), connect flags, keep-alive
//     CONNACK (2)     → session-present bit (bit 0 of the mask), return code
//     PUBLISH (3)     → OR of the publish flags; the topic (no '#') appended as "topic#" while
//                       fewer than `topiccount` topics were seen
//     DISCONNECT (14) → the flow is exported with this packet (flush)
//
// ipfixprobe's remaining-length reader is reproduced: it shifts by 8 bits per byte, keeps the
// continuation bit and sign-extends bytes ≥ 0x80, so a remaining length of 128 or more makes
// the payload fail. A payload fails (false) at the first packet that is malformed or runs
// past the payload; what the packets before it set stays.
//
// MqttState is tier 1 (16 bytes); the topics are tier 2 (MqttTopics), used only when the
// topiccount option is above 0.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::mqtt {

inline constexpr std::size_t kTopicsCap = 1024;

struct MqttState {
    std::uint32_t topicCount = 0;  ///< PUBLISH topics seen (stored or not)
    std::uint16_t typeCumulative = 0;
    std::uint16_t keepAlive = 0;
    std::uint8_t version = 0;
    std::uint8_t connectionFlags = 0;
    std::uint8_t sessionPresent = 0;
    std::uint8_t returnCode = 0;
    std::uint8_t publishFlags = 0;
    std::uint8_t present = 0;       ///< the flow is MQTT: the fields are exported
    std::uint8_t pendingFlush = 0;  ///< a DISCONNECT was read: flush after this packet
};

struct MqttTopics {
    std::uint16_t len = 0;
    char text[kTopicsCap] = {};  ///< "topic1#topic2#..."
    std::string_view view() const noexcept { return {text, len}; }
};

struct MqttResult {
    bool ok = false;          ///< every MQTT packet of the payload parsed
    bool disconnect = false;  ///< a DISCONNECT was read
};

/// The payload starts with an MQTT packet whose first string (after the fixed header) is
/// "MQTT" — a CONNECT. Decides whether a flow is MQTT.
bool mqttHasProtocolName(std::span<const std::uint8_t> payload) noexcept;

/// Reads every MQTT packet of one TCP payload into `s`; topics go to `topics` (may be null:
/// then they are only counted) while s.topicCount < maxTopics.
MqttResult applyMqttPayload(std::span<const std::uint8_t> payload, MqttState& s, MqttTopics* topics,
                            std::uint32_t maxTopics) noexcept;

}  // namespace rowprobe::mqtt
