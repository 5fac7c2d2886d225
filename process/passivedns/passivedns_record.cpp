#include "process/passivedns/passivedns_record.hpp"

#include <cstring>

namespace rowprobe::dns::detail {

bool passiveDnsFromAnswer(std::span<const std::uint8_t> msg, const DnsHeader& h, const DnsRr& rr,
                          PassiveDnsRecord& rec, bool& stop) noexcept {
    char owner[256];
    const NameText o = decodeName(msg, rr.nameOffset, owner);
    if (!o.ok) {
        stop = true;
        return false;
    }
    rec.id = h.id;
    rec.type = rr.type;
    rec.ttl = rr.ttl;
    const std::size_t nameCap = sizeof rec.name - 1;
    if (rr.type == kTypeA || rr.type == kTypeAaaa) {
        const std::size_t len = rr.type == kTypeA ? 4 : 16;
        if (rr.rdLength < len) return false;
        std::memcpy(rec.ip.bytes.data(), msg.data() + rr.rdataOffset, len);
        rec.ip.v6 = rr.type == kTypeAaaa;
        const std::size_t n = std::min(o.len, nameCap);
        std::memcpy(rec.name, owner, n);
        rec.name[n] = 0;
        return true;
    }
    if (rr.type == kTypePtr) {
        const NameText t = decodeName(msg, rr.rdataOffset, {rec.name, nameCap});
        if (!t.ok) {
            stop = true;
            return false;
        }
        rec.name[t.len] = 0;
        return reverseNameToAddress({owner, o.len}, rec.ip);
    }
    return false;
}

}  // namespace rowprobe::dns::detail
