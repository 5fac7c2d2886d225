// The process-plugin runtime inside the flow table (rowprobe/process.hpp, process_dispatch.hpp):
// flush and flush-reinsert with ipfixprobe's semantics, the wants bits, tier-2 pool exhaustion,
// several instances per flow, preExport only for expired flows, and the plugin errors.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "table_harness.hpp"

namespace rowprobe::storage::testing {
namespace {

/// What the probe plugin does, per flow, at its n-th packet (1-based, both directions).
struct Script {
    std::uint32_t flushPostUpdateAt = 0;
    std::uint32_t reinsertPreUpdateAt = 0;
    std::uint32_t reinsertPostUpdateAt = 0;
    std::uint32_t flushPreUpdateAt = 0;
    bool flushPostCreate = false;
    bool doneAtCreate = false;
    bool useExt = false;
    bool instancePerPacket = false;  ///< write one instance per packet seen
};

struct ProbeFields {
    std::uint32_t seen;
    std::uint32_t instance;
    std::uint8_t exportedHook;  ///< 1 when preExport ran before write
};

constexpr FieldSpec kProbeFields[] = {
    {.name = "probe_seen",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(ProbeFields, seen)},
    {.name = "probe_instance",
     .type = FieldType::Unsigned32,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(ProbeFields, instance)},
    {.name = "probe_pre_export",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(ProbeFields, exportedHook)},
};

class Probe final : public ProcessPluginBase<Probe> {
public:
    struct State {
        std::uint32_t seen;
        bool preExported;
    };
    struct Ext {
        std::uint8_t payload[200];
    };

    Probe(Script script, std::uint32_t poolRecords) : m_script(script) {
        m_extPoolRecords = poolRecords;
    }
    std::string_view name() const noexcept override { return "probe"; }
    std::span<const FieldSpec> fields() const noexcept override { return kProbeFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        ++calls;
        State& s = ctx.stateAs<State>();
        s.seen = 1;
        if (m_script.useExt) {
            Ext* e = ctx.attachExt<Ext>();
            if (e == nullptr) ++noExt;
            lastExt = e;
        }
        if (m_script.flushPostCreate) return kFlush;
        return m_script.doneAtCreate ? kDone : kContinue;
    }
    HookResult preUpdate(FlowContext& ctx) const noexcept {
        ++calls;
        State& s = ctx.stateAs<State>();
        const std::uint32_t n = s.seen + 1;
        if (n == m_script.reinsertPreUpdateAt) return kFlushReinsert;
        if (n == m_script.flushPreUpdateAt) return kFlush;
        return kContinue;
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        ++calls;
        State& s = ctx.stateAs<State>();
        ++s.seen;
        if (s.seen == m_script.flushPostUpdateAt) return kFlush;
        if (s.seen == m_script.reinsertPostUpdateAt) return kFlushReinsert;
        return kContinue;
    }
    void preExport(FlowContext& ctx) const noexcept { ctx.stateAs<State>().preExported = true; }
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& s = ctx.stateAs<State>();
        const std::uint32_t n = m_script.instancePerPacket ? s.seen : 1;
        for (std::uint32_t i = 0; i < n; ++i) {
            ProbeFields* f = out.begin<ProbeFields>();
            if (f == nullptr) return;
            f->seen = s.seen;
            f->instance = i;
            f->exportedHook = s.preExported ? 1 : 0;
            out.commit();
        }
    }

