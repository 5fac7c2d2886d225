// One lab configuration: a real `cache` table (built through the plugin registry exactly as
// `-s 'cache;...'` builds it, so any registered or shared-object policy works) fed with a
// decoded capture, block by block, and its exports watched.
//
//   Trace (read-only, shared) ──copy of one block──▶ table.processBatch ──▶ ExportRing
//                                                          │                  │ drained after
//   CacheStats (the table's own counters) ◀────────────────┘                  ▼ every block
//                                   re-created flows, heavy-hitter evictions (per record)
//
// * The ring holds 2^size + 64 records, more than one processBatch or flushAll can export, so the
//   replay thread drains it itself after each call and never waits.
// * Re-created flow (exact, in the lab): a record whose first packet does not start a flow of an
//   unbounded table (trace.hpp Sessions) while the previous record of its key ended with
//   LackOfResources — the flow was split because the policy evicted it too early. Records of a
//   key leave the table in order and each covers the next `packets` packets of that key, so a
//   per-key cursor finds each record's first packet.
// * Cut eviction: a LackOfResources eviction of a flow that still had packets to come (its last
//   packet so far is not the last of its flow in an unbounded table). Evicting a flow after its
//   last packet costs nothing; a cut eviction splits the flow (it becomes a re-created flow when
//   its next packet arrives, unless that packet starts a flow anyway).
// * Heavy-hitter eviction: a cut eviction of a key among the top-N keys by packets in the whole
//   capture (`--hh-top`; Žádník & Canini's "missed heavy hitters"). Big eviction: a cut eviction
//   of a record that already held at least K packets (`--hh-packets`).
// * Time: thread CPU time inside processBatch / flushAll only, per packet.
//
// Thread ownership: each replay owns its table and ring; the Trace and LabInputs are shared
// read-only, so configurations run in parallel threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/flow_table.hpp"
#include "trace.hpp"

namespace rowprobe::lab {

struct RunSpec {
    std::string label;   ///< shown in the tables; the policy name unless a variant
    std::string policy;  ///< policy=...
    std::string hash = "xxh3";
    unsigned sizeLog2 = 17;
    unsigned line = 16;
    std::uint64_t seed = 1;
    std::string options;  ///< extra cache/policy options, "k=v;k=v" (may be empty)
};

/// The `-s` plugin string rowprobe would take for `spec`.
std::string pluginString(const RunSpec& spec);

/// Builds the table for `spec` (throws ConfigError as rowprobe would).
std::unique_ptr<storage::CacheTable> makeTable(const RunSpec& spec);

/// Read-only inputs shared by every replay of one capture.
struct LabInputs {
    const Trace* trace = nullptr;
    const Sessions* sessions = nullptr;
    std::vector<std::uint32_t> keyStart;  ///< CSR: packets of key k are keyPackets[keyStart[k] ..]
    std::vector<std::uint32_t> keyPackets;
    std::vector<std::uint8_t> topKey;  ///< per key id
    std::uint32_t bigPackets = 20;
};

LabInputs makeLabInputs(const Trace& trace, const Sessions& sessions, std::size_t hhTop,
                        std::uint32_t bigPackets);

struct RunResult {
    RunSpec spec;
    CacheStats stats;
    std::uint64_t packets = 0;
    std::uint64_t recreated = 0;
    std::uint64_t cutEvict = 0;
    std::uint64_t hhEvict = 0;
    std::uint64_t bigEvict = 0;
    double nsPerPacket = 0;
    std::string error;  ///< configuration error or violated invariant; the run is void if set
};

RunResult replay(const LabInputs& in, const RunSpec& spec);

}  // namespace rowprobe::lab
