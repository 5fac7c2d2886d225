// How the pcap input reads a regular capture file, chosen at open by measuring both ways on the
// file's own bytes (`map=auto`, the default): large read()s into a reusable buffer, or the
// memory map of file_map.hpp with records parsed in place.
//
//   file:  [header | region: the first measureBytes(size) bytes of records | ... the rest ... ]
//   passes over the region:  read (warm-up)   read   map   read   map
//     read: pread() kReadStep at a time through the stream's first 2 MiB chunk, records walked
//     map:  a FileMap of [0, region end): MADV_POPULATE_READ, the same walk, unmapped
//   cost of a way = the lower of its two passes, in CPU time of this thread per MiB
//
// * Why: which way is cheaper depends on the host, not on the kernel alone. Session 17's VM
//   (kernel 6.18) walked the 1.42 GB benchmark capture in 0.12 s of CPU with read() and 0.18 s
//   through the map; session 23's VM, same kernel, in 0.32 s against 0.19 s
//   (docs/performance.md, "read() again (session 17)" and "Session 23"). The copy in read()
//   against building and dropping the mapping's page tables: whichever this host does cheaper.
// * What is measured is what the stream does: the same record walk (walkRecords, below:
//   each record's header and 8 bytes of its frame, as the parser loads them), the same read
//   size into the same buffer, and for the map the same FileMap (its populate windows, its
//   prefetch, its SIGBUS handling), created and destroyed, so the page tables are built and
//   dropped as the stream's mapping builds and drops them. CPU time of the calling thread
//   (CLOCK_THREAD_CPUTIME_ID), not wall time: another process on the CPU does not count. A
//   warm-up pass first brings the region into the page cache, so that a file read from disk
//   does not charge its I/O to the first way measured; then read, map, read, map, each way's
//   minimum. The map is chosen only when it costs at most kMapCostRatio of read(): where the
//   two are close, noise falls back to read(), the default of sessions 17-22.
// * Which files: regular, uncompressed, the capture starting at the file's first byte (the
//   files the map applies to) and at least kMeasureMinFileBytes (1 GiB) long. Smaller files,
//   pipes, FIFOs and gzip are read with read(), unmeasured: on smaller files the measurement
//   would cost more than 2 % of the reading it is to save.
// * The region: size / 512, from 2 to 8 MiB. Smaller regions misjudge: between passes the
//   region stays in the core's 2 MiB L2, so the copy looks cheap. On session 23's VM, where
//   the map costs 0.58 (`large`) and 0.65 (`small`) of read() on the whole file, five runs
//   each gave 1.13-1.29 for a 0.5 MiB region (read() chosen every time), 0.72-1.07 for 1 MiB
//   (read() in 3 of 10), 0.51-0.79 for 2 MiB, 0.62-0.79 for 4 MiB, 0.54-0.72 for 8 MiB. The
//   read pass fills the whole 2 MiB buffer front to back, as the stream fills its chunk:
//   reading into the same first MiB again and again kept the destination in L2 as well.
// * Cost: five passes, about 1.1 ms of CPU per MiB of region on session 23's VM (medians of
//   five on `large`: 2 MiB 2.3 ms, 4 MiB 4.2 ms, 8 MiB 8.1 ms), i.e. about 2.2 µs per MiB of
//   file: 1.5 % of reading it through the map there (146 µs per MiB of `large`), 0.9 % of
//   read() (250 µs), less above 4 GiB, where the region stops growing. On the 1.42 GB
//   benchmark capture (2.6 MiB regions) 2.6-3.6 ms in the whole process, against 0.20 s of CPU
//   for reading it through the map and 0.34 s with read() (rowprobe-bench-read, medians of
//   five).
// * Never a failure: a read error, a file that cannot be mapped, a region that is no sequence
//   of records, a file that shrank under the mapping (FileMap's SIGBUS handler): the
//   measurement reports measured = false and the file is read with read(). It uses pread()
//   and a mapping only, so the descriptor's offset stays where the stream left it.
// * Thread ownership: the stream's thread, at open. No state outside the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rowprobe::input {

/// Bytes asked of the kernel per read(): large enough that the system call is noise, small
/// enough that the worker finds the start of what it read still in its 2 MiB L2. The stream
/// reads this much at a time, and so does the measurement.
inline constexpr std::size_t kReadStep = std::size_t{1} << 20;
/// Largest captured length of a classic pcap record (libpcap's limit); above it the file is
/// corrupt.
inline constexpr std::uint32_t kMaxCapLen = 262144;
/// Largest pcapng block accepted: a maximal packet plus 64 KiB of options.
inline constexpr std::uint32_t kMaxBlock = kMaxCapLen + 65536;

/// Smallest file `map=auto` measures; smaller ones are read with read(). From here on the
/// measurement (2 MiB regions and more, about 1.1 ms of CPU per MiB of region) stays within
/// 2 % of reading the file the cheaper way (docs/performance.md, "Session 23").
inline constexpr std::uint64_t kMeasureMinFileBytes = std::uint64_t{1} << 30;
/// `map=auto` maps a file only when the map costs at most this share of read()'s CPU time.
inline constexpr double kMapCostRatio = 0.85;
/// The measured region: this share of the file (size / 512), within the two bounds below.
/// Below 2 MiB the region stays in the core's L2 between passes and read() looks cheaper than
/// it is on the whole file.
inline constexpr std::uint64_t kMeasureShare = 512;
inline constexpr std::size_t kMeasureMinBytes = std::size_t{2} << 20;
inline constexpr std::size_t kMeasureMaxBytes = std::size_t{8} << 20;

