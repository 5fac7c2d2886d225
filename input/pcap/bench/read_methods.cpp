// rowprobe-bench-read: how fast can a classic pcap file be walked, record by record, touching
// the first 64 bytes of each frame as the parser does? One method per run, so that each run's
// peak RSS is its own (docs/performance.md, "Reading captures"):
//
//   mmap        the former reader: the whole file mapped, MAP_POPULATE up to 1 GiB
//   window      mapped without populate; a helper thread MADV_POPULATE_READs 8 MiB windows
//               ahead of the reader and the reader MADV_DONTNEEDs what lies 16 MiB behind it
//   read        PcapStream with map=off (the default): read() into reusable 2 MiB huge-page chunks
//   zerocopy    PcapStream with map=auto: the file mapped, records parsed in place,
//               4 MiB windows populated ahead and unmapped behind the reads in flight
//   uring       io_uring (liburing): 1 MiB reads, 4 buffers, up to 3 in flight ahead
//
// Usage: rowprobe-bench-read METHOD FILE   (prints packets, seconds, user, sys, max RSS)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "input/pcap/pcap_stream.hpp"

#ifdef ROWPROBE_HAVE_LIBURING
#include <liburing.h>
#endif

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {

struct Walk {
    std::uint64_t packets = 0;
    std::uint64_t sum = 0;  ///< keeps the loads alive
    void frame(const std::uint8_t* data, std::uint32_t capLen) noexcept {
        ++packets;
        std::uint64_t v = 0;
        std::memcpy(&v, data + (capLen >= 40 ? 32 : 0), capLen >= 8 ? 8 : 0);
        sum += v + capLen;
    }
};

std::uint32_t load32(const std::uint8_t* p) {
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
}

/// Walks records in [p, end); returns the offset where an incomplete record starts.
std::size_t walkBuffer(const std::uint8_t* p, std::size_t n, Walk& w) {
    std::size_t pos = 0;
    while (n - pos >= 16) {
        const std::uint32_t cap = load32(p + pos + 8);
        if (n - pos - 16 < cap) break;
        w.frame(p + pos + 16, cap);
        pos += 16 + cap;
    }
    return pos;
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
        w.frame(base + pos + 16, cap);
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
        w.frame(base + pos + 16, cap);
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
            w.frame(p.data, p.capLen);
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

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s mmap|window|read|zerocopy|uring FILE\n", argv[0]);
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
        w = viaStream(fd, argv[2], rowprobe::input::MapMode::Auto);
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
        method.c_str(), static_cast<unsigned long long>(w.packets), sec,
        static_cast<double>(w.packets) / sec / 1e6,
        static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6,
        static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6,
        static_cast<double>(ru.ru_maxrss) / 1024.0, static_cast<unsigned long long>(w.sum % 1000));
    return 0;
}
