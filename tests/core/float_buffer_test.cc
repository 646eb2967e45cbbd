#include "core/data/float_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/data/spill.h"
#include "formats/error.h"

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

TEST(FloatBuffer, BeyondItsBudgetKeepsEveryValueInAFileMapping) {
  SpillBudget budget({size_t{4} << 20, ::testing::TempDir()});
  FloatBuffer buffer(&budget);
  std::vector<float> row(784);
  // 3,000 rows (9.4 MB): the budget takes the first 2 MiB mapping, not the 4 MiB one, so the
  // buffer spills; 9.4 MB is more than its 4 MiB stage, so the file is written more than once.
  for (int r = 0; r < 3000; ++r) {
    for (int i = 0; i < 784; ++i) row[i] = static_cast<float>(r) + static_cast<float>(i) / 1024;
    buffer.Append(row.data(), row.size());
  }
  EXPECT_TRUE(buffer.spilled());
  size_t bytes = 0;
  float* data = buffer.Release(&bytes);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(budget.spilled_bytes(), 3000u * 784u * sizeof(float));  // the last stage too
  EXPECT_EQ(bytes, 3000u * 784u * sizeof(float));
  for (int r = 0; r < 3000; r += 7) {
    for (int i = 0; i < 784; i += 13) {
      ASSERT_EQ(data[r * 784 + i], static_cast<float>(r) + static_cast<float>(i) / 1024)
          << "row " << r << ", value " << i;
    }
  }
  // A private mapping: writing changes this process's copy, not the file.
  data[0] = -1;
  EXPECT_EQ(data[0], -1);
  FloatBuffer::Free(data, bytes);
  // What the buffer took of the budget while in memory came back when it spilled.
  EXPECT_TRUE(budget.Take(size_t{4} << 20));
}

TEST(FloatBuffer, WithinItsBudgetStaysInMemory) {
  SpillBudget budget({size_t{64} << 20, "/nonexistent"});  // never opened
  FloatBuffer buffer(&budget);
  std::vector<float> row(784, 0.5f);
  for (int r = 0; r < 3000; ++r) buffer.Append(row.data(), row.size());
  EXPECT_FALSE(buffer.spilled());
  EXPECT_EQ(budget.spilled_bytes(), 0u);
  size_t bytes = 0;
  float* data = buffer.Release(&bytes);
  EXPECT_EQ(data[3000 * 784 - 1], 0.5f);
  FloatBuffer::Free(data, bytes);
}

TEST(SpillBudget, AnUnusableDirectoryIsASpillErrorThatNamesIt) {
  SpillBudget budget({0, "/nonexistent/spill"});
  FloatBuffer buffer(&budget);
  const float value = 1;
  try {
    buffer.Append(&value, 1);
    FAIL() << "no SpillError";
  } catch (const SpillError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot spill rows beyond 0 bytes of memory to /nonexistent/spill: No such file or "
              "directory (--spill-dir names a directory for them)");
  }
}

TEST(SpillDir, IsTheExecutorsFirstLocalDirectoryElseTmpdirElseTmp) {
  setenv("LOCAL_DIRS", "/yarn1/app,/yarn2/app", 1);
  setenv("SPARK_EXECUTOR_DIRS", "/work1/exec:/work2/exec", 1);
  setenv("SPARK_LOCAL_DIRS", "/data1/spark,/data2/spark", 1);
  setenv("TMPDIR", "/scratch", 1);
  EXPECT_EQ(DefaultSpillDir(), "/work1/exec");  // LOCAL_DIRS only in a YARN container
  setenv("CONTAINER_ID", "container_1", 1);
  EXPECT_EQ(DefaultSpillDir(), "/yarn1/app");
  unsetenv("CONTAINER_ID");
  unsetenv("LOCAL_DIRS");
  unsetenv("SPARK_EXECUTOR_DIRS");
  EXPECT_EQ(DefaultSpillDir(), "/data1/spark");
  unsetenv("SPARK_LOCAL_DIRS");
  EXPECT_EQ(DefaultSpillDir(), "/scratch");
  unsetenv("TMPDIR");
  EXPECT_EQ(DefaultSpillDir(), "/tmp");
}

TEST(SizeText, StatesBytesInDecimalUnits) {
  EXPECT_EQ(SizeText(0), "0 bytes");
  EXPECT_EQ(SizeText(999), "999 bytes");
  EXPECT_EQ(SizeText(size_t{1} << 20), "1.05 MB");
  EXPECT_EQ(SizeText(37680000), "37.7 MB");
  EXPECT_EQ(SizeText(1880000000), "1.88 GB");
}

}  // namespace
}  // namespace sparktorch
