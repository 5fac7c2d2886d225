// Per-worker plugin state (docs/design/process-runtime.md, "Per-worker state"): each flow table
// makes its own Worker for a plugin that has one (a second for the export thread under
// expiry=thread), hooks see the Worker of the thread that runs them, the table destroys them,
// workerStats reaches the table's statistics, and release() runs for every tier-2 record before
// it returns to the pool (with or without an export target).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <vector>

#include "rowprobe/plugin_data.hpp"
#include "rowprobe/process.hpp"
#include "table_harness.hpp"

namespace rowprobe::storage::testing {
namespace {

std::atomic<int> g_live{0};
std::atomic<int> g_made{0};

struct WorkerFields {
    std::uint32_t worker;  ///< id of the Worker that wrote the instance
};
constexpr FieldSpec kWorkerFields[] = {{.name = "wtest_worker",
                                        .type = FieldType::Unsigned32,
                                        .origin = FieldOrigin::Plugin,
                                        .offset = offsetof(WorkerFields, worker)}};

class WorkerProbe final : public ProcessPluginBase<WorkerProbe> {
public:
    struct Worker {
        std::uint32_t id;
        std::atomic<std::uint64_t> packets{0};
        std::atomic<std::uint64_t> released{0};
        explicit Worker(std::uint32_t i) : id(i) { ++g_live; }
        ~Worker() { --g_live; }
        Worker(const Worker&) = delete;
        Worker& operator=(const Worker&) = delete;
    };
    struct Ext {
        std::uint32_t worker;
    };
    std::string_view name() const noexcept override { return "wtest"; }
    std::span<const FieldSpec> fields() const noexcept override { return kWorkerFields; }
    std::unique_ptr<Worker> createWorker() const {
        return std::make_unique<Worker>(static_cast<std::uint32_t>(++g_made));
    }
    void workerStats(const Worker& w, CacheStats& out) const noexcept {
        out.pluginHeapAllocations += w.packets.load();
        out.pluginHeapFrees += w.released.load();
    }
    HookResult postCreate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.attachExt<Ext>();
        if (e != nullptr) e->worker = ctx.workerAs<Worker>().id;
        ++ctx.workerAs<Worker>().packets;
        return kContinue;
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        ++ctx.workerAs<Worker>().packets;
        return kContinue;
    }
    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        auto* f = out.begin<WorkerFields>();
        if (f == nullptr) return;
        f->worker = ctx.workerAs<Worker>().id;
        out.commit();
    }
    void release(FlowContext& ctx) const noexcept {
        if (ctx.ext<Ext>() != nullptr) ++ctx.workerAs<Worker>().released;
    }
};

std::unique_ptr<StoragePlugin> table(const std::string& storage, WorkerProbe& probe) {
    auto t = Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, storage, "-s");
    ProcessPlugin* plugins[] = {&probe};
    EXPECT_TRUE(t->enableProcessPlugins(plugins));
    return std::unique_ptr<StoragePlugin>(t.release());
}

std::vector<std::uint32_t> drain(ExportRing& ring, ExtRing& ext) {
    std::vector<std::uint32_t> ids;
    FlowRecord r;
    while (ring.tryPop(r)) {
        for (const PluginInstance i : pluginInstances(r))
            ids.push_back(static_cast<std::uint32_t>(readPluginUnsigned(kWorkerFields[0], i.data)));
        if (r.extLen != 0) ext.releaseThrough(r.ext, r.extLen);
    }
    return ids;
}

TEST(ProcessWorkerState, EachTableHasItsOwnWorkerUsedByItsHooksAndDestroyedWithIt) {
    WorkerProbe probe;
    const int before = g_live.load();
    {
        auto a = table("cache;size=10;line=4;seed=1", probe);
        auto b = table("cache;size=10;line=4;seed=1", probe);
        EXPECT_EQ(g_live.load(), before + 2);
        ExportRing ringA(1 << 10), ringB(1 << 10);
        ExtRing extA(1 << 20), extB(1 << 20);
        std::atomic<bool> abandon{false};
        a->attach(ExportTarget{&ringA, &abandon, 0, &extA, nullptr});
        b->attach(ExportTarget{&ringB, &abandon, 1, &extB, nullptr});
        for (int i = 0; i < 3; ++i) {
            ParsedPacket p = packet("10.0.0.1", 1000, "10.0.0.2", 80, at(1 + i), kAck);
            a->processBatch(std::span<ParsedPacket>(&p, 1));
        }
        ParsedPacket q = packet("10.0.0.3", 1000, "10.0.0.4", 80, at(1), kAck);
        b->processBatch(std::span<ParsedPacket>(&q, 1));
        a->flushAll();
        b->flushAll();
        const auto idsA = drain(ringA, extA);
        const auto idsB = drain(ringB, extB);
        ASSERT_EQ(idsA.size(), 1U);
        ASSERT_EQ(idsB.size(), 1U);
        EXPECT_NE(idsA[0], idsB[0]) << "two tables, two workers";
        EXPECT_EQ(a->stats().pluginHeapAllocations, 3U) << "workerStats: packets seen by a";
        EXPECT_EQ(a->stats().pluginHeapFrees, 1U) << "release ran for the exported flow";
        EXPECT_EQ(b->stats().pluginHeapAllocations, 1U);
    }
    EXPECT_EQ(g_live.load(), before) << "workers destroyed with their tables";
}

TEST(ProcessWorkerState, ReleaseRunsWithoutAnExportTarget) {
    WorkerProbe probe;
    auto t = table("cache;size=10;line=4;seed=1", probe);
    for (std::uint16_t port = 1; port <= 5; ++port) {
        ParsedPacket p = packet("10.0.0.1", port, "10.0.0.2", 80, at(1), kAck);
        t->processBatch(std::span<ParsedPacket>(&p, 1));
    }
    t->flushAll();
    EXPECT_EQ(t->stats().pluginHeapFrees, 5U);
}

TEST(ProcessWorkerState, TheExportThreadHasAWorkerOfItsOwnUnderExpiryThread) {
    WorkerProbe probe;
    const int before = g_live.load();
    auto t = table("cache;size=10;line=4;seed=1;inactive=30;expiry=thread", probe);
    EXPECT_EQ(g_live.load(), before + 2);
    ExportRing ring(1 << 10), sweepRing(1 << 12);
    ExtRing ext(1 << 20), sweepExt(8 << 20);
    std::atomic<bool> abandon{false};
    t->attach(ExportTarget{&ring, &abandon, 0, &ext, &sweepExt});
    ParsedPacket p = packet("10.0.0.1", 1, "10.0.0.2", 80, at(1), kAck);
    t->processBatch(std::span<ParsedPacket>(&p, 1));
    ParsedPacket q = packet("10.0.0.1", 2, "10.0.0.2", 80, at(100), kAck);
    t->processBatch(std::span<ParsedPacket>(&q, 1));  // the first flow is due now
    t->advanceTime(at(100));
    for (int i = 0; i < 10; ++i) t->sweepFromExportThread(sweepRing);
    t->flushAll();
    const auto swept = drain(sweepRing, sweepExt);
    const auto worker = drain(ring, ext);
    ASSERT_EQ(swept.size() + worker.size(), 2U);
    std::set<std::uint32_t> ids(swept.begin(), swept.end());
    for (const auto id : worker)
        EXPECT_EQ(ids.count(id), 0U) << "the export thread's writes use the other worker";
    EXPECT_FALSE(swept.empty());
}

}  // namespace
}  // namespace rowprobe::storage::testing
