// libFuzzer target for the SSDP header reader (process/ssdp): the lists never outgrow their
// buffers and always end in ';'. The first byte chooses IPv4 or IPv6 LOCATION rules; the rest
// is split into up to four messages at 0xFF bytes and fed to one record.
//
//   ./ssdp_fuzz -max_len=2048 corpus/ssdp_fuzz
#include "fuzz_buffer.hpp"
#include "process/ssdp/ssdp_parser.hpp"

namespace {

void checkList(const char* buf, const rowprobe::ssdp::SsdpList& l, std::size_t cap) {
    rowprobe::fuzz::check(l.len < cap);
    rowprobe::fuzz::check(l.len == 0 || buf[l.len - 1] == ';');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::ssdp;
    if (size == 0) return 0;
    const bool v6 = (data[0] & 1) != 0;
    SsdpRecord r;
    std::size_t start = 1;
    for (int n = 0; n < 4 && start <= size; ++n) {
        std::size_t end = start;
        while (end < size && data[end] != 0xFF) ++end;
        const rowprobe::fuzz::ExactBuffer msg(data + start, end - start);
        applySsdpPacket(msg.span(), v6, r);
        start = end + 1;
    }
    checkList(r.nt, r.ntList, kUrnCap);
    checkList(r.st, r.stList, kUrnCap);
    checkList(r.server, r.serverList, kServerCap);
    checkList(r.userAgent, r.userAgentList, kUserAgentCap);
    return 0;
}
