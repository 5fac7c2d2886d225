// A small IPFIX decoder and collectors for tests, written from RFC 7011 / RFC 5103 and
// docs/design/wire-formats.md, independently of the encoder: it shares no code with output/ipfix.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rowprobe::test::ipfix {

inline std::uint16_t be16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}
inline std::uint32_t be32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
inline std::uint64_t beN(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v << 8 | p[i];
    return v;
}

struct Element {
    std::uint16_t id = 0;
    std::uint16_t length = 0;
    std::uint32_t pen = 0;
    bool operator==(const Element&) const = default;
};

struct Template {
    std::uint16_t id = 0;
    std::uint16_t scope = 0;  ///< options templates: scope field count (> 0)
    std::vector<Element> elements;
};

struct DataRecord {
    std::uint16_t templateId = 0;
    std::vector<Element> elements;
    std::vector<std::vector<std::uint8_t>> values;

    const std::vector<std::uint8_t>* find(std::uint32_t pen, std::uint16_t id) const {
        for (std::size_t i = 0; i < elements.size(); ++i) {
            if (elements[i].pen == pen && elements[i].id == id) return &values[i];
        }
        return nullptr;
    }
    std::optional<std::uint64_t> number(std::uint32_t pen, std::uint16_t id) const {
        const auto* v = find(pen, id);
        if (v == nullptr) return std::nullopt;
        return beN(v->data(), v->size());
    }
};

/// A basicList value (RFC 6313 §4.5.1) taken apart: the content of a variable-length field
/// of IE 291 (the length prefix already removed by the record decoder).
struct BasicList {
    std::uint8_t semantic = 0;
    Element element;
    std::vector<std::uint64_t> values;  ///< each element as a BE number

    /// Parses `v`; nullopt when malformed (short header, values not a whole number of elements).
    static std::optional<BasicList> parse(const std::vector<std::uint8_t>& v) {
        if (v.size() < 5) return std::nullopt;
        BasicList l;
        l.semantic = v[0];
        const std::uint16_t raw = be16(&v[1]);
        l.element.id = raw & 0x7FFF;
        l.element.length = be16(&v[3]);
        std::size_t at = 5;
        if ((raw & 0x8000) != 0) {
            if (v.size() < 9) return std::nullopt;
            l.element.pen = be32(&v[5]);
            at = 9;
        }
        const std::size_t len = l.element.length;
        if (len == 0 || len > 8 || (v.size() - at) % len != 0) return std::nullopt;
        for (; at < v.size(); at += len) l.values.push_back(beN(&v[at], len));
        return l;
    }
};

struct SetInfo {
    std::uint16_t id = 0;
    std::uint16_t length = 0;
};

struct Message {
    std::uint16_t version = 0;
    std::uint16_t length = 0;
    std::uint32_t exportTime = 0;
    std::uint32_t sequence = 0;
    std::uint32_t domain = 0;
    std::vector<SetInfo> sets;
    std::vector<Template> templates;
    std::vector<DataRecord> records;
    std::vector<DataRecord> options;  ///< records of options templates (RFC 5610 type records)
};

