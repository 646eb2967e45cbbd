#include "core/jobs/train_job.h"

#include <chrono>
#include <cmath>
#include <fstream>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/data/dataset.h"
#include "core/data/input_files.h"
#include "core/device.h"
#include "core/jobs/model_plan.h"
#include "core/jobs/train_mode.h"
#include "core/model/model_file.h"
#include "core/model/shape.h"
#include "core/model/spec_compiler.h"
#include "core/net/errors.h"
#include "core/train/epoch_progress.h"
#include "core/train/examples.h"
#include "core/train/lr_schedule.h"
#include "core/train/optimizer.h"
#include "core/train/optimizer_state.h"
#include "formats/error.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

using nlohmann::json;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A rank's epoch: the shared fields, its steps, and its time in the all-reduce (with > 1 rank).
json RankEpochJson(const EpochStats& s) {
  json j = EpochJson(s);
  j["steps"] = s.steps;
  j["lr"] = s.lr;
  if (s.allreduce_seconds > 0) j["allreduce_seconds"] = s.allreduce_seconds;
  return j;
}

std::string DescribeInputNames(const std::vector<std::string>& inputs) {
  std::string names;
  for (const std::string& path : inputs) {
    names += (names.empty() ? "" : ", ") + InputDisplayName(path);
  }
  return names;
}

void CheckValidationFraction(double fraction) {
  if (fraction < 0 || fraction >= 1) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", fraction);
    throw UsageError(std::string("--validation-pct must be a fraction in [0, 1), got ") + shown);
  }
}

// How this rank reads its rows. The model is built before reading when its input is known, so
// that every row's features and label are checked as it is read, with its line number. Ranks
// started with the same files (mpirun) share them; ranks fed on stdin (Spark) each have their
// own rows.
RowSourceOptions RowOptions(const TrainJobOptions& options, const TrainMode& mode,
                            const Communicator& comm, c10::Device device, ModelPlan& plan) {
  RowSourceOptions row_options = options.rows;
  if (mode.plans_model() && (plan.module || SpecKnowsInputShape(plan.spec) ||
                             !plan.input_shape.empty() || row_options.format.num_features > 0)) {
    BuildModel(plan, row_options.format.num_features, device);
  }
  if (!plan.input_shape.empty()) {
    row_options.format.num_features =
        RowFeaturesFor(plan.input_shape, row_options.format.num_features);
  }
  if (comm.world_size() > 1 && !options.inputs.empty()) {
    row_options.share_rank = comm.rank();
    row_options.share_world = comm.world_size();
  }
  return row_options;
}

std::string SkippedText(int64_t skipped, const char* prefix, const char* suffix) {
  return skipped > 0 ? prefix + std::to_string(skipped) + suffix : std::string();
}

