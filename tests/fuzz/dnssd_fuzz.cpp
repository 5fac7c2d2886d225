// libFuzzer target for the DNS-SD record (process/dnssd on the shared DNS parser): up to three
// messages into one record, with each txt mode; the first byte picks framing and mode. The
// record never overflows its arena and the text export stays within its buffer.
//
//   ./dnssd_fuzz -max_len=2048 corpus/dnssd_fuzz
#include "fuzz_buffer.hpp"
#include "process/dnssd/dnssd_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::dns;
    if (size == 0) return 0;
    static const std::vector<DnssdTxtService> kList =
        parseDnssdTxtConfig("_ipp._tcp.local,ty,note\n_device-info._tcp.local,model\n");
    const bool tcp = (data[0] & 1) != 0;
    DnssdOptions opt;
    if ((data[0] & 6) != 0) opt.txt = true;
    if ((data[0] & 6) == 4) {
        opt.filtered = true;
        opt.whitelist = kList;
    }
    DnssdRecord r{};
    std::size_t start = 1;
    for (int n = 0; n < 3 && start <= size; ++n) {
        std::size_t end = start;
        while (end + 1 < size && !(data[end] == 0xFF && data[end + 1] == 0xFE)) ++end;
        if (end + 1 >= size) end = size;
        const rowprobe::fuzz::ExactBuffer msg(data + start, end - start);
        (void)applyDnssdMessage(msg.span(), tcp, opt, r);
        start = end + 2;
    }
    rowprobe::fuzz::check(r.arenaUsed <= kDnssdArenaBytes);
    rowprobe::fuzz::check(r.queryCount <= kDnssdMaxQueries &&
                          r.responseCount <= kDnssdMaxResponses);
    char small[33];
    rowprobe::fuzz::check(dnssdQueriesText(r, small) <= sizeof small);
    rowprobe::fuzz::check(dnssdResponsesText(r, small) <= sizeof small);
    char big[8192];
    (void)dnssdResponsesText(r, big);
    return 0;
}
