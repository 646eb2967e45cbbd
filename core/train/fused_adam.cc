#include "core/train/fused_adam.h"

#include <memory>
#include <tuple>
#include <utility>

#include <torch/torch.h>

#include "core/train/adam_kernel.h"
#include "core/train/optimizer_key.h"

namespace sparktorch {
namespace {

bool FloatOnCpu(const torch::Tensor& t, int64_t numel) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous() &&
         t.layout() == torch::kStrided && t.numel() == numel;
}

// Whether every parameter with a gradient, and its state where it has one, can take the kernel.
template <typename Options, typename State>
bool Fusable(torch::optim::Optimizer& optimizer) {
  for (torch::optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    if (static_cast<Options&>(group.options()).amsgrad()) return false;
    for (const torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!FloatOnCpu(p, p.numel()) || !FloatOnCpu(p.grad(), p.numel())) return false;
      auto it = optimizer.state().find(StateKeyOf(p));
      if (it == optimizer.state().end()) continue;
      auto& s = static_cast<State&>(*it->second);
      if (!FloatOnCpu(s.exp_avg(), p.numel()) || !FloatOnCpu(s.exp_avg_sq(), p.numel())) return false;
    }
  }
  return true;
}

// torch.optim's Adam (decoupled = false: weight_decay added to the gradient) or AdamW (true:
// the weights decay by lr * weight_decay first), one kernel call a parameter.
template <typename Options, typename State>
void FusedStep(torch::optim::Optimizer& optimizer, bool decoupled) {
  torch::NoGradGuard no_grad;
  for (torch::optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    for (torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = optimizer.state()[StateKeyOf(p)];
      if (!slot) {
        auto fresh = std::make_unique<State>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& s = static_cast<State&>(*slot);
      s.step(s.step() + 1);
      const double weight_decay = o.weight_decay();
      const AdamStepConstants c =
          AdamConstants(o.lr(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(), s.step(),
                        decoupled ? 0.0 : weight_decay, decoupled ? weight_decay : 0.0);
      const torch::Tensor& m = s.exp_avg();
      const torch::Tensor& v = s.exp_avg_sq();
      AdamUpdate(p.data_ptr<float>(), p.grad().data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(),
                 p.numel(), c);
      // As an in-place operation would: autograd refuses a graph that saved the old weights.
      p.unsafeGetTensorImpl()->bump_version();
    }
  }
}

torch::Tensor EvaluateClosure(const torch::optim::Optimizer::LossClosure& closure) {
  if (closure == nullptr) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}

// The step of `optimizer`, a FusedAdam or FusedAdamW seen as its LibTorch base: the kernel's
// when every parameter can take it, else the base's own (a qualified, non-virtual call).
template <typename Base, typename Options, typename State>
torch::Tensor Step(Base& optimizer, torch::optim::Optimizer::LossClosure closure, bool decoupled) {
  if (!Fusable<Options, State>(optimizer)) return optimizer.Base::step(std::move(closure));
  torch::Tensor loss = EvaluateClosure(closure);
  FusedStep<Options, State>(optimizer, decoupled);
  return loss;
}

}  // namespace

torch::Tensor FusedAdam::step(LossClosure closure) {
  return Step<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>(
      *this, std::move(closure), /*decoupled=*/false);
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  return Step<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>(
      *this, std::move(closure), /*decoupled=*/true);
}

}  // namespace sparktorch
