#include "core/train/loss.h"
#include "core/train/optimizer.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "formats/error.h"

// The optimizer specs and the losses (split from trainer_test.cc).

namespace sparktorch {
namespace {

using nlohmann::json;

std::string OptimizerErrorOf(const json& spec) {
  try {
    CompleteOptimizerSpec(spec);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

std::string LossErrorOf(const json& spec) {
  try {
    Loss::FromSpec(spec);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

// ---- Optimizer specs ----

TEST(CompleteOptimizerSpec, NameAloneGetsTorchOptimDefaults) {
  EXPECT_EQ(CompleteOptimizerSpec("adam"),
            json::parse(R"({"type": "adam", "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8,
                            "weight_decay": 0.0, "amsgrad": false})"));
  EXPECT_EQ(CompleteOptimizerSpec("sgd"),
            json::parse(R"({"type": "sgd", "lr": 0.01, "momentum": 0.0, "dampening": 0.0,
                            "weight_decay": 0.0, "nesterov": false})"));
  EXPECT_EQ(CompleteOptimizerSpec(json::parse(R"({"type": "adamw"})")),
            json::parse(R"({"type": "adamw", "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8,
                            "weight_decay": 0.01, "amsgrad": false})"));
  EXPECT_EQ(CompleteOptimizerSpec("rmsprop"),
            json::parse(R"({"type": "rmsprop", "lr": 0.01, "alpha": 0.99, "eps": 1e-8,
                            "weight_decay": 0.0, "momentum": 0.0, "centered": false})"));
  EXPECT_EQ(CompleteOptimizerSpec("adagrad"),
            json::parse(R"({"type": "adagrad", "lr": 0.01, "lr_decay": 0.0, "weight_decay": 0.0,
                            "initial_accumulator_value": 0.0, "eps": 1e-10})"));
}

TEST(CompleteOptimizerSpec, KeepsGivenOptions) {
  json out = CompleteOptimizerSpec(
      json::parse(R"({"type": "sgd", "lr": 0.5, "momentum": 0.9, "nesterov": true})"));
  EXPECT_EQ(out, json::parse(R"({"type": "sgd", "lr": 0.5, "momentum": 0.9, "dampening": 0.0,
                                 "weight_decay": 0.0, "nesterov": true})"));
  // A completed spec completes to itself.
  EXPECT_EQ(CompleteOptimizerSpec(out), out);
}

TEST(CompleteOptimizerSpec, RefusesUnknownType) {
  EXPECT_EQ(OptimizerErrorOf("adamm"),
            "optimizer: unknown type \"adamm\"; known: sgd, adam, adamw, rmsprop, adagrad");
}

TEST(CompleteOptimizerSpec, RefusesUnknownField) {
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"type": "adam", "learning_rate": 0.1})")),
            "optimizer (adam): unknown field \"learning_rate\"");
}

TEST(CompleteOptimizerSpec, RefusesBadValues) {
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"type": "sgd", "lr": -1})")),
            "optimizer (sgd): \"lr\" must be a number >= 0.0, got -1");
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"type": "sgd", "lr": "fast"})")),
            "optimizer (sgd): \"lr\" must be a number, got \"fast\"");
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"type": "adam", "betas": [0.9]})")),
            "optimizer (adam): \"betas\" must be a list of 2 numbers in [0.0, 1.0), got [0.9]");
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"type": "adam", "betas": [0.9, 1.0]})")),
            "optimizer (adam): \"betas\" must be a list of 2 numbers in [0.0, 1.0), got "
            "[0.9,1.0]");
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"type": "sgd", "nesterov": true})")),
            "optimizer (sgd): \"nesterov\" needs a momentum above 0 and zero dampening");
  EXPECT_EQ(OptimizerErrorOf(json::parse(R"({"lr": 0.1})")),
            "optimizer: \"type\" is required (a string)");
  EXPECT_EQ(OptimizerErrorOf(json(3)),
            "optimizer: expected a name or an object with a \"type\", got 3");
}

