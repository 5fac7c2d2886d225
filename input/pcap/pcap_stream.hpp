// Reader for classic pcap and pcapng files: large reads into a few reusable buffers (regular
// files, pipes and FIFOs (`file=-`), gzip-compressed files (`.pcap.gz`, `.pcapng.gz`, inflated
// on the fly, no temporary file)), or, for regular uncompressed files, a memory map (no copy at
// all) where the `map` option asks for it (`on`) or where measuring both at open shows the map
// clearly cheaper on this host (`auto`, the pcap input's default; read_method.hpp). Every
// RawPacket points into the mapping or a buffer (no copy per packet). One record parser serves
// both sources.
//
//   fd ──read() (≤ 1 MiB)──▶ [chunk 0: 2 MiB, huge-page backed][chunk 1] ... ◀── RawPacket.data
//   fd ──read()──▶ zlib inflate ──▶ same chunks                     (gzip, detected by magic)
//   regular file ──mmap (size at open, read-only)──▶ records parsed in place ◀── RawPacket.data
//        (map=on, or map=auto where measured cheaper; FileMap, file_map.hpp: 4 MiB windows
//         populated ahead, unmapped behind the reads in flight; past the mapping's end, a file
//         that grew is read on with read())
//
// * Map or copy (measured, docs/performance.md): on the VM of session 10 under load 8 the
//   kernel's copy in read() (`_copy_to_iter`) was a third of the whole process's CPU with
//   flowstats on the 1.42 GB benchmark capture, and walking a mapping cost 0.21 s of CPU against
//   0.35 s (rowprobe-bench-read). On the kernel of session 17 (6.18) the copy cost less than
//   building and dropping the mapping's page tables: 0.12 s of CPU against 0.18 s for the reader
//   alone ("read() again (session 17)"); on session 23's VM, same kernel, 0.32 s against 0.19 s
//   again. So `map=auto` measures both on the file's first MiBs at open (files of 1 GiB and
//   more; read_method.hpp) and maps only where the map is clearly cheaper; `map=off` and
//   `map=on` fix the way. Under the map, RSS stays bounded (pages behind the oldest read in
//   flight are unmapped, ~15 MiB resident), and a file cut short under the mapping does not
//   kill the process (the SIGBUS handler of file_map.hpp puts zero pages in; the reader checks,
//   below, and ends with "file shrank").
// * Mapped lifetimes: a packet stays valid for the next kReadsInFlight calls of beginRead()
//   (as for chunks, below); beginRead() notes where each read started and unmaps whole windows
//   below the start of the oldest read still in flight. A late access would refault the same
//   bytes from the page cache, never garbage.
// * Mapped and shrinking: a record header of all zeros (the rest of the last page of a cut
//   file reads as zeros) or the mapping's lost() flag (a SIGBUS, on this thread or a worker's)
//   makes the reader fstat the file: shorter than at open, or than the record, is the error
//   "file shrank while being read"; an all-zero record in a file that did not shrink is
//   delivered as it is. A parse error in a mapped file checks the same first. The records
//   before it were all delivered; packets a worker read as zeros (pages lost after they were
//   delivered) are what the error reports. Unlike read(), a record cut by the new end inside
//   its last page is delivered, its lost bytes reading as zeros, before the error: telling
//   that cut from a frame's own zero padding would cost an fstat per record.
// * Only a capture that starts at its file's first byte is mapped (`file=-` may be a file
//   that was read from before): the mapping's offsets are the file's.
// * Mapped and growing: at the mapping's end the reader continues with read() from there, the
//   record cut by the end copied into a chunk, so a file still being written (tcpdump -w) is
//   read to its end at that moment, as with reads.
// * Chunk lifetimes: records are parsed in place. A packet stays valid for the next
//   kReadsInFlight calls of beginRead(): the core recycles its 32 PacketBlocks per queue in
//   FIFO order, so a block filled at read k is back (processed) by read k + 32. A chunk is reused
//   only when no read of the last kReadsInFlight referenced it. A record cut by the chunk's end
//   is copied (only that record) to the start of the next chunk.
// * Bounded memory: a read consumes at most kReadBudget bytes of records (the caller then ends
//   its block early), so the last kReadsInFlight reads span at most kReadsInFlight *
//   (kReadBudget + the largest record) bytes and kMaxChunks chunks always suffice. Chunks are
//   allocated on first use: ordinary captures use 2-3 of them (4-6 MiB), mapped files none.
// * Pipes: reads wait at most `waitMs` (poll) and return Wait with no record, keeping a partial
//   record buffered, so a slow writer's packets are delivered in partial blocks.
// * One set of rules for every file read (also with a BPF filter, which the caller applies with
//   pcap_offline_filter): a captured length above the file header's snaplen is read in full and
//   counted (oversized()), as tshark does; above 262144 bytes (libpcap's limit) the file is
//   corrupt and the stream ends with an error; the seconds are unsigned 32-bit; a sub-second
//   field at or above one second (corrupt) carries into the seconds, counted (badTimestamps()).
// * pcapng: section header (either byte order, several sections), interface description (link
//   type, snaplen, if_tsresol as a power of 10 or of 2, if_tsoffset), enhanced, simple and the
//   obsolete packet blocks; other blocks are skipped. Each interface keeps its own link type:
//   packetLinkType() is the one of the packet just returned (the caller starts a new block when
//   it changes). A block above kMaxBlock bytes is refused as corrupt.
// * Errors (Result::Error, error() explains): a record cut off at the end ("truncated dump
//   file"), a file that shrank below what was already read ("file shrank while being read"),
//   corrupt gzip data, read errors. Records before the error were all delivered.
// * Costs per record, mapped: the header loads, a compare for zeros, a load of lost(), the
//   prefetch bookkeeping; per read: two stores and a compare; per 4 MiB: two madvise calls.
// * Thread ownership: one thread calls everything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "file_map.hpp"
#include "read_method.hpp"
#include "rowprobe/packet.hpp"

