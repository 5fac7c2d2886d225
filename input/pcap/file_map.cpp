#include "file_map.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels answer EINVAL
#endif

namespace rowprobe::input {

namespace {

// The SIGBUS handler's registry: the address ranges of the live FileMaps. A slot is published
// end first, begin last (begin != 0 marks it in use) and withdrawn begin first, so the handler
// never sees half a range. Registration takes a mutex; the handler only loads atomics.
constexpr std::size_t kSlots = 64;
struct Slot {
    std::atomic<std::uintptr_t> begin{0};
    std::atomic<std::uintptr_t> end{0};
    std::atomic<bool> lost{false};
};
Slot g_slots[kSlots];
std::mutex g_registryMutex;
std::size_t g_live = 0;  ///< FileMaps registered (under the mutex)
struct sigaction g_previous {};
std::atomic<std::uintptr_t> g_pageSize{4096};

void onSigbus(int signo, siginfo_t* info, void* /*context*/) {
    // The interrupted code may be about to read errno: mmap and sigaction here must not change
    // it.
    const int savedErrno = errno;
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    if (info->si_code > 0) {  // raised by the kernel for an access, not sent
        for (Slot& slot : g_slots) {
            const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
            const std::uintptr_t end = slot.end.load(std::memory_order_acquire);
            if (begin == 0 || addr < begin || addr >= end) continue;
            // The file ends before this page: everything from here to the end of the mapping is
            // gone. Zero pages in their place; the faulting load is retried and reads zeros.
            const std::uintptr_t page = addr & ~(g_pageSize.load(std::memory_order_relaxed) - 1);
            void* at = static_cast<char*>(info->si_addr) - (addr - page);
            void* zero =
                ::mmap(at, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (zero == MAP_FAILED) break;
            slot.lost.store(true, std::memory_order_release);
            errno = savedErrno;
            return;
        }
    }
    // Not ours: whoever handled SIGBUS before (usually the default action, which ends the
    // process) gets it. A fault is retried on return and raises it again; a sent one is re-sent.
    ::sigaction(SIGBUS, &g_previous, nullptr);
    if (info->si_code <= 0) ::raise(signo);
    errno = savedErrno;
}

/// Registers [begin, begin + size) with the handler, installing it for the first mapping.
/// Returns the slot, or kSlots when the registry is full (then the file is read, not mapped).
std::size_t registerRange(std::uintptr_t begin, std::size_t size) {
    const std::lock_guard<std::mutex> lock(g_registryMutex);
    std::size_t slot = 0;
    while (slot < kSlots && g_slots[slot].begin.load(std::memory_order_relaxed) != 0) ++slot;
    if (slot == kSlots) return kSlots;
    if (g_live == 0) {
        g_pageSize.store(static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)),
                         std::memory_order_relaxed);
        struct sigaction action {};
        action.sa_sigaction = onSigbus;
        action.sa_flags = SA_SIGINFO;
        sigemptyset(&action.sa_mask);
        if (::sigaction(SIGBUS, &action, &g_previous) != 0) return kSlots;
    }
    ++g_live;
    g_slots[slot].lost.store(false, std::memory_order_relaxed);
    g_slots[slot].end.store(begin + size, std::memory_order_release);
    g_slots[slot].begin.store(begin, std::memory_order_release);
    return slot;
}

void unregisterRange(std::size_t slot) {
    const std::lock_guard<std::mutex> lock(g_registryMutex);
    g_slots[slot].begin.store(0, std::memory_order_release);
    g_slots[slot].end.store(0, std::memory_order_release);
    if (--g_live == 0) ::sigaction(SIGBUS, &g_previous, nullptr);
}

}  // namespace

FileMap::FileMap(int fd, std::size_t size) noexcept : m_size(size), m_slot(kSlots) {
    static const std::atomic<bool> kNeverLost{false};
    m_lost = &kNeverLost;
    if (size == 0) return;
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return;
    m_slot = registerRange(reinterpret_cast<std::uintptr_t>(p), size);
    if (m_slot == kSlots) {
        ::munmap(p, size);
        return;
    }
    m_data = static_cast<std::uint8_t*>(p);
    m_lost = &g_slots[m_slot].lost;
}

FileMap::~FileMap() {
    if (m_data == nullptr) return;
    unregisterRange(m_slot);
    ::munmap(m_data, m_size);
}

void FileMap::prefetchTo(std::size_t limit) noexcept {
    limit = std::min(limit, m_size);
    std::size_t at = std::max(m_prefetched, limit - std::min(limit, kPrefetchBytes)) & ~63UL;
    for (; at < limit; at += 64) __builtin_prefetch(m_data + at);
    m_prefetched = std::max(at, m_prefetched);
}

void FileMap::populateNext() noexcept {
    const std::size_t n = std::min(kWindow, m_size - m_populated);
    if (m_populate && ::madvise(m_data + m_populated, n, MADV_POPULATE_READ) != 0 &&
        errno != EFAULT && errno != EINTR) {
        m_populate = false;  // EFAULT: beyond a new end of file; the reader finds out itself
    }
    if (!m_populate) ::madvise(m_data + m_populated, n, MADV_WILLNEED);
    m_populated += n;
}

void FileMap::dropBefore(std::size_t offset) noexcept {
    const std::size_t to = std::min(offset, m_size) & ~(kWindow - 1);
    if (to <= m_dropped) return;
    ::madvise(m_data + m_dropped, to - m_dropped, MADV_DONTNEED);
    m_dropped = to;
}

}  // namespace rowprobe::input
