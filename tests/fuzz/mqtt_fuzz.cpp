// libFuzzer target for the MQTT reader (process/mqtt): detection and every packet of a
// payload; the first byte is the topic count limit.
//
//   ./mqtt_fuzz -max_len=2048 corpus/mqtt_fuzz
#include "fuzz_buffer.hpp"
#include "process/mqtt/mqtt_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::mqtt;
    if (size == 0) return 0;
    const rowprobe::fuzz::ExactBuffer in(data + 1, size - 1);
    (void)mqttHasProtocolName(in.span());
    MqttState s;
    MqttTopics t;
    (void)applyMqttPayload(in.span(), s, &t, data[0]);
    (void)applyMqttPayload(in.span(), s, nullptr, data[0]);
    rowprobe::fuzz::check(t.len <= kTopicsCap);
    rowprobe::fuzz::check(t.len == 0 || t.text[t.len - 1] == '#');
    return 0;
}
