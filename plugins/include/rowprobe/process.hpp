// The process-plugin SDK: what a plugin implements, what it sees per packet, and how the flow
// table calls it (docs/design/process-runtime.md).
//
//   -p 'pstats;includezeroes'  ──▶ Registry (PluginKind::Process) ──▶ ProcessPlugin (one
//                                  instance, shared by every worker: hooks are const)
//   start-up: storage->enableProcessPlugins(all -p plugins, in -p order)
//     the cache (storage/cache/process_dispatch.hpp) resolves each plugin's ProcessHooks into
//     per-hook arrays of plugin indexes and places each plugin's per-flow data:
//       in the flow record (CachedFlow, storage/cache/row.hpp, read with the record anyway):
//         pluginWants u32      bit i set while plugin i still takes this flow's packets
//         extHandles  4 x u32  tier-2 handles of the first four plugins that have tier 2
//         inlineState 2 bytes  tier-1 state of the first plugin whose state is 1-2 bytes
//       in a per-slot plugin area beside the records (one stride per slot, 8-byte aligned):
//         [ plugin 0: (tier-2 handle u32) | tier-1 state ][ plugin 1: ... ] ...
//         (a handle here only for plugins that have none in the record, state only when it
//         is not inline; no area at all when nothing lands in it)
//     (tier-1 = `stateSize` bytes, zeroed when the flow is created; tier-2 = a per-worker
//     bounded pool of `extSize`-byte records, taken with FlowContext::attachExt)
//   per packet, inside the table's update step, in arrival order:
//     new flow:      create → postCreate (every plugin that has it)
//     existing flow: preUpdate → count the packet → postUpdate (only plugins whose "wants"
//                    bit is set for this flow: a flow no plugin wants costs one test)
//   per exported flow (worker, or the export thread under expiry=thread):
//     preExport (not for flushed flows, as in ipfixprobe) → service (each plugin names the
//     protocol it recognised, FlowServices) → write (sees the services): the plugin serialises 0..n
//     instances into an InstanceWriter; the bytes travel with the FlowRecord through the
//     export ring (rowprobe/plugin_data.hpp), and the export thread formats them.
//
// Hook results (HookResult bits, ipfixprobe's values for the flushes):
//   kFlush          postCreate: export the new one-packet flow now.
//                   preUpdate:  export the flow WITHOUT this packet (end reason forced), and
//                               drop the packet (ipfixprobe's FLOW_FLUSH from pre_update).
//                   postUpdate: export the flow with this packet, end reason forced.
//   kFlushReinsert  preUpdate:  export the flow without this packet (forced end), then start a
//                               new flow in the same slot: same key and orientation, counters
//                               cleared, TIME_FIRST = the old TIME_LAST, the packet counted in
//                               its direction relative to the old record, plugin state cleared,
//                               postCreate hooks run again (they may flush again).
//                   postUpdate: the same, but the exported flow includes the packet, and the
//                               new one counts it again (ipfixprobe does exactly this).
//                   postCreate: as kFlush.
//   kDone           this plugin wants no more packets of this flow: its preUpdate/postUpdate
//                   are never called again for it (its state and export hooks still are).
//   Flushed flows skip preExport (ipfixprobe: only expiry, eviction and end of input run it).
//
// Threads: one plugin object serves every worker. Hooks are const and may run concurrently on
// different flows; per-flow data lives only in the tier-1 state and the tier-2 record. Under
// `expiry=thread` preExport and write may run on the export thread (under the row's lock).
// Nothing in a hook may allocate, lock, throw or log: it runs on the packet path.
//
// Writing a plugin: derive from ProcessPluginBase<YourPlugin>, give it the const member
// functions you need (postCreate, preUpdate, postUpdate, preExport, write, touch; a member with
// a hook's name and another signature, or with ipfixprobe's name of a hook, does not compile:
// detail::checkHookSignatures), a `State` type for tier 1 (optional) and an `Ext` type for
// tier 2 (optional), declare fields (fields.hpp, origin Plugin) and register it with
// ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, ...).
// docs/writing-a-process-plugin.md walks through one.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe {

