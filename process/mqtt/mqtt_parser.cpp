#include "process/mqtt/mqtt_parser.hpp"

#include <cstring>

namespace rowprobe::mqtt {

namespace {

/// ipfixprobe's read_variable_int (see the header): false when the payload ends while the
/// continuation bit is set.
bool readRemaining(std::span<const std::uint8_t> p, std::size_t& pos, std::uint32_t& out) noexcept {
    std::uint32_t res = 0;
    bool next = true;
    for (; next && pos < p.size(); ++pos) {
        res <<= 8;
        res |=
            static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(p[pos])));
        next = (p[pos] & 0x80) != 0;
    }
    if (pos == p.size() && next) return false;
    out = res;
    return true;
}

/// ipfixprobe's read_utf8_string: a 2-byte length and the bytes, which must end before the
/// payload does.
bool readString(std::span<const std::uint8_t> p, std::size_t& pos, std::string_view& out) noexcept {
    if (pos + 2 >= p.size()) return false;
    const std::size_t len = static_cast<std::size_t>(p[pos] << 8 | p[pos + 1]);
    pos += 2;
    if (pos + len >= p.size()) return false;
    out = {reinterpret_cast<const char*>(p.data()) + pos, len};
    return true;
}

}  // namespace

bool mqttHasProtocolName(std::span<const std::uint8_t> p) noexcept {
    if (p.size() <= 1) return false;
    std::size_t pos = 1;
    std::uint32_t ignored = 0;
    if (!readRemaining(p, pos, ignored)) return false;
    std::string_view name;
    return readString(p, pos, name) && name == "MQTT";
}

MqttResult applyMqttPayload(std::span<const std::uint8_t> p, MqttState& s, MqttTopics* topics,
                            std::uint32_t maxTopics) noexcept {
    MqttResult r;
    if (p.empty()) return r;
    std::size_t pos = 0;
    while (pos < p.size()) {
        const std::uint8_t type = p[pos] >> 4;
        const std::uint8_t flags = p[pos] & 0x0F;
        ++pos;
        s.typeCumulative = static_cast<std::uint16_t>(s.typeCumulative | (1U << type));
        std::uint32_t remaining = 0;
        if (!readRemaining(p, pos, remaining) || pos + remaining > p.size()) return r;
        const std::size_t next = pos + remaining;
        if (type == 1) {  // CONNECT: protocol name (checked at the payload's start), level...
            if (!mqttHasProtocolName(p)) return r;
            pos += 6;
            if (pos >= p.size()) return r;
            s.version = p[pos++];
            if (s.version != 4 && s.version != 5) return r;
            if (pos + 3 > p.size()) return r;
            s.connectionFlags = p[pos++];
            s.keepAlive = static_cast<std::uint16_t>(p[pos] << 8 | p[pos + 1]);
        } else if (type == 2) {  // CONNACK
            if (pos + 2 > p.size()) return r;
            s.sessionPresent = p[pos++] & 1;
            s.returnCode = p[pos++];
        } else if (type == 3) {  // PUBLISH
            s.publishFlags |= flags;
            std::string_view topic;
            if (!readString(p, pos, topic)) return r;
            if (topic.find('#') != std::string_view::npos) return r;
            if (s.topicCount++ < maxTopics && topics != nullptr &&
                topics->len + topic.size() + 1 <= kTopicsCap) {
                std::memcpy(topics->text + topics->len, topic.data(), topic.size());
                topics->text[topics->len + topic.size()] = '#';
                topics->len = static_cast<std::uint16_t>(topics->len + topic.size() + 1);
            }
        } else if (type == 14) {  // DISCONNECT
            r.disconnect = true;
        }
        pos = next;
    }
    r.ok = true;
    return r;
}

}  // namespace rowprobe::mqtt