/// Decodes a stream of messages (a file, a TCP stream, or concatenated datagrams), keeping
/// templates per (domain, id) across messages. Any malformation is reported in `error`.
class Decoder {
public:
    bool decode(std::span<const std::uint8_t> bytes, std::vector<Message>& out,
                std::string& error) {
        std::size_t pos = 0;
        while (pos < bytes.size()) {
            if (bytes.size() - pos < 16)
                return fail(error, "truncated message header at " + std::to_string(pos));
            const std::uint8_t* m = bytes.data() + pos;
            Message msg;
            msg.version = be16(m);
            msg.length = be16(m + 2);
            msg.exportTime = be32(m + 4);
            msg.sequence = be32(m + 8);
            msg.domain = be32(m + 12);
            if (msg.version != 10) return fail(error, "version " + std::to_string(msg.version));
            if (msg.length < 16 || msg.length > bytes.size() - pos)
                return fail(error, "bad message length");
            std::size_t s = 16;
            while (s < msg.length) {
                if (msg.length - s < 4) return fail(error, "truncated set header");
                SetInfo set{be16(m + s), be16(m + s + 2)};
                if (set.length < 4 || set.length > msg.length - s)
                    return fail(error, "bad set length");
                msg.sets.push_back(set);
                const std::uint8_t* body = m + s + 4;
                const std::size_t bodyLen = set.length - 4u;
                if (set.id == 2 || set.id == 3) {
                    if (!decodeTemplates(msg, body, bodyLen, error, set.id == 3)) return false;
                } else if (set.id >= 256) {
                    if (!decodeData(msg, set.id, body, bodyLen, error)) return false;
                } else {
                    return fail(error, "reserved set id " + std::to_string(set.id));
                }
                s += set.length;
            }
            pos += msg.length;
            out.push_back(std::move(msg));
        }
        return true;
    }

private:
    static bool fail(std::string& error, std::string what) {
        error = std::move(what);
        return false;
    }

    bool decodeTemplates(Message& msg, const std::uint8_t* p, std::size_t n, std::string& error,
                         bool options) {
        std::size_t i = 0;
        while (n - i >= (options ? 6U : 4U)) {
            Template t;
            t.id = be16(p + i);
            const std::uint16_t count = be16(p + i + 2);
            i += 4;
            if (options) {
                t.scope = be16(p + i);
                i += 2;
                if (t.scope == 0 || t.scope > count) return fail(error, "bad scope count");
            }
            if (t.id < 256) return fail(error, "template id below 256");
            for (std::uint16_t f = 0; f < count; ++f) {
                if (n - i < 4) return fail(error, "truncated template");
                Element e;
                const std::uint16_t raw = be16(p + i);
                e.length = be16(p + i + 2);
                e.id = raw & 0x7FFF;
                i += 4;
                if ((raw & 0x8000) != 0) {
                    if (n - i < 4) return fail(error, "truncated enterprise number");
                    e.pen = be32(p + i);
                    i += 4;
                }
                t.elements.push_back(e);
            }
            m_templates[{msg.domain, t.id}] = t;
            msg.templates.push_back(std::move(t));
        }
        if (i != n) return fail(error, "template set padding");
        return true;
    }

    bool decodeData(Message& msg, std::uint16_t id, const std::uint8_t* p, std::size_t n,
                    std::string& error) {
        auto it = m_templates.find({msg.domain, id});
        if (it == m_templates.end())
            return fail(error, "data set " + std::to_string(id) + " before its template");
        const Template& t = it->second;
        std::size_t minLen = 0;
        for (const auto& e : t.elements) minLen += e.length == 0xFFFF ? 1 : e.length;
        std::size_t i = 0;
        while (n - i >= minLen && minLen > 0) {
            DataRecord r;
            r.templateId = id;
            r.elements = t.elements;
            for (const auto& e : t.elements) {
                std::size_t len = e.length;
                if (len == 0xFFFF) {
                    len = p[i++];
                    if (len == 255) {
                        len = be16(p + i);
                        i += 2;
                    }
                }
                if (n - i < len) return fail(error, "truncated record");
                r.values.emplace_back(p + i, p + i + len);
                i += len;
            }
            (t.scope != 0 ? msg.options : msg.records).push_back(std::move(r));
        }
        if (i != n) return fail(error, "data set has " + std::to_string(n - i) + " trailing bytes");
        return true;
    }

    std::map<std::pair<std::uint32_t, std::uint16_t>, Template> m_templates;
};

/// A TCP collector on 127.0.0.1 that stores every byte of every connection. Port 0 picks a
/// free port; restart() listens again on the same port.
class TcpCollector {
public:
    explicit TcpCollector(std::uint16_t port = 0) { listen(port); }
    ~TcpCollector() { stop(); }

    std::uint16_t port() const { return m_port; }

