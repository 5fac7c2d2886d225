// Zero-copy reader for classic pcap files: the file is memory-mapped and every RawPacket points
// straight into the mapping, so an offline run costs no read() system calls and no copy per
// packet (libpcap's path copies each frame twice: file -> libpcap buffer -> block arena).
//
//   [24-byte global header][16-byte record header][frame][16-byte record header][frame] ...
//
// * Used for regular files in the classic format (either byte order, micro- or nanosecond
//   magic) without a BPF filter; pcapng, pipes and filtered reads go through libpcap.
// * The mapping lives as long as the reader (the input plugin), which outlives every block the
//   worker holds: the core destroys inputs only after their workers finished.
// * Malformed files never read out of bounds: a record header or frame that runs past the end
//   of the file, or a captured length above 262144 bytes (libpcap's limit), ends the stream
//   with an error after the packets before it were delivered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rowprobe/packet.hpp"

namespace rowprobe::input {

class MappedPcap {
public:
    /// Maps `path` if it is a regular, non-empty classic pcap file; otherwise `valid()` is false
    /// and the caller falls back to libpcap.
    explicit MappedPcap(const std::string& path);
    ~MappedPcap();
    MappedPcap(const MappedPcap&) = delete;
    MappedPcap& operator=(const MappedPcap&) = delete;

    bool valid() const noexcept { return m_base != nullptr; }

    enum class Result : std::uint8_t { Packet, End, Error };
    /// The next record; `error()` explains Result::Error.
    Result next(RawPacket& out, std::uint32_t snaplen) noexcept;
    const std::string& error() const noexcept { return m_error; }

private:
    std::uint32_t load32(std::size_t at) const noexcept;

    const std::uint8_t* m_base = nullptr;
    std::size_t m_size = 0;
    std::size_t m_pos = 24;
    bool m_swapped = false;
    bool m_nano = false;
    std::string m_error;
};

}  // namespace rowprobe::input