namespace rowprobe::input {

/// Bytes of a file or pipe, gzip-inflated when the data starts with the gzip magic.
class ByteSource {
public:
    /// Takes ownership of `fd`. Regular files are read with blocking reads; anything else is
    /// polled so that a read can give up after a timeout.
    ByteSource(int fd, std::string name);
    ~ByteSource();
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    static constexpr long kWait = -2;   ///< nothing arrived within the timeout (pipes only)
    static constexpr long kError = -1;  ///< error() says why
    /// Up to `max` bytes into `dst`: the count (> 0), 0 at the end, kWait or kError.
    long read(std::uint8_t* dst, std::size_t max, int timeoutMs);

    bool regular() const noexcept { return m_regular; }
    const std::string& name() const noexcept { return m_name; }
    bool gzip() const noexcept { return m_gzip; }
    int fd() const noexcept { return m_fd; }
    /// Regular files: their size when opened.
    std::uint64_t sizeAtOpen() const noexcept { return m_sizeAtOpen; }
    /// Regular files: reads go on from `offset` (a mapped reader that reached its mapping's end).
    bool seekTo(std::uint64_t offset);
    /// Regular files: true, with error() saying so, when the file is now shorter than
    /// `consumed` or than its size at open. One fstat.
    bool shrankBelow(std::uint64_t consumed);
    const std::string& error() const noexcept { return m_error; }
    /// The file's own bytes consumed so far (compressed bytes for gzip).
    std::uint64_t rawOffset() const noexcept { return m_rawOffset; }

private:
    long readRaw(std::uint8_t* dst, std::size_t max, int timeoutMs);
    long inflateInto(std::uint8_t* dst, std::size_t max, int timeoutMs);
    bool shrank() { return shrankBelow(m_rawOffset); }

