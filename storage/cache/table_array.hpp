// TableArray: the memory behind the flow table's large arrays (rows, records, tunnels, the
// process plugins' per-slot areas).
//
//   count < 4 MiB of T   aligned_alloc (64-byte aligned), uninitialised
//   count >= 4 MiB of T  an anonymous mapping, 2 MiB aligned: zero until written, backed page
//                        by page on first touch, unmapped on destruction. Its first
//                        `hugeCount` elements (default: all) are MADV_HUGEPAGE, the rest
//                        MADV_NOHUGEPAGE until adviseHugeRest() (4 KiB pages: a sparse tail is
//                        faulted in 4 KiB at a time, not 2 MiB per touched record)
//
// zeroed() says which one a caller got, so that it can skip clearing memory the kernel already
// zeroes. Move-only; never reallocates.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

namespace rowprobe::storage::detail {

/// MADV_POPULATE_WRITE (Linux 5.14): makes [p, p + bytes) present and writable, faulting it in
/// as the calling thread. True on success; false with errno set otherwise (EINVAL on an older
/// kernel or a range that is not a private anonymous mapping).
inline bool populateWrite(void* p, std::size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
    constexpr int kAdvice = MADV_POPULATE_WRITE;
#else
    constexpr int kAdvice = 23;
#endif
    return ::madvise(p, bytes, kAdvice) == 0;
}

/// An array for large tables: aligned, backed by transparent huge pages when the kernel allows
/// (fewer TLB misses on random row access). Arrays of 4 MiB and more are anonymous mappings:
/// zero-filled by the kernel page by page on first touch, so start-up neither zeroes nor faults
/// memory the run does not use yet (`-c 1` on a 2^20 table touches a few pages, not 128 MiB),
/// and a size beyond what the machine could ever give still fails at once (mmap). Smaller
/// arrays come from aligned_alloc, uninitialised.
template <class T>
class TableArray {
public:
    TableArray() = default;
    explicit TableArray(std::size_t count, std::size_t hugeCount = ~std::size_t{0})
        : m_count(count) {
        const std::size_t bytes = count * sizeof(T);
        if (bytes >= kMapBytes) {
            m_mapped = (bytes + kHuge - 1) / kHuge * kHuge;
            void* p = ::mmap(nullptr, m_mapped + kHuge, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            // Keep the 2 MiB-aligned part so that huge pages can back all of it.
            const auto start = reinterpret_cast<std::uintptr_t>(p);
            const std::uintptr_t aligned = (start + kHuge - 1) & ~(std::uintptr_t{kHuge} - 1);
            if (aligned > start) ::munmap(p, aligned - start);
            const std::uintptr_t end = start + m_mapped + kHuge;
            if (end > aligned + m_mapped)
                ::munmap(reinterpret_cast<void*>(aligned + m_mapped), end - aligned - m_mapped);
            m_data.reset(reinterpret_cast<T*>(aligned));
            m_huge = std::min(m_mapped,
                              (std::min(hugeCount, count) * sizeof(T) + kHuge - 1) / kHuge * kHuge);
            advise(0, m_huge, MADV_HUGEPAGE);
            advise(m_huge, m_mapped, MADV_NOHUGEPAGE);
            return;
        }
        const std::size_t align = std::max<std::size_t>(64, alignof(T));
        void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
        if (p == nullptr) throw std::bad_alloc();
        m_data.reset(static_cast<T*>(p));
    }
    TableArray(TableArray&& other) noexcept
        : m_data(std::move(other.m_data)),
          m_count(std::exchange(other.m_count, 0)),
          m_mapped(std::exchange(other.m_mapped, 0)),
          m_huge(std::exchange(other.m_huge, 0)) {}
    TableArray& operator=(TableArray&& other) noexcept {
        release();
        m_data = std::move(other.m_data);
        m_count = std::exchange(other.m_count, 0);
        m_mapped = std::exchange(other.m_mapped, 0);
        m_huge = std::exchange(other.m_huge, 0);
        return *this;
    }
    TableArray(const TableArray&) = delete;
    TableArray& operator=(const TableArray&) = delete;
    ~TableArray() { release(); }

    /// True when the memory is zero before first use (an anonymous mapping).
    bool zeroed() const noexcept { return m_mapped != 0; }
    /// From now on the part beyond `hugeCount` takes huge pages too (pages already faulted in
    /// stay 4 KiB until khugepaged collapses them). One madvise; idempotent.
    void adviseHugeRest() noexcept {
        advise(m_huge, m_mapped, MADV_HUGEPAGE);
        m_huge = m_mapped;
    }
    T& operator[](std::size_t i) noexcept { return m_data.get()[i]; }
    const T& operator[](std::size_t i) const noexcept { return m_data.get()[i]; }
    T* data() noexcept { return m_data.get(); }
    const T* data() const noexcept { return m_data.get(); }
    std::size_t size() const noexcept { return m_count; }

private:
    static constexpr std::size_t kMapBytes = std::size_t{4} << 20;
    static constexpr std::size_t kHuge = std::size_t{2} << 20;
    /// madvise of bytes [from, to) of the mapping; a hint: failure (no THP) changes nothing.
    void advise(std::size_t from, std::size_t to, int advice) noexcept {
        if (m_mapped == 0 || from >= to) return;
        ::madvise(reinterpret_cast<char*>(m_data.get()) + from, to - from, advice);
    }
    void release() noexcept {
        T* p = m_data.release();
        if (p == nullptr) return;
        if (m_mapped != 0) {
            ::munmap(static_cast<void*>(p), m_mapped);
        } else {
            std::free(p);
        }
    }
    struct NoFree {
        void operator()(T*) const noexcept {}
    };
    std::unique_ptr<T, NoFree> m_data;
    std::size_t m_count = 0;
    std::size_t m_mapped = 0;  ///< bytes mapped, 0 when from aligned_alloc
    std::size_t m_huge = 0;    ///< bytes from the start advised MADV_HUGEPAGE
};

}  // namespace rowprobe::storage::detail
