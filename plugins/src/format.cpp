#include "rowprobe/format.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"

namespace rowprobe {

namespace {

constexpr char kHex[] = "0123456789abcdef";

/// "00" "01" ... "99": two digits per table lookup.
constexpr std::array<char, 200> kDigitPairs = [] {
    std::array<char, 200> t{};
    for (std::size_t i = 0; i < 100; ++i) {
        t[2 * i] = static_cast<char>('0' + i / 10);
        t[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
    return t;
}();

char* twoDigits(char* out, unsigned v) noexcept {
    std::memcpy(out, &kDigitPairs[2 * v], 2);
    return out + 2;
}

/// Writes `v` (< 1000) without leading zeros.
char* smallUint(char* out, unsigned v) noexcept {
    if (v >= 100) {
        *out++ = static_cast<char>('0' + v / 100);
        return twoDigits(out, v % 100);
    }
    if (v >= 10) return twoDigits(out, v);
    *out++ = static_cast<char>('0' + v);
    return out;
}

struct CivilDate {
    unsigned year;
    unsigned month;
    unsigned day;
};

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days, for
/// non-negative day counts).
CivilDate civilFromDays(std::uint64_t days) noexcept {
    const std::uint64_t z = days + 719468;
    const std::uint64_t era = z / 146097;
    const std::uint64_t doe = z - era * 146097;
    const std::uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::uint64_t mp = (5 * doy + 2) / 153;
    const std::uint64_t day = doy - (153 * mp + 2) / 5 + 1;
    const std::uint64_t month = mp < 10 ? mp + 3 : mp - 9;
    const std::uint64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    return {static_cast<unsigned>(year), static_cast<unsigned>(month), static_cast<unsigned>(day)};
}

}  // namespace

char* formatUint(char* out, std::uint64_t v) noexcept {
    char tmp[kUintTextMax];
    char* p = tmp + kUintTextMax;
    while (v >= 100) {
        p -= 2;
        std::memcpy(p, &kDigitPairs[2 * (v % 100)], 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        std::memcpy(p, &kDigitPairs[2 * v], 2);
    } else {
        *--p = static_cast<char>('0' + v);
    }
    const auto n = static_cast<std::size_t>(tmp + kUintTextMax - p);
    std::memcpy(out, p, n);
    return out + n;
}

char* formatIp(char* out, const std::array<std::uint8_t, 16>& addr, bool ipv4) noexcept {
    if (ipv4) {
        for (std::size_t i = 12; i < 16; ++i) {
            out = smallUint(out, addr[i]);
            if (i != 15) *out++ = '.';
        }
        return out;
    }
    char text[INET6_ADDRSTRLEN];
    if (inet_ntop(AF_INET6, addr.data(), text, sizeof text) == nullptr) return out;
    return std::copy_n(text, std::strlen(text), out);  // without inet_ntop's terminator
}

std::string formatIp(const std::array<std::uint8_t, 16>& addr, bool ipv4) {
    char buf[kIpTextMax];
    return {buf, formatIp(buf, addr, ipv4)};
}

char* formatMac(char* out, const std::array<std::uint8_t, 6>& mac) noexcept {
    for (std::size_t i = 0; i < 6; ++i) {
        if (i != 0) *out++ = ':';
        *out++ = kHex[mac[i] >> 4];
        *out++ = kHex[mac[i] & 0xF];
    }
    return out;
}

std::string formatMac(const std::array<std::uint8_t, 6>& mac) {
    char buf[kMacTextLen];
    return {buf, formatMac(buf, mac)};
}

char* formatTimeIso(char* out, TimeNs t, unsigned decimals) noexcept {
    const std::uint64_t secs = t / kNsPerSec;
    auto frac = static_cast<std::uint32_t>(t % kNsPerSec);
    const std::uint64_t days = secs / 86400;
    auto sod = static_cast<unsigned>(secs % 86400);
    const CivilDate d = civilFromDays(days);
    out = twoDigits(out, d.year / 100);  // TimeNs ends in 2554: always four digits
    out = twoDigits(out, d.year % 100);
    *out++ = '-';
    out = twoDigits(out, d.month);
    *out++ = '-';
    out = twoDigits(out, d.day);
    *out++ = 'T';
    out = twoDigits(out, sod / 3600);
    *out++ = ':';
    out = twoDigits(out, sod / 60 % 60);
    *out++ = ':';
    out = twoDigits(out, sod % 60);
    if (decimals > 9) decimals = 9;
    if (decimals > 0) {
        *out++ = '.';
        char digits[9];
        for (int i = 8; i >= 0; --i) {
            digits[i] = static_cast<char>('0' + frac % 10);
            frac /= 10;
        }
        std::memcpy(out, digits, decimals);
        out += decimals;
    }
    *out++ = 'Z';
    return out;
}

std::string formatTimeIso(TimeNs t, unsigned decimals) {
    char buf[kTimeIsoMax];
    return {buf, formatTimeIso(buf, t, decimals)};
}

char* formatTcpFlags(char* out, std::uint8_t flags) noexcept {
    constexpr char kLetters[] = "CEUAPRSF";
    for (unsigned i = 0; i < 8; ++i) {
        out[i] = ((flags >> (7 - i)) & 1U) != 0 ? kLetters[i] : '.';
    }
    return out + 8;
}

std::string formatTcpFlags(std::uint8_t flags) {
    char buf[kTcpFlagsTextLen];
    return {buf, formatTcpFlags(buf, flags)};
}

std::string_view protoName(std::uint8_t proto) noexcept {
    switch (proto) {
        case 1:
            return "icmp";
        case 2:
            return "igmp";
        case 6:
            return "tcp";
        case 17:
            return "udp";
        case 47:
            return "gre";
        case 50:
            return "esp";
        case 51:
            return "ah";
        case 58:
            return "icmp6";
        case 89:
            return "ospf";
        case 132:
            return "sctp";
        default:
            return {};
    }
}

OutputFile::OutputFile(const Options& options, std::string_view option, std::size_t bufferBytes)
    : m_component(options.component()),
      m_path(options.getString(option)),
      m_buffer(std::make_unique<char[]>(bufferBytes)),
      m_pos(m_buffer.get()),
      m_end(m_buffer.get() + bufferBytes) {
    if (m_path.empty() || m_path == "-") {
        m_file = stdout;
        if (m_path.empty()) m_path.push_back('-');  // (not `= "-"`: GCC 12 -Wrestrict false alarm)
        return;
    }
    m_file = std::fopen(m_path.c_str(), "w");
    if (m_file == nullptr) {
        options.fail(option, "cannot open '" + m_path + "' for writing: " + std::strerror(errno));
    }
    m_owned = true;
}

OutputFile::~OutputFile() {
    if (m_file == nullptr) return;
    try {
        flush();
    } catch (const RuntimeError&) {  // already reported by an explicit flush(), or unreportable
    }
    if (m_owned) std::fclose(m_file);
}

void OutputFile::append(std::string_view text) {
    while (!text.empty()) {
        if (m_pos == m_end) drain();
        const std::size_t n = std::min(text.size(), static_cast<std::size_t>(m_end - m_pos));
        std::memcpy(m_pos, text.data(), n);
        m_pos += n;
        text.remove_prefix(n);
    }
}

void OutputFile::drain() {
    const auto n = static_cast<std::size_t>(m_pos - m_buffer.get());
    if (n == 0) return;
    m_pos = m_buffer.get();  // drop the data even on failure, so a broken file cannot wedge us
    m_drained += n;
    if (std::fwrite(m_buffer.get(), 1, n, m_file) != n) failed();
}

void OutputFile::failed() const {
    // `rowprobe ... | head`: the reader of standard output is gone. End the way every filter
    // does, by the SIGPIPE the process ignores for its sockets, not with an error message.
    if (errno == EPIPE && m_file == stdout) {
        std::signal(SIGPIPE, SIG_DFL);
        std::raise(SIGPIPE);
    }
    throw RuntimeError(m_component, "writing to '" + m_path + "': " + std::strerror(errno));
}

bool isSameFile(int fd, const std::string& path) noexcept {
    struct stat opened {};
    struct stat named {};
    if (::fstat(fd, &opened) != 0 || ::stat(path.c_str(), &named) != 0) return false;
    return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

bool isSameFile(std::FILE* file, const std::string& path) noexcept {
    return isSameFile(::fileno(file), path);
}

bool OutputFile::reopen() {
    flush();
    if (!m_owned || isSameFile(m_file, m_path)) return false;
    std::FILE* fresh = std::fopen(m_path.c_str(), "a");
    if (fresh == nullptr) {
        throw RuntimeError(m_component, "cannot reopen '" + m_path +
                                            "' after SIGHUP: " + std::strerror(errno) +
                                            " (still writing to the old file)");
    }
    std::fclose(m_file);
    m_file = fresh;
    struct stat st {};
    return ::fstat(::fileno(m_file), &st) == 0 && st.st_size == 0;
}

void OutputFile::flush() {
    drain();
    if (std::fflush(m_file) != 0) failed();
}

}  // namespace rowprobe
