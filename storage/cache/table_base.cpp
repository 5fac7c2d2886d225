#include "cache/table_base.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <new>

#include "rowprobe/errors.hpp"

namespace rowprobe::storage {

namespace {
const std::atomic<bool> kNeverAbandon{false};
}  // namespace

TableBase::TableBase(const TableConfig& config, unsigned line, std::size_t rowBytes)
    : m_config(config) {
    const std::size_t records = std::size_t{1} << config.sizeLog2;
    m_rowCount = records / line;
    m_rowMask = m_rowCount - 1;
    m_rowsPerBlock = std::min<std::size_t>(kRowsPerBlock, m_rowCount);
    m_blockShift = static_cast<unsigned>(std::countr_zero(m_rowsPerBlock));
    m_blockCount = m_rowCount / m_rowsPerBlock;
    try {
        // Tunnel facts of inner flows, beside the records (CachedFlow has no room for 40
        // bytes): written and read only for flows whose `tunnelled` is set, so the pages of a
        // capture without tunnels are never touched.
        m_tunnels = detail::TableArray<FlowTunnel>(records);
        m_blockDeadline = std::make_unique<std::atomic<TimeNs>[]>(m_blockCount);
        clearBlockDeadlines();
        if (config.expiryThread) m_locks = RowLocks(m_rowCount);
        m_admission = Admission(config.flood, m_rowCount);
    } catch (const std::bad_alloc&) {
        throwNoMemory(config, rowBytes);
    }
    m_hashBatch = config.hash->batch;
    m_seed = config.seed;
    if (config.fragEnabled) m_frag.emplace(config.fragSize, config.fragTimeout, config.seed);
    m_stats.capacity = records;
}

void TableBase::throwNoMemory(const TableConfig& config, std::size_t rowBytes) {
    const std::size_t records = std::size_t{1} << config.sizeLog2;
    const std::size_t rows = records / config.line;
    throw ConfigError(
        {.component = "storage 'cache'",
         .option = "size",
         .value = std::to_string(config.sizeLog2),
         .problem = "cannot allocate " +
                    std::to_string((records * sizeof(CachedFlow) + rows * rowBytes) >> 20) +
                    " MiB for 2^" + std::to_string(config.sizeLog2) + " records"});
}

bool TableBase::enableProcessPlugins(std::span<ProcessPlugin* const> plugins) {
    if (!plugins.empty())
        m_proc.configure(plugins, std::size_t{1} << m_config.sizeLog2, threaded(),
                         m_config.hugePools);
    return true;
}

void TableBase::attach(const ExportTarget& target) {
    m_target = target;
    if (m_target.abandon == nullptr) m_target.abandon = &kNeverAbandon;
}

CacheStats TableBase::stats() const noexcept {
    CacheStats out = m_stats;
    if (threaded()) m_sweeper.counters.addTo(out);
    if (m_proc.enabled()) {
        out.extPoolExhausted = m_proc.poolExhausted();
        m_proc.addWorkerStats(out);
    }
    return out;
}

std::size_t TableBase::inlineSweepBlocks() noexcept {
    const std::size_t blocks = m_pace.advance(m_now, m_blockCount, m_config.sweepPeriod);
    return std::clamp(blocks, std::min(m_config.sweepMinBlocks, m_blockCount), m_blockCount);
}

bool TableBase::owePass(TimeNs now) noexcept {
    if (now == 0) return false;  // no packet yet
    Sweeper& sw = m_sweeper;
    if (!sw.pace.started()) sw.owed = m_blockCount;  // the first call makes a full pass
    sw.owed =
        std::min(m_blockCount, sw.owed + sw.pace.advance(now, m_blockCount, m_config.sweepPeriod));
    return true;
}

bool TableBase::sweepHasRoom(const ExportRing& ring, unsigned line) const noexcept {
    if (ring.capacity() - ring.size() < line) return false;
    // Room for a whole row's plugin data, wrap included.
    return !m_proc.enabled() || m_target.sweepExt == nullptr ||
           m_target.sweepExt->freeBytes() >= 2 * line * kMaxPluginData;
}

std::size_t TableBase::prefault(std::size_t maxBytes) noexcept {
    if (!m_config.prefault) return 0;
    if (const std::size_t n = m_proc.prefault(maxBytes); n != 0) return n;
    return prefaultPlanes(maxBytes);
}

unsigned TableBase::planesAhead(std::uint64_t flows, std::size_t rows, unsigned planes) noexcept {
    constexpr double kRowsPerPage = 4096.0 / sizeof(CachedFlow);
    const double m = static_cast<double>(flows) / static_cast<double>(rows);
    double pmf = std::exp(-m);  // P(X = p)
    double cdf = pmf;           // P(X <= p)
    unsigned p = 0;
    for (; p < planes; ++p) {
        if (kRowsPerPage * (1.0 - cdf) < 0.5) break;
        pmf *= m / static_cast<double>(p + 1);
        cdf += pmf;
    }
    return std::min(planes, p + 1);
}

std::size_t TableBase::prefaultPlanes(std::size_t maxBytes) noexcept {
    if (m_planes.base == nullptr || m_planesRefused) return 0;
    const unsigned want =
        planesAhead(m_occupancy.load(std::memory_order_relaxed), m_rowCount, m_planes.count);
    const std::size_t target = (want * m_planes.planeBytes) & ~std::size_t{4095};
    if (m_planesPopulated >= target) return 0;
    const std::size_t n = std::min(target - m_planesPopulated, maxBytes);
    if (!detail::populateWrite(m_planes.base + m_planesPopulated, n)) {
        // EINVAL: a kernel before 5.14; ENOMEM: no memory now. The worker's own faults remain.
        if (errno == EINVAL) m_planesRefused = true;
        return 0;
    }
    m_planesPopulated += n;
    return n;
}

}  // namespace rowprobe::storage
