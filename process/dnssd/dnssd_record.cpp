#include "process/dnssd/dnssd_record.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "process/common/dns/dns_parser.hpp"

namespace rowprobe::dns {

namespace {

constexpr std::size_t kNameBuf = 256;

/// A bounded text builder on a caller's buffer.
struct Builder {
    std::span<char> out;
    std::size_t len = 0;
    void put(std::string_view s) noexcept {
        const std::size_t n = std::min(s.size(), out.size() - len);
        if (n != 0) std::memcpy(out.data() + len, s.data(), n);
        len += n;
    }
    void put(char c) noexcept {
        if (len < out.size()) out[len++] = c;
    }
};

bool store(DnssdRecord& r, std::string_view a, std::string_view b, std::string_view c,
           DnssdSlice& to) noexcept {
    const std::size_t n = a.size() + b.size() + c.size();
    if (n > kDnssdArenaBytes - r.arenaUsed) {
        ++r.dropped;
        return false;
    }
    char* p = r.arena + r.arenaUsed;
    for (const std::string_view s : {a, b, c}) {
        if (!s.empty()) std::memcpy(p, s.data(), s.size());  // an empty view may have no data
        p += s.size();
    }
    to = {r.arenaUsed, static_cast<std::uint16_t>(n)};
    r.arenaUsed = static_cast<std::uint16_t>(r.arenaUsed + n);
    return true;
}

bool store(DnssdRecord& r, std::string_view s, DnssdSlice& to) noexcept {
    return store(r, s, {}, {}, to);
}

bool hasArpa(std::string_view name) noexcept { return name.find("arpa") != std::string_view::npos; }

void addQuery(DnssdRecord& r, std::string_view name) noexcept {
    if (hasArpa(name)) return;
    for (std::size_t i = 0; i < r.queryCount; ++i)
        if (r.text(r.queries[i]) == name) return;
    if (r.queryCount == kDnssdMaxQueries) {
        ++r.dropped;
        return;
    }
    if (store(r, name, r.queries[r.queryCount])) ++r.queryCount;
}

/// What one SRV, HINFO or TXT record says (views into the message or the txt buffer).
struct Rdata {
    std::int32_t srvPort = -1;
    std::string_view target;
    std::string_view hinfo[2];
    std::string_view txt;
};

void addResponse(DnssdRecord& r, std::string_view name, std::uint16_t type,
                 const Rdata& d) noexcept {
    if ((type != kTypeSrv && type != kTypeHinfo && type != kTypeTxt) || hasArpa(name)) return;
    for (std::size_t i = 0; i < r.responseCount; ++i) {
        DnssdResponse& e = r.responses[i];
        if (r.text(e.name) != name) continue;
        if (type == kTypeSrv) {
            if (store(r, d.target, e.target)) e.srvPort = d.srvPort;
        } else if (type == kTypeHinfo) {
            DnssdSlice cpu;
            DnssdSlice os;
            if (store(r, d.hinfo[0], cpu) && store(r, d.hinfo[1], os)) {
                e.hinfo[0] = cpu;
                e.hinfo[1] = os;
            }
        } else if (!d.txt.empty() && r.text(e.txt).find(d.txt) == std::string_view::npos) {
            const std::string_view old = r.text(e.txt);
            store(r, old, d.txt, ":", e.txt);
        }
        return;
    }
    if (r.responseCount == kDnssdMaxResponses) {
        ++r.dropped;
        return;
    }
    DnssdResponse e;
    if (!store(r, name, e.name)) return;
    bool ok = true;
    if (type == kTypeSrv) {
        e.srvPort = d.srvPort;
        ok = store(r, d.target, e.target);
    } else if (type == kTypeHinfo) {
        ok = store(r, d.hinfo[0], e.hinfo[0]) && store(r, d.hinfo[1], e.hinfo[1]);
    } else {
        ok = store(r, d.txt, e.txt);
    }
    if (ok) r.responses[r.responseCount++] = e;
}

bool txtKeyListed(const DnssdTxtService& s, std::string_view txt) noexcept {
    const std::string_view key = txt.substr(0, txt.find('='));
    return std::any_of(s.keys.begin(), s.keys.end(),
                       [&](const std::string& k) { return k == key; });
}

/// Reads the RDATA of an SRV, HINFO or TXT record; false when the SRV target cannot be decoded
/// (ipfixprobe drops the message then).
bool readRdata(std::span<const std::uint8_t> msg, const DnsRr& rr, std::string_view owner,
               const DnssdOptions& opt, char (&target)[kNameBuf], Builder& txt, Rdata& d) noexcept {
    const std::size_t at = rr.rdataOffset;
    const std::span<const std::uint8_t> rd = msg.subspan(at, rr.rdLength);
    const auto chars = [](std::span<const std::uint8_t> s) {
        return std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
    };
    if (rr.type == kTypeSrv) {
        if (at + 6 > msg.size()) return false;
        d.srvPort = msg[at + 4] << 8 | msg[at + 5];
        const NameText t = decodeName(msg, at + 6, target);
        if (!t.ok) return false;
        d.target = {target, t.len};
    } else if (rr.type == kTypeHinfo) {
        // Two character-strings (CPU, OS); a length running past the RDATA is cut at its end.
        std::size_t pos = 0;
        for (std::string_view& h : d.hinfo) {
            if (pos >= rd.size()) break;
            const std::size_t n = std::min<std::size_t>(rd[pos], rd.size() - pos - 1);
            h = chars(rd.subspan(pos + 1, n));
            pos += 1 + n;
        }
    } else if (rr.type == kTypeTxt && opt.txt) {
        const DnssdTxtService* service = nullptr;
        if (opt.filtered) {
            const std::string_view wanted = dnssdServiceOf(owner);
            for (const DnssdTxtService& s : opt.whitelist)
                if (s.service == wanted) service = &s;
            if (service == nullptr) return true;
        }
        for (std::size_t pos = 0; pos < rd.size();) {
            const std::size_t n = rd[pos];
            if (pos + 1 + n > rd.size()) break;
            const std::string_view s = chars(rd.subspan(pos + 1, n));
            if (service == nullptr || txtKeyListed(*service, s)) {
                txt.put(s);
                txt.put(':');
            }
            pos += 1 + n;
        }
        d.txt = {txt.out.data(), txt.len};
    }
    return true;
}

}  // namespace

std::string_view dnssdServiceOf(std::string_view name) noexcept {
    std::size_t begin = name.size();
    for (int found = 0; found < 2;) {
        if (begin == 0) return name;
        const std::size_t u = name.rfind('_', begin - 1);
        if (u == std::string_view::npos) return name;
        begin = u;
        ++found;
    }
    return name.substr(begin);
}

std::vector<DnssdTxtService> parseDnssdTxtConfig(std::string_view content) {
    std::vector<DnssdTxtService> out;
    while (!content.empty()) {
        const std::size_t eol = content.find('\n');
        std::string_view line = content.substr(0, eol);
        content = eol == std::string_view::npos ? std::string_view{} : content.substr(eol + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        DnssdTxtService s;
        std::size_t comma = line.find(',');
        s.service = std::string(line.substr(0, comma));
        while (comma != std::string_view::npos) {
            line = line.substr(comma + 1);
            comma = line.find(',');
            s.keys.emplace_back(line.substr(0, comma));
        }
        out.push_back(std::move(s));
    }
    return out;
}

bool applyDnssdMessage(std::span<const std::uint8_t> payload, bool tcp, const DnssdOptions& opt,
                       DnssdRecord& r) noexcept {
    const auto msg = dnsMessage(payload, tcp);
    DnsHeader h;
    if (!readHeader(msg, h)) return false;
    DnsCursor cursor(msg, h);
    char name[kNameBuf];
    DnsQuestion q;
    for (;;) {
        const DnsStatus st = cursor.nextQuestion(q);
        if (st == DnsStatus::End) break;
        if (st == DnsStatus::Truncated) return true;
        if (st == DnsStatus::Malformed) return false;
        const NameText t = decodeName(msg, q.nameOffset, name);
        addQuery(r, {name, t.len});
    }
    DnsRr rr;
    for (;;) {
        const DnsStatus st = cursor.nextRr(rr);
        if (st == DnsStatus::End || st == DnsStatus::Truncated) return true;
        if (st == DnsStatus::Malformed) return false;
        const NameText t = decodeName(msg, rr.nameOffset, name);
        if (!t.ok) return false;
        const std::string_view owner(name, t.len);
        const int section = cursor.section();
        if (section == 2 && rr.type == kTypeOpt) continue;
        char target[kNameBuf];
        char txtBuf[kDnssdMaxTxt];
        Builder txt{txtBuf};
        Rdata d;
        if (!readRdata(msg, rr, owner, opt, target, txt, d)) return false;
        // Known answers in a query are not the host's own services; its probes (authority
        // section) are.
        if (section == 1 || h.isResponse()) addResponse(r, owner, rr.type, d);
    }
}

std::size_t dnssdQueriesText(const DnssdRecord& r, std::span<char> out) noexcept {
    Builder b{out};
    for (std::size_t i = 0; i < r.queryCount; ++i) {
        b.put(r.text(r.queries[i]));
        b.put(';');
    }
    return b.len;
}

std::size_t dnssdResponsesText(const DnssdRecord& r, std::span<char> out) noexcept {
    Builder b{out};
    for (std::size_t i = 0; i < r.responseCount; ++i) {
        const DnssdResponse& e = r.responses[i];
        b.put(r.text(e.name));
        b.put(';');
        char port[16];
        const int n = std::snprintf(port, sizeof port, "%d", static_cast<int>(e.srvPort));
        b.put(std::string_view(port, static_cast<std::size_t>(n)));
        b.put(';');
        b.put(r.text(e.target));
        b.put(';');
        if (e.hinfo[0].len != 0 || e.hinfo[1].len != 0) {
            b.put(r.text(e.hinfo[0]));
            b.put(':');
            b.put(r.text(e.hinfo[1]));
        }
        b.put(';');
        b.put(r.text(e.txt));
        b.put(';');
    }
    return b.len;
}

}  // namespace rowprobe::dns
