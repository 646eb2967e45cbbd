#ifndef SPARKTORCH_CORE_JOBS_TRAIN_JOB_H_
#define SPARKTORCH_CORE_JOBS_TRAIN_JOB_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/jobs/model_source.h"
#include "core/jobs/row_options.h"
#include "formats/prediction_kind.h"

namespace sparktorch {

// The optimizer's lr for N synchronous ranks: kNone as given, kLinear times N, kSqrt times the
// square root of N.
enum class LrScaling { kNone, kLinear, kSqrt };
// The flag's values, and what a job's key records.
inline constexpr Named<LrScaling> kLrScalingNames[] = {
    {LrScaling::kNone, "none"}, {LrScaling::kLinear, "linear"}, {LrScaling::kSqrt, "sqrt"}};

// How synchronous ranks sum their gradients: in float32, or sent in 16 bits (bfloat16, float16)
// and summed in float32 (core/train/allreduce16.h).
enum class AllreduceDtype { kFloat32, kBFloat16, kFloat16 };
inline constexpr Named<AllreduceDtype> kAllreduceDtypeNames[] = {
    {AllreduceDtype::kFloat32, "fp32"},
    {AllreduceDtype::kBFloat16, "bf16"},
    {AllreduceDtype::kFloat16, "fp16"}};

// Everything `sparktorch train` is told about the job, as its flags give it (the man page gives
// each field's meaning); how the process takes part in it is TrainLaunch's
// (core/jobs/train_launch.h). The job turns these into the reader's, the model's and the
// trainer's options (core/jobs/train_job.cc); nothing above core/jobs sees those.
struct TrainJobOptions {
  ModelSource model;  // what to train
  RowOptions rows;

  int epochs = 10;
  int64_t batch_size = 64;          // rows per step; -1: the whole partition in one step
  int64_t steps_per_epoch = 0;      // 0: a pass over the rows; N: N batches (core/train/batch_order.h)
  double validation_fraction = 0;   // of the rows, held out for validation
  int early_stop_patience = 0;      // epochs without a better loss before stopping; 0: never
  uint64_t seed = 0;                // weights, dropout, shuffling and the validation split
  bool shuffle = true;              // reshuffle the rows every epoch
  int partition_shuffles = 1;       // rounds of `epochs` passes, each from a fresh shuffle
  double clip_grad_norm = 0;        // 0: off
  double clip_grad_value = 0;       // 0: off
  LrScaling lr_scaling = LrScaling::kNone;
  AllreduceDtype allreduce_dtype = AllreduceDtype::kFloat32;
  bool allreduce_overlap = false;  // sum the gradients in buckets while backward runs
  int checkpoint_every = 0;     // epochs between checkpoints to output_path (rank 0); 0: none
  bool fresh_optimizer = false;  // a trained model's optimizer state, epochs and schedule ignored
  std::string resume_path;       // --resume: a checkpoint of this job to continue from, if there
  bool check_resume = false;     // --check-resume: only say whether and where --resume resumes
  std::string device = "cpu";
  // The rows' anonymous memory before they spill to a file (core/data/spill.h); unset: the
  // default (DefaultRowMemory). spill_dir empty: DefaultSpillDir().
  std::optional<size_t> row_memory;
  std::string spill_dir;

  bool predict = false;                   // write a prediction record per input row
  std::optional<PredictionKind> prediction;  // empty: the loss's default
  std::string output_path;                // empty: model records on stdout
  bool send_model = false;  // rank 0 sends the model to the tracker (which writes it), not stdout
  std::string metrics_path;               // JSON lines, one per epoch; empty: none
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_TRAIN_JOB_H_
