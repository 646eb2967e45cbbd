#include "core/train/trainer.h"

#include <chrono>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "formats/error.h"

namespace sparktorch {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Batches per epoch for `rows` rows.
int64_t StepsFor(int64_t rows, int64_t batch_size) {
  if (rows == 0) return 0;
  if (batch_size <= 0) return 1;
  return (rows + batch_size - 1) / batch_size;
}

}  // namespace

Trainer::Trainer(torch::jit::Module module, Loss loss, torch::optim::Optimizer& optimizer,
                 Communicator& comm, c10::Device device, TrainOptions options)
    : module_(std::move(module)),
      loss_(std::move(loss)),
      optimizer_(optimizer),
      comm_(comm),
      device_(device),
      options_(options) {
  for (const torch::Tensor& p : module_.parameters()) params_.push_back(p);
}

torch::Tensor Trainer::Forward(const torch::Tensor& inputs) {
  return module_.forward({inputs}).toTensor();
}

std::pair<double, std::optional<double>> Trainer::Evaluate(const Examples& data) {
  torch::NoGradGuard no_grad;
  module_.eval();
  // Sums over this rank's rows: loss, correct predictions, rows.
  double sums[3] = {0, 0, 0};
  constexpr int64_t kEvalBatch = 1024;
  for (int64_t start = 0; start < data.rows(); start += kEvalBatch) {
    int64_t n = std::min(kEvalBatch, data.rows() - start);
    torch::Tensor x = data.inputs.narrow(0, start, n).to(device_);
    torch::Tensor y = data.targets.narrow(0, start, n).to(device_);
    torch::Tensor out = Forward(x);
    sums[0] += loss_.Compute(out, y).item<double>() * n;
    if (loss_.takes_class_index()) sums[1] += out.argmax(1).eq(y).sum().item<double>();
    sums[2] += n;
  }
  module_.train();
  comm_.AllreduceSum(sums, 3);
  if (sums[2] == 0) return {std::numeric_limits<double>::quiet_NaN(), std::nullopt};
  std::optional<double> accuracy;
  if (loss_.takes_class_index()) accuracy = sums[1] / sums[2];
  return {sums[0] / sums[2], accuracy};
}

TrainResult Trainer::Fit(const Examples& train, const Examples& validation,
                         const std::function<void(const EpochStats&)>& on_epoch) {
  TrainResult result;
  module_.train();
  const int64_t rows = train.rows();
  const int64_t batch = options_.batch_size <= 0 ? std::max<int64_t>(rows, 1) : options_.batch_size;

  // Every rank takes the same number of steps, so none waits in a collective for a rank that
  // has run out of rows; a rank with fewer batches takes empty steps.
  double counts[2] = {static_cast<double>(StepsFor(rows, options_.batch_size)),
                      static_cast<double>(validation.inputs.defined() ? validation.rows() : 0)};
  comm_.AllreduceMax(counts, 2);
  const int64_t steps = static_cast<int64_t>(counts[0]);
  const bool validate = counts[1] > 0;

  torch::Generator generator = at::detail::createCPUGenerator(options_.seed);
  double best = std::numeric_limits<double>::infinity();
  int since_best = 0;
  const auto start = Clock::now();
  for (int epoch = 1; epoch <= options_.epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    torch::Tensor order = options_.shuffle ? torch::randperm(rows, generator, torch::kLong)
                                           : torch::arange(rows, torch::kLong);
    // Sums over this rank's rows: loss, correct predictions, rows.
    double sums[3] = {0, 0, 0};
    for (int64_t step = 0; step < steps; ++step) {
      int64_t begin = step * batch;
      int64_t n = std::max<int64_t>(0, std::min(batch, rows - begin));
      for (torch::Tensor& p : params_) {
        if (p.grad().defined()) p.mutable_grad().zero_();
      }
      if (n > 0) {
        torch::Tensor idx = order.narrow(0, begin, n);
        torch::Tensor x = train.inputs.index_select(0, idx).to(device_);
        torch::Tensor y = train.targets.index_select(0, idx).to(device_);
        torch::Tensor out = Forward(x);
        torch::Tensor loss = loss_.Compute(out, y);
        loss.backward();
        sums[0] += loss.item<double>() * n;
        if (loss_.takes_class_index()) {
          torch::NoGradGuard no_grad;
          sums[1] += out.argmax(1).eq(y).sum().item<double>();
        }
        sums[2] += n;
      }
      optimizer_.step();
      // -v: ten progress lines an epoch.
      if (steps >= 10 && (step + 1) % (steps / 10) == 0 && spdlog::should_log(spdlog::level::debug)) {
        spdlog::debug("epoch {} step {}/{}: mean loss so far {:.4f}", epoch, step + 1, steps,
                      sums[2] > 0 ? sums[0] / sums[2] : 0.0);
      }
    }
    comm_.AllreduceSum(sums, 3);

    EpochStats stats;
    stats.epoch = epoch;
    stats.rows = static_cast<int64_t>(sums[2]);
    stats.steps = steps;
    stats.train_loss = sums[2] > 0 ? sums[0] / sums[2] : std::numeric_limits<double>::quiet_NaN();
    if (loss_.takes_class_index() && sums[2] > 0) stats.train_accuracy = sums[1] / sums[2];
    if (validate) {
      auto [loss, accuracy] = Evaluate(validation);
      stats.validation_loss = loss;
      stats.validation_accuracy = accuracy;
    }
    stats.seconds = Seconds(epoch_start);
    stats.elapsed = Seconds(start);
    stats.samples_per_second = stats.seconds > 0 ? stats.rows / stats.seconds : 0;
    result.epochs.push_back(stats);
    on_epoch(stats);

    if (options_.early_stop_patience > 0) {
      // Every rank computed the same all-reduced numbers, so all ranks decide alike.
      double watched = validate ? *stats.validation_loss : stats.train_loss;
      if (watched < best) {
        best = watched;
        since_best = 0;
      } else if (++since_best >= options_.early_stop_patience) {
        result.stopped_early = true;
        break;
      }
    }
  }
  module_.eval();
  return result;
}

}  // namespace sparktorch
