#include "adaptive_sim.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <stdexcept>

#include "cache/rank_order.hpp"

namespace rowprobe::tuner {

namespace {

using storage::Slot;
constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04;

constexpr TimeNs saturatingAdd(TimeNs a, TimeNs b) noexcept {
    return a > kNever - b ? kNever : a + b;
}

struct Rec {
    std::uint32_t key = kEmpty;
    std::uint32_t lastIndex = 0;  ///< trace index of the record's latest packet
    TimeNs first = 0;
    TimeNs last = 0;
    std::array<std::uint8_t, 2> flags{};
    bool initiatorIsA = true;
};

template <unsigned L>
class Sim {
public:
    Sim(const SimTrace& trace, const storage::AdaptiveConfig& cfg, const SimParams& prm)
        : m_trace(trace), m_prm(prm) {
        const std::vector<unsigned> t = cfg.targets();
        for (std::size_t c = 0; c < storage::kPacketClassCount; ++c) {
            for (unsigned p = 0; p < L; ++p) {
                const int to =
                    std::clamp(static_cast<int>(t[p]) + cfg.offsets[c], 0, static_cast<int>(L) - 1);
                m_hitTo[c][p] = static_cast<std::uint8_t>(std::min(p, static_cast<unsigned>(to)));
            }
            m_insertAt[c] = static_cast<std::uint8_t>(cfg.insert[c]);
        }
        m_rows = (std::size_t{1} << prm.sizeLog2) / L;
        m_rowMask = m_rows - 1;
        m_rowsPerBlock = std::min<std::size_t>(64, m_rows);
        m_blockShift = static_cast<unsigned>(std::countr_zero(m_rowsPerBlock));
        m_blockCount = m_rows / m_rowsPerBlock;
        m_order.resize(m_rows);
        m_recs.resize(m_rows * L);
        m_rowDeadline.assign(m_rows, kNever);
        m_blockDeadline.assign(m_blockCount, kNever);
        if (prm.sessions != nullptr) m_lastEvicted.assign(trace.keys, 0);
    }

    SimResult run() {
        std::uint32_t begin = 0;
        for (const std::uint32_t end : m_trace.blockEnds) {
            m_batchNewest = 0;
            for (std::uint32_t i = begin; i < end; ++i) update(i);
            if (end != begin) m_now = m_batchNewest;
            sweepIncremental();
            begin = end;
        }
        return m_res;
    }

private:
    bool expired(const Rec& f, TimeNs now) const noexcept {
        return (now >= f.last && now - f.last >= m_prm.inactive) ||
               (now >= f.first && now - f.first >= m_prm.active);
    }
    TimeNs deadline(const Rec& f) const noexcept {
        return std::min(saturatingAdd(f.last, m_prm.inactive),
                        saturatingAdd(f.first, m_prm.active));
    }
    std::uint32_t freeMask(std::size_t r) const noexcept {
        std::uint32_t m = 0;
        const Rec* recs = &m_recs[r * L];
        for (unsigned s = 0; s < L; ++s) m |= (recs[s].key == kEmpty ? 1U : 0U) << s;
        return m;
    }
    Slot pickFree(std::size_t r) const noexcept {
        const std::uint32_t free = freeMask(r);
        return free == 0 ? storage::kNoSlot : m_order[r].firstFree(free);
    }
    void retire(std::size_t r, Slot s, bool evicted) noexcept {
        Rec& f = m_recs[r * L + s];
        if (!m_lastEvicted.empty()) m_lastEvicted[f.key] = evicted ? 1 : 0;
        f.key = kEmpty;
        m_order[r].moveTo(s, L - 1);  // adaptive: the hole goes to the tail
    }
    std::size_t expireRow(std::size_t r, TimeNs now) noexcept {
        TimeNs next = kNever;
        std::size_t n = 0;
        for (unsigned s = 0; s < L; ++s) {
            const Rec& f = m_recs[r * L + s];
            if (f.key == kEmpty) continue;
            if (expired(f, now)) {
                retire(r, static_cast<Slot>(s), false);
                ++n;
            } else {
                next = std::min(next, deadline(f));
            }
        }
        m_rowDeadline[r] = next;
        return n;
    }