/// Bits a hook returns. kFlush and kFlushReinsert have ipfixprobe's values (FLOW_FLUSH = 0x1,
/// FLOW_FLUSH_WITH_REINSERT = 0x3).
using HookResult = std::uint8_t;
inline constexpr HookResult kContinue = 0x0;
inline constexpr HookResult kFlush = 0x1;
inline constexpr HookResult kFlushReinsert = 0x3;
inline constexpr HookResult kDone = 0x4;

/// Largest tier-1 state per plugin and flow. (kMaxProcessPlugins: plugin_data.hpp.)
inline constexpr std::size_t kMaxProcessState = 256;

/// The flow as a plugin sees it: counters oriented like the exported record (index 0 = the
/// initiator → responder, kForward). In preUpdate the packet is not counted yet; in postCreate
/// and postUpdate it is.
struct FlowView {
    const FlowKey* key = nullptr;
    bool initiatorIsA = true;  ///< the flow's first packet was sent by key side A
    TimeNs timeFirst = 0;
    TimeNs timeLast = 0;
    std::array<std::uint32_t, 2> packets{};
    std::array<std::uint64_t, 2> bytes{};
    std::array<std::uint8_t, 2> tcpFlags{};
    EndReason endReason = EndReason::ForcedEnd;  ///< preExport / write only

    std::uint16_t srcPort() const noexcept { return initiatorIsA ? key->portA : key->portB; }
    std::uint16_t dstPort() const noexcept { return initiatorIsA ? key->portB : key->portA; }
    const std::array<std::uint8_t, 16>& srcAddr() const noexcept {
        return initiatorIsA ? key->addrA : key->addrB;
    }
    const std::array<std::uint8_t, 16>& dstAddr() const noexcept {
        return initiatorIsA ? key->addrB : key->addrA;
    }
    std::uint8_t proto() const noexcept { return key->proto; }
    std::uint64_t totalPackets() const noexcept { return std::uint64_t{packets[0]} + packets[1]; }
};

/// A worker's bounded pool of tier-2 records for one plugin: fixed-size records, a free list of
/// 32-bit handles (0 = none). Allocation and release are O(1) and never allocate memory.
/// Handles never used before are handed out in order (1, 2, ...) after the free list of
/// returned ones runs dry, so neither the records nor the free list are touched before they
/// are needed (a 2^20-slot table's pools cost nothing at start-up) and the records in use stay
/// packed at the front. Owned by the flow table; records freed by the export thread
/// (expiry=thread) come back through the table, never directly.
class ExtPool {
public:
    ExtPool() = default;
    /// `zero`: take() zeroes each record (ProcessHooks::zeroExt).
    ExtPool(std::byte* memory, std::uint32_t* freeList, std::uint32_t capacity,
            std::size_t recordSize, bool zero = true) noexcept
        : m_memory(memory),
          m_free(freeList),
          m_capacity(capacity),
          m_zero(zero),
          m_recordSize(recordSize) {}
    /// A record's handle, zeroed unless the pool was made with zero = false, or 0 when the
    /// pool is exhausted (counted).
    std::uint32_t take() noexcept {
        std::uint32_t h = 0;
        if (m_freeCount != 0) {
            h = m_free[--m_freeCount];
        } else if (m_fresh < m_capacity) {
            h = ++m_fresh;
        } else {
            ++m_exhausted;
            return 0;
        }
        if (m_zero) std::memset(at(h), 0, m_recordSize);
        return h;
    }
    void give(std::uint32_t handle) noexcept {
        if (handle != 0) m_free[m_freeCount++] = handle;
    }
    void* at(std::uint32_t handle) const noexcept {
        return m_memory + static_cast<std::size_t>(handle - 1) * m_recordSize;
    }
    std::uint32_t capacity() const noexcept { return m_capacity; }
    std::uint32_t available() const noexcept { return m_freeCount + (m_capacity - m_fresh); }
    /// Records handed out at least once: 1..fresh(), the front of the memory; the next
    /// never-used record is the next past them.
    std::uint32_t fresh() const noexcept { return m_fresh; }
    std::uint64_t exhausted() const noexcept { return m_exhausted; }
    std::size_t recordSize() const noexcept { return m_recordSize; }

private:
    std::byte* m_memory = nullptr;
    std::uint32_t* m_free = nullptr;
    std::uint32_t m_capacity = 0;
    bool m_zero = true;
    std::size_t m_recordSize = 0;
    std::uint32_t m_freeCount = 0;  ///< returned handles in m_free
    std::uint32_t m_fresh = 0;      ///< handles 1..m_fresh have been handed out at least once
    std::uint64_t m_exhausted = 0;
};

