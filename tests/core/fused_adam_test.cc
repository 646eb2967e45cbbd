#include "core/train/fused_adam.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/train/adam_kernel.h"
#include "core/train/optimizer_key.h"

// The one-pass Adam and AdamW against LibTorch's own, and the kernel against the formula.

namespace sparktorch {
namespace {

// Parameters of awkward sizes (vector tails), the same values twice.
std::vector<torch::Tensor> Params(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> out;
  for (int64_t n : {1, 7, 33, 1031}) out.push_back(torch::randn({n}).requires_grad_(true));
  out.push_back(torch::randn({13, 17}).requires_grad_(true));
  return out;
}

std::vector<torch::Tensor> Clone(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

// Runs `steps` steps on both optimizers with the same gradients, a learning rate and betas that
// change as a one-cycle schedule changes them, and returns the largest difference of weights
// relative to their size.
double LargestDifference(torch::optim::Optimizer& ours, std::vector<torch::Tensor>& a,
                         torch::optim::Optimizer& theirs, std::vector<torch::Tensor>& b, int steps) {
  torch::manual_seed(7);
  for (int step = 0; step < steps; ++step) {
    for (size_t i = 0; i < a.size(); ++i) {
      torch::Tensor g = torch::randn_like(a[i]) * (step % 5 == 4 ? 1e-4 : 1.0);
      a[i].mutable_grad() = g.clone();
      b[i].mutable_grad() = g.clone();
    }
    const double lr = 1e-3 * (1 + step % 3);
    for (auto* o : {&ours, &theirs}) {
      for (auto& group : o->param_groups()) {
        group.options().set_lr(lr);
        if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&group.options())) {
          adam->betas({0.85 + 0.01 * (step % 5), 0.999});
        } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&group.options())) {
          adamw->betas({0.85 + 0.01 * (step % 5), 0.999});
        }
      }
    }
    ours.step();
    theirs.step();
  }
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double scale = b[i].abs().max().item<double>() + 1e-3;
    largest = std::max(largest, (a[i] - b[i]).abs().max().item<double>() / scale);
  }
  return largest;
}

TEST(FusedAdam, FollowsLibTorchsAdam) {
  for (double weight_decay : {0.0, 0.01}) {
    auto a = Params(1);
    auto b = Clone(a);
    FusedAdam ours(a, torch::optim::AdamOptions(1e-3).weight_decay(weight_decay));
    torch::optim::Adam theirs(b, torch::optim::AdamOptions(1e-3).weight_decay(weight_decay));
    EXPECT_LT(LargestDifference(ours, a, theirs, b, 60), 1e-5) << "weight_decay " << weight_decay;
    // The same state, under the same keys: step counts and moments.
    for (size_t i = 0; i < a.size(); ++i) {
      auto& s = static_cast<torch::optim::AdamParamState&>(
          *ours.state().at(StateKeyOf(a[i])));
      auto& t = static_cast<torch::optim::AdamParamState&>(
          *theirs.state().at(StateKeyOf(b[i])));
      EXPECT_EQ(s.step(), 60);
      EXPECT_EQ(s.step(), t.step());
      EXPECT_TRUE(torch::allclose(s.exp_avg(), t.exp_avg(), 1e-5, 1e-7));
      EXPECT_TRUE(torch::allclose(s.exp_avg_sq(), t.exp_avg_sq(), 1e-5, 1e-9));
    }
  }
}

TEST(FusedAdam, AdamWFollowsLibTorchsAdamW) {
  auto a = Params(2);
  auto b = Clone(a);
  FusedAdamW ours(a, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  torch::optim::AdamW theirs(b, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  EXPECT_LT(LargestDifference(ours, a, theirs, b, 60), 1e-5);
}

TEST(FusedAdam, OtherCasesTakeLibTorchsStepExactly) {
  // amsgrad, and a parameter that is not contiguous: LibTorch's own step, bit for bit.
  auto a = Params(3);
  auto b = Clone(a);
  FusedAdam ours(a, torch::optim::AdamOptions(1e-3).amsgrad(true));
  torch::optim::Adam theirs(b, torch::optim::AdamOptions(1e-3).amsgrad(true));
  EXPECT_EQ(LargestDifference(ours, a, theirs, b, 10), 0.0);

  torch::Tensor base = torch::randn({6, 4});
  std::vector<torch::Tensor> c = {base.t().detach().requires_grad_(true)};  // not contiguous
  std::vector<torch::Tensor> d = {base.t().detach().clone().requires_grad_(true)};
  ASSERT_FALSE(c[0].is_contiguous());
  FusedAdam ours2(c, torch::optim::AdamOptions(1e-3));
  torch::optim::Adam theirs2(d, torch::optim::AdamOptions(1e-3));
  EXPECT_EQ(LargestDifference(ours2, c, theirs2, d, 10), 0.0);
}

TEST(FusedAdam, KernelComputesTheFormulaInFloatWithoutFusedMultiplyAdd) {
  // The same bits as the formula written out element by element (this file is built without
  // fused multiply-add), on whichever clone of the kernel this processor runs.
  const int64_t n = 1000;
  torch::manual_seed(5);
  for (bool decoupled : {false, true}) {
    torch::Tensor p = torch::randn({n}), g = torch::randn({n}), m = torch::randn({n}) * 0.1,
                  v = torch::rand({n}) * 0.01;
    const AdamStepConstants c = AdamConstants(3e-3, 0.9, 0.999, 1e-8, 17, decoupled ? 0 : 0.01,
                                              decoupled ? 0.01 : 0);
    std::vector<float> pw(p.data_ptr<float>(), p.data_ptr<float>() + n);
    std::vector<float> mw(m.data_ptr<float>(), m.data_ptr<float>() + n);
    std::vector<float> vw(v.data_ptr<float>(), v.data_ptr<float>() + n);
    const float* gw = g.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
      volatile float w = pw[i] * c.decay;
      volatile float grad = gw[i];
      if (c.l2 != 0) grad = grad + c.l2 * w;
      volatile float mi = mw[i] * c.beta1;
      mi = mi + c.one_minus_beta1 * grad;
      volatile float vi = vw[i] * c.beta2;
      volatile float sq = c.one_minus_beta2 * grad;
      sq = sq * grad;
      vi = vi + sq;
      volatile float denom = std::sqrt(static_cast<float>(vi)) / c.sqrt_bias_correction2;
      denom = denom + c.eps;
      volatile float ratio = mi / denom;
      volatile float delta = c.neg_step_size * ratio;
      pw[i] = w + delta;
      mw[i] = mi;
      vw[i] = vi;
    }
    AdamUpdate(p.data_ptr<float>(), g.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(),
               n, c);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(p.data_ptr<float>()[i], pw[i]) << i;
      ASSERT_EQ(m.data_ptr<float>()[i], mw[i]) << i;
      ASSERT_EQ(v.data_ptr<float>()[i], vw[i]) << i;
    }
  }
}

}  // namespace
}  // namespace sparktorch
