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

void Trainer::StartBuckets() {
  if (options_.overlap_bucket_elements <= 0) return;
  if (!device_.is_cpu() || !comm_.threads_allowed()) {
    spdlog::info("the gradients' all-reduce follows the backward pass: {}",
                 device_.is_cpu() ? "this MPI allows no second thread"
                                  : "overlapping it is for training on the CPU");
    return;
  }
  std::vector<int64_t> sizes;
  for (const torch::Tensor& p : params_) sizes.push_back(p.numel());
  buckets_ = std::make_unique<GradientBuckets>(comm_, flat_grads_, sizes, options_.allreduce_dtype,
                                               options_.overlap_bucket_elements);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].requires_grad()) continue;  // frozen: zeros after the backward pass
    const unsigned handle = params_[i].register_hook([this, i](const torch::Tensor& grad) {
      torch::mul_out(grad_views_[i], grad, step_weight_);
      buckets_->Ready(i);
    });
    hooks_on_.emplace_back(i, handle);
  }
  spdlog::debug("the gradients' all-reduce in {} bucket(s), overlapping the backward pass",
                buckets_->buckets());
}

void Trainer::StopBuckets() {
  for (const auto& [i, handle] : hooks_on_) params_[i].remove_hook(handle);
  hooks_on_.clear();
  buckets_.reset();
}

void Trainer::BeginBuckets(int64_t rows) {
  step_weight_ = torch::scalar_tensor(static_cast<float>(rows));
  flat_grads_[flat_grads_.numel() - 1].fill_(static_cast<double>(rows));
  buckets_->Begin();
}

void Trainer::Flatten() {
  int64_t total = 0;
  for (const torch::Tensor& p : params_) {
    if (p.scalar_type() != torch::kFloat || p.device() != device_) {
      throw ModelError("synchronous training needs float32 parameters on " + device_.str() +
                       "; this model has a " + std::string(c10::toString(p.scalar_type())) +
                       " parameter on " + p.device().str());
    }
    total += p.numel();
  }
  auto options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  flat_params_ = torch::empty({total}, options);
  flat_grads_ = torch::zeros({total + 1}, options);
  int64_t offset = 0;
  for (torch::Tensor& p : params_) {
    const int64_t n = p.numel();
    torch::NoGradGuard no_grad;
    flat_params_.narrow(0, offset, n).copy_(p.reshape({-1}));
    p.set_data(flat_params_.narrow(0, offset, n).view(p.sizes()));
    // from_blob, not a view: the optimizers' zero_grad() detaches gradients, which a view refuses.
    grad_views_.push_back(torch::from_blob(flat_grads_.data_ptr<float>() + offset, p.sizes(), options));
    p.mutable_grad() = grad_views_.back();
    offset += n;
  }
  if (!device_.is_cpu()) host_grads_ = torch::empty({total + 1}, torch::kFloat);
  if (options_.allreduce_dtype != at::kFloat) {
    allreduce16_ = std::make_unique<Allreduce16>(comm_, options_.allreduce_dtype);
  }
  StartBuckets();

  // Every rank starts from rank 0's weights (and buffers, such as batch norm's running means).
  torch::Tensor host = device_.is_cpu() ? flat_params_ : flat_params_.cpu();
  comm_.Broadcast(host.data_ptr(), host.numel() * sizeof(float), 0);
  if (!device_.is_cpu()) flat_params_.copy_(host);
  for (torch::Tensor buffer : module_.buffers()) {
    torch::Tensor b = buffer.cpu().contiguous();
    comm_.Broadcast(b.data_ptr(), b.numel() * b.element_size(), 0);
    torch::NoGradGuard no_grad;
    buffer.copy_(b);
  }
}

void Trainer::Unflatten() {
  if (!flat_params_.defined()) return;
  StopBuckets();
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : params_) {
    p.set_data(p.detach().clone());
    p.mutable_grad() = torch::Tensor();
  }
  flat_params_ = torch::Tensor();
  flat_grads_ = torch::Tensor();
  grad_views_.clear();
}

uint32_t Trainer::WeightsChecksum() const { return ParametersCrc32(params_); }

uint32_t ParametersCrc32(const std::vector<torch::Tensor>& params) {
  uint32_t crc = crc32(0L, Z_NULL, 0);
  for (const torch::Tensor& p : params) {
    torch::Tensor t = p.detach().to(torch::kCPU).contiguous();
    crc = crc32(crc, static_cast<const Bytef*>(t.data_ptr()), static_cast<uInt>(t.nbytes()));
  }
  return crc;
}

void Trainer::ZeroGradients() {
  // No gradient at all, as torch's zero_grad(set_to_none=True): backward then hands each
  // parameter the gradient it computed instead of adding it to a zeroed one (with a flat buffer,
  // AverageGradients moves it there in the pass that weights it by the step's rows). A parameter
  // the step's forward pass did not use keeps none, and the optimizers skip it, as torch's do.
  for (torch::Tensor& p : params_) p.mutable_grad() = torch::Tensor();
}

double Trainer::AverageGradients(int64_t rows) {
  const int64_t total = flat_grads_.numel() - 1;
  torch::Tensor grads = flat_grads_.narrow(0, 0, total);
  if (buckets_) {
    // The hooks moved every gradient backward computed; the rest are zeros (no rows this step,
    // or a parameter the forward pass did not use).
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!buckets_->ready(i)) {
        grad_views_[i].zero_();
        buckets_->Ready(i);
      }
      params_[i].mutable_grad() = grad_views_[i];
    }
    buckets_->Finish();
    const double all_rows = flat_grads_.data_ptr<float>()[total];
    if (all_rows > 0) grads.div_(all_rows);
    return all_rows;
  }
  // Each rank's gradient is the mean over its rows; the rows-weighted sum over ranks divided by
  // all the rows is the mean over the step's global batch, however unevenly it is split. A
  // parameter without a gradient (no rows this step, or unused by the forward pass) adds zeros.
  const torch::Tensor weight = torch::scalar_tensor(static_cast<float>(rows));  // on the CPU, as a scalar
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor& view = grad_views_[i];
    const torch::Tensor& grad = params_[i].grad();
    if (grad.defined() && rows > 0) {
      torch::mul_out(view, grad, weight);
    } else {
      view.zero_();
    }
    params_[i].mutable_grad() = view;
  }
  flat_grads_[total].fill_(static_cast<double>(rows));
  torch::Tensor host = device_.is_cpu() ? flat_grads_ : host_grads_.copy_(flat_grads_);
  if (allreduce16_) {
    allreduce16_->Sum(host.narrow(0, 0, total));
    comm_.AllreduceSum(host.data_ptr<float>() + total, 1);  // the rows, exactly
  } else {
    comm_.AllreduceSum(host.data_ptr<float>(), host.numel());
  }
  if (!device_.is_cpu()) flat_grads_.copy_(host);
  const double all_rows = host.data_ptr<float>()[total];
  if (all_rows > 0) grads.div_(all_rows);
  return all_rows;
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