/// The application protocols the flow's plugins recognised, as Zeek `service` names ("http",
/// "ssl", "dns", ...), gathered at export: after the preExport hooks and before the write hooks
/// the table asks every plugin that has a `service` hook (in `-p` order) and hands the list to
/// the write hooks (FlowContext::services). A name appears once; at most kMax are kept.
/// The names must stay valid until the flow's write hooks have returned: string literals, or
/// bytes in the plugin's own tier-1/tier-2 data (released after the writes).
struct FlowServices {
    static constexpr std::size_t kMax = 8;
    std::array<std::string_view, kMax> names{};
    std::uint8_t count = 0;

    /// Appends `name` unless it is empty, already listed or the list is full.
    void add(std::string_view name) noexcept {
        if (name.empty() || count == kMax) return;
        for (std::size_t i = 0; i < count; ++i) {
            if (names[i] == name) return;
        }
        names[count++] = name;
    }
    std::span<const std::string_view> list() const noexcept { return {names.data(), count}; }
    bool empty() const noexcept { return count == 0; }
    /// Writes the names comma-separated (Zeek's conn.log form) into `out` and returns the
    /// length written; names that do not fit whole are left out.
    std::size_t join(std::span<char> out) const noexcept {
        std::size_t n = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t need = names[i].size() + (n != 0 ? 1 : 0);
            if (n + need > out.size()) break;
            if (n != 0) out[n++] = ',';
            std::memcpy(out.data() + n, names[i].data(), names[i].size());
            n += names[i].size();
        }
        return n;
    }
};

/// What a hook gets: the packet (null in preExport / write), the flow, and this plugin's
/// per-flow state. Built by the flow table on the stack; valid for the call only.
struct FlowContext {
    const ParsedPacket* packet = nullptr;
    const FlowView* flow = nullptr;
    bool forward = true;    ///< the packet goes initiator → responder (ipfixprobe `source_pkt`)
    void* state = nullptr;  ///< tier 1: `stateSize` bytes, zeroed at flow creation
    std::uint32_t* extHandle = nullptr;  ///< tier 2: the flow's record handle (0 = none)
    ExtPool* pool = nullptr;             ///< tier 2: this worker's pool for this plugin
    /// The plugin's per-worker state (its `Worker`, made by createWorker for this flow table;
    /// under expiry=thread the export thread's hooks get a second one of the same table), or
    /// null when the plugin has none. Owned by the thread that runs the hook, for the call.
    void* worker = nullptr;
    /// write only: the services the flow's plugins reported (FlowServices); null elsewhere, and
    /// when no plugin of the `-p` list has a service hook.
    const FlowServices* services = nullptr;

    template <class T>
    T& workerAs() const noexcept {
        return *static_cast<T*>(worker);
    }

