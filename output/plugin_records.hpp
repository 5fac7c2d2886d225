// Which records an output writes for a flow with process-plugin data
// (docs/design/process-runtime.md): the flow's instances, grouped by plugin, become one or more
// output records.
//
//   instances of the flow          output records (k = 0 .. N-1, N = most instances of a plugin)
//   pstats  x1                     k=0: pstats[0] dns[0]
//   passivedns x3                  k=1: pstats[0] dns[1]     a plugin with one instance is in
//                                  k=2: pstats[0] dns[2]     every record; one with several has
//                                                            its instance k in record k only
//
// So a flow whose plugins each have one instance is one record with all of them; passivedns' one
// instance per answer and netbios' one per name packet give one record per instance, the flow's
// other fields repeated (what NEMEA consumers of ipfixprobe's references expect). Outputs ask
// within a subset of the plugins (a UniRec `p=` group): N is then the most instances among the
// subset, and 0 when none of its plugins is present.
//
// Thread ownership: one per output, export thread only. No allocation once the per-plugin
// vectors have grown to the largest instance count seen.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "rowprobe/flow_record.hpp"
#include "rowprobe/plugin_data.hpp"

namespace rowprobe::output {

class PluginRecords {
public:
    explicit PluginRecords(std::size_t plugins = 0) : m_instances(plugins) {}

    std::size_t plugins() const noexcept { return m_instances.size(); }

    /// Reads `record`'s instances (instances of plugins beyond the list are ignored).
    void load(const FlowRecord& record) {
        for (auto& v : m_instances) v.clear();
        for (const PluginInstance& i : pluginInstances(record)) {
            if (i.plugin < m_instances.size()) m_instances[i.plugin].push_back(i.data);
        }
    }

    /// Output records for the plugins in `mask` (bit p = plugin p): 0 when none is present.
    std::size_t records(std::uint64_t mask = ~std::uint64_t{0}) const noexcept {
        std::size_t n = 0;
        for (std::size_t p = 0; p < m_instances.size() && p < 64; ++p) {
            if ((mask >> p & 1U) != 0) n = std::max(n, m_instances[p].size());
        }
        return n;
    }

    /// True when plugin `p` is in output record `k`.
    bool present(std::size_t p, std::size_t k) const noexcept {
        const std::size_t n = m_instances[p].size();
        return n == 1 || k < n;
    }
    /// The instance data of plugin `p` in output record `k` (present(p, k) must hold).
    std::span<const std::uint8_t> instance(std::size_t p, std::size_t k) const noexcept {
        const auto& v = m_instances[p];
        return v.size() == 1 ? v[0] : v[k];
    }

private:
    std::vector<std::vector<std::span<const std::uint8_t>>> m_instances;
};

}  // namespace rowprobe::output
