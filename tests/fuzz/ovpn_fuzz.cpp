// libFuzzer target for the OpenVPN state machine (process/ovpn): the input is a sequence of
// packets (a 2-byte header each: length, direction/protocol bits), fed to one flow's state.
//
//   ./ovpn_fuzz -max_len=4096 corpus/ovpn_fuzz
#include "fuzz_buffer.hpp"
#include "process/ovpn/ovpn_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::ovpn;
    static const std::array<std::uint8_t, 16> kA = {0, 0, 0,    0,    0, 0, 0, 0,
                                                    0, 0, 0xff, 0xff, 1, 2, 3, 4};
    static const std::array<std::uint8_t, 16> kB = {0, 0, 0,    0,    0, 0, 0, 0,
                                                    0, 0, 0xff, 0xff, 5, 6, 7, 8};
    OvpnState s;
    std::uint64_t packets = 0;
    std::size_t pos = 0;
    while (pos + 2 <= size) {
        const std::size_t len = std::min<std::size_t>(data[pos], size - pos - 2);
        const std::uint8_t bits = data[pos + 1];
        const rowprobe::fuzz::ExactBuffer pkt(data + pos + 2, len);
        const bool fromA = (bits & 1) != 0;
        applyOvpnPacket({.payload = pkt.span(),
                         .payloadWireLen = static_cast<std::uint32_t>(len) * ((bits >> 2) & 7),
                         .proto = (bits & 2) != 0 ? std::uint8_t{6} : std::uint8_t{17},
                         .src = fromA ? &kA : &kB,
                         .dst = fromA ? &kB : &kA},
                        s);
        rowprobe::fuzz::check(s.status <= kData);
        ++packets;
        pos += 2 + len;
    }
    if (finishOvpn(packets, s)) rowprobe::fuzz::check(s.confidence <= 100);
    return 0;
}
