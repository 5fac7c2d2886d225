#include "rowprobe/format.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "digit_pairs.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"

namespace rowprobe {

namespace {

constexpr char kHex[] = "0123456789abcdef";

using detail::kDigitPairs;

/// "00" "01" ... "ff": one byte in lower-case hex per lookup.
constexpr std::array<char, 512> kHexPairs = [] {
    std::array<char, 512> t{};
    for (std::size_t i = 0; i < 256; ++i) {
        t[2 * i] = kHex[i >> 4];
        t[2 * i + 1] = kHex[i & 15];
    }
    return t;
}();

char* twoDigits(char* out, unsigned v) noexcept {
    std::memcpy(out, &kDigitPairs[2 * v], 2);
    return out + 2;
}

/// decimalDigits, inlined into formatUint.
inline unsigned digitCount(std::uint64_t v) noexcept {
    static constexpr std::uint64_t kPowers[] = {1ULL,
                                                10ULL,
                                                100ULL,
                                                1000ULL,
                                                10000ULL,
                                                100000ULL,
                                                1000000ULL,
                                                10000000ULL,
                                                100000000ULL,
                                                1000000000ULL,
                                                10000000000ULL,
                                                100000000000ULL,
                                                1000000000000ULL,
                                                10000000000000ULL,
                                                100000000000000ULL,
                                                1000000000000000ULL,
                                                10000000000000000ULL,
                                                100000000000000000ULL,
                                                1000000000000000000ULL,
                                                10000000000000000000ULL};
    // bit_width * log10(2) (1233 / 4096) is the digit count or one more.
    const auto guess = static_cast<unsigned>((std::bit_width(v | 1) * 1233) >> 12);
    return guess + ((v | 1) >= kPowers[guess] ? 1 : 0);
}

/// "0" ... "255" in four bytes each (unused ones zero) and the length in the last: a byte of
/// an IPv4 address is one 4-byte load and store.
constexpr std::array<char, 1024> kByteTexts = [] {
    std::array<char, 1024> t{};
    for (unsigned v = 0; v < 256; ++v) {
        char* e = &t[4 * v];
        if (v >= 100) *e++ = static_cast<char>('0' + v / 100);
        if (v >= 10) *e++ = static_cast<char>('0' + v / 10 % 10);
        *e++ = static_cast<char>('0' + v % 10);
        t[4 * v + 3] = static_cast<char>(e - &t[4 * v]);  // after the 1-3 digits
    }
    return t;
}();

/// One byte in decimal; writes 4 bytes (the ones after the digits are scratch).
char* byteText(char* out, std::uint8_t v) noexcept {
    std::memcpy(out, &kByteTexts[4 * v], 4);
    return out + static_cast<unsigned char>(kByteTexts[4 * v + 3]);
}

/// One byte in decimal, writing exactly its digits.
char* byteTextExact(char* out, std::uint8_t v) noexcept {
    const char* t = &kByteTexts[4 * v];
    const std::size_t n = static_cast<unsigned char>(t[3]);
    out[0] = t[0];
    if (n > 1) out[1] = t[1];
    if (n > 2) out[2] = t[2];
    return out + n;
}

/// The dotted quad of four bytes (at most 15 characters, nothing written after them: the
/// scratch bytes of the first two are covered by the text that follows).
char* formatIpv4(char* out, const std::uint8_t* a) noexcept {
    out = byteText(out, a[0]);
    *out++ = '.';
    out = byteText(out, a[1]);
    *out++ = '.';
    out = byteTextExact(out, a[2]);
    *out++ = '.';
    return byteTextExact(out, a[3]);
}

/// A 16-bit group in lower-case hex without leading zeros ("0" for zero).
char* hexGroup(char* out, unsigned w) noexcept {
    if (w >= 0x1000) *out++ = kHex[w >> 12];
    if (w >= 0x100) *out++ = kHex[(w >> 8) & 0xF];
    if (w >= 0x10) *out++ = kHex[(w >> 4) & 0xF];
    *out++ = kHex[w & 0xF];
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

unsigned decimalDigits(std::uint64_t v) noexcept { return digitCount(v); }

char* formatUint(char* out, std::uint64_t v) noexcept {
    if (v < 10) {
        *out = static_cast<char>('0' + v);
        return out + 1;
    }
    if (v < 100) {  // ports' and packet lengths' digits come in pairs: the common short cases
        std::memcpy(out, &kDigitPairs[2 * v], 2);
        return out + 2;
    }
    if (v < 10000) {
        const auto hi = static_cast<unsigned>(v / 100);
        const auto lo = static_cast<unsigned>(v % 100);
        if (hi >= 10) {
            std::memcpy(out, &kDigitPairs[2 * hi], 2);
            std::memcpy(out + 2, &kDigitPairs[2 * lo], 2);
            return out + 4;
        }
        out[0] = static_cast<char>('0' + hi);
        std::memcpy(out + 1, &kDigitPairs[2 * lo], 2);
        return out + 3;
    }
    char* const end = out + digitCount(v);
    char* p = end;
    while (v >= 100) {
        p -= 2;
        std::memcpy(p, &kDigitPairs[2 * (v % 100)], 2);
        v /= 100;
    }
    if (v >= 10) {
        std::memcpy(p - 2, &kDigitPairs[2 * v], 2);
    } else {
        p[-1] = static_cast<char>('0' + v);
    }
    return end;
}

char* formatIp(char* out, const std::array<std::uint8_t, 16>& addr, bool ipv4) noexcept {
    if (ipv4) return formatIpv4(out, addr.data() + 12);
    // RFC 5952 exactly as glibc's inet_ntop writes it (the project's output before this
    // function was hand-written, and tests/unit/output/format_test.cpp compares the two): the
    // first longest run of two or more zero groups becomes "::", groups in lower-case hex
    // without leading zeros, and ::ffff:a.b.c.d / ::a.b.c.d (zero run of exactly 6 groups from
    // the start) end in a dotted quad.
    std::uint64_t halves[2];
    std::memcpy(halves, addr.data(), 16);
    if ((halves[0] | halves[1]) == 0) {  // "::": the tunnel address of every untunnelled flow
        out[0] = ':';
        out[1] = ':';
        return out + 2;
    }
    unsigned words[8];
    for (std::size_t i = 0; i < 8; ++i) words[i] = unsigned{addr[2 * i]} << 8 | addr[2 * i + 1];
    int bestBase = -1;
    int bestLen = 0;
    for (int i = 0; i < 8;) {
        if (words[i] != 0) {
            ++i;
            continue;
        }
        int j = i;
        while (j < 8 && words[j] == 0) ++j;
        if (j - i > bestLen) {
            bestBase = i;
            bestLen = j - i;
        }
        i = j;
    }
    if (bestLen < 2) bestBase = -1;
    for (int i = 0; i < 8; ++i) {
        if (bestBase >= 0 && i >= bestBase && i < bestBase + bestLen) {
            if (i == bestBase) *out++ = ':';
            continue;
        }
        if (i != 0) *out++ = ':';
        if (i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && words[5] == 0xffff))) {
            return formatIpv4(out, addr.data() + 12);
        }
        out = hexGroup(out, words[i]);
    }
    if (bestBase >= 0 && bestBase + bestLen == 8) *out++ = ':';
    return out;
}

std::string formatIp(const std::array<std::uint8_t, 16>& addr, bool ipv4) {
    char buf[kIpTextMax];
    return {buf, formatIp(buf, addr, ipv4)};
}

char* formatMac(char* out, const std::array<std::uint8_t, 6>& mac) noexcept {
    for (std::size_t i = 0; i < 5; ++i) {
        std::memcpy(out, &kHexPairs[2 * mac[i]], 2);
        out[2] = ':';
        out += 3;
    }
    std::memcpy(out, &kHexPairs[2 * mac[5]], 2);
    return out + 2;
}

std::string formatMac(const std::array<std::uint8_t, 6>& mac) {
    char buf[kMacTextLen];
    return {buf, formatMac(buf, mac)};
}

char* formatTimeIso(char* out, TimeNs t, unsigned decimals) noexcept {
    // "YYYY-MM-DDTHH:MM:SS" of the last second this thread formatted, and its date: a flow's
    // times and the records of one export batch mostly share them, so the calendar arithmetic
    // runs once per day and the clock digits once per second.
    struct Cache {
        std::uint64_t secs = ~std::uint64_t{0};
        std::uint64_t days = ~std::uint64_t{0};
        char text[20] = {};  // 19 used
    };
    thread_local Cache cache;
    const std::uint64_t secs = t / kNsPerSec;
    if (secs != cache.secs) {
        const std::uint64_t days = secs / 86400;
        if (days != cache.days) {
            const CivilDate d = civilFromDays(days);
            char* p = twoDigits(cache.text, d.year / 100);  // TimeNs ends in 2554: four digits
            p = twoDigits(p, d.year % 100);
            *p++ = '-';
            p = twoDigits(p, d.month);
            *p++ = '-';
            p = twoDigits(p, d.day);
            *p = 'T';
            cache.days = days;
        }
        const auto sod = static_cast<unsigned>(secs - days * 86400);
        char* p = twoDigits(cache.text + 11, sod / 3600);
        *p++ = ':';
        p = twoDigits(p, sod / 60 % 60);
        *p++ = ':';
        twoDigits(p, sod % 60);
        cache.secs = secs;
    }
    std::memcpy(out, cache.text, 19);
    out += 19;
    if (decimals > 9) decimals = 9;
    if (decimals > 0) {
        // All nine digits (room for them is part of kTimeIsoMax), then the 'Z' after the
        // ones asked for: truncation, never rounding.
        const auto frac = static_cast<std::uint32_t>(t % kNsPerSec);
        *out = '.';
        out[1] = static_cast<char>('0' + frac / 100000000);
        const std::uint32_t low = frac % 100000000;
        twoDigits(out + 2, low / 1000000);
        twoDigits(out + 4, low / 10000 % 100);
        twoDigits(out + 6, low / 100 % 100);
        twoDigits(out + 8, low % 100);
        out += 1 + decimals;
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
      m_buffer(std::make_unique_for_overwrite<char[]>(bufferBytes)),  // written before read
      m_pos(m_buffer.get()),
      m_end(m_buffer.get() + bufferBytes),
      // a record is rarely below 32 bytes; smaller ones only make the buffer drain early
      m_boundaries(std::make_unique<std::uint32_t[]>(bufferBytes / 32 + 1)),
      m_boundaryCapacity(bufferBytes / 32 + 1) {
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
    // Straight to the descriptor (the stream's own buffer stays empty): a short write says
    // exactly how many bytes reached the file.
    if (std::fflush(m_file) != 0) failed();
    if (const std::size_t done = writeOut(m_buffer.get(), n); done < n) {
        const int err = errno;
        partial(done);
        errno = err;
        failed();
    }
    std::uint64_t records = 0;
    for (std::size_t i = 0; i < m_boundaryCount; ++i) records += m_boundaries[i] >> 31;
    m_records.fetch_add(records, std::memory_order_relaxed);
    m_boundaryCount = 0;
}

void OutputFile::appendRecords(const char* text, std::span<const std::uint32_t> ends) {
    if (ends.empty()) return;
    drain();
    const std::size_t n = ends.back();
    m_drained += n;
    if (const std::size_t done = writeOut(text, n); done < n) {
        const int err = errno;
        std::size_t complete = 0;
        while (complete < ends.size() && ends[complete] <= done) ++complete;
        m_records.fetch_add(complete, std::memory_order_relaxed);
        cutBack(done, complete == 0 ? 0 : ends[complete - 1]);
        errno = err;
        failed();
    }
    m_records.fetch_add(ends.size(), std::memory_order_relaxed);
}

std::size_t OutputFile::writeOut(const char* data, std::size_t n) noexcept {
    const int fd = ::fileno(m_file);
    std::size_t done = 0;
    while (done < n) {
        const ::ssize_t w = ::write(fd, data + done, n - done);
        if (w > 0) {
            done += static_cast<std::size_t>(w);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            if (w == 0) errno = ENOSPC;
            break;
        }
    }
    return done;
}

void OutputFile::partial(std::size_t done) noexcept {
    std::size_t keep = 0;  // bytes of the buffer up to the last boundary that was written
    for (std::size_t i = 0; i < m_boundaryCount; ++i) {
        const std::size_t end = m_boundaries[i] & ~kRecordEnd;
        if (end > done) break;
        keep = end;
        m_records.fetch_add(m_boundaries[i] >> 31, std::memory_order_relaxed);
    }
    m_boundaryCount = 0;
    cutBack(done, keep);
}

void OutputFile::cutBack(std::size_t done, std::size_t keep) noexcept {
    if (done == keep) return;
    const int fd = ::fileno(m_file);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    const ::off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at < 0) return;
    const ::off_t cut = at - static_cast<::off_t>(done - keep);
    if (cut >= 0 && ::ftruncate(fd, cut) == 0) ::lseek(fd, cut, SEEK_SET);
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
