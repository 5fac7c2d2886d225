// libFuzzer target for the NTP header parser and its text forms: any payload is parsed without
// reading past it, and every text fits its buffer, NUL-terminated.
//
//   ./ntp_fuzz -max_len=128 corpus/ntp_fuzz
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "process/ntp/ntp_parser.hpp"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::ntp;
    const auto buf = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
    if (size != 0) std::memcpy(buf.get(), data, size);
    NtpHeader h;
    const bool ok = parseNtp({buf.get(), size}, h);
    check(!ok || (size >= kNtpHeaderLen && h.version == 4 && h.stratum <= 16));
    std::array<char, kNtpTextSize> text{};
    for (const std::uint64_t ts : {h.reference, h.origin, h.receive, h.transmit}) {
        for (const NtpTextMode m : {NtpTextMode::Rfc, NtpTextMode::Ipfixprobe}) {
            const std::size_t n = formatNtpTimestamp(ts, m, text);
            check(n < text.size() && std::strlen(text.data()) == n);
        }
    }
    const std::size_t n = formatRefId(h.refId, h.stratum, text);
    check(n < text.size() && std::strlen(text.data()) == n);
    return 0;
}
