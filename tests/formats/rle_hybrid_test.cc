#include "formats/parquet/rle_hybrid.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

TEST(RleHybrid, BitWidthIsTheBitsOfTheLargestValue) {
  EXPECT_EQ(BitWidth(0), 0);
  EXPECT_EQ(BitWidth(1), 1);
  EXPECT_EQ(BitWidth(3), 2);
  EXPECT_EQ(BitWidth(4), 3);
  EXPECT_EQ(BitWidth(0xffffffffu), 32);
}

TEST(RleHybrid, DecodesRunsAndBitPackedGroupsOfBooleans) {
  // A run of 5 ones (header 5 << 1), then one bit-packed group of 8 (header 1 << 1 | 1):
  // 0b01100101, least significant bit first.
  const std::vector<uint8_t> bytes = {0x0a, 0x01, 0x03, 0x65};
  std::vector<uint8_t> out(13);
  DecodeRleHybrid(bytes.data(), bytes.data() + bytes.size(), 1, 13, 1, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0}));
}

TEST(RleHybrid, DecodesWideValuesAndStopsAtTheCountAsked) {
  // A run of 3 values of 0x012345 (3 bytes at width 17), then more than is asked.
  const std::vector<uint8_t> bytes = {0x06, 0x45, 0x23, 0x01, 0x06, 0x00, 0x00, 0x00};
  std::vector<uint32_t> out(4);
  DecodeRleHybrid(bytes.data(), bytes.data() + bytes.size(), 17, 4, 0x1ffff, out.data());
  EXPECT_EQ(out, (std::vector<uint32_t>{0x012345, 0x012345, 0x012345, 0}));
}

TEST(RleHybrid, RefusesValuesAboveTheMaximumAndDataThatEndsFirst) {
  const std::vector<uint8_t> run_of_two = {0x04, 0x02};
  std::vector<uint8_t> out(4);
  EXPECT_THROW(DecodeRleHybrid(run_of_two.data(), run_of_two.data() + 2, 2, 2, 1, out.data()),
               InputError);
  EXPECT_THROW(DecodeRleHybrid(run_of_two.data(), run_of_two.data() + 2, 2, 4, 3, out.data()),
               InputError);
  EXPECT_THROW(DecodeRleHybrid(run_of_two.data(), run_of_two.data() + 2, 33, 1, 3, out.data()),
               InputError);
}

}  // namespace
}  // namespace parquet
}  // namespace sparktorch
