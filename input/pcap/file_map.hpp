// A read-only memory map of a capture file that one thread parses front to back, with the pages
// ahead of the parser faulted in by window and the pages behind it unmapped again, so that
// packets can point into the file's page cache (no copy) while RSS stays bounded.
//
//   file:  [ dropped (no PTEs) | in flight: ≤ kReadsInFlight reads | parsed ─▶ | populated | ... ]
//          0             dropBefore(x)                           ahead(pos)   pos + kWindow..2 kWindow
//
// * Ahead: ahead(pos) populates, one window before the parser needs it, the next kWindow bytes
//   with MADV_POPULATE_READ (Linux 5.14+): one system call per 4 MiB instead of a page fault
//   per 4 KiB. Where the kernel refuses it (EINVAL, older kernels), pages fault in one by one
//   as they are touched. And it prefetches: where record sizes repeat, only the two cache lines
//   where the record kPrefetchRecords ahead will start (its header and the start of its
//   frame, what the parser reads), predicted as "as far ahead as the last kPrefetchRecords
//   records went" (exact for one size, alternating sizes, any period dividing 10, runs of equal
//   sizes); else every line up to kPrefetchBytes ahead. Each prediction is checked when its
//   record comes, and a saturating counter of hits picks the way. Pulling only the parser's
//   lines instead of whole frames halved the reader's CPU on the 740-byte benchmark capture;
//   where sizes are random the dense way is cheaper than prefetches that miss
//   (docs/performance.md, "Reading captures without a copy").
// * Behind: dropBefore(x) drops the page-table entries of whole windows below x (MADV_DONTNEED;
//   on a file mapping it keeps the page cache, it only unmaps: a late access refaults the same
//   bytes, never garbage). The caller passes the start of the oldest read still in flight.
//   Resident pages of the mapping: at most two windows ahead plus the reads in flight
//   (40 reads of ≤ 512 KiB) plus one window of rounding: ≤ 32 MiB, ~14 MiB for 64-packet reads.
// * A file that shrinks under the mapping: an access to a page beyond the new end raises
//   SIGBUS. While at least one FileMap exists, a handler is installed that maps anonymous zero
//   pages over the rest of the faulting mapping (MAP_FIXED) and sets that mapping's lost()
//   flag; the faulting load then reads zeros and the thread (the reader or a worker touching a
//   packet) goes on. The reader checks lost() per record and ends the stream with an error.
//   A SIGBUS outside every FileMap restores the previous action (usually the default) and is
//   raised again. The handler only loads atomics and calls mmap, sigaction and raise.
// * Costs: per record, two ring entries, a compare and two prefetches (or a prefetch per 64
//   bytes of records); per 4 MiB, one madvise populate and one madvise drop. No thread, no
//   allocation after construction.
// * Thread ownership: the reading thread calls ahead / dropBefore; lost() may be read anywhere;
//   construction and destruction (the handler's registry, under a mutex) on any one thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rowprobe::input {

class FileMap {
public:
    static constexpr std::size_t kWindow = std::size_t{4} << 20;
    static constexpr std::size_t kPrefetchRecords = 10;
    static constexpr std::size_t kPrefetchBytes = std::size_t{8} << 10;

    /// Maps the first `size` bytes of `fd` read-only. valid() is false when the file cannot be
    /// mapped (size 0, a file system without mmap, no address space): the caller reads instead.
    FileMap(int fd, std::size_t size) noexcept;
    ~FileMap();
    FileMap(const FileMap&) = delete;
    FileMap& operator=(const FileMap&) = delete;

    bool valid() const noexcept { return m_data != nullptr; }
    const std::uint8_t* data() const noexcept { return m_data; }
    std::size_t size() const noexcept { return m_size; }

    /// The parser is at the record at `pos`: prefetch and populate ahead of it. Call once per
    /// record, in file order.
    void ahead(std::size_t pos) noexcept {
        const std::size_t slot = m_records++ % kPrefetchRecords;
        if (m_predicted[slot] == pos) {
            m_hits += m_hits < 8 ? 1 : 0;
        } else {
            m_hits -= m_hits > 0 ? 1 : 0;
        }
        const std::size_t next = 2 * pos - m_seen[slot];  // as far as the last 10 records went
        m_seen[slot] = pos;
        m_predicted[slot] = next;
        if (m_hits >= 4) {
            if (next + 128 <= m_size) {
                __builtin_prefetch(m_data + next);
                __builtin_prefetch(m_data + next + 64);
            }
        } else if (pos + kPrefetchBytes > m_prefetched) {
            prefetchTo(pos + kPrefetchBytes);
        }
        if (pos + kWindow > m_populated && m_populated < m_size) populateNext();
    }
    /// No packet below `offset` can still be referenced: unmap whole windows below it.
    void dropBefore(std::size_t offset) noexcept;
    /// True once a SIGBUS on this mapping was answered with zero pages (the file shrank below
    /// what the mapping covers, or its pages could not be read).
    bool lost() const noexcept { return m_lost->load(std::memory_order_acquire); }

private:
    void prefetchTo(std::size_t limit) noexcept;
    void populateNext() noexcept;

    std::uint8_t* m_data = nullptr;
    std::size_t m_size = 0;
    std::size_t m_slot = 0;  ///< this mapping's entry in the SIGBUS handler's registry
    const std::atomic<bool>* m_lost = nullptr;  ///< that entry's flag
    std::size_t m_records = 0;                  ///< ahead() calls so far
    /// By record number % kPrefetchRecords: where that record started, and where the record
    /// kPrefetchRecords after it was predicted to start.
    std::size_t m_seen[kPrefetchRecords] = {};
    std::size_t m_predicted[kPrefetchRecords] = {};
    unsigned m_hits = 0;           ///< saturating count of right predictions, 0-8
    std::size_t m_prefetched = 0;  ///< dense: lines below this were prefetched
    std::size_t m_populated = 0;   ///< bytes below this were populated (or left to faults)
    std::size_t m_dropped = 0;     ///< bytes below this were unmapped
    bool m_populate = true;        ///< MADV_POPULATE_READ works here
};

}  // namespace rowprobe::input
