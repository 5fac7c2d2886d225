// rowprobe-bench-read: how fast can a classic pcap file be walked, record by record, touching
// the first 64 bytes of each frame as the parser does? One method per run, so that each run's
// peak RSS is its own (docs/performance.md, "Reading captures"):
//
//   mmap        the former reader: the whole file mapped, MAP_POPULATE up to 1 GiB
//   window      mapped without populate; a helper thread MADV_POPULATE_READs 8 MiB windows
//               ahead of the reader and the reader MADV_DONTNEEDs what lies 16 MiB behind it
//   read        PcapStream with map=off: read() into reusable 2 MiB huge-page chunks
//   zerocopy    PcapStream with map=on: the file mapped, records parsed in place,
//               4 MiB windows populated ahead and unmapped behind the reads in flight
//   auto        PcapStream with map=auto (the pcap input's default): measures both at open
//               and reads the file the cheaper way (prints what it measured)
//   measure     only map=auto's measurement at open (read_method.hpp): both costs, the choice,
//               and what the measurement itself cost; an optional third argument sets the
//               measured region in KiB (default: what map=auto takes for the file's size)
//   uring       io_uring (liburing): 1 MiB reads, 4 buffers, up to 3 in flight ahead
//
// Every method walks the records with walkRecords (read_method.hpp), as map=auto's measurement.
//
// Usage: rowprobe-bench-read METHOD FILE [KIB]   (prints packets, seconds, user, sys, max RSS)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "input/pcap/pcap_stream.hpp"
#include "input/pcap/read_method.hpp"

#ifdef ROWPROBE_HAVE_LIBURING
#include <liburing.h>
#endif

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {

using rowprobe::input::RecordWalk;
using Walk = RecordWalk;

/// Walks the classic pcap records in [p, p + n); returns the offset where an incomplete
/// record starts.
std::size_t walkBuffer(const std::uint8_t* p, std::size_t n, Walk& w) {
    return rowprobe::input::walkRecords(p, n, {}, w, [](std::size_t) {});
}

std::uint32_t load32(const std::uint8_t* p) {
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
}

Walk viaMmap(int fd, std::size_t size) {
    const int populate = size <= (std::size_t{1} << 30) ? MAP_POPULATE : 0;
    auto* base = static_cast<const std::uint8_t*>(
        ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | populate, fd, 0));
    ::madvise(const_cast<std::uint8_t*>(base), size, MADV_SEQUENTIAL);
    Walk w;
    std::size_t pos = 24;
    while (size - pos >= 16) {
        if (size - pos > 2048) __builtin_prefetch(base + pos + 2048);
        const std::uint32_t cap = load32(base + pos + 8);
        if (size - pos - 16 < cap) break;
        rowprobe::input::touchFrame(base + pos + 16, cap, w);
        pos += 16 + cap;
    }
    ::munmap(const_cast<std::uint8_t*>(base), size);
    return w;
}

Walk viaWindow(int fd, std::size_t size) {
    constexpr std::size_t kWin = std::size_t{8} << 20;
    auto* base = static_cast<std::uint8_t*>(::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0));
    std::atomic<std::size_t> reader{0};
    std::atomic<bool> done{false};
    std::thread helper([&] {
        std::size_t populated = 0;
        while (!done.load(std::memory_order_relaxed) && populated < size) {
            if (populated > reader.load(std::memory_order_relaxed) + 2 * kWin) {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
                continue;
            }
            const std::size_t n = std::min(kWin, size - populated);
            ::madvise(base + populated, n, MADV_POPULATE_READ);
            populated += n;
        }
    });
    Walk w;
    std::size_t pos = 24;
    std::size_t released = 0;
    while (size - pos >= 16) {
        if (size - pos > 2048) __builtin_prefetch(base + pos + 2048);
        const std::uint32_t cap = load32(base + pos + 8);
        if (size - pos - 16 < cap) break;
        rowprobe::input::touchFrame(base + pos + 16, cap, w);
        pos += 16 + cap;
        if (pos - released > 3 * kWin) {
            ::madvise(base + released, kWin, MADV_DONTNEED);
            released += kWin;
            reader.store(pos, std::memory_order_relaxed);
        }
    }
    done = true;
    helper.join();
    ::munmap(base, size);
    return w;
}

