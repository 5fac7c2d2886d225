// The validated configuration of one flow table, parsed once from the `cache` plugin's options
// (cache_storage.cpp) and then read-only. Plain data; copied into each table at construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "cache/flood_detector.hpp"
#include "cache/hash.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::storage {

struct TableConfig {
    unsigned sizeLog2 = 17;            ///< 2^sizeLog2 records
    unsigned line = 16;                ///< slots per row (4, 8, 16, 32)
    TimeNs active = 300 * kNsPerSec;   ///< first packet older than this: split the flow
    TimeNs inactive = 30 * kNsPerSec;  ///< last packet older than this: the flow ended
    const HashFunction* hash = &kHashFunctions[0];
    std::uint64_t seed = 0;
    bool fragEnabled = true;             ///< fill ports of non-first fragments
    std::size_t fragSize = 10007;        ///< fragment cache entries
    TimeNs fragTimeout = 3 * kNsPerSec;  ///< how long a first fragment's ports stay usable
    /// The incremental sweep visits every row at least once per this much packet time ...
    TimeNs sweepPeriod = kNsPerSec;
    /// ... and at least this many blocks of 64 rows per batch, so a full pass also takes at
    /// most rows / (64 * sweepMinBlocks) batches.
    std::size_t sweepMinBlocks = 1;
    /// `expiry=thread`: the export thread finds expired flows (FlowTable::sweepFromExportThread)
    /// under per-row try-locks and the worker locks each row it updates; else (`inline`) the
    /// worker sweeps and no row is ever locked.
    bool expiryThread = false;
    /// `pool-pages=huge`: the process plugins' tier-2 pools on transparent huge pages; else
    /// (`4k`, the default) on 4 KiB pages. A pool is written in order from its front, each
    /// page first by a new flow, so its cost is faulting pages in: on the VMs measured
    /// (docs/performance.md, session 18, "The plugins' per-flow records on 4 KiB pages") zeroing a fresh huge page ran at
    /// about 0.5 GB/s, 4 KiB pages at several GB/s, and flowstats on a 1 M-flow capture took
    /// 1.78-1.95 s instead of 2.02-2.59 s; where huge pages are zeroed at memory speed, their fewer
    /// TLB misses can win.
    bool hugePools = false;
    /// `table-pages=huge`: the flow records' first L/4 planes on transparent huge pages from
    /// the start, the rest once the table holds that many flows (FlowTable::promoteHugePages).
    /// Else (`4k`, the default) every plane starts on 4 KiB pages, and the whole array is
    /// advised huge pages a minute of packet time after the table first holds a quarter of its
    /// capacity: a long-running probe then gets them (new pages at once, the faulted ones as
    /// khugepaged collapses them) and a run of minutes never pays for them. On VMs whose host
    /// takes back freed memory, a huge page touched for the first time took 2 ms to zero (0.5
    /// GB/s, against 22 GB/s for one just freed and 2.5 GB/s for 4 KiB pages either way), and
    /// the NFStream benchmark's rowprobe runs follow a minute of NFStream (docs/performance.md,
    /// session 22: 1.37 against 1.31 s on the 1 M-flow capture with flowstats).
    bool hugePlanes = false;
    /// `prefault`: StoragePlugin::prefault makes the pools' next pages and the record planes
    /// the flows are about to reach present (the input thread calls it while it waits for the
    /// worker); `prefault=false` leaves every page to the worker's own page faults
    /// (docs/performance.md, session 19, "Page faults moved to the input thread").
    bool prefault = true;
    /// Flood detector and the admission mode it switches on (`flood-*` options).
    FloodConfig flood;
};

/// The option table of the `cache` storage plugin (one source for parsing, -h and docs).
std::span<const OptionSpec> cacheOptionSpecs() noexcept;

/// Reads and cross-checks the options; throws ConfigError with the bounds in the message.
/// Draws a random seed (std::random_device) when `seed` is not given.
TableConfig parseTableConfig(const Options& options);

}  // namespace rowprobe::storage
