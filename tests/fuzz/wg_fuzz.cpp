// libFuzzer target for the WireGuard classifier (process/wg): every input, both directions;
// a message that is not WireGuard or starts a new session must leave the state unchanged.
//
//   ./wg_fuzz -max_len=256 corpus/wg_fuzz
#include "fuzz_buffer.hpp"
#include "process/wg/wg_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::wg;
    const rowprobe::fuzz::ExactBuffer in(data, size);
    for (const bool forward : {true, false}) {
        WgState s{.srcPeer = 5, .dstPeer = 6, .confidence = 100, .present = 1};
        const WgState before = s;
        const WgVerdict v = applyWgPacket(in.span(), forward, s);
        if (v != WgVerdict::Wg) {
            rowprobe::fuzz::check(s.srcPeer == before.srcPeer && s.dstPeer == before.dstPeer &&
                                  s.confidence == before.confidence);
        } else {
            rowprobe::fuzz::check(s.confidence == 1 || s.confidence == 100);
        }
    }
    return 0;
}