Walk viaStream(int fd, const std::string& name, rowprobe::input::MapMode mode) {
    rowprobe::input::PcapStream stream(std::make_unique<rowprobe::input::ByteSource>(fd, name), -1,
                                       mode);
    if (mode == rowprobe::input::MapMode::Auto) {
        std::printf("auto: %s\n", stream.describeReadMethod().c_str());
    }
    Walk w;
    for (;;) {
        stream.beginRead();
        rowprobe::RawPacket p;
        bool end = false;
        for (int i = 0; i < 64; ++i) {
            const auto r = stream.next(p, 262144, -1);
            if (r == rowprobe::input::PcapStream::Result::Budget) break;
            if (r != rowprobe::input::PcapStream::Result::Packet) {
                end = true;
                break;
            }
            rowprobe::input::touchFrame(p.data, p.capLen, w);
        }
        if (end) break;
    }
    return w;
}

#ifdef ROWPROBE_HAVE_LIBURING
Walk viaUring(int fd, std::size_t size) {
    constexpr std::size_t kBuf = std::size_t{1} << 20;
    constexpr unsigned kBufs = 4;
    io_uring ring{};
    io_uring_queue_init(8, &ring, 0);
    // Each buffer has 256 KiB in front for the tail of the record cut by the previous one.
    constexpr std::size_t kFront = 262144 + 16;
    std::vector<std::unique_ptr<std::uint8_t[]>> bufs;
    for (unsigned i = 0; i < kBufs; ++i) bufs.emplace_back(new std::uint8_t[kFront + kBuf]);
    std::vector<int> got(kBufs, -1);
    std::size_t submitted = 0;  ///< file offset of the next read to submit
    unsigned inFlight = 0;
    auto submit = [&](unsigned b) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring);
        io_uring_prep_read(sqe, fd, bufs[b].get() + kFront, kBuf, submitted);
        io_uring_sqe_set_data64(sqe, b);
        submitted += kBuf;
        ++inFlight;
    };
    for (unsigned b = 0; b < kBufs - 1 && submitted < size; ++b) submit(b);
    io_uring_submit(&ring);
    Walk w;
    std::size_t carry = 0;  ///< bytes of an incomplete record
    const std::uint8_t* carryFrom = nullptr;
    bool header = true;
    for (unsigned b = 0; inFlight > 0; b = (b + 1) % kBufs) {
        while (got[b] < 0) {
            io_uring_cqe* cqe = nullptr;
            io_uring_wait_cqe(&ring, &cqe);
            got[io_uring_cqe_get_data64(cqe)] = cqe->res;
            io_uring_cqe_seen(&ring, cqe);
            --inFlight;
        }
        const std::size_t n = static_cast<std::size_t>(got[b]);
        got[b] = -1;
        std::uint8_t* data = bufs[b].get() + kFront - carry;
        if (carry > 0) std::memmove(data, carryFrom, carry);
        std::size_t start = 0;
        if (header) {
            start = 24;
            header = false;
        }
        const std::size_t used = start + walkBuffer(data + start, carry + n - start, w);
        carry = carry + n - used;
        carryFrom = data + used;
        // The buffer before this one is free again (its tail was copied): read into it.
        if (submitted < size) {
            submit((b + kBufs - 1) % kBufs);
            io_uring_submit(&ring);
        }
        if (n == 0) break;
    }
    io_uring_queue_exit(&ring);
    return w;
}
#endif

