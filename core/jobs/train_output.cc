#include <cstdio>

#include "core/jobs/train_steps.h"
#include "core/model/model_file.h"
#include "core/progress/epoch_progress.h"

// What a train job writes: the trained model's manifest, prediction records, the model (rank 0)
// and the summary record.
namespace sparktorch {

using nlohmann::json;

// The shared fields, its steps, and its time in the all-reduce (with > 1 rank).
json RankEpochJson(const EpochStats& s) {
  json j = EpochJson(s);
  j["steps"] = s.steps;
  j["lr"] = s.lr;
  if (s.allreduce_seconds > 0) j["allreduce_seconds"] = s.allreduce_seconds;
  return j;
}

Manifest TrainedManifest(const TrainSetup& o, const Communicator& comm, const json& metrics,
                         int epochs_run, const json& schedule_state, const json& history) {
  const TrainJobOptions& options = o.options;
  const bool no_label = o.format.label == LabelPresence::kNone;
  Manifest manifest =
      PlanManifest(o.plan, o.loss, o.optimizer_spec, o.format, no_label, o.prediction);
  manifest.training = {{"epochs", options.epochs + o.run.resumed_after},
                       {"epochs_run", epochs_run},
                       {"batch_size", options.batch_size},
                       {"steps_per_epoch", options.steps_per_epoch},
                       {"validation_pct", options.validation_fraction},
                       {"early_stop_patience", options.early_stop_patience},
                       {"seed", options.seed},
                       {"shuffle", options.shuffle},
                       {"rows", o.rows.world_rows},
                       {"world_size", comm.world_size()},
                       {"mode", o.run.mode},
                       {"launcher", o.run.launcher},
                       {"device", o.device.str()}};
  if (!o.run.job_key.empty()) manifest.training["job_key"] = o.run.job_key;
  if (o.run.resumed_after > 0) manifest.training["resumed_after_epoch"] = o.run.resumed_after;
  if (schedule_state.is_object() && !schedule_state.empty()) {
    manifest.training["lr_schedule_state"] = schedule_state;
  }
  manifest.metrics = metrics;
  manifest.history = history;
  return manifest;
}

void WritePredictions(const TrainSetup& s, RecordWriter& records) {
  const Dataset& data = s.rows.data;
  Predictor predictor(*s.plan.module, s.device, s.plan.input_shape, s.prediction, s.loss.name());
  predictor.PredictInBatches(data.features, 1024, [&](int64_t i, std::string_view text) {
    records.WritePrediction(data.ids.empty() ? std::string_view() : data.ids[i], text);
  });
}

void WriteModelAndSummary(const TrainSetup& o, const Fitted& fitted, const Communicator& comm,
                          const TrainMode& mode, RecordWriter& records, double total_seconds) {
  const TrainJobOptions& options = o.options;
  const TrainResult& result = fitted.result;
  torch::jit::Module module = *o.plan.module;
  const EpochStats& last = result.epochs.back();
  // The metrics of the weights written: with early stopping, the best epoch's.
  json final_metrics = RankEpochJson(result.kept_epoch > 0 ? result.Epoch(result.kept_epoch) : last);
  final_metrics["stopped_early"] = result.stopped_early;
  if (result.kept_epoch > 0) final_metrics["kept_epoch"] = result.kept_epoch;
  const Manifest manifest =
      TrainedManifest(o, comm, final_metrics, last.epoch, result.lr_schedule_state, fitted.history);
  module.to(torch::kCPU);  // a saved model loads anywhere
  if (mode.writes_model(comm.rank()) && o.run.send_model) {
    o.run.send_model(SerializeModel(module, manifest, fitted.optimizer_state));
  } else if (mode.writes_model(comm.rank())) {
    WriteJobModel(records, options.output_path, module, manifest, fitted.optimizer_state);
  }
  json summary = final_metrics;
  summary["rank"] = comm.rank();
  summary["world_size"] = comm.world_size();
  summary["mode"] = o.run.mode;
  summary["partition_rows"] = o.rows.data.rows();
  char checksum[16];
  std::snprintf(checksum, sizeof checksum, "%08x", fitted.checksum);
  summary["weights_crc32"] = checksum;
  mode.Summarise(&summary);
  summary["rows_read"] = o.rows.rows_read;
  summary["rows_skipped"] = o.rows.rows_skipped;
  summary["validation_rows"] = o.held_out;
  summary["epochs"] = last.epoch;
  if (o.run.resumed_after > 0) summary["resumed_after_epoch"] = o.run.resumed_after;
  summary["read_seconds"] = o.rows.read_seconds;
  summary["spilled_bytes"] = o.rows.spilled_bytes;
  summary["train_seconds"] = fitted.seconds;
  summary["history"] = fitted.history;
  summary["total_seconds"] = total_seconds;
  if (!options.output_path.empty() && comm.rank() == 0) summary["model_path"] = options.output_path;
  records.WriteSummary(summary.dump());
  records.Flush();
}

}  // namespace sparktorch
