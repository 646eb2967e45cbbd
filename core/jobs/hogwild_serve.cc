#include "core/jobs/hogwild_serve.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/jobs/model_plan.h"
#include "core/jobs/row_plan.h"
#include "core/model/model_file.h"
#include "core/net/errors.h"
#include "core/progress/epoch_progress.h"
#include "core/train/feature_scale.h"
#include "core/train/lr_schedule.h"
#include "core/train/optimizer.h"
#include "core/train/trainer.h"
#include "formats/error.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// The server's epoch: the shared fields, the workers that reported it and their validation rows.
json ServedEpochJson(const ServedEpoch& e) {
  json j = EpochJson(e);
  j["workers"] = e.workers;
  j["lr"] = e.lr;
  if (e.validation_loss) j["validation_rows"] = e.validation_rows;
  return j;
}

// The lost workers as the summary lists them, each with why; throws PeerError when none
// finished, which leaves no model.
json LostWorkers(const ParameterServerReport& report, int world_size) {
  json lost = json::array();
  std::string lost_text;
  for (const auto& [id, why] : report.lost) {
    lost.push_back({{"worker", id}, {"reason", why}});
    lost_text += (lost_text.empty() ? "" : "; ") + ("worker " + std::to_string(id) + ": " + why);
  }
  if (report.finished.empty()) {
    throw PeerError("no worker finished, so there is no model (" + lost_text + ")", false);
  }
  if (!report.lost.empty()) {
    spdlog::warn("{} of {} workers finished; lost: {}", report.finished.size(), world_size,
                 lost_text);
  }
  return lost;
}

// The final manifest: how the workers read their rows, and the job's last numbers.
void FinishManifest(const ParameterServerReport& report, const ModelPlan& plan,
                    Manifest* manifest) {
  json info = json::parse(report.worker_info, nullptr, false);
  if (info.is_object() && info.contains("row_format")) {
    try {
      manifest->row_format = RowFormatFromJson(info["row_format"]);
    } catch (const Error& e) {
      spdlog::warn("worker's row format not recorded in the model: {}", e.what());
    }
    manifest->row_format.num_features = Product(plan.input_shape);
    if (info.value("no_label", false)) manifest->label_kind = "input";
    if (info.contains("prediction") && info["prediction"].is_string()) {
      manifest->prediction = info["prediction"];
    }
  }
  json metrics = report.epochs.empty() ? json::object() : ServedEpochJson(report.epochs.back());
  metrics["stopped_early"] = report.stopped_early;
  manifest->metrics = metrics;
  manifest->history = json::array();
  for (const ServedEpoch& e : report.epochs) manifest->history.push_back(ServedEpochJson(e));
}

// A trained --model's optimizer state for the server to resume from, unless --fresh-optimizer or
// the file has none for this optimizer type. Returns the epochs the model was trained before
// (its manifest's epochs_run), which the new model's epochs_run adds to; 0 when not resuming.
// The epochs of the workers and the server's schedule count from 1 again.
int ResumedOptimizer(const HogwildServeOptions& options, const ModelPlan& plan, const json& optimizer_spec,
                     ParameterServerOptions* server) {
  if (!plan.manifest || options.fresh_optimizer) return 0;
  const std::string& path = options.model.model_path;
  const std::string type = optimizer_spec.at("type").get<std::string>();
  if (plan.optimizer_state.empty() || plan.manifest->optimizer.value("type", "") != type) {
    spdlog::info("{} holds no {} state: the server's optimizer starts afresh", path, type);
    return 0;
  }
  server->optimizer_state = plan.optimizer_state;
  const int epochs = plan.manifest->training.value("epochs_run", 0);
  spdlog::info("resuming the {} state of {} (trained {} epoch{}); the workers' epochs count from 1", type,
               path, epochs, epochs == 1 ? "" : "s");
  return epochs;
}

// The model the server trains, planned and built from the flags, with its loss and optimizer;
// refuses what a server cannot run (a one-cycle schedule, a model whose input it cannot know).
struct ServedModel {
  ModelPlan plan;
  Loss loss;
  json optimizer_spec;
};

ServedModel PlanServedModel(const HogwildServeOptions& options, const c10::Device& device) {
  ModelPlan plan =
      PlanModel(options.model, ParseShape(options.model.input_shape, "--input-shape"), device);
  torch::manual_seed(options.seed);  // the initial weights every worker starts from
  Loss loss = Loss::FromSpec(plan.loss_spec);
  json optimizer_spec = CompleteOptimizerSpec(plan.optimizer_spec);
  plan.lr_schedule_spec = CompleteLrScheduleSpec(plan.lr_schedule_spec);
  if (plan.lr_schedule_spec.is_object() && plan.lr_schedule_spec.value("type", "") == "one_cycle") {
    throw UsageError("--lr-schedule one_cycle: a hogwild server cannot know the steps of the run "
                     "in advance; use cosine (with warmup_epochs) or another epoch schedule");
  }
  if (plan.input_shape.empty() && (plan.module || !SpecKnowsInputShape(plan.spec))) {
    throw UsageError("--model " + options.model.model_path +
                     ": the model does not say what its input is, and the server builds it before "
                     "any row arrives; give --input-shape (the rows' features, e.g. 784 or 1,28,28)");
  }
  BuildModel(plan, 0, device);
  if (const std::string why = loss.CheckWeights(plan.output_shape); !why.empty()) throw SpecError(why);
  return {std::move(plan), std::move(loss), std::move(optimizer_spec)};
}

