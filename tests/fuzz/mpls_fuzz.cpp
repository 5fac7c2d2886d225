// libFuzzer target for the MPLS label-stack reader: any bytes before an IP header are walked
// without reading past them; a label it returns comes from inside them.
//
//   ./mpls_fuzz -max_len=128 corpus/mpls_fuzz
#include <cstdint>
#include <cstring>
#include <memory>

#include "process/mpls/mpls_label.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto buf = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
    if (size != 0) std::memcpy(buf.get(), data, size);
    (void)rowprobe::mpls::topLabelEntry({buf.get(), size});
    return 0;
}
