#include "formats/base64.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sparktorch {
namespace {

std::string Encode(std::string_view bytes) {
  std::string out;
  Base64Encode(bytes, &out);
  return out;
}

// Decodes text that must be valid.
std::string Decode(std::string_view text) {
  const std::optional<size_t> size = Base64DecodedSize(text);
  EXPECT_TRUE(size.has_value()) << text;
  std::string out(size.value_or(0), '\0');
  EXPECT_EQ(Base64Decode(text, out.data()), std::nullopt) << text;
  return out;
}

// The offset Base64Decode reports for invalid text whose size is acceptable.
std::optional<size_t> BadOffset(std::string_view text) {
  const std::optional<size_t> size = Base64DecodedSize(text);
  EXPECT_TRUE(size.has_value()) << text;
  std::string out(size.value_or(0), '\0');
  return Base64Decode(text, out.data());
}

TEST(Base64, EncodesTheRfc4648Vectors) {
  EXPECT_EQ(Encode(""), "");
  EXPECT_EQ(Encode("f"), "Zg==");
  EXPECT_EQ(Encode("fo"), "Zm8=");
  EXPECT_EQ(Encode("foo"), "Zm9v");
  EXPECT_EQ(Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, MatchesPythonsB64encodeOfPackedFloats) {
  // base64.b64encode(struct.pack('<3f', 1.0, 0.5, -2.0)).decode()
  EXPECT_EQ(Encode(std::string("\x00\x00\x80\x3f\x00\x00\x00\x3f\x00\x00\x00\xc0", 12)),
            "AACAPwAAAD8AAADA");
  // base64.b64encode(bytes([0xfb, 0xff, 0xfe])): the '+' and '/' characters.
  EXPECT_EQ(Encode("\xfb\xff\xfe"), "+//+");
  EXPECT_EQ(Encode("\xfb\xef\xbe\xff"), "++++/w==");
  EXPECT_EQ(Decode("AACAPwAAAD8AAADA"),
            std::string("\x00\x00\x80\x3f\x00\x00\x00\x3f\x00\x00\x00\xc0", 12));
  EXPECT_EQ(Decode("++++/w=="), "\xfb\xef\xbe\xff");
}

TEST(Base64, EncodeAppendsToWhatTheStringHolds) {
  std::string out = "id\t";
  Base64Encode("foo", &out);
  EXPECT_EQ(out, "id\tZm9v");
}

TEST(Base64, RoundTripsEveryLengthUpTo50) {
  std::mt19937 rng(7);
  for (size_t length = 0; length <= 50; ++length) {
    std::string bytes(length, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string text = Encode(bytes);
    EXPECT_EQ(text.size(), (length + 2) / 3 * 4);
    EXPECT_EQ(Base64DecodedSize(text), length);
    EXPECT_EQ(Decode(text), bytes) << "length " << length;
  }
}

TEST(Base64, RoundTripsEveryByteValue) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  EXPECT_EQ(Decode(Encode(bytes)), bytes);
}

TEST(Base64, DecodedSizeRejectsLengthsNotAMultipleOf4AndLongPadding) {
  EXPECT_EQ(Base64DecodedSize(""), 0u);
  EXPECT_EQ(Base64DecodedSize("Zg=="), 1u);
  EXPECT_EQ(Base64DecodedSize("Zm8="), 2u);
  EXPECT_EQ(Base64DecodedSize("Zm9v"), 3u);
  EXPECT_EQ(Base64DecodedSize("Zm9"), std::nullopt);
  EXPECT_EQ(Base64DecodedSize("Zm9vY"), std::nullopt);
  EXPECT_EQ(Base64DecodedSize("Z==="), std::nullopt);
  EXPECT_EQ(Base64DecodedSize("===="), std::nullopt);
}

TEST(Base64, DecodeReportsTheOffsetOfTheFirstBadCharacter) {
  EXPECT_EQ(BadOffset("Zm9v!m9v"), 4u);
  EXPECT_EQ(BadOffset("Zm9vZ!9v"), 5u);
  EXPECT_EQ(BadOffset("Zm9vZm9!"), 7u);
  EXPECT_EQ(BadOffset("Zm 9"), 2u);
  EXPECT_EQ(BadOffset("Zm9-"), 3u);  // the URL-safe alphabet is not accepted
  EXPECT_EQ(BadOffset("Zm9_"), 3u);
  EXPECT_EQ(BadOffset(std::string("Zm\0v", 4)), 2u);
  EXPECT_EQ(BadOffset("Zm\xc3v"), 2u);
  // In a last group with padding, and bad characters before it.
  EXPECT_EQ(BadOffset("Zm9vZ!=="), 5u);
  EXPECT_EQ(BadOffset("!m9vZg=="), 0u);
}

TEST(Base64, DecodeReportsMisplacedPadding) {
  EXPECT_EQ(BadOffset("Zg==Zm9v"), 2u);  // padding in a group before the last
  EXPECT_EQ(BadOffset("Zm=v"), 2u);      // '=' before a character
  EXPECT_EQ(BadOffset("Z=m="), 1u);
  EXPECT_EQ(BadOffset("=m9v"), 0u);
  // Three '=' at the end: Base64DecodedSize refuses it, and so does Base64Decode.
  char out[4];
  EXPECT_EQ(Base64Decode("Zm9vZ===", out), 5u);
}

TEST(Base64, DecodeWritesNoMoreThanTheDecodedSize) {
  // Guard bytes after the output stay untouched, for every padding.
  for (std::string text : {"Zm9vYmFy", "Zm9vYmE=", "Zm9vYg=="}) {
    const size_t size = *Base64DecodedSize(text);
    std::string out(size + 4, '#');
    EXPECT_EQ(Base64Decode(text, out.data()), std::nullopt);
    EXPECT_EQ(out.substr(size), "####") << text;
  }
}

}  // namespace
}  // namespace sparktorch
