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
//   as they are touched. It also prefetches two cache lines where the record kPrefetchRecords
//   ahead should start, predicted from the last record's length (exact when the records have
//   one size, a guess otherwise): its header and the start of its frame, what the parser reads.
//   Only those lines are pulled from memory, not whole frames: prefetching every line 8 KiB
//   ahead made the reader pull the whole file through one core and cost twice the user time
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
// * Costs: per record, two prefetches and a compare; per 4 MiB, one madvise populate and one
//   madvise drop. No thread, no allocation after construction.
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
        const std::size_t next = pos + kPrefetchRecords * (pos - m_lastRecord);
        m_lastRecord = pos;
        if (next + 128 <= m_size) {
            __builtin_prefetch(m_data + next);
            __builtin_prefetch(m_data + next + 64);
        }
        if (pos + kWindow > m_populated && m_populated < m_size) populateNext();
    }
    /// No packet below `offset` can still be referenced: unmap whole windows below it.
    void dropBefore(std::size_t offset) noexcept;
    /// True once a SIGBUS on this mapping was answered with zero pages (the file shrank below
    /// what the mapping covers, or its pages could not be read).
    bool lost() const noexcept { return m_lost->load(std::memory_order_acquire); }

private:
    void populateNext() noexcept;

    std::uint8_t* m_data = nullptr;
    std::size_t m_size = 0;
    std::size_t m_slot = 0;  ///< this mapping's entry in the SIGBUS handler's registry
    const std::atomic<bool>* m_lost = nullptr;  ///< that entry's flag
    std::size_t m_lastRecord = 0;  ///< where the record of the last ahead() call starts
    std::size_t m_populated = 0;   ///< bytes below this were populated (or left to faults)
    std::size_t m_dropped = 0;     ///< bytes below this were unmapped
    bool m_populate = true;        ///< MADV_POPULATE_READ works here
};

}  // namespace rowprobe::input
