#include "core/data/float_buffer.h"

#include <gtest/gtest.h>

#include <vector>

namespace sparktorch {
namespace {

TEST(FloatBuffer, KeepsEveryValueInOrderAcrossGrowth) {
  FloatBuffer buffer;
  EXPECT_EQ(buffer.size(), 0u);
  std::vector<float> row(784);
  // 3,000 rows of 784 floats: 9.4 MB, so the 2 MiB mapping grows (remaps) three times.
  for (int r = 0; r < 3000; ++r) {
    for (int i = 0; i < 784; ++i) row[i] = static_cast<float>(r) + static_cast<float>(i) / 1024;
    buffer.Append(row.data(), row.size());
  }
  ASSERT_EQ(buffer.size(), 3000u * 784u);
  for (int r = 0; r < 3000; r += 7) {
    for (int i = 0; i < 784; i += 13) {
      ASSERT_EQ(buffer.data()[r * 784 + i], static_cast<float>(r) + static_cast<float>(i) / 1024)
          << "row " << r << ", value " << i;
    }
  }
}

TEST(FloatBuffer, ReleaseHandsOverTheMemoryAndEmptiesTheBuffer) {
  FloatBuffer buffer;
  const float values[] = {1.5f, -2.0f, 0.25f};
  buffer.Append(values, 3);
  size_t bytes = 0;
  float* data = buffer.Release(&bytes);
  ASSERT_NE(data, nullptr);
  EXPECT_GE(bytes, 3 * sizeof(float));
  EXPECT_EQ(data[2], 0.25f);
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.data(), nullptr);
  FloatBuffer::Free(data, bytes);
  // Empty, it has no memory to give; appending nothing maps none.
  buffer.Append(values, 0);
  EXPECT_EQ(buffer.Release(&bytes), nullptr);
  EXPECT_EQ(bytes, 0u);
}

}  // namespace
}  // namespace sparktorch
