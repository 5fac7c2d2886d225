// The policy ABI's layout facts: every type a row-policy shared object compiles in with
// FlowTable<P, L> (the table's non-template base and everything it holds, the records, the
// plugin dispatch, expiry and admission state, what crosses to the export thread and the
// host), each with its size and alignment, the offsets of the record's fields (which the
// table and the policies read in place), plus the constants that size the table's arrays.
//
//   kCacheLayout[]             { name, size, align }   one entry per type or constant
//   cacheLayoutFingerprintOf() FNV-1a over every entry (name bytes, size, align)
//
// A policy library stores the fingerprint it was compiled with in its descriptor
// (ROWPROBE_EXPORT_ROW_POLICY); the host refuses a library whose fingerprint differs from its
// own (registerRowPolicyLibrary), so a table laid out differently on either side never runs.
// Adding a member type to the table adds an entry here; tests/unit/storage/cache_layout_test.cpp
// holds the expected sizes and fails when one changes, and checks that each entry changes the
// fingerprint. kCacheAbiRevision covers what sizes cannot see (virtual functions of CacheTable,
// the meaning of a field): raise it by hand when those change.
//
// Thread ownership: constants. Costs: compile time only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cache/admission.hpp"
#include "cache/expiry.hpp"
#include "cache/flood_detector.hpp"
#include "cache/frag_cache.hpp"
#include "cache/hash.hpp"
#include "cache/process_dispatch.hpp"
#include "cache/row.hpp"
#include "cache/row_policy.hpp"
#include "cache/slot.hpp"
#include "cache/table_base.hpp"
#include "cache/table_config.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::storage {

/// Raised by hand when the table's interface changes in a way no size shows.
inline constexpr std::size_t kCacheAbiRevision = 2;

struct LayoutFact {
    std::string_view name;
    std::size_t size = 0;
    std::size_t align = 0;
};

#define ROWPROBE_LAYOUT_FACT(T) \
    LayoutFact { #T, sizeof(T), alignof(T) }
#define ROWPROBE_LAYOUT_VALUE(V) \
    LayoutFact { #V, static_cast < std::size_t>(V), 0 }
#define ROWPROBE_LAYOUT_OFFSET(T, M) \
    LayoutFact { #T "::" #M, offsetof(T, M), 0 }

inline constexpr std::array kCacheLayout = {
    ROWPROBE_LAYOUT_VALUE(kCacheAbiRevision),
    // The table and its parts outside the template.
    ROWPROBE_LAYOUT_FACT(TableBase),
    ROWPROBE_LAYOUT_FACT(TableConfig),
    ROWPROBE_LAYOUT_FACT(FloodConfig),
    ROWPROBE_LAYOUT_FACT(HashFunction),
    ROWPROBE_LAYOUT_FACT(FragCache),
    ROWPROBE_LAYOUT_FACT(SweepPace),
    ROWPROBE_LAYOUT_FACT(RowLocks),
    ROWPROBE_LAYOUT_FACT(SweepCounters),
    ROWPROBE_LAYOUT_FACT(Admission),
    ROWPROBE_LAYOUT_FACT(FloodDetector),
    ROWPROBE_LAYOUT_FACT(ProcessDispatch),
    ROWPROBE_LAYOUT_FACT(SlotView),
    // Records and what the policy sees.
    ROWPROBE_LAYOUT_FACT(CachedFlow),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, key),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, timeLast),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, packets),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, timeFirst),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, bytes),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, hashHi),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, icmpTypeCode),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, tcpFlags),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, ttl),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, srcMac),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, dstMac),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, initiatorIsA),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, tunnelled),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, inlineState),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, pluginWants),
    ROWPROBE_LAYOUT_OFFSET(CachedFlow, extHandles),
    ROWPROBE_LAYOUT_FACT(PacketContext),
    ROWPROBE_LAYOUT_FACT(FlowKey),
    ROWPROBE_LAYOUT_FACT(ParsedPacket),
    // What crosses to the host, the export thread and the process plugins.
    ROWPROBE_LAYOUT_FACT(ExportTarget),
    ROWPROBE_LAYOUT_FACT(FlowRecord),
    ROWPROBE_LAYOUT_FACT(FlowTunnel),
    ROWPROBE_LAYOUT_FACT(CacheStats),
    ROWPROBE_LAYOUT_FACT(ExtPool),
    ROWPROBE_LAYOUT_FACT(ExtRing),
    ROWPROBE_LAYOUT_FACT(InstanceWriter),
    ROWPROBE_LAYOUT_FACT(ProcessHooks),
    ROWPROBE_LAYOUT_FACT(FlowContext),
    ROWPROBE_LAYOUT_FACT(FlowView),
    // Constants that size the table's arrays and buffers.
    ROWPROBE_LAYOUT_VALUE(kMaxLine),
    ROWPROBE_LAYOUT_VALUE(kMaxBatch),
    ROWPROBE_LAYOUT_VALUE(kMaxPluginData),
    ROWPROBE_LAYOUT_VALUE(kMaxProcessPlugins),
    ROWPROBE_LAYOUT_VALUE(kEndReasonSlots),
};

#undef ROWPROBE_LAYOUT_FACT
#undef ROWPROBE_LAYOUT_VALUE
#undef ROWPROBE_LAYOUT_OFFSET

namespace detail {

/// FNV-1a over the facts (name, size, align), so a renamed, added, removed or resized entry
/// changes it.
template <std::size_t N>
constexpr std::uint64_t layoutFingerprint(const std::array<LayoutFact, N>& facts) noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
    for (const LayoutFact& f : facts) {
        for (const char c : f.name) mix(static_cast<unsigned char>(c));
        mix(f.size);
        mix(f.align);
    }
    return h;
}

constexpr std::uint64_t cacheLayoutFingerprintOf() noexcept {
    return layoutFingerprint(kCacheLayout);
}

}  // namespace detail

}  // namespace rowprobe::storage
