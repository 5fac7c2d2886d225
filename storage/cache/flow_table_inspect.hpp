// FlowTable<P, L> (flow_table.hpp): introspection for tests and tools (CacheTable): a row's
// slots as the policy orders them, and the structural invariants (ranks a permutation, the
// policy's own check, hashes, rows and tags consistent, row and block deadlines lower bounds,
// flowsInCache equal to the occupied slots). Never on the packet path; called on the worker's
// thread with the export thread idle.
//
// Included at the end of flow_table.hpp; not a header to include on its own.
#pragma once

#include <string>
#include <vector>

#include "cache/flow_table.hpp"

namespace rowprobe::storage {

template <class P, unsigned L>
std::vector<SlotView> FlowTable<P, L>::inspectRow(std::size_t r) const {
    std::vector<SlotView> out;
    const ConstRowRef<P, L> row = constRef(r);
    for (Slot s = 0; s < Slot{L}; ++s) {
        SlotView v;
        v.slot = s;
        v.occupied = row.occupied(s);
        v.position = m_policy.position(row, s);
        if constexpr (requires { m_policy.segmentOf(row, s); })
            v.segment = m_policy.segmentOf(row, s);
        if (v.occupied) {
            const CachedFlow& f = row.rec(s);
            v.key = f.key;
            v.packets = f.packets[0] + f.packets[1];
            v.timeFirst = f.timeFirst;
            v.timeLast = f.timeLast;
        }
        out.push_back(v);
    }
    return out;
}

template <class P, unsigned L>
std::string FlowTable<P, L>::checkInvariants() const {
    std::uint64_t occupied = 0;
    for (std::size_t r = 0; r < m_rowCount; ++r) {
        const RowType& row = m_rows[r];
        const std::string where = "row " + std::to_string(r);
        if constexpr (requires { row.state.order.valid(); }) {
            if (!row.state.order.valid()) return where + ": ranks are not a permutation";
        }
        if constexpr (requires { m_policy.checkRow(constRef(r)); }) {
            const std::string broken = m_policy.checkRow(constRef(r));
            if (!broken.empty()) {
                std::string problem = where;
                problem.append(": policy '").append(P::kName).append("': ").append(broken);
                return problem;
            }
        }
        TimeNs earliest = kNever;
        for (Slot s = 0; s < Slot{L}; ++s) {
            if (row.tags[s] == kEmptyTag) continue;
            ++occupied;
            const CachedFlow& f = recordAt(r, s);
            const std::uint64_t h = m_config.hash->key(f.key, m_seed);
            if (f.hashHi != h >> 32) return where + ": stale hash";
            if ((h & m_rowMask) != r) return where + ": flow in the wrong row";
            if (tagOf(h) != row.tags[s]) return where + ": tag does not match the flow";
            earliest = std::min(earliest, f.deadline(m_config.inactive, m_config.active));
        }
        if (row.deadline > earliest) return where + ": deadline later than a flow's expiry";
        if (blockDeadline(r >> m_blockShift) > row.deadline) {
            return where + ": block deadline later than the row's";
        }
    }
    if (occupied != stats().flowsInCache) {
        return "flowsInCache " + std::to_string(stats().flowsInCache) + " but " +
               std::to_string(occupied) + " occupied slots";
    }
    return {};
}

}  // namespace rowprobe::storage
