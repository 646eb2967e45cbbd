// Prediction and training throughput of the Fashion-MNIST MLP compiled from its JSON spec, on one
// thread (at::set_num_threads(1)). Rates are per wall-clock second (UseRealTime), because a
// multi-threaded BLAS works outside the timing thread. Never passes or fails on time.

#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "core/world/communicator.h"
#include "core/model/spec_compiler.h"
#include "core/train/loss.h"
#include "core/train/optimizer.h"
#include "core/train/predictor.h"
#include "core/train/trainer.h"

namespace sparktorch {
namespace {

// The 784-256-256-10 MLP of examples/fashion_mnist_mlp.json.
const char* kMlpSpec = R"({
  "layers": [
    {"type": "linear", "in_features": 784, "out_features": 256},
    {"type": "relu"},
    {"type": "linear", "in_features": 256, "out_features": 256},
    {"type": "relu"},
    {"type": "linear", "in_features": 256, "out_features": 10}
  ],
  "loss": "cross_entropy",
  "optimizer": {"type": "adam", "lr": 0.001}
})";

CompiledSpec CompileMlp() {
  at::set_num_threads(1);
  torch::manual_seed(0);
  return CompileSpec(nlohmann::json::parse(kMlpSpec), {}, 0);
}

void BM_Predict(benchmark::State& state, PredictionKind kind) {
  CompiledSpec mlp = CompileMlp();
  Predictor predictor(mlp.module, torch::kCPU, mlp.input_shape, kind, "cross_entropy");
  constexpr int64_t kRows = 1024;
  torch::Tensor batch = torch::rand({kRows, 784});
  size_t bytes = 0;
  for (auto _ : state) {
    predictor.Predict(batch, [&](int64_t, std::string_view text) { bytes += text.size(); });
  }
  benchmark::DoNotOptimize(bytes);
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK_CAPTURE(BM_Predict, argmax, PredictionKind::kArgmax)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Predict, vector, PredictionKind::kVector)->Unit(benchmark::kMillisecond)->UseRealTime();

// One training step: forward, cross-entropy, backward, Adam step, on a batch of 64.
void BM_TrainStep(benchmark::State& state) {
  CompiledSpec mlp = CompileMlp();
  mlp.module.train();
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : mlp.module.parameters()) params.push_back(p);
  auto optimizer = MakeOptimizer(CompleteOptimizerSpec("adam"), params);
  Loss loss = Loss::FromSpec("cross_entropy");
  constexpr int64_t kBatch = 64;
  torch::Tensor x = torch::rand({kBatch, 784});
  torch::Tensor y = torch::randint(0, 10, {kBatch}, torch::kLong);
  for (auto _ : state) {
    optimizer->zero_grad();
    torch::Tensor l = loss.Compute(mlp.module.forward({x}).toTensor(), y);
    l.backward();
    optimizer->step();
    benchmark::DoNotOptimize(l.item<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_TrainStep)->Unit(benchmark::kMicrosecond)->UseRealTime();

// A world of `size` ranks whose collectives leave the data as it is: the trainer's path for
// several ranks (one flat gradient buffer, weighted by the step's rows) without MPI's transfers
// and waits, so that its own work per step is timed.
class SilentWorld : public LocalCommunicator {
 public:
  explicit SilentWorld(int size) : size_(size) {}
  int world_size() const override { return size_; }

 private:
  int size_;
};

// Trainer::Fit over one epoch of 12,800 rows in steps of 64, alone (argument 1) and as one rank
// of a world of 2 (argument 2, SilentWorld): the step as sparktorch train takes it, with its
// gradient handling, metrics and shuffled batches.
void BM_TrainerEpoch(benchmark::State& state) {
  CompiledSpec mlp = CompileMlp();
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : mlp.module.parameters()) params.push_back(p);
  auto optimizer = MakeOptimizer(CompleteOptimizerSpec("adam"), params);
  SilentWorld world(static_cast<int>(state.range(0)));
  TrainOptions options;
  options.epochs = 1;
  Trainer trainer(mlp.module, Loss::FromSpec("cross_entropy"), *optimizer, world, torch::kCPU,
                  options);
  constexpr int64_t kRows = 12800;
  Examples train;
  train.inputs = torch::rand({kRows, 784});
  train.targets = torch::randint(0, 10, {kRows}, torch::kLong);
  for (auto _ : state) {
    TrainResult result = trainer.Fit(train, Examples(), [](const EpochStats&) {});
    benchmark::DoNotOptimize(result.epochs.back().train_loss);
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_TrainerEpoch)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sparktorch
