// libFuzzer target for the conn plugin's tracker (process/conn/conn_tracker.hpp): the input is
// a sequence of 16-byte packet descriptions (direction, flags, sequence and acknowledgement
// numbers, window, payload length) fed to one connection of a protocol chosen by the first
// byte. Whatever the sequence, the summary must be one of Zeek's states, the history must stay
// within its bound and hold only Zeek's letters.
//
//   ./conn_fuzz -max_len=4096 corpus/conn_fuzz
#include <cstring>
#include <string_view>

#include "fuzz_buffer.hpp"
#include "process/conn/conn_tracker.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::conn;
    if (size < 1) return 0;
    const std::uint8_t protos[] = {6, 6, 6, 17, 1};
    const std::uint8_t proto = protos[data[0] % 5];
    ConnState s{};
    constexpr std::size_t kStep = 16;
    for (std::size_t off = 1; off + kStep <= size; off += kStep) {
        const std::uint8_t* p = data + off;
        const auto u32 = [&](std::size_t i) {
            return std::uint32_t{p[i]} << 24 | std::uint32_t{p[i + 1]} << 16 |
                   std::uint32_t{p[i + 2]} << 8 | p[i + 3];
        };
        ConnPacket pkt;
        pkt.proto = proto;
        pkt.fromInitiator = (p[0] & 1) != 0;
        pkt.broadcastDst = (p[0] & 2) != 0;
        pkt.srcPort = (p[0] & 4) != 0 ? 80 : 40000;
        pkt.dstPort = (p[0] & 8) != 0 ? 443 : 40001;
        pkt.tcpFlags = p[1];
        pkt.seq = u32(2);
        pkt.ack = u32(6);
        pkt.window = static_cast<std::uint16_t>(p[10] << 8 | p[11]);
        pkt.payloadLen = u32(12) % 70000;
        connPacket(s, pkt);
    }
    const ConnSummary sum = connSummary(s);
    static constexpr std::string_view kStates[] = {
        "S0", "S1", "SF", "REJ", "S2", "S3", "RSTO", "RSTR", "RSTOS0", "RSTRH", "SH", "SHR", "OTH"};
    bool known = s.started == 0;
    for (const auto st : kStates) known = known || sum.state == st;
    rowprobe::fuzz::check(known);
    rowprobe::fuzz::check(sum.history.size() <= kMaxHistory);
    for (const char c : sum.history)
        rowprobe::fuzz::check(std::strchr("^SHADFRCGTWIQshadfrcgtwiq", c) != nullptr);
    return 0;
}
