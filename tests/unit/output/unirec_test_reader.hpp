// Test-side TRAP receiver and UniRec decoder, written from the formats' description and sharing
// no code with output/unirec: a NEMEA module's view of our streams.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rowprobe::test::unirec {

inline std::vector<std::uint8_t> hex(const std::string& text) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == ' ' || text[i] == '\n') {
            ++i;
            continue;
        }
        out.push_back(static_cast<std::uint8_t>(std::stoul(text.substr(i, 2), nullptr, 16)));
        i += 2;
    }
    return out;
}

// Golden vector A's specifier: ipfixprobe's basic template as libunirec 1.18.2 writes it.
inline const std::string kSpecA =
    "ipaddr DST_IP,ipaddr SRC_IP,uint64 BYTES,uint64 BYTES_REV,uint64 LINK_BIT_FIELD,time "
    "TIME_FIRST,"
    "time TIME_LAST,macaddr DST_MAC,macaddr SRC_MAC,uint32 PACKETS,uint32 PACKETS_REV,uint16 "
    "DST_PORT,"
    "uint16 SRC_PORT,uint8 DIR_BIT_FIELD,uint8 PROTOCOL,uint8 TCP_FLAGS,uint8 TCP_FLAGS_REV";

inline std::vector<std::uint8_t> goldenRecordA() {
    return hex(
        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
        "00 00 00 00 00 00 00 00 0a 00 00 01 ff ff ff ff"
        "e8 03 00 00 00 00 00 00 d0 07 00 00 00 00 00 00"
        "01 00 00 00 00 00 00 00 00 00 00 80 00 f1 53 65"
        "00 00 00 40 01 f1 53 65 66 77 88 99 aa bb 00 11"
        "22 33 44 55 0a 00 00 00 14 00 00 00 bb 01 39 30"
        "00 06 1b 12");
}

/// A field of a receiver-side layout computed from a specifier.
struct Field {
    std::string type;
    std::string name;
    int sortSize = 0;
    std::size_t offset = 0;
};

inline int sortSizeOf(const std::string& type) {
    static const std::map<std::string, int> kSizes = {
        {"int8", 1},     {"uint8", 1},    {"char", 1},    {"int16", 2},     {"uint16", 2},
        {"int32", 4},    {"uint32", 4},   {"float", 4},   {"int64", 8},     {"uint64", 8},
        {"double", 8},   {"macaddr", 6},  {"time", 8},    {"ipaddr", 16},   {"string", -1},
        {"bytes", -1},   {"uint8*", -1},  {"int8*", -1},  {"uint16*", -2},  {"int16*", -2},
        {"uint32*", -4}, {"int32*", -4},  {"float*", -4}, {"macaddr*", -6}, {"uint64*", -8},
        {"int64*", -8},  {"double*", -8}, {"time*", -8},  {"ipaddr*", -16}};
    auto it = kSizes.find(type);
    if (it == kSizes.end()) throw std::runtime_error("unknown type " + type);
    return it->second;
}

/// Parses "type NAME,type NAME" and lays the record out as libunirec does.
struct Layout {
    std::vector<Field> fields;
    std::size_t staticSize = 0;