    void update(std::uint32_t i) noexcept {
        const SimPacket& p = m_trace.packets[i];
        const std::size_t r = p.hash & m_rowMask;
        Rec* recs = &m_recs[r * L];
        auto& order = m_order[r];
        const unsigned cls = p.cls & 3U;
        m_batchNewest = std::max(m_batchNewest, p.ts);

        for (unsigned s = 0; s < L; ++s) {
            Rec& f = recs[s];
            if (f.key != p.key) continue;
            const bool forward = p.fromA == f.initiatorIsA;
            const std::uint8_t seen = f.flags[forward ? 0 : 1];
            const bool ended =
                ((p.tcpFlags & kSyn) != 0 && (seen & (kFin | kRst)) != 0) || expired(f, p.ts);
            if (!ended) {
                const unsigned rank = order.rankOf(static_cast<Slot>(s));
                ++m_res.hits;
                m_res.positionSum += rank + 1;
                order.moveTo(static_cast<Slot>(s), m_hitTo[cls][rank]);
                f.flags[forward ? 0 : 1] |= p.tcpFlags;
                f.last = std::max(f.last, p.ts);
                f.lastIndex = i;
                return;
            }
            retire(r, static_cast<Slot>(s), false);
            break;
        }

        if (!m_lastEvicted.empty() && m_prm.sessions->starts[i] == 0 && m_lastEvicted[p.key] != 0)
            ++m_res.recreated;
        bool free = true;
        Slot s = pickFree(r);
        if (s == storage::kNoSlot) {
            free = false;
            if (m_rowDeadline[r] <= p.ts && expireRow(r, p.ts) != 0) s = pickFree(r);
            if (s != storage::kNoSlot) {
                ++m_res.missReclaim;
            } else {
                ++m_res.missEvict;
                s = order.at(L - 1);
                const Rec& v = recs[s];
                if (m_prm.topKey != nullptr && !m_lastEvicted.empty() &&
                    (*m_prm.topKey)[v.key] != 0 &&
                    m_prm.sessions->next[v.lastIndex] != lab::kNoNext) {
                    ++m_res.hhEvict;
                }
                retire(r, s, true);
            }
        } else {
            ++m_res.missFree;
        }
        Rec& f = recs[s];
        f = Rec{p.key, i, p.ts, p.ts, {p.tcpFlags, 0}, p.fromA};
        const TimeNs due = deadline(f);
        m_rowDeadline[r] = std::min(m_rowDeadline[r], due);
        TimeNs& block = m_blockDeadline[r >> m_blockShift];
        block = std::min(block, due);
        if (!free) order.moveTo(s, m_insertAt[cls]);
    }

    void sweepIncremental() noexcept {
        if (!m_sweepStarted) {
            m_sweepStarted = true;
            m_lastSweep = m_now;
        }
        const TimeNs dt = m_now > m_lastSweep ? m_now - m_lastSweep : 0;
        m_lastSweep = m_now;
        std::size_t blocks = m_blockCount;
        if (dt < m_prm.sweepPeriod) {
            m_sweepCredit += dt * m_blockCount;
            blocks = static_cast<std::size_t>(m_sweepCredit / m_prm.sweepPeriod);
            m_sweepCredit -= static_cast<TimeNs>(blocks) * m_prm.sweepPeriod;
        } else {
            m_sweepCredit = 0;
        }
        blocks =
            std::clamp<std::size_t>(blocks, std::min<std::size_t>(1, m_blockCount), m_blockCount);
        for (std::size_t k = 0; k < blocks; ++k) {
            const std::size_t b = m_sweepCursor;
            m_sweepCursor = (b + 1) & (m_blockCount - 1);
            if (m_blockDeadline[b] > m_now) continue;
            TimeNs earliest = kNever;
            const std::size_t first = b << m_blockShift;
            for (std::size_t r = first; r < first + m_rowsPerBlock; ++r) {
                if (m_rowDeadline[r] <= m_now) m_res.exportedBySweep += expireRow(r, m_now);
                earliest = std::min(earliest, m_rowDeadline[r]);
            }
            m_blockDeadline[b] = earliest;
        }
    }

    const SimTrace& m_trace;
    SimParams m_prm;
    std::array<std::array<std::uint8_t, L>, storage::kPacketClassCount> m_hitTo{};
    std::array<std::uint8_t, storage::kPacketClassCount> m_insertAt{};
    std::size_t m_rows = 0;
    std::size_t m_rowMask = 0;
    std::size_t m_rowsPerBlock = 0;
    unsigned m_blockShift = 0;
    std::size_t m_blockCount = 0;
    std::vector<storage::RankOrder<L>> m_order;
    std::vector<Rec> m_recs;
    std::vector<TimeNs> m_rowDeadline;
    std::vector<TimeNs> m_blockDeadline;
    std::vector<std::uint8_t> m_lastEvicted;  ///< per key: its latest record was evicted
    TimeNs m_now = 0;
    TimeNs m_batchNewest = 0;
    TimeNs m_lastSweep = 0;
    TimeNs m_sweepCredit = 0;
    std::size_t m_sweepCursor = 0;
    bool m_sweepStarted = false;
    SimResult m_res;
};

}  // namespace

SimResult simulate(const SimTrace& trace, const storage::AdaptiveConfig& config,
                   const SimParams& params) {
    if (config.line != params.line)
        throw std::logic_error("configuration line differs from the table's");
    switch (params.line) {
        case 4:
            return Sim<4>(trace, config, params).run();
        case 8:
            return Sim<8>(trace, config, params).run();
        case 16:
            return Sim<16>(trace, config, params).run();
        case 32:
            return Sim<32>(trace, config, params).run();
        default:
            throw std::logic_error("line must be 4, 8, 16 or 32");
    }
}

}  // namespace rowprobe::tuner
