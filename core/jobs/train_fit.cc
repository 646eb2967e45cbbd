#include <chrono>
#include <cmath>
#include <fstream>

#include <spdlog/spdlog.h>

#include "core/jobs/train_steps.h"
#include "core/model/model_file.h"
#include "core/model/shape.h"
#include "core/progress/epoch_progress.h"
#include "core/train/optimizer.h"
#include "core/train/optimizer_state.h"
#include "formats/error.h"

// The fit of a train job: the trainer's options from the job's, a resumed optimizer and schedule,
// the epochs with their progress, metrics and checkpoints.
namespace sparktorch {
namespace {

using nlohmann::json;

// The trainer's options, as the job's flags give them; the schedule and resuming are added by
// ResumeOptions.
TrainOptions TrainerOptions(const TrainJobOptions& options) {
  TrainOptions train;
  train.epochs = options.epochs;
  train.batch_size = options.batch_size;
  train.steps_per_epoch = options.steps_per_epoch;
  train.early_stop_patience = options.early_stop_patience;
  train.seed = options.seed;
  train.shuffle = options.shuffle;
  train.partition_shuffles = options.partition_shuffles;
  train.clip_grad_norm = options.clip_grad_norm;
  train.clip_grad_value = options.clip_grad_value;
  switch (options.allreduce_dtype) {
    case AllreduceDtype::kFloat32: train.allreduce_dtype = at::kFloat; break;
    case AllreduceDtype::kBFloat16: train.allreduce_dtype = at::kBFloat16; break;
    case AllreduceDtype::kFloat16: train.allreduce_dtype = at::kHalf; break;
  }
  // Buckets of at least 256 KB of float32: the examples' MLP and CNN sum their last layers while
  // backward computes the first ones' gradients (PyTorch DDP's first bucket is 1 MB).
  if (options.allreduce_overlap) train.overlap_bucket_elements = int64_t{1} << 16;
  return train;
}

// Resuming a model sparktorch trained, unless --fresh-optimizer: its optimizer's state (when the
// file has one for the same optimizer), the epochs it trained and its schedule's position.
TrainOptions ResumeOptions(const TrainSetup& o, const TrainMode& mode,
                           torch::optim::Optimizer& optimizer,
                           const std::vector<torch::Tensor>& params) {
  TrainOptions train = TrainerOptions(o.options);
  train.lr_schedule = o.plan.lr_schedule_spec;
  train.outputs = Product(o.plan.output_shape);
  const std::optional<Manifest>& trained = o.plan.manifest;
  if (!mode.plans_model() || !trained || o.options.fresh_optimizer) return train;
  const std::string& path = o.options.model.model_path;
  if (o.plan.optimizer_state.empty()) {
    spdlog::info("{} holds no optimizer state: the optimizer starts afresh", path);
    return train;
  }
  const std::string type = o.optimizer_spec.at("type").get<std::string>();
  if (trained->optimizer.value("type", "") != type) {
    spdlog::info("{} was trained with {}, this run uses {}: the optimizer starts afresh", path,
                 trained->optimizer.value("type", "?"), type);
    return train;
  }
  LoadOptimizerState(optimizer, o.optimizer_spec, params, o.plan.optimizer_state, path);
  train.start_epoch = trained->training.value("epochs_run", 0);
  if (trained->lr_schedule == train.lr_schedule) {
    train.lr_schedule_state = trained->training.value("lr_schedule_state", json());
  }
  spdlog::info("resuming after epoch {}: the {} state{}", train.start_epoch, type,
               train.lr_schedule.is_null() ? "" : " and the schedule's position");
  return train;
}

// Rank 0's model after an epoch with its optimizer's state, for a restart (--resume): written to
// -o, and sent to the tracker under one.
void WriteCheckpoint(const TrainSetup& o, const Communicator& comm, const torch::jit::Module& module,
                     const EpochStats& stats, const std::string& optimizer_state,
                     const json& history) {
  // While training, the parameters are views into one flat buffer (Trainer), which deepcopy
  // copies once, memoised: every parameter of the copy would be the first one. Each gets a
  // tensor of its own from the module's.
  torch::jit::Module copy = module.deepcopy();
  {
    torch::NoGradGuard no_grad;
    auto originals = module.named_modules();
    auto copies = copy.named_modules();
    auto to = copies.begin();
    for (auto from = originals.begin(); from != originals.end() && to != copies.end();
         ++from, ++to) {
      for (const auto& p : (*from).value.named_parameters(/*recurse=*/false)) {
        torch::jit::Module target = (*to).value;
        torch::Tensor own = p.value.detach().to(torch::kCPU).clone();
        target.setattr(p.name, own.requires_grad_(p.value.requires_grad()));
      }
    }
  }
  copy.to(torch::kCPU);
  const Manifest manifest = TrainedManifest(o, comm, RankEpochJson(stats), stats.epoch,
                                            stats.lr_schedule_state, history);
  if (!o.options.output_path.empty()) {
    WriteModelFile(o.options.output_path, copy, manifest, optimizer_state);
    spdlog::info("checkpoint after epoch {} written to {}", stats.epoch, o.options.output_path);
  }
  if (o.run.send_checkpoint) {
    std::string bytes = SerializeModel(copy, manifest, optimizer_state);
    const size_t size = bytes.size();
    if (o.run.send_checkpoint(stats.epoch, std::move(bytes))) {
      spdlog::debug("checkpoint after epoch {} ({} bytes) on its way to the tracker", stats.epoch,
                    size);
    }
  }

}

}  // namespace

void ScaleLr(LrScaling scaling, int ranks, json* optimizer_spec) {
  if (scaling == LrScaling::kNone || ranks <= 1) return;
  const double lr = optimizer_spec->at("lr").get<double>();
  const double factor = scaling == LrScaling::kLinear ? ranks : std::sqrt(static_cast<double>(ranks));
  (*optimizer_spec)["lr"] = lr * factor;
  spdlog::info("lr {:g} scaled ({}) for {} ranks: {:g}", lr, NameIn(kLrScalingNames, scaling),
               ranks, lr * factor);
}

Fitted Fit(const TrainSetup& o, Communicator& comm, TrainMode& mode, const Split& split) {
  const TrainJobOptions& options = o.options;
  torch::jit::Module module = *o.plan.module;  // a handle: the plan's module is what trains
  Fitted fitted;
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : module.parameters()) params.push_back(p);
  auto optimizer = MakeOptimizer(o.optimizer_spec, params);
  const TrainOptions train = ResumeOptions(o, mode, *optimizer, params);
  Trainer trainer(module, o.loss, *optimizer, comm, o.device, train);
  const int epochs = options.epochs * std::max(1, options.partition_shuffles);
  const int last = train.start_epoch + epochs;
  trainer.SetHooks(mode.Hooks(params, epochs));
  const int rank = comm.rank();
  std::ofstream metrics;
  if (!options.metrics_path.empty() && rank == 0) {  // the world's metrics, alike on every rank
    metrics.open(options.metrics_path, std::ios::trunc);
    if (!metrics) throw UsageError("--metrics " + options.metrics_path + ": cannot write this file");
  }
  int64_t num_params = 0;
  for (const auto& p : params) num_params += p.numel();
  spdlog::info("{}training {} parameters for {} epoch{} on {} rows ({} for validation), batch {}{}, "
               "{} with {}{}, loss {}",
               comm.world_size() > 1 ? "rank " + std::to_string(rank) + ": " : "", num_params,
               epochs, epochs == 1 ? "" : "s", split.train.rows(), split.held_out,
               options.batch_size <= 0 ? std::string("whole partition")
                                             : std::to_string(options.batch_size),
               options.steps_per_epoch > 0
                   ? fmt::format(", {} steps an epoch", options.steps_per_epoch) : std::string(),
               o.device.str(), o.optimizer_spec.dump(),
               train.lr_schedule.is_null() ? "" : ", lr_schedule " + train.lr_schedule.dump(),
               o.loss.name());
  const bool checkpoints = options.checkpoint_every > 0 && mode.writes_model(rank);
  // A resumed job's history goes on from the checkpoint's.
  if (train.start_epoch > 0 && o.plan.manifest && o.plan.manifest->history.is_array()) {
    fitted.history = o.plan.manifest->history;
  }
  const auto training = std::chrono::steady_clock::now();
  fitted.result = trainer.Fit(split.train, split.validation, [&](const EpochStats& stats) {
    const json epoch = RankEpochJson(stats);
    fitted.history.push_back(epoch);
    // The checkpoint first: the epoch's report waits behind it on the way to the tracker, so
    // once the tracker logs the epoch, it keeps the epoch's checkpoint.
    if (checkpoints && stats.epoch % options.checkpoint_every == 0 && stats.epoch < last) {
      WriteCheckpoint(o, comm, module, stats,
                      SaveOptimizerState(*optimizer, o.optimizer_spec, params), fitted.history);
    }
    if (rank == 0) {
      spdlog::info("{}", ProgressLine(ProgressOf(stats, last)));
      if (o.run.report_epoch && mode.reports_epochs()) {
        json report = epoch;
        report["epochs"] = last;
        o.run.report_epoch(report.dump());
      }
    }
    if (metrics.is_open()) metrics << epoch.dump() << '\n' << std::flush;
  });
  fitted.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - training).count();
  mode.Finish(o.rows, fitted.result, options.early_stop_patience);
  fitted.checksum = trainer.WeightsChecksum();
  if (mode.plans_model() && mode.writes_model(rank)) {
    fitted.optimizer_state = SaveOptimizerState(*optimizer, o.optimizer_spec, params);
  }
  return fitted;
}

}  // namespace sparktorch
