#include "formats/parquet/delta_binary_packed.h"

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

void PutUleb(uint64_t v, std::vector<uint8_t>* out) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out->push_back(static_cast<uint8_t>(byte | (v ? 0x80 : 0)));
  } while (v);
}

void PutZigZag(int64_t v, std::vector<uint8_t>* out) {
  PutUleb((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63), out);
}

// The specification's encoder, written plainly: deltas wrap at the values' width, each block's
// minimum delta is subtracted, each miniblock is bit-packed (least significant bit first) at
// the width of its largest; the last miniblock is padded, the miniblocks after it are absent
// and their widths are `unused_width`.
template <typename T>
std::vector<uint8_t> Encode(const std::vector<T>& values, uint64_t block_size = 128,
                            uint64_t miniblocks = 4, uint8_t unused_width = 0) {
  using U = std::make_unsigned_t<T>;
  std::vector<uint8_t> out;
  PutUleb(block_size, &out);
  PutUleb(miniblocks, &out);
  PutUleb(values.size(), &out);
  PutZigZag(values.empty() ? 0 : values[0], &out);
  const uint64_t per = block_size / miniblocks;
  for (size_t start = 1; start < values.size(); start += block_size) {
    std::vector<U> deltas;
    for (size_t i = start; i < values.size() && i < start + block_size; ++i) {
      deltas.push_back(static_cast<U>(static_cast<U>(values[i]) - static_cast<U>(values[i - 1])));
    }
    T min_delta = static_cast<T>(deltas[0]);
    for (U d : deltas) min_delta = std::min(min_delta, static_cast<T>(d));
    PutZigZag(min_delta, &out);
    std::vector<uint8_t> widths(miniblocks, unused_width);
    std::vector<uint8_t> packed;
    for (uint64_t m = 0; m * per < deltas.size(); ++m) {
      U largest = 0;
      for (uint64_t k = m * per; k < (m + 1) * per && k < deltas.size(); ++k) {
        largest = std::max<U>(largest, static_cast<U>(deltas[k] - static_cast<U>(min_delta)));
      }
      int width = 0;
      while (width < static_cast<int>(8 * sizeof(T)) && (largest >> width) != 0) ++width;
      widths[m] = static_cast<uint8_t>(width);
      std::vector<uint8_t> bits(per * width / 8, 0);
      for (uint64_t k = 0; k < per && m * per + k < deltas.size(); ++k) {
        U v = static_cast<U>(deltas[m * per + k] - static_cast<U>(min_delta));
        for (int b = 0; b < width; ++b) {
          if ((v >> b) & 1) bits[(k * width + b) / 8] |= static_cast<uint8_t>(1 << ((k * width + b) % 8));
        }
      }
      packed.insert(packed.end(), bits.begin(), bits.end());
    }
    out.insert(out.end(), widths.begin(), widths.end());
    out.insert(out.end(), packed.begin(), packed.end());
  }
  return out;
}

template <typename T>
std::vector<T> Decode(const std::vector<uint8_t>& bytes, size_t n) {
  DeltaBinaryPackedDecoder decoder(bytes.data(), bytes.data() + bytes.size(),
                                   static_cast<int>(8 * sizeof(T)));
  std::vector<T> out(n);
  decoder.Next(n, out.data());
  return out;
}

TEST(DeltaBinaryPacked, DecodesTheSpecificationsExamples) {
  // Example 1: 1..5, every delta 1: a minimum delta of 1 and miniblocks of width 0.
  const std::vector<uint8_t> one = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
  EXPECT_EQ(Decode<int32_t>(one, 5), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  // Example 2: 7, 5, 3, 1, 2, 3, 4, 5: deltas -2 -2 -2 1 1 1 1, less the minimum -2: 0 0 0 3
  // 3 3 3 in 2 bits, least significant first: 0xc0 0x3f, then padding to 32 values.
  std::vector<uint8_t> two = {0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 2, 0, 0, 0, 0xc0, 0x3f};
  two.resize(two.size() + 6);  // the rest of the miniblock's 8 bytes
  EXPECT_EQ(Decode<int64_t>(two, 8), (std::vector<int64_t>{7, 5, 3, 1, 2, 3, 4, 5}));
  EXPECT_EQ(two, Encode<int64_t>({7, 5, 3, 1, 2, 3, 4, 5}));
}

TEST(DeltaBinaryPacked, RoundTripsRandomValuesOfEveryWidthAndBlockShape) {
  std::mt19937_64 rng(7);
  for (int bits = 0; bits <= 64; bits += 3) {
    for (auto shape : {std::pair<uint64_t, uint64_t>{128, 4}, {128, 1}, {256, 8}, {1024, 2}}) {
      SCOPED_TRACE("bits " + std::to_string(bits) + ", block " + std::to_string(shape.first));
      std::vector<int64_t> v64(777);
      std::vector<int32_t> v32(777);
      for (size_t i = 0; i < v64.size(); ++i) {
        uint64_t r = rng();
        v64[i] = static_cast<int64_t>(bits == 64 ? r : r & ((uint64_t{1} << bits) - 1));
        v32[i] = static_cast<int32_t>(v64[i]);
      }
      EXPECT_EQ(Decode<int64_t>(Encode(v64, shape.first, shape.second), v64.size()), v64);
      EXPECT_EQ(Decode<int32_t>(Encode(v32, shape.first, shape.second), v32.size()), v32);
    }
  }
}

TEST(DeltaBinaryPacked, DeltasWrapAtTheValuesWidth) {
  const int32_t lo32 = std::numeric_limits<int32_t>::min();
  const int32_t hi32 = std::numeric_limits<int32_t>::max();
  const std::vector<int32_t> v32 = {lo32, hi32, lo32, 0, hi32, -1, lo32};
  EXPECT_EQ(Decode<int32_t>(Encode(v32), v32.size()), v32);
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  const int64_t hi64 = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> v64 = {lo64, hi64, lo64, 0, hi64, -1, lo64, 1};
  std::vector<uint8_t> bytes = Encode(v64);
  EXPECT_EQ(bytes[bytes.size() - 8 * 32 - 4], 64);  // the first miniblock is 64 bits wide
  EXPECT_EQ(Decode<int64_t>(bytes, v64.size()), v64);
}

TEST(DeltaBinaryPacked, ReadsInPiecesAsOneRead) {
  std::vector<int64_t> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i * i) - 5000;
  std::vector<uint8_t> bytes = Encode(values, 256, 8);
  DeltaBinaryPackedDecoder decoder(bytes.data(), bytes.data() + bytes.size(), 64);
  EXPECT_EQ(decoder.total(), 1000u);
  std::vector<int64_t> got;
  for (size_t piece : {1, 2, 31, 33, 128, 300, 505}) {
    std::vector<int64_t> part(piece);
    decoder.Next(piece, part.data());
    got.insert(got.end(), part.begin(), part.end());
  }
  EXPECT_EQ(got, values);
  int64_t more;
  EXPECT_THROW(decoder.Next(1, &more), InputError);
}

