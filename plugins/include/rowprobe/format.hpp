// Text formatting of flow-record fields for the output plugins (text, json, and any third-party
// output), plus a buffered file sink they write through.
//
// * Every `formatX(char* out, ...)` writes at most `kXMax` characters at `out`, no terminating
//   NUL, and returns the end pointer (the std::to_chars style), so an output assembles a whole
//   line in one buffer without allocating. The `std::string` overloads are conveniences for
//   tests and start-up code; they allocate.
// * All helpers are pure, thread-safe and never throw, except OutputFile, which does I/O.
// * Times are UTC, in ISO 8601 with a trailing 'Z'; fractions are truncated, never rounded, so a
//   formatted time never moves into the next second.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "rowprobe/packet.hpp"

namespace rowprobe {

class Options;

/// Longest text of formatIp: an IPv6 address without embedded IPv4 (inet_ntop never produces
/// more than 39 characters for such, 45 for the embedded forms).
inline constexpr std::size_t kIpTextMax = 45;
/// Length of formatMac's text: "aa:bb:cc:dd:ee:ff".
inline constexpr std::size_t kMacTextLen = 17;
/// Longest text of formatTimeIso: "2023-11-14T22:13:20.001289368Z" (9 decimals).
inline constexpr std::size_t kTimeIsoMax = 30;
/// Length of formatTcpFlags's text: "CEUAPRSF" with '.' for each unset flag.
inline constexpr std::size_t kTcpFlagsTextLen = 8;
/// Longest text of formatUint (UINT64_MAX).
inline constexpr std::size_t kUintTextMax = 20;
/// Longest text of formatFloatShortest: a sign, nine digits, a point and a four-character
/// exponent ("-1.00933085e-36"); the fixed form is chosen only when it is not longer.
inline constexpr std::size_t kFloatTextMax = 15;

/// Writes an address of a FlowRecord / FlowKey. `ipv4` true: the dotted quad of the last four
/// bytes of the IPv4-mapped address ("192.0.2.1", never "::ffff:192.0.2.1"). `ipv4` false: the
/// RFC 5952 compressed IPv6 form, byte for byte what glibc's inet_ntop writes ("2001:db8::1",
/// "::ffff:192.0.2.1" for a mapped address printed as IPv6). At most kIpTextMax characters.
/// Hand-formatted, no libc call: ~10 ns for IPv4, ~25 ns for IPv6.
char* formatIp(char* out, const std::array<std::uint8_t, 16>& addr, bool ipv4) noexcept;
/// Convenience form of formatIp (allocates).
std::string formatIp(const std::array<std::uint8_t, 16>& addr, bool ipv4);

/// Writes a MAC address as six lower-case hex pairs separated by ':' (kMacTextLen characters).
char* formatMac(char* out, const std::array<std::uint8_t, 6>& mac) noexcept;
/// Convenience form of formatMac (allocates).
std::string formatMac(const std::array<std::uint8_t, 6>& mac);

/// Writes `t` (ns since the Unix epoch) as UTC ISO 8601 with `decimals` fraction digits (0..9,
/// larger values are clamped to 9; 0 writes no '.') and a trailing 'Z', e.g. with 9 decimals
/// "2023-11-14T22:13:20.001289368Z". The fraction is truncated. Valid for every TimeNs value
/// (the 64-bit nanosecond clock ends in 2554). Writes up to kTimeIsoMax characters at `out`
/// whatever `decimals` is (the digits after the returned end are scratch).
/// Cost: a few ns: each thread keeps the date and clock text of the last second it formatted,
/// so the calendar arithmetic runs once per day and second, not once per value.
char* formatTimeIso(char* out, TimeNs t, unsigned decimals = 9) noexcept;
/// Convenience form of formatTimeIso (allocates).
std::string formatTimeIso(TimeNs t, unsigned decimals = 9);

/// Writes the eight TCP flag bits in nfdump's style, most significant bit first, a letter for
/// each set flag and '.' for each unset one: C(WR) E(CE) U(RG) A(CK) P(SH) R(ST) S(YN) F(IN).
/// SYN+ACK is "...A..S.", FIN+ACK "...A...F", no flags "........". kTcpFlagsTextLen characters.
char* formatTcpFlags(char* out, std::uint8_t flags) noexcept;
/// Convenience form of formatTcpFlags (allocates).
std::string formatTcpFlags(std::uint8_t flags);

/// Writes `v` in decimal (at most kUintTextMax characters). Cost: a few ns.
char* formatUint(char* out, std::uint64_t v) noexcept;
/// The number of characters formatUint writes for `v` (1..20).
unsigned decimalDigits(std::uint64_t v) noexcept;

/// Writes `v` as the shortest decimal text that reads back as the same float: exactly the
/// bytes std::to_chars(out, out + kFloatTextMax, v) writes (no format, no precision), for every
/// bit pattern (tools/check_float_text compares all 2^32). The digits are the fewest that read
/// back as `v`, the nearest to `v` among as short ones (a tie to the even one); the form is the
/// shorter of fixed and scientific, fixed when not longer: "0", "-0", "123.45679",
/// "0.00012345", "123456792" (a whole number is the float's exact value), "1e-05", "1.5e-07",
/// "4.5e+09", "3.4028235e+38", "1e-45"; "nan", "-nan", "inf", "-inf" (the JSON writers write
/// null for those instead). Writes at most kFloatTextMax bytes at `out`, those after the
/// returned end being scratch. Any thread; no allocation, exception, locale or libc call.
/// Cost: ~11 ns for a mean or a deviation, against ~25 ns for std::to_chars.
char* formatFloatShortest(char* out, float v) noexcept;

/// `v` as a JSON number: what formatFloatShortest writes, except NaN and the infinities, which
/// are not JSON numbers and become null. Whole values from 0 to 99999 (sizes, a mean or a
/// deviation of equal values, 0: most of flowstats' floats) are written as integers, the same
/// text at less cost (the fixed form is never longer below 10^5, and every such integer is
/// exact in a float); -0 keeps its sign. Inline, so that the JSON writers (plugin_data.cpp's
/// value writer, JsonPluginColumns) share it without a call. At most kFloatTextMax bytes.
inline char* formatFloatJson(char* out, float v) noexcept {
    if (v >= 0.0F && v < 100000.0F && !std::signbit(v)) {
        const auto whole = static_cast<std::uint32_t>(v);  // in range: defined
        if (static_cast<float>(whole) == v) {
            if (whole >= 10) return formatUint(out, whole);
            *out = static_cast<char>('0' + whole);  // 0, the commonest: no call
            return out + 1;
        }
    }
    if (v != v || v - v != 0) {  // NaN, infinities
        std::memcpy(out, "null", 4);
        return out + 4;
    }
    return formatFloatShortest(out, v);
}

/// Appends `text` (a JSON key, a separator: mostly under 33 bytes) and returns the end. Writes
/// exactly text.size() bytes, with two overlapping fixed-size moves instead of a memcpy call
/// of variable length: the outputs copy several such constants per record.
inline char* putShort(char* out, std::string_view text) noexcept {
    const char* s = text.data();
    const std::size_t n = text.size();
    if (n >= 16 && n <= 32) {
        std::memcpy(out, s, 16);
        std::memcpy(out + n - 16, s + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        std::memcpy(out, s, 8);
        std::memcpy(out + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        std::memcpy(out, s, 4);
        std::memcpy(out + n - 4, s + n - 4, 4);
    } else if (n != 0) {
        std::memcpy(out, s, n);
    }
    return out + n;
}

/// Writes `n` spaces (text alignment padding) and returns the end; like putShort, fixed-size
/// moves up to 64.
inline char* putSpaces(char* out, std::size_t n) noexcept {
    static constexpr char kSpaces[32] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ',
                                         ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ',
                                         ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    if (n <= 32) return putShort(out, std::string_view(kSpaces, n));
    if (n <= 64) {
        std::memcpy(out, kSpaces, 32);
        std::memcpy(out + n - 32, kSpaces, 32);
        return out + n;
    }
    std::memset(out, ' ', n);
    return out + n;
}

/// Short lower-case name of an IP protocol number for human-readable output: "tcp", "udp",
/// "icmp", "icmp6", "sctp", "gre", "esp", "ah", "igmp", "ospf"; empty for other numbers.
std::string_view protoName(std::uint8_t proto) noexcept;

/// A buffered text sink for output plugins: a path or "-" for stdout, a large private buffer
/// (default 1 MiB), written with write(2) when it fills. Used by the export thread only.
///
///     char* p = file.reserve(kMaxLine);   // room for one line
///     p = formatUint(p, 42);
///     file.commit(p);
///     file.endRecord();                   // the record's bytes end here
///
/// Records are counted as written only once all their bytes reached the file (records()), not
/// when they enter the buffer: the buffer keeps the offsets where records end (one 32-bit word
/// per record, a fixed array written out early when full). A write that fails part-way (ENOSPC,
/// EFBIG) counts the records it completed, and a regular file is cut back to the end of the last
/// complete record (or header), so the file holds only whole records and records() says how many.
/// True when `path` names the same file as the open `file` (same device and inode); false
/// when the path is gone or now names another file (log rotation moved ours away).
bool isSameFile(std::FILE* file, const std::string& path) noexcept;
/// The same for an open file descriptor.
bool isSameFile(int fd, const std::string& path) noexcept;

class OutputFile {
public:
    /// Opens the path in option `option` of `options` ("-" = stdout) for writing, truncating it.
    /// Throws ConfigError naming the option and the system's reason when it cannot be opened.
    OutputFile(const Options& options, std::string_view option,
               std::size_t bufferBytes = std::size_t{1} << 20);
    /// Flushes (errors are ignored here: call flush() first to see them) and closes the file
    /// unless it is stdout.
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    /// Makes room for `n` bytes (n <= the buffer size), writing the buffer out if needed, and
    /// returns where to write them. Throws RuntimeError on an I/O failure.
    char* reserve(std::size_t n) {
        if (static_cast<std::size_t>(m_end - m_pos) < n) drain();
        return m_pos;
    }
    /// Marks the bytes up to `end` (inside the reserved room) as written.
    void commit(char* end) noexcept { m_pos = end; }
    /// The bytes committed so far end a record (counted by records() once written out).
    void endRecord() { mark(kRecordEnd); }
    /// The bytes committed so far end a header or other non-record text: a failed write may
    /// cut the file back to here.
    void endText() { mark(0); }
    /// Records whose every byte was handed to the file (write(2) accepted them).
    /// Any thread may read it.
    std::uint64_t records() const noexcept { return m_records.load(std::memory_order_relaxed); }
    /// Appends `text` (any length). Throws RuntimeError on an I/O failure.
    void append(std::string_view text);
    /// Hands over whole records formatted elsewhere (another thread's buffer): record i of
    /// `text` ends `ends[i]` bytes from its start, ascending. What is buffered is written
    /// first, then the text straight from the caller's memory (no copy). Throws RuntimeError
    /// on an I/O failure, after counting the records that were written and cutting a regular
    /// file back to the last of them, as a failed buffer write does.
    void appendRecords(const char* text, std::span<const std::uint32_t> ends);
    /// Writes the buffer out and fflushes the file. Throws RuntimeError (naming the plugin, the
    /// path and errno's text) on an I/O failure.
    void flush();
    /// Bytes handed to the file so far, including those still buffered.
    std::uint64_t bytes() const noexcept {
        return m_drained + static_cast<std::uint64_t>(m_pos - m_buffer.get());
    }
    const std::string& path() const noexcept { return m_path; }
    /// Log rotation: flushes, and when the path no longer names the open file (renamed or
    /// removed) closes it and opens the path again for appending. Returns true when it opened
    /// a new, empty file (a header may be written). Stdout and an unmoved file: only a flush.
    /// Throws RuntimeError when the path cannot be opened; the old file then stays in use.
    bool reopen();

private:
    static constexpr std::uint32_t kRecordEnd = 0x80000000U;  ///< flag bit of a boundary

    void mark(std::uint32_t flag) {
        if (m_boundaryCount == m_boundaryCapacity) drain();
        m_boundaries[m_boundaryCount++] = static_cast<std::uint32_t>(m_pos - m_buffer.get()) | flag;
    }
    void drain();  ///< writes the buffer out (no fflush)
    /// Writes `n` bytes to the descriptor, retrying short writes; returns the bytes written,
    /// fewer than n after a failure (errno then says why).
    std::size_t writeOut(const char* data, std::size_t n) noexcept;
    /// After a write that stopped after `done` of the buffer's bytes: counts the records it
    /// completed and cuts a regular file back to the last boundary it completed.
    void partial(std::size_t done) noexcept;
    /// Cuts a regular file back by `done - keep` bytes: a write stopped after `done` bytes of
    /// which the last complete record or header ended at `keep`.
    void cutBack(std::size_t done, std::size_t keep) noexcept;
    [[noreturn]] void failed() const;  ///< reports the failed write (errno) and throws

    std::string m_component;
    std::string m_path;
    std::FILE* m_file = nullptr;
    bool m_owned = false;  ///< false for stdout
    std::unique_ptr<char[]> m_buffer;
    char* m_pos = nullptr;
    char* m_end = nullptr;
    std::uint64_t m_drained = 0;
    /// Offsets in the buffer where records (flag kRecordEnd) or headers end, ascending.
    std::unique_ptr<std::uint32_t[]> m_boundaries;
    std::size_t m_boundaryCount = 0;
    std::size_t m_boundaryCapacity = 0;
    std::atomic<std::uint64_t> m_records{0};  ///< records completely written
};

}  // namespace rowprobe