    int m_fd = -1;
    std::string m_name;
    bool m_regular = false;
    bool m_gzip = false;
    bool m_rawEnd = false;       ///< read() of the descriptor returned 0
    bool m_inflaterEnd = false;  ///< gzip: no more compressed input will come
    bool m_gzEnd = false;        ///< gzip: the current member ended
    std::string m_prefix;        ///< bytes read to detect gzip, returned first
    std::uint64_t m_rawOffset = 0;
    std::uint64_t m_sizeAtOpen = 0;  ///< regular files: their size when opened
    std::string m_error;
    struct Inflater;
    std::unique_ptr<Inflater> m_inflater;
};

/// Whether a regular, uncompressed file is read through a memory map (the `map` option).
enum class MapMode : std::uint8_t {
    Off,   ///< always read()
    On,    ///< map it; read() where mapping fails
    Auto,  ///< measure both at open (files of kMeasureMinFileBytes and more) and take the
           ///< cheaper, read() unless the map is clearly cheaper; read() below that size
};

class PcapStream {
public:
    static constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
    static constexpr std::size_t kReadBudget = std::size_t{512} << 10;
    static constexpr std::uint32_t kMaxCapLen = input::kMaxCapLen;
    /// Largest pcapng block accepted: a maximal packet plus 64 KiB of options.
    static constexpr std::uint32_t kMaxBlock = input::kMaxBlock;
    /// Reads a packet stays valid for: the core's pool of 32 blocks per queue, with a margin.
    static constexpr std::uint64_t kReadsInFlight = 40;
    static constexpr std::size_t kMaxChunks =
        (kReadsInFlight * (kReadBudget + kMaxBlock)) / (kChunkBytes - kMaxBlock) + 3;

    /// Reads the 24-byte header from `source` (pcapng: up to the first interface description).
    /// When it is neither a classic pcap nor a pcapng header, valid() is false and header()
    /// holds the bytes already consumed, so the caller can hand the whole stream to libpcap
    /// (for its error message).
    /// With MapMode::On a regular uncompressed capture is then mapped (mapped() tells); with
    /// MapMode::Auto one of kMeasureMinFileBytes or more is first measured both ways
    /// (readCosts() tells) and mapped only where the map is clearly cheaper. The measurement
    /// leaves the stream at its first record and never fails the stream.
    explicit PcapStream(std::unique_ptr<ByteSource> source, int waitMs = -1,
                        MapMode mapMode = MapMode::Off);
    ~PcapStream();
    PcapStream(const PcapStream&) = delete;
    PcapStream& operator=(const PcapStream&) = delete;

    bool valid() const noexcept { return m_valid; }
    /// The bytes read so far when !valid() (at most 24) and the source they came from.
    const std::string& header() const noexcept { return m_header; }
    std::unique_ptr<ByteSource> releaseSource() noexcept { return std::move(m_source); }

    bool pcapng() const noexcept { return m_ng; }
    /// The file's link type (pcapng: its first interface's; 0xffffffff when none came yet).
    std::uint32_t linkType() const noexcept { return m_linkType; }
    /// The link type of the packet next() returned last (pcapng: per interface).
    std::uint32_t packetLinkType() const noexcept { return m_packetLinkType; }
    std::uint32_t fileSnaplen() const noexcept { return m_fileSnaplen; }
    bool nano() const noexcept { return m_nano; }
    bool regular() const noexcept { return m_source && m_source->regular(); }
    /// The file is read through a memory map (packets point into it) up to its size at open.
    bool mapped() const noexcept { return m_map != nullptr; }
    /// MapMode::Auto: what the measurement at open found (measured false when it did not
    /// measure, or failed).
    const ReadCosts& readCosts() const noexcept { return m_costs; }
    /// One line for the operator: how the file is read and why (the mode, the measured costs
    /// or why there are none), e.g. "read through the memory map (map=auto: ...)".
    std::string describeReadMethod() const;

    /// Starts one read of the caller (one PacketBlock): packets of earlier reads stay valid for
    /// kReadsInFlight calls; this read may consume kReadBudget bytes.
    void beginRead() noexcept;
    /// A new byte budget for the same read (its records were all filtered out: none delivered).
    void renewBudget() noexcept { m_readUsed = 0; }

