// formatFloatShortest: a binary32 value as the shortest decimal text that reads back as the
// same float, byte for byte what std::to_chars(first, last, v) writes (no format, no
// precision). libstdc++'s float formatting was about 16 % of the json formatting threads' time
// with NFStream-style statistics (a few non-whole means and deviations per record).
//
// Which digits. A finite nonzero |v| is c * 2^q with c < 2^24 (c = 2^23 + fraction for normal
// numbers, q = biased exponent - 150; c = fraction and q = -149 for subnormals). The reals that
// read back as v lie between the midpoints to its two neighbours; a midpoint itself reads back
// as the neighbour with the even c (round half to even), so this rounding interval R includes
// its ends when c is even and excludes them when c is odd. In quarter units 2^(q-2), v is 4c
// and R runs from 4c - 2 to 4c + 2, except when c = 2^23 and q > -149 (a power of two above
// the subnormals): the float below is twice as close, and R starts at 4c - 1.
//
// The digits follow the idea of R. Giulietti's Schubfach ("The Schubfach way to render
// doubles", 2020), here for binary32 only. Take k = floor(log10(width of R)), so that R is
// between 1 and 10 units of 10^k wide (never exactly 10; exactly 1 only for the whole numbers
// 2^23..2^24, where v itself is a whole unit). Then
// * R holds at most one multiple of 10^(k+1). If it holds one, no other decimal in R is as
//   short, so that one is the answer (its trailing zeros dropped).
// * Otherwise R holds s = floor(v / 10^k) or s + 1 or both (R contains v and is at least one
//   unit wide), and every multiple of 10^k in R has as many digits as the others (no multiple
//   of ten lies between them). Only s and s + 1 can be the nearest to v, so the answer is the
//   one of them in R or, with both in R, the nearer to v, a tie going to the even one: that is
//   how std::to_chars resolves ties too (the exhaustive check below found no difference).
// Either way the answer is 10 * tens + last with tens = floor(s / 10) or tens + 1 (the second
// only when 10 * (tens + 1) is the multiple of ten in R), so the text of `tens` is made while
// `last` is still being decided. All the tests are made and the answer picked with masks, not
// branches: which case applies depends on the low digits of v, and a branch on it would be
// mispredicted for about every third value.
//
// The arithmetic. With n one of the three quarter-unit integers (the lower end of R, v, the
// upper end), the scaled quantity x = n * 2^(q-2) / 10^k * 4 = n * 2^q * 10^-k (v / 10^k and
// the ends in quarter units) is below 2^30: n < 2^26 + 3 and 2^q / 10^k < 10 (< 40 / 3 at a
// power of two). kScales holds, per biased exponent, k (-45 for 2^-149 up to 31 for 2^104),
// 10^-k as g * 2^(r - 63) with g a 64-bit integer in [2^63, 2^64) rounded up (exact for
// 10^0..10^27) and r = floor(log2 10^-k), and the shift q + r + 33 (33..36, so that n << shift
// stays below 2^63); everything is computed exactly at compile time from powers of five in
// 128-bit integers. The high word H of the 128-bit product g * (n << shift) is then
// floor((x + err) * 2^32), where err < 2^-33 comes from rounding g up (relative error below
// 2^-63, times x < 2^30). Every decision compares x with a whole number w of quarter units
// (4 * a candidate, or 4s + 2 for the midpoint between s and s + 1), and is made on H against
// w * 2^32: x <= w exactly when H <= w * 2^32, x < w exactly when H < w * 2^32, and
// floor(x) = H >> 32, provided no x that is not whole has a fraction below 2^-32 or above
// 1 - 2^-33 (else err would move it onto or past w). The tables' 64 bits of 10^-k suffice
// because that holds for every binary32 input: not a general theorem but a fact about a
// finite set, and tools/check_float_text, comparing this function's text with std::to_chars
// for all 2^32 bit patterns (0 mismatches), is the proof that matters here. The 253 powers of
// two with the narrower R are done at compile time (kPowerOfTwoDecimals).
//
// Which form. With the digits d (m of them, no trailing zeros) and v = d * 10^e,
// std::to_chars chooses between the fixed form ("123.45679", "0.00012345", "123456") and the
// scientific one ("1.2345679e-05": one digit, a point only when m > 1, 'e', a sign and two
// exponent digits, never more for binary32) by length, the fixed one when it is not longer.
// Measured against std::to_chars: with E = e + m - 1 the scientific exponent, the fixed form
// is used when -4 <= E (-3 for a single digit) and e <= 5 (4 for a single digit). A fixed
// form with e >= 0 is the float's exact whole value, not d followed by zeros ("123456792" for
// the float nearest 123456789, whose shortest digits are 12345679e1); both have the same
// length, so the choice stands. Each form is written with a few overlapping stores of fixed
// size (the digits of tens come as four pairs from a table, found from tens by independent
// divisions by constants), at most kFloatTextMax bytes.
//
// Costs: no allocation, exception, locale or libc call (whole numbers from 2^24 up go through
// formatUint); about 11 ns per value of NFStream-style statistics against 25 ns for
// std::to_chars, 19 against 33 ns for random bit patterns (tools/check_float_text --bench).
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "digit_pairs.hpp"
#include "rowprobe/format.hpp"