    void stop() {
        m_running = false;
        if (m_thread.joinable()) m_thread.join();
        if (m_listen >= 0) ::close(m_listen);
        m_listen = -1;
    }
    void restart() {
        stop();
        listen(m_port);
    }
    /// Bytes of each connection so far (copy).
    std::vector<std::vector<std::uint8_t>> connections() const {
        std::lock_guard lock(m_mutex);
        return m_connections;
    }
    std::size_t totalBytes() const {
        std::lock_guard lock(m_mutex);
        std::size_t n = 0;
        for (const auto& c : m_connections) n += c.size();
        return n;
    }

private:
    void listen(std::uint16_t port) {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int one = 1;
        ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("bind");
        ::listen(m_listen, 8);
        socklen_t len = sizeof a;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        m_running = true;
        m_thread = std::thread([this] { loop(); });
    }

    void loop() {
        std::vector<pollfd> fds;
        std::vector<std::size_t> index;  // connection index per client fd
        while (m_running) {
            fds.assign(1, pollfd{m_listen, POLLIN, 0});
            for (const auto& c : m_clients) fds.push_back(pollfd{c.first, POLLIN, 0});
            ::poll(fds.data(), fds.size(), 20);
            if ((fds[0].revents & POLLIN) != 0) {
                const int fd = ::accept(m_listen, nullptr, nullptr);
                if (fd >= 0) {
                    std::lock_guard lock(m_mutex);
                    m_connections.emplace_back();
                    m_clients.emplace_back(fd, m_connections.size() - 1);
                }
            }
            for (std::size_t i = 1; i < fds.size(); ++i) {
                if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
                std::uint8_t buf[65536];
                const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
                if (n > 0) {
                    std::lock_guard lock(m_mutex);
                    auto& c = m_connections[m_clients[i - 1].second];
                    c.insert(c.end(), buf, buf + n);
                } else {
                    ::close(fds[i].fd);
                    m_clients[i - 1].first = -1;
                }
            }
            std::erase_if(m_clients, [](const auto& c) { return c.first < 0; });
        }
        for (auto& c : m_clients) ::close(c.first);  // "killed": unread data is lost
        m_clients.clear();
    }

    int m_listen = -1;
    std::uint16_t m_port = 0;
    std::atomic<bool> m_running{false};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::vector<std::vector<std::uint8_t>> m_connections;
    std::vector<std::pair<int, std::size_t>> m_clients;
};

/// A UDP receiver on 127.0.0.1 (ephemeral port) that keeps every datagram.
class UdpCollector {
public:
    UdpCollector() {
        m_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const int rcvbuf = 8 << 20;
        ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        socklen_t len = sizeof a;
        ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        m_running = true;
        m_thread = std::thread([this] {
            std::vector<std::uint8_t> buf(65536);
            while (m_running) {
                pollfd p{m_fd, POLLIN, 0};
                if (::poll(&p, 1, 20) != 1) continue;
                const ssize_t n = ::recv(m_fd, buf.data(), buf.size(), 0);
                if (n <= 0) continue;
                std::lock_guard lock(m_mutex);
                m_datagrams.emplace_back(buf.begin(), buf.begin() + n);
            }
        });
    }
    ~UdpCollector() {
        m_running = false;
        m_thread.join();
        ::close(m_fd);
    }
    std::uint16_t port() const { return m_port; }
    std::vector<std::vector<std::uint8_t>> datagrams() const {
        std::lock_guard lock(m_mutex);
        return m_datagrams;
    }

private:
    int m_fd = -1;
    std::uint16_t m_port = 0;
    std::atomic<bool> m_running{false};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::vector<std::vector<std::uint8_t>> m_datagrams;
};

/// Polls `done` every 10 ms for up to `seconds` (generous: a limit that is reached only when
/// something is wrong, never on a merely loaded machine).
template <class F>
bool waitUntil(F done, double seconds = 30) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
}

}  // namespace rowprobe::test::ipfix
