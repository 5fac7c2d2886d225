// Process-plugin data of an exported flow: how a plugin writes it, how it travels to the
// export thread, and how an output reads it (docs/design/process-runtime.md).
//
//   worker: write hooks ──InstanceWriter──▶ scratch ──ExtRing::waitPush──▶ FlowRecord.ext/extLen
//   export thread: output.write(records) reads each record's instances through
//                  pluginInstances(record) + the plugin's FieldSpecs; then the core releases
//                  the record's bytes (ExtRing::releaseThrough)
//
// A record's plugin data is a sequence of instances, grouped by plugin in -p order:
//   InstanceHeader { u16 plugin (index in the -p list), u16 0, u32 size }  8 bytes
//   data[size]: the plugin's fixed part (its export struct), then its variable part
//   padding to a multiple of 8
// A field of origin Plugin is at FieldSpec::offset of the fixed part. String, Binary and Array
// fields hold a VarRef {offset, length} there, relative to the instance's data, pointing into
// the variable part. Arrays are packed values of FieldSpec::element (host order; timestamps
// as TimeNs). A plugin may write several instances for one flow (passivedns: one per answer);
// an output then writes one record per instance. A flow without plugin data has
// extLen == 0 and costs nothing here.
//
// The bytes are a copy (tier-2 records go back to their pool when the flow is exported), so
// the export thread never touches a worker's flow table. Formatting (escaping, hex, numbers
// as text) happens in the output, on the export thread.
//
// Thread safety: ExtRing is single-producer single-consumer like SpscRing; the readers are
// pure functions of the bytes.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/spsc_ring.hpp"

namespace rowprobe {

/// Largest plugin data of one flow (all plugins, all instances). An instance that would not
/// fit is dropped and counted (CacheStats::pluginDataDropped), never truncated.
inline constexpr std::size_t kMaxPluginData = 64 * 1024;

/// Most process plugins enabled at once (one "wants" bit each in a u32).
inline constexpr std::size_t kMaxProcessPlugins = 32;

/// Where a variable-length value lies inside its instance's data.
struct VarRef {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;  ///< bytes (an array's byte length = count × element size)
};
static_assert(sizeof(VarRef) == 8);

struct InstanceHeader {
    std::uint16_t plugin = 0;
    std::uint16_t reserved = 0;
    std::uint32_t size = 0;
};
static_assert(sizeof(InstanceHeader) == 8);

/// Builds the instances of one flow into a buffer. Used by the flow table around the plugins'
/// write hooks; a plugin calls begin / append* / commit once per instance it exports:
///   auto* f = out.begin<MyFields>();       // zeroed fixed part, or null when full
///   if (f == nullptr) return;
///   f->count = 3;
///   f->name = out.appendString(host);      // VarRef into the variable part
///   out.commit();
class InstanceWriter {
public:
    InstanceWriter(std::uint8_t* buffer, std::size_t capacity) noexcept
        : m_buf(buffer), m_cap(capacity) {}

    /// Set by the flow table before each plugin's write hook.
    void setPlugin(std::uint16_t plugin) noexcept { m_plugin = plugin; }

    /// Starts an instance whose fixed part is a zeroed T. Null when it cannot fit (the instance
    /// is then dropped and counted). Any instance begun and not committed is abandoned.
    template <class T>
    T* begin() noexcept {
        static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 8);
        return static_cast<T*>(beginRaw(sizeof(T)));
    }
    void* beginRaw(std::size_t fixedSize) noexcept {
        m_open = false;
        const std::size_t need = sizeof(InstanceHeader) + fixedSize;
        if (m_used + need > m_cap) {
            ++m_dropped;
            return nullptr;
        }
        m_start = m_used;
        m_end = m_used + need;
        m_open = true;
        m_overflow = false;
        std::memset(m_buf + m_start, 0, need);
        return m_buf + m_start + sizeof(InstanceHeader);
    }
    /// Copies values into the variable part; {0, 0} (and the instance dropped at commit) when
    /// they do not fit.
    template <class T>
    VarRef append(std::span<const T> values) noexcept {
        static_assert(std::is_trivially_copyable_v<T>);
        return appendBytes(values.data(), values.size_bytes());
    }
    VarRef appendString(std::string_view s) noexcept { return appendBytes(s.data(), s.size()); }
    VarRef appendBytes(const void* data, std::size_t n) noexcept {
        if (!m_open || m_overflow) return {};
        if (m_end + n > m_cap) {
            m_overflow = true;
            return {};
        }
        if (n != 0) std::memcpy(m_buf + m_end, data, n);
        const VarRef ref{static_cast<std::uint32_t>(m_end - m_start - sizeof(InstanceHeader)),
                         static_cast<std::uint32_t>(n)};
        m_end += n;
        return ref;
    }
    /// Finishes the instance begun last.
    void commit() noexcept {
        if (!m_open) return;
        m_open = false;
        const std::size_t padded = (m_end + 7) & ~std::size_t{7};
        if (m_overflow || padded > m_cap) {
            ++m_dropped;
            return;
        }
        const InstanceHeader h{m_plugin, 0, static_cast<std::uint32_t>(m_end - m_start - sizeof h)};
        std::memcpy(m_buf + m_start, &h, sizeof h);
        std::memset(m_buf + m_end, 0, padded - m_end);
        m_used = padded;
        ++m_instances;
    }