    enum class Result : std::uint8_t {
        Packet,  ///< `out` holds the next record
        Budget,  ///< this read consumed its byte budget: end the block
        Wait,    ///< pipe: no whole record within `waitMs`
        End,     ///< clean end of the stream
        Error,   ///< error() explains; the stream is over
    };
    /// The next record, its captured length cut to `snaplen`.
    Result next(RawPacket& out, std::uint32_t snaplen, int waitMs);
    const std::string& error() const noexcept { return m_error; }

    /// Records whose captured length exceeded the file header's snaplen (read in full).
    std::uint64_t oversized() const noexcept { return m_oversized; }
    /// Records whose sub-second field was a second or more (carried into the seconds).
    std::uint64_t badTimestamps() const noexcept { return m_badTimestamps; }
    /// Chunks allocated so far (tests: memory stays bounded).
    std::size_t chunksAllocated() const noexcept;

private:
    struct Chunk {
        std::uint8_t* mem = nullptr;
        std::uint64_t lastRead = 0;  ///< the last read whose packets point into it
    };
    /// Makes `n` bytes at m_pos available; Packet when they are, else Wait / End / Error.
    Result ensure(std::size_t n, int waitMs);
    void moveToFreeChunk();
    /// The mapping's end is reached: reads go on from there (a file that grew), the record cut
    /// by the end is copied into a chunk.
    bool leaveMapping();
    /// Mapped: the record at m_pos read zeros or the mapping lost pages. True (and the stream
    /// failed) when the file shrank under the mapping.
    bool mappingLost(std::uint64_t recordEnd);
    Result nextClassic(RawPacket& out, std::uint32_t snaplen, int waitMs);
    Result nextNg(RawPacket& out, std::uint32_t snaplen, int waitMs, bool headerOnly);
    /// pcapng: an interface description block's body.
    bool addInterface(const std::uint8_t* body, std::size_t len);
    std::uint32_t load32(const std::uint8_t* p) const noexcept;
    Result fail(std::string why);

    std::unique_ptr<ByteSource> m_source;
    std::unique_ptr<FileMap> m_map;  ///< regular uncompressed files under On, or Auto's choice
    bool m_mapped = false;           ///< m_buf is the mapping (else the current chunk)
    /// Mapped: the offset each of the last kReadsInFlight reads started at (by read % size).
    std::uint64_t m_readStart[kReadsInFlight] = {};
    std::vector<Chunk> m_chunks;
    const std::uint8_t* m_buf = nullptr;  ///< the buffer being parsed: the mapping or a chunk
    std::size_t m_cur = 0;                ///< the chunk being parsed (when not mapped)
    std::size_t m_pos = 0;                ///< next record in the current buffer
    std::size_t m_filled = 0;             ///< bytes of the current buffer holding data
    std::uint64_t m_read = kReadsInFlight;
    std::size_t m_readUsed = 0;  ///< bytes consumed by the current read
    std::uint64_t m_offset = 0;  ///< stream offset of m_pos (for messages)
    bool m_valid = false;
    bool m_end = false;
    bool m_swapped = false;
    bool m_nano = false;
    struct Interface {
        std::uint32_t linkType = 0;
        std::uint32_t snaplen = 0;
        std::uint8_t tsresol = 6;   ///< if_tsresol: 10^-n, or 2^-(n & 0x7f) when bit 7 is set
        std::int64_t tsoffset = 0;  ///< if_tsoffset, seconds
    };
    TimeNs ngTime(const Interface& ifc, std::uint64_t units) const noexcept;
    bool m_ng = false;
    std::vector<Interface> m_interfaces;  ///< pcapng: of the current section
    std::uint32_t m_linkType = 0xffffffffU;
    std::uint32_t m_packetLinkType = 0;
    std::uint32_t m_fileSnaplen = 0;
    std::uint64_t m_oversized = 0;
    std::uint64_t m_badTimestamps = 0;
    std::string m_header;
    std::string m_error;
    MapMode m_mapMode = MapMode::Off;
    FileFacts m_facts;  ///< what decides whether MapMode::Auto measures
    ReadCosts m_costs;  ///< MapMode::Auto: the measurement at open
};

}  // namespace rowprobe::input
