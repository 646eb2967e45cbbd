#include <chrono>
#include <optional>

#include <spdlog/spdlog.h>

#include "core/device.h"
#include "core/jobs/failure.h"
#include "core/jobs/train_steps.h"
#include "core/net/errors.h"
#include "core/train/lr_schedule.h"
#include "core/train/optimizer.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CheckValidationFraction(double fraction) {
  if (fraction < 0 || fraction >= 1) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", fraction);
    throw UsageError(std::string("--validation-pct must be a fraction in [0, 1), got ") + shown);
  }
}

// The job: plan the model, read the rows, let the mode join, build, fit, predict, write.
void Run(const TrainJobOptions& options, const TrainRun& run, Communicator& comm, std::FILE* out,
         TrainMode& mode) {
  const auto started = std::chrono::steady_clock::now();
  const c10::Device device = ResolveDevice(options.device);
  CheckValidationFraction(options.validation_fraction);
  if (options.lr_scaling != LrScaling::kNone && !mode.plans_model()) {
    throw UsageError("--lr-scaling: a hogwild worker does not step the server's optimizer; it is "
                     "for synchronous ranks");
  }
  if (options.allreduce_dtype != AllreduceDtype::kFloat32 && !mode.plans_model()) {
    throw UsageError("--allreduce-dtype: a hogwild worker pushes its gradients to the server; "
                     "it is for synchronous ranks");
  }
  if (options.allreduce_overlap && !mode.plans_model()) {
    throw UsageError("--allreduce-overlap: a hogwild worker pushes its gradients to the server; "
                     "it is for synchronous ranks");
  }
  if (options.checkpoint_every > 0 && !mode.plans_model()) {
    throw UsageError("--checkpoint-every: a hogwild worker does not write the model; the parameter "
                     "server does");
  }
  if (options.checkpoint_every > 0 && options.output_path.empty() &&
      !run.send_checkpoint) {
    throw UsageError("--checkpoint-every needs --output FILE, or a --tracker to send the "
                     "checkpoints to: a checkpoint is the model file a restarted job continues from");
  }
  if (options.send_model && !run.send_model) {
    throw UsageError(mode.plans_model()
                         ? "--send-model needs --tracker: the model goes to the tracker's serve"
                         : "--send-model: a hogwild worker does not write the model; the "
                           "parameter server does");
  }
  // A rank plans its model from --model before its rows; a hogwild worker gets it after them.
  const bool planned = mode.plans_model();
  ModelPlan plan = planned ? PlanModel(options.model, run.input_shape, device) : ModelPlan();
  torch::manual_seed(options.seed);  // after PlanModel, whose spec check draws weights
  Loss loss = Loss::FromSpec(planned ? plan.loss_spec : json("cross_entropy"));
  json optimizer_spec = planned ? CompleteOptimizerSpec(plan.optimizer_spec) : json();
  const bool no_label = run.reader.format.label == LabelPresence::kNone;

  const RowSourceOptions row_options = RankReaderOptions(options, run, mode, comm, device, plan);
  RowCheck check;
  if (!no_label && !plan.output_shape.empty()) {
    check = [&loss, &plan](const Row& row) { return loss.CheckLabel(row.label, plan.output_shape); };
  }
  RankRows rows = ReadRankRows(options, row_options, check, comm, mode);
  if (!mode.AfterRows(rows, device, &plan)) return;
  if (!planned) {
    loss = Loss::FromSpec(plan.loss_spec);
    optimizer_spec = CompleteOptimizerSpec(plan.optimizer_spec);
  }
  plan.lr_schedule_spec = CompleteLrScheduleSpec(plan.lr_schedule_spec);
  ScaleLr(options.lr_scaling, comm.world_size(), &optimizer_spec);
  BuildAfterRows(plan, rows, loss, no_label, device);
  plan.module->to(device);
  if (const std::string why = loss.CheckWeights(plan.output_shape); !why.empty()) throw SpecError(why);

  const PredictionKind prediction = options.prediction.value_or(DefaultPrediction(loss.name()));
  TrainSetup setup{options,         run,         row_options.format,       device,
                   std::move(rows), std::move(plan), std::move(loss), std::move(optimizer_spec),
                   prediction};
  const Split split = SplitRows(setup.rows.data, options, setup.plan, setup.loss, no_label);
  setup.held_out = split.held_out;
  const Fitted fitted = Fit(setup, comm, mode, split);

  RecordWriter records(out, "stdout");
  if (options.predict) WritePredictions(setup, records);
  WriteModelAndSummary(setup, fitted, comm, mode, records, SecondsSince(started));
}

}  // namespace

void RunTrainJob(const TrainJobOptions& options, const TrainRun& run, Communicator& comm,
                 std::FILE* out) {
  std::unique_ptr<TrainMode> mode = MakeTrainMode(run, run.reader.format, options.prediction);
  try {
    Run(options, run, comm, out, *mode);
  } catch (const PeerError&) {
    throw;  // the server is gone: nobody to tell
  } catch (const RendezvousError&) {
    throw;  // it cannot be reached
  } catch (const RefusedError&) {
    throw;  // it does not take this worker
  } catch (const Error& e) {
    mode->Failed(MessageOf(e));
    throw;
  } catch (const std::exception& e) {
    mode->Failed(e.what());
    throw;
  }
}

}  // namespace sparktorch