    std::size_t size() const noexcept { return m_used; }
    const std::uint8_t* data() const noexcept { return m_buf; }
    std::uint32_t instances() const noexcept { return m_instances; }
    std::uint64_t dropped() const noexcept { return m_dropped; }
    void clear() noexcept {
        m_used = 0;
        m_open = false;
        m_instances = 0;
    }

private:
    std::uint8_t* m_buf;
    std::size_t m_cap;
    std::size_t m_used = 0;
    std::size_t m_start = 0;
    std::size_t m_end = 0;
    std::uint16_t m_plugin = 0;
    bool m_open = false;
    bool m_overflow = false;
    std::uint32_t m_instances = 0;
    std::uint64_t m_dropped = 0;
};

/// One exported instance as an output sees it.
struct PluginInstance {
    std::uint16_t plugin = 0;  ///< index of the plugin in the -p list (OutputPlugin::
                               ///< setProcessPlugins gives the list)
    std::span<const std::uint8_t> data;
};

/// Iterates over a record's instances (in plugin order; a plugin's instances are adjacent).
class PluginInstances {
public:
    class Iterator {
    public:
        Iterator(const std::uint8_t* p, const std::uint8_t* end) noexcept : m_p(p), m_end(end) {
            load();
        }
        PluginInstance operator*() const noexcept { return m_cur; }
        Iterator& operator++() noexcept {
            m_p = m_next;
            load();
            return *this;
        }
        bool operator!=(const Iterator& o) const noexcept { return m_p != o.m_p; }
        bool operator==(const Iterator& o) const noexcept { return m_p == o.m_p; }

    private:
        void load() noexcept {
            if (m_p == m_end) return;
            InstanceHeader h;
            if (m_end - m_p < static_cast<std::ptrdiff_t>(sizeof h)) {
                m_p = m_end;  // malformed: stop
                return;
            }
            std::memcpy(&h, m_p, sizeof h);
            const std::size_t room = static_cast<std::size_t>(m_end - m_p) - sizeof h;
            if (h.size > room) {
                m_p = m_end;
                return;
            }
            m_cur = {h.plugin, {m_p + sizeof h, h.size}};
            const std::size_t step = (sizeof h + h.size + 7) & ~std::size_t{7};
            m_next = step >= static_cast<std::size_t>(m_end - m_p) ? m_end : m_p + step;
        }
        const std::uint8_t* m_p;
        const std::uint8_t* m_end;
        const std::uint8_t* m_next = nullptr;
        PluginInstance m_cur;
    };

    PluginInstances(const std::uint8_t* data, std::size_t size) noexcept
        : m_begin(data), m_end(data + size) {}
    Iterator begin() const noexcept { return {m_begin, m_end}; }
    Iterator end() const noexcept { return {m_end, m_end}; }
    bool empty() const noexcept { return m_begin == m_end; }

private:
    const std::uint8_t* m_begin;
    const std::uint8_t* m_end;
};

/// The plugin data of `record` (empty when it has none).
inline PluginInstances pluginInstances(const FlowRecord& record) noexcept {
    return {record.ext, record.ext != nullptr ? record.extLen : 0};
}

