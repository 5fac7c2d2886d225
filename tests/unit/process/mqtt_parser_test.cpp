// MQTT control packets: CONNECT/CONNACK/PUBLISH/DISCONNECT in one or several segments, the
// topic count, ipfixprobe's remaining-length reader, malformed packets; hostile input.
#include "process/mqtt/mqtt_parser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "l7_test_bytes.hpp"

namespace {

using namespace rowprobe::mqtt;

std::vector<std::uint8_t> connect(std::uint8_t level = 4) {
    // CONNECT, remaining 17: "MQTT", level, flags 0xC2, keep-alive 60, client id "abcde"
    return {0x10, 17, 0, 4, 'M', 'Q', 'T', 'T', level, 0xC2, 0, 60, 0, 5, 'a', 'b', 'c', 'd', 'e'};
}
std::vector<std::uint8_t> connack(std::uint8_t code) { return {0x20, 2, 1, code}; }
std::vector<std::uint8_t> publish(const std::string& topic, std::uint8_t flags = 0) {
    std::string p;
    p += static_cast<char>(0x30 | flags);
    p += static_cast<char>(2 + topic.size() + 2);
    p += '\0';
    p += static_cast<char>(topic.size());
    p += topic;
    p += "hi";
    return {p.begin(), p.end()};
}
std::vector<std::uint8_t> operator+(const std::vector<std::uint8_t>& a,
                                    const std::vector<std::uint8_t>& b) {
    std::vector<std::uint8_t> out(a.size() + b.size());
    std::copy(a.begin(), a.end(), out.begin());
    std::copy(b.begin(), b.end(), out.begin() + static_cast<long>(a.size()));
    return out;
}

}  // namespace

TEST(MqttParser, ConnectConnackPublishDisconnect) {
    EXPECT_TRUE(mqttHasProtocolName(connect()));
    EXPECT_FALSE(mqttHasProtocolName(publish("a/b")));
    MqttState s;
    MqttTopics t;
    EXPECT_TRUE(applyMqttPayload(connect(), s, &t, 2).ok);
    EXPECT_EQ(s.version, 4);
    EXPECT_EQ(s.connectionFlags, 0xC2);
    EXPECT_EQ(s.keepAlive, 60);
    EXPECT_TRUE(applyMqttPayload(connack(5), s, &t, 2).ok);
    EXPECT_EQ(s.returnCode, 5);
    EXPECT_EQ(s.sessionPresent, 1);
    // Several packets in one segment; the third topic is counted, not stored.
    const MqttResult r = applyMqttPayload(
        publish("a/b", 0x2) + publish("c", 0x1) + publish("d") + std::vector<std::uint8_t>{0xE0, 0},
        s, &t, 2);
    EXPECT_TRUE(r.ok);
    EXPECT_TRUE(r.disconnect);
    EXPECT_EQ(t.view(), "a/b#c#");
    EXPECT_EQ(s.topicCount, 3U);
    EXPECT_EQ(s.publishFlags, 0x3);
    EXPECT_EQ(s.typeCumulative, (1 << 1) | (1 << 2) | (1 << 3) | (1 << 14));
}

TEST(MqttParser, RejectsWhatIpfixprobeRejects) {
    MqttState s;
    EXPECT_FALSE(applyMqttPayload(connect(3), s, nullptr, 0).ok);  // MQTT 3.1 (MQIsdp era)
    EXPECT_EQ(s.version, 3);  // set before the check, as in ipfixprobe
    MqttState w;
    EXPECT_FALSE(applyMqttPayload(publish("a/#"), w, nullptr, 0).ok);  // wildcard in a topic
    // A remaining length of 128 or more: ipfixprobe's reader sign-extends it into a huge value.
    std::vector<std::uint8_t> big = {0x30, 0x80, 0x01};
    big.resize(200, 'x');
    MqttState b;
    EXPECT_FALSE(applyMqttPayload(big, b, nullptr, 0).ok);
    // Runs past the payload.
    MqttState c;
    EXPECT_FALSE(applyMqttPayload(std::vector<std::uint8_t>{0x20, 5, 0, 0}, c, nullptr, 0).ok);
    EXPECT_FALSE(applyMqttPayload({}, c, nullptr, 0).ok);
}

TEST(MqttParser, TopicsWithoutStorageAreOnlyCounted) {
    MqttState s;
    EXPECT_TRUE(applyMqttPayload(publish("x") + publish("y"), s, nullptr, 5).ok);
    EXPECT_EQ(s.topicCount, 2U);
    MqttTopics t;
    for (int i = 0; i < 200; ++i)
        (void)applyMqttPayload(publish("topic/number/" + std::to_string(i)), s, &t, 1000);
    EXPECT_LE(t.len, kTopicsCap);
    EXPECT_EQ(t.view().back(), '#');
}

TEST(MqttParser, TruncatedAndHostileInput) {
    using rowprobe::test::forEachMutation;
    using rowprobe::test::forEachPrefix;
    const auto session =
        connect() + connack(0) + publish("a/b/c", 3) + std::vector<std::uint8_t>{0xE0, 0};
    MqttState s;
    MqttTopics t;
    forEachPrefix(session, [&](std::span<const std::uint8_t> p) {
        (void)mqttHasProtocolName(p);
        (void)applyMqttPayload(p, s, &t, 100);
    });
    forEachMutation(session, 5000, [&](std::span<const std::uint8_t> p) {
        (void)mqttHasProtocolName(p);
        (void)applyMqttPayload(p, s, &t, 100);
        EXPECT_LE(t.len, kTopicsCap);
    });
}
