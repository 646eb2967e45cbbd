#include "core/train/optimizer_state.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/train/optimizer.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

std::vector<torch::Tensor> Params() {
  torch::manual_seed(7);
  return {torch::randn({3, 4}).requires_grad_(), torch::randn({4}).requires_grad_()};
}

std::vector<torch::Tensor> Copies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

void Step(torch::optim::Optimizer& opt, const std::vector<torch::Tensor>& params, int seed) {
  torch::manual_seed(seed);
  for (const torch::Tensor& p : params) p.mutable_grad() = torch::randn(p.sizes());
  opt.step();
}

// Three steps, then the state saved and loaded into a fresh optimizer over the same weights:
// both take the same fourth step to the same weights.
TEST(OptimizerState, EveryTypeContinuesExactlyAfterSaveAndLoad) {
  for (const char* spec_text : {R"({"type": "sgd", "momentum": 0.9})", R"("adam")",
                                R"({"type": "adam", "amsgrad": true})", R"("adamw")",
                                R"({"type": "rmsprop", "momentum": 0.5, "centered": true})",
                                R"("adagrad")"}) {
    SCOPED_TRACE(spec_text);
    const json spec = CompleteOptimizerSpec(json::parse(spec_text));
    std::vector<torch::Tensor> a = Params();
    auto first = MakeOptimizer(spec, a);
    for (int i = 0; i < 3; ++i) Step(*first, a, i);
    const std::string bytes = SaveOptimizerState(*first, spec, a);
    std::vector<torch::Tensor> b = Copies(a);
    auto second = MakeOptimizer(spec, b);
    LoadOptimizerState(*second, spec, b, bytes, "test");
    Step(*first, a, 9);
    Step(*second, b, 9);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
  }
}

TEST(OptimizerState, RefusesStateThatDoesNotFit) {
  const json spec = CompleteOptimizerSpec("adam");
  std::vector<torch::Tensor> a = Params();
  auto opt = MakeOptimizer(spec, a);
  Step(*opt, a, 1);
  const std::string bytes = SaveOptimizerState(*opt, spec, a);
  std::vector<torch::Tensor> other = {torch::zeros({2, 4}).requires_grad_(), torch::zeros({4}).requires_grad_()};
  auto fresh = MakeOptimizer(spec, other);
  try {
    LoadOptimizerState(*fresh, spec, other, bytes, "m.pt");
    FAIL() << "no ModelError";
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "m.pt: the state exp_avg of parameter 0 has shape [3,4], the parameter [2,4]");
  }
  EXPECT_THROW(LoadOptimizerState(*fresh, spec, other, "not a pickle", "m.pt"), ModelError);
}

// torch.load(weights_only=True), PyTorch's default since 2.6, refuses every global outside its
// allowlist; TorchScript's pickler writes two of them unless told not to. The archive stores its
// pickle uncompressed, so the names would show in the bytes.
TEST(OptimizerState, SavedStateHasNoGlobalThatWeightsOnlyLoadingRefuses) {
  const json spec = CompleteOptimizerSpec("adam");
  std::vector<torch::Tensor> a = Params();
  auto opt = MakeOptimizer(spec, a);
  Step(*opt, a, 1);
  const std::string bytes = SaveOptimizerState(*opt, spec, a);
  ASSERT_NE(bytes.find("_rebuild_tensor_v2"), std::string::npos) << "the pickle is not plain";
  EXPECT_EQ(bytes.find("torch.jit._pickle"), std::string::npos);
  EXPECT_EQ(bytes.find("restore_type_tag"), std::string::npos);
  EXPECT_EQ(bytes.find("build_intlist"), std::string::npos);
}

}  // namespace
}  // namespace sparktorch