/// A record's instances grouped by plugin: the one rule by which every output (ipfix, unirec,
/// json, text, kafka, netflow9) splits a flow's process-plugin instances over output records
/// (docs/design/process-runtime.md):
///
///   instances of the flow          output lines (k = 0 .. N-1, N = most instances of a plugin)
///   pstats  x1                     k=0: pstats[0] dns[0]
///   passivedns x3                  k=1: pstats[0] dns[1]     a plugin with one instance is on
///                                  k=2: pstats[0] dns[2]     every line; one with several has
///                                                            its instance k on line k only
///
/// So a flow whose plugins each have one instance is one line with all of them; passivedns'
/// one-instance-per-answer and netbios' one-per-packet give one line per instance, the flow's
/// other fields repeated (what NEMEA consumers of ipfixprobe's references expect). An output
/// may ask within a subset of the plugins (a UniRec `p=` group, a bit mask): N is then the
/// most instances among the subset, and 0 when none of its plugins is present.
///
/// Layout: m_inst holds the loaded record's instances ordered by plugin (a counting sort, so
/// the rule does not depend on the writer keeping a plugin's instances adjacent); plugin p's
/// are m_inst[m_first[p] .. m_first[p] + m_count[p]).
/// Thread ownership: one per output, export thread only. load() allocates only when a record
/// has more instances than any before it.
class InstanceGroups {
public:
    /// `plugins`: the length of the -p list; instances naming another index are ignored.
    explicit InstanceGroups(std::size_t plugins = 0) noexcept
        : m_plugins(std::min(plugins, kMaxProcessPlugins)) {}
    std::size_t plugins() const noexcept { return m_plugins; }

    /// Reads `record`'s instances (the bytes must outlive the lookups).
    void load(const FlowRecord& record) {
        m_count.fill(0);
        m_lines = 0;
        m_bytes = 0;
        std::size_t n = 0;
        for (const PluginInstance i : pluginInstances(record)) {
            if (i.plugin >= m_plugins) continue;
            ++m_count[i.plugin];
            m_lines = std::max<std::size_t>(m_lines, m_count[i.plugin]);
            m_bytes += i.data.size();
            ++n;
        }
        if (n == 0) return;
        if (n > m_inst.size()) m_inst.resize(n);
        std::array<std::uint32_t, kMaxProcessPlugins> next{};
        std::uint32_t at = 0;
        for (std::size_t p = 0; p < m_plugins; ++p) {
            m_first[p] = at;
            next[p] = at;
            at += m_count[p];
        }
        for (const PluginInstance i : pluginInstances(record)) {
            if (i.plugin < m_plugins) m_inst[next[i.plugin]++] = i;
        }
    }

    /// Output lines of the loaded record: 0 when it has no instance of a listed plugin.
    std::size_t lines() const noexcept { return m_lines; }
    /// Output lines for the plugins in `mask` (bit p = plugin p) only.
    std::size_t lines(std::uint64_t mask) const noexcept {
        std::size_t n = 0;
        for (std::size_t p = 0; p < m_plugins && p < 64; ++p) {
            if ((mask >> p & 1U) != 0) n = std::max<std::size_t>(n, m_count[p]);
        }
        return n;
    }
    /// Bytes of all loaded instances' data.
    std::size_t bytes() const noexcept { return m_bytes; }
    /// Plugin `plugin`'s instance on line `line`, or null when it has none there.
    const PluginInstance* at(std::size_t plugin, std::size_t line) const noexcept {
        if (plugin >= m_plugins) return nullptr;
        const std::size_t n = m_count[plugin];
        if (n == 0 || (n > 1 && line >= n)) return nullptr;
        return &m_inst[m_first[plugin] + std::min(line, n - 1)];
    }

private:
    std::vector<PluginInstance> m_inst;
    std::array<std::uint32_t, kMaxProcessPlugins> m_first{};
    std::array<std::uint32_t, kMaxProcessPlugins> m_count{};
    std::size_t m_plugins = 0;
    std::size_t m_lines = 0;
    std::size_t m_bytes = 0;
};

namespace detail {
template <class T>
T loadAt(std::span<const std::uint8_t> data, std::size_t offset) noexcept {
    T v{};
    if (offset + sizeof(T) <= data.size()) std::memcpy(&v, data.data() + offset, sizeof(T));
    return v;
}
}  // namespace detail

/// An unsigned or timestamp plugin field (Unsigned8/16/32/64, Timestamp) widened to 64 bits;
/// 0 for other types or when out of bounds.
inline std::uint64_t readPluginUnsigned(const FieldSpec& f,
                                        std::span<const std::uint8_t> data) noexcept {
    switch (f.type) {
        case FieldType::Unsigned8:
            return detail::loadAt<std::uint8_t>(data, f.offset);
        case FieldType::Unsigned16:
            return detail::loadAt<std::uint16_t>(data, f.offset);
        case FieldType::Unsigned32:
            return detail::loadAt<std::uint32_t>(data, f.offset);
        case FieldType::Unsigned64:
        case FieldType::Timestamp:
            return detail::loadAt<std::uint64_t>(data, f.offset);
        default:
            return 0;
    }
}