    template <class T>
    T& stateAs() const noexcept {
        return *static_cast<T*>(state);
    }
    /// The flow's tier-2 record, or null when it has none.
    template <class T>
    T* ext() const noexcept {
        return *extHandle != 0 ? static_cast<T*>(pool->at(*extHandle)) : nullptr;
    }
    /// The flow's tier-2 record, taken (zeroed) from the pool if it has none yet; null when the
    /// pool is exhausted (counted as ext_pool_exhausted; the flow is still exported, without
    /// it). T must be trivially copyable and fit the plugin's declared extSize.
    template <class T>
    T* attachExt() const noexcept {
        static_assert(std::is_trivially_copyable_v<T>);
        if (*extHandle == 0) *extHandle = pool->take();
        return ext<T>();
    }
    /// Drops the flow's tier-2 record (e.g. pstats dropping its data in preExport); the flow
    /// table returns it to the pool after the hook.
    void detachExt() const noexcept { *extHandle = 0; }
};

/// Hook function types (trampolines generated by ProcessPluginBase). `self` is the plugin.
using PacketHookFn = HookResult (*)(const void* self, FlowContext& ctx) noexcept;
using ExportHookFn = void (*)(const void* self, FlowContext& ctx) noexcept;
using WriteHookFn = void (*)(const void* self, FlowContext& ctx, InstanceWriter& out) noexcept;
/// The Zeek service name of the protocol the plugin recognised in the flow ("" = none); called
/// once per exported flow, before the write hooks (FlowServices).
using ServiceHookFn = std::string_view (*)(const void* self, FlowContext& ctx) noexcept;
/// Reads the bytes of a tier-2 record that the next packet's hooks will touch and returns a
/// word made of them (the table folds it into a sink so the loads are kept). `state` is the
/// flow's tier-1 state, already loaded by the table when the plugin has one (so a plugin can
/// keep there what says where in `ext` the next packet goes).
using TouchHookFn = std::uint64_t (*)(const void* self, const void* state,
                                      const void* ext) noexcept;
/// Per-worker state (docs/design/process-runtime.md, "Per-worker state"): made at start-up for
/// each flow table (and a second one for the export thread under expiry=thread), on the
/// thread that configures the table; may throw ConfigError. Destroyed with the table.
using WorkerCreateFn = void* (*)(const void* self);
using WorkerDestroyFn = void (*)(const void* self, void* worker) noexcept;
/// Adds the worker state's counters to the table's statistics (any thread, a few times per
/// second: the counters it reads must be atomics or otherwise safe to read concurrently).
using WorkerStatsFn = void (*)(const void* self, const void* worker, CacheStats& out) noexcept;

/// A plugin's hooks and sizes as the flow table resolves them at start-up. Null hooks are
/// left out of the dispatch arrays.
struct ProcessHooks {
    const void* self = nullptr;
    std::size_t stateSize = 0;  ///< tier-1 bytes per flow (≤ kMaxProcessState), 0 = none
    std::size_t extSize = 0;    ///< tier-2 record bytes, 0 = no tier 2
    /// Tier-2 records per worker; 0 = as many as the table has slots (memory is reserved but
    /// only touched when used).
    std::uint32_t extPoolRecords = 0;
    /// attachExt hands out zeroed records; false (a plugin's `static constexpr bool
    /// kZeroExt = false`) when the plugin writes every byte before it reads it, which saves
    /// writing the whole record for every new flow (pstats: six lines).
    bool zeroExt = true;
    /// The hooks read the packet's payload bytes (ParsedPacket::payload() or `frame` past the
    /// headers). false (a plugin's `static constexpr bool kReadsPayload = false`) when they use
    /// only the parsed fields (sizes, times, flags, ports): the table then does not fetch the
    /// payload's first lines ahead of the hooks, a miss per packet that nothing would read (the
    /// parse ran on the input thread's core). Only a prefetch: a wrong `false` costs time, never
    /// correctness.
    bool readsPayload = true;
    PacketHookFn postCreate = nullptr;
    PacketHookFn preUpdate = nullptr;
    PacketHookFn postUpdate = nullptr;
    ExportHookFn preExport = nullptr;
    WriteHookFn write = nullptr;
    /// Optional: the service the plugin recognised in an exported flow (FlowServices).
    ServiceHookFn service = nullptr;
    /// Optional: which lines of the flow's tier-2 record its next packet needs. The table
    /// loads them for a whole batch at once, before the hooks run (their misses then overlap);
    /// without it, it loads the whole record (up to 512 bytes).
    TouchHookFn touch = nullptr;
    /// Optional: the flow's tier-2 record is about to go back to the pool (after write, or
    /// without an export when the table has no export target): free what the record owns
    /// (a library's heap members). ctx.packet is null.
    ExportHookFn release = nullptr;
    WorkerCreateFn createWorker = nullptr;    ///< optional, with destroyWorker
    WorkerDestroyFn destroyWorker = nullptr;  ///< set whenever createWorker is
    WorkerStatsFn workerStats = nullptr;      ///< optional
};