// Reads this rank's rows, and learns every rank's count and width, so that a rank with an
// empty partition builds the same model as the others.
RankRows ReadRankRows(const TrainJobOptions& options, const RowSourceOptions& row_options,
                      const RowCheck& check, Communicator& comm, const TrainMode& mode) {
  RankRows rows;
  rows.inputs =
      ExpandInputPaths(options.inputs, row_options.format.kind == RowFormatKind::kParquet);
  rows.names = DescribeInputNames(rows.inputs);
  const auto reading = std::chrono::steady_clock::now();
  RowSource source(rows.inputs, row_options, check);
  rows.data = ReadDataset(source);
  rows.read_seconds = SecondsSince(reading);
  rows.rows_read = source.rows_read();
  rows.rows_skipped = source.rows_skipped();
  const Dataset& data = rows.data;
  const int world_size = comm.world_size();
  const std::string where = world_size > 1 ? "rank " + std::to_string(comm.rank()) + ": " : "";
  const std::string all_bad = SkippedText(rows.rows_skipped, " (all ", " were bad and skipped)");
  if (data.rows() == 0 && world_size == 1 && mode.plans_model()) {
    throw InputError(rows.names + ": no rows to train on" +
                     (all_bad.empty() ? " (empty input)" : all_bad));
  }
  double all_rows = static_cast<double>(data.rows());
  double width = data.rows() > 0 ? static_cast<double>(data.features.size(1)) : 0;
  comm.AllreduceSum(&all_rows, 1);
  comm.AllreduceMax(&width, 1);
  rows.world_rows = static_cast<int64_t>(all_rows);
  rows.width = static_cast<int64_t>(width);
  if (all_rows == 0 && mode.plans_model()) {
    throw InputError("no rank has rows to train on (all " + std::to_string(world_size) +
                     " partitions are empty or bad)");
  }
  if (data.rows() == 0) {
    spdlog::warn("{}no rows in this partition{}; it takes part {}", where, all_bad,
                 mode.without_rows());
  } else {
    spdlog::info("{}read {} rows of {} features from {}{}", where, data.rows(),
                 data.features.size(1), rows.names,
                 SkippedText(rows.rows_skipped, " (", " bad rows skipped)"));
  }
  if (data.rows() > 0 && data.features.size(1) != rows.width) {
    throw InputError(rows.names + ": rows have " + std::to_string(data.features.size(1)) +
                     " features, another rank's have " + std::to_string(rows.width));
  }
  return rows;
}

// Builds the model once the rows said its input (when it was unknown while reading), and
// checks the labels then, by row number.
void BuildAfterRows(ModelPlan& plan, const RankRows& rows, const Loss& loss, bool no_label,
                    c10::Device device) {
  if (!plan.output_shape.empty()) return;
  BuildModel(plan, rows.width, device);
  if (no_label) return;
  for (int64_t i = 0; i < rows.data.rows(); ++i) {
    auto row_label = rows.data.labels[i];
    std::vector<float> label(row_label.data_ptr<float>(),
                             row_label.data_ptr<float>() + row_label.numel());
    std::string problem = loss.CheckLabel(label, plan.output_shape);
    if (!problem.empty()) {
      throw InputError(rows.names + ": row " + std::to_string(i + 1) + ": " + problem);
    }
  }
}

// The rows to train on and those held out for validation: the same for the same seed.
struct Split {
  Examples train, validation;
  int64_t held_out = 0;
};

Split SplitRows(const Dataset& data, const TrainJobOptions& options, const ModelPlan& plan,
                const Loss& loss, bool no_label) {
  Split split;
  Dataset train_rows = data, validation_rows;
  split.held_out = static_cast<int64_t>(data.rows() * options.validation_fraction);
  if (split.held_out > 0) {
    torch::Generator gen = at::detail::createCPUGenerator(options.train.seed ^ 0x5eed5eedULL);
    torch::Tensor order = torch::randperm(data.rows(), gen, torch::kLong);
    validation_rows = SelectRows(data, std::get<0>(order.narrow(0, 0, split.held_out).sort()));
    train_rows = SelectRows(
        data, std::get<0>(order.narrow(0, split.held_out, data.rows() - split.held_out).sort()));
  }
  split.train = MakeExamples(train_rows, loss, plan.input_shape, plan.output_shape, no_label);
  if (split.held_out > 0) {
    split.validation =
        MakeExamples(validation_rows, loss, plan.input_shape, plan.output_shape, no_label);
  }
  return split;
}

// What the fit gave: the result, every epoch's metrics, and the weights' checksum.
struct Fitted {
  TrainResult result;
  json history = json::array();
  double seconds = 0;
  uint32_t checksum = 0;
  std::string optimizer_state;  // rank 0's, for the model file (SaveOptimizerState)
};

// Everything a finished job writes but predictions: the model (rank 0: to -o, or as records)
// and the summary record.
struct JobOutput {
  const TrainJobOptions& options;
  const RankRows& rows;
  const ModelPlan& plan;
  const Loss& loss;
  const json& optimizer_spec;
  const Fitted& fitted;  // filled by Fit
  int64_t held_out;
  PredictionKind prediction;
  c10::Device device;
};

