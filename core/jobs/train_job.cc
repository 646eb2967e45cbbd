#include "core/jobs/train_job.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/data/dataset.h"
#include "core/data/input_files.h"
#include "core/device.h"
#include "core/model/model_file.h"
#include "core/model/spec_compiler.h"
#include "core/train/examples.h"
#include "core/train/optimizer.h"
#include "core/version.h"
#include "formats/error.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

using nlohmann::json;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The model being trained and what is known about it before the rows are read.
struct ModelPlan {
  std::string source;  // "spec" or "torchscript"
  json spec;           // the JSON spec, when there is one
  std::optional<torch::jit::Module> module;  // loaded, or compiled once the shape is known
  std::optional<Manifest> manifest;          // of a model sparktorch trained before
  json loss_spec;
  json optimizer_spec;
  std::vector<int64_t> input_shape;
  std::vector<int64_t> output_shape;
};

// The spec's first linear layer fixes the input when nothing else does.
bool SpecKnowsInputShape(const json& spec) {
  if (spec.contains("input_shape")) return true;
  const json* layers = spec.contains("layers") ? &spec["layers"] : nullptr;
  return layers && layers->is_array() && !layers->empty() && (*layers)[0].is_object() &&
         (*layers)[0].value("type", "") == "linear";
}

ModelPlan PlanModel(const TrainJobOptions& options, c10::Device device) {
  ModelPlan plan;
  json config;  // where loss and optimizer come from
  if (EndsWith(options.model_path, ".json")) {
    plan.source = "spec";
    plan.spec = ReadJsonFile(options.model_path);
    CheckSpec(plan.spec);
    config = plan.spec;
  } else {
    ModelFile file = ReadModelFile(options.model_path, device);
    plan.module = file.module;
    plan.manifest = file.manifest;
    if (file.manifest) {
      spdlog::info("continuing training of {} (trained by sparktorch {})", options.model_path,
                   file.manifest->sparktorch_version);
      plan.source = file.manifest->source;
      plan.spec = file.manifest->spec;
      plan.input_shape = file.manifest->input_shape;
      config = {{"loss", file.manifest->loss}, {"optimizer", file.manifest->optimizer}};
    } else {
      plan.source = "torchscript";
      std::string config_path = options.train_config;
      if (config_path.empty()) {
        std::string beside = options.model_path.substr(0, options.model_path.rfind('.')) + ".json";
        if (FileExists(beside)) {
          spdlog::info("loss and optimizer from {}", beside);
          config_path = beside;
        }
      }
      if (!config_path.empty()) config = ReadJsonFile(config_path);
    }
  }
  if (!options.train_config.empty() && plan.source == "spec" && !plan.manifest) {
    // A spec carries its own loss and optimizer; a config file given as well overrides them.
    json extra = ReadJsonFile(options.train_config);
    for (const char* key : {"loss", "optimizer"}) {
      if (extra.contains(key)) config[key] = extra[key];
    }
  }
  if (!config.is_object()) config = json::object();

  // Flags win over files; files over defaults.
  plan.loss_spec = options.loss ? json(*options.loss)
                                : config.value("loss", json("cross_entropy"));
  if (options.optimizer) {
    plan.optimizer_spec = {{"type", *options.optimizer}};
    json from_file = config.value("optimizer", json());
    if (from_file.is_object() && from_file.value("type", "") == *options.optimizer) {
      plan.optimizer_spec = from_file;
    }
  } else {
    plan.optimizer_spec = config.value("optimizer", json("adam"));
  }
  if (plan.optimizer_spec.is_string()) plan.optimizer_spec = {{"type", plan.optimizer_spec}};
  if (options.lr) {
    if (!plan.optimizer_spec.is_object()) {
      throw SpecError("optimizer: expected a name or an object with a \"type\"");
    }
    plan.optimizer_spec["lr"] = *options.lr;
  }
  if (!options.input_shape.empty()) plan.input_shape = options.input_shape;
  return plan;
}