    explicit Layout(const std::string& spec) {
        std::size_t pos = 0;
        while (pos < spec.size()) {
            std::size_t comma = spec.find(',', pos);
            if (comma == std::string::npos) comma = spec.size();
            const std::string item = spec.substr(pos, comma - pos);
            const std::size_t space = item.find(' ');
            Field f;
            f.type = item.substr(0, space);
            f.name = item.substr(space + 1);
            f.sortSize = sortSizeOf(f.type);
            fields.push_back(f);
            pos = comma + 1;
        }
        std::sort(fields.begin(), fields.end(), [](const Field& a, const Field& b) {
            return a.sortSize != b.sortSize ? a.sortSize > b.sortSize : a.name < b.name;
        });
        for (auto& f : fields) {
            f.offset = staticSize;
            staticSize += f.sortSize > 0 ? static_cast<std::size_t>(f.sortSize) : 4;
        }
    }
    const Field& field(const std::string& name) const {
        for (const auto& f : fields) {
            if (f.name == name) return f;
        }
        throw std::runtime_error("no field " + name);
    }
    std::uint64_t number(const std::vector<std::uint8_t>& rec, const std::string& name) const {
        const Field& f = field(name);
        std::uint64_t v = 0;
        for (int i = f.sortSize - 1; i >= 0; --i)
            v = v << 8 | rec.at(f.offset + static_cast<std::size_t>(i));
        return v;
    }
    std::vector<std::uint8_t> raw(const std::vector<std::uint8_t>& rec,
                                  const std::string& name) const {
        const Field& f = field(name);
        return {rec.begin() + static_cast<std::ptrdiff_t>(f.offset),
                rec.begin() +
                    static_cast<std::ptrdiff_t>(f.offset + static_cast<std::size_t>(f.sortSize))};
    }
    /// ipaddr as text ("10.0.0.1" for the IPv4 form, else IPv6 text).
    std::string ip(const std::vector<std::uint8_t>& rec, const std::string& name) const {
        const auto b = raw(rec, name);
        char text[INET6_ADDRSTRLEN] = {};
        const bool v4 = std::all_of(b.begin(), b.begin() + 8, [](auto x) { return x == 0; }) &&
                        std::all_of(b.begin() + 12, b.end(), [](auto x) { return x == 0xFF; });
        if (v4) {
            inet_ntop(AF_INET, b.data() + 8, text, sizeof text);
        } else {
            inet_ntop(AF_INET6, b.data(), text, sizeof text);
        }
        return text;
    }
    /// time as nanoseconds since the epoch. libunirec's encoder (frac = ns * 0x44B82FA0A >> 32)
    /// lands within (-0.24, +0.02) ns of the true value, so rounding to the nearest ns is exact;
    /// logger's round-up formula is exact at the ms and µs it prints, not always at ns.
    std::uint64_t timeNs(const std::vector<std::uint8_t>& rec, const std::string& name) const {
        const std::uint64_t v = number(rec, name);
        const std::uint64_t frac = v & 0xFFFFFFFFULL;
        return (v >> 32) * 1'000'000'000ULL + (((frac * 1'000'000'000ULL) + 0x80000000ULL) >> 32);
    }
    /// time as logger decodes it, in microseconds.
    std::uint64_t timeUsLogger(const std::vector<std::uint8_t>& rec,
                               const std::string& name) const {
        const std::uint64_t v = number(rec, name);
        const std::uint64_t frac = v & 0xFFFFFFFFULL;
        return (v >> 32) * 1'000'000ULL +
               ((((frac * 1'000'000'000ULL) + 0xFFFFFFFFULL) >> 32) / 1000);
    }
};

/// One record printed as NEMEA `logger -t` prints it (as in ipfixprobe's references): fields in
/// layout order, comma-separated; ipaddr as text, macaddr aa:bb:.., time as
/// YYYY-MM-DDTHH:MM:SS.uuuuuu (UTC), strings double-quoted, bytes as lowercase hex, arrays
/// [a|b|c], floats %f. Variable fields are read through their (offset, length) slots.
inline std::string loggerLine(const Layout& layout, const std::vector<std::uint8_t>& rec) {
    auto le = [&](std::size_t at, std::size_t size) {
        std::uint64_t v = 0;
        for (std::size_t i = size; i-- > 0;) v = v << 8 | rec.at(at + i);
        return v;
    };
    auto timeText = [](std::uint64_t v) {
        const std::uint64_t frac = v & 0xFFFFFFFFULL;
        const std::uint64_t nsec = ((frac * 1'000'000'000ULL) + 0xFFFFFFFFULL) >> 32;
        const time_t sec = static_cast<time_t>(v >> 32);
        tm t{};
        gmtime_r(&sec, &t);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06u", t.tm_year + 1900,
                      t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                      static_cast<unsigned>(nsec / 1000));
        return std::string(buf);
    };
    auto scalar = [&](const std::string& type, std::size_t at) -> std::string {
        if (type == "ipaddr") {
            char text[INET6_ADDRSTRLEN] = {};
            const std::uint8_t* b = rec.data() + at;
            const bool v4 = std::all_of(b, b + 8, [](auto x) { return x == 0; }) &&
                            std::all_of(b + 12, b + 16, [](auto x) { return x == 0xFF; });
            inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? b + 8 : b, text, sizeof text);
            return text;
        }
        if (type == "macaddr") {
            char text[18];
            std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", rec.at(at),
                          rec.at(at + 1), rec.at(at + 2), rec.at(at + 3), rec.at(at + 4),
                          rec.at(at + 5));
            return text;
        }
        if (type == "time") return timeText(le(at, 8));
        if (type == "float") {
            const auto bits = static_cast<std::uint32_t>(le(at, 4));
            float f;
            std::memcpy(&f, &bits, 4);
            char text[64];
            std::snprintf(text, sizeof text, "%f", static_cast<double>(f));
            return text;
        }
        if (type == "double") {
            const std::uint64_t bits = le(at, 8);
            double d;
            std::memcpy(&d, &bits, 8);
            char text[64];
            std::snprintf(text, sizeof text, "%f", d);
            return text;
        }
        const bool isSigned = type.rfind("int", 0) == 0;
        const std::size_t size = static_cast<std::size_t>(sortSizeOf(type));
        const std::uint64_t v = le(at, size);
        if (isSigned) {
            const unsigned shift = static_cast<unsigned>(64 - 8 * size);
            return std::to_string(static_cast<std::int64_t>(v << shift) >> shift);
        }
        return std::to_string(v);
    };
    std::string line;
    for (const Field& f : layout.fields) {
        if (!line.empty()) line += ',';
        if (f.sortSize > 0) {
            line += scalar(f.type, f.offset);
            continue;
        }
        const std::size_t start = layout.staticSize + le(f.offset, 2);
        const std::size_t length = le(f.offset + 2, 2);
        if (start + length > rec.size())
            throw std::runtime_error("slot of " + f.name + " past end");
        if (f.type == "string") {
            line += '"' +
                    std::string(rec.begin() + static_cast<std::ptrdiff_t>(start),
                                rec.begin() + static_cast<std::ptrdiff_t>(start + length)) +
                    '"';
        } else if (f.type == "bytes") {
            char h[3];
            for (std::size_t i = 0; i < length; ++i) {
                std::snprintf(h, sizeof h, "%02x", rec[start + i]);
                line += h;
            }
        } else {
            const std::string element = f.type.substr(0, f.type.size() - 1);
            const auto size = static_cast<std::size_t>(-f.sortSize);
            line += '[';
            for (std::size_t i = 0; i + size <= length; i += size) {
                if (i != 0) line += '|';
                line += scalar(element, start + i);
            }
            line += ']';
        }
    }
    return line;
}

struct Container {
    std::uint32_t payload = 0;
    std::uint64_t sequence = 0;
    std::uint16_t count = 0;
    std::vector<std::vector<std::uint8_t>> messages;
};

/// Parsed stream: hello, then containers (14-byte or 4-byte headers).
struct Stream {
    std::uint8_t format = 0;
    std::string spec;
    std::vector<Container> containers;
    bool eof = false;  ///< a message of size <= 1 was seen

    /// Parses `bytes`; returns false if incomplete or malformed (with `error`).
    bool parse(const std::vector<std::uint8_t>& bytes, bool legacyHeader, std::string& error) {
        if (bytes.size() < 8) return fail(error, "no hello");
        format = bytes[0];
        if (bytes[1] != 0 || bytes[2] != 0 || bytes[3] != 0) return fail(error, "hello padding");
        const std::uint32_t len = be32(&bytes[4]);
        if (bytes.size() < 8 + len) return fail(error, "short spec");
        spec.assign(bytes.begin() + 8, bytes.begin() + 8 + len);
        std::size_t pos = 8 + len;
        const std::size_t header = legacyHeader ? 4 : 14;
        containers.clear();
        while (pos < bytes.size()) {
            if (bytes.size() - pos < header) return fail(error, "short container header");
            Container c;
            c.payload = be32(&bytes[pos]);
            if (!legacyHeader) {
                std::memcpy(&c.sequence, &bytes[pos + 4], 8);
                std::memcpy(&c.count, &bytes[pos + 12], 2);
            }
            if (c.payload > 100000) return fail(error, "payload above 100000");
            pos += header;
            if (bytes.size() - pos < c.payload) return fail(error, "short payload");
            std::size_t m = pos;
            while (m < pos + c.payload) {
                const std::uint16_t l = static_cast<std::uint16_t>(bytes[m] << 8 | bytes[m + 1]);
                if (m + 2 + l > pos + c.payload)
                    return fail(error, "message crosses the container");
                c.messages.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(m + 2),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(m + 2 + l));
                if (l <= 1) eof = true;
                m += 2 + l;
            }
            if (!legacyHeader && c.count != c.messages.size()) return fail(error, "count mismatch");
            pos += c.payload;
            containers.push_back(std::move(c));
        }
        return true;
    }
    std::vector<std::vector<std::uint8_t>> records() const {
        std::vector<std::vector<std::uint8_t>> out;
        for (const auto& c : containers) {
            for (const auto& m : c.messages) {
                if (m.size() > 1) out.push_back(m);
            }
        }
        return out;
    }
    /// libtrap receivers' check: seq(n+1) = seq(n) + count(n), from 0.
    bool sequenceContinuous() const {
        std::uint64_t expect = containers.empty() ? 0 : containers[0].sequence;
        for (const auto& c : containers) {
            if (c.sequence != expect) return false;
            expect += c.count;
        }
        return true;
    }

private:
    static std::uint32_t be32(const std::uint8_t* p) {
        return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
               p[3];
    }
    static bool fail(std::string& error, const char* what) {
        error = what;
        return false;
    }
};

/// A client socket connected to a u: or t: interface; reads everything into `bytes`.
class Client {
public:
    static Client unixSocket(const std::string& path) {
        Client c;
        c.m_fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        if (::connect(c.m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("connect " + path);
        return c;
    }
    static Client tcp(std::uint16_t port) {
        Client c;
        c.m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(c.m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("connect");
        return c;
    }
    Client(Client&& o) noexcept : bytes(std::move(o.bytes)), m_fd(o.m_fd) { o.m_fd = -1; }
    ~Client() {
        if (m_fd >= 0) ::close(m_fd);
    }
    /// Reads whatever arrives within `ms` of silence; returns true at EOF (server closed).
    bool readFor(int ms) {
        for (;;) {
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, ms) != 1) return false;
            std::uint8_t buf[65536];
            const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
            if (n <= 0) return true;
            bytes.insert(bytes.end(), buf, buf + n);
        }
    }
    std::vector<std::uint8_t> bytes;

private:
    Client() = default;
    int m_fd = -1;
};

}  // namespace rowprobe::test::unirec
