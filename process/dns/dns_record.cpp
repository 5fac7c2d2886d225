#include "process/dns/dns_record.hpp"

#include "process/common/dns/dns_parser.hpp"

namespace rowprobe::dns {

bool applyDnsPayload(std::span<const std::uint8_t> payload, bool tcp, DnsRecord& rec) noexcept {
    const auto msg = dnsMessage(payload, tcp);
    DnsHeader h;
    if (!readHeader(msg, h)) return false;
    rec.answers = h.anCount;
    rec.id = h.id;
    rec.rcode = h.rcode();
    DnsCursor cursor(msg, h);
    for (bool first = true;; first = false) {
        DnsQuestion q;
        const DnsStatus st = cursor.nextQuestion(q);
        if (st == DnsStatus::End) break;
        if (st == DnsStatus::Malformed) return false;
        if (st == DnsStatus::Truncated) return true;
        if (first) {
            rec.qtype = q.type;
            rec.qclass = q.qclass;
            const NameText t = decodeName(msg, q.nameOffset, {rec.qname, sizeof rec.qname - 1});
            rec.qname[t.len] = 0;
        }
    }
    for (bool first = true;; first = false) {
        DnsRr rr;
        const DnsStatus st = cursor.nextRr(rr);
        if (st == DnsStatus::End) break;
        if (st == DnsStatus::Malformed) return false;
        if (st == DnsStatus::Truncated) return true;
        if (first && cursor.section() == 0) {
            const RdataText t = formatRdata(msg, rr, {rec.rdata, sizeof rec.rdata - 1});
            if (!t.ok) return false;
            rec.rdata[t.len] = 0;
            rec.rdataLen = static_cast<std::uint16_t>(t.len);
            rec.ttl = rr.ttl;
        }
        if (cursor.section() == 2 && rr.type == kTypeOpt) {
            rec.ednsSize = rr.rclass;
            rec.dnssecOk = static_cast<std::uint8_t>((rr.ttl >> 15) & 1);
        }
    }
    return true;
}

}  // namespace rowprobe::dns
