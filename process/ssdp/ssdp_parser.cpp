#include "process/ssdp/ssdp_parser.hpp"

#include <algorithm>
#include <cstring>

namespace rowprobe::ssdp {

namespace {

enum class Header : std::uint8_t { Location, Nt, St, Server, UserAgent };

constexpr std::string_view kNames[] = {"location", "nt", "st", "server", "user-agent"};

bool isSpace(std::uint8_t c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }

char lower(std::uint8_t c) noexcept {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/// If the bytes at `pos` (before `end`) are `name` (any case) then ':', moves `pos` past the
/// ':' and the white space after it and returns true.
bool takeName(std::span<const std::uint8_t> p, std::size_t& pos, std::size_t end,
              std::string_view name) noexcept {
    if (end - pos < name.size() + 1) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (lower(p[pos + i]) != name[i]) return false;
    if (p[pos + name.size()] != ':') return false;
    pos += name.size() + 1;
    while (pos < end && isSpace(p[pos])) ++pos;
    return true;
}

int digitValue(std::uint8_t c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

}  // namespace

void appendSsdpValue(char* buf, std::size_t cap, SsdpList& list, std::string_view value) noexcept {
    const std::size_t cur = list.len;
    if (cur + value.size() + 1 >= cap) return;
    // ipfixprobe's scan: start positions 0 .. cur - len - 1 (the list ends in ';', so the last
    // complete value is still found).
    if (cur >= value.size()) {
        for (std::size_t i = 0; i < cur - value.size(); ++i)
            if (std::memcmp(buf + i, value.data(), value.size()) == 0) return;
    }
    std::memcpy(buf + cur, value.data(), value.size());
    buf[cur + value.size()] = ';';
    list.len = static_cast<std::uint16_t>(cur + value.size() + 1);
}

std::uint16_t ssdpLocationPort(std::span<const std::uint8_t> p, std::size_t begin, std::size_t end,
                               bool ipv6) noexcept {
    const std::size_t len = end - begin;
    std::size_t i = begin;
    const std::uint8_t mark = ipv6 ? ']' : '.';
    while (i < end && p[i] != mark) ++i;
    if (i == end) return 0;
    // ipfixprobe searches for ':' over the value's length from the mark (so possibly past the
    // line); the search stays inside the payload here.
    const std::size_t stop = std::min(p.size(), i + len);
    while (i < stop && p[i] != ':') ++i;
    if (i >= stop) return 0;
    ++i;
    // strtol(s, &end, 0)
    while (i < p.size() && isSpace(p[i])) ++i;
    bool negative = false;
    if (i < p.size() && (p[i] == '+' || p[i] == '-')) negative = p[i++] == '-';
    int base = 10;
    if (i < p.size() && p[i] == '0') {
        base = 8;
        if (i + 2 < p.size() && (p[i + 1] == 'x' || p[i + 1] == 'X') && digitValue(p[i + 2]) < 16) {
            base = 16;
            i += 2;
        }
    }
    std::uint64_t v = 0;
    bool any = false;
    constexpr std::uint64_t kLongMax = 0x7FFFFFFFFFFFFFFFULL;
    for (; i < p.size(); ++i) {
        const int d = digitValue(p[i]);
        if (d >= base) break;
        any = true;
        v = v > (kLongMax - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base)
                ? kLongMax + (negative ? 1 : 0)
                : v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
    }
    if (!any) return 0;
    return static_cast<std::uint16_t>(negative ? (~v + 1) : v);
}

void applySsdpPacket(std::span<const std::uint8_t> p, bool ipv6, SsdpRecord& r) noexcept {
    if (p.empty()) return;
    static constexpr Header kNotify[] = {Header::Nt, Header::Location, Header::Server};
    static constexpr Header kSearch[] = {Header::St, Header::UserAgent};
    std::span<const Header> select;
    if (p[0] == 'N') {
        select = kNotify;
    } else if (p[0] == 'M') {
        select = kSearch;
    } else {
        return;
    }
    std::size_t line = 0;
    for (std::size_t i = 0; i < p.size() && p[i] != 0; ++i) {
        if (p[i] != '\n' || i == 0 || p[i - 1] != '\r') continue;
        const std::size_t end = i - 1;  // the CR
        for (const Header h : select) {
            std::size_t v = line;
            if (!takeName(p, v, end, kNames[static_cast<std::size_t>(h)])) continue;
            // An empty value: ipfixprobe's white-space skip runs into the next line and its
            // value length goes negative, so nothing is taken.
            if (v >= end) break;
            const auto text = [&](std::size_t from) {
                return std::string_view(reinterpret_cast<const char*>(p.data()) + from, end - from);
            };
            switch (h) {
                case Header::Nt:
                case Header::St:
                    if (takeName(p, v, end, "urn") && v < end) {
                        if (h == Header::Nt) {
                            appendSsdpValue(r.nt, kUrnCap, r.ntList, text(v));
                        } else {
                            appendSsdpValue(r.st, kUrnCap, r.stList, text(v));
                        }
                    }
                    break;
                case Header::Location:
                    if (const std::uint16_t port = ssdpLocationPort(p, v, end + 1, ipv6); port > 0)
                        r.locationPort = port;
                    break;
                case Header::Server:
                    appendSsdpValue(r.server, kServerCap, r.serverList, text(v));
                    break;
                case Header::UserAgent:
                    appendSsdpValue(r.userAgent, kUserAgentCap, r.userAgentList, text(v));
                    break;
            }
            break;
        }
        line = i + 1;
    }
}

}  // namespace rowprobe::ssdp
