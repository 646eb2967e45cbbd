#include "core/train/early_stopping.h"

#include <limits>
#include <optional>

#include <gtest/gtest.h>

namespace sparktorch {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using First = EarlyStopping::First;

TEST(EarlyStopping, NeverStopsWithPatienceZero) {
  EarlyStopping stopping(0, First::kMustImprove);
  for (int epoch = 1; epoch <= 20; ++epoch) EXPECT_FALSE(stopping.Observe(1.0 + epoch, std::nullopt));
}

TEST(EarlyStopping, StopsAfterPatienceEpochsWithoutImprovement) {
  for (First first : {First::kMustImprove, First::kIsBest}) {
    EarlyStopping stopping(2, first);
    EXPECT_FALSE(stopping.Observe(1.0, std::nullopt));
    EXPECT_FALSE(stopping.Observe(1.1, std::nullopt));
    EXPECT_TRUE(stopping.Observe(1.2, std::nullopt));
  }
}

TEST(EarlyStopping, AnEqualLossIsNoImprovement) {
  EarlyStopping stopping(1, First::kMustImprove);
  EXPECT_FALSE(stopping.Observe(1.0, std::nullopt));
  EXPECT_TRUE(stopping.Observe(1.0, std::nullopt));
}

TEST(EarlyStopping, AnImprovementStartsTheCountAgain) {
  EarlyStopping stopping(2, First::kMustImprove);
  EXPECT_FALSE(stopping.Observe(1.0, std::nullopt));
  EXPECT_FALSE(stopping.Observe(1.5, std::nullopt));  // one without improvement
  EXPECT_FALSE(stopping.Observe(0.9, std::nullopt));  // better than 1.0: the count is 0 again
  EXPECT_FALSE(stopping.Observe(1.5, std::nullopt));
  EXPECT_TRUE(stopping.Observe(0.95, std::nullopt));  // worse than 0.9, the best
}

TEST(EarlyStopping, WatchesTheValidationLossWhenThereIsOne) {
  EarlyStopping stopping(1, First::kMustImprove);
  EXPECT_FALSE(stopping.Observe(1.0, 2.0));
  EXPECT_TRUE(stopping.Observe(0.5, 2.0));  // training improved, validation did not
  EarlyStopping training_only(1, First::kMustImprove);
  EXPECT_FALSE(training_only.Observe(1.0, std::nullopt));
  EXPECT_FALSE(training_only.Observe(0.5, std::nullopt));
}

TEST(EarlyStopping, ANaNFirstLossIsNoImprovementUnlessTheFirstIsAlwaysBest) {
  EarlyStopping must_improve(1, First::kMustImprove);
  EXPECT_TRUE(must_improve.Observe(kNaN, std::nullopt));

  EarlyStopping is_best(1, First::kIsBest);
  EXPECT_FALSE(is_best.Observe(kNaN, std::nullopt));
  EXPECT_TRUE(is_best.Observe(0.5, std::nullopt));  // nothing is below a NaN best
}

}  // namespace
}  // namespace sparktorch
