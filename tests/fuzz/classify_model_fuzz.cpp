// libFuzzer target for the classify model loader (process/classify/classify_model.cpp): any
// bytes as a model file, as given and with the trailing CRC-32 rewritten to match (so that
// inputs get past the checksum into the structural and numeric checks). A model that loads
// must classify any features to a class it has (or unknown) with a score that is a number in
// [0, 1].
//
//   ./classify_model_fuzz -max_len=8192 corpus/classify_model_fuzz
#include <cmath>
#include <vector>

#include "fuzz_buffer.hpp"
#include "process/classify/classify_model.hpp"

namespace {

void tryModel(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> raw) {
    using namespace rowprobe::classify;
    Model m;
    std::string error;
    if (!decodeModel(bytes, m, error)) {
        rowprobe::fuzz::check(!error.empty());
        return;
    }
    // features from the input itself, the extremes included
    for (std::size_t off = 0; off < 4; ++off) {
        Features f;
        for (std::size_t i = 0; i < m.packets(); ++i) {
            const std::size_t at = (off * 8 + i * 2) % raw.size();
            const std::uint32_t len = (raw[at] | (raw[(at + 1) % raw.size()] << 8U)) *
                                      (off == 3 ? 3U : 1U);  // some above 65535
            addPacket(f, m.packets(), len, (raw[at] & 1U) != 0);
        }
        const Prediction p = m.predict(f);
        rowprobe::fuzz::check(p.cls <= m.classes().size());
        rowprobe::fuzz::check(std::isfinite(p.score) && p.score >= 0.0F && p.score <= 1.0F);
        const std::uint16_t c = m.predictClass(f);
        rowprobe::fuzz::check(c < m.classes().size());
        rowprobe::fuzz::check(!m.label(p.cls).empty());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const rowprobe::fuzz::ExactBuffer in(data, size);
    if (size == 0) return 0;
    tryModel(in.span(), in.span());
    if (size > 16) {
        std::vector<std::uint8_t> sealed(data, data + size);
        const std::uint32_t c =
            rowprobe::classify::crc32(std::span(sealed).first(sealed.size() - 4));
        for (int i = 0; i < 4; ++i)
            sealed[sealed.size() - 4 + i] = static_cast<std::uint8_t>(c >> (8 * i));
        const rowprobe::fuzz::ExactBuffer sealedIn(sealed.data(), sealed.size());
        tryModel(sealedIn.span(), in.span());
    }
    return 0;
}
