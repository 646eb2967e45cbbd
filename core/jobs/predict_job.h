#ifndef SPARKTORCH_CORE_JOBS_PREDICT_JOB_H_
#define SPARKTORCH_CORE_JOBS_PREDICT_JOB_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/jobs/row_options.h"
#include "formats/prediction_kind.h"

namespace sparktorch {

// Everything `sparktorch predict` is told (the man page gives each field's meaning).
struct PredictJobOptions {
  std::string model_path;
  // Laid over the row format in the model's manifest (rows as the model was trained on, the
  // label optional) or, for a model without one, over the defaults; input_shape empty: the
  // manifest's, else {num_features}.
  RowOptions rows;
  int64_t batch_size = 1024;
  std::optional<PredictionKind> prediction;  // empty: the manifest's default
  std::string device = "cpu";
  int threads = 0;  // CPU threads; 0: DefaultThreads()
  // Not empty: a line equal to it ends a group of rows; the group's predictions are written,
  // then this text on a line of its own, and the process reads on (the Spark layer keeps one
  // predict process per executor this way, answering partition after partition).
  std::string group_end;
};

// Runs `sparktorch predict` on `threads` CPU threads: writes to `out` exactly one line per input row, in input order:
// the prediction ("VALUE"), or "ID<TAB>VALUE" for a row with an id; an empty line for a bad row
// skipped under --on-bad-row skip; group_end's line after each group. Rows are read and predicted in batches. Throws the
// sparktorch::Error kinds.
void RunPredictJob(const PredictJobOptions& options, std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_PREDICT_JOB_H_