// The manifest of the model after `epochs_run` epochs, with `metrics` and the history so far.
Manifest TrainedManifest(const JobOutput& o, const Communicator& comm, const json& metrics, int epochs_run,
                         const json& schedule_state) {
  const TrainJobOptions& options = o.options;
  const bool no_label = options.rows.format.label == LabelPresence::kNone;
  Manifest manifest =
      PlanManifest(o.plan, o.loss, o.optimizer_spec, options.rows.format, no_label, o.prediction);
  manifest.training = {{"epochs", options.train.epochs},
                       {"epochs_run", epochs_run},
                       {"batch_size", options.train.batch_size},
                       {"validation_pct", options.validation_fraction},
                       {"early_stop_patience", options.train.early_stop_patience},
                       {"seed", options.train.seed},
                       {"shuffle", options.train.shuffle},
                       {"rows", o.rows.world_rows},
                       {"world_size", comm.world_size()},
                       {"mode", options.mode},
                       {"launcher", options.launcher},
                       {"device", o.device.str()}};
  if (schedule_state.is_object() && !schedule_state.empty()) {
    manifest.training["lr_schedule_state"] = schedule_state;
  }
  manifest.metrics = metrics;
  manifest.history = o.fitted.history;
  return manifest;
}

// --lr-scaling: the rate for `ranks` ranks, whose step averages `ranks` times the rows of one.
void ScaleLr(const std::string& scaling, int ranks, json* optimizer_spec) {
  if (scaling == "none" || ranks <= 1) return;
  const double lr = optimizer_spec->at("lr").get<double>();
  const double factor = scaling == "linear" ? ranks : std::sqrt(static_cast<double>(ranks));
  (*optimizer_spec)["lr"] = lr * factor;
  spdlog::info("lr {:g} scaled ({}) for {} ranks: {:g}", lr, scaling, ranks, lr * factor);
}

// Resuming a model sparktorch trained, unless --fresh-optimizer: its optimizer's state (when the
// file has one for the same optimizer), the epochs it trained and its schedule's position.
TrainOptions ResumeOptions(const JobOutput& o, const TrainMode& mode, torch::optim::Optimizer& optimizer,
                           const std::vector<torch::Tensor>& params) {
  TrainOptions train = o.options.train;
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

// Rank 0's model after an epoch, written to -o with its optimizer's state, for a restart.
void WriteCheckpoint(const JobOutput& o, const Communicator& comm, const torch::jit::Module& module,
                     const EpochStats& stats, const std::string& optimizer_state) {
  torch::jit::Module copy = module.deepcopy();
  copy.to(torch::kCPU);
  const Manifest manifest = TrainedManifest(o, comm, RankEpochJson(stats), stats.epoch, stats.lr_schedule_state);
  WriteModelFile(o.options.output_path, copy, manifest, optimizer_state);
  spdlog::info("checkpoint after epoch {} written to {}", stats.epoch, o.options.output_path);
}

// Trains the module on the split, then lets the mode finish (a hogwild worker's weights become
// the server's); the checksum is of the weights after that. Fills o.fitted.
void Fit(const JobOutput& o, Fitted& fitted, Communicator& comm, TrainMode& mode,
         torch::jit::Module& module, const Split& split) {
  const TrainJobOptions& options = o.options;
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : module.parameters()) params.push_back(p);
  auto optimizer = MakeOptimizer(o.optimizer_spec, params);
  const TrainOptions train = ResumeOptions(o, mode, *optimizer, params);
  Trainer trainer(module, o.loss, *optimizer, comm, o.device, train);
  const int epochs = options.train.epochs * std::max(1, options.train.partition_shuffles);
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
  spdlog::info("{}training {} parameters for {} epoch{} on {} rows ({} for validation), batch {}, "
               "{} with {}{}, loss {}",
               comm.world_size() > 1 ? "rank " + std::to_string(rank) + ": " : "", num_params,
               epochs, epochs == 1 ? "" : "s", split.train.rows(), split.held_out,
               options.train.batch_size <= 0 ? std::string("whole partition")
                                             : std::to_string(options.train.batch_size),
               o.device.str(), o.optimizer_spec.dump(),
               train.lr_schedule.is_null() ? "" : ", lr_schedule " + train.lr_schedule.dump(),
               o.loss.name());
  const bool checkpoints = options.checkpoint_every > 0 && mode.writes_model(rank);
  const auto training = std::chrono::steady_clock::now();
  fitted.result = trainer.Fit(split.train, split.validation, [&](const EpochStats& stats) {
    const json epoch = RankEpochJson(stats);
    fitted.history.push_back(epoch);
    if (rank == 0) {
      spdlog::info("{}", ProgressLine(ProgressOf(stats, last)));
      if (options.report_epoch && mode.reports_epochs()) {
        json report = epoch;
        report["epochs"] = last;
        options.report_epoch(report.dump());
      }
    }
    if (metrics.is_open()) metrics << epoch.dump() << '\n' << std::flush;
    if (checkpoints && stats.epoch % options.checkpoint_every == 0 && stats.epoch < last) {
      WriteCheckpoint(o, comm, module, stats, SaveOptimizerState(*optimizer, o.optimizer_spec, params));
    }
  });
  fitted.seconds = SecondsSince(training);
  mode.Finish(o.rows, fitted.result, options.train.early_stop_patience);
  fitted.checksum = trainer.WeightsChecksum();
  if (mode.plans_model() && mode.writes_model(rank)) {
    fitted.optimizer_state = SaveOptimizerState(*optimizer, o.optimizer_spec, params);
  }
}

