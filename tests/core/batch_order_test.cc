#include "core/train/batch_order.h"

#include <algorithm>
#include <set>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace sparktorch {
namespace {

std::vector<int64_t> Rows(const at::Tensor& positions) {
  const at::Tensor p = positions.contiguous();
  return std::vector<int64_t>(p.data_ptr<int64_t>(), p.data_ptr<int64_t>() + p.numel());
}

// The positions of `epochs` epochs of `steps` steps each.
std::vector<std::vector<int64_t>> Epochs(BatchOrder& order, int epochs, int64_t steps) {
  std::vector<std::vector<int64_t>> out;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    order.StartEpoch(false);
    for (int64_t step = 0; step < steps; ++step) out.push_back(Rows(order.Step(step)));
  }
  return out;
}

TEST(BatchOrder, APassTakesEveryRowOnceInBatches) {
  BatchOrder order(10, 4, 0, true, 7);
  EXPECT_EQ(order.LocalSteps(), 3);
  const auto steps = Epochs(order, 2, 3);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> seen;
    for (int s = 0; s < 3; ++s) {
      EXPECT_EQ(steps[epoch * 3 + s].size(), s < 2 ? 4u : 2u);
      seen.insert(seen.end(), steps[epoch * 3 + s].begin(), steps[epoch * 3 + s].end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  }
  EXPECT_NE(steps[0], steps[3]);  // shuffled again
}

TEST(BatchOrder, StepsPerEpochTakeFullBatchesFromPassAfterPass) {
  // 10 rows, batches of 4: a pass gives two batches (8 distinct rows); its last 2 are dropped.
  BatchOrder order(10, 4, 3, true, 7);
  EXPECT_EQ(order.LocalSteps(), 3);
  const auto steps = Epochs(order, 2, 3);
  ASSERT_EQ(steps.size(), 6u);
  for (const auto& batch : steps) EXPECT_EQ(batch.size(), 4u);
  for (int pass = 0; pass < 3; ++pass) {
    std::set<int64_t> rows(steps[2 * pass].begin(), steps[2 * pass].end());
    rows.insert(steps[2 * pass + 1].begin(), steps[2 * pass + 1].end());
    EXPECT_EQ(rows.size(), 8u) << "pass " << pass;
  }
}

TEST(BatchOrder, WithoutShuffleThePassesKeepTheRowsOrder) {
  BatchOrder order(5, 2, 3, false, 0);
  EXPECT_EQ(Epochs(order, 1, 3),
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {0, 1}}));
}

TEST(BatchOrder, ABatchLargerThanTheRowsTakesThemAll) {
  BatchOrder whole(6, -1, 2, false, 0);
  EXPECT_EQ(Epochs(whole, 1, 2),
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}}));
  BatchOrder large(3, 8, 1, false, 0);
  EXPECT_EQ(Epochs(large, 1, 1), (std::vector<std::vector<int64_t>>{{0, 1, 2}}));
}

TEST(BatchOrder, NoRowsMeansEmptySteps) {
  BatchOrder none(0, 4, 0, true, 0);
  EXPECT_EQ(none.LocalSteps(), 0);
  BatchOrder fixed(0, 4, 5, true, 0);
  EXPECT_EQ(fixed.LocalSteps(), 5);
  fixed.StartEpoch(false);
  EXPECT_EQ(fixed.Step(0).numel(), 0);
}

TEST(BatchOrder, ASkippedRunGoesOnAsTheRunItContinues) {
  for (int64_t steps_per_epoch : {0, 3}) {
    BatchOrder whole(10, 4, steps_per_epoch, true, 11);
    const int64_t steps = whole.LocalSteps();
    const auto all = Epochs(whole, 3, steps);
    BatchOrder resumed(10, 4, steps_per_epoch, true, 11);
    resumed.Skip(2, steps);
    const auto last = Epochs(resumed, 1, steps);
    EXPECT_EQ(last, std::vector<std::vector<int64_t>>(all.end() - steps, all.end()))
        << "steps_per_epoch " << steps_per_epoch;
  }
}

}  // namespace
}  // namespace sparktorch
