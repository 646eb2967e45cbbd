#include "formats/number_parse.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "formats/error.h"

namespace sparktorch {
namespace {

bool EqualsIgnoringCase(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// For a number std::from_chars<float> found out of range: whether its magnitude is large (it
// overflows to inf) rather than tiny (it underflows to 0). `text` is unsigned decimal syntax.
bool Overflows(std::string_view text) {
  // The decimal exponent of the leading nonzero digit decides: count integer digits after
  // leading zeros, or zeros after the point, then add the explicit exponent.
  int64_t magnitude = 0;
  size_t i = 0;
  bool seen_nonzero = false;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    if (text[i] != '0') seen_nonzero = true;
    if (seen_nonzero) ++magnitude;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && IsDigit(text[i]); ++i) {
      if (seen_nonzero) continue;
      if (text[i] != '0') {
        seen_nonzero = true;
      } else {
        --magnitude;
      }
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    int64_t exponent = 0;
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (exponent < 1000000) exponent = exponent * 10 + (text[i] - '0');
    }
    magnitude += negative ? -exponent : exponent;
  }
  return magnitude > 0;
}

}  // namespace

bool ParseFloat(std::string_view text, float* value) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  float v;
  if (ParsePlainDecimal(begin, end, &v) == end) {
    *value = v;
    return true;
  }
  bool negative = false;
  if (begin != end && (*begin == '+' || *begin == '-')) {
    negative = *begin == '-';
    ++begin;
  }
  std::string_view unsigned_text(begin, static_cast<size_t>(end - begin));
  if (EqualsIgnoringCase(unsigned_text, "nan")) {
    v = std::numeric_limits<float>::quiet_NaN();
  } else if (EqualsIgnoringCase(unsigned_text, "inf") ||
             EqualsIgnoringCase(unsigned_text, "infinity")) {
    v = std::numeric_limits<float>::infinity();
  } else {
    // from_chars also takes "nan(...)", "inf" and a second sign: only let it see decimal syntax.
    if (begin == end || !(IsDigit(*begin) || *begin == '.')) return false;
    auto [ptr, ec] = std::from_chars(begin, end, v, std::chars_format::general);
    if (ptr != end) return false;
    if (ec == std::errc::result_out_of_range) {
      v = Overflows(unsigned_text) ? std::numeric_limits<float>::infinity() : 0.0f;
    } else if (ec != std::errc()) {
      return false;
    }
  }
  *value = negative ? -v : v;
  return true;
}

bool ParseIndex(std::string_view text, int64_t* value) {
  if (text.empty() || !IsDigit(text.front())) return false;
  int64_t v;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  *value = v;
  return true;
}

std::string QuoteForMessage(std::string_view text) {
  constexpr size_t kMaxBytes = 32;
  std::string quoted = "\"";
  if (text.size() > kMaxBytes) {
    quoted.append(text.substr(0, kMaxBytes));
    quoted.append("...\"");
  } else {
    quoted.append(text);
    quoted.push_back('"');
  }
  return quoted;
}

std::string DescribeByteForMessage(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("\"") + c + "\"";
  static const char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

float ParseFieldValue(std::string_view field, size_t column, bool allow_nan) {
  float v;
  if (!ParseFloat(field, &v)) {
    throw RowError("expected a number, got " + QuoteForMessage(field), column);
  }
  if (!allow_nan && !std::isfinite(v)) {
    throw RowError("expected a finite number, got " + QuoteForMessage(field), column);
  }
  return v;
}

void ThrowNonFiniteValue(float value, size_t index, size_t column) {
  const char* text = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  throw RowError(
      std::string("expected a finite number, got ") + text + " in column " + std::to_string(index),
      column);
}

}  // namespace sparktorch
