#include "process/ntp/ntp_parser.hpp"

#include <array>
#include <cstring>

namespace rowprobe::ntp {

namespace {

std::uint32_t be32(std::span<const std::uint8_t> p, std::size_t at) noexcept {
    return static_cast<std::uint32_t>(p[at]) << 24 | static_cast<std::uint32_t>(p[at + 1]) << 16 |
           static_cast<std::uint32_t>(p[at + 2]) << 8 | p[at + 3];
}

std::uint64_t be64(std::span<const std::uint8_t> p, std::size_t at) noexcept {
    return std::uint64_t{be32(p, at)} << 32 | be32(p, at + 4);
}

// ipfixprobe's reading of 4 bytes: each printed "%x" (no leading zero), concatenated, read back
// as hex. A 32-bit value: 8 hex digits at most, as 4 bytes print at most 8.
std::uint32_t ipfixprobeHexRead(std::uint32_t v) noexcept {
    std::uint32_t out = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        const std::uint32_t b = (v >> shift) & 0xFF;
        out = b >= 0x10 ? (out << 8 | b) : (out << 4 | b);
    }
    return out;
}

// Decimal digits of v into out (no NUL); returns the count.
std::size_t putDecimal(std::uint64_t v, char* out) noexcept {
    std::array<char, 20> tmp{};
    std::size_t n = 0;
    do {
        tmp[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (std::size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
    return n;
}

// fraction / 2^32 rounded to 6 decimals the way printf("%f") rounds the exact binary value:
// to nearest, ties to even. 1000000 when it rounds up to one second.
std::uint32_t microsOf(std::uint32_t fraction) noexcept {
    const std::uint64_t scaled = std::uint64_t{fraction} * 1000000U;
    std::uint64_t micros = scaled >> 32;
    const std::uint64_t rest = scaled & 0xFFFFFFFFU;
    if (rest > 0x80000000U || (rest == 0x80000000U && (micros & 1U) != 0)) ++micros;
    return static_cast<std::uint32_t>(micros);
}

}  // namespace

bool parseNtp(std::span<const std::uint8_t> payload, NtpHeader& out) noexcept {
    if (payload.size() < kNtpHeaderLen) return false;
    out.leap = static_cast<std::uint8_t>(payload[0] >> 6);
    out.version = static_cast<std::uint8_t>((payload[0] >> 3) & 0x07);
    out.mode = static_cast<std::uint8_t>(payload[0] & 0x07);
    out.stratum = payload[1];
    out.poll = payload[2];
    out.precision = payload[3];
    if (out.version != 4 || out.mode < 3 || out.mode > 4 || out.stratum > 16 || out.poll > 17)
        return false;
    out.rootDelay = be32(payload, 4);
    out.rootDispersion = be32(payload, 8);
    out.refId = be32(payload, 12);
    out.reference = be64(payload, 16);
    out.origin = be64(payload, 24);
    out.receive = be64(payload, 32);
    out.transmit = be64(payload, 40);
    return true;
}

std::size_t formatRefId(std::uint32_t refId, std::uint8_t stratum,
                        std::span<char, kNtpTextSize> out) noexcept {
    if (stratum == 0) {
        for (const char* kiss : {"INIT", "STEP", "DENY", "RATE"}) {
            std::uint32_t code = 0;
            for (std::size_t i = 0; i < 4; ++i)
                code = code << 8 | static_cast<unsigned char>(kiss[i]);
            if (code == refId) {
                std::memcpy(out.data(), kiss, 5);
                return 4;
            }
        }
    }
    std::size_t n = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        if (n != 0) out[n++] = '.';
        n += putDecimal((refId >> shift) & 0xFF, out.data() + n);
    }
    out[n] = '\0';
    return n;
}

std::size_t formatNtpTimestamp(std::uint64_t ts, NtpTextMode mode,
                               std::span<char, kNtpTextSize> out) noexcept {
    std::uint64_t seconds = ts >> 32;
    std::uint32_t fraction = static_cast<std::uint32_t>(ts);
    if (mode == NtpTextMode::Ipfixprobe) {
        seconds = ipfixprobeHexRead(static_cast<std::uint32_t>(seconds));
        fraction = ipfixprobeHexRead(fraction);
    }
    std::uint32_t micros = microsOf(fraction);
    if (micros == 1000000U) {
        micros = 0;
        if (mode == NtpTextMode::Rfc) ++seconds;  // ipfixprobe prints ".000000" and no carry
    }
    std::size_t n = putDecimal(seconds, out.data());
    out[n++] = '.';
    for (std::uint32_t div = 100000; div != 0; div /= 10)
        out[n++] = static_cast<char>('0' + micros / div % 10);
    out[n] = '\0';
    return n;
}

}  // namespace rowprobe::ntp
