#include "core/jobs/train_job.h"

#include <chrono>
#include <fstream>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/data/dataset.h"
#include "core/data/input_files.h"
#include "core/device.h"
#include "core/jobs/model_plan.h"
#include "core/model/model_file.h"
#include "core/model/spec_compiler.h"
#include "core/ps/hogwild_worker.h"
#include "core/train/epoch_progress.h"
#include "core/train/examples.h"
#include "core/train/optimizer.h"
#include "formats/error.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

using nlohmann::json;

EpochProgress Progress(const EpochStats& s, int epochs) {
  EpochProgress p;
  p.epoch = s.epoch;
  p.epochs = epochs;
  p.train_loss = s.train_loss;
  p.train_accuracy = s.train_accuracy;
  p.validation_loss = s.validation_loss;
  p.validation_accuracy = s.validation_accuracy;
  p.samples_per_second = s.samples_per_second;
  p.elapsed = s.elapsed;
  return p;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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

std::string DescribeInputNames(const std::vector<std::string>& inputs) {
  std::string names;
  for (const std::string& path : inputs) {
    names += (names.empty() ? "" : ", ") + InputDisplayName(path);
  }
  return names;
}

// RunTrainJob, with the hogwild worker's connection (once made) in `client`, so that the caller
// can tell the server when this worker fails.
void Run(const TrainJobOptions& options, Communicator& comm, std::FILE* out,
         std::unique_ptr<PsClient>& client) {
  const auto started = std::chrono::steady_clock::now();
  const c10::Device device = ResolveDevice(options.device);
  if (options.validation_fraction < 0 || options.validation_fraction >= 1) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", options.validation_fraction);
    throw UsageError(std::string("--validation-pct must be a fraction in [0, 1), got ") + shown);
  }
  // A hogwild worker's model, loss and optimizer come from the parameter server, after the rows.
  const bool hogwild = options.hogwild.has_value();
  ModelPlan plan = hogwild ? ModelPlan() : PlanModel(options.model, device);
  torch::manual_seed(options.train.seed);  // after PlanModel, whose spec check draws weights
  Loss loss = Loss::FromSpec(hogwild ? json("cross_entropy") : plan.loss_spec);
  json optimizer_spec = hogwild ? json() : CompleteOptimizerSpec(plan.optimizer_spec);
  const bool no_label = options.rows.format.label == LabelPresence::kNone;

  // Build the model before reading when its input is known, so that every row's features and
  // label are checked as it is read, with its line number.
  RowSourceOptions row_options = options.rows;
  if (!hogwild && (plan.module || SpecKnowsInputShape(plan.spec) || !plan.input_shape.empty() ||
                   row_options.format.num_features > 0)) {
    BuildModel(plan, row_options.format.num_features, device);
  }
  if (!plan.input_shape.empty()) {
    row_options.format.num_features =
        RowFeaturesFor(plan.input_shape, row_options.format.num_features);
  }
  RowCheck check;
  if (!no_label && !plan.output_shape.empty()) {
    check = [&loss, &plan](const Row& row) { return loss.CheckLabel(row.label, plan.output_shape); };
  }

  const std::vector<std::string> inputs = ExpandInputPaths(options.inputs);
  const int rank = comm.rank();
  const int world_size = comm.world_size();
  if (world_size > 1 && !options.inputs.empty()) {
    // Ranks started with the same files (mpirun) share them; ranks fed on stdin (Spark) each
    // have their own rows.
    row_options.share_rank = rank;
    row_options.share_world = world_size;
  }
  const auto reading = std::chrono::steady_clock::now();
  RowSource source(inputs, row_options, check);
  Dataset data = ReadDataset(source);
  const double read_seconds = SecondsSince(reading);
  const std::string where = world_size > 1 ? "rank " + std::to_string(rank) + ": " : "";
  if (data.rows() == 0 && world_size == 1 && !hogwild) {
    throw InputError(DescribeInputNames(inputs) + ": no rows to train on" +
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
  if (all_rows == 0 && !hogwild) {
    throw InputError("no rank has rows to train on (all " + std::to_string(world_size) +
                     " partitions are empty or bad)");
  }
  if (data.rows() == 0) {
    spdlog::warn("{}no rows in this partition{}; it takes part {}", where,
                 source.rows_skipped() > 0
                     ? " (all " + std::to_string(source.rows_skipped()) + " were bad and skipped)"
                     : std::string(),
                 hogwild ? "without pushing gradients" : "in every step with none");
  } else {
    spdlog::info("{}read {} rows of {} features from {}{}", where, data.rows(), data.features.size(1),
                 DescribeInputNames(inputs),
                 source.rows_skipped() > 0
                     ? " (" + std::to_string(source.rows_skipped()) + " bad rows skipped)"
                     : std::string());
  }
  if (data.rows() > 0 && data.features.size(1) != static_cast<int64_t>(width)) {
    throw InputError(DescribeInputNames(inputs) + ": rows have " +
                     std::to_string(data.features.size(1)) + " features, another rank's have " +
                     std::to_string(static_cast<int64_t>(width)));
  }
  if (hogwild) {
    PsClientOptions connect = *options.hogwild;
    json info = {{"row_format", RowFormatToJson(options.rows.format)},
                 {"no_label", no_label},
                 {"rows", data.rows()}};
    if (options.prediction) info["prediction"] = PredictionKindName(*options.prediction);
    connect.worker_info = info.dump();
    try {
      client = std::make_unique<PsClient>(connect);
    } catch (const WorkerCountedLost& lost) {
      // Spark retried a task that the server had given up on; the job went on without it.
      spdlog::warn("the parameter server counted worker {} as lost earlier in this job ({}); the "
                   "job goes on without this worker",
                   lost.worker(), lost.reason());
      return;
    }
    if (options.on_worker_id) options.on_worker_id(client->worker());
    plan = PlanServedModel(client->welcome().model(), "the parameter server's model", device);
    loss = Loss::FromSpec(plan.loss_spec);
    optimizer_spec = CompleteOptimizerSpec(plan.optimizer_spec);
    spdlog::info("joined the parameter server at {} as worker {} of {}: {} model, loss {}{}",
                 connect.server.ToString(), client->worker(), connect.world_size, plan.source,
                 loss.name(), client->welcome().lock() ? ", with its lock" : "");
    if (connect.worker < 0) {
      spdlog::info("this worker has no rows (an empty partition); the parameter server gave it "
                   "worker id {}, which no other worker claimed",
                   client->worker());
    }
    const int64_t want = Product(plan.input_shape);
    if (data.rows() > 0 && data.features.size(1) != want) {
      throw InputError(DescribeInputNames(inputs) + ": rows have " + std::to_string(data.features.size(1)) +
                       " features, the parameter server's model takes " + std::to_string(want));
    }
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
          throw InputError(DescribeInputNames(inputs) + ": row " + std::to_string(i + 1) + ": " + problem);
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
  const int epochs = options.train.epochs * std::max(1, options.train.partition_shuffles);
  std::unique_ptr<HogwildWorker> worker;
  if (client) {
    worker = std::make_unique<HogwildWorker>(*client, params, epochs);
    trainer.SetHooks(worker.get());
  }

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
               epochs, epochs == 1 ? "" : "s", train.rows(), held_out,
               options.train.batch_size <= 0 ? std::string("whole partition")
                                             : std::to_string(options.train.batch_size),
               device.str(), optimizer_spec.dump(), loss.name());
  const auto training = std::chrono::steady_clock::now();
  json history = json::array();
  TrainResult result = trainer.Fit(train, validation, [&](const EpochStats& stats) {
    const json epoch = EpochJson(stats);
    history.push_back(epoch);
    if (rank == 0) {
      spdlog::info("{}", ProgressLine(Progress(stats, epochs)));
      if (options.report_epoch && !worker) {
        json report = epoch;
        report["epochs"] = epochs;
        options.report_epoch(report.dump());
      }
    }
    if (metrics.is_open()) metrics << epoch.dump() << '\n' << std::flush;
  });
  const double train_seconds = SecondsSince(training);
  if (result.stopped_early && worker) {
    spdlog::info("the parameter server stopped the job after epoch {}", result.epochs.back().epoch);
  } else if (result.stopped_early) {
    spdlog::info("stopped early after epoch {}: no improvement for {} epochs",
                 result.epochs.back().epoch, options.train.early_stop_patience);
  }
  if (worker) {
    // Predictions and the summary use the server's weights as they are when this worker is done.
    json done = {{"worker", client->worker()},
                 {"rows", data.rows()},
                 {"epochs", result.epochs.empty() ? 0 : result.epochs.back().epoch},
                 {"pushes", client->pushes()},
                 {"pushes_dropped", client->pushes_dropped()}};
    worker->Finish(done.dump());
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
  Manifest manifest =
      PlanManifest(plan, loss, optimizer_spec, options.rows.format, no_label, prediction);
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
  manifest.history = history;

  module.to(torch::kCPU);  // a saved model loads anywhere
  if (rank != 0 || worker) {
    // Every rank holds the same weights; rank 0 writes them. The parameter server writes a
    // hogwild job's.
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
  if (worker) {
    summary["rank"] = client->worker();  // a worker's own world is one process
    summary["worker"] = client->worker();
    summary["world_size"] = options.hogwild->world_size;
    summary["pulls"] = client->pulls();
    summary["pushes"] = client->pushes();
    summary["pushes_dropped"] = client->pushes_dropped();
    summary["weights_version"] = worker->version();
    summary["server_seconds"] = client->seconds();
  }
  summary["rows_read"] = source.rows_read();
  summary["rows_skipped"] = source.rows_skipped();
  summary["validation_rows"] = held_out;
  summary["epochs"] = last.epoch;
  summary["read_seconds"] = read_seconds;
  summary["train_seconds"] = train_seconds;
  summary["history"] = history;
  summary["total_seconds"] = SecondsSince(started);
  if (!options.output_path.empty() && rank == 0) summary["model_path"] = options.output_path;
  records.WriteSummary(summary.dump());
  records.Flush();
}

}  // namespace

void RunTrainJob(const TrainJobOptions& options, Communicator& comm, std::FILE* out) {
  std::unique_ptr<PsClient> client;
  try {
    Run(options, comm, out, client);
  } catch (const PeerError&) {
    throw;  // the server is gone: nobody to tell
  } catch (const RendezvousError&) {
    throw;  // it cannot be reached
  } catch (const RefusedError&) {
    throw;  // it does not take this worker
  } catch (const std::exception& e) {
    if (!client && options.hogwild) {
      // A worker that fails before it connects (a bad row) still tells the server why, so the
      // server reports it at once instead of waiting out its --timeout for a worker that never
      // comes. Best effort, briefly.
      try {
        PsClientOptions brief = *options.hogwild;
        brief.timeout = std::min(brief.timeout, 10.0);
        client = std::make_unique<PsClient>(brief);
      } catch (const std::exception&) {
      }
    }
    if (client) client->Fail(e.what());
    throw;
  }
}

}  // namespace sparktorch