TEST(MakeOptimizer, BuildsTheOptimizerWithTheSpecsOptions) {
  torch::Tensor p = torch::zeros({2}, torch::requires_grad());
  auto opt = MakeOptimizer(CompleteOptimizerSpec(json::parse(R"({"type": "sgd", "lr": 0.5})")),
                           {p});
  p.mutable_grad() = torch::tensor({1.0f, -2.0f});
  opt->step();
  EXPECT_TRUE(torch::equal(p.detach(), torch::tensor({-0.5f, 1.0f})));
}

// ---- Losses ----

TEST(Loss, FromSpecAcceptsNameOrObjectAndSpellsOutOptions) {
  EXPECT_EQ(Loss::FromSpec("cross_entropy").ToJson(),
            json::parse(R"({"type": "cross_entropy", "label_smoothing": 0.0})"));
  EXPECT_EQ(Loss::FromSpec(json::parse(R"({"type": "smooth_l1", "beta": 0.5})")).ToJson(),
            json::parse(R"({"type": "smooth_l1", "beta": 0.5})"));
  EXPECT_EQ(Loss::FromSpec("mse").ToJson(), json::parse(R"({"type": "mse"})"));
  EXPECT_TRUE(Loss::FromSpec("nll").takes_class_index());
  EXPECT_FALSE(Loss::FromSpec("bce").takes_class_index());
}

TEST(Loss, FromSpecRefusesUnknownTypeFieldAndValue) {
  EXPECT_EQ(LossErrorOf("crossentropy"),
            "loss: unknown type \"crossentropy\"; known: cross_entropy, nll, mse, l1, smooth_l1, "
            "bce, bce_with_logits");
  EXPECT_EQ(LossErrorOf(json::parse(R"({"type": "mse", "reduction": "sum"})")),
            "loss (mse): unknown field \"reduction\"");
  EXPECT_EQ(LossErrorOf(json::parse(R"({"type": "cross_entropy", "label_smoothing": 2})")),
            "loss (cross_entropy): \"label_smoothing\" must be a number [0.0, 1.0], got 2");
  EXPECT_EQ(LossErrorOf(json(7)), "loss: expected a name or an object with a \"type\", got 7");
}

TEST(Loss, ComputesTorchsLosses) {
  torch::Tensor out = torch::tensor({{2.0f, 0.0f, -1.0f}, {0.5f, 0.5f, 3.0f}});
  torch::Tensor cls = torch::tensor({0, 2}, torch::kLong);
  // cross_entropy by hand: mean of -log softmax at the target.
  double want = -(torch::log_softmax(out, 1)[0][0] + torch::log_softmax(out, 1)[1][2]).item<double>() / 2;
  EXPECT_NEAR(Loss::FromSpec("cross_entropy").Compute(out, cls).item<double>(), want, 1e-6);
  torch::Tensor target = torch::tensor({{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 1.0f}});
  // mse: (1 + 0 + 1 + 0 + 0 + 4) / 6.
  EXPECT_NEAR(Loss::FromSpec("mse").Compute(out, target).item<double>(), 1.0, 1e-6);
  // l1: (1 + 0 + 1 + 0 + 0 + 2) / 6.
  EXPECT_NEAR(Loss::FromSpec("l1").Compute(out, target).item<double>(), 4.0 / 6, 1e-6);
}

