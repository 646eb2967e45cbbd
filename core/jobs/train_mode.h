#ifndef SPARKTORCH_CORE_JOBS_TRAIN_MODE_H_
#define SPARKTORCH_CORE_JOBS_TRAIN_MODE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "core/data/dataset.h"
#include "core/jobs/model_plan.h"
#include "core/jobs/train_run.h"
#include "core/train/predictor.h"
#include "core/train/trainer.h"
#include "formats/row_format.h"

namespace sparktorch {

// A rank's rows, as RunTrainJob read them, and what the world learned about them.
struct RankRows {
  std::vector<std::string> inputs;
  std::string names;  // the inputs as messages name them
  Dataset data;
  int64_t rows_read = 0;
  int64_t rows_skipped = 0;
  double read_seconds = 0;
  int64_t world_rows = 0;  // every rank's together
  int64_t width = 0;       // features of any rank's rows (0: no rank has one)
  uint64_t spilled_bytes = 0;  // of the rows, in the spill file (see core/data/spill.h)
};

// What differs between the ways one `train` process takes part in a job, plugged into
// RunTrainJob: a rank of a world (alone, or synchronous over MPI) plans its model from --model
// before reading, trains with its world and (rank 0) writes the model; a hogwild worker reads its
// rows, then gets the model from the parameter server, trains with it through the trainer's hooks,
// and leaves the model to the server (core/jobs/train_mode.cc).
class TrainMode {
 public:
  virtual ~TrainMode() = default;

  // Whether the model comes from --model before the rows; otherwise AfterRows gives it.
  virtual bool plans_model() const = 0;
  // How a rank without rows takes part, for the log line that says so.
  virtual const char* without_rows() const = 0;
  // After the rows: a worker joins the server and sets *plan to the model it sends. Returns
  // false when this process must end at once, writing nothing (the server counted it lost).
  virtual bool AfterRows(const RankRows& rows, c10::Device device, ModelPlan* plan) = 0;
  // The hooks the trainer calls around its steps, made once the module's parameters exist;
  // nullptr for none. Owned by the mode.
  virtual TrainHooks* Hooks(const std::vector<at::Tensor>& params, int epochs) = 0;
  // Whether rank 0 passes each epoch's metrics to the job's tracker (report_epoch).
  virtual bool reports_epochs() const = 0;
  // After the fit: says how an early stop came, and tells whom it concerns that this process
  // is done.
  virtual void Finish(const RankRows& rows, const TrainResult& result, int patience) = 0;
  // Whether this process writes the model: rank 0 of a world; never a worker (its server does).
  virtual bool writes_model(int rank) const = 0;
  // Adds this mode's fields to the summary record.
  virtual void Summarise(nlohmann::json* summary) const = 0;
  // The job failed with `what`: tells whom it concerns. Never throws.
  virtual void Failed(const std::string& what) noexcept = 0;
};

// The mode `run` says: a hogwild worker when run.hogwild is set (which tells the server how it
// reads rows, `format`, and the `prediction` asked for), else a rank.
std::unique_ptr<TrainMode> MakeTrainMode(const TrainRun& run, const RowFormat& format,
                                         std::optional<PredictionKind> prediction);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_TRAIN_MODE_H_
