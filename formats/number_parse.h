#ifndef SPARKTORCH_FORMATS_NUMBER_PARSE_H_
#define SPARKTORCH_FORMATS_NUMBER_PARSE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sparktorch {

// Number parsing for the text row formats, and the RowError a field gets when it is not a number.
// None of these skip spaces: the caller trims a field before parsing it.

namespace number_parse_internal {

// Every power of ten up to 10^10 is exact as a float (5^10 < 2^24).
inline constexpr float kPowersOfTen[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                           1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

// The float of an integer below 2^24, exactly. Below 2^23 it is made from the bits, avoiding
// cvtsi2ss: that instruction also depends on the old contents of its register, which in a loop
// holds the previous number's value, so each conversion would wait for the division before it.
inline float ExactFloat(uint64_t m) {
  if (m >= (uint64_t{1} << 23)) return static_cast<float>(m);
  const uint32_t bits = 0x4b000000u | static_cast<uint32_t>(m);  // 2^23 + m
  float f;
  std::memcpy(&f, &bits, 4);
  return f - 8388608.0f;
}

// ParsePlainDecimal after the sign, one byte at a time.
inline const char* ParseUnsignedDecimal(const char* p, const char* end, float* value) {
  const char* digits_begin = p;
  uint64_t mantissa = 0;
  while (p != end && static_cast<unsigned>(*p - '0') <= 9) {
    mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    ++p;
  }
  size_t digits = static_cast<size_t>(p - digits_begin);
  size_t fraction_digits = 0;
  if (p != end && *p == '.') {
    ++p;
    const char* fraction_begin = p;
    while (p != end && static_cast<unsigned>(*p - '0') <= 9) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
      ++p;
    }
    fraction_digits = static_cast<size_t>(p - fraction_begin);
    digits += fraction_digits;
  }
  // 19 digits cannot overflow the uint64_t; longer inputs go to the fallback anyway.
  if (digits == 0 || digits > 19 || mantissa >= (uint64_t{1} << 24) || fraction_digits > 10) {
    return nullptr;
  }
  *value = ExactFloat(mantissa) / kPowersOfTen[fraction_digits];
  return p;
}

// The low n bytes set, for n from 0 to 7.
inline uint64_t LowBytes(unsigned n) { return (uint64_t{1} << (8 * n)) - 1; }

// ParsePlainDecimal after the sign, for a number that ends within the 8 bytes at p, which must
// all be readable: the digits are found and converted 8 bytes at a time, without the branches
// on each byte that the lengths of numbers in real data make unpredictable. Returns nullptr
// when the number does not end within the 8 bytes or has no digits: the caller then tries
// ParseUnsignedDecimal.
inline const char* ParseShortUnsignedDecimal(const char* p, float* value) {
  uint64_t word;
  std::memcpy(&word, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);  // the first byte in the low bits, as below assumes
#endif
  const uint64_t kHighBits = 0x8080808080808080u;
  const uint64_t x = word ^ 0x3030303030303030u;  // digits become 0..9
  // A byte's high bit set: not a digit (x > 9). Masking first keeps carries inside bytes.
  const uint64_t non_digits = (((x & 0x7f7f7f7f7f7f7f7fu) + 0x7676767676767676u) | x) & kHighBits;
  if (non_digits == 0) return nullptr;
  // The first non-digit: the point when there is one.
  const unsigned point_at = static_cast<unsigned>(__builtin_ctzll(non_digits)) / 8;
  // Whether it is a point ('.' ^ '0' == 0x1e), and then the number ends at the next
  // non-digit. Arithmetic rather than a branch: half the numbers in real data have a point, in
  // no predictable order.
  const uint64_t point = ((x >> (8 * point_at)) & 0xff) == 0x1e;
  const uint64_t ends = non_digits & (non_digits - point);
  if (ends == 0) return nullptr;
  const unsigned end_at = static_cast<unsigned>(__builtin_ctzll(ends)) / 8;
  const unsigned digits = end_at - static_cast<unsigned>(point);
  if (digits == 0) return nullptr;
  // The integer digits, then the fraction digits moved down over the point.
  uint64_t d = (x & LowBytes(point_at)) | ((x >> 8) & LowBytes(digits) & ~LowBytes(point_at));
  // Leading zero digits fill the low bytes; then the classic 8-digit conversion.
  d <<= 8 * (8 - digits);
  d = (d * 2561) >> 8;
  d = ((d & 0x00ff00ff00ff00ffu) * 6553601) >> 16;
  d = ((d & 0x0000ffff0000ffffu) * 42949672960001u) >> 32;
  // At most 7 digits and 6 after the point: well inside the exact fast path.
  const unsigned fraction_digits = end_at - point_at - static_cast<unsigned>(point);
  *value = ExactFloat(d) / kPowersOfTen[fraction_digits];
  return p + end_at;
}

}  // namespace number_parse_internal

