#include "process/netbios/netbios_parser.hpp"

namespace rowprobe::netbios {

namespace {

constexpr std::size_t kHeaderLen = 12;
constexpr std::size_t kEncodedLen = 32;

std::uint8_t decodePair(std::uint8_t hi, std::uint8_t lo) noexcept {
    // ipfixprobe's arithmetic, bytes outside 'A'..'P' included (wraps like its char maths).
    return static_cast<std::uint8_t>(((hi - 'A') << 4) | ((lo - 'A') & 0xFF));
}

}  // namespace

bool parseNbnsName(std::span<const std::uint8_t> p, NbnsName& out) noexcept {
    if (p.size() < kHeaderLen) return false;
    const unsigned questions = static_cast<unsigned>(p[4] << 8 | p[5]);
    if (questions < 1) return false;
    if (p.size() < kHeaderLen + 1 + kEncodedLen || p[kHeaderLen] != kEncodedLen) return false;
    const std::uint8_t* e = p.data() + kHeaderLen + 1;
    out = NbnsName{};
    bool ended = false;
    for (std::size_t i = 0; i < 15; ++i) {
        const std::uint8_t c = decodePair(e[2 * i], e[2 * i + 1]);
        out.name[i] = static_cast<char>(c);
        if (c == 0) ended = true;
        if (!ended) ++out.nameLen;
    }
    out.suffix = decodePair(e[30], e[31]);
    return true;
}

}  // namespace rowprobe::netbios