    mutable std::atomic<int> calls{0};
    mutable std::atomic<int> noExt{0};
    mutable std::atomic<const void*> lastExt{nullptr};

private:
    Script m_script;
};

/// One exported record with its plugin data copied out of the ring.
struct Exported {
    FlowRecord record;
    std::vector<std::vector<std::uint8_t>> instances;
    std::uint32_t field(std::size_t instance, std::size_t f) const {
        return static_cast<std::uint32_t>(
            readPluginUnsigned(kProbeFields[f], instances.at(instance)));
    }
};

class PluginTable {
public:
    PluginTable(Script script, std::uint32_t poolRecords = 0,
                const std::string& storage = "cache;size=10;line=4;seed=1;inactive=30")
        : m_probe(script, poolRecords), m_ring(1 << 12), m_ext(1 << 20) {
        auto plugin =
            Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, storage, "-s");
        m_table.reset(plugin.release());
        ProcessPlugin* plugins[] = {&m_probe};
        EXPECT_TRUE(m_table->enableProcessPlugins(plugins));
        m_table->attach(ExportTarget{&m_ring, &m_abandon, 0, &m_ext, nullptr});
    }
    void feed(const ParsedPacket& p) {
        ParsedPacket copy = p;
        m_table->processBatch(std::span<ParsedPacket>(&copy, 1));
        drain();
    }
    void flushAll() {
        m_table->flushAll();
        drain();
    }
    void advanceTime(TimeNs t) {
        m_table->advanceTime(t);
        drain();
    }
    const std::vector<Exported>& exported() const { return m_out; }
    CacheStats stats() const { return m_table->stats(); }
    Probe& probe() { return m_probe; }
    StoragePlugin& table() { return *m_table; }

private:
    void drain() {
        FlowRecord r;
        while (m_ring.tryPop(r)) {
            Exported e;
            e.record = r;
            for (const PluginInstance i : pluginInstances(r)) {
                EXPECT_EQ(i.plugin, 0);
                e.instances.emplace_back(i.data.begin(), i.data.end());
            }
            if (r.extLen != 0) m_ext.releaseThrough(r.ext, r.extLen);
            m_out.push_back(std::move(e));
        }
    }

    Probe m_probe;
    ExportRing m_ring;
    ExtRing m_ext;
    std::atomic<bool> m_abandon{false};
    std::unique_ptr<StoragePlugin> m_table;
    std::vector<Exported> m_out;
};

ParsedPacket fwd(double t) { return packet("10.0.0.1", 1000, "10.0.0.2", 80, at(t), kAck); }
ParsedPacket rev(double t) { return packet("10.0.0.2", 80, "10.0.0.1", 1000, at(t), kAck); }

TEST(ProcessRuntime, PostUpdateFlushExportsTheFlowWithThePacketWithoutPreExport) {
    PluginTable t({.flushPostUpdateAt = 3});
    t.feed(fwd(1));
    t.feed(rev(2));
    t.feed(fwd(3));  // flushed with this packet
    ASSERT_EQ(t.exported().size(), 1U);
    const Exported& e = t.exported()[0];
    EXPECT_EQ(e.record.packets[0] + e.record.packets[1], 3U);
    EXPECT_EQ(e.record.endReason, EndReason::ForcedEnd);
    ASSERT_EQ(e.instances.size(), 1U);
    EXPECT_EQ(e.field(0, 2), 0U) << "flushed flows skip preExport (ipfixprobe)";
    t.feed(fwd(4));  // a new flow
    t.flushAll();
    ASSERT_EQ(t.exported().size(), 2U);
    EXPECT_EQ(t.exported()[1].record.packets[0], 1U);
    EXPECT_EQ(t.exported()[1].field(0, 2), 1U) << "end of input runs preExport";
    EXPECT_EQ(t.stats().pluginFlushes, 1U);
}

TEST(ProcessRuntime, PreUpdateReinsertExportsWithoutThePacketAndContinuesFromTimeLast) {
    PluginTable t({.reinsertPreUpdateAt = 3});
    t.feed(fwd(1));
    t.feed(fwd(2));
    t.feed(rev(5));  // 3rd packet: old flow exported without it; new flow in the same slot
    ASSERT_EQ(t.exported().size(), 1U);
    const FlowRecord& old = t.exported()[0].record;
    EXPECT_EQ(old.packets[0], 2U);
    EXPECT_EQ(old.packets[1], 0U);
    EXPECT_EQ(old.timeLast, at(2));
    EXPECT_EQ(old.endReason, EndReason::ForcedEnd);
    t.feed(fwd(6));
    t.flushAll();
    ASSERT_EQ(t.exported().size(), 2U);
    const FlowRecord& next = t.exported()[1].record;
    EXPECT_EQ(next.timeFirst, at(2)) << "TIME_FIRST = the old TIME_LAST";
    EXPECT_EQ(next.timeLast, at(6));
    EXPECT_EQ(next.srcPort, 1000) << "same orientation as the old record";
    EXPECT_EQ(next.packets[1], 1U) << "the reinserted packet counted in its direction";
    EXPECT_EQ(next.packets[0], 1U);
    EXPECT_EQ(t.exported()[1].field(0, 0), 2U) << "state cleared, postCreate ran again";
}

