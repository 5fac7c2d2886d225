// Single-producer single-consumer ring, the hand-off between the threads of a queue:
// input -> worker (packet blocks), worker -> export (flow records).
//
//   m_head (producer-owned, cache line 1)   m_tail (consumer-owned, cache line 2)
//   slots [capacity], capacity a power of two
//
// * Lock-free: one acquire load and one release store per operation, each index on its own cache
//   line; the producer caches the consumer's index (and vice versa) so the common case touches
//   only its own line.
// * Capacity is fixed at construction; nothing allocates afterwards.
// * tryPush / tryPop never block. Callers that must not lose data wait with a bounded spin,
//   then std::this_thread::yield, then short sleeps (spinBackoff, waitPush).
#pragma once

#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <memory>
#include <new>
#include <thread>

namespace rowprobe {

/// One step of a producer's wait for room, the `spin`-th: spin, then yield (hands the core to
/// the consumer when the two share one), then sleep 50 us. A consumer that is the bottleneck
/// for long (the export thread formatting a mass expiry or the final flush) then has the
/// producer's core for its own helpers instead of sharing it with a thread that only yields.
inline void spinBackoff(unsigned spin) noexcept {
    if (spin < 64) return;
    if (spin < 256) {
        std::this_thread::yield();
    } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

template <class T>
class SpscRing {
public:
    explicit SpscRing(std::size_t capacity)
        : m_capacity(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity)),
          m_mask(m_capacity - 1),
          // Default-initialised: slots are written before they are read, and a large ring
          // (the plugins' handle-return ring holds every pool handle) is then backed only as
          // it is used instead of zeroed at start-up.
          m_slots(std::make_unique_for_overwrite<T[]>(m_capacity)) {}

    SpscRing(const SpscRing&) = delete;
    SpscRing& operator=(const SpscRing&) = delete;

    /// Producer only. Returns false when full.
    bool tryPush(const T& value) noexcept {
        const std::size_t head = m_head.load(std::memory_order_relaxed);
        if (head - m_cachedTail == m_capacity) {
            m_cachedTail = m_tail.load(std::memory_order_acquire);
            if (head - m_cachedTail == m_capacity) return false;
        }
        m_slots[head & m_mask] = value;
        m_head.store(head + 1, std::memory_order_release);
        return true;
    }

    /// Producer only. Waits (spinBackoff) until there is room; returns false only if
    /// `abandon` becomes true while waiting (the consumer has gone away).
    bool waitPush(const T& value, const std::atomic<bool>& abandon) noexcept {
        for (unsigned spin = 0; !tryPush(value); ++spin) {
            if (abandon.load(std::memory_order_relaxed)) return false;
            spinBackoff(spin);
        }
        return true;
    }

    /// Producer only. As waitPush, but `fill(slot)` writes the value straight into its slot. A
    /// value built elsewhere and copied in is read back with wide loads right after its
    /// fields were stored one by one: those loads wait for the stores, and the stores wait
    /// behind the previous records' stores into ring lines the consumer holds. The final
    /// flush of 1 M flows spent most of its worker time there (docs/performance.md, "Session
    /// 21").
    template <class Fill>
    bool waitEmplace(Fill&& fill, const std::atomic<bool>& abandon) noexcept {
        const std::size_t head = m_head.load(std::memory_order_relaxed);
        for (unsigned spin = 0; head - m_cachedTail == m_capacity; ++spin) {
            m_cachedTail = m_tail.load(std::memory_order_acquire);
            if (head - m_cachedTail != m_capacity) break;
            if (abandon.load(std::memory_order_relaxed)) return false;
            spinBackoff(spin);
        }
        fill(m_slots[head & m_mask]);
        m_head.store(head + 1, std::memory_order_release);
        return true;
    }

    /// Consumer only. Returns false when empty.
    bool tryPop(T& out) noexcept {
        const std::size_t tail = m_tail.load(std::memory_order_relaxed);
        if (tail == m_cachedHead) {
            m_cachedHead = m_head.load(std::memory_order_acquire);
            if (tail == m_cachedHead) return false;
        }
        out = m_slots[tail & m_mask];
        m_tail.store(tail + 1, std::memory_order_release);
        return true;
    }

    /// Either side; approximate while the other side runs.
    std::size_t size() const noexcept {
        return m_head.load(std::memory_order_acquire) - m_tail.load(std::memory_order_acquire);
    }
    bool empty() const noexcept { return size() == 0; }
    std::size_t capacity() const noexcept { return m_capacity; }

private:
    static constexpr std::size_t kLine = 64;
    const std::size_t m_capacity;
    const std::size_t m_mask;
    std::unique_ptr<T[]> m_slots;
    alignas(kLine) std::atomic<std::size_t> m_head{0};
    std::size_t m_cachedTail = 0;  ///< producer's copy of m_tail
    alignas(kLine) std::atomic<std::size_t> m_tail{0};
    std::size_t m_cachedHead = 0;  ///< consumer's copy of m_head
};

}  // namespace rowprobe