/// A process plugin. One object per `-p`, created at start-up; the flow table calls it only
/// through the ProcessHooks it returns (no virtual call per packet).
class ProcessPlugin : public Plugin {
public:
    /// The registered name ("pstats"): outputs use it for UniRec `p=` groups and messages.
    virtual std::string_view name() const noexcept = 0;
    /// The fields of one exported instance (origin Plugin), in IPFIX template order.
    virtual std::span<const FieldSpec> fields() const noexcept = 0;
    /// Resolved once at start-up.
    virtual ProcessHooks hooks() const noexcept = 0;
};

/// Start-up check (called where the -p list is assembled into the schema) that the plugins'
/// fields can share one exported object: every JSON/text key (FieldSpec::name) is unique across
/// the plugins and the core fields, and a UniRec name two plugins share has the same type in
/// both (ipfixprobe's shared names, e.g. DNS_ID of dns and passivedns; the UniRec output
/// refuses two such plugins in one record). Throws ConfigError naming both plugins and the
/// field (exit 2).
void checkFieldNames(std::span<const ProcessPlugin* const> plugins);

namespace detail {
struct NoState {};
template <class T>
struct StateOf {
    using Type = NoState;
};
template <class T>
requires requires { typename T::State; }
struct StateOf<T> {
    using Type = typename T::State;
};
template <class T>
struct ExtOf {
    using Type = NoState;
};
template <class T>
requires requires { typename T::Ext; }
struct ExtOf<T> {
    using Type = typename T::Ext;
};

// Whether T (or a base of T) has a member called `member`, of any kind: one function, overloads,
// a template, data, public or not. NameProbe inherits T and a class whose only member has that
// name, so naming the member through NameProbe is ambiguous exactly when T has one too. A final
// T cannot be inherited; for it, a non-overloaded member is found directly.
#define ROWPROBE_DETAIL_MEMBER_PROBE(member)                     \
    struct NameFallback##member {                                \
        int member;                                              \
    };                                                           \
    template <class T>                                           \
    struct NameProbe##member : T, NameFallback##member {};       \
    template <class T>                                           \
    constexpr bool hasMember##member() noexcept {                \
        if constexpr (std::is_final_v<T>) {                      \
            return requires { &T::member; };                     \
        } else {                                                 \
            return !requires { &NameProbe##member<T>::member; }; \
        }                                                        \
    }