TEST(DeltaBinaryPacked, IgnoresTheWidthsOfMiniblocksNoValueNeeds) {
  // 40 values: one miniblock of 32 deltas and part of a second; the other two are absent and
  // their widths garbage, as writers may leave them.
  std::vector<int32_t> values(40);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 3);
  EXPECT_EQ(Decode<int32_t>(Encode(values, 128, 4, 0xee), values.size()), values);
}

TEST(DeltaBinaryPacked, ReadsALastMiniblockCutShortOfItsPadding) {
  std::vector<int64_t> values = {5, 9, 1, 1000, 7};
  std::vector<uint8_t> bytes = Encode(values);
  // Deltas 4, -8, 999, -993 less the minimum: 997, 985, 1992, 0, in 11 bits: 4 need 6 bytes
  // of the miniblock's 44.
  ASSERT_EQ(bytes[bytes.size() - 44 - 4], 11);
  bytes.resize(bytes.size() - 38);
  EXPECT_EQ(Decode<int64_t>(bytes, values.size()), values);
  bytes.pop_back();
  EXPECT_THROW(Decode<int64_t>(bytes, values.size()), InputError);
}

TEST(DeltaBinaryPacked, EveryTruncationIsAnInputError) {
  std::vector<int64_t> values(300);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i * 7919 % 1013);
  const std::vector<uint8_t> bytes = Encode(values);
  for (size_t size = 0; size < bytes.size(); ++size) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    try {
      std::vector<int64_t> got = Decode<int64_t>(cut, values.size());
      // Only the padding of the last miniblock may go.
      EXPECT_EQ(got, values);
    } catch (const InputError&) {
    }
  }
}

TEST(DeltaBinaryPacked, RefusesHeadersTheSpecificationForbids) {
  auto header = [](uint64_t block, uint64_t miniblocks, uint64_t total) {
    std::vector<uint8_t> out;
    PutUleb(block, &out);
    PutUleb(miniblocks, &out);
    PutUleb(total, &out);
    PutZigZag(0, &out);
    return out;
  };
  for (auto bad : {header(0, 1, 1), header(100, 1, 1), header(128, 0, 1), header(128, 3, 1),
                   header(128, 8, 1), header(uint64_t{1} << 40, 1, 1)}) {
    EXPECT_THROW(DeltaBinaryPackedDecoder(bad.data(), bad.data() + bad.size(), 64), InputError);
  }
  // Ten bytes of continuation: an integer longer than 64 bits.
  std::vector<uint8_t> endless(12, 0xff);
  EXPECT_THROW(DeltaBinaryPackedDecoder(endless.data(), endless.data() + endless.size(), 64),
               InputError);
}

TEST(DeltaBinaryPacked, RefusesMiniblocksWiderThanTheValuesAndMoreValuesThanItHolds) {
  // Deltas 2^40 and -2^40, less the minimum: 2^41 and 0, in 42 bits.
  std::vector<uint8_t> bytes = Encode<int64_t>({0, int64_t{1} << 40, 0});
  EXPECT_THROW(Decode<int32_t>(bytes, 3), InputError);
  EXPECT_EQ(Decode<int64_t>(bytes, 3), (std::vector<int64_t>{0, int64_t{1} << 40, 0}));
  EXPECT_THROW(Decode<int64_t>(bytes, 4), InputError);
}

TEST(DeltaBinaryPacked, ASingleValueNeedsNoBlock) {
  const std::vector<uint8_t> bytes = Encode<int32_t>({-42});
  EXPECT_EQ(Decode<int32_t>(bytes, 1), std::vector<int32_t>{-42});
  EXPECT_EQ(Decode<int32_t>(bytes, 0), std::vector<int32_t>{});
}

}  // namespace
}  // namespace parquet
}  // namespace sparktorch