/// A signed plugin field (Int8, Int16, Int32) widened to 64 bits; 0 for other types or when
/// out of bounds.
inline std::int64_t readPluginSigned(const FieldSpec& f,
                                     std::span<const std::uint8_t> data) noexcept {
    switch (f.type) {
        case FieldType::Int8:
            return detail::loadAt<std::int8_t>(data, f.offset);
        case FieldType::Int16:
            return detail::loadAt<std::int16_t>(data, f.offset);
        case FieldType::Int32:
            return detail::loadAt<std::int32_t>(data, f.offset);
        default:
            return 0;
    }
}

/// A Float32 plugin field.
inline float readPluginFloat(const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    return f.type == FieldType::Float32 ? detail::loadAt<float>(data, f.offset) : 0.0F;
}

/// The bytes of a plugin field: the referenced bytes of String, Binary and Array fields, the 16
/// or 6 bytes of IpAddress / MacAddress fields; empty otherwise or when out of bounds.
inline std::span<const std::uint8_t> readPluginBytes(const FieldSpec& f,
                                                     std::span<const std::uint8_t> data) noexcept {
    if (f.type == FieldType::IpAddress || f.type == FieldType::MacAddress) {
        const std::size_t n = fieldTypeSize(f.type);
        if (f.offset + n > data.size()) return {};
        return data.subspan(f.offset, n);
    }
    if (!isVariable(f.type)) return {};
    const auto ref = detail::loadAt<VarRef>(data, f.offset);
    if (ref.offset > data.size() || ref.length > data.size() - ref.offset) return {};
    return data.subspan(ref.offset, ref.length);
}