// The hooks ProcessPluginBase knows.
ROWPROBE_DETAIL_MEMBER_PROBE(postCreate)
ROWPROBE_DETAIL_MEMBER_PROBE(preUpdate)
ROWPROBE_DETAIL_MEMBER_PROBE(postUpdate)
ROWPROBE_DETAIL_MEMBER_PROBE(preExport)
ROWPROBE_DETAIL_MEMBER_PROBE(write)
ROWPROBE_DETAIL_MEMBER_PROBE(touch)
ROWPROBE_DETAIL_MEMBER_PROBE(service)
// Near misses: ipfixprobe's hook names (a port from ipfixprobe keeps them), other spellings,
// and a hook rowprobe does not have (ipfixprobe's pre_create: rowprobe creates the flow before
// any hook runs).
ROWPROBE_DETAIL_MEMBER_PROBE(post_create)  // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(pre_update)   // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(post_update)  // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(pre_export)   // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(pre_create)   // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(preCreate)
ROWPROBE_DETAIL_MEMBER_PROBE(postcreate)
ROWPROBE_DETAIL_MEMBER_PROBE(preupdate)
ROWPROBE_DETAIL_MEMBER_PROBE(postupdate)
ROWPROBE_DETAIL_MEMBER_PROBE(preexport)
ROWPROBE_DETAIL_MEMBER_PROBE(PostCreate)  // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(PreUpdate)   // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(PostUpdate)  // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(PreExport)   // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(Write)       // NOLINT(readability-identifier-naming)
ROWPROBE_DETAIL_MEMBER_PROBE(Touch)       // NOLINT(readability-identifier-naming)
#undef ROWPROBE_DETAIL_MEMBER_PROBE

/// Every hook that Derived names must have exactly the signature ProcessPluginBase calls;
/// anything else would be silently left out of the dispatch, so it is a compile error that
/// names the hook. Evaluated in ProcessPluginBase::hooks(), where Derived is complete.
template <class Derived, class State, class Ext>
constexpr void checkHookSignatures() noexcept {
    static_assert(
        !hasMemberpostCreate<Derived>() ||
            requires(const Derived& d, FlowContext& c) {
                { d.postCreate(c) }
                noexcept->std::same_as<HookResult>;
            },
        "process plugin hook postCreate: the signature must be "
        "`HookResult postCreate(FlowContext&) const noexcept` (and public)");
    static_assert(
        !hasMemberpreUpdate<Derived>() ||
            requires(const Derived& d, FlowContext& c) {
                { d.preUpdate(c) }
                noexcept->std::same_as<HookResult>;
            },
        "process plugin hook preUpdate: the signature must be "
        "`HookResult preUpdate(FlowContext&) const noexcept` (and public)");
    static_assert(
        !hasMemberpostUpdate<Derived>() ||
            requires(const Derived& d, FlowContext& c) {
                { d.postUpdate(c) }
                noexcept->std::same_as<HookResult>;
            },
        "process plugin hook postUpdate: the signature must be "
        "`HookResult postUpdate(FlowContext&) const noexcept` (and public)");
    static_assert(
        !hasMemberpreExport<Derived>() ||
            requires(const Derived& d, FlowContext& c) {
                { d.preExport(c) }
                noexcept->std::same_as<void>;
            },
        "process plugin hook preExport: the signature must be "
        "`void preExport(FlowContext&) const noexcept` (and public)");
    static_assert(
        !hasMemberwrite<Derived>() ||
            requires(const Derived& d, FlowContext& c, InstanceWriter& w) {
                { d.write(c, w) }
                noexcept->std::same_as<void>;
            },
        "process plugin hook write: the signature must be "
        "`void write(FlowContext&, InstanceWriter&) const noexcept` (and public)");
    static_assert(
        !hasMembertouch<Derived>() ||
            requires(const Derived& d, const Ext& e) {
                { d.touch(e) }
                noexcept->std::same_as<std::uint64_t>;
            } ||
            requires(const Derived& d, const State& st, const Ext& e) {
                { d.touch(st, e) }
                noexcept->std::same_as<std::uint64_t>;
            },
        "process plugin hook touch: the signature must be "
        "`std::uint64_t touch(const Ext&) const noexcept` or "
        "`std::uint64_t touch(const State&, const Ext&) const noexcept` (and public)");
    static_assert(
        !hasMemberservice<Derived>() ||
            requires(const Derived& d, FlowContext& c) {
                { d.service(c) }
                noexcept->std::same_as<std::string_view>;
            },
        "process plugin hook service: the signature must be "
        "`std::string_view service(FlowContext&) const noexcept` (and public)");
    static_assert(!hasMemberpost_create<Derived>() && !hasMemberpostcreate<Derived>() &&
                      !hasMemberPostCreate<Derived>(),
                  "process plugin hook postCreate: rowprobe spells it `postCreate` "
                  "(ipfixprobe's post_create)");
    static_assert(!hasMemberpre_update<Derived>() && !hasMemberpreupdate<Derived>() &&
                      !hasMemberPreUpdate<Derived>(),
                  "process plugin hook preUpdate: rowprobe spells it `preUpdate` "
                  "(ipfixprobe's pre_update)");
    static_assert(!hasMemberpost_update<Derived>() && !hasMemberpostupdate<Derived>() &&
                      !hasMemberPostUpdate<Derived>(),
                  "process plugin hook postUpdate: rowprobe spells it `postUpdate` "
                  "(ipfixprobe's post_update)");
    static_assert(!hasMemberpre_export<Derived>() && !hasMemberpreexport<Derived>() &&
                      !hasMemberPreExport<Derived>(),
                  "process plugin hook preExport: rowprobe spells it `preExport` "
                  "(ipfixprobe's pre_export)");
    static_assert(!hasMemberWrite<Derived>(),
                  "process plugin hook write: rowprobe spells it `write`");
    static_assert(!hasMemberTouch<Derived>(),
                  "process plugin hook touch: rowprobe spells it `touch`");
    static_assert(!hasMemberpre_create<Derived>() && !hasMemberpreCreate<Derived>(),
                  "process plugin hook preCreate: rowprobe has none (ipfixprobe's pre_create); "
                  "the flow exists before any hook runs: use postCreate");
}
}  // namespace detail

