// libFuzzer target for the capture file reader (input/pcap/pcap_stream.hpp): classic pcap,
// pcapng and gzip'd input of any content, read as the core reads it (budgets, chunk changes,
// records parsed in place), once through the memory map and once with read(); every byte of
// every packet delivered is touched, so a read out of bounds (also past the end of the mapping)
// shows under ASan. Seeds: any pcap, pcapng or .gz file, e.g. ../shared/testdata.
//   ./pcap_stream_fuzz -max_len=200000 -max_total_time=60 CORPUS_DIR
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "input/pcap/pcap_stream.hpp"

namespace {

void readAll(int fd, rowprobe::input::MapMode mode) {
    ::lseek(fd, 0, SEEK_SET);
    rowprobe::input::PcapStream stream(std::make_unique<rowprobe::input::ByteSource>(fd, "fuzz"),
                                       -1, mode);
    if (!stream.valid()) return;
    volatile std::uint8_t sink = 0;
    for (int reads = 0; reads < 1000; ++reads) {
        stream.beginRead();
        for (int i = 0; i < 64; ++i) {
            rowprobe::RawPacket p;
            const auto r = stream.next(p, 65535, -1);
            if (r == rowprobe::input::PcapStream::Result::Budget) break;
            if (r != rowprobe::input::PcapStream::Result::Packet) return;
            for (std::uint32_t b = 0; b < p.capLen; b += 64) sink = sink ^ p.data[b];
            if (p.capLen > 0) sink = sink ^ p.data[p.capLen - 1];
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int fd = ::memfd_create("pcap", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) {
        ::close(fd);
        return 0;
    }
    // The stream owns and closes its descriptor: each way of reading gets its own.
    readAll(::dup(fd), rowprobe::input::MapMode::On);
    readAll(fd, rowprobe::input::MapMode::Off);
    return 0;
}
