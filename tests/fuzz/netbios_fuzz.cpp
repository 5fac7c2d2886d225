// libFuzzer target for the NBNS name decoder (process/netbios).
//
//   ./netbios_fuzz -max_len=128 corpus/netbios_fuzz
#include <cstring>

#include "fuzz_buffer.hpp"
#include "process/netbios/netbios_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const rowprobe::fuzz::ExactBuffer in(data, size);
    rowprobe::netbios::NbnsName n;
    if (rowprobe::netbios::parseNbnsName(in.span(), n)) {
        rowprobe::fuzz::check(size >= 45 && n.nameLen <= 15);
        rowprobe::fuzz::check(std::memchr(n.name, 0, n.nameLen) == nullptr);
    }
    return 0;
}