/// CRTP helper: generates ProcessHooks from the const member functions Derived defines, e.g.
///   HookResult postCreate(FlowContext&) const noexcept;
///   HookResult preUpdate(FlowContext&) const noexcept;
///   HookResult postUpdate(FlowContext&) const noexcept;
///   void preExport(FlowContext&) const noexcept;
///   void write(FlowContext&, InstanceWriter&) const noexcept;
///   std::uint64_t touch(const Ext&) const noexcept;   (see ProcessHooks::touch), or
///   std::uint64_t touch(const State&, const Ext&) const noexcept;
///   void release(FlowContext&) const noexcept;          (see ProcessHooks::release)
///   std::string_view service(FlowContext&) const noexcept;   (FlowServices)
/// and its optional nested types State (tier 1) and Ext (tier 2). Derived also implements
/// name() and fields(). A plugin that needs state per worker (a library's detection module,
/// which is not thread-safe) has a nested type Worker and
///   std::unique_ptr<Worker> createWorker() const;        (start-up; may throw ConfigError)
///   void workerStats(const Worker&, CacheStats&) const noexcept;   (optional)
/// and reads it in its hooks with ctx.workerAs<Worker>().
template <class Derived>
class ProcessPluginBase : public ProcessPlugin {
public:
    ProcessHooks hooks() const noexcept override {
        // Looked up here, not as class members: Derived is complete only once hooks() is used.
        using State = typename detail::StateOf<Derived>::Type;
        using Ext = typename detail::ExtOf<Derived>::Type;
        static_assert(std::is_trivially_copyable_v<State>, "State must be trivially copyable");
        static_assert(std::is_trivially_copyable_v<Ext>, "Ext must be trivially copyable");
        static_assert(std::is_empty_v<State> || sizeof(State) <= kMaxProcessState,
                      "tier-1 State too large: move the bulk into Ext (tier 2)");
        static_assert(alignof(State) <= 8 && alignof(Ext) <= 64);
        detail::checkHookSignatures<Derived, State, Ext>();
        ProcessHooks h;
        h.self = static_cast<const Derived*>(this);
        h.stateSize = std::is_empty_v<State> ? 0 : sizeof(State);
        h.extSize = std::is_empty_v<Ext> ? 0 : sizeof(Ext);
        h.extPoolRecords = m_extPoolRecords;
        if constexpr (requires { Derived::kZeroExt; }) h.zeroExt = Derived::kZeroExt;
        if constexpr (requires { Derived::kReadsPayload; }) h.readsPayload = Derived::kReadsPayload;
        if constexpr (requires(const Derived& d, FlowContext& c) { d.postCreate(c); })
            h.postCreate = [](const void* s, FlowContext& c) noexcept -> HookResult {
                return static_cast<const Derived*>(s)->postCreate(c);
            };
        if constexpr (requires(const Derived& d, FlowContext& c) { d.preUpdate(c); })
            h.preUpdate = [](const void* s, FlowContext& c) noexcept -> HookResult {
                return static_cast<const Derived*>(s)->preUpdate(c);
            };
        if constexpr (requires(const Derived& d, FlowContext& c) { d.postUpdate(c); })
            h.postUpdate = [](const void* s, FlowContext& c) noexcept -> HookResult {
                return static_cast<const Derived*>(s)->postUpdate(c);
            };
        if constexpr (requires(const Derived& d, FlowContext& c) { d.preExport(c); })
            h.preExport = [](const void* s, FlowContext& c) noexcept {
                static_cast<const Derived*>(s)->preExport(c);
            };
        if constexpr (requires(const Derived& d, FlowContext& c, InstanceWriter& w) {
                          d.write(c, w);
                      })
            h.write = [](const void* s, FlowContext& c, InstanceWriter& w) noexcept {
                static_cast<const Derived*>(s)->write(c, w);
            };
        if constexpr (requires(const Derived& d, FlowContext& c) { d.service(c); })
            h.service = [](const void* s, FlowContext& c) noexcept -> std::string_view {
                return static_cast<const Derived*>(s)->service(c);
            };
        if constexpr (requires(const Derived& d, const State& st, const Ext& e) {
                          d.touch(st, e);
                      }) {
            h.touch = [](const void* s, const void* st, const void* e) noexcept -> std::uint64_t {
                return static_cast<const Derived*>(s)->touch(*static_cast<const State*>(st),
                                                             *static_cast<const Ext*>(e));
            };
        } else if constexpr (requires(const Derived& d, const Ext& e) { d.touch(e); }) {
            h.touch = [](const void* s, const void*, const void* e) noexcept -> std::uint64_t {
                return static_cast<const Derived*>(s)->touch(*static_cast<const Ext*>(e));
            };
        }
        if constexpr (requires(const Derived& d, FlowContext& c) { d.release(c); })
            h.release = [](const void* s, FlowContext& c) noexcept {
                static_cast<const Derived*>(s)->release(c);
            };
        if constexpr (requires { typename Derived::Worker; }) {
            using Worker = typename Derived::Worker;
            h.createWorker = [](const void* s) -> void* {
                return static_cast<const Derived*>(s)->createWorker().release();
            };
            h.destroyWorker = [](const void*, void* w) noexcept {
                delete static_cast<Worker*>(w);  // NOLINT(cppcoreguidelines-owning-memory)
            };
            if constexpr (requires(const Derived& d, const Worker& w, CacheStats& out) {
                              d.workerStats(w, out);
                          })
                h.workerStats = [](const void* s, const void* w, CacheStats& out) noexcept {
                    static_cast<const Derived*>(s)->workerStats(*static_cast<const Worker*>(w),
                                                                out);
                };
        }
        return h;
    }

protected:
    /// Tier-2 records per worker (set in the constructor, e.g. from an option); 0 = one per
    /// table slot.
    std::uint32_t m_extPoolRecords = 0;
};

}  // namespace rowprobe