// Compiles the spec (when the model comes from one and is not yet built) and learns the output
// shape. `num_features` is 0 when no row has been read yet.
void BuildModel(ModelPlan& plan, int64_t num_features, c10::Device device) {
  if (!plan.module) {
    CompiledSpec compiled = CompileSpec(plan.spec, plan.input_shape, num_features);
    plan.module = compiled.module;
    plan.input_shape = compiled.input_shape;
    plan.output_shape = compiled.output_shape;
    plan.module->to(device);
    return;
  }
  if (plan.input_shape.empty()) {
    if (num_features == 0) return;  // after the rows
    plan.input_shape = {num_features};
  }
  plan.output_shape = ProbeOutputShape(*plan.module, plan.input_shape);
}

std::string LabelKind(const Loss& loss, bool no_label, const std::vector<int64_t>& output_shape) {
  if (no_label) return "input";
  if (loss.takes_class_index()) return "class";
  return Product(output_shape) == 1 ? "value" : "vector";
}

std::string Fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string ProgressLine(const EpochStats& s, int epochs) {
  std::string line = "epoch " + std::to_string(s.epoch) + "/" + std::to_string(epochs) +
                     ": loss " + Fixed(s.train_loss, 4);
  if (s.train_accuracy) line += " accuracy " + Fixed(*s.train_accuracy, 4);
  if (s.validation_loss) line += " val_loss " + Fixed(*s.validation_loss, 4);
  if (s.validation_accuracy) line += " val_accuracy " + Fixed(*s.validation_accuracy, 4);
  line += " | " + std::to_string(static_cast<int64_t>(s.samples_per_second)) + " samples/s, " +
          Fixed(s.elapsed, 1) + " s elapsed";
  return line;
}

json EpochJson(const EpochStats& s) {
  json j = {{"epoch", s.epoch},
            {"rows", s.rows},
            {"steps", s.steps},
            {"train_loss", s.train_loss},
            {"seconds", s.seconds},
            {"elapsed", s.elapsed},
            {"samples_per_second", s.samples_per_second}};
  if (s.train_accuracy) j["train_accuracy"] = *s.train_accuracy;
  if (s.validation_loss) j["validation_loss"] = *s.validation_loss;
  if (s.validation_accuracy) j["validation_accuracy"] = *s.validation_accuracy;
  if (s.allreduce_seconds > 0) j["allreduce_seconds"] = s.allreduce_seconds;
  return j;
}

std::string DescribeInputs(const std::vector<std::string>& inputs) {
  std::string names;
  for (const std::string& path : inputs) {
    names += (names.empty() ? "" : ", ") + InputDisplayName(path);
  }
  return names;
}

}  // namespace