TEST(ProcessRuntime, PostUpdateReinsertCountsThePacketInBothRecordsAsIpfixprobe) {
    PluginTable t({.reinsertPostUpdateAt = 2});
    t.feed(fwd(1));
    t.feed(fwd(2));
    t.flushAll();
    ASSERT_EQ(t.exported().size(), 2U);
    EXPECT_EQ(t.exported()[0].record.packets[0], 2U);
    EXPECT_EQ(t.exported()[1].record.packets[0], 1U);
    EXPECT_EQ(t.exported()[1].record.timeFirst, at(2));
}

TEST(ProcessRuntime, PreUpdateFlushDropsThePacketAsIpfixprobe) {
    PluginTable t({.flushPreUpdateAt = 3});
    t.feed(fwd(1));
    t.feed(fwd(2));
    t.feed(fwd(3));  // exported without it; the packet itself is dropped
    t.feed(fwd(4));
    t.flushAll();
    ASSERT_EQ(t.exported().size(), 2U);
    EXPECT_EQ(t.exported()[0].record.packets[0], 2U);
    EXPECT_EQ(t.exported()[1].record.packets[0], 1U);
    EXPECT_EQ(t.exported()[1].record.timeFirst, at(4));
}

TEST(ProcessRuntime, PostCreateFlushMakesOnePacketRecords) {
    PluginTable t({.flushPostCreate = true});
    for (int i = 0; i < 4; ++i) t.feed(fwd(1 + i));
    EXPECT_EQ(t.exported().size(), 4U);
    for (const auto& e : t.exported()) EXPECT_EQ(e.record.packets[0], 1U);
    EXPECT_EQ(t.stats().flowsInCache, 0U);
}

TEST(ProcessRuntime, DonePluginIsNeverCalledAgainForThatFlow) {
    PluginTable t({.doneAtCreate = true});
    for (int i = 0; i < 10; ++i) t.feed(fwd(1 + i * 0.1));
    EXPECT_EQ(t.probe().calls.load(), 1) << "postCreate only";
    t.flushAll();
    ASSERT_EQ(t.exported().size(), 1U);
    EXPECT_EQ(t.exported()[0].record.packets[0], 10U);
    EXPECT_EQ(t.exported()[0].instances.size(), 1U) << "its fields are still exported";
}

TEST(ProcessRuntime, WantedFlowsCallBothUpdateHooksPerPacket) {
    PluginTable t({});
    for (int i = 0; i < 10; ++i) t.feed(fwd(1 + i * 0.1));
    EXPECT_EQ(t.probe().calls.load(), 1 + 2 * 9);
    t.flushAll();
    EXPECT_EQ(t.exported()[0].field(0, 0), 10U);
}

TEST(ProcessRuntime, PoolExhaustionIsCountedAndTheFlowsAreStillExported) {
    PluginTable t({.useExt = true}, 2);
    for (std::uint16_t port = 1; port <= 5; ++port)
        t.feed(packet("10.0.0.1", port, "10.0.0.2", 80, at(1), kAck));
    EXPECT_EQ(t.probe().noExt.load(), 3);
    EXPECT_EQ(t.stats().extPoolExhausted, 3U);
    t.flushAll();
    EXPECT_EQ(t.exported().size(), 5U);
    // The records went back to the pool: new flows get them again.
    t.feed(packet("10.0.0.1", 7, "10.0.0.2", 80, at(2), kAck));
    t.feed(packet("10.0.0.1", 8, "10.0.0.2", 80, at(2), kAck));
    EXPECT_EQ(t.probe().noExt.load(), 3);
}

