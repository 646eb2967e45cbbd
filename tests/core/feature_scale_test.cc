#include "core/train/feature_scale.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace sparktorch {
namespace {

using nlohmann::json;

TEST(FeatureScale, MeasuresRootMeanSquareAndLargestMagnitude) {
  const FeatureScale scale = MeasureFeatureScale(torch::tensor({{3.0f, -4.0f}, {0.0f, 0.0f}}));
  EXPECT_EQ(4, scale.values);
  EXPECT_EQ(25, scale.sum_squares);
  EXPECT_EQ(4, scale.max_abs);
  EXPECT_DOUBLE_EQ(2.5, scale.Rms());
}

TEST(FeatureScale, NoRowsMeasureZero) {
  EXPECT_EQ(0, MeasureFeatureScale(torch::Tensor()).Rms());
  EXPECT_EQ(0, MeasureFeatureScale(torch::zeros({0, 784})).values);
}

TEST(FeatureScale, AddsUpInDoubleOverManyValues) {
  // 255 in float32 squared, a million times: float accumulation would drift from 65,025e6.
  const FeatureScale scale = MeasureFeatureScale(torch::full({1000, 1000}, 255.0f));
  EXPECT_DOUBLE_EQ(65025e6, scale.sum_squares);
  EXPECT_DOUBLE_EQ(255, scale.Rms());
}

TEST(FeatureScale, WarnsAboveTenTimesUnitScaleOnly) {
  FeatureScale at_limit{1, kMaxFeatureRms * kMaxFeatureRms, kMaxFeatureRms};
  EXPECT_EQ("", UnscaledFeaturesWarning(at_limit, "stdin"));
  EXPECT_EQ("", UnscaledFeaturesWarning(FeatureScale(), "stdin"));
  FeatureScale pixels{4, 4 * 115.6 * 115.6, 255};
  const std::string warning = UnscaledFeaturesWarning(pixels, "worker 1's rows");
  EXPECT_EQ(0u, warning.find("worker 1's rows: features far from unit scale (root mean square 116, "
                             "largest |value| 255): "))
      << warning;
  EXPECT_NE(std::string::npos, warning.find("divide by 255")) << warning;
}

TEST(FeatureScale, SpecModelsTakeFeaturesAsTheyAreUnlessTheyNormaliseOrEmbed) {
  const json mlp = json::parse(R"({"layers": [{"type": "linear", "in_features": 784},
                                               "relu"]})");
  EXPECT_TRUE(SpecTakesFeaturesAsTheyAre(mlp));
  const json cnn = json::parse(R"({"layers": [{"type": "reshape", "shape": [1, 28, 28]},
                                               {"type": "conv2d"}, {"type": "batch_norm2d"}]})");
  EXPECT_TRUE(SpecTakesFeaturesAsTheyAre(cnn));  // normalises what the convolution made of them
  const json normalised = json::parse(R"({"layers": [{"type": "flatten"}, {"type": "batch_norm1d"},
                                                      {"type": "linear"}]})");
  EXPECT_FALSE(SpecTakesFeaturesAsTheyAre(normalised));
  EXPECT_FALSE(SpecTakesFeaturesAsTheyAre(json::parse(R"({"layers": ["layer_norm", "linear"]})")));
  const json tokens = json::parse(R"({"layers": [{"type": "embedding"}, "flatten", "linear"]})");
  EXPECT_FALSE(SpecTakesFeaturesAsTheyAre(tokens));
  EXPECT_FALSE(SpecTakesFeaturesAsTheyAre(json::object()));
}

}  // namespace
}  // namespace sparktorch
