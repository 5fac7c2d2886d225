// Expiry of idle flows: what the two expiry modes share, outside the FlowTable template.
//
//   expiryAt(flow, now)   the one rule deciding whether and why a cached flow has ended at
//                         `now` (used by the packet path, the sweeps and the final flush)
//   SweepPace             the one credit scheme pacing both sweeps: blocks of 64 rows owed
//                         for an advance of the clock, a full pass per sweepPeriod
//   RowLocks              expiry=thread: one byte lock per row (worker: lock, export
//                         thread: try-lock), a separate array so rows keep their layout
//   SweepCounters         expiry=thread: what the export thread removed, as relaxed atomics
//                         the worker adds to its own CacheStats
//   lowerDeadline         fetch-min on a block deadline shared by both threads
//
// The routine that expires one row exists once, FlowTable::expireRow (it needs the policy);
// the inline sweep, the export thread's sweep (under the row's try-lock), the full-row
// reclaim and the final flush all call it. Pacing: after every batch (inline) or every call of
// the export thread (thread), SweepPace turns the packet time since the previous call into
// blocks: credit += Δt × blocks; visit ⌊credit / sweepPeriod⌋; a gap of a whole period or more
// asks for a full pass. So a full pass completes within sweepPeriod of packet time plus one
// batch, which bounds how late an idle flow is exported (flow_table.hpp).
//
// Thread ownership: SweepPace belongs to the thread that sweeps (worker inline, export thread
// in thread mode); RowLocks and SweepCounters are shared, atomics only. Costs: nothing here
// runs per packet except RowLocks::lock/unlock in expiry=thread (an exchange and a store).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "cache/row.hpp"
#include "rowprobe/flow_record.hpp"
#include "rowprobe/packet.hpp"
#include "rowprobe/stats.hpp"

namespace rowprobe::storage {

/// "No reason to end": the flow is alive.
inline constexpr EndReason kAlive = static_cast<EndReason>(0);

namespace tcp {
inline constexpr std::uint8_t kFin = 0x01;
inline constexpr std::uint8_t kSyn = 0x02;
inline constexpr std::uint8_t kRst = 0x04;
inline constexpr std::uint8_t kAck = 0x10;
}  // namespace tcp

/// Whether `f` has expired at time `now`, and why: the timeout whose deadline came first
/// (inactive on a tie), so the reason is the same whenever the flow is looked at after it
/// expired: by its next packet, the inline sweep, the export thread or the final flush.
/// Always inlined: every hit asks it, and since the table's split GCC called it out of line.
[[gnu::always_inline]] inline EndReason expiryAt(const CachedFlow& f, TimeNs now, TimeNs inactive,
                                                 TimeNs active) noexcept {
    const TimeNs idle = saturatingAdd(f.timeLast, inactive);
    const TimeNs old = saturatingAdd(f.timeFirst, active);
    const bool idleDue = now >= idle;
    const bool oldDue = now >= old;
    if (idleDue && (!oldDue || idle <= old)) {
        return ((f.tcpFlags[0] | f.tcpFlags[1]) & (tcp::kFin | tcp::kRst)) != 0
                   ? EndReason::EndOfFlow
                   : EndReason::InactiveTimeout;
    }
    return oldDue ? EndReason::ActiveTimeout : kAlive;
}

/// The reason the stored flow `f` ends before packet `pkt` joins it, or kAlive: any SYN, a
/// SYN-ACK included (ipfixprobe 5.7's cache tests the SYN bit alone), in a direction whose flags
/// hold FIN or RST (a new connection on a finished 5-tuple), else a timeout at the packet's time.
inline EndReason endBefore(const CachedFlow& f, const ParsedPacket& pkt, bool forward,
                           TimeNs inactive, TimeNs active) noexcept {
    const std::uint8_t seen = f.tcpFlags[forward ? 0 : 1];
    if ((pkt.tcpFlags & tcp::kSyn) != 0 && (seen & (tcp::kFin | tcp::kRst)) != 0) {
        return EndReason::EndOfFlow;
    }
    return expiryAt(f, pkt.ts, inactive, active);
}

/// The credit scheme of both sweeps (see above). Owned by the sweeping thread.
class SweepPace {
public:
    bool started() const noexcept { return m_started; }
    /// The blocks (of `blocks`) owed for the clock's advance to `now`: all of them, with the
    /// credit cleared, once a whole `period` or more passed; 0 on the first call. A clock that
    /// steps back owes nothing.
    std::size_t advance(TimeNs now, std::size_t blocks, TimeNs period) noexcept;
    /// A full pass was just made at `now`: nothing is owed.
    void restart(TimeNs now) noexcept {
        m_last = now;
        m_credit = 0;
    }

private:
    TimeNs m_last = 0;
    TimeNs m_credit = 0;  ///< ns × blocks owed, below one block's worth
    bool m_started = false;
};

/// The body of a spin-wait loop (x86 `pause`).
inline void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// expiry=thread: one lock byte per row, 64 per cache line (0 free, 1 held).
class RowLocks {
public:
    RowLocks() = default;
    explicit RowLocks(std::size_t rows)
        : m_locks(std::make_unique<std::atomic<std::uint8_t>[]>(rows)) {}