void WritePredictions(RecordWriter& records, torch::jit::Module& module, const Dataset& data,
                      const ModelPlan& plan, const Loss& loss, PredictionKind prediction,
                      c10::Device device) {
  Predictor predictor(module, device, plan.input_shape, prediction, loss.name());
  predictor.PredictInBatches(data.features, 1024, [&](int64_t i, std::string_view text) {
    records.WritePrediction(data.ids.empty() ? std::string_view() : data.ids[i], text);
  });
}

void WriteModelAndSummary(const JobOutput& o, torch::jit::Module& module, const Communicator& comm,
                          const TrainMode& mode, RecordWriter& records, double total_seconds) {
  const TrainJobOptions& options = o.options;
  const TrainResult& result = o.fitted.result;
  const EpochStats& last = result.epochs.back();
  // The metrics of the weights written: with early stopping, the best epoch's.
  json final_metrics = RankEpochJson(result.kept_epoch > 0 ? result.Epoch(result.kept_epoch) : last);
  final_metrics["stopped_early"] = result.stopped_early;
  if (result.kept_epoch > 0) final_metrics["kept_epoch"] = result.kept_epoch;
  const Manifest manifest =
      TrainedManifest(o, comm, final_metrics, last.epoch, result.lr_schedule_state);
  module.to(torch::kCPU);  // a saved model loads anywhere
  if (mode.writes_model(comm.rank())) {
    WriteJobModel(records, options.output_path, module, manifest, o.fitted.optimizer_state);
  }
  json summary = final_metrics;
  summary["rank"] = comm.rank();
  summary["world_size"] = comm.world_size();
  summary["mode"] = options.mode;
  summary["partition_rows"] = o.rows.data.rows();
  char checksum[16];
  std::snprintf(checksum, sizeof checksum, "%08x", o.fitted.checksum);
  summary["weights_crc32"] = checksum;
  mode.Summarise(&summary);
  summary["rows_read"] = o.rows.rows_read;
  summary["rows_skipped"] = o.rows.rows_skipped;
  summary["validation_rows"] = o.held_out;
  summary["epochs"] = last.epoch;
  summary["read_seconds"] = o.rows.read_seconds;
  summary["train_seconds"] = o.fitted.seconds;
  summary["history"] = o.fitted.history;
  summary["total_seconds"] = total_seconds;
  if (!options.output_path.empty() && comm.rank() == 0) summary["model_path"] = options.output_path;
  records.WriteSummary(summary.dump());
  records.Flush();
}