inline std::string_view readPluginString(const FieldSpec& f,
                                         std::span<const std::uint8_t> data) noexcept {
    const auto b = readPluginBytes(f, data);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

/// An Array field's values.
class ArrayView {
public:
    ArrayView() = default;
    ArrayView(FieldType element, std::span<const std::uint8_t> bytes) noexcept
        : m_element(element), m_bytes(bytes), m_size(bytes.size() / fieldTypeSize(element)) {}
    FieldType element() const noexcept { return m_element; }
    std::size_t size() const noexcept { return m_size; }
    std::span<const std::uint8_t> bytes() const noexcept { return m_bytes; }
    /// Element i of an unsigned / Timestamp array, widened.
    std::uint64_t unsignedAt(std::size_t i) const noexcept {
        const std::size_t o = i * fieldTypeSize(m_element);
        switch (m_element) {
            case FieldType::Unsigned8:
                return detail::loadAt<std::uint8_t>(m_bytes, o);
            case FieldType::Unsigned16:
                return detail::loadAt<std::uint16_t>(m_bytes, o);
            case FieldType::Unsigned32:
                return detail::loadAt<std::uint32_t>(m_bytes, o);
            case FieldType::Unsigned64:
            case FieldType::Timestamp:
                return detail::loadAt<std::uint64_t>(m_bytes, o);
            default:
                return 0;
        }
    }
    /// Element i of an Int8 / Int16 / Int32 array, widened.
    std::int64_t signedAt(std::size_t i) const noexcept {
        const std::size_t o = i * fieldTypeSize(m_element);
        switch (m_element) {
            case FieldType::Int8:
                return detail::loadAt<std::int8_t>(m_bytes, o);
            case FieldType::Int16:
                return detail::loadAt<std::int16_t>(m_bytes, o);
            case FieldType::Int32:
                return detail::loadAt<std::int32_t>(m_bytes, o);
            default:
                return 0;
        }
    }
    float floatAt(std::size_t i) const noexcept {
        return m_element == FieldType::Float32 ? detail::loadAt<float>(m_bytes, i * 4) : 0.0F;
    }

private:
    FieldType m_element = FieldType::Unsigned8;
    std::span<const std::uint8_t> m_bytes;
    std::size_t m_size = 0;
};

inline ArrayView readPluginArray(const FieldSpec& f, std::span<const std::uint8_t> data) noexcept {
    if (f.type != FieldType::Array || isVariable(f.element)) return {};
    return {f.element, readPluginBytes(f, data)};
}

/// Writes the JSON form of plugin field `f` of instance `data`: numbers as numbers (floats in
/// their shortest exact form, null for NaN / infinities), timestamps as quoted ISO 8601 UTC with
/// 9 decimals, addresses quoted, strings quoted with '"', '\\', control characters and bytes
/// >= 0x80 escaped (\u00XX), binary data as quoted lowercase hex (text with FieldHint::Text),
/// arrays as [v,...]. At most pluginValueMaxChars(data.size()) characters. Export thread.
char* formatPluginValueJson(char* out, const FieldSpec& f,
                            std::span<const std::uint8_t> data) noexcept;

/// The writer of plugin field `f`'s JSON form, resolved once per field (an output's start-up):
/// `jsonValueWriter(f)(out, f, data)` writes what formatPluginValueJson(out, f, data) writes,
/// without its dispatch on the field's type (and an array's element type) per value.
using JsonValueFn = char* (*)(char* out, const FieldSpec& f,
                              std::span<const std::uint8_t> data) noexcept;
JsonValueFn jsonValueWriter(const FieldSpec& f) noexcept;

/// An upper bound of formatPluginValueJson's output for one value whose instance has `bytes`
/// bytes; the values of one instance together stay under 6 × bytes + 64 × fields.
constexpr std::size_t pluginValueMaxChars(std::size_t bytes) noexcept { return 6 * bytes + 64; }

/// The byte ring that carries plugin data beside an ExportRing (one producer, one consumer).
/// The producer copies a flow's data in before pushing its FlowRecord (which then points at
/// it); the consumer releases the bytes after the output has written the records.
class ExtRing {
public:
    explicit ExtRing(std::size_t capacity)
        : m_cap(std::bit_ceil(std::max<std::size_t>(capacity, 2 * kMaxPluginData))),
          m_mask(m_cap - 1),
          // not zeroed: bytes are written before they are read, so pages are touched only as
          // the ring first fills (start-up does not fault in megabytes it may never use)
          m_data(std::make_unique_for_overwrite<std::uint8_t[]>(m_cap)) {}
    ExtRing(const ExtRing&) = delete;
    ExtRing& operator=(const ExtRing&) = delete;

    /// Producer: bytes that can be pushed now without waiting (contiguity not included).
    std::size_t freeBytes() const noexcept {
        return m_cap -
               (m_head.load(std::memory_order_relaxed) - m_tail.load(std::memory_order_acquire));
    }
    /// Producer: true when `n` bytes fit now, wrap-around padding included.
    bool fits(std::size_t n) const noexcept {
        const std::uint64_t head = m_head.load(std::memory_order_relaxed);
        const std::size_t off = head & m_mask;
        const std::size_t pad = off + n > m_cap ? m_cap - off : 0;
        return head + pad + n - m_tail.load(std::memory_order_acquire) <= m_cap;
    }
    /// Producer: copies `n` (≤ kMaxPluginData) bytes in; returns where they are, or null when
    /// they do not fit now.
    const std::uint8_t* tryPush(const std::uint8_t* src, std::size_t n) noexcept {
        std::uint64_t head = m_head.load(std::memory_order_relaxed);
        const std::size_t off = head & m_mask;
        const std::size_t pad = off + n > m_cap ? m_cap - off : 0;
        if (head + pad + n - m_tail.load(std::memory_order_acquire) > m_cap) return nullptr;
        head += pad;
        std::uint8_t* dst = m_data.get() + (head & m_mask);
        std::memcpy(dst, src, n);
        m_head.store(head + n, std::memory_order_release);
        return dst;
    }
    /// Producer: as tryPush, waiting for room; null only if `abandon` turns true.
    const std::uint8_t* waitPush(const std::uint8_t* src, std::size_t n,
                                 const std::atomic<bool>& abandon) noexcept {
        for (unsigned spin = 0;; ++spin) {
            if (const std::uint8_t* p = tryPush(src, n)) return p;
            if (abandon.load(std::memory_order_relaxed)) return nullptr;
            spinBackoff(spin);
        }
    }
    /// Consumer: everything up to the end of the blob at `p` (n bytes, pushed here) is free.
    /// Blobs are released in the order they were pushed.
    void releaseThrough(const std::uint8_t* p, std::size_t n) noexcept {
        const std::uint64_t tail = m_tail.load(std::memory_order_relaxed);
        const std::size_t off = static_cast<std::size_t>(p - m_data.get());
        const std::size_t dist = (off - (tail & m_mask)) & m_mask;
        m_tail.store(tail + dist + n, std::memory_order_release);
    }
    /// True when `p` points into this ring.
    bool owns(const std::uint8_t* p) const noexcept {
        return p >= m_data.get() && p < m_data.get() + m_cap;
    }
    std::size_t capacity() const noexcept { return m_cap; }

private:
    static constexpr std::size_t kLine = 64;
    const std::size_t m_cap;
    const std::size_t m_mask;
    std::unique_ptr<std::uint8_t[]> m_data;
    alignas(kLine) std::atomic<std::uint64_t> m_head{0};
    alignas(kLine) std::atomic<std::uint64_t> m_tail{0};
};

}  // namespace rowprobe
