// libFuzzer target for the SIP reader (process/sip): detection, then the message parsed as
// its own type and as a request and a response; every field stays within 127 bytes.
//
//   ./sip_fuzz -max_len=2048 corpus/sip_fuzz
#include "fuzz_buffer.hpp"
#include "process/sip/sip_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::sip;
    const rowprobe::fuzz::ExactBuffer in(data, size);
    const std::uint16_t type = sipMessageType(in.span());
    rowprobe::fuzz::check(type <= 10 || type == kTypeStatus);
    for (const std::uint16_t t : {type, std::uint16_t{1}, kTypeStatus}) {
        SipRecord r;
        parseSipMessage(in.span(), t, r);
        for (const SipText* f : {&r.callId, &r.callingParty, &r.calledParty, &r.via, &r.userAgent,
                                 &r.cseq, &r.requestUri})
            rowprobe::fuzz::check(f->len <= kFieldCap);
    }
    return 0;
}
