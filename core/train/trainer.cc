#include "core/train/trainer.h"

#include <chrono>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <zlib.h>

#include "core/train/batch_order.h"
#include "core/train/early_stopping.h"
#include "core/train/lr_schedule.h"
#include "core/train/metrics.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
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
  if (comm_.world_size() > 1) Flatten();
}

Trainer::~Trainer() { StopBuckets(); }

uint32_t Trainer::WeightsChecksum() const { return ParametersCrc32(params_); }

uint32_t ParametersCrc32(const std::vector<torch::Tensor>& params) {
  uint32_t crc = crc32(0L, Z_NULL, 0);
  for (const torch::Tensor& p : params) {
    torch::Tensor t = p.detach().to(torch::kCPU).contiguous();
    crc = crc32(crc, static_cast<const Bytef*>(t.data_ptr()), static_cast<uInt>(t.nbytes()));
  }
  return crc;
}

std::pair<torch::Tensor, torch::Tensor> Examples::Batch(const torch::Tensor& positions,
                                                         c10::Device device) const {
  const torch::Tensor rows = index.defined() ? index.index_select(0, positions) : positions;
  torch::Tensor y = targets.index_select(0, rows);
  if (class_index) y = y.to(torch::kLong);
  return {inputs.index_select(0, rows).to(device), y.to(device)};
}

std::pair<torch::Tensor, torch::Tensor> Examples::Range(int64_t start, int64_t n,
                                                         c10::Device device) const {
  if (index.defined()) return Batch(torch::arange(start, start + n, torch::kLong), device);
  torch::Tensor y = targets.narrow(0, start, n);
  if (class_index) y = y.to(torch::kLong);
  return {inputs.narrow(0, start, n).to(device), y.to(device)};
}

torch::Tensor Trainer::Forward(const torch::Tensor& inputs) {
  return module_.forward({inputs}).toTensor();
}

MetricSums Trainer::NewMetrics(const Examples& data) const {
  int64_t outputs = options_.outputs;
  if (outputs <= 0 && !loss_.takes_class_index() && data.targets.defined() && data.targets.dim() > 1) {
    outputs = data.targets.numel() / std::max<int64_t>(data.targets.size(0), 1);
    if (data.targets.size(0) == 0) {
      outputs = 1;
      for (int64_t d = 1; d < data.targets.dim(); ++d) outputs *= data.targets.size(d);
    }
  }
  return MetricSums(loss_.name(), outputs);
}

std::pair<double, std::optional<double>> Trainer::Evaluate(const Examples& data, MetricList* others,
                                                           std::optional<MetricSums>* sums_out) {
  torch::NoGradGuard no_grad;
  module_.eval();
  // Sums over this rank's rows: loss, rows.
  double sums[2] = {0, 0};
  MetricSums metrics = NewMetrics(data);
  constexpr int64_t kEvalBatch = 1024;
  const int64_t rows = data.inputs.defined() ? data.rows() : 0;
  for (int64_t start = 0; start < rows; start += kEvalBatch) {
    int64_t n = std::min(kEvalBatch, rows - start);
    auto [x, y] = data.Range(start, n, device_);
    torch::Tensor out = Forward(x);
    sums[0] += loss_.Compute(out, y).item<double>() * n;
    metrics.Add(out, y);
    sums[1] += n;
  }
  module_.train();
  comm_.AllreduceSum(sums, 2);
  comm_.AllreduceSum(metrics.sums().data(), metrics.sums().size());
  if (sums[1] == 0) return {std::numeric_limits<double>::quiet_NaN(), std::nullopt};
  if (others) *others = metrics.Others();
  if (sums_out) *sums_out = metrics;
  return {sums[0] / sums[1], metrics.Accuracy()};
}

