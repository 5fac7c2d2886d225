// FlowTable<P, L> (flow_table.hpp): expiry, the sweeps and the final flush — the member
// definitions that walk rows to find what has ended. The shared parts that need no policy
// (expiryAt, the SweepPace credit scheme, row locks, the export thread's counters) are in
// expiry.hpp; this file holds what reads the rows and calls the policy:
//
//   expireRow(r, now, emit)   THE row expiry routine (one for every caller):
//     ├ inline sweep          sweepBlocks: the blocks SweepPace owes, due rows only, records
//     │                       prefetched kSweepAhead due rows ahead
//     ├ full-row reclaim      reclaimExpired (flow_table.hpp), at the packet's time
//     ├ final flush           flushAll: what is due first (inline: a full sweep; thread: per
//     │                       row under its lock), then forced ends row by row
//     └ export thread         sweepFromExportThread → sweepRowLocked: try-lock, detach into
//                             m_detached, unlock, push into its own ring
//
// Time is packet time: the clock (m_now) is the latest batch's last packet's timestamp and
// follows the capture even when it steps back (concatenated captures such as ipfixprobe's
// tls.pcap keep their flows together, as in ipfixprobe). Flows end exactly on their own
// packets (step 2) and the reclaim uses the packet's time; idle flows are found by the sweep,
// whose lateness (at most a full pass: sweepPeriod of packet time + one batch) never changes
// flow boundaries or reasons. Deadlines are lower bounds: create lowers the row's and the
// block's; a hit only delays its own flow; expireRow recomputes a row exactly.
//
// Threads: expiry=inline (default), single writer, no lock; the export thread sees only the
// ring. expiry=thread (docs/design/flow-cache.md, "Expiry modes"): the worker locks a row before its lookup and
// unlocks after the update (no slot index survives an unlock), publishes its clock after every
// batch and does not sweep; the export thread sweeps under try-locks (flow_table_expiry.hpp).
// A policy's onErase may then run on the export thread under the row lock, so a policy keeps
// all mutable state in RowState / SlotMeta and never evicts from onErase.
//
// Included at the end of flow_table.hpp; not a header to include on its own.
#pragma once

#include "cache/flow_table.hpp"

