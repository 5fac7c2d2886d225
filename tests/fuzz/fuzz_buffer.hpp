// Shared by the process-parser fuzz targets: the input copied into an exact-size heap buffer
// (so AddressSanitizer sees any read past it) and an invariant check that aborts.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

namespace rowprobe::fuzz {

inline void check(bool condition) {
    if (!condition) std::abort();
}

class ExactBuffer {
public:
    ExactBuffer(const std::uint8_t* data, std::size_t size)
        : m_buf(std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size)), m_size(size) {
        if (size != 0) std::memcpy(m_buf.get(), data, size);
    }
    std::span<const std::uint8_t> span() const noexcept { return {m_buf.get(), m_size}; }

private:
    std::unique_ptr<std::uint8_t[]> m_buf;
    std::size_t m_size;
};

}  // namespace rowprobe::fuzz