/// map=auto's measurement alone: through PcapStream as the input opens the file, or, with a
/// region of `kib` KiB, measureReadCosts on a classic pcap directly (a 2 MiB huge-page buffer,
/// as the stream's chunk).
int measure(int fd, const std::string& name, std::size_t size, long kib) {
    if (kib <= 0) {
        rowprobe::input::PcapStream stream(std::make_unique<rowprobe::input::ByteSource>(fd, name),
                                           -1, rowprobe::input::MapMode::Auto);
        std::printf("measure: %s\n", stream.describeReadMethod().c_str());
        return stream.valid() ? 0 : 1;
    }
    std::uint8_t header[24] = {};
    if (::pread(fd, header, sizeof header, 0) != static_cast<ssize_t>(sizeof header)) return 1;
    const bool swapped = load32(header) == 0xd4c3b2a1 || load32(header) == 0x4d3cb2a1;
    constexpr std::size_t kBuffer = std::size_t{2} << 20;
    auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBuffer, kBuffer));
    ::madvise(buffer, kBuffer, MADV_HUGEPAGE);
    const rowprobe::input::ReadCosts c =
        rowprobe::input::measureReadCosts(fd, size, 24, {.pcapng = false, .swapped = swapped},
                                          buffer, kBuffer, static_cast<std::size_t>(kib) << 10);
    std::free(buffer);
    const bool map = rowprobe::input::chooseReadMethod(
                         {.regular = true, .gzip = false, .atStart = true, .size = size}, c) ==
                     rowprobe::input::ReadMethod::Map;
    std::printf(
        "measure: region_kib=%llu read_ns_per_mib=%llu map_ns_per_mib=%llu ratio=%.3f "
        "choice=%s measured=%d took_ms=%.3f\n",
        static_cast<unsigned long long>(c.regionBytes >> 10),
        static_cast<unsigned long long>(c.readNsPerMiB),
        static_cast<unsigned long long>(c.mapNsPerMiB),
        c.readNsPerMiB != 0
            ? static_cast<double>(c.mapNsPerMiB) / static_cast<double>(c.readNsPerMiB)
            : 0.0,
        map ? "map" : "read", c.measured ? 1 : 0, static_cast<double>(c.totalNs) / 1e6);
    return c.measured ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 4 && std::string(argv[1]) == "measure")) {
        std::fprintf(stderr,
                     "usage: %s mmap|window|read|zerocopy|auto|uring FILE\n"
                     "       %s measure FILE [KIB]\n",
                     argv[0], argv[0]);
        return 2;
    }
    const std::string method = argv[1];
    const int fd = ::open(argv[2], O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
        std::perror(argv[2]);
        return 1;
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    const auto t0 = std::chrono::steady_clock::now();
    Walk w;
    if (method == "mmap") {
        w = viaMmap(fd, size);
    } else if (method == "window") {
        w = viaWindow(fd, size);
    } else if (method == "read") {
        w = viaStream(fd, argv[2], rowprobe::input::MapMode::Off);
    } else if (method == "zerocopy") {
        w = viaStream(fd, argv[2], rowprobe::input::MapMode::On);
    } else if (method == "auto") {
        w = viaStream(fd, argv[2], rowprobe::input::MapMode::Auto);
    } else if (method == "measure") {
        return measure(fd, argv[2], size, argc == 4 ? std::atol(argv[3]) : 0);
#ifdef ROWPROBE_HAVE_LIBURING
    } else if (method == "uring") {
        w = viaUring(fd, size);
#endif
    } else {
        std::fprintf(stderr, "unknown or unavailable method '%s'\n", argv[1]);
        return 2;
    }
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    std::printf(
        "%-7s packets=%llu seconds=%.3f Mpps=%.2f user=%.3f sys=%.3f maxrss_mb=%.1f check=%llu\n",
        method.c_str(), static_cast<unsigned long long>(w.records), sec,
        static_cast<double>(w.records) / sec / 1e6,
        static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6,
        static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6,
        static_cast<double>(ru.ru_maxrss) / 1024.0, static_cast<unsigned long long>(w.sum % 1000));
    return 0;
}
