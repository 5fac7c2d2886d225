// libFuzzer target for the TLS hello parser and its fingerprints. The input is copied into a
// buffer of exactly its length so ASan sees every overread; besides memory errors it aborts when
// a parsed hello describes bytes outside the payload or a fingerprint has the wrong shape.
//
//   ./tls_fuzz -max_len=2048 corpus/tls_fuzz
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "process/common/tls/tls_parser.hpp"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

bool inside(std::span<const std::uint8_t> all, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    return n == 0 || (b >= all.data() && b + n <= all.data() + all.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto buf = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
    if (size != 0) std::memcpy(buf.get(), data, size);
    const std::span<const std::uint8_t> payload(buf.get(), size);

    for (const bool record : {true, false}) {
        rowprobe::tls::Hello h;
        const bool ok = record ? rowprobe::tls::parseHello(payload, h)
                               : rowprobe::tls::parseHandshake(payload, h);
        if (!ok) {
            check(h.type == rowprobe::tls::HelloType::None);
            continue;
        }
        check(h.type != rowprobe::tls::HelloType::None);
        check(inside(payload, h.extensions.data(), h.extensions.size()));
        check(inside(payload, h.ciphers.data(), h.ciphers.size()));
        check(inside(payload, h.sni.data(), h.sni.size()));
        check(inside(payload, h.alpn.data(), h.alpn.size()));
        check(h.greaseExtensionCount <= h.extensionCount);
        std::size_t walked = 0;
        rowprobe::tls::forEachExtension(h.extensions, [&](std::uint16_t, auto ext) {
            check(inside(payload, ext.data(), ext.size()));
            ++walked;
        });
        check(walked == h.extensionCount);
        (void)rowprobe::tls::ja3(h);
        (void)rowprobe::tls::ja3s(h);
        char text[256];
        (void)rowprobe::tls::ja3String(h, text);
        for (const auto mode : {rowprobe::tls::Ja4Mode::Spec, rowprobe::tls::Ja4Mode::Ipfixprobe}) {
            std::array<char, rowprobe::tls::kJa4Len> ja4{};
            const std::size_t n = rowprobe::tls::ja4(h, !record, mode, ja4);
            check(n == 0 || (n >= 34 && n <= rowprobe::tls::kJa4Len));
            if (n != 0 && mode == rowprobe::tls::Ja4Mode::Spec) check(n == rowprobe::tls::kJa4Len);
            if (n != 0) check(ja4[n - 13] == '_');
        }
    }
    return 0;
}
