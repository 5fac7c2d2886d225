#include "replay.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::lab {

namespace {

std::uint64_t threadCpuNs() noexcept {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * kNsPerSec + static_cast<std::uint64_t>(t.tv_nsec);
}

/// The key id of an exported record (its canonical key is one of the two orientations).
std::uint32_t keyOfRecord(const Trace& trace, const FlowRecord& r) {
    FlowKey k;
    k.addrA = r.srcAddr;
    k.addrB = r.dstAddr;
    k.portA = r.srcPort;
    k.portB = r.dstPort;
    k.proto = r.proto;
    k.ipVersion = r.ipVersion;
    k.vlan = r.vlan;
    std::uint32_t id = trace.find(k);
    if (id != UINT32_MAX) return id;
    std::swap(k.addrA, k.addrB);
    std::swap(k.portA, k.portB);
    return trace.find(k);
}

}  // namespace

std::string pluginString(const RunSpec& spec) {
    std::string s = "cache;policy=" + spec.policy + ";size=" + std::to_string(spec.sizeLog2) +
                    ";line=" + std::to_string(spec.line) + ";hash=" + spec.hash +
                    ";seed=" + std::to_string(spec.seed);
    if (!spec.options.empty()) s += ";" + spec.options;
    return s;
}

std::unique_ptr<storage::CacheTable> makeTable(const RunSpec& spec) {
    auto plugin =
        Registry::instance().createAs<StoragePlugin>(PluginKind::Storage, pluginString(spec), "-s");
    auto* table = dynamic_cast<storage::CacheTable*>(plugin.get());
    if (table == nullptr) throw std::runtime_error("storage 'cache' did not build a flow table");
    static_cast<void>(plugin.release());  // owned by the returned pointer from here on
    return std::unique_ptr<storage::CacheTable>(table);
}

LabInputs makeLabInputs(const Trace& trace, const Sessions& sessions, std::size_t hhTop,
                        std::uint32_t bigPackets) {
    LabInputs in;
    in.trace = &trace;
    in.sessions = &sessions;
    in.bigPackets = bigPackets;
    in.topKey = topKeys(trace, hhTop);
    const std::vector<std::uint32_t> counts = packetsPerKey(trace);
    in.keyStart.assign(counts.size() + 1, 0);
    for (std::size_t k = 0; k < counts.size(); ++k) in.keyStart[k + 1] = in.keyStart[k] + counts[k];
    in.keyPackets.resize(trace.packets.size());
    std::vector<std::uint32_t> fill(in.keyStart.begin(), in.keyStart.end() - 1);
    for (std::size_t i = 0; i < trace.packets.size(); ++i) {
        in.keyPackets[fill[trace.keyId[i]]++] = static_cast<std::uint32_t>(i);
    }
    return in;
}

RunResult replay(const LabInputs& in, const RunSpec& spec) {
    RunResult res;
    res.spec = spec;
    const Trace& trace = *in.trace;
    std::unique_ptr<storage::CacheTable> table;
    try {
        table = makeTable(spec);
    } catch (const ConfigError& e) {
        res.error = e.render();
        return res;
    } catch (const std::exception& e) {
        res.error = e.what();
        return res;
    }
    const std::size_t capacity = std::size_t{1} << spec.sizeLog2;
    ExportRing ring(std::bit_ceil(capacity + kMaxBatch + 1));
    std::atomic<bool> abandon{false};
    table->attach(ExportTarget{&ring, &abandon, 0});

    const std::size_t keys = trace.keys.size();
    std::vector<std::uint32_t> cursor(in.keyStart.begin(), in.keyStart.end() - 1);
    std::vector<std::uint8_t> lastWasEvicted(keys, 0);

    auto drain = [&] {
        FlowRecord r;
        while (ring.tryPop(r)) {
            const std::uint32_t k = keyOfRecord(trace, r);
            if (k == UINT32_MAX) continue;  // key changed by the fragment cache: not attributable
            const std::uint32_t first = cursor[k];
            const std::uint32_t end = in.keyStart[k + 1];
            const std::uint32_t count = r.packets[0] + r.packets[1];
            cursor[k] = std::min<std::uint32_t>(end, first + count);
            if (first < end && lastWasEvicted[k] != 0 &&
                in.sessions->starts[in.keyPackets[first]] == 0) {
                ++res.recreated;
            }
            const bool evicted = r.endReason == EndReason::LackOfResources;
            lastWasEvicted[k] = evicted ? 1 : 0;
            // Harmful evictions only: the flow had more packets to come (its last packet so far
            // has a successor in the same flow of an unbounded table).
            if (evicted && cursor[k] > first &&
                in.sessions->next[in.keyPackets[cursor[k] - 1]] != kNoNext) {
                ++res.cutEvict;
                if (in.topKey[k] != 0) ++res.hhEvict;
                if (count >= in.bigPackets) ++res.bigEvict;
            }
        }
    };

    std::array<ParsedPacket, kMaxBatch> batch;
    std::uint64_t busy = 0;
    std::uint32_t begin = 0;
    for (const std::uint32_t end : trace.blockEnds) {
        const std::size_t n = end - begin;
        std::copy(trace.packets.begin() + begin, trace.packets.begin() + end, batch.begin());
        const std::uint64_t t0 = threadCpuNs();
        table->processBatch(std::span<ParsedPacket>(batch.data(), n));
        busy += threadCpuNs() - t0;
        drain();
        begin = end;
    }
    res.error = table->checkInvariants();
    const std::uint64_t t0 = threadCpuNs();
    table->flushAll();
    busy += threadCpuNs() - t0;
    drain();
    res.stats = table->stats();
    res.packets = trace.packets.size();
    res.nsPerPacket =
        res.packets != 0 ? static_cast<double>(busy) / static_cast<double>(res.packets) : 0.0;
    return res;
}

}  // namespace rowprobe::lab
