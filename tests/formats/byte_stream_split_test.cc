#include "formats/parquet/byte_stream_split.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

// Splits `plain` (values of `width` bytes each, together) into the encoding's streams.
std::vector<uint8_t> Split(const std::vector<uint8_t>& plain, size_t width) {
  const size_t n = plain.size() / width;
  std::vector<uint8_t> out(plain.size());
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < width; ++k) out[k * n + i] = plain[i * width + k];
  }
  return out;
}

TEST(ByteStreamSplit, GathersFloatsAndDoublesBackToTheirBytes) {
  const std::vector<double> doubles = {1.5, -2.25, 1e300, 0.0, -0.0, 3.0};
  std::vector<uint8_t> plain(doubles.size() * 8);
  std::memcpy(plain.data(), doubles.data(), plain.size());
  const std::vector<uint8_t> split = Split(plain, 8);
  ByteStreamSplit decoder(split.data(), split.size(), 8);
  ASSERT_EQ(decoder.count(), 6u);
  std::vector<uint8_t> out(plain.size());
  decoder.Gather(0, 6, out.data());
  EXPECT_EQ(out, plain);
  // A piece from the middle.
  std::vector<uint8_t> piece(16);
  decoder.Gather(2, 2, piece.data());
  EXPECT_EQ(piece, std::vector<uint8_t>(plain.begin() + 16, plain.begin() + 32));

  const std::vector<float> floats = {0.5f, -1.0f, 7.0f};
  std::vector<uint8_t> plain4(12);
  std::memcpy(plain4.data(), floats.data(), 12);
  const std::vector<uint8_t> split4 = Split(plain4, 4);
  ByteStreamSplit decoder4(split4.data(), split4.size(), 4);
  std::vector<uint8_t> out4(12);
  decoder4.Gather(0, 3, out4.data());
  EXPECT_EQ(out4, plain4);
}

TEST(ByteStreamSplit, GathersValuesOfAnyWidth) {
  std::vector<uint8_t> plain(5 * 3);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<uint8_t>(i * 11);
  const std::vector<uint8_t> split = Split(plain, 3);
  ByteStreamSplit decoder(split.data(), split.size(), 3);
  std::vector<uint8_t> out(plain.size());
  decoder.Gather(0, 5, out.data());
  EXPECT_EQ(out, plain);
}

TEST(ByteStreamSplit, RefusesDataThatIsNotWholeValues) {
  const std::vector<uint8_t> bytes(10);
  EXPECT_THROW(ByteStreamSplit(bytes.data(), bytes.size(), 4), InputError);
  EXPECT_THROW(ByteStreamSplit(bytes.data(), bytes.size(), 0), InputError);
  EXPECT_EQ(ByteStreamSplit(bytes.data(), 0, 8).count(), 0u);
}

}  // namespace
}  // namespace parquet
}  // namespace sparktorch
