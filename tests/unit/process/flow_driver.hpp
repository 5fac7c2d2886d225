// A test driver for process plugins: one flow fed through one plugin the way the flow table
// drives it (postCreate for the first packet, preUpdate/postUpdate while the plugin wants
// packets, write at export), with a small tier-2 pool; and an Ethernet/IPv4 frame builder.
// Header-only, for the tests in tests/unit/process/.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rowprobe/packet.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::test {

using Bytes = std::vector<std::uint8_t>;

inline Bytes bytesOf(std::string_view s) { return {s.begin(), s.end()}; }

// Ethernet + IPv4 + TCP (proto 6) or UDP (17) carrying `payload`.
inline Bytes frame(std::uint8_t proto, std::array<std::uint8_t, 4> src, std::uint16_t sport,
                   std::array<std::uint8_t, 4> dst, std::uint16_t dport, const Bytes& payload) {
    const std::size_t l4 = proto == 6 ? 20 : 8;
    const std::size_t ipLen = 20 + l4 + payload.size();
    Bytes f(14, 0);
    f[12] = 0x08;
    Bytes ip = {0x45,
                0,
                static_cast<std::uint8_t>(ipLen >> 8),
                static_cast<std::uint8_t>(ipLen),
                0,
                0,
                0x40,
                0,
                64,
                proto,
                0,
                0};
    ip.insert(ip.end(), src.begin(), src.end());
    ip.insert(ip.end(), dst.begin(), dst.end());
    f.insert(f.end(), ip.begin(), ip.end());
    Bytes t = {static_cast<std::uint8_t>(sport >> 8), static_cast<std::uint8_t>(sport),
               static_cast<std::uint8_t>(dport >> 8), static_cast<std::uint8_t>(dport)};
    if (proto == 6) {
        t.insert(t.end(), {0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0});
    } else {
        const std::size_t udpLen = 8 + payload.size();
        t.insert(t.end(),
                 {static_cast<std::uint8_t>(udpLen >> 8), static_cast<std::uint8_t>(udpLen), 0, 0});
    }
    f.insert(f.end(), t.begin(), t.end());
    f.insert(f.end(), payload.begin(), payload.end());
    return f;
}

inline constexpr std::array<std::uint8_t, 4> kClient{10, 0, 0, 1};
inline constexpr std::array<std::uint8_t, 4> kServer{10, 0, 0, 2};

// One flow driven through one plugin the way the flow table drives it.
class FlowDriver {
public:
    explicit FlowDriver(std::string_view pluginString, std::uint32_t poolRecords = 4) {
        auto p = Registry::instance().create(PluginKind::Process, pluginString, "-p");
        m_plugin.reset(static_cast<ProcessPlugin*>(p.release()));
        m_hooks = m_plugin->hooks();
        m_recordSize = (m_hooks.extSize + 63) & ~std::size_t{63};
        m_memory.resize(m_recordSize * (poolRecords + 1) + 64);
        auto* base = reinterpret_cast<std::byte*>(
            (reinterpret_cast<std::uintptr_t>(m_memory.data()) + 63) & ~std::uintptr_t{63});
        m_free.resize(poolRecords + 1);
        m_pool = ExtPool(base, m_free.data(), poolRecords, m_recordSize);
    }

    const ProcessPlugin& plugin() const { return *m_plugin; }
    const ExtPool& pool() const { return m_pool; }

    /// Feeds one packet captured at `ts`; returns what the plugin's hooks returned (OR-ed).
    HookResult packet(const Bytes& f, TimeNs ts = 0) {
        m_frames.push_back(f);
        const Bytes& stored = m_frames.back();
        ParsedPacket pp;
        AnomalyCounters anomalies;
        const RawPacket raw{stored.data(), static_cast<std::uint32_t>(stored.size()),
                            static_cast<std::uint32_t>(stored.size()), ts};
        EXPECT_TRUE(parsePacket(raw, LinkType::Ethernet, ParserConfig{}, pp, anomalies));
        return parsed(pp);
    }