/// The VmFlags of the mapping of this process that holds `address` (/proc/self/smaps), or "".
std::string vmFlagsOf(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    std::string line;
    while (std::getline(smaps, line)) {
        unsigned long from = 0;
        unsigned long to = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> from >> dash >> to && dash == '-' && line.find(':') > 8) {
            inside = at >= from && at < to;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return "";
}

TEST(ProcessRuntime, PoolPagesOptionChoosesTheKernelsPageAdvice) {
    // A 2^16-slot table: the probe's pool (200-byte records in 256) is a 16 MiB mapping.
    for (const bool huge : {false, true}) {
        PluginTable t({.useExt = true}, 0,
                      std::string("cache;size=16;seed=1") + (huge ? ";pool-pages=huge" : ""));
        t.feed(fwd(1));
        const void* ext = t.probe().lastExt.load();
        ASSERT_NE(ext, nullptr);
        const std::string flags = vmFlagsOf(ext);
        ASSERT_FALSE(flags.empty()) << "no mapping holds the pool record";
        const bool hg = flags.find(" hg") != std::string::npos;
        const bool nh = flags.find(" nh") != std::string::npos;
        if (huge) {
            EXPECT_TRUE(hg && !nh) << "pool-pages=huge: " << flags;
        } else {
            EXPECT_TRUE(nh && !hg) << "default (4k): " << flags;
        }
        t.flushAll();
    }
}

// `table-pages`: the flow records on 4 KiB pages (default) until a minute of packet time after
// the table first holds a quarter of its capacity, or on huge pages from the start (`huge`).
TEST(ProcessRuntime, TablePagesOptionChoosesTheRecordsPagesAndPromotesAfterAMinute) {
    // 2^16 records (8 MiB mapped) in 4096 rows of 16: a quarter is 16 384 flows.
    const std::string table = "cache;size=16;seed=1;active=3600;inactive=3600";
    {
        TableHarness t(table + ";table-pages=huge");
        t.feed(packet("10.0.0.1", 1000, "10.0.0.2", 80, at(1), kAck));
        const std::string flags =
            vmFlagsOf(dynamic_cast<const TableBase&>(t.table()).recordPlanes());
        EXPECT_TRUE(flags.find(" hg") != std::string::npos) << "table-pages=huge: " << flags;
        t.flushAll();
    }
    TableHarness t(table);
    const std::byte* records = dynamic_cast<const TableBase&>(t.table()).recordPlanes();
    auto flowsFrom = [](double second, std::uint32_t count) {
        std::vector<ParsedPacket> v;
        for (std::uint32_t i = 0; i < count; ++i)
            v.push_back(packet("10.1." + std::to_string(i >> 8) + "." + std::to_string(i & 255),
                               static_cast<std::uint16_t>(1024 + i % 50000), "10.0.0.2", 80,
                               at(second), kAck));
        return v;
    };
    auto huge = [&] { return vmFlagsOf(records).find(" hg") != std::string::npos; };
    t.feed(flowsFrom(1, 100));
    EXPECT_TRUE(vmFlagsOf(records).find(" nh") != std::string::npos) << vmFlagsOf(records);
    t.feed(flowsFrom(2, 17000));  // a quarter full at 2 s
    ASSERT_GE(t.stats().flowsInCache, 16384U);
    EXPECT_FALSE(huge());
    t.feed(packet("10.0.0.1", 1000, "10.0.0.2", 80, at(61), kAck));
    EXPECT_FALSE(huge()) << "promoted before a minute had passed";
    t.feed(packet("10.0.0.1", 1000, "10.0.0.2", 80, at(63), kAck));
    EXPECT_TRUE(huge()) << "not promoted a minute after the table was a quarter full";
    t.flushAll();
}

/// True when the kernel knows MADV_POPULATE_WRITE (Linux 5.14+), tried on a page of its own.
bool kernelPopulates() {
    void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    const bool ok = ::madvise(p, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
    ::munmap(p, 4096);
    return ok;
}

/// Pages of [from, from + bytes) that are resident (mincore), counted.
std::size_t residentPages(const void* from, std::size_t bytes) {
    const std::size_t pages = bytes / 4096;
    std::vector<unsigned char> v(pages);
    if (::mincore(const_cast<void*>(from), bytes, v.data()) != 0) return ~std::size_t{0};
    return static_cast<std::size_t>(
        std::count_if(v.begin(), v.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

// StoragePlugin::prefault (the input thread, while it waits for the worker) maps in the pool's
// pages from the worker's frontier to 8 MiB past it, in calls of at most the bytes asked for,
// then the record planes the table's flows are about to reach (the next test), then says there
// is nothing to do; as flows take records the frontier moves and so does the work.
// `prefault=false` turns it off. (Skipped on kernels without MADV_POPULATE_WRITE.)
TEST(ProcessRuntime, PrefaultMapsThePoolAheadOfTheWorkersFrontier) {
    constexpr std::size_t kMiB = std::size_t{1} << 20;
    // A 2^16-slot table: the probe's pool (200-byte records in 256) is a 16 MiB mapping; a
    // plane of records (4096 rows of 16) is 512 KiB.
    PluginTable t({.useExt = true}, 0, "cache;size=16;seed=1");
    t.feed(fwd(1));
    const auto* pool = static_cast<const std::byte*>(t.probe().lastExt.load());
    ASSERT_NE(pool, nullptr);  // the pool's first record: its mapping starts here
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(pool) % 4096, 0U);
    EXPECT_EQ(residentPages(pool + kMiB, 8 * kMiB), 0U);
    const auto& base = dynamic_cast<const TableBase&>(t.table());
    ASSERT_EQ(base.planeBytes(), 512 * 1024U);
    std::size_t total = 0;
    std::size_t calls = 0;
    for (std::size_t n = t.table().prefault(kMiB); n != 0; n = t.table().prefault(kMiB)) {
        EXPECT_LE(n, kMiB);
        total += n;
        ++calls;
        ASSERT_LT(calls, 100U);
    }
    if (total == 0 && !kernelPopulates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
    // The pool's 8 MiB, then plane 0 (one flow in 4096 rows: only the plane a new flow takes).
    EXPECT_EQ(total, 8 * kMiB + base.planeBytes());
    EXPECT_EQ(residentPages(pool, 8 * kMiB), 8 * kMiB / 4096);
    EXPECT_EQ(residentPages(pool + 8 * kMiB, kMiB), 0U);  // no further than 8 MiB ahead
    // 2 048 more flows take 512 KiB more of records: as much more is due, and, at half a flow
    // per row, planes 1 and 2 (TableBase::planesAhead). (Fewer flows than the harness's export
    // ring holds, for the flush at the end.)
    for (int i = 0; i < 2048; ++i)
        t.feed(
            packet("10.0.0.1", static_cast<std::uint16_t>(2000 + i), "10.0.0.2", 80, at(1), kAck));
    total = 0;
    for (std::size_t n = t.table().prefault(kMiB); n != 0; n = t.table().prefault(kMiB)) total += n;
    EXPECT_EQ(total, kMiB / 2 + 2 * base.planeBytes());
    t.flushAll();

    PluginTable off({.useExt = true}, 0, "cache;size=16;seed=1;prefault=false");
    off.feed(fwd(1));
    EXPECT_EQ(off.table().prefault(kMiB), 0U);
    off.flushAll();
}

// The planes of records prefault maps in follow the flows per row (Poisson): plane p is first
// written by a row's (p+1)-th flow, so a table a sixteenth full wants plane 0 and the next
// ones only as their pages' rows are about to reach them; a full one wants every plane.
TEST(ProcessRuntime, PrefaultPlanesFollowTheFlowsPerRow) {
    EXPECT_EQ(TableBase::planesAhead(0, 4096, 16), 1U);
    EXPECT_EQ(TableBase::planesAhead(1, 4096, 16), 1U);
    EXPECT_EQ(TableBase::planesAhead(2049, 4096, 16), 3U);  // m = 0.5: P(X > 2) · 32 < 1/2
    EXPECT_EQ(TableBase::planesAhead(4096, 4096, 16), 5U);  // m = 1: P(X > 4) · 32 < 1/2
    EXPECT_EQ(TableBase::planesAhead(4 * 4096, 4096, 16), 10U);
    EXPECT_EQ(TableBase::planesAhead(16 * 4096, 4096, 16), 16U);
    EXPECT_EQ(TableBase::planesAhead(100 * 4096, 4096, 16), 16U);
    for (std::uint64_t f = 0; f < 20 * 4096; f += 997)  // never fewer as the table fills
        EXPECT_LE(TableBase::planesAhead(f, 4096, 16), TableBase::planesAhead(f + 997, 4096, 16));
}

// Without plugins the planes alone: plane 0 for the first flow, present afterwards (mincore);
// the planes past the huge-page ones (the first four of 16, here one 2 MiB page) not; a table
// on heap memory (under 4 MiB of records) is left alone.
TEST(ProcessRuntime, PrefaultMapsTheRecordPlanesWithoutPlugins) {
    TableHarness t("cache;size=16;seed=1");
    t.feed({packet("10.0.0.1", 1000, "10.0.0.2", 80, at(1), kAck)});
    const auto& base = dynamic_cast<const TableBase&>(t.table());
    ASSERT_NE(base.recordPlanes(), nullptr);
    std::size_t total = 0;
    for (std::size_t n = t.table().prefault(1 << 16); n != 0; n = t.table().prefault(1 << 16))
        total += n;
    if (total == 0 && !kernelPopulates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
    EXPECT_EQ(total, base.planeBytes());
    EXPECT_EQ(residentPages(base.recordPlanes(), base.planeBytes()), base.planeBytes() / 4096);
    EXPECT_EQ(residentPages(base.recordPlanes() + 4 * base.planeBytes(), 12 * base.planeBytes()),
              0U);
    t.flushAll();

    TableHarness small("cache;size=12;seed=1");  // 512 KiB of records: heap memory
    small.feed({packet("10.0.0.1", 1000, "10.0.0.2", 80, at(1), kAck)});
    EXPECT_EQ(dynamic_cast<const TableBase&>(small.table()).recordPlanes(), nullptr);
    EXPECT_EQ(small.table().prefault(1 << 16), 0U);
    small.flushAll();
}

TEST(ProcessRuntime, SeveralInstancesPerFlow) {
    PluginTable t({.instancePerPacket = true});
    for (int i = 0; i < 3; ++i) t.feed(fwd(1 + i));
    t.flushAll();
    ASSERT_EQ(t.exported().size(), 1U);
    const Exported& e = t.exported()[0];
    ASSERT_EQ(e.instances.size(), 3U);
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(e.field(i, 1), i);
        EXPECT_EQ(e.field(i, 0), 3U);
    }
}

TEST(ProcessRuntime, ExpiredFlowsRunPreExport) {
    PluginTable t({});
    t.feed(fwd(1));
    t.advanceTime(at(100));  // inactive timeout 30 s
    ASSERT_EQ(t.exported().size(), 1U);
    EXPECT_EQ(t.exported()[0].record.endReason, EndReason::InactiveTimeout);
    EXPECT_EQ(t.exported()[0].field(0, 2), 1U);
}

TEST(ProcessRuntime, ExpiryThreadModeSerialisesDetachedFlowsOnTheExportThreadSide) {
    // expiry=thread: sweepFromExportThread detaches and serialises; its pool returns go
    // through the table's return ring and come back to the worker's pool.
    Probe probe({.useExt = true}, 4);
    ExportRing ring(1 << 12);
    ExportRing sweepRing(1 << 12);
    ExtRing ext(1 << 20);
    ExtRing sweepExt(8 << 20);
    std::atomic<bool> abandon{false};
    auto table = Registry::instance().createAs<StoragePlugin>(
        PluginKind::Storage, "cache;size=10;line=4;seed=1;inactive=30;expiry=thread", "-s");
    ProcessPlugin* plugins[] = {&probe};
    ASSERT_TRUE(table->enableProcessPlugins(plugins));
    table->attach(ExportTarget{&ring, &abandon, 0, &ext, &sweepExt});
    for (std::uint16_t port = 1; port <= 4; ++port) {
        ParsedPacket p = packet("10.0.0.1", port, "10.0.0.2", 80, at(1), kAck);
        table->processBatch(std::span<ParsedPacket>(&p, 1));
    }
    table->advanceTime(at(100));
    std::size_t swept = 0;
    for (int i = 0; i < 10; ++i) swept += table->sweepFromExportThread(sweepRing);
    EXPECT_EQ(swept, 4U);
    FlowRecord r;
    std::size_t withData = 0;
    while (sweepRing.tryPop(r)) {
        for (const PluginInstance i : pluginInstances(r)) {
            EXPECT_EQ(readPluginUnsigned(kProbeFields[2], i.data), 1U) << "preExport ran";
            ++withData;
        }
    }
    EXPECT_EQ(withData, 4U);
    // The pool (4 records) is whole again once the worker runs: 4 new flows all get one.
    for (std::uint16_t port = 11; port <= 14; ++port) {
        ParsedPacket p = packet("10.0.0.1", port, "10.0.0.2", 80, at(101), kAck);
        table->processBatch(std::span<ParsedPacket>(&p, 1));
    }
    EXPECT_EQ(probe.noExt.load(), 0);
    EXPECT_EQ(table->stats().extPoolExhausted, 0U);
}

/// Runs `pkts` through a table with pstats (includezeroes) on a worker thread while this thread
/// plays the export thread (sweeps under expiry=thread, drains both rings, releases the plugin
/// bytes); returns per flow "key packets pstats-count" lines, sorted. TSan-clean by design.
std::vector<std::string> runConcurrently(const std::string& storage,
                                         const std::vector<ParsedPacket>& pkts) {
    auto pstats = Registry::instance().createAs<ProcessPlugin>(PluginKind::Process,
                                                               "pstats;includezeroes", "-p");
    ExportRing ring(1 << 10);
    ExportRing sweepRing(1 << 12);
    ExtRing ext(1 << 20);
    ExtRing sweepExt(8 << 20);
    std::atomic<bool> abandon{false};
    std::atomic<bool> done{false};
    auto table = Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, storage, "-s");
    ProcessPlugin* plugins[] = {pstats.get()};
    EXPECT_TRUE(table->enableProcessPlugins(plugins));
    table->attach(ExportTarget{&ring, &abandon, 0, &ext, &sweepExt});
    std::thread worker([&] {
        std::vector<ParsedPacket> batch;
        for (std::size_t i = 0; i < pkts.size(); i += 32) {
            batch.assign(pkts.begin() + static_cast<std::ptrdiff_t>(i),
                         pkts.begin() + static_cast<std::ptrdiff_t>(std::min(pkts.size(), i + 32)));
            table->processBatch(batch);
        }
        table->flushAll();
        done.store(true, std::memory_order_release);
    });
    std::vector<std::string> out;
    auto drain = [&](ExportRing& r, ExtRing& e) {
        FlowRecord rec;
        while (r.tryPop(rec)) {
            std::size_t count = 0;
            for (const PluginInstance i : pluginInstances(rec))
                count = readPluginArray(pstats->fields()[0], i.data).size();
            if (rec.extLen != 0) e.releaseThrough(rec.ext, rec.extLen);
            out.push_back(addressText(rec.srcAddr) + ":" + std::to_string(rec.srcPort) + " " +
                          std::to_string(rec.packets[0] + rec.packets[1]) + " " +
                          std::to_string(count));
        }
    };
    for (;;) {
        const bool finished = done.load(std::memory_order_acquire);
        if (!finished) table->sweepFromExportThread(sweepRing);
        drain(ring, ext);
        drain(sweepRing, sweepExt);
        if (finished && ring.empty()) break;
    }
    worker.join();
    drain(ring, ext);
    std::sort(out.begin(), out.end());
    return out;
}

TEST(ProcessRuntime, ExpiryThreadWithPluginsExportsWhatInlineExports) {
    std::mt19937 rng(7);
    std::vector<ParsedPacket> pkts;
    for (int step = 0; step < 20000; ++step) {  // 2000 flows, bursts over 200 s of packet time
        const auto flow = static_cast<std::uint16_t>(rng() % 2000);
        pkts.push_back(packet("10.0.0.1", static_cast<std::uint16_t>(1024 + flow), "10.0.0.2", 53,
                              at(step * 0.01), 0, 100, 17));
    }
    const auto inlineRun = runConcurrently("cache;size=12;line=8;seed=3;inactive=5", pkts);
    const auto threadRun =
        runConcurrently("cache;size=12;line=8;seed=3;inactive=5;expiry=thread", pkts);
    ASSERT_GT(inlineRun.size(), 2000U);
    EXPECT_EQ(inlineRun, threadRun);
    for (const std::string& line : threadRun) {  // every flow has its pstats, min(30, packets)
        std::istringstream in(line);
        std::string who;
        std::size_t packets = 0;
        std::size_t count = 0;
        in >> who >> packets >> count;
        EXPECT_EQ(count, std::min<std::size_t>(packets, 30)) << line;
    }
}

TEST(ProcessRuntime, UnknownPluginAndBadOptionsAreConfigErrors) {
    try {
        Registry::instance().create(PluginKind::Process, "pstat", "-p");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.render().find("did you mean 'pstats'"), std::string::npos) << e.render();
    }
    try {
        Registry::instance().create(PluginKind::Process, "basicplus;mss=wrong", "-p");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        const std::string m = e.render();
        EXPECT_NE(m.find("mss"), std::string::npos) << m;
        EXPECT_NE(m.find("ipfixprobe"), std::string::npos) << m;
    }
}

}  // namespace
}  // namespace rowprobe::storage::testing
