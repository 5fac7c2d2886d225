// Test helpers for the flow table: hand-built ParsedPackets and a table created through the
// plugin registry whose export ring is drained after every batch.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cache/flow_table.hpp"
#include "cache/frag_cache.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::storage::testing {

constexpr std::uint8_t kFin = 0x01;
constexpr std::uint8_t kSyn = 0x02;
constexpr std::uint8_t kRst = 0x04;
constexpr std::uint8_t kPsh = 0x08;
constexpr std::uint8_t kAck = 0x10;

/// Seconds (decimal allowed) to TimeNs, on top of a realistic epoch offset.
inline TimeNs at(double seconds) {
    return 1'700'000'000ULL * kNsPerSec + static_cast<TimeNs>(std::llround(seconds * 1e9));
}

inline std::array<std::uint8_t, 16> address(std::string_view text) {
    std::array<std::uint8_t, 16> a{};
    const std::string s(text);
    if (s.find(':') != std::string::npos) {
        if (inet_pton(AF_INET6, s.c_str(), a.data()) != 1) throw std::invalid_argument(s);
    } else {
        a[10] = 0xff;
        a[11] = 0xff;
        if (inet_pton(AF_INET, s.c_str(), a.data() + 12) != 1) throw std::invalid_argument(s);
    }
    return a;
}

/// A parsed packet src:sport → dst:dport with a canonical key, as the parser would build it.
inline ParsedPacket packet(std::string_view src, std::uint16_t sport, std::string_view dst,
                           std::uint16_t dport, TimeNs ts, std::uint8_t tcpFlags = 0,
                           std::uint32_t ipLen = 100, std::uint8_t proto = 6) {
    ParsedPacket p;
    p.key.addrA = address(src);
    p.key.addrB = address(dst);
    p.key.proto = proto;
    p.key.ipVersion = src.find(':') != std::string_view::npos ? 6 : 4;
    p.fromA = true;
    setPorts(p, sport, dport);
    p.ts = ts;
    p.ipLen = ipLen;
    p.wireLen = ipLen + 14;
    p.tcpFlags = tcpFlags;
    p.ttl = 64;
    p.hasPorts = true;
    p.srcMac = {0x02, 0, 0, 0, 0, address(src)[15]};
    p.dstMac = {0x02, 0, 0, 0, 0, address(dst)[15]};
    return p;
}

inline std::string addressText(const std::array<std::uint8_t, 16>& a) {
    char buf[INET6_ADDRSTRLEN] = {};
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::equal(std::begin(kMapped), std::end(kMapped), a.begin())) {
        inet_ntop(AF_INET, a.data() + 12, buf, sizeof buf);
    } else {
        inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
    }
    return buf;
}

/// A `cache` table built from a plugin string, with an export ring it drains after every call.
class TableHarness {
public:
    explicit TableHarness(const std::string& pluginString) : m_ring(1 << 16) {
        auto plugin =
            Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, pluginString, "-s");
        m_table.reset(dynamic_cast<CacheTable*>(plugin.get()));
        if (!m_table) throw std::logic_error("'cache' did not build a CacheTable");
        plugin.release();
        m_table->attach(ExportTarget{&m_ring, &m_abandon, 3});
    }

    CacheTable& table() { return *m_table; }

    /// Feeds the packets in batches of `batch` (each batch is one processBatch call).
    void feed(std::vector<ParsedPacket> packets, std::size_t batch = kMaxBatch) {
        for (std::size_t i = 0; i < packets.size(); i += batch) {
            const std::size_t n = std::min(batch, packets.size() - i);
            m_table->processBatch(std::span<ParsedPacket>(packets.data() + i, n));
            drain();
        }
    }
    void feed(const ParsedPacket& p) { feed(std::vector<ParsedPacket>{p}); }
    /// As feed, with each batch's hashes computed first by hashBatch (what the pipeline's
    /// input thread does while the worker is behind) and handed to processHashedBatch.
    void feedHashed(std::vector<ParsedPacket> packets, std::size_t batch = kMaxBatch) {
        std::vector<std::uint64_t> hashes(batch);
        for (std::size_t i = 0; i < packets.size(); i += batch) {
            const std::size_t n = std::min(batch, packets.size() - i);
            const std::span<ParsedPacket> part(packets.data() + i, n);
            if (!m_table->hashBatch(part, hashes.data()))
                throw std::logic_error("'cache' offers no hashes");
            m_table->processHashedBatch(part, hashes.data());
            drain();
        }
    }
    void advanceTime(TimeNs now) {
        m_table->advanceTime(now);
        drain();
    }
    void flushAll() {
        m_table->flushAll();
        drain();
    }

    /// Every record exported so far.
    const std::vector<FlowRecord>& exported() const { return m_exported; }
    std::vector<FlowRecord> exportedWith(EndReason why) const {
        std::vector<FlowRecord> out;
        for (const auto& r : m_exported) {
            if (r.endReason == why) out.push_back(r);
        }
        return out;
    }
    CacheStats stats() const { return m_table->stats(); }

    /// `count` distinct flows (UDP 10.0.0.1:port → 10.9.9.9:53) that all map to `row`.
    std::vector<ParsedPacket> flowsInRow(std::size_t row, std::size_t count, TimeNs ts) const {
        std::vector<ParsedPacket> out;
        for (std::uint32_t port = 1024; out.size() < count && port < 65535; ++port) {
            ParsedPacket p = packet("10.0.0.1", static_cast<std::uint16_t>(port), "10.9.9.9", 53,
                                    ts, 0, 100, 17);
            if (m_table->rowOf(p.key) == row) out.push_back(p);
        }
        if (out.size() != count) throw std::logic_error("not enough flows for the row");
        return out;
    }

    /// The slot view of the flow with `key`, or nullopt.
    std::optional<SlotView> find(const FlowKey& key) const {
        for (const auto& v : m_table->inspectRow(m_table->rowOf(key))) {
            if (v.occupied && v.key == key) return v;
        }
        return std::nullopt;
    }

private:
    void drain() {
        FlowRecord r;
        while (m_ring.tryPop(r)) m_exported.push_back(r);
    }

    ExportRing m_ring;
    std::atomic<bool> m_abandon{false};
    std::unique_ptr<CacheTable> m_table;
    std::vector<FlowRecord> m_exported;
};

}  // namespace rowprobe::storage::testing
