// Software prefetches for the flow table, the process-plugin dispatch and the pipeline's parse
// (its output lines, fetched for writing), and keepLoaded, the sink that keeps the table's
// grouped demand loads.
//
// Each is __builtin_prefetch followed by an empty volatile asm that takes the address. GCC
// treats __builtin_prefetch as free of side effects, so a loop made of nothing but prefetches
// (over a row's occupied slots, over a record's lines) is dead code to it under C++'s
// forward-progress rule, and -O2 deletes the whole loop: the sweep's and the final flush's
// record prefetches were never in the binary until these wrappers. The asm emits no
// instruction; it only makes the loop observable.
#pragma once

#include <cstdint>

namespace rowprobe {

inline void prefetchRead(const void* p) noexcept {
    __builtin_prefetch(p, 0, 3);
    asm volatile("" : : "r"(p));
}

inline void prefetchWrite(const void* p) noexcept {
    __builtin_prefetch(p, 1, 3);
    asm volatile("" : : "r"(p));
}

/// Makes the demand loads that produced `v` observable, so the compiler keeps them (no code).
inline void keepLoaded(std::uint64_t v) noexcept { asm volatile("" : : "r"(v)); }

}  // namespace rowprobe