void Trainer::SetRate(double lr, const std::optional<double>& momentum) {
  for (torch::optim::OptimizerParamGroup& group : optimizer_.param_groups()) {
    group.options().set_lr(lr);
    if (!momentum) continue;
    torch::optim::OptimizerOptions& o = group.options();
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&o)) {
      sgd->momentum(*momentum);
    } else if (auto* rms = dynamic_cast<torch::optim::RMSpropOptions*>(&o)) {
      rms->momentum(*momentum);
    } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&o)) {
      adam->betas({*momentum, std::get<1>(adam->betas())});
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&o)) {
      adamw->betas({*momentum, std::get<1>(adamw->betas())});
    } else {
      throw SpecError("lr_schedule (one_cycle): \"cycle_momentum\" needs an optimizer with a "
                      "momentum or betas (sgd, rmsprop, adam, adamw); set it to false for this one");
    }
  }
}

void Trainer::ClipGradients() {
  if (options_.clip_grad_norm > 0) torch::nn::utils::clip_grad_norm_(params_, options_.clip_grad_norm);
  if (options_.clip_grad_value > 0) torch::nn::utils::clip_grad_value_(params_, options_.clip_grad_value);
}

void Trainer::KeepWeights(std::vector<torch::Tensor>* kept) {
  torch::NoGradGuard no_grad;
  kept->clear();
  for (const torch::Tensor& p : params_) kept->push_back(p.detach().clone());
  for (const torch::Tensor& b : module_.buffers()) kept->push_back(b.detach().clone());
}

void Trainer::RestoreWeights(const std::vector<torch::Tensor>& kept) {
  torch::NoGradGuard no_grad;
  size_t i = 0;
  for (torch::Tensor& p : params_) p.copy_(kept[i++]);
  for (torch::Tensor b : module_.buffers()) b.copy_(kept[i++]);
}

Trainer::StepsDone Trainer::TrainSteps(const Examples& train, BatchOrder& batches, int epoch,
                                       int64_t steps, const LrSchedule& schedule, double sums[2],
                                       MetricSums& metrics) {
  StepsDone done;
  done.lr = schedule.Lr(epoch, 0);
  for (int64_t step = 0; step < steps; ++step) {
    const torch::Tensor positions = batches.Step(step);
    const int64_t n = positions.size(0);
    if (schedule.type() != "none") {
      done.lr = schedule.Lr(epoch, step);
      SetRate(done.lr, schedule.Momentum(epoch, step));
    }
    ZeroGradients();
    if (buckets_) BeginBuckets(n);
    if (hooks_ && n > 0) hooks_->BeforeStep();
    double step_loss = 0;
    if (n > 0) {
      auto [x, y] = train.Batch(positions, device_);
      torch::Tensor out = Forward(x);
      torch::Tensor loss = loss_.Compute(out, y);
      loss.backward();
      step_loss = loss.item<double>();
      sums[0] += step_loss * n;
      metrics.Add(out, y);
      sums[1] += n;
    }
    // A step where no rank had rows changes nothing (and every rank skips it alike).
    bool step_rows = true;
    if (flat_grads_.defined()) {
      const auto reduce_start = Clock::now();
      step_rows = AverageGradients(n) > 0;
      done.allreduce_seconds += Seconds(reduce_start);
    }
    if (step_rows) ClipGradients();
    bool local_step = true;
    if (hooks_ && n > 0) local_step = hooks_->AfterBackward(n, step_loss, step + 1 == steps);
    if (step_rows && local_step) optimizer_.step();
    // -v: ten progress lines an epoch.
    if (steps >= 10 && (step + 1) % (steps / 10) == 0 && spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("epoch {} step {}/{}: mean loss so far {:.4f}", epoch, step + 1, steps,
                    sums[1] > 0 ? sums[0] / sums[1] : 0.0);
    }
    if (hooks_ && hooks_->stop_requested()) break;
  }
  return done;
}

