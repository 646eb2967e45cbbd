#include "core/jobs/train_mode.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/ps/hogwild_worker.h"
#include "core/ps/ps_client.h"
#include "core/train/feature_scale.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// A rank of a world: one process alone, or one of the synchronous ranks. The world's
// communicator, which the trainer all-reduces over, is all it trains with.
class RankMode : public TrainMode {
 public:
  bool plans_model() const override { return true; }
  const char* without_rows() const override { return "in every step with none"; }
  bool AfterRows(const RankRows&, c10::Device, ModelPlan*) override { return true; }
  TrainHooks* Hooks(const std::vector<at::Tensor>&, int) override { return nullptr; }
  bool reports_epochs() const override { return true; }
  void Finish(const RankRows&, const TrainResult& result, int patience) override {
    if (result.stopped_early) {
      spdlog::info("stopped early after epoch {}: no improvement for {} epochs",
                   result.epochs.back().epoch, patience);
    }
  }
  bool writes_model(int rank) const override { return rank == 0; }
  void Summarise(json*) const override {}
  void Failed(const std::string&) noexcept override {}
};

// A hogwild worker: its model, loss and optimizer come from the parameter server once its rows
// are read; it pulls and pushes through HogwildWorker's hooks, and the server writes the model.
class HogwildMode : public TrainMode {
 public:
  HogwildMode(const TrainRun& run, const RowFormat& format,
              std::optional<PredictionKind> prediction)
      : run_(run), format_(format), prediction_(prediction) {}

  bool plans_model() const override { return false; }
  const char* without_rows() const override { return "without pushing gradients"; }

  bool AfterRows(const RankRows& rows, c10::Device device, ModelPlan* plan) override {
    PsClientOptions connect = *run_.hogwild;
    json info = {{"row_format", RowFormatToJson(format_)},
                 {"no_label", format_.label == LabelPresence::kNone},
                 {"rows", rows.data.rows()}};
    if (prediction_) info["prediction"] = NameIn(kPredictionKindNames, *prediction_);
    const FeatureScale scale = MeasureFeatureScale(rows.data.features);
    if (scale.values > 0) {
      // For the server to warn on the driver when they are far from unit scale.
      info["feature_rms"] = scale.Rms();
      info["feature_max_abs"] = scale.max_abs;
    }
    connect.worker_info = info.dump();
    try {
      client_ = std::make_unique<PsClient>(connect);
    } catch (const WorkerCountedLost& lost) {
      // Spark retried a task that the server had given up on; the job went on without it.
      spdlog::warn("the parameter server counted worker {} as lost earlier in this job ({}); the "
                   "job goes on without this worker",
                   lost.worker(), lost.reason());
      return false;
    }
    if (run_.on_worker_id) run_.on_worker_id(client_->worker());
    *plan = PlanServedModel(client_->welcome().model(), "the parameter server's model", device);
    spdlog::info("joined the parameter server at {} as worker {} of {}: {} model, loss {}{}",
                 connect.server.ToString(), client_->worker(), connect.world_size, plan->source,
                 Loss::FromSpec(plan->loss_spec).name(),
                 client_->welcome().lock() ? ", with its lock" : "");
    if (connect.worker < 0) {
      spdlog::info("this worker has no rows (an empty partition); the parameter server gave it "
                   "worker id {}, which no other worker claimed",
                   client_->worker());
    }
    if (plan->source == "spec" && SpecTakesFeaturesAsTheyAre(plan->spec)) {
      const std::string warning = UnscaledFeaturesWarning(scale, rows.names);
      if (!warning.empty()) spdlog::warn("{}", warning);
    }
    const int64_t want = Product(plan->input_shape);
    if (rows.data.rows() > 0 && rows.data.features.size(1) != want) {
      throw InputError(rows.names + ": rows have " + std::to_string(rows.data.features.size(1)) +
                       " features, the parameter server's model takes " + std::to_string(want));
    }
    return true;
  }

  TrainHooks* Hooks(const std::vector<at::Tensor>& params, int epochs) override {
    worker_ = std::make_unique<HogwildWorker>(*client_, params, epochs);
    return worker_.get();
  }

  bool reports_epochs() const override { return false; }

  void Finish(const RankRows& rows, const TrainResult& result, int) override {
    if (result.stopped_early) {
      spdlog::info("the parameter server stopped the job after epoch {}", result.epochs.back().epoch);
    }
    // Predictions and the summary use the server's weights as they are when this worker is done.
    json done = {{"worker", client_->worker()},
                 {"rows", rows.data.rows()},
                 {"epochs", result.epochs.empty() ? 0 : result.epochs.back().epoch},
                 {"pushes", client_->pushes()},
                 {"pushes_dropped", client_->pushes_dropped()}};
    worker_->Finish(done.dump());
  }

  bool writes_model(int) const override { return false; }

  void Summarise(json* summary) const override {
    json& s = *summary;
    s["rank"] = client_->worker();  // a worker's own world is one process
    s["worker"] = client_->worker();
    s["world_size"] = run_.hogwild->world_size;
    s["pulls"] = client_->pulls();
    s["pushes"] = client_->pushes();
    s["pushes_dropped"] = client_->pushes_dropped();
    s["weights_version"] = worker_->version();
    s["server_seconds"] = client_->seconds();
  }

  void Failed(const std::string& what) noexcept override {
    if (!client_) {
      // A worker that fails before it connects (a bad row) still tells the server why, so the
      // server reports it at once instead of waiting out its --timeout for a worker that never
      // comes. Best effort, briefly.
      try {
        PsClientOptions brief = *run_.hogwild;
        brief.timeout = std::min(brief.timeout, 10.0);
        client_ = std::make_unique<PsClient>(brief);
      } catch (const std::exception&) {
      }
    }
    if (client_) client_->Fail(what);
  }

 private:
  const TrainRun& run_;
  const RowFormat format_;
  const std::optional<PredictionKind> prediction_;
  std::unique_ptr<PsClient> client_;
  std::unique_ptr<HogwildWorker> worker_;
};

}  // namespace

std::unique_ptr<TrainMode> MakeTrainMode(const TrainRun& run, const RowFormat& format,
                                         std::optional<PredictionKind> prediction) {
  if (run.hogwild) return std::make_unique<HogwildMode>(run, format, prediction);
  return std::make_unique<RankMode>();
}

}  // namespace sparktorch
