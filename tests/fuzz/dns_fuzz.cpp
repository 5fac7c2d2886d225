// libFuzzer target for the DNS message parser (dns and passivedns): walks every question and
// resource record, decodes every name, formats every RDATA and reverse-maps PTR owners. Name
// loops and absurd lengths must end (libFuzzer's -timeout catches a hang); buffers must never
// overflow. The first input byte chooses UDP or TCP framing.
//
//   ./dns_fuzz -max_len=1024 corpus/dns_fuzz
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "process/common/dns/dns_parser.hpp"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool tcp = (data[0] & 1) != 0;
    const std::size_t len = size - 1;
    const auto buf = std::make_unique<std::uint8_t[]>(len == 0 ? 1 : len);
    if (len != 0) std::memcpy(buf.get(), data + 1, len);
    const auto msg = rowprobe::dns::dnsMessage({buf.get(), len}, tcp);

    rowprobe::dns::DnsHeader h;
    if (!rowprobe::dns::readHeader(msg, h)) return 0;
    rowprobe::dns::DnsCursor cursor(msg, h);
    char name[256];
    rowprobe::dns::DnsQuestion q;
    rowprobe::dns::DnsStatus st;
    int questions = 0;
    while ((st = cursor.nextQuestion(q)) == rowprobe::dns::DnsStatus::Ok) {
        check(q.nameOffset < msg.size());
        const auto t = rowprobe::dns::decodeName(msg, q.nameOffset, name);
        check(t.ok && t.len <= sizeof name);
        ++questions;
    }
    check(questions <= h.qdCount);
    if (st != rowprobe::dns::DnsStatus::End) return 0;
    rowprobe::dns::DnsRr rr;
    while (cursor.nextRr(rr) == rowprobe::dns::DnsStatus::Ok) {
        check(std::size_t{rr.rdataOffset} + rr.rdLength <= msg.size());
        const auto t = rowprobe::dns::decodeName(msg, rr.nameOffset, name);
        check(t.len <= sizeof name);
        char text[160];
        const auto r = rowprobe::dns::formatRdata(msg, rr, text);
        check(r.len <= sizeof text);
        if (t.ok) {
            rowprobe::dns::IpAddress ip;
            (void)rowprobe::dns::reverseNameToAddress({name, t.len}, ip);
        }
    }
    return 0;
}