namespace rowprobe {

namespace {

__extension__ using U128 = unsigned __int128;

constexpr int kMinK = -45;  ///< floor(log10 2^-149): the smallest subnormal
constexpr int kMaxK = 31;   ///< floor(log10 2^104): the largest binade

constexpr U128 powerOfFive(int j) {
    U128 p = 1;
    for (int i = 0; i < j; ++i) p *= 5;
    return p;
}

constexpr int bitWidth(U128 x) {
    int n = 0;
    for (; x != 0; x >>= 1) ++n;
    return n;
}

/// floor(log2 10^e), exactly: 10^e = 2^e * 5^e.
constexpr int floorLog2Pow10Exact(int e) {
    return e >= 0 ? e + bitWidth(powerOfFive(e)) - 1 : e - bitWidth(powerOfFive(-e));
}

/// The 64-bit significand of 10^e, rounded up: g with 10^e <= g * 2^(floorLog2Pow10(e) - 63)
/// < 10^e + 2^(floorLog2Pow10(e) - 63).
constexpr std::uint64_t pow10Significand(int e) {
    if (e >= 0) {  // 5^e, at most 105 bits, cut to its top 64 bits
        const U128 five = powerOfFive(e);
        const int width = bitWidth(five);
        if (width <= 64) return static_cast<std::uint64_t>(five << (64 - width));
        const U128 kept = five >> (width - 64);
        return static_cast<std::uint64_t>(kept) + ((kept << (width - 64)) != five ? 1 : 0);
    }
    // 1 / 5^j lies in (2^-w, 2^(1-w)) for the width w of 5^j, so its significand is
    // 2^(63 + w) / 5^j: long division, one quotient bit per step (never exact: rounded up).
    const U128 five = powerOfFive(-e);
    const int top = 63 + bitWidth(five);
    U128 rest = 0;
    std::uint64_t quotient = 0;
    for (int bit = top; bit >= 0; --bit) {
        rest = (rest << 1) | (bit == top ? 1 : 0);
        quotient <<= 1;
        if (rest >= five) {
            rest -= five;
            quotient |= 1;
        }
    }
    return quotient + (rest != 0 ? 1 : 0);
}

/// m * 2^x >= 10^y, exactly, for the magnitudes needed here (all within 128 bits).
constexpr bool atLeastPow10(int m, int x, int y) {
    const U128 five = powerOfFive(y >= 0 ? y : -y);
    if (y >= 0) {  // m * 2^(x-y) >= 5^y
        return x - y >= 0 ? (U128(m) << (x - y)) >= five : U128(m) >= (five << (y - x));
    }
    // m * 5^-y * 2^(x-y) >= 1
    return x - y >= 0 || U128(m) * five >= (U128{1} << (y - x));
}

/// The smallest k with 10^(k+1) > m * 2^x: floor(log10(m * 2^x)), exactly.
constexpr int floorLog10(int m, int x) {
    int k = kMinK - 1;
    while (atLeastPow10(m, x, k + 1)) ++k;
    return k;
}

/// Per biased exponent (a subnormal's 0 has q = -149 like 1): k for R's width 2^q, 10^-k's
/// significand g (10^-k = g * 2^(r - 63) rounded up, r = floor(log2 10^-k)) and the shift
/// q + r + 33 (33..36) that puts x = n * 2^q * 10^-k at bit 32 of the product's high word.
/// Computed exactly at compile time.
struct Scales {
    std::array<std::uint64_t, 256> g;
    std::array<std::int8_t, 256> k;
    std::array<std::uint8_t, 256> shift;
};

constexpr Scales scalesFor(bool powerOfTwo) {
    Scales t{};
    for (int biased = 0; biased < 256; ++biased) {
        const int q = (biased == 0 ? 1 : biased) - 150;
        const int k = powerOfTwo ? floorLog10(3, q - 2) : floorLog10(1, q);  // R: 3 * 2^(q-2)
        const auto i = static_cast<std::size_t>(biased);
        t.g[i] = pow10Significand(-k);
        t.k[i] = static_cast<std::int8_t>(k);
        t.shift[i] = static_cast<std::uint8_t>(q + floorLog2Pow10Exact(-k) + 33);
    }
    return t;
}

constexpr Scales kScales = scalesFor(false);

static_assert([] {
    for (const Scales& t : {kScales, scalesFor(true)}) {
        for (std::size_t i = 0; i < 255; ++i) {  // k in the table's range, shift as described
            if (t.k[i] < kMinK || t.k[i] > kMaxK || t.shift[i] < 33 || t.shift[i] > 36) {
                return false;
            }
        }
    }
    return true;
}());
static_assert(kScales.k[0] == -45 && kScales.k[127] == -7 && kScales.k[150] == 0 &&
              kScales.k[254] == 31);
static_assert(pow10Significand(0) == std::uint64_t{1} << 63);
static_assert(pow10Significand(1) == std::uint64_t{0xA} << 60);
static_assert(pow10Significand(-1) == 0xCCCCCCCCCCCCCCCDULL);  // rounded up
static_assert(pow10Significand(27) == 0xCECB8F27F4200F3AULL);  // 5^27 * 2: exact
static_assert(pow10Significand(28) == 0x813F3978F8940985ULL);  // rounded up

/// floor(x * 2^32) for x = n * 2^q * 10^-k (a quarter-unit quantity below 2^30), given
/// shifted = n << shift: the high word of g * shifted.
constexpr std::uint64_t scaled(std::uint64_t g, std::uint64_t shifted) noexcept {
    return static_cast<std::uint64_t>((U128{g} * shifted) >> 64);
}

/// The answer as the digits before the last one and the last one: the value is
/// (10 * tens + last) * 10^exponent, tens in [1, 10^8), last in [0, 9].
struct Decimal {
    std::uint32_t tens;
    std::uint32_t last;
    int exponent;
};

/// The shortest decimal in R, the nearest to c * 2^q among several (see the top of the file);
/// `below` is 2 quarter units, 1 at a power of two.
constexpr Decimal shortestDecimal(std::uint32_t c, std::uint64_t g, int k, int shift,
                                  std::uint32_t below) noexcept {
    const std::uint64_t n = std::uint64_t{c} << 2;
    // x * 2^32 rounded down for v and the ends of R; an excluded end (odd c) is moved inwards
    // by 2^-32, which turns "<=" into "<" in the comparisons with whole quarter units.
    const std::uint32_t open = c & 1;
    const std::uint64_t mid = scaled(g, n << shift);
    const std::uint64_t low = scaled(g, (n - below) << shift) + open;
    const std::uint64_t high = scaled(g, (n + 2) << shift) - open;
    const auto s = static_cast<std::uint32_t>(mid >> 34);    // floor(v / 10^k)
    const std::uint32_t tens = s / 10;                       // 10 * tens <= s < 10 * tens + 10
    constexpr std::uint64_t kUnit = std::uint64_t{4} << 32;  // one unit of 10^k
    const std::uint64_t tensAt = std::uint64_t{tens} * (10 * kUnit);
    const std::uint64_t sAt = std::uint64_t{s} * kUnit;
    // The tests, then the answer assembled with masks (see the top of the file).
    const std::uint32_t nextTensIn = tensAt + 10 * kUnit <= high ? 1 : 0;
    const std::uint32_t byTens = (low <= tensAt ? 1 : 0) | nextTensIn;  // never both
    const std::uint32_t sIn = low <= sAt ? 1 : 0;
    const std::uint32_t nextIn = sAt + kUnit <= high ? 1 : 0;
    // Past s + 1/2, or on it (x exactly 4s + 2, low 32 bits zero) with s odd.
    const std::uint32_t up = mid + (s & 1) > sAt + kUnit / 2 ? 1 : 0;
    const std::uint32_t last = (s - 10 * tens + (nextIn & ((sIn ^ 1) | up))) & (byTens - 1);
    if (tens + nextTensIn == 0) [[unlikely]] {  // one digit (the smallest subnormals)
        return {last, 0, k - 1};
    }
    return {tens + nextTensIn, last, k};
}

/// The decimals of the powers of two above the subnormals (c = 2^23, R narrower below v),
/// by biased exponent, computed at compile time: at run time only the common case remains.
constexpr std::array<Decimal, 256> kPowerOfTwoDecimals = [] {
    constexpr Scales kNarrow = scalesFor(true);
    std::array<Decimal, 256> t{};
    for (std::size_t biased = 2; biased < 255; ++biased) {
        t[biased] = shortestDecimal(0x800000, kNarrow.g[biased], kNarrow.k[biased],
                                    kNarrow.shift[biased], 1);
    }
    return t;
}();

/// "00" "01" ... "99" (the SDK's table).
constexpr const std::array<char, 200>& kPairs = detail::kDigitPairs;

inline std::uint64_t pairText(std::uint32_t v) noexcept {
    std::uint16_t t;
    std::memcpy(&t, &kPairs[2 * v], 2);
    return t;
}

/// Number of decimal digits of d (1 <= d < 10^8).
inline int digitCount(std::uint32_t d) noexcept {
    static constexpr std::uint32_t kPowers[] = {1,      10,      100,      1000,     10000,
                                                100000, 1000000, 10000000, 100000000};
    const int guess = (std::bit_width(d) * 1233) >> 12;  // the count or one less
    return guess + (d >= kPowers[guess] ? 1 : 0);
}

/// The eight digits of d < 10^8, leading zeros included, as text with the first digit in the
/// lowest byte (the order in memory): four pairs from kPairs, each pair found from d directly
/// (three independent divisions by constants, no chain of them).
inline std::uint64_t eightDigits(std::uint32_t d) noexcept {
    const std::uint32_t by100 = d / 100;
    const std::uint32_t by10k = d / 10000;
    const std::uint32_t by1m = d / 1000000;
    return pairText(by1m) | pairText(by10k - 100 * by1m) << 16 |
           pairText(by100 - 100 * by10k) << 32 | pairText(d - 100 * by100) << 48;
}

static_assert(std::endian::native == std::endian::little, "digits are assembled in registers");

}  // namespace

char* formatFloatShortest(char* out, float v) noexcept {
    const auto bits = std::bit_cast<std::uint32_t>(v);
    *out = '-';  // kept for a negative value only
    out += bits >> 31;
    const std::uint32_t fraction = bits & 0x7FFFFF;
    const std::uint32_t biased = (bits >> 23) & 0xFF;
    if ((bits & 0x7FFFFFFF) - 1 >= 0x7F7FFFFF) [[unlikely]] {  // zero, infinity, NaN
        if (biased == 0) {
            *out = '0';
            return out + 1;
        }
        std::memcpy(out, fraction != 0 ? "nan" : "inf", 3);
        return out + 3;
    }
    const std::uint32_t c = biased == 0 ? fraction : fraction | 0x800000;
    Decimal dec;
    if (fraction == 0 && biased > 1) [[unlikely]] {
        dec = kPowerOfTwoDecimals[biased];
    } else {
        dec = shortestDecimal(c, kScales.g[biased], kScales.k[biased], kScales.shift[biased], 2);
    }

    // The digits: those of `tens` without its leading zeros, then `last`, as `first` and the
    // eight after it, padded with '0' (OR-ing '0' into a digit leaves it as it is); m counts
    // them up to the last nonzero one.
    const std::uint64_t tensDigits = eightDigits(dec.tens);
    const int tensCount = digitCount(dec.tens);
    const int skip = 8 - tensCount;  // leading zeros in tensDigits
    const std::uint64_t fromFirst = tensDigits >> (8 * skip);
    const auto first = static_cast<char>(fromFirst);
    const std::uint64_t rest =
        (fromFirst >> 8) | (std::uint64_t{dec.last} << (8 * (7 - skip))) | 0x3030303030303030ULL;
    const int m = 1 + ((static_cast<int>(std::bit_width(rest & 0x0F0F0F0F0F0F0F0FULL)) + 7) >> 3);
    const int sciExponent = dec.exponent + tensCount;
    const int e = sciExponent - m + 1;  // the value is (the m digits) * 10^e
    const int single = m == 1 ? 1 : 0;
    // Every form is written with a few overlapping stores of fixed size, none past out + 14
    // (the sign is the fifteenth byte): the digits, then what goes over or after them.
    if (e >= 0 && e <= 5 - single) {  // a whole number: the float's exact value
        // Below 2^24 that is the digits and e zeros (the rounding interval is at most one unit
        // wide, so no other whole number is in it), at most eight digits; above, the float's
        // own digits.
        if (biased > 150) return formatUint(out, std::uint64_t{c} << (biased - 150));
        out[0] = first;
        std::memcpy(out + 1, &rest, 8);
        return out + m + e;
    }
    if (e < 0 && sciExponent >= 0) {  // a point after `whole` (1..7) digits: "123.45679"
        const int whole = sciExponent + 1;
        out[1] = first;  // all nine digits one place to the right: the fraction in place
        std::memcpy(out + 2, &rest, 8);
        const std::uint64_t eight = static_cast<unsigned char>(first) | rest << 8;
        const std::uint64_t wholeBytes = ~std::uint64_t{0} >> (64 - 8 * whole);
        const std::uint64_t head = (eight & wholeBytes) | ((eight << 8) & ~wholeBytes);
        std::memcpy(out, &head, 8);  // the whole digits in place, the fraction as it was
        out[whole] = '.';
        return out + m + 1;
    }
    if (sciExponent < 0 && sciExponent >= single - 4) {  // "0.00012345"
        const int prefix = 1 - sciExponent;              // "0." and up to three zeros
        std::memcpy(out, "0.000000", 8);
        out[prefix] = first;
        std::memcpy(out + prefix + 1, &rest, 8);
        return out + prefix + m;
    }
    // "1.2345679e-05", "1e+10": the first digit, a point when more follow, the exponent.
    out[0] = first;
    out[1] = '.';
    std::memcpy(out + 2, &rest, 8);
    char* p = out + (m > 1 ? m + 1 : 1);
    const int magnitude = sciExponent < 0 ? -sciExponent : sciExponent;
    p[0] = 'e';
    p[1] = sciExponent < 0 ? '-' : '+';
    std::memcpy(p + 2, &kPairs[2 * static_cast<std::size_t>(magnitude)], 2);
    return p + 4;
}

}  // namespace rowprobe
