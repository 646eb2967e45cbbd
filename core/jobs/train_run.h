#ifndef SPARKTORCH_CORE_JOBS_TRAIN_RUN_H_
#define SPARKTORCH_CORE_JOBS_TRAIN_RUN_H_

#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "core/data/row_source.h"
#include "core/world/communicator.h"
#include "core/jobs/train_job.h"
#include "core/ps/ps_client.h"
#include "core/train/predictor.h"

namespace sparktorch {

// What one train process made of its flags, parsed once before anything else (a malformed value
// is a usage error before any file or peer is touched), and how it takes part in its job, as
// RunTrain (train_launch.cc) decided it from TrainLaunch and the world it joined.
struct TrainRun {
  // The Rows flags over the defaults. share_rank and share_world: this process's share of
  // input files that every process was given; a synchronous world's rank and size take
  // their place.
  RowSourceOptions reader;
  std::vector<int64_t> input_shape;          // --input-shape; empty: the model's or the rows'
  // Hogwild: the parameter server this worker trains with. The model, loss and optimizer then
  // come from the server; the job's `model` is not used.
  std::optional<PsClientOptions> hogwild;
  // For the manifest and the summary: "local", "sync" or "hogwild", and "none", "mpirun",
  // "tracker" or "serve".
  std::string mode = "local";
  std::string launcher = "none";
  // Called on rank 0 after every epoch with its metrics, the `--metrics` JSON object plus
  // `epochs` (the number planned), for a tracker that shows the job's progress. May be empty.
  std::function<void(const std::string& json)> report_epoch;
  // Hogwild: called once the parameter server has admitted this worker, with its id (the one it
  // claimed, or the one the server gave a worker without one), before anything else is logged
  // under it. May be empty.
  std::function<void(int worker)> on_worker_id;
  // Sync ranks under a tracker: sends rank 0's checkpoint after an epoch (a model file's bytes)
  // to the tracker (World::SendCheckpoint). Empty elsewhere.
  std::function<bool(int epoch, std::string model_bytes)> send_checkpoint;
  // Sync ranks under a tracker with --send-model: sends rank 0's trained model (a model file's
  // bytes) to the tracker (World::SendModel), instead of records on `out`. Throws when it could
  // not. Empty elsewhere.
  std::function<void(const std::string& model_bytes)> send_model;
  // The job's key (TrainJobKey), recorded in its checkpoints and model; empty without
  // checkpoints or --resume. resumed_after: the epoch of the checkpoint this run resumed from
  // (--resume), 0 when it started from --model.
  std::string job_key;
  int resumed_after = 0;
};

// A key for the job `job` describes: a hash of its --model and --train-config files and of the
// settings that decide how it trains (epochs, batch size, seed, loss, optimizer, ...), not of
// where it runs (ranks, threads, device). Throws UsageError when a file cannot be read.
std::string TrainJobKey(const TrainJobOptions& job);

// --resume FILE: when FILE holds a checkpoint of this job (its job_key), the job continues
// from it: --model becomes FILE and --epochs the epochs left; run->resumed_after its epoch.
// Without FILE, the job starts from --model. Throws ModelError, in one line, for a file that is
// not a readable checkpoint, one of another job, or one with no epochs left to train.
void ApplyResume(TrainJobOptions* job, TrainRun* run);

// Runs `sparktorch train` on one rank of `comm`'s world: reads the rows (with files as inputs and
// more than one rank, this rank's share of them), builds or loads the model, trains it with the
// other ranks, and writes prediction records for its own rows (with `predict`), the model (rank
// 0 only: to output_path, or as records) and a summary record to `out`. Progress goes to the log
// (stderr). A hogwild worker whose id the parameter server counted as lost earlier in the job (a
// task that Spark retried) logs a warning and returns without writing anything: the job goes on
// without it. Throws the sparktorch::Error kinds of formats/error.h.
void RunTrainJob(const TrainJobOptions& options, const TrainRun& run, Communicator& comm,
                 std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_TRAIN_RUN_H_
