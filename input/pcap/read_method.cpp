#include "read_method.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <limits>

#include "file_map.hpp"

namespace rowprobe::input {

namespace {

std::uint64_t threadCpuNs() noexcept {
    timespec ts{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

/// One pass as the read() path: pread() kReadStep at a time into `buffer` front to back, as
/// the stream fills its chunk, each record walked once whole; where the buffer is full, the
/// record cut by its end moves to the front (the stream: to the next chunk). The bytes of
/// records walked, or 0 on an error.
std::uint64_t readPass(int fd, std::uint64_t start, std::size_t region, RecordLayout layout,
                       std::uint8_t* buffer, std::size_t bufferBytes, RecordWalk& w) noexcept {
    std::size_t filled = 0;    // bytes of the buffer holding data
    std::size_t pos = 0;       // the next record in the buffer
    std::uint64_t asked = 0;   // bytes of the region read so far
    std::uint64_t walked = 0;  // bytes of whole records walked
    while (asked < region) {
        if (filled == bufferBytes) {
            filled -= pos;
            std::memmove(buffer, buffer + pos, filled);
            pos = 0;
        }
        const std::size_t want =
            std::min<std::uint64_t>(std::min(kReadStep, bufferBytes - filled), region - asked);
        const ssize_t n = ::pread(fd, buffer + filled, want, static_cast<off_t>(start + asked));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        asked += static_cast<std::uint64_t>(n);
        filled += static_cast<std::size_t>(n);
        const std::size_t used =
            walkRecords(buffer + pos, filled - pos, layout, w, [](std::size_t) {});
        if (w.corrupt) return 0;
        pos += used;
        walked += used;
        if (filled - pos > kMaxBlock) return 0;  // no record is that long
    }
    return walked;
}

/// One pass as the mapped path: a FileMap of the file up to the region's end, the records
/// walked in place with ahead() before each, then unmapped. The bytes walked, or 0.
std::uint64_t mapPass(int fd, std::uint64_t start, std::size_t region, RecordLayout layout,
                      RecordWalk& w) noexcept {
    FileMap map(fd, static_cast<std::size_t>(start + region));
    if (!map.valid()) return 0;
    const std::uint8_t* base = map.data() + start;
    const std::size_t used = walkRecords(base, region, layout, w, [&](std::size_t pos) {
        map.ahead(static_cast<std::size_t>(start + pos));
    });
    if (w.corrupt || map.lost()) return 0;
    return used;
}

}  // namespace

ReadCosts measureReadCosts(int fd, std::uint64_t fileSize, std::uint64_t start, RecordLayout layout,
                           std::uint8_t* buffer, std::size_t bufferBytes,
                           std::size_t regionBytes) noexcept {
    ReadCosts costs;
    if (fd < 0 || buffer == nullptr || bufferBytes < kReadStep + kMaxBlock || start >= fileSize ||
        regionBytes == 0) {
        return costs;
    }
    const auto region =
        static_cast<std::size_t>(std::min<std::uint64_t>(regionBytes, fileSize - start));
    const std::uint64_t began = threadCpuNs();
    RecordWalk w;
    const std::uint64_t walked =
        readPass(fd, start, region, layout, buffer, bufferBytes, w);  // the warm-up pass
    // Fewer than half the region in whole records: whatever it is, not a capture to judge by.
    if (walked < region / 2) return costs;
    std::uint64_t best[2] = {std::numeric_limits<std::uint64_t>::max(),
                             std::numeric_limits<std::uint64_t>::max()};
    for (int round = 0; round < 2; ++round) {
        for (int way = 0; way < 2; ++way) {
            const std::uint64_t t0 = threadCpuNs();
            const std::uint64_t bytes =
                way == 0 ? readPass(fd, start, region, layout, buffer, bufferBytes, w)
                         : mapPass(fd, start, region, layout, w);
            const std::uint64_t t1 = threadCpuNs();
            if (bytes != walked || t0 == 0 || t1 < t0) return costs;
            best[way] = std::min(best[way], t1 - t0);
        }
    }
    // Keep the walk's loads: a sum nobody reads could let the compiler drop them.
    asm volatile("" : : "r"(w.sum) : "memory");
    costs.readNsPerMiB = (best[0] << 20) / walked;
    costs.mapNsPerMiB = (best[1] << 20) / walked;
    costs.regionBytes = walked;
    costs.totalNs = threadCpuNs() - began;
    costs.measured = true;
    return costs;
}

}  // namespace rowprobe::input