/// The region measured in a file of `fileSize` bytes.
constexpr std::size_t measureBytes(std::uint64_t fileSize) noexcept {
    const std::uint64_t share = fileSize / kMeasureShare;
    if (share < kMeasureMinBytes) return kMeasureMinBytes;
    if (share > kMeasureMaxBytes) return kMeasureMaxBytes;
    return static_cast<std::size_t>(share);
}

/// How records are delimited: classic pcap (a 16-byte header, the captured length at byte 8)
/// or pcapng (the block's length at byte 4), in the file's byte order.
struct RecordLayout {
    bool pcapng = false;
    bool swapped = false;
};

/// What a walk saw: the records, a sum of the bytes it loaded (so that the loads stay), and
/// whether it stopped at a length no capture has.
struct RecordWalk {
    std::uint64_t records = 0;
    std::uint64_t sum = 0;
    bool corrupt = false;
};

/// Loads 8 bytes of a frame of `capLen` bytes where the parser reads: at byte 32 (the IP
/// header's addresses behind Ethernet), or the first 8 of a short frame.
inline void touchFrame(const std::uint8_t* frame, std::uint32_t capLen, RecordWalk& w) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, frame + (capLen >= 40 ? 32 : 0), capLen >= 8 ? 8 : 0);
    w.sum += v + capLen;
    ++w.records;
}

/// Walks the whole records in [p, p + n) as the reader does: each record's length, then 8
/// bytes of its frame. `atRecord(offset)` runs before each record's loads (the map's ahead()).
/// Returns the bytes of the whole records walked; what follows is a record cut by the end, or,
/// with w.corrupt set, a length no capture has.
template <class AtRecord>
std::size_t walkRecords(const std::uint8_t* p, std::size_t n, RecordLayout layout, RecordWalk& w,
                        AtRecord&& atRecord) noexcept {
    const std::size_t lengthAt = layout.pcapng ? 4 : 8;
    const std::size_t header = layout.pcapng ? 0 : 16;    // added to the length field
    const std::size_t frameAt = layout.pcapng ? 28 : 16;  // an enhanced packet block's frame
    const std::size_t trailer = layout.pcapng ? 4 : 0;
    const std::size_t maxSize = layout.pcapng ? kMaxBlock : 16 + std::size_t{kMaxCapLen};
    std::size_t pos = 0;
    while (n - pos >= 16) {
        std::uint32_t length = 0;
        std::memcpy(&length, p + pos + lengthAt, 4);
        if (layout.swapped) length = __builtin_bswap32(length);
        const std::size_t size = header + length;
        if (size < 12 || size > maxSize) {
            w.corrupt = true;
            break;
        }
        if (n - pos < size) break;
        atRecord(pos);
        const std::size_t frame = size > frameAt + trailer ? size - frameAt - trailer : 0;
        touchFrame(p + pos + (frame > 0 ? frameAt : 0), static_cast<std::uint32_t>(frame), w);
        pos += size;
    }
    return pos;
}

/// The two ways' measured costs (measureReadCosts).
struct ReadCosts {
    bool measured = false;           ///< false: not measured, or the measurement failed
    std::uint64_t readNsPerMiB = 0;  ///< read(): CPU ns per MiB of the region, the lower pass
    std::uint64_t mapNsPerMiB = 0;   ///< the map: likewise
    std::uint64_t regionBytes = 0;   ///< bytes of records each pass walked
    std::uint64_t totalNs = 0;       ///< CPU time of the whole measurement, all passes
};

/// Measures both ways on `regionBytes` of the file behind `fd` from `start` (classic pcap:
/// 24, after the file header; pcapng: 0), `fileSize` long (fstat at open): warm-up, then read,
/// map, read, map. `buffer` (at least kReadStep + kMaxBlock bytes) receives the reads.
/// Never throws; any failure gives measured = false. Leaves the descriptor's offset alone.
ReadCosts measureReadCosts(int fd, std::uint64_t fileSize, std::uint64_t start, RecordLayout layout,
                           std::uint8_t* buffer, std::size_t bufferBytes,
                           std::size_t regionBytes) noexcept;

/// What decides whether `map=auto` measures a file.
struct FileFacts {
    bool regular = false;    ///< a regular file (not a pipe, FIFO or device)
    bool gzip = false;       ///< gzip-compressed (inflated while read: never mapped)
    bool atStart = false;    ///< the capture starts at the file's first byte
    std::uint64_t size = 0;  ///< bytes at open
};

enum class ReadMethod : std::uint8_t {
    Read,  ///< read() into reusable buffers
    Map,   ///< the memory map
};

/// True when `map=auto` measures this file: regular, uncompressed, the capture at its first
/// byte, at least kMeasureMinFileBytes.
constexpr bool worthMeasuring(const FileFacts& file) noexcept {
    return file.regular && !file.gzip && file.atStart && file.size >= kMeasureMinFileBytes;
}

/// `map=auto`'s choice: the map only for a file worth measuring whose measurement succeeded
/// with the map at most kMapCostRatio of read(); read() otherwise (ties, errors, small files,
/// pipes, gzip).
constexpr ReadMethod chooseReadMethod(const FileFacts& file, const ReadCosts& costs) noexcept {
    if (!worthMeasuring(file) || !costs.measured || costs.readNsPerMiB == 0) {
        return ReadMethod::Read;
    }
    return static_cast<double>(costs.mapNsPerMiB) <=
                   kMapCostRatio * static_cast<double>(costs.readNsPerMiB)
               ? ReadMethod::Map
               : ReadMethod::Read;
}

}  // namespace rowprobe::input
