#include "pcap_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace rowprobe::input {

namespace {
constexpr std::uint32_t kMagicMicro = 0xa1b2c3d4;
constexpr std::uint32_t kMagicNano = 0xa1b23c4d;
constexpr std::size_t kGlobalHeader = 24;
constexpr std::size_t kRecordHeader = 16;
constexpr std::size_t kGzipInput = std::size_t{256} << 10;
__extension__ using U128 = unsigned __int128;  // exact pcapng unit conversions
__extension__ using I128 = __int128;
constexpr std::uint32_t kNgSection = 0x0A0D0D0A;
constexpr std::uint32_t kNgByteOrder = 0x1A2B3C4D;
constexpr std::uint32_t kNgInterface = 1;
constexpr std::uint32_t kNgPacketObsolete = 2;
constexpr std::uint32_t kNgSimplePacket = 3;
constexpr std::uint32_t kNgEnhancedPacket = 6;

/// A 2 MiB-aligned chunk so that transparent huge pages can back it (one TLB entry).
std::uint8_t* allocateChunk() {
    const std::size_t size = PcapStream::kChunkBytes;
    void* p = ::mmap(nullptr, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::size_t lead = ((start + size - 1) & ~(std::uintptr_t{size} - 1)) - start;
    if (lead > 0) ::munmap(p, lead);
    std::uint8_t* chunk = static_cast<std::uint8_t*>(p) + lead;
    if (lead < size) ::munmap(chunk + size, size - lead);
    ::madvise(chunk, size, MADV_HUGEPAGE);
    return chunk;
}
}  // namespace

// ------------------------------------------------------------------------------ ByteSource

struct ByteSource::Inflater {
    z_stream zs{};
    std::unique_ptr<std::uint8_t[]> in{new std::uint8_t[kGzipInput]};
    bool initialised = false;
    ~Inflater() {
        if (initialised) inflateEnd(&zs);
    }
};

ByteSource::ByteSource(int fd, std::string name) : m_fd(fd), m_name(std::move(name)) {
    struct stat st {};
    m_regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (m_regular) m_sizeAtOpen = static_cast<std::uint64_t>(st.st_size);
    if (m_regular) ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    // Two bytes decide gzip or not; they are fed to the inflater or returned by the first read.
    std::uint8_t magic[2] = {};
    std::size_t got = 0;
    while (got < 2) {
        const long n = readRaw(magic + got, 2 - got, -1);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        m_gzip = true;
        m_inflater = std::make_unique<Inflater>();
        if (inflateInit2(&m_inflater->zs, 15 + 16) != Z_OK) throw std::bad_alloc();
        m_inflater->initialised = true;
        std::memcpy(m_inflater->in.get(), magic, 2);
        m_inflater->zs.next_in = m_inflater->in.get();
        m_inflater->zs.avail_in = 2;
    } else {
        m_prefix.assign(reinterpret_cast<const char*>(magic), got);
    }
}

ByteSource::~ByteSource() {
    if (m_fd >= 0) ::close(m_fd);
}

bool ByteSource::shrankBelow(std::uint64_t consumed) {
    struct stat st {};
    if (!m_regular || ::fstat(m_fd, &st) != 0) return false;
    const auto now = static_cast<std::uint64_t>(st.st_size);
    // Below what was read, or below the size at start-up: a shorter file than the one opened
    // (an end of file there would otherwise pass for the end of the capture).
    if (now >= consumed && now >= m_sizeAtOpen) return false;
    m_error = "file shrank while being read (truncated to " + std::to_string(now) +
              " bytes; it had " + std::to_string(m_sizeAtOpen) + ", " + std::to_string(consumed) +
              " bytes were already read)";
    return true;
}

bool ByteSource::seekTo(std::uint64_t offset) {
    if (!m_regular || m_gzip || ::lseek(m_fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
        return false;
    }
    m_prefix.clear();
    m_rawOffset = offset;
    m_rawEnd = false;
    return true;
}

long ByteSource::readRaw(std::uint8_t* dst, std::size_t max, int timeoutMs) {
    if (!m_prefix.empty()) {
        const std::size_t n = std::min(max, m_prefix.size());
        std::memcpy(dst, m_prefix.data(), n);
        m_prefix.erase(0, n);
        return static_cast<long>(n);
    }
    if (m_rawEnd) return 0;
    for (;;) {
        if (!m_regular) {
            pollfd pfd{.fd = m_fd, .events = POLLIN, .revents = 0};
            const int rc = ::poll(&pfd, 1, timeoutMs);
            if (rc == 0) return kWait;
            if (rc < 0 && errno != EINTR) {
                m_error = std::string("poll: ") + std::strerror(errno);
                return kError;
            }
            if (rc < 0) return kWait;
        }
        const ssize_t n = ::read(m_fd, dst, max);
        if (n > 0) {
            m_rawOffset += static_cast<std::uint64_t>(n);
            return static_cast<long>(n);
        }
        if (n == 0) {
            if (shrank()) return kError;
            m_rawEnd = true;
            return 0;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return kWait;
        m_error = std::string("read error: ") + std::strerror(errno);
        if (errno == EIO || errno == EFAULT) shrank();
        return kError;
    }
}

long ByteSource::inflateInto(std::uint8_t* dst, std::size_t max, int timeoutMs) {
    z_stream& zs = m_inflater->zs;
    zs.next_out = dst;
    zs.avail_out = static_cast<uInt>(max);
    for (;;) {
        const std::size_t produced = max - zs.avail_out;
        if (produced > 0) return static_cast<long>(produced);
        if (zs.avail_in == 0) {
            if (m_inflaterEnd) {
                if (m_gzEnd) return 0;
                m_error = "gzip data cut short (the .gz file is truncated)";
                return kError;
            }
            const long n = readRaw(m_inflater->in.get(), kGzipInput, timeoutMs);
            if (n < 0) return n;
            if (n == 0) {
                m_inflaterEnd = true;
                continue;
            }
            zs.next_in = m_inflater->in.get();
            zs.avail_in = static_cast<uInt>(n);
        }
        if (m_gzEnd) {
            // Concatenated members (gzip a b > c) continue; anything else after a member ends it.
            if (zs.next_in[0] != 0x1f) {
                zs.avail_in = 0;
                m_inflaterEnd = true;
                continue;
            }
            inflateReset(&zs);
            m_gzEnd = false;
        }
        const int rc = ::inflate(&zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            m_gzEnd = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            m_error = std::string("corrupt gzip data: ") + (zs.msg != nullptr ? zs.msg : "error");
            return kError;
        }
    }
}

long ByteSource::read(std::uint8_t* dst, std::size_t max, int timeoutMs) {
    if (max == 0) return 0;
    return m_gzip ? inflateInto(dst, max, timeoutMs) : readRaw(dst, max, timeoutMs);
}

// ------------------------------------------------------------------------------ PcapStream

PcapStream::PcapStream(std::unique_ptr<ByteSource> source, int waitMs, MapMode mapMode)
    : m_source(std::move(source)) {
    std::uint8_t header[kGlobalHeader] = {};
    std::size_t got = 0;
    while (got < kGlobalHeader) {
        const long n = m_source->read(header + got, kGlobalHeader - got, waitMs);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    m_header.assign(reinterpret_cast<const char*>(header), got);
    if (got < kGlobalHeader) return;
    std::uint32_t magic = 0;
    std::memcpy(&magic, header, 4);
    if (magic == kMagicMicro || magic == kMagicNano) {
        m_nano = magic == kMagicNano;
    } else if (__builtin_bswap32(magic) == kMagicMicro || __builtin_bswap32(magic) == kMagicNano) {
        m_swapped = true;
        m_nano = __builtin_bswap32(magic) == kMagicNano;
    } else if (magic == kNgSection) {
        m_ng = true;
    } else {
        return;  // not a capture libpcap knows either: it names what it is not
    }
    m_valid = true;
    // The capture must start at the file's first byte (standard input redirected from a file
    // may have been read from before): the mapping's offsets are the file's.
    m_mapMode = mapMode;
    m_facts = {.regular = m_source->regular(),
               .gzip = m_source->gzip(),
               .atStart = m_source->regular() && !m_source->gzip() &&
                          m_source->sizeAtOpen() >= kGlobalHeader &&
                          ::lseek(m_source->fd(), 0, SEEK_CUR) == static_cast<off_t>(kGlobalHeader),
               .size = m_source->sizeAtOpen()};
    bool map = mapMode == MapMode::On && m_facts.atStart;
    if (mapMode == MapMode::Auto && worthMeasuring(m_facts)) {
        // The stream's first chunk receives the measurement's reads: read() then finds it
        // faulted in, the map gives it back.
        std::uint8_t* chunk = allocateChunk();
        std::uint32_t byteOrder = 0;
        std::memcpy(&byteOrder, header + 8, 4);
        const RecordLayout layout{.pcapng = m_ng,
                                  .swapped = m_ng ? byteOrder != kNgByteOrder : m_swapped};
        m_costs = measureReadCosts(m_source->fd(), m_facts.size, m_ng ? 0 : kGlobalHeader, layout,
                                   chunk, kChunkBytes, measureBytes(m_facts.size));
        map = chooseReadMethod(m_facts, m_costs) == ReadMethod::Map;
        if (map) {
            ::munmap(chunk, kChunkBytes);
        } else {
            m_chunks.push_back({chunk, 0});
        }
    }
    if (map) {
        auto fileMap = std::make_unique<FileMap>(m_source->fd(), m_source->sizeAtOpen());
        if (fileMap->valid()) {
            m_map = std::move(fileMap);
            m_mapped = true;
            m_buf = m_map->data();
            m_filled = m_map->size();
        }
    }
    if (!m_mapped && m_chunks.empty()) m_chunks.push_back({allocateChunk(), 0});
    if (m_ng) {
        // pcapng: the 24 bytes are the start of the section header block; parse blocks from
        // there up to the first interface description, for the start-up link type check.
        if (!m_mapped) {
            m_buf = m_chunks[0].mem;
            std::memcpy(m_chunks[0].mem, header, kGlobalHeader);
            m_filled = kGlobalHeader;
        }
        RawPacket unused;
        nextNg(unused, 0, waitMs, true);
        return;
    }
    m_fileSnaplen = load32(header + 16);
    m_linkType = load32(header + 20) & 0x03ffffffU;  // the upper bits are FCS flags
    if (m_mapped) {
        m_pos = kGlobalHeader;
    } else {
        m_buf = m_chunks[0].mem;
    }
    m_offset = kGlobalHeader;
}

std::string PcapStream::describeReadMethod() const {
    std::string text = mapped() ? "read through a memory map" : "read with read()";
    switch (m_mapMode) {
        case MapMode::Off:
            return text + " (map=off)";
        case MapMode::On:
            return text + (mapped() ? " (map=on)"
                                    : " (map=on, but it cannot be mapped: not a regular "
                                      "uncompressed file with the capture at its first byte, "
                                      "or mmap failed)");
        case MapMode::Auto:
            break;
    }
    if (!m_facts.regular) return text + " (map=auto: a pipe or FIFO is never mapped)";
    if (m_facts.gzip) return text + " (map=auto: a gzip file is never mapped)";
    if (!m_facts.atStart) {
        return text + " (map=auto: the capture does not start at the file's first byte)";
    }
    if (!worthMeasuring(m_facts)) {
        return text + " (map=auto: files below " + std::to_string(kMeasureMinFileBytes >> 20) +
               " MiB are not measured)";
    }
    if (!m_costs.measured) return text + " (map=auto: the measurement failed)";
    char line[256];
    std::snprintf(
        line, sizeof line,
        " (map=auto: measured on %.1f MiB, CPU per MiB: read() %llu ns, map %llu ns "
        "(%.0f %%; the map is taken at <= %.0f %%); the measurement took %.1f ms%s)",
        static_cast<double>(m_costs.regionBytes) / 1048576.0,
        static_cast<unsigned long long>(m_costs.readNsPerMiB),
        static_cast<unsigned long long>(m_costs.mapNsPerMiB),
        100.0 * static_cast<double>(m_costs.mapNsPerMiB) /
            static_cast<double>(m_costs.readNsPerMiB),
        100.0 * kMapCostRatio, static_cast<double>(m_costs.totalNs) / 1e6,
        chooseReadMethod(m_facts, m_costs) == ReadMethod::Map && !mapped() ? "; mmap failed" : "");
    return text + line;
}

PcapStream::~PcapStream() {
    // The file shrank after its last record was read, while the workers still held packets of
    // the last reads: they read zeros there. No read is left to report it as an error.
    if (m_map && m_map->lost() && m_error.empty() && m_source) {
        std::fprintf(stderr,
                     "rowprobe: warning: input 'pcap': '%s' shrank after its last record was "
                     "read; packets still being processed read as zeros, so the flows of the "
                     "last packets may be wrong\n",
                     m_source->name().c_str());
    }
    for (const Chunk& c : m_chunks) ::munmap(c.mem, kChunkBytes);
}

std::size_t PcapStream::chunksAllocated() const noexcept { return m_chunks.size(); }

std::uint32_t PcapStream::load32(const std::uint8_t* p) const noexcept {
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return m_swapped ? __builtin_bswap32(v) : v;
}

void PcapStream::beginRead() noexcept {
    ++m_read;
    m_readUsed = 0;
    if (m_mapped) {
        // The oldest read still in flight started at m_readStart[(m_read + 1) % size]: nothing
        // below it is referenced any more.
        m_readStart[m_read % kReadsInFlight] = m_pos;
        m_map->dropBefore(m_readStart[(m_read + 1) % kReadsInFlight]);
    }
}

PcapStream::Result PcapStream::fail(std::string why) {
    // A mapped file that shrank reads zeros where its records were: say that, not "corrupt".
    if (m_map && (m_source->shrankBelow(m_offset) || m_map->lost())) {
        why = m_source->error().empty()
                  ? "pages of the memory-mapped file could not be read (I/O error, or the file "
                    "was cut and written again)"
                  : m_source->error();
    }
    m_error = std::move(why);
    m_end = true;
    m_pos = m_filled;
    return Result::Error;
}

bool PcapStream::mappingLost(std::uint64_t recordEnd) {
    if (!m_source->shrankBelow(recordEnd) && !m_map->lost()) return false;
    fail({});
    return true;
}

void PcapStream::moveToFreeChunk() {
    std::size_t next = m_chunks.size();
    for (std::size_t i = 1; i <= m_chunks.size(); ++i) {
        const std::size_t c = (m_cur + i) % m_chunks.size();
        if ((m_mapped || c != m_cur) && m_chunks[c].lastRead + kReadsInFlight <= m_read) {
            next = c;
            break;
        }
    }
    // kMaxChunks always suffices (see the header); more would only be a bug, never a crash.
    if (next == m_chunks.size()) m_chunks.push_back({allocateChunk(), 0});
    const std::size_t tail = m_filled - m_pos;
    std::memcpy(m_chunks[next].mem, m_buf + m_pos, tail);
    m_cur = next;
    m_buf = m_chunks[next].mem;
    m_mapped = false;
    m_pos = 0;
    m_filled = tail;
}

bool PcapStream::leaveMapping() {
    if (!m_source->seekTo(m_map->size())) return false;
    moveToFreeChunk();
    return true;
}

PcapStream::Result PcapStream::ensure(std::size_t n, int waitMs) {
    while (m_filled - m_pos < n) {
        if (m_end) {
            if (m_filled == m_pos) return Result::End;
            return fail("truncated dump file: " + std::to_string(m_filled - m_pos) +
                        " bytes of a record at byte " + std::to_string(m_offset) +
                        " are there, it needs " + std::to_string(n));
        }
        if (m_mapped) {
            if (!leaveMapping()) return fail("cannot read on after the mapped part of the file");
            continue;
        }
        if (m_pos + n > kChunkBytes) moveToFreeChunk();
        const std::size_t room = std::min(kChunkBytes - m_filled, kReadStep);
        const long got = m_source->read(m_chunks[m_cur].mem + m_filled, room, waitMs);
        if (got == ByteSource::kWait) return Result::Wait;
        if (got == ByteSource::kError) return fail(m_source->error());
        if (got == 0) {
            m_end = true;
            continue;
        }
        m_filled += static_cast<std::size_t>(got);
    }
    return Result::Packet;
}

PcapStream::Result PcapStream::next(RawPacket& out, std::uint32_t snaplen, int waitMs) {
    if (!m_valid || (m_end && m_pos == m_filled)) return Result::End;
    if (m_readUsed >= kReadBudget) return Result::Budget;
    return m_ng ? nextNg(out, snaplen, waitMs, false) : nextClassic(out, snaplen, waitMs);
}

PcapStream::Result PcapStream::nextClassic(RawPacket& out, std::uint32_t snaplen, int waitMs) {
    m_packetLinkType = m_linkType;
    Result r = ensure(kRecordHeader, waitMs);
    if (r != Result::Packet) return r;
    const std::uint32_t capLen = load32(m_buf + m_pos + 8);
    if (capLen > kMaxCapLen) {
        return fail("bogus savefile header: captured length " + std::to_string(capLen) +
                    " at byte " + std::to_string(m_offset) + " exceeds " +
                    std::to_string(kMaxCapLen));
    }
    r = ensure(kRecordHeader + capLen, waitMs);
    if (r != Result::Packet) return r;
    const std::uint8_t* rec = m_buf + m_pos;
    const std::uint32_t sec = load32(rec);
    const std::uint32_t frac = load32(rec + 4);
    const std::uint32_t wireLen = load32(rec + 12);
    if (m_mapped) {
        // A file cut under the mapping reads as zeros (the rest of its last page, or the zero
        // pages the SIGBUS handler put in): an all-zero header is checked against the file.
        if ((sec | frac | capLen | wireLen) == 0 || m_map->lost()) {
            if (mappingLost(m_pos + kRecordHeader)) return Result::Error;
        }
        m_map->ahead(m_pos);
    } else {
        m_chunks[m_cur].lastRead = m_read;
    }
    if (capLen > m_fileSnaplen) ++m_oversized;
    if (frac >= (m_nano ? 1'000'000'000U : 1'000'000U)) ++m_badTimestamps;
    out.data = rec + kRecordHeader;
    out.capLen = capLen < snaplen ? capLen : snaplen;
    out.wireLen = wireLen;
    out.ts = static_cast<TimeNs>(sec) * kNsPerSec + static_cast<TimeNs>(frac) * (m_nano ? 1 : 1000);
    m_pos += kRecordHeader + capLen;
    m_offset += kRecordHeader + capLen;
    m_readUsed += kRecordHeader + capLen;
    return Result::Packet;
}

TimeNs PcapStream::ngTime(const Interface& ifc, std::uint64_t units) const noexcept {
    U128 ns = 0;
    if ((ifc.tsresol & 0x80) != 0) {
        const unsigned bits = ifc.tsresol & 0x7f;
        if (bits >= 64) return 0;
        ns = (static_cast<U128>(units) * kNsPerSec) >> bits;
    } else if (ifc.tsresol <= 9) {
        std::uint64_t scale = 1;
        for (unsigned i = ifc.tsresol; i < 9; ++i) scale *= 10;
        ns = static_cast<U128>(units) * scale;
    } else {
        std::uint64_t div = 1;
        for (unsigned i = 9; i < ifc.tsresol && i < 28; ++i) div *= 10;
        ns = units / div;
    }
    const auto offset = static_cast<I128>(ifc.tsoffset) * static_cast<I128>(kNsPerSec);
    return static_cast<TimeNs>(static_cast<I128>(ns) + offset);
}

bool PcapStream::addInterface(const std::uint8_t* body, std::size_t len) {
    if (len < 8) return false;
    Interface ifc;
    std::uint16_t link = 0;
    std::memcpy(&link, body, 2);
    ifc.linkType = m_swapped ? __builtin_bswap16(link) : link;
    ifc.snaplen = load32(body + 4);
    for (std::size_t at = 8; at + 4 <= len;) {
        std::uint16_t code = 0;
        std::uint16_t size = 0;
        std::memcpy(&code, body + at, 2);
        std::memcpy(&size, body + at + 2, 2);
        if (m_swapped) {
            code = __builtin_bswap16(code);
            size = __builtin_bswap16(size);
        }
        if (code == 0 || at + 4 + size > len) break;
        if (code == 9 && size >= 1) ifc.tsresol = body[at + 4];
        if (code == 14 && size >= 8) {
            std::uint64_t v = 0;
            std::memcpy(&v, body + at + 4, 8);
            ifc.tsoffset = static_cast<std::int64_t>(m_swapped ? __builtin_bswap64(v) : v);
        }
        at += 4 + ((size + 3U) & ~3U);
    }
    if (m_interfaces.empty() && m_linkType == 0xffffffffU) {
        m_linkType = ifc.linkType;
        m_fileSnaplen = ifc.snaplen;
    }
    m_interfaces.push_back(ifc);
    return true;
}

PcapStream::Result PcapStream::nextNg(RawPacket& out, std::uint32_t snaplen, int waitMs,
                                      bool headerOnly) {
    for (;;) {
        if (!headerOnly && m_readUsed >= kReadBudget) return Result::Budget;
        Result r = ensure(8, waitMs);
        if (r != Result::Packet) return r;
        const std::uint8_t* blk = m_buf + m_pos;
        std::uint32_t type = 0;
        std::memcpy(&type, blk, 4);  // the section type reads the same in both byte orders
        if (type == kNgSection) {
            r = ensure(12, waitMs);
            if (r != Result::Packet) return r;
            blk = m_buf + m_pos;
            std::uint32_t bom = 0;
            std::memcpy(&bom, blk + 8, 4);
            if (bom == kNgByteOrder) {
                m_swapped = false;
            } else if (__builtin_bswap32(bom) == kNgByteOrder) {
                m_swapped = true;
            } else {
                return fail("corrupt pcapng section header at byte " + std::to_string(m_offset));
            }
            m_interfaces.clear();
        } else {
            type = load32(blk);
        }
        const std::uint32_t len = load32(blk + 4);
        if (len < 12 || len % 4 != 0 || len > kMaxBlock) {
            return fail("corrupt pcapng block at byte " + std::to_string(m_offset) + ": length " +
                        std::to_string(len));
        }
        r = ensure(len, waitMs);
        if (r != Result::Packet) return r;
        blk = m_buf + m_pos;
        const std::uint8_t* body = blk + 8;
        const std::size_t bodyLen = len - 12;
        std::uint32_t iface = 0;
        std::uint64_t units = 0;
        std::uint32_t capLen = 0;
        std::uint32_t wireLen = 0;
        const std::uint8_t* data = nullptr;
        bool packet = false;
        if (type == kNgInterface) {
            if (!addInterface(body, bodyLen)) {
                return fail("corrupt pcapng interface block at byte " + std::to_string(m_offset));
            }
        } else if (type == kNgEnhancedPacket || type == kNgPacketObsolete) {
            if (headerOnly) return Result::Packet;  // start-up stops at the first packet
            if (bodyLen < 20)
                return fail("corrupt pcapng packet block at byte " + std::to_string(m_offset));
            if (type == kNgEnhancedPacket) {
                iface = load32(body);
            } else {
                std::uint16_t id = 0;
                std::memcpy(&id, body, 2);
                iface = m_swapped ? __builtin_bswap16(id) : id;
            }
            units = (std::uint64_t{load32(body + 4)} << 32) | load32(body + 8);
            capLen = load32(body + 12);
            wireLen = load32(body + 16);
            data = body + 20;
            if (capLen > bodyLen - 20) {
                return fail("corrupt pcapng packet block at byte " + std::to_string(m_offset) +
                            ": captured length " + std::to_string(capLen) + " beyond the block");
            }
            packet = true;
        } else if (type == kNgSimplePacket) {
            if (headerOnly) return Result::Packet;
            if (bodyLen < 4)
                return fail("corrupt pcapng packet block at byte " + std::to_string(m_offset));
            wireLen = load32(body);
            capLen = static_cast<std::uint32_t>(std::min<std::size_t>(wireLen, bodyLen - 4));
            if (!m_interfaces.empty() && m_interfaces[0].snaplen != 0)
                capLen = std::min(capLen, m_interfaces[0].snaplen);
            data = body + 4;
            packet = true;
        }
        if (packet && iface >= m_interfaces.size()) {
            return fail("pcapng packet at byte " + std::to_string(m_offset) + " names interface " +
                        std::to_string(iface) + ", which was not described");
        }
        if (m_mapped) {
            if (m_map->lost() && mappingLost(m_pos + len)) return Result::Error;
            m_map->ahead(m_pos);
        } else {
            m_chunks[m_cur].lastRead = m_read;
        }
        m_pos += len;
        m_offset += len;
        if (headerOnly && type == kNgInterface) return Result::Packet;  // the link type is known
        if (!packet) continue;
        const Interface& ifc = m_interfaces[iface];
        if (ifc.snaplen != 0 && capLen > ifc.snaplen) ++m_oversized;
        m_packetLinkType = ifc.linkType;
        out.data = data;
        out.capLen = capLen < snaplen ? capLen : snaplen;
        out.wireLen = wireLen;
        out.ts = type == kNgSimplePacket ? 0 : ngTime(ifc, units);
        m_readUsed += len;
        return Result::Packet;
    }
}

}  // namespace rowprobe::input