namespace rowprobe::storage {

template <class P, unsigned L>
inline void FlowTable<P, L>::flushAll() noexcept {
    if (threaded() && m_proc.enabled()) m_proc.drainReturned();
    if (!threaded()) advanceTime(m_now);
    for (std::size_t r = 0; r < m_rowCount; ++r) {
        // Row after row, each exported flow's record and plugin data would be a miss
        // waited for alone: records are prefetched 2·kFlushAhead rows ahead, plugin data
        // (found through the records' handles) kFlushAhead rows ahead. Not under
        // expiry=thread, where those rows may change under the export thread.
        if (!threaded()) {
            if (r + 2 * kFlushAhead < m_rowCount) prefetchRecords(r + 2 * kFlushAhead);
            if (m_proc.hasExt() && r + kFlushAhead < m_rowCount)
                prefetchPluginData(r + kFlushAhead);
        }
        const RowGuard guard(m_locks, r);
        RowType& row = m_rows[r];
        if (row.deadline <= m_now) m_stats.exportedBySweep += expireRow(r, m_now);
        if (m_proc.hasExt()) loadPluginData(r, occupiedMask(row));
        for (std::uint32_t m = occupiedMask(row); m != 0; m &= m - 1) {
            retire(r, static_cast<Slot>(std::countr_zero(m)), EndReason::ForcedEnd);
            ++m_stats.exportedAtEnd;
        }
        row.deadline = kNever;
    }
    clearBlockDeadlines();
}

template <class P, unsigned L>
inline std::size_t FlowTable<P, L>::sweepFromExportThread(ExportRing& ring) noexcept {
    if (!threaded()) return 0;
    const TimeNs now = m_clock.load(std::memory_order_acquire);
    if (!owePass(now)) return 0;
    std::size_t pushed = 0;
    for (Sweeper& sw = m_sweeper; sw.owed > 0; --sw.owed) {
        const std::size_t b = sw.cursor;
        const TimeNs seen = blockDeadline(b);
        if (seen <= now) {
            TimeNs earliest = kNever;
            const std::size_t first = b << m_blockShift;
            for (std::size_t r = first; r < first + m_rowsPerBlock; ++r) {
                if (!sweepHasRoom(ring, L)) return pushed;  // resume at this block
                pushed += sweepRowLocked(r, now, seen, earliest, ring);
            }
            replaceBlockDeadline(b, seen, earliest);
        }
        sw.cursor = (b + 1) & (m_blockCount - 1);
    }
    return pushed;
}

template <class P, unsigned L>
template <class Emit>
inline std::size_t FlowTable<P, L>::expireRow(std::size_t r, TimeNs now, Emit&& emit) noexcept {
    RowType& row = m_rows[r];
    TimeNs next = kNever;
    std::array<EndReason, L> why{};
    std::uint32_t expired = 0;
    for (std::uint32_t m = occupiedMask(row); m != 0; m &= m - 1) {
        const auto s = static_cast<Slot>(std::countr_zero(m));
        why[s] = expiryOf(recordAt(r, s), now);
        if (why[s] != kAlive) {
            expired |= std::uint32_t{1} << s;
        } else {
            next = std::min(next, recordAt(r, s).deadline(m_config.inactive, m_config.active));
        }
    }
    // The expired flows' plugin data first, their misses together.
    if (m_proc.hasExt()) loadPluginData(r, expired);
    for (std::uint32_t m = expired; m != 0; m &= m - 1) {
        const auto s = static_cast<Slot>(std::countr_zero(m));
        emit(s, why[s]);
        row.tags[s] = kEmptyTag;
        m_policy.onErase(rowRef(r), s, why[s]);
    }
    row.deadline = next;
    return static_cast<std::size_t>(std::popcount(expired));
}

template <class P, unsigned L>
inline std::size_t FlowTable<P, L>::expireRow(std::size_t r, TimeNs now) noexcept {
    return expireRow(r, now, [this, r](Slot s, EndReason why) {
        exportRecord(r, s, why);
        --m_stats.flowsInCache;
    });
}

/// Export thread: try-locks row r; if it is due, detaches its expired records (expireRow)
/// under the lock and pushes them into `ring` after unlocking. Lowers `earliest` to the
/// row's deadline, or to `unknown` when the row was busy (its block stays due).
template <class P, unsigned L>
inline std::size_t FlowTable<P, L>::sweepRowLocked(std::size_t r, TimeNs now, TimeNs unknown,
                                                   TimeNs& earliest, ExportRing& ring) noexcept {
    if (!m_locks.tryLock(r)) {
        earliest = std::min(earliest, unknown);
        return 0;
    }
    std::size_t n = 0;
    if (m_rows[r].deadline <= now) {
        expireRow(r, now, [this, r, &n](Slot s, EndReason why) {
            FlowRecord& rec = m_detached[n++];
            rec = makeRecord(recordAt(r, s), slotIndex(r, s), why);
            if (m_proc.enabled()) sweepPluginData(r, s, why, rec);
        });
    }
    earliest = std::min(earliest, m_rows[r].deadline);
    // Counted before the row is unlocked: the worker's flushAll takes every row's lock, so when
    // it returns, each record a racing scan took off the table is counted (its final statistics
    // are read right after; counting after the unlock lost one now and then).
    m_sweeper.counters.count(m_detached.data(), n);
    m_locks.unlock(r);
    for (std::size_t i = 0; i < n; ++i) ring.tryPush(m_detached[i]);  // room for L checked
    return n;
}

/// Visits `count` blocks from the cursor, exporting what has expired at m_now. A due row's
/// records are read cold (a full row is L × 128 bytes, beyond what the hardware prefetcher
/// fetches at page boundaries), so the due rows of a block are listed first and the records
/// of the row kSweepAhead places on are prefetched while the current one is expired.
template <class P, unsigned L>
inline void FlowTable<P, L>::sweepBlocks(std::size_t count) noexcept {
    const TimeNs now = m_now;
    std::array<std::uint32_t, kRowsPerBlock> due{};
    for (std::size_t k = 0; k < count; ++k) {
        const std::size_t b = m_sweepCursor;
        m_sweepCursor = (b + 1) & (m_blockCount - 1);
        if (blockDeadline(b) > now) continue;
        const std::size_t first = b << m_blockShift;
        std::size_t n = 0;
        for (std::size_t r = first; r < first + m_rowsPerBlock; ++r) {
            if (m_rows[r].deadline <= now) due[n++] = static_cast<std::uint32_t>(r);
        }
        for (std::size_t i = 0; i < std::min(n, kSweepAhead); ++i) prefetchRecords(due[i]);
        for (std::size_t i = 0; i < n; ++i) {
            if (i + kSweepAhead < n) prefetchRecords(due[i + kSweepAhead]);
            if (m_proc.hasExt() && i + 1 < n) prefetchPluginData(due[i + 1]);
            m_stats.exportedBySweep += expireRow(due[i], now);
        }
        TimeNs earliest = kNever;
        for (std::size_t r = first; r < first + m_rowsPerBlock; ++r)
            earliest = std::min(earliest, m_rows[r].deadline);
        setBlockDeadline(b, earliest);
    }
}

/// The table holds as many flows as its huge-page planes have slots (a quarter of its
/// capacity). `table-pages=huge`: promote now. `4k`: a minute of packet time later
/// (TableConfig::hugePlanes); called once per batch until then.
template <class P, unsigned L>
inline void FlowTable<P, L>::promoteWhenDue() noexcept {
    if (!m_config.hugePlanes) {
        if (m_promoteFrom == 0) m_promoteFrom = m_now + kPromoteAfter;
        if (m_now < m_promoteFrom) return;
    }
    promoteHugePages();
}

/// The planes beyond the first are no longer sparse: they take huge pages from now on (fewer
/// TLB misses on a full table: ~4 % on 2^20 random flows in 2^22 records), and with
/// `table-pages=4k` so do the first ones, as khugepaged collapses their pages. Once per run.
template <class P, unsigned L>
inline void FlowTable<P, L>::promoteHugePages() noexcept {
    m_records.adviseHugeRest();
    m_promoteAt = std::numeric_limits<std::uint64_t>::max();
}

/// Both cache lines of every occupied record of row r (expiryAt reads times and flags).
template <class P, unsigned L>
inline void FlowTable<P, L>::prefetchRecords(std::size_t r) const noexcept {
    for (std::uint32_t m = occupiedMask(m_rows[r]); m != 0; m &= m - 1) {
        const auto* rec = reinterpret_cast<const std::uint8_t*>(
            &recordAt(r, static_cast<Slot>(std::countr_zero(m))));
        for (std::size_t line = 0; line < sizeof(CachedFlow); line += 64) prefetchWrite(rec + line);
    }
}

/// The plugin data of every occupied slot of row r, as prefetches (its records must have
/// been prefetched earlier: their handles are read).
template <class P, unsigned L>
inline void FlowTable<P, L>::prefetchPluginData(std::size_t r) const noexcept {
    for (std::uint32_t m = occupiedMask(m_rows[r]); m != 0; m &= m - 1) {
        const auto s = static_cast<Slot>(std::countr_zero(m));
        m_proc.prefetchForExport(slotIndex(r, s), recordAt(r, s));
    }
}

}  // namespace rowprobe::storage