    /// Feeds a packet parsed by the caller (its `frame` wherever the caller keeps it).
    HookResult parsed(const ParsedPacket& pp) {
        const bool first = !m_started;
        if (first) {
            m_key = pp.key;
            m_view.key = &m_key;
            m_view.initiatorIsA = pp.fromA;
            m_started = true;
        }
        FlowContext ctx = context(&pp);
        ctx.forward = pp.fromA == m_view.initiatorIsA;
        HookResult r = kContinue;
        if (first) {
            if (m_hooks.postCreate != nullptr) r |= m_hooks.postCreate(m_hooks.self, ctx);
        } else if (m_wants) {
            if (m_hooks.preUpdate != nullptr) r |= m_hooks.preUpdate(m_hooks.self, ctx);
            if ((r & kFlushReinsert) == 0 && (r & kDone) == 0 && m_hooks.postUpdate != nullptr) {
                r |= m_hooks.postUpdate(m_hooks.self, ctx);
            }
        }
        if ((r & kDone) != 0) m_wants = false;
        return r;
    }

    /// The instances the write hook produces now, as (field name -> value text) maps.
    std::vector<std::map<std::string, std::string>> write() {
        std::vector<std::uint8_t> buf(kMaxPluginData);
        InstanceWriter out(buf.data(), buf.size());
        out.setPlugin(0);
        FlowContext ctx = context(nullptr);
        m_hooks.write(m_hooks.self, ctx, out);
        std::vector<std::map<std::string, std::string>> result;
        for (const PluginInstance inst : PluginInstances(buf.data(), out.size())) {
            std::map<std::string, std::string> m;
            for (const FieldSpec& f : m_plugin->fields())
                m[std::string(f.name)] = text(f, inst.data);
            result.push_back(std::move(m));
        }
        return result;
    }

    /// What the plugin's service hook reports now ("" when it has none or recognised nothing).
    std::string_view service() {
        if (m_hooks.service == nullptr) return {};
        FlowContext ctx = context(nullptr);
        return m_hooks.service(m_hooks.self, ctx);
    }

    /// Clears the flow (what a flush does before the next packet).
    void reset() {
        if (m_handle != 0) m_pool.give(m_handle);
        m_handle = 0;
        m_started = false;
        m_wants = true;
    }

private:
    static std::string text(const FieldSpec& f, std::span<const std::uint8_t> data) {
        static constexpr char kHex[] = "0123456789abcdef";
        switch (f.type) {
            case FieldType::String:
                return std::string(readPluginString(f, data));
            case FieldType::Binary:
            case FieldType::IpAddress: {
                std::string s;
                for (const auto b : readPluginBytes(f, data)) {
                    s += kHex[b >> 4];
                    s += kHex[b & 15];
                }
                return s;
            }
            case FieldType::Array: {
                const ArrayView a = readPluginArray(f, data);
                std::string s = "[";
                for (std::size_t i = 0; i < a.size(); ++i) {
                    s += (i ? "|" : "") + (isSigned(a.element()) ? std::to_string(a.signedAt(i))
                                                                 : std::to_string(a.unsignedAt(i)));
                }
                return s + "]";
            }
            default:
                return std::to_string(readPluginUnsigned(f, data));
        }
    }

    FlowContext context(const ParsedPacket* pp) {
        FlowContext ctx;
        ctx.packet = pp;
        ctx.flow = &m_view;
        ctx.state = m_state.data();
        ctx.extHandle = &m_handle;
        ctx.pool = &m_pool;
        return ctx;
    }

    std::unique_ptr<ProcessPlugin> m_plugin;
    ProcessHooks m_hooks;
    std::size_t m_recordSize = 0;
    std::vector<std::byte> m_memory;
    std::vector<std::uint32_t> m_free;
    ExtPool m_pool;
    std::uint32_t m_handle = 0;
    alignas(8) std::array<std::byte, kMaxProcessState> m_state{};
    FlowKey m_key;
    FlowView m_view;
    bool m_started = false;
    bool m_wants = true;
    std::vector<Bytes> m_frames;
};

}  // namespace rowprobe::test
