// The Predictor: a trained model's outputs as prediction lines (argmax, vector, probabilities,
// class), split from trainer_test.cc.
#include "core/train/predictor.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/spec_compiler.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// A linear layer 2 -> 3 with weights set by hand.
torch::jit::Module KnownLinear() {
  CompiledSpec c = CompileSpec(
      json::parse(R"({"layers": [{"type": "linear", "in_features": 2, "out_features": 3}]})"), {},
      0);
  torch::NoGradGuard no_grad;
  for (const auto& p : c.module.named_parameters()) {
    if (p.name == "0.weight") {
      p.value.copy_(torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}}));
    }
    if (p.name == "0.bias") p.value.copy_(torch::tensor({0.0f, 0.5f, -4.0f}));
  }
  return c.module;
}

std::vector<std::string> PredictLines(Predictor& predictor, const torch::Tensor& features) {
  std::vector<std::string> lines;
  predictor.Predict(features, [&](int64_t row, std::string_view text) {
    EXPECT_EQ(row, static_cast<int64_t>(lines.size()));
    lines.emplace_back(text);
  });
  return lines;
}

// Outputs: row {3, 1} -> {3, 1.5, 0}; row {0, 2} -> {0, 2.5, -2}; row {4, 4} -> {4, 4.5, 4}.
torch::Tensor KnownRows() { return torch::tensor({{3.0f, 1.0f}, {0.0f, 2.0f}, {4.0f, 4.0f}}); }

TEST(Predictor, ArgmaxGivesTheIndexOfTheLargestOutput) {
  Predictor predictor(KnownLinear(), torch::kCPU, {2}, PredictionKind::kArgmax, "cross_entropy");
  EXPECT_EQ(PredictLines(predictor, KnownRows()), (std::vector<std::string>{"0", "1", "1"}));
}

TEST(Predictor, VectorGivesEveryOutputCommaSeparated) {
  Predictor predictor(KnownLinear(), torch::kCPU, {2}, PredictionKind::kVector, "mse");
  EXPECT_EQ(PredictLines(predictor, KnownRows()),
            (std::vector<std::string>{"3,1.5,0", "0,2.5,-2", "4,4.5,4"}));
}

TEST(Predictor, ProbabilitiesAreTheSoftmaxAfterCrossEntropy) {
  Predictor predictor(KnownLinear(), torch::kCPU, {2}, PredictionKind::kProbabilities,
                      "cross_entropy");
  torch::Tensor rows = KnownRows();
  std::vector<std::string> lines = PredictLines(predictor, rows);
  ASSERT_EQ(lines.size(), 3u);
  torch::Tensor want = torch::softmax(torch::tensor({{3.0f, 1.5f, 0.0f}, {0.0f, 2.5f, -2.0f},
                                                     {4.0f, 4.5f, 4.0f}}),
                                      1);
  for (int64_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(lines[i]);
    std::vector<double> values;
    size_t start = 0;
    while (start <= lines[i].size()) {
      size_t comma = lines[i].find(',', start);
      if (comma == std::string::npos) comma = lines[i].size();
      values.push_back(std::stod(lines[i].substr(start, comma - start)));
      start = comma + 1;
    }
    ASSERT_EQ(values.size(), 3u);
    double sum = 0;
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(values[j], want[i][j].item<double>(), 1e-6);
      sum += values[j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // Row 3: softmax of {4, 4.5, 4}, written as float32 prints shortest.
  EXPECT_EQ(lines[2], "0.27406862,0.45186275,0.27406862");
}

TEST(Predictor, ProbabilitiesAreExpAfterNllAndSigmoidAfterBceWithLogits) {
  torch::Tensor row = torch::tensor({{0.0f, 2.0f}});  // outputs {0, 2.5, -2}
  Predictor nll(KnownLinear(), torch::kCPU, {2}, PredictionKind::kProbabilities, "nll");
  EXPECT_EQ(PredictLines(nll, row), (std::vector<std::string>{"1,12.182494,0.13533528"}));
  Predictor bce(KnownLinear(), torch::kCPU, {2}, PredictionKind::kProbabilities,
                "bce_with_logits");
  EXPECT_EQ(PredictLines(bce, row), (std::vector<std::string>{"0.5,0.9241418,0.11920292"}));
}

TEST(Predictor, ClassOfABinaryModelIsItsProbabilityAgainstOneHalf) {
  torch::Tensor rows = torch::tensor({{0.0f, 2.0f}, {3.0f, 1.0f}});  // outputs {0, 2.5, -2}, {3, 1.5, 0}
  // Logits: a probability of at least 0.5 is a logit of at least 0.
  Predictor logits(KnownLinear(), torch::kCPU, {2}, PredictionKind::kClass, "bce_with_logits");
  EXPECT_EQ(PredictLines(logits, rows), (std::vector<std::string>{"1,1,0", "1,1,1"}));
  Predictor probabilities(KnownLinear(), torch::kCPU, {2}, PredictionKind::kClass, "bce");
  EXPECT_EQ(PredictLines(probabilities, rows), (std::vector<std::string>{"0,1,0", "1,1,0"}));
  // A multi-class model's class is its argmax.
  Predictor multi(KnownLinear(), torch::kCPU, {2}, PredictionKind::kClass, "cross_entropy");
  EXPECT_EQ(PredictLines(multi, rows), (std::vector<std::string>{"1", "0"}));
}

TEST(Predictor, RefusesProbabilitiesOfARegression) {
  try {
    Predictor predictor(KnownLinear(), torch::kCPU, {2}, PredictionKind::kProbabilities, "mse");
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--prediction probabilities needs a classifier; this model was trained with mse "
              "(use --prediction vector)");
  }
  try {
    Predictor predictor(KnownLinear(), torch::kCPU, {2}, PredictionKind::kClass, "l1");
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--prediction class needs a classifier; this model was trained with l1 "
              "(use --prediction vector)");
  }
}

TEST(Predictor, ReshapesRowsToTheInputShape) {
  CompiledSpec c = CompileSpec(
      json::parse(R"({"input_shape": [2, 2], "layers": [{"type": "flatten"}]})"), {}, 0);
  Predictor predictor(c.module, torch::kCPU, {2, 2}, PredictionKind::kVector, "");
  EXPECT_EQ(PredictLines(predictor, torch::tensor({{1.0f, 2.0f, 3.0f, 0.25f}})),
            (std::vector<std::string>{"1,2,3,0.25"}));
  EXPECT_TRUE(PredictLines(predictor, torch::zeros({0, 4})).empty());
}

TEST(Predictor, DefaultPredictionFollowsTheLoss) {
  EXPECT_EQ(DefaultPrediction("cross_entropy"), PredictionKind::kArgmax);
  EXPECT_EQ(DefaultPrediction("nll"), PredictionKind::kArgmax);
  EXPECT_EQ(DefaultPrediction("bce"), PredictionKind::kClass);
  EXPECT_EQ(DefaultPrediction("bce_with_logits"), PredictionKind::kClass);
  EXPECT_EQ(ValueIn(kPredictionKindNames, "class"), PredictionKind::kClass);
  EXPECT_EQ(DefaultPrediction("mse"), PredictionKind::kVector);
  EXPECT_EQ(ValueIn(kPredictionKindNames, "vector"), PredictionKind::kVector);
  EXPECT_EQ(ValueIn(kPredictionKindNames, "probability"), std::nullopt);
  EXPECT_STREQ(NameIn(kPredictionKindNames, PredictionKind::kProbabilities), "probabilities");
}

}  // namespace
}  // namespace sparktorch