TrainResult Trainer::Fit(const Examples& train, const Examples& validation,
                         const std::function<void(const EpochStats&)>& on_epoch) {
  TrainResult result;
  module_.train();
  BatchOrder batches(train.rows(), options_.batch_size, options_.steps_per_epoch, options_.shuffle,
                     options_.seed);

  // Every rank takes the same number of steps, so none waits in a collective for a rank that
  // has run out of rows; a rank with fewer batches takes empty steps.
  double counts[2] = {static_cast<double>(batches.LocalSteps()),
                      static_cast<double>(validation.inputs.defined() ? validation.rows() : 0)};
  comm_.AllreduceMax(counts, 2);
  const int64_t steps = static_cast<int64_t>(counts[0]);
  const bool validate = counts[1] > 0;

  EarlyStopping early_stopping(options_.early_stop_patience, EarlyStopping::First::kMustImprove);
  std::vector<torch::Tensor> best_weights;
  const auto start = Clock::now();
  const int first = options_.start_epoch + 1;
  const int last = options_.start_epoch + options_.epochs * std::max(1, options_.partition_shuffles);
  LrSchedule schedule(options_.lr_schedule, optimizer_.param_groups().at(0).options().get_lr(), last,
                      steps);
  if (!options_.lr_schedule_state.is_null()) schedule.Restore(options_.lr_schedule_state);
  // A resumed run shuffles on as the run it continues would have.
  batches.Skip(first - 1, steps);
  for (int epoch = first; epoch <= last; ++epoch) {
    const auto epoch_start = Clock::now();
    // Without shuffling every epoch, each round after the first still starts from a new order.
    const int index = epoch - first;  // in this run, from 0
    const bool new_round = index % options_.epochs == 0 && index > 0;
    batches.StartEpoch(new_round);
    // Sums over this rank's rows: loss, rows; and the loss's metrics.
    double sums[2] = {0, 0};
    MetricSums metrics = NewMetrics(train);
    const StepsDone done = TrainSteps(train, batches, epoch, steps, schedule, sums, metrics);
    comm_.AllreduceSum(sums, 2);
    comm_.AllreduceSum(metrics.sums().data(), metrics.sums().size());

    EpochStats stats;
    stats.epoch = epoch;
    stats.rows = static_cast<int64_t>(sums[1]);
    stats.steps = steps;
    stats.lr = done.lr;
    stats.train_loss = sums[1] > 0 ? sums[0] / sums[1] : std::numeric_limits<double>::quiet_NaN();
    stats.train_accuracy = metrics.Accuracy();
    stats.train_metrics = metrics.Others();
    stats.train_sums = std::move(metrics);
    if (validate) {
      auto [loss, accuracy] = Evaluate(validation, &stats.validation_metrics, &stats.validation_sums);
      stats.validation_loss = loss;
      stats.validation_accuracy = accuracy;
      stats.validation_rows = validation.inputs.defined() ? validation.rows() : 0;
    }
    stats.seconds = Seconds(epoch_start);
    stats.allreduce_seconds = done.allreduce_seconds;
    stats.elapsed = Seconds(start);
    stats.samples_per_second = stats.seconds > 0 ? stats.rows / stats.seconds : 0;
    // Every rank computed the same all-reduced numbers, so all ranks decide alike.
    const double watched = stats.validation_loss ? *stats.validation_loss : stats.train_loss;
    if (schedule.EndEpoch(watched) && epoch < last) {
      spdlog::info("reduce_on_plateau: lr {:g} from epoch {} on", schedule.Lr(epoch + 1, 0), epoch + 1);
    }
    stats.lr_schedule_state = schedule.State();
    result.epochs.push_back(stats);
    on_epoch(stats);
    if (hooks_ && (hooks_->AfterEpoch(stats) || hooks_->stop_requested())) {
      result.stopped_early = epoch < last;
      break;
    }

    const bool stop = early_stopping.Observe(stats.train_loss, stats.validation_loss);
    if (early_stopping.last_was_best()) {
      KeepWeights(&best_weights);
      result.kept_epoch = epoch;
    }
    if (stop) {
      result.stopped_early = true;
      break;
    }
  }
  if (result.kept_epoch > 0 && result.kept_epoch != result.epochs.back().epoch) {
    RestoreWeights(best_weights);
    const EpochStats& kept = result.Epoch(result.kept_epoch);
    spdlog::info("early stopping: kept the weights of epoch {} ({} {:.4f}), the best of {}",
                 kept.epoch, kept.validation_loss ? "val_loss" : "loss",
                 kept.validation_loss ? *kept.validation_loss : kept.train_loss,
                 result.epochs.back().epoch);
  }
  result.lr_schedule_state = schedule.State();
  Unflatten();
  module_.eval();
  return result;
}

}  // namespace sparktorch