    bool enabled() const noexcept { return m_locks != nullptr; }
    /// Worker: spins with pause, yields after kSpinsBeforeYield spins (the other holder may
    /// have been preempted).
    void lock(std::size_t r) noexcept {
        std::atomic<std::uint8_t>& lock = m_locks[r];
        unsigned spins = 0;
        while (lock.exchange(1, std::memory_order_acquire) != 0) {
            while (lock.load(std::memory_order_relaxed) != 0) {
                if (++spins < kSpinsBeforeYield) {
                    cpuRelax();
                } else {
                    std::this_thread::yield();
                }
            }
        }
    }
    void unlock(std::size_t r) noexcept { m_locks[r].store(0, std::memory_order_release); }
    /// Export thread: never waits.
    bool tryLock(std::size_t r) noexcept {
        std::atomic<std::uint8_t>& lock = m_locks[r];
        return lock.load(std::memory_order_relaxed) == 0 &&
               lock.exchange(1, std::memory_order_acquire) == 0;
    }
    const void* address(std::size_t r) const noexcept { return &m_locks[r]; }

private:
    static constexpr unsigned kSpinsBeforeYield = 128;
    std::unique_ptr<std::atomic<std::uint8_t>[]> m_locks;
};

/// Holds row r's lock for a scope when the locks are enabled (the final flush in either mode).
class RowGuard {
public:
    RowGuard(RowLocks& locks, std::size_t r) noexcept
        : m_locks(locks.enabled() ? &locks : nullptr), m_row(r) {
        if (m_locks != nullptr) m_locks->lock(r);
    }
    ~RowGuard() {
        if (m_locks != nullptr) m_locks->unlock(m_row);
    }
    RowGuard(const RowGuard&) = delete;
    RowGuard& operator=(const RowGuard&) = delete;

private:
    RowLocks* m_locks;
    std::size_t m_row;
};

/// expiry=thread: what the export thread removed from the table, for the worker's stats().
struct SweepCounters {
    std::array<std::atomic<std::uint64_t>, kEndReasonSlots> exported{};
    std::atomic<std::uint64_t> bySweep{0};
    std::atomic<std::uint64_t> removed{0};
    std::atomic<std::uint64_t> pluginDropped{0};

    /// Export thread: `n` records detached and pushed.
    void count(const FlowRecord* records, std::size_t n) noexcept;
    /// Worker: adds the export thread's counts to its own (flowsInCache loses the removals).
    void addTo(CacheStats& stats) const noexcept;
};

/// Lowers an atomic deadline to `due` unless it is already earlier (fetch-min).
inline void lowerDeadline(std::atomic<TimeNs>& deadline, TimeNs due) noexcept {
    TimeNs current = deadline.load(std::memory_order_relaxed);
    while (due < current &&
           !deadline.compare_exchange_weak(current, due, std::memory_order_relaxed)) {
    }
}

}  // namespace rowprobe::storage