// The job: plan the model, read the rows, let the mode join, build, fit, predict, write.
void Run(const TrainJobOptions& options, Communicator& comm, std::FILE* out, TrainMode& mode) {
  const auto started = std::chrono::steady_clock::now();
  const c10::Device device = ResolveDevice(options.device);
  CheckValidationFraction(options.validation_fraction);
  if (options.lr_scaling != "none" && !mode.plans_model()) {
    throw UsageError("--lr-scaling: a hogwild worker does not step the server's optimizer; it is "
                     "for synchronous ranks");
  }
  if (options.checkpoint_every > 0 && !mode.plans_model()) {
    throw UsageError("--checkpoint-every: a hogwild worker does not write the model; the parameter "
                     "server does");
  }
  if (options.checkpoint_every > 0 && options.output_path.empty()) {
    throw UsageError("--checkpoint-every needs --output FILE: a checkpoint is the model file a "
                     "restarted job continues from");
  }
  ModelPlan plan = mode.plans_model() ? PlanModel(options.model, device) : ModelPlan();
  torch::manual_seed(options.train.seed);  // after PlanModel, whose spec check draws weights
  Loss loss = Loss::FromSpec(mode.plans_model() ? plan.loss_spec : json("cross_entropy"));
  json optimizer_spec = mode.plans_model() ? CompleteOptimizerSpec(plan.optimizer_spec) : json();
  const bool no_label = options.rows.format.label == LabelPresence::kNone;

  const RowSourceOptions row_options = RowOptions(options, mode, comm, device, plan);
  RowCheck check;
  if (!no_label && !plan.output_shape.empty()) {
    check = [&loss, &plan](const Row& row) { return loss.CheckLabel(row.label, plan.output_shape); };
  }
  const RankRows rows = ReadRankRows(options, row_options, check, comm, mode);
  if (!mode.AfterRows(rows, device, &plan)) return;
  if (!mode.plans_model()) {
    loss = Loss::FromSpec(plan.loss_spec);
    optimizer_spec = CompleteOptimizerSpec(plan.optimizer_spec);
  }
  plan.lr_schedule_spec = CompleteLrScheduleSpec(plan.lr_schedule_spec);
  ScaleLr(options.lr_scaling, comm.world_size(), &optimizer_spec);
  BuildAfterRows(plan, rows, loss, no_label, device);
  torch::jit::Module& module = *plan.module;
  module.to(device);

  if (const std::string why = loss.CheckWeights(plan.output_shape); !why.empty()) throw SpecError(why);
  const Split split = SplitRows(rows.data, options, plan, loss, no_label);
  const PredictionKind prediction = options.prediction.value_or(DefaultPrediction(loss.name()));
  Fitted fitted;
  const JobOutput output{options, rows, plan, loss, optimizer_spec, fitted, split.held_out,
                         prediction, device};
  Fit(output, fitted, comm, mode, module, split);

  RecordWriter records(out, "stdout");
  if (options.predict) {
    WritePredictions(records, module, rows.data, plan, loss, prediction, device);
  }
  WriteModelAndSummary(output, module, comm, mode, records, SecondsSince(started));
}

}  // namespace

void RunTrainJob(const TrainJobOptions& options, Communicator& comm, std::FILE* out) {
  std::unique_ptr<TrainMode> mode = MakeTrainMode(options);
  try {
    Run(options, comm, out, *mode);
  } catch (const PeerError&) {
    throw;  // the server is gone: nobody to tell
  } catch (const RendezvousError&) {
    throw;  // it cannot be reached
  } catch (const RefusedError&) {
    throw;  // it does not take this worker
  } catch (const std::exception& e) {
    mode->Failed(e.what());
    throw;
  }
}

}  // namespace sparktorch