void RunTrainJob(const TrainJobOptions& options, Communicator& comm, std::FILE* out) {
  const auto started = std::chrono::steady_clock::now();
  const c10::Device device = ResolveDevice(options.device);
  if (options.validation_fraction < 0 || options.validation_fraction >= 1) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", options.validation_fraction);
    throw UsageError(std::string("--validation-pct must be a fraction in [0, 1), got ") + shown);
  }
  ModelPlan plan = PlanModel(options, device);
  torch::manual_seed(options.train.seed);  // after PlanModel, whose spec check draws weights
  const Loss loss = Loss::FromSpec(plan.loss_spec);
  const json optimizer_spec = CompleteOptimizerSpec(plan.optimizer_spec);
  const bool no_label = options.rows.format.label == LabelPresence::kNone;

  // Build the model before reading when its input is known, so that every row's features and
  // label are checked as it is read, with its line number.
  RowSourceOptions row_options = options.rows;
  if (plan.module || SpecKnowsInputShape(plan.spec) || !plan.input_shape.empty() ||
      row_options.format.num_features > 0) {
    BuildModel(plan, row_options.format.num_features, device);
  }
  if (!plan.input_shape.empty()) {
    const int64_t want = Product(plan.input_shape);
    if (row_options.format.num_features > 0 && row_options.format.num_features != want) {
      throw UsageError("--num-features " + std::to_string(row_options.format.num_features) +
                       " does not match the model's input of " + std::to_string(want) + " values");
    }
    row_options.format.num_features = want;
  }
  RowCheck check;
  if (!no_label && !plan.output_shape.empty()) {
    check = [&loss, &plan](const Row& row) { return loss.CheckLabel(row.label, plan.output_shape); };
  }

  const std::vector<std::string> inputs = ExpandInputs(options.inputs);
  const int rank = comm.rank();
  const int world_size = comm.world_size();
  if (world_size > 1 && !options.inputs.empty()) {
    // Ranks started with the same files (mpirun) share them; ranks fed on stdin (Spark) each
    // have their own rows.
    row_options.share_rank = rank;
    row_options.share_world = world_size;
  }
  RowSource source(inputs, row_options, check);
  Dataset data = ReadDataset(source);
  const std::string where = world_size > 1 ? "rank " + std::to_string(rank) + ": " : "";
  if (data.rows() == 0 && world_size == 1) {
    throw InputError(DescribeInputs(inputs) + ": no rows to train on" +
                     (source.rows_skipped() > 0
                          ? " (all " + std::to_string(source.rows_skipped()) + " were bad and skipped)"
                          : " (empty input)"));
  }
  // Every rank learns the world's rows and the width of its rows, so that a rank with an empty
  // partition builds the same model as the others.
  double all_rows = static_cast<double>(data.rows());
  double width = data.rows() > 0 ? static_cast<double>(data.features.size(1)) : 0;
  comm.AllreduceSum(&all_rows, 1);
  comm.AllreduceMax(&width, 1);
  if (all_rows == 0) {
    throw InputError("no rank has rows to train on (all " + std::to_string(world_size) +
                     " partitions are empty or bad)");
  }
  if (data.rows() == 0) {
    spdlog::warn("{}no rows in this partition{}; it takes part in every step with none", where,
                 source.rows_skipped() > 0
                     ? " (all " + std::to_string(source.rows_skipped()) + " were bad and skipped)"
                     : std::string());
  } else {
    spdlog::info("{}read {} rows of {} features from {}{}", where, data.rows(), data.features.size(1),
                 DescribeInputs(inputs),
                 source.rows_skipped() > 0
                     ? " (" + std::to_string(source.rows_skipped()) + " bad rows skipped)"
                     : std::string());
  }
  if (data.rows() > 0 && data.features.size(1) != static_cast<int64_t>(width)) {
    throw InputError(DescribeInputs(inputs) + ": rows have " +
                     std::to_string(data.features.size(1)) + " features, another rank's have " +
                     std::to_string(static_cast<int64_t>(width)));
  }
  if (plan.output_shape.empty()) {
    BuildModel(plan, static_cast<int64_t>(width), device);
    if (!no_label) {
      // The model was unknown while reading; check the labels now, by row number.
      for (int64_t i = 0; i < data.rows(); ++i) {
        auto row_label = data.labels[i];
        std::vector<float> label(row_label.data_ptr<float>(),
                                 row_label.data_ptr<float>() + row_label.numel());
        std::string problem = loss.CheckLabel(label, plan.output_shape);
        if (!problem.empty()) {
          throw InputError(DescribeInputs(inputs) + ": row " + std::to_string(i + 1) + ": " + problem);
        }
      }
    }
  }
  torch::jit::Module& module = *plan.module;
  module.to(device);

  // Hold out a validation split, the same rows for the same seed.
  Dataset train_rows = data, validation_rows;
  const int64_t held_out = static_cast<int64_t>(data.rows() * options.validation_fraction);
  if (held_out > 0) {
    torch::Generator split = at::detail::createCPUGenerator(options.train.seed ^ 0x5eed5eedULL);
    torch::Tensor order = torch::randperm(data.rows(), split, torch::kLong);
    validation_rows = SelectRows(data, std::get<0>(order.narrow(0, 0, held_out).sort()));
    train_rows = SelectRows(data, std::get<0>(order.narrow(0, held_out, data.rows() - held_out).sort()));
  }
  Examples train = MakeExamples(train_rows, loss, plan.input_shape, plan.output_shape, no_label);
  Examples validation;
  if (held_out > 0) {
    validation = MakeExamples(validation_rows, loss, plan.input_shape, plan.output_shape, no_label);
  }

  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : module.parameters()) params.push_back(p);
  auto optimizer = MakeOptimizer(optimizer_spec, params);
  Trainer trainer(module, loss, *optimizer, comm, device, options.train);

  std::ofstream metrics;
  if (!options.metrics_path.empty() && rank == 0) {  // the metrics are the world's, alike on every rank
    metrics.open(options.metrics_path, std::ios::trunc);
    if (!metrics) throw UsageError("--metrics " + options.metrics_path + ": cannot write this file");
  }
  spdlog::info("{}training {} parameters for {} epoch{} on {} rows ({} for validation), batch {}, {} "
               "with {}, loss {}",
               where,
               [&] {
                 int64_t n = 0;
                 for (const auto& p : params) n += p.numel();
                 return n;
               }(),
               options.train.epochs, options.train.epochs == 1 ? "" : "s", train.rows(), held_out,
               options.train.batch_size <= 0 ? std::string("whole partition")
                                             : std::to_string(options.train.batch_size),
               device.str(), optimizer_spec.dump(), loss.name());
  TrainResult result = trainer.Fit(train, validation, [&](const EpochStats& stats) {
    if (rank == 0) spdlog::info("{}", ProgressLine(stats, options.train.epochs));
    if (metrics.is_open()) metrics << EpochJson(stats).dump() << '\n' << std::flush;
  });
  if (result.stopped_early) {
    spdlog::info("stopped early after epoch {}: no improvement for {} epochs",
                 result.epochs.back().epoch, options.train.early_stop_patience);
  }

  RecordWriter records(out, "stdout");
  const PredictionKind prediction = options.prediction.value_or(DefaultPrediction(loss.name()));
  if (options.predict) {
    Predictor predictor(module, device, plan.input_shape, prediction, loss.name());
    constexpr int64_t kBatch = 1024;
    for (int64_t start = 0; start < data.rows(); start += kBatch) {
      int64_t n = std::min(kBatch, data.rows() - start);
      predictor.Predict(data.features.narrow(0, start, n), [&](int64_t i, std::string_view text) {
        records.WritePrediction(data.ids.empty() ? std::string_view() : data.ids[start + i], text);
      });
    }
  }

  const EpochStats& last = result.epochs.back();
  json final_metrics = EpochJson(last);
  final_metrics["stopped_early"] = result.stopped_early;
  Manifest manifest;
  manifest.sparktorch_version = kVersion;
  manifest.source = plan.source;
  manifest.spec = plan.spec;
  manifest.input_shape = plan.input_shape;
  manifest.output_shape = plan.output_shape;
  manifest.row_format = options.rows.format;
  manifest.row_format.num_features = Product(plan.input_shape);
  manifest.label_kind = LabelKind(loss, no_label, plan.output_shape);
  manifest.num_classes = loss.takes_class_index() && !plan.output_shape.empty() ? plan.output_shape[0] : 0;
  manifest.prediction = PredictionKindName(prediction);
  manifest.loss = loss.ToJson();
  manifest.optimizer = optimizer_spec;
  manifest.training = {{"epochs", options.train.epochs},
                       {"epochs_run", last.epoch},
                       {"batch_size", options.train.batch_size},
                       {"validation_pct", options.validation_fraction},
                       {"early_stop_patience", options.train.early_stop_patience},
                       {"seed", options.train.seed},
                       {"shuffle", options.train.shuffle},
                       {"rows", static_cast<int64_t>(all_rows)},
                       {"world_size", world_size},
                       {"mode", options.mode},
                       {"launcher", options.launcher},
                       {"device", device.str()}};
  manifest.metrics = final_metrics;

  module.to(torch::kCPU);  // a saved model loads anywhere
  if (rank != 0) {
    // Every rank holds the same weights; rank 0 writes them.
  } else if (options.output_path.empty()) {
    records.WriteModel(SerializeModel(module, manifest));
  } else {
    WriteModelFile(options.output_path, module, manifest);
    spdlog::info("model written to {}", options.output_path);
  }

  json summary = final_metrics;
  summary["rank"] = rank;
  summary["world_size"] = world_size;
  summary["mode"] = options.mode;
  summary["partition_rows"] = data.rows();
  char checksum[16];
  std::snprintf(checksum, sizeof checksum, "%08x", trainer.WeightsChecksum());
  summary["weights_crc32"] = checksum;
  summary["rows_read"] = source.rows_read();
  summary["rows_skipped"] = source.rows_skipped();
  summary["validation_rows"] = held_out;
  summary["epochs"] = last.epoch;
  summary["total_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!options.output_path.empty() && rank == 0) summary["model_path"] = options.output_path;
  records.WriteSummary(summary.dump());
  records.Flush();
}

}  // namespace sparktorch