// Parses a plain decimal at the start of [p, end): an optional sign, digits, an optional '.' and
// more digits, at least one digit in all, a mantissa below 2^24 and at most 10 digits after the
// point. Such a number is m / 10^k with m and 10^k exact floats, so one correctly rounded
// division gives the same float as strtof (Clinger's fast path).
// Returns the end of the number, or nullptr when the text does not start with such a decimal
// (an exponent, too many digits, not a number at all): the caller then falls back to ParseFloat
// on the whole field. The byte at the returned position is not checked: "1.5x" returns the 'x'.
inline const char* ParsePlainDecimal(const char* p, const char* end, float* value) {
  bool negative = false;
  if (p != end && (*p == '-' || *p == '+')) {
    negative = *p == '-';
    ++p;
  }
  float v;
  const char* number_end = nullptr;
  if (end - p >= 8) number_end = number_parse_internal::ParseShortUnsignedDecimal(p, &v);
  if (number_end == nullptr) number_end = number_parse_internal::ParseUnsignedDecimal(p, end, &v);
  if (number_end == nullptr) return nullptr;
  *value = negative ? -v : v;
  return number_end;
}

// Parses all of `text` as a float: plain decimals, exponents ("1e-5", "2.5E+3"), any number of
// digits ("0.50196078431372551"), a leading '+' or '-', and nan, inf and infinity in any case
// with an optional sign. The result is the correctly rounded float, as strtof gives it; values
// beyond the float range become +-inf, values below it +-0. Returns false, leaving *value
// unchanged, when `text` is not exactly one number (empty, surrounding spaces, trailing junk).
bool ParseFloat(std::string_view text, float* value);

// Parses all of `text` as a non-negative decimal integer below 2^63 ("0", "784"; no sign, no
// point). Returns false, leaving *value unchanged, otherwise.
bool ParseIndex(std::string_view text, int64_t* value);

// How a row's text appears in messages: in double quotes, cut after 32 bytes with "..." added.
std::string QuoteForMessage(std::string_view text);

// How one byte of a row appears in messages: "x" in double quotes when printable, else as
// byte 0x07.
std::string DescribeByteForMessage(char c);

// Parses a trimmed field of a row as a value. Throws RowError at `column` (the 1-based byte
// column of the field) with `expected a number, got "abc"` when it is not a number, and with
// `expected a finite number, got "nan"` when it is NaN or +-Inf and !allow_nan.
float ParseFieldValue(std::string_view field, size_t column, bool allow_nan);

// Throws RowError `expected a finite number, got nan in column 3` at `column` for `value`, the
// value of column `index` (0-based) of a row of binary float32 values (compact, float32).
[[noreturn]] void ThrowNonFiniteValue(float value, size_t index, size_t column);

// Checks a row of binary float32 values for NaN and +-Inf: a branch-free pass that vectorises,
// then, only for a bad row, ThrowNonFiniteValue for its first such value at
// `column_of(index)`.
template <typename ColumnOf>
void CheckFloatsFinite(const std::vector<float>& values, ColumnOf column_of) {
  bool non_finite = false;
  for (const float& v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    non_finite |= (bits & 0x7f800000u) == 0x7f800000u;
  }
  if (!non_finite) return;
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    if ((bits & 0x7f800000u) == 0x7f800000u) ThrowNonFiniteValue(values[i], i, column_of(i));
  }
}

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_NUMBER_PARSE_H_
