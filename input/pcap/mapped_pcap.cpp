#include "mapped_pcap.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace rowprobe::input {

namespace {
constexpr std::uint32_t kMagicMicro = 0xa1b2c3d4;
constexpr std::uint32_t kMagicNano = 0xa1b23c4d;
constexpr std::uint32_t kMaxCapLen = 262144;
constexpr std::size_t kGlobalHeader = 24;
constexpr std::size_t kRecordHeader = 16;
constexpr std::size_t kPopulateLimit = std::size_t{1} << 30;
constexpr std::size_t kPrefetchAhead = 2048;
}  // namespace

MappedPcap::MappedPcap(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::size_t>(st.st_size) < kGlobalHeader) {
        ::close(fd);
        return;
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    // Pre-faulting the page tables in one system call is several times cheaper than a fault per
    // page on first touch; for very large files it would only delay the start, so stream those.
    const int populate = size <= kPopulateLimit ? MAP_POPULATE : 0;
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | populate, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return;
    const auto* base = static_cast<const std::uint8_t*>(p);
    std::uint32_t magic = 0;
    std::memcpy(&magic, base, 4);
    if (magic == kMagicMicro || magic == kMagicNano) {
        m_nano = magic == kMagicNano;
    } else if (__builtin_bswap32(magic) == kMagicMicro || __builtin_bswap32(magic) == kMagicNano) {
        m_swapped = true;
        m_nano = __builtin_bswap32(magic) == kMagicNano;
    } else {
        ::munmap(p, size);  // pcapng or not a capture at all: libpcap decides
        return;
    }
    ::madvise(p, size, MADV_SEQUENTIAL);
    ::madvise(p, size, MADV_WILLNEED);
    m_base = base;
    m_size = size;
}

MappedPcap::~MappedPcap() {
    if (m_base != nullptr) ::munmap(const_cast<std::uint8_t*>(m_base), m_size);
}

std::uint32_t MappedPcap::load32(std::size_t at) const noexcept {
    std::uint32_t v = 0;
    std::memcpy(&v, m_base + at, 4);
    return m_swapped ? __builtin_bswap32(v) : v;
}

MappedPcap::Result MappedPcap::next(RawPacket& out, std::uint32_t snaplen) noexcept {
    if (m_pos == m_size) return Result::End;
    if (m_size - m_pos < kRecordHeader) {
        m_error = "truncated dump file: record header cut off at byte " + std::to_string(m_pos);
        m_pos = m_size;
        return Result::Error;
    }
    // The hardware prefetcher stops at page boundaries; ask for the bytes a few records ahead.
    if (m_size - m_pos > kPrefetchAhead) __builtin_prefetch(m_base + m_pos + kPrefetchAhead);
    const std::uint32_t sec = load32(m_pos);
    const std::uint32_t frac = load32(m_pos + 4);
    const std::uint32_t capLen = load32(m_pos + 8);
    const std::uint32_t wireLen = load32(m_pos + 12);
    if (capLen > kMaxCapLen) {
        m_error = "bogus savefile header: captured length " + std::to_string(capLen) + " at byte " +
                  std::to_string(m_pos) + " exceeds " + std::to_string(kMaxCapLen);
        m_pos = m_size;
        return Result::Error;
    }
    if (m_size - m_pos - kRecordHeader < capLen) {
        m_error = "truncated dump file: tried to read " + std::to_string(capLen) +
                  " captured bytes, only got " + std::to_string(m_size - m_pos - kRecordHeader);
        m_pos = m_size;
        return Result::Error;
    }
    out.data = m_base + m_pos + kRecordHeader;
    out.capLen = capLen < snaplen ? capLen : snaplen;
    out.wireLen = wireLen;
    out.ts = static_cast<TimeNs>(sec) * kNsPerSec + static_cast<TimeNs>(frac) * (m_nano ? 1 : 1000);
    m_pos += kRecordHeader + capLen;
    return Result::Packet;
}

}  // namespace rowprobe::input
