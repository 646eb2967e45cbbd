#include "core/train/metrics.h"

#include <cmath>
#include <map>

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace sparktorch {
namespace {

std::map<std::string, double> AsMap(const MetricList& list) { return {list.begin(), list.end()}; }

TEST(MetricSums, ClassificationAccuracyAndTop5WithMoreThanTenClasses) {
  MetricSums m("cross_entropy", 12);
  torch::Tensor out = torch::zeros({3, 12});
  out[0][4] = 5;  // class 4: right
  out[1][0] = 5;  // class 0 first, class 7 in its top 5
  out[1][7] = 1;
  out[2][1] = 5;  // class 11 nowhere near
  out[2][11] = -9;
  m.Add(out, torch::tensor({4, 7, 11}, torch::kLong));
  EXPECT_DOUBLE_EQ(*m.Accuracy(), 1.0 / 3);
  EXPECT_EQ(AsMap(m.Others()), (std::map<std::string, double>{{"top5_accuracy", 2.0 / 3}}));
  // Ten classes or fewer: no top-5.
  MetricSums ten("nll", 10);
  ten.Add(torch::zeros({1, 10}), torch::tensor({0}, torch::kLong));
  EXPECT_TRUE(ten.Others().empty());
}

TEST(MetricSums, BinaryAsSklearnsPrecisionRecallAndRocAuc) {
  // sklearn: precision_score 1.0, recall_score 0.5, accuracy_score 0.75, roc_auc_score 0.75.
  const torch::Tensor p = torch::tensor({0.1f, 0.4f, 0.35f, 0.8f}).reshape({4, 1});
  const torch::Tensor y = torch::tensor({0.0f, 0.0f, 1.0f, 1.0f}).reshape({4, 1});
  MetricSums probabilities("bce", 1);
  probabilities.Add(p, y);
  MetricSums logits("bce_with_logits", 1);
  logits.Add(torch::log(p / (1 - p)), y);
  for (MetricSums* m : {&probabilities, &logits}) {
    EXPECT_DOUBLE_EQ(*m->Accuracy(), 0.75);
    std::map<std::string, double> got = AsMap(m->Others());
    EXPECT_DOUBLE_EQ(got["precision"], 1.0);
    EXPECT_DOUBLE_EQ(got["recall"], 0.5);
    EXPECT_DOUBLE_EQ(got["auc"], 0.75);
  }
}

TEST(MetricSums, BinaryAucCountsTiesHalfAndNeedsBothClasses) {
  MetricSums m("bce", 1);
  m.Add(torch::tensor({0.5f, 0.5f}).reshape({2, 1}), torch::tensor({0.0f, 1.0f}).reshape({2, 1}));
  EXPECT_DOUBLE_EQ(AsMap(m.Others())["auc"], 0.5);
  MetricSums one_class("bce", 1);
  one_class.Add(torch::tensor({0.2f, 0.9f}).reshape({2, 1}), torch::ones({2, 1}));
  EXPECT_EQ(AsMap(one_class.Others()).count("auc"), 0u);
}

TEST(MetricSums, RegressionAsSklearnsMseMaeAndR2) {
  const torch::Tensor out = torch::tensor({{1.0f, 2.0f}, {3.0f, 5.0f}, {2.0f, 2.0f}});
  const torch::Tensor y = torch::tensor({{1.0f, 1.0f}, {2.0f, 4.0f}, {4.0f, 2.0f}});
  MetricSums m("mse", 2);
  m.Add(out, y);
  EXPECT_FALSE(m.Accuracy().has_value());
  std::map<std::string, double> got = AsMap(m.Others());
  // Squared errors 0, 1, 1, 1, 4, 0; absolute 0, 1, 1, 1, 2, 0.
  EXPECT_DOUBLE_EQ(got["mse"], 7.0 / 6);
  EXPECT_DOUBLE_EQ(got["mae"], 5.0 / 6);
  // Output 0: SSE 5, SST 14/3; output 1: SSE 2, SST 14/3. sklearn's r2_score (uniform_average)
  // and numpy: 0.25.
  EXPECT_NEAR(got["r2"], ((1 - 5 / (14.0 / 3)) + (1 - 2 / (14.0 / 3))) / 2, 1e-12);
  EXPECT_NEAR(got["r2"], 0.25, 1e-12);
}

TEST(MetricSums, SumsOfPartsAreTheSumsOfTheWhole) {
  // What ranks do: each sums its rows, an all-reduce adds the sums.
  const torch::Tensor out = torch::randn({40, 1});
  const torch::Tensor y = (torch::rand({40, 1}) > 0.5).to(torch::kFloat);
  MetricSums whole("bce_with_logits", 1), a("bce_with_logits", 1), b("bce_with_logits", 1);
  whole.Add(out, y);
  a.Add(out.narrow(0, 0, 25), y.narrow(0, 0, 25));
  b.Add(out.narrow(0, 25, 15), y.narrow(0, 25, 15));
  for (size_t i = 0; i < a.sums().size(); ++i) a.sums()[i] += b.sums()[i];
  EXPECT_EQ(a.Others(), whole.Others());
  EXPECT_EQ(a.Accuracy(), whole.Accuracy());
}

}  // namespace
}  // namespace sparktorch