// The trained model's manifest "training" object: how the server ran.
json HogwildTraining(const HogwildServeOptions& options, const ParameterServerOptions& server,
                     const ParameterServerReport& report, int epochs_before) {
  return {{"mode", "hogwild"},
          {"launcher", "serve"},
          {"epochs_run", epochs_before + (report.epochs.empty() ? 0 : report.epochs.back().epoch)},
          {"world_size", server.world_size},
          {"workers_finished", report.finished.size()},
          {"lock", server.lock},
          {"pull_every", server.pull_every},
          {"max_staleness", server.max_staleness},
          {"early_stop_patience", server.early_stop_patience},
          {"updates", report.updates},
          {"seed", options.seed},
          {"device", "cpu"}};
}

// The summary record of a served job: the manifest's metrics, the workers (`lost`:
// LostWorkers's) and the updates.
json HogwildSummary(const Manifest& manifest, const ParameterServerOptions& server,
                    const ParameterServerReport& report, const json& lost,
                    const std::vector<at::Tensor>& params, const std::string& output_path) {
  json summary = manifest.metrics;
  summary["mode"] = "hogwild";
  summary["world_size"] = server.world_size;
  summary["workers_finished"] = report.finished;
  summary["workers_lost"] = lost;
  summary["updates"] = report.updates;
  summary["updates_dropped_stale"] = report.dropped;
  summary["staleness_max"] = report.max_staleness;
  summary["staleness_mean"] = report.mean_staleness;
  summary["weights_version"] = report.version;
  summary["epochs"] = report.epochs.empty() ? 0 : report.epochs.back().epoch;
  summary["refused_connections"] = report.refused_connections;
  summary["total_seconds"] = report.seconds;
  char checksum[16];
  std::snprintf(checksum, sizeof checksum, "%08x", ParametersCrc32(params));
  summary["weights_crc32"] = checksum;
  if (!output_path.empty()) summary["model_path"] = output_path;
  return summary;
}

}  // namespace

void RunHogwildServe(const HogwildServeOptions& options, ParameterServerOptions server_options,
                     const std::function<void(int port)>& announce, std::FILE* out) {
  const c10::Device device(torch::kCPU);
  ServedModel served = PlanServedModel(options, device);
  ModelPlan& plan = served.plan;
  torch::jit::Module& module = *plan.module;
  Manifest manifest = PlanManifest(plan, served.loss, served.optimizer_spec, RowFormat(), false,
                                   DefaultPrediction(served.loss.name()));
  manifest.training = {{"mode", "hogwild"}};

  server_options.model = SerializeModel(module, manifest);
  server_options.optimizer = served.optimizer_spec;
  server_options.lr_schedule = plan.lr_schedule_spec;
  server_options.check_feature_scale =
      plan.source == "spec" && SpecTakesFeaturesAsTheyAre(plan.spec);
  const int epochs_before = ResumedOptimizer(options, plan, served.optimizer_spec, &server_options);
  std::vector<at::Tensor> params;
  for (const torch::Tensor& p : module.parameters()) params.push_back(p);
  int64_t num_params = 0;
  for (const at::Tensor& p : params) num_params += p.numel();
  ParameterServer server(server_options, params);
  spdlog::info("parameter server for {} worker{}: {} parameters, loss {}, optimizer {}{}{}{}",
               server_options.world_size, server_options.world_size == 1 ? "" : "s", num_params,
               served.loss.name(), served.optimizer_spec.dump(), server_options.lock ? ", lock" : "",
               server_options.pull_every > 1 ? ", pull every " + std::to_string(server_options.pull_every) + " steps" : "",
               server_options.max_staleness >= 0 ? ", max staleness " + std::to_string(server_options.max_staleness) : "");
  announce(server.port());
  ParameterServerReport report = server.Run();

  const json lost = LostWorkers(report, server_options.world_size);  // throws without a model
  FinishManifest(report, plan, &manifest);
  manifest.training = HogwildTraining(options, server_options, report, epochs_before);
  RecordWriter records(out, "stdout");
  WriteJobModel(records, options.output_path, module, manifest, server.OptimizerState());
  records.WriteSummary(
      HogwildSummary(manifest, server_options, report, lost, params, options.output_path).dump());
  records.Flush();
  spdlog::info("{} updates applied ({} dropped as stale, staleness max {} mean {:.2f}), final loss {}",
               report.updates, report.dropped, report.max_staleness, report.mean_staleness,
               report.epochs.empty() ? std::string("unknown")
                                     : fmt::format("{:.4f}", report.epochs.back().train_loss));
}

}  // namespace sparktorch
