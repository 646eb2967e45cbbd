#include "formats/number_parse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "formats/error.h"

namespace sparktorch {
namespace {

uint32_t Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

// strtof of `text`, which must be the whole of it.
float Strtof(const std::string& text) {
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  EXPECT_EQ(end, text.c_str() + text.size()) << text;
  return v;
}

float Parse(std::string_view text) {
  float v = -12345.0f;
  EXPECT_TRUE(ParseFloat(text, &v)) << text;
  return v;
}

TEST(NumberParse, FastPathEqualsStrtofForRandomDecimals) {
  std::mt19937_64 rng(42);
  int fast = 0;
  for (int i = 0; i < 2000000; ++i) {
    // Up to 8 digits with the point anywhere (or nowhere), a random sign.
    const int digits = 1 + static_cast<int>(rng() % 8);
    std::string text;
    if (rng() % 3 == 0) text += (rng() % 2 == 0) ? '-' : '+';
    const int point = static_cast<int>(rng() % (digits + 2)) - 1;  // -1: none
    for (int d = 0; d < digits; ++d) {
      if (d == point) text += '.';
      text += static_cast<char>('0' + rng() % 10);
    }
    if (point == digits) text += '.';
    float fast_value = 0;
    const char* end = text.data() + text.size();
    if (ParsePlainDecimal(text.data(), end, &fast_value) == end) {
      ++fast;
      ASSERT_EQ(Bits(fast_value), Bits(Strtof(text))) << text;
    }
    ASSERT_EQ(Bits(Parse(text)), Bits(Strtof(text))) << text;
    // Followed by more of a row, a number is read 8 bytes at a time where it fits in them.
    const std::string row = text + ",1234567";
    float in_row = 0;
    const char* number_end = ParsePlainDecimal(row.data(), row.data() + row.size(), &in_row);
    if (number_end != nullptr) {
      ASSERT_EQ(number_end, row.data() + text.size()) << row;
      ASSERT_EQ(Bits(in_row), Bits(Strtof(text))) << row;
    }
  }
  // About 90% fit the fast path: 8-digit mantissas from 2^24 up do not.
  EXPECT_GT(fast, 1750000);
}

TEST(NumberParse, FastPathTakesUpToTenFractionDigits) {
  float v;
  const std::string ten = "0.0000000001";
  EXPECT_EQ(ParsePlainDecimal(ten.data(), ten.data() + ten.size(), &v), ten.data() + ten.size());
  EXPECT_EQ(Bits(v), Bits(Strtof(ten)));
  const std::string eleven = "0.00000000001";
  EXPECT_EQ(ParsePlainDecimal(eleven.data(), eleven.data() + eleven.size(), &v), nullptr);
  EXPECT_EQ(Bits(Parse(eleven)), Bits(Strtof(eleven)));
}

TEST(NumberParse, FastPathStopsAtTheFirstByteOutsideTheNumber) {
  float v = 0;
  const std::string text = "0.502,1";
  EXPECT_EQ(ParsePlainDecimal(text.data(), text.data() + text.size(), &v), text.data() + 5);
  EXPECT_EQ(v, 0.502f);
  const std::string exponent = "1.5e3";
  EXPECT_EQ(ParsePlainDecimal(exponent.data(), exponent.data() + exponent.size(), &v),
            exponent.data() + 3);
}

TEST(NumberParse, FastPathReadsEveryShapeOfShortNumberFollowedByMore) {
  // Each shape that fits in 8 bytes, followed by a delimiter and padding so that the 8-byte
  // reads apply; the end returned and the value must match a byte-by-byte reading.
  for (std::string number :
       {"0", "1", "9", "10", "0.5", "1.", ".5", "0.0039", "0.502", "1234567", "123456.", ".123456",
        "12.3456", "000000", "0.00000", "-0.25", "+7", "-1234567", "-.5"}) {
    for (std::string delimiter : {",", " ", "]", "x", ".", "e"}) {
      if (delimiter == "." && number.find('.') == std::string::npos) continue;  // "0.9999..."
      const std::string row = number + delimiter + "99999999";
      float v = -1;
      const char* end = ParsePlainDecimal(row.data(), row.data() + row.size(), &v);
      ASSERT_EQ(end, row.data() + number.size()) << row;
      EXPECT_EQ(Bits(v), Bits(Strtof(number))) << row;
    }
  }
  // No digits: not a number, however many bytes follow.
  for (std::string row : {".,123456789", ",123456789", "-,12345678", "x1234567890", ".e12345678"}) {
    float v;
    EXPECT_EQ(ParsePlainDecimal(row.data(), row.data() + row.size(), &v), nullptr) << row;
  }
  // "1.5.3": the number ends at the second point.
  const std::string two_points = "1.5.3,12345678";
  float v;
  EXPECT_EQ(ParsePlainDecimal(two_points.data(), two_points.data() + two_points.size(), &v),
            two_points.data() + 3);
  EXPECT_EQ(v, 1.5f);
}

TEST(NumberParse, FastPathRejectsTextWithoutDigitsAndMantissasOf2To24) {
  float v;
  for (std::string text : {"", "-", "+", ".", "-.", "abc", "16777216", "1677721.6"}) {
    EXPECT_EQ(ParsePlainDecimal(text.data(), text.data() + text.size(), &v), nullptr) << text;
  }
  const std::string below = "16777215";
  EXPECT_NE(ParsePlainDecimal(below.data(), below.data() + below.size(), &v), nullptr);
}

TEST(NumberParse, FallbackParsesExponentsAndLongMantissas) {
  for (std::string text :
       {"1e-5", "1E5", "2.5e+3", "-7.25E-2", "0.50196078431372551", "16777217", "123456789012",
        "3.4028235e38", "1.17549435e-38", "1e-40", "1e-45", ".5e1", "5.e-1",
        "0.100000000000000000000000000001", "-0.0000000000000000000000000000000000001"}) {
    EXPECT_EQ(Bits(Parse(text)), Bits(Strtof(text))) << text;
  }
}

TEST(NumberParse, OutOfRangeBecomesInfinityOrZeroAsStrtofGivesIt) {
  for (std::string text :
       {std::string("1e39"), std::string("-1e39"), std::string("1e400"), std::string("1e-50"),
        std::string("-1e-50"), std::string("7e-46"), std::string("1e-400"), std::string(50, '9'),
        "0." + std::string(400, '0') + "1"}) {
    EXPECT_EQ(Bits(Parse(text)), Bits(Strtof(text))) << text;
  }
}

TEST(NumberParse, AcceptsNanAndInfinityInAnyCaseWithASign) {
  EXPECT_TRUE(std::isnan(Parse("nan")));
  EXPECT_TRUE(std::isnan(Parse("NaN")));
  EXPECT_TRUE(std::isnan(Parse("-NAN")));
  EXPECT_TRUE(std::isnan(Parse("+nan")));
  EXPECT_EQ(Parse("inf"), INFINITY);
  EXPECT_EQ(Parse("+Inf"), INFINITY);
  EXPECT_EQ(Parse("-INF"), -INFINITY);
  EXPECT_EQ(Parse("Infinity"), INFINITY);
  EXPECT_EQ(Parse("-infinity"), -INFINITY);
}

TEST(NumberParse, KeepsTheSignOfZero) {
  EXPECT_EQ(Bits(Parse("-0")), Bits(-0.0f));
  EXPECT_EQ(Bits(Parse("-0.000")), Bits(-0.0f));
  EXPECT_EQ(Bits(Parse("+0")), Bits(0.0f));
}

TEST(NumberParse, RejectsTextThatIsNotExactlyOneNumber) {
  for (std::string text :
       {"",       " ",     "+",         "-",   ".",    "-.",    "+-1", "--1", "++1",
        "1.2.3",  "abc",   "1e",        "1e+", "e5",   "0x10",  " 1",  "1 ",  "1,",
        "nan(1)", "infin", "infinityy", "1f",  "1.5.", "+inf5", "- 1"}) {
    float v = 7.0f;
    EXPECT_FALSE(ParseFloat(text, &v)) << '"' << text << '"';
    EXPECT_EQ(v, 7.0f) << text;
  }
}

TEST(NumberParse, ParseIndexTakesPlainNonNegativeIntegers) {
  int64_t v = -1;
  EXPECT_TRUE(ParseIndex("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseIndex("784", &v));
  EXPECT_EQ(v, 784);
  EXPECT_TRUE(ParseIndex("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  for (std::string text : {"", "-1", "+1", "1.0", "1e3", " 1", "1 ", "x", "9223372036854775808"}) {
    v = 5;
    EXPECT_FALSE(ParseIndex(text, &v)) << text;
    EXPECT_EQ(v, 5);
  }
}

TEST(NumberParse, QuoteForMessageCutsLongTextAfter32Bytes) {
  EXPECT_EQ(QuoteForMessage("abc"), "\"abc\"");
  EXPECT_EQ(QuoteForMessage(""), "\"\"");
  EXPECT_EQ(QuoteForMessage(std::string(32, 'x')), "\"" + std::string(32, 'x') + "\"");
  EXPECT_EQ(QuoteForMessage(std::string(33, 'x')), "\"" + std::string(32, 'x') + "...\"");
}

TEST(NumberParse, DescribeByteForMessageQuotesPrintableBytesOnly) {
  EXPECT_EQ(DescribeByteForMessage('!'), "\"!\"");
  EXPECT_EQ(DescribeByteForMessage('\n'), "byte 0x0a");
  EXPECT_EQ(DescribeByteForMessage('\xff'), "byte 0xff");
}

TEST(NumberParse, ParseFieldValueThrowsRowErrorsAtTheGivenColumn) {
  EXPECT_EQ(ParseFieldValue("0.25", 3, false), 0.25f);
  EXPECT_TRUE(std::isnan(ParseFieldValue("nan", 3, true)));
  EXPECT_EQ(ParseFieldValue("-inf", 3, true), -INFINITY);
  try {
    ParseFieldValue("abc", 7, false);
    FAIL();
  } catch (const RowError& e) {
    EXPECT_STREQ(e.what(), "expected a number, got \"abc\"");
    EXPECT_EQ(e.column(), 7u);
  }
  try {
    ParseFieldValue("NaN", 9, false);
    FAIL();
  } catch (const RowError& e) {
    EXPECT_STREQ(e.what(), "expected a finite number, got \"NaN\"");
    EXPECT_EQ(e.column(), 9u);
  }
  try {
    ParseFieldValue("1e39", 2, false);
    FAIL();
  } catch (const RowError& e) {
    EXPECT_STREQ(e.what(), "expected a finite number, got \"1e39\"");
  }
}

}  // namespace
}  // namespace sparktorch