TEST(Loss, ClassWeightsAndPosWeightAsTorchNn) {
  const torch::Tensor out = torch::tensor({{2.0f, 0.5f, -1.0f}, {0.1f, 0.2f, 3.0f}});
  const torch::Tensor classes = torch::tensor({0, 2}, torch::kLong);
  // nn.CrossEntropyLoss(weight=w): sum_i w[y_i] * loss_i / sum_i w[y_i].
  Loss weighted = Loss::FromSpec(json::parse(R"({"type": "cross_entropy", "weight": [3, 1, 0.5]})"));
  const torch::Tensor per_row = -torch::log_softmax(out, 1).gather(1, classes.unsqueeze(1)).squeeze(1);
  EXPECT_NEAR(weighted.Compute(out, classes).item<double>(),
              ((3 * per_row[0] + 0.5 * per_row[1]) / 3.5).item<double>(), 1e-6);
  EXPECT_EQ(weighted.ToJson(), json::parse(R"({"type": "cross_entropy", "label_smoothing": 0.0,
                                              "weight": [3.0, 1.0, 0.5]})"));
  // nn.BCEWithLogitsLoss(pos_weight=p): -(p y log s(x) + (1 - y) log(1 - s(x))), averaged.
  Loss positive = Loss::FromSpec(json::parse(R"({"type": "bce_with_logits", "pos_weight": [4, 1, 1]})"));
  const torch::Tensor targets = torch::tensor({{1.0f, 0.0f, 1.0f}, {0.0f, 1.0f, 0.0f}});
  const torch::Tensor p = torch::tensor({4.0f, 1.0f, 1.0f});
  const torch::Tensor want = -(p * targets * torch::log_sigmoid(out) + (1 - targets) * torch::log_sigmoid(-out));
  EXPECT_NEAR(positive.Compute(out, targets).item<double>(), want.mean().item<double>(), 1e-6);
  EXPECT_EQ(positive.CheckWeights({3}), "");
  EXPECT_EQ(positive.CheckWeights({2}), "loss (bce_with_logits): \"pos_weight\" has 3 numbers for 2 outputs");
  EXPECT_EQ(weighted.CheckWeights({10}), "loss (cross_entropy): \"weight\" has 3 numbers for 10 classes");
  EXPECT_EQ(LossErrorOf(json::parse(R"({"type": "nll", "weight": []})")),
            "loss (nll): \"weight\" must be a non-empty list of numbers >= 0.0, got []");
  EXPECT_EQ(LossErrorOf(json::parse(R"({"type": "mse", "weight": [1]})")),
            "loss (mse): unknown field \"weight\"");
}

TEST(Loss, CheckLabelAcceptsGoodLabels) {
  EXPECT_EQ(Loss::FromSpec("cross_entropy").CheckLabel({9}, {10}), "");
  EXPECT_EQ(Loss::FromSpec("nll").CheckLabel({0}, {10}), "");
  EXPECT_EQ(Loss::FromSpec("mse").CheckLabel({1, 2, 3}, {3}), "");
  EXPECT_EQ(Loss::FromSpec("bce").CheckLabel({0, 1}, {2}), "");
}

TEST(Loss, CheckLabelRefusesClassOutOfRange) {
  EXPECT_EQ(Loss::FromSpec("cross_entropy").CheckLabel({10}, {10}),
            "label 10 is not a class index 0..9 (cross_entropy over 10 outputs)");
  EXPECT_EQ(Loss::FromSpec("nll").CheckLabel({-1}, {3}),
            "label -1 is not a class index 0..2 (nll over 3 outputs)");
}

TEST(Loss, CheckLabelRefusesNonIntegerClass) {
  EXPECT_EQ(Loss::FromSpec("cross_entropy").CheckLabel({2.5f}, {10}),
            "label 2.5 is not a class index 0..9 (cross_entropy over 10 outputs)");
  EXPECT_EQ(Loss::FromSpec("cross_entropy").CheckLabel({NAN}, {10}),
            "label nan is not a class index 0..9 (cross_entropy over 10 outputs)");
}

TEST(Loss, CheckLabelRefusesWrongLabelWidth) {
  EXPECT_EQ(Loss::FromSpec("cross_entropy").CheckLabel({1, 2}, {10}),
            "expected one class index as the label for cross_entropy, got 2 values");
  EXPECT_EQ(Loss::FromSpec("mse").CheckLabel({1, 2}, {3}),
            "expected a label of 3 values (the model's outputs per row), got 2");
  EXPECT_EQ(Loss::FromSpec("mse").CheckLabel({1, 2}, {1}),
            "expected a label of 1 value (the model's outputs per row), got 2");
}

TEST(Loss, CheckLabelRefusesBceTargetOutsideZeroOne) {
  EXPECT_EQ(Loss::FromSpec("bce").CheckLabel({0, 1.5f}, {2}),
            "label value 1.5 is outside [0, 1] (bce)");
  EXPECT_EQ(Loss::FromSpec("bce_with_logits").CheckLabel({-0.25f}, {1}),
            "label value -0.25 is outside [0, 1] (bce_with_logits)");
}

}  // namespace
}  // namespace sparktorch
