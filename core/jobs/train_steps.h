#ifndef SPARKTORCH_CORE_JOBS_TRAIN_STEPS_H_
#define SPARKTORCH_CORE_JOBS_TRAIN_STEPS_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/data/row_source.h"
#include "core/jobs/model_plan.h"
#include "core/jobs/train_mode.h"
#include "core/train/loss.h"
#include "core/train/predictor.h"
#include "core/train/trainer.h"
#include "formats/records.h"

// The steps of RunTrainJob (train_job.cc), one concept a file: the rows (train_rows.cc), the fit
// (train_fit.cc) and what the job writes (train_output.cc).
namespace sparktorch {

// train_rows.cc: how this rank reads its rows. The model is built before reading when its input
// is known, so that every row's features and label are checked as it is read, with its line
// number. Ranks started with the same files (mpirun) share them; ranks fed on stdin (Spark) each
// have their own rows.
RowSourceOptions RankReaderOptions(const TrainJobOptions& options, const TrainRun& run,
                                   const TrainMode& mode, const Communicator& comm,
                                   c10::Device device, ModelPlan& plan);

// Reads this rank's rows, and learns every rank's count and width, so that a rank with an
// empty partition builds the same model as the others.
RankRows ReadRankRows(const TrainJobOptions& options, const RowSourceOptions& reader,
                      const RowCheck& check, Communicator& comm, const TrainMode& mode);

// Builds the model once the rows said its input (when it was unknown while reading), and
// checks the labels then, by row number.
void BuildAfterRows(ModelPlan& plan, const RankRows& rows, const Loss& loss, bool no_label,
                    c10::Device device);

// The rows to train on and those held out for validation: the same for the same seed.
struct Split {
  Examples train, validation;
  int64_t held_out = 0;
};
Split SplitRows(const Dataset& data, const TrainJobOptions& options, const ModelPlan& plan,
                const Loss& loss, bool no_label);

// What the fit gave: the result, every epoch's metrics, and the weights' checksum.
struct Fitted {
  TrainResult result;
  nlohmann::json history = nlohmann::json::array();
  double seconds = 0;
  uint32_t checksum = 0;
  std::string optimizer_state;  // rank 0's, for the model file (SaveOptimizerState)
};

// What a rank trains once its rows are read and its model built: the job's inputs (the flags,
// how this process takes part), and each part a step of RunTrainJob made, moved in and owned
// here. The steps after (the fit, the output) take it whole.
struct TrainSetup {
  const TrainJobOptions& options;
  const TrainRun& run;
  RowFormat format;  // as the rows were read
  c10::Device device;
  RankRows rows;
  ModelPlan plan;  // built: plan.module is the module trained
  Loss loss;
  nlohmann::json optimizer_spec;  // completed, its lr scaled for the ranks
  PredictionKind prediction;
  int64_t held_out = 0;  // rows held out for validation (SplitRows)
};

// train_fit.cc: --lr-scaling, the rate for `ranks` ranks, whose step averages `ranks` times the
// rows of one.
void ScaleLr(LrScaling scaling, int ranks, nlohmann::json* optimizer_spec);

// Trains the setup's module on the split, then lets the mode finish (a hogwild worker's weights
// become the server's); the checksum is of the weights after that.
Fitted Fit(const TrainSetup& s, Communicator& comm, TrainMode& mode, const Split& split);

// train_output.cc: a rank's epoch as records and metrics carry it.
nlohmann::json RankEpochJson(const EpochStats& s);

// The manifest of the model after `epochs_run` epochs, with `metrics` and `history`, the
// epochs so far.
Manifest TrainedManifest(const TrainSetup& s, const Communicator& comm,
                         const nlohmann::json& metrics, int epochs_run,
                         const nlohmann::json& schedule_state, const nlohmann::json& history);

// A prediction record for every row of this rank, with the weights the module has now.
void WritePredictions(const TrainSetup& s, RecordWriter& records);

// The model (rank 0: to -o, to the tracker, or as records) and the summary record.
void WriteModelAndSummary(const TrainSetup& s, const Fitted& fitted, const Communicator& comm,
                          const TrainMode& mode, RecordWriter& records, double total_seconds);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_TRAIN_STEPS_H_
