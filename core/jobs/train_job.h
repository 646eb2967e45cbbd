#ifndef SPARKTORCH_CORE_JOBS_TRAIN_JOB_H_
#define SPARKTORCH_CORE_JOBS_TRAIN_JOB_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/data/row_source.h"
#include "core/jobs/model_source.h"
#include "core/dist/communicator.h"
#include "core/ps/ps_client.h"
#include "core/train/predictor.h"
#include "core/train/trainer.h"

namespace sparktorch {

// Everything `sparktorch train` is told. The meaning of each field is the flag's in the man page.
struct TrainJobOptions {
  ModelSource model;  // what to train; its output_path below
  std::vector<std::string> inputs;  // empty: stdin
  RowSourceOptions rows;

  TrainOptions train;
  double validation_fraction = 0;  // of the rows, held out for validation
  std::string device = "cpu";

  bool predict = false;                      // write a prediction record per input row
  std::optional<PredictionKind> prediction;  // empty: the loss's default
  std::string output_path;                   // empty: model records on stdout
  std::string metrics_path;                  // JSON lines, one per epoch; empty: none
  int checkpoint_every = 0;     // epochs between checkpoints to output_path (rank 0); 0: none
  bool fresh_optimizer = false;  // a trained model's optimizer state, epochs and schedule ignored
  // The optimizer's lr for N synchronous ranks: "none" (as given), "linear" (times N), "sqrt"
  // (times the square root of N).
  std::string lr_scaling = "none";

  // Hogwild: the parameter server this worker trains with (mode "hogwild"). The model, loss and
  // optimizer then come from the server; `model` is not used.
  std::optional<PsClientOptions> hogwild;

  // How the ranks were started, for the manifest and the summary: "local", "sync" or "hogwild", and
  // "none", "mpirun" or "tracker".
  std::string mode = "local";
  std::string launcher = "none";

  // Called on rank 0 after every epoch with its metrics, the `--metrics` JSON object plus
  // `epochs` (the number planned), for a tracker that shows the job's progress. May be empty.
  std::function<void(const std::string& json)> report_epoch;
  // Hogwild: called once the parameter server has admitted this worker, with its id (the one it
  // claimed, or the one the server gave a worker without one), before anything else is logged
  // under it. May be empty.
  std::function<void(int worker)> on_worker_id;
};

// Runs `sparktorch train` on one rank of `comm`'s world: reads the rows (with files as inputs and
// more than one rank, this rank's share of them), builds or loads the model, trains it with the
// other ranks, and writes prediction records for its own rows (with `predict`), the model (rank
// 0 only: to output_path, or as records) and a summary record to `out`. Progress goes to the log
// (stderr). A hogwild worker whose id the parameter server counted as lost earlier in the job (a
// task that Spark retried) logs a warning and returns without writing anything: the job goes on
// without it. Throws the sparktorch::Error kinds of formats/error.h.
void RunTrainJob(const TrainJobOptions& options, Communicator& comm, std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_TRAIN_JOB_H_
