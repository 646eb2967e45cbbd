#ifndef SPARKTORCH_CORE_TRAIN_TRAINER_H_
#define SPARKTORCH_CORE_TRAIN_TRAINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/api/module.h>
#include <torch/optim/optimizer.h>

#include "core/world/communicator.h"
#include "core/train/allreduce16.h"
#include "core/train/gradient_buckets.h"
#include "core/train/loss.h"
#include "core/train/metrics.h"

namespace sparktorch {

class BatchOrder;
class LrSchedule;

struct TrainOptions {
  int epochs = 10;
  int64_t batch_size = 64;  // rows per step; -1: the whole partition in one step
  // Steps an epoch; 0: one pass over the rows. Above 0, batches drawn on from pass after pass
  // (core/train/batch_order.h).
  int64_t steps_per_epoch = 0;
  int early_stop_patience = 0;  // epochs without improvement before stopping; 0: never stop early
  uint64_t seed = 0;            // shuffling order
  bool shuffle = true;          // reshuffle the rows every epoch
  // Rounds of `epochs` passes; each round starts from a fresh shuffle of the rows, even with
  // shuffle off (SparkTorch's partitionShuffles). Epochs are numbered across rounds.
  int partition_shuffles = 1;
  // The learning-rate schedule, as CompleteLrScheduleSpec returns it (core/train/lr_schedule.h);
  // null: the optimizer's lr throughout.
  nlohmann::json lr_schedule;
  // Gradient clipping after the all-reduce, before the optimizer's step (and before a hogwild
  // worker's push), as torch.nn.utils.clip_grad_norm_ (L2) and clip_grad_value_; 0: off.
  double clip_grad_norm = 0;
  double clip_grad_value = 0;
  // How a synchronous step's gradients travel: float32, or rounded to at::kBFloat16 or at::kHalf
  // and summed in float32 (core/train/allreduce16.h), half the bytes. A world of one ignores it.
  c10::ScalarType allreduce_dtype = at::kFloat;
  // Sum the gradients in buckets of about this many values that start while the backward pass
  // still runs (core/train/gradient_buckets.h), on the CPU with a communicator that allows a
  // second thread; 0: one all-reduce after the backward pass.
  int64_t overlap_bucket_elements = 0;
  int64_t outputs = 0;  // a row's outputs (the classes), for the metrics; 0: from the targets
  // With early stopping (patience above 0): the weights of the epoch with the best watched loss
  // (validation, else training) are the ones Fit leaves in the module.

  // Resuming: the epochs a run before this one trained. This run's epochs are numbered on from
  // start_epoch + 1, its shuffles continue that run's (with shuffling on), and the schedule goes
  // on from its position, with `lr_schedule_state` (LrSchedule::State; null: none).
  int start_epoch = 0;
  nlohmann::json lr_schedule_state;
};

// Training examples ready for the model: inputs shaped for it, targets shaped for the loss.
// Examples for a model: rows of `inputs` and `targets`, all of them or those `index` names.
// They are views of the rows as read (a spill file's mapping, perhaps), never copies: a batch
// is gathered from them when it is needed (Batch).
struct Examples {
  torch::Tensor inputs;   // [all rows, *input_shape] float32
  // [all rows] class indices (held as float32 label values; a batch's become int64), or
  // [all rows, *output_shape] float32
  torch::Tensor targets;
  bool class_index = false;  // targets are class indices
  torch::Tensor index;       // int64 rows of inputs and targets in this set; undefined: all
  int64_t rows() const { return index.defined() ? index.size(0) : inputs.size(0); }
  // The inputs and targets of this set's rows `positions` (int64, into 0..rows()), on `device`.
  std::pair<torch::Tensor, torch::Tensor> Batch(const torch::Tensor& positions,
                                                c10::Device device) const;
  // Of its rows [start, start + n).
  std::pair<torch::Tensor, torch::Tensor> Range(int64_t start, int64_t n, c10::Device device) const;
};

struct EpochStats {
  int epoch = 0;  // 1-based
  int64_t rows = 0;
  int64_t steps = 0;
  double train_loss = 0;
  std::optional<double> train_accuracy;  // classification and binary
  MetricList train_metrics;              // the loss's others (core/train/metrics.h)
  std::optional<double> validation_loss;
  int64_t validation_rows = 0;  // this rank's
  std::optional<double> validation_accuracy;
  MetricList validation_metrics;
  // The sums the metrics came from, over every rank (a hogwild worker's, over its own rows),
  // for a parameter server to add up across workers.
  std::optional<MetricSums> train_sums, validation_sums;
  double seconds = 0;  // this epoch
  double elapsed = 0;  // since training started
  double samples_per_second = 0;
  double allreduce_seconds = 0;  // this epoch's time in the gradient all-reduce (with > 1 rank)
  double lr = 0;                 // the learning rate of the epoch's last step
  nlohmann::json lr_schedule_state;  // where the schedule stands after the epoch (LrSchedule::State)
};

// The CRC-32 of the parameters' bytes (float32, in order), to compare weights across processes.
uint32_t ParametersCrc32(const std::vector<torch::Tensor>& params);

// What makes Fit a hogwild worker: weights come from a parameter server before steps, and each
// step's gradient goes to it. Fit calls these on its one thread; see core/ps/hogwild_worker.h.
class TrainHooks {
 public:
  virtual ~TrainHooks() = default;
  // Before a step's forward pass (which zeroed the gradients): may replace the weights.
  virtual void BeforeStep() = 0;
  // After the backward pass of a step over `rows` rows with mean loss `loss`; the gradients are
  // in the parameters' grad(). `last_in_epoch`: no step follows before the epoch ends. Returns
  // true when Fit should also apply its own optimizer to this gradient.
  virtual bool AfterBackward(int64_t rows, double loss, bool last_in_epoch) = 0;
  // After each epoch (and its validation). Returns true to stop training.
  virtual bool AfterEpoch(const EpochStats& stats) = 0;
  // True once training should stop, checked after every step.
  virtual bool stop_requested() const = 0;
};

struct TrainResult {
  std::vector<EpochStats> epochs;
  bool stopped_early = false;
  // With early stopping: the epoch whose weights the module holds (the best one), 1-based; 0
  // without early stopping (the last epoch's weights).
  int kept_epoch = 0;
  nlohmann::json lr_schedule_state;  // where the schedule ended (LrSchedule::State)

  // The statistics of epoch `epoch` (numbered as in `epochs`), which must be there.
  const EpochStats& Epoch(int epoch) const { return epochs.at(epoch - epochs.front().epoch); }
};

// The training loop: forward, loss, backward, optimizer step, over shuffled mini-batches for a
// number of epochs, with validation and early stopping. It runs on one rank of `comm`'s world;
// everything that ranks must agree on (steps per epoch, metrics, the stopping decision) goes
// through `comm`, so a world of one and a world of many run the same code. Not thread-safe.
class Trainer {
 public:
  // `module`, `optimizer` and `comm` must outlive the trainer; `optimizer` holds the module's
  // parameters. The module is moved to `device` by the caller.
  Trainer(torch::jit::Module module, Loss loss, torch::optim::Optimizer& optimizer,
          Communicator& comm, c10::Device device, TrainOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // The CRC-32 of the parameters' bytes: equal on every rank after every step.
  uint32_t WeightsChecksum() const;

  // Makes Fit a hogwild worker (with a world of one). `hooks` must outlive Fit.
  void SetHooks(TrainHooks* hooks) { hooks_ = hooks; }

  // Trains on `train`; evaluates `validation` after each epoch when it has rows. Calls
  // `on_epoch` after each epoch (on every rank). Returns the per-epoch statistics.
  TrainResult Fit(const Examples& train, const Examples& validation,
                  const std::function<void(const EpochStats&)>& on_epoch);

  // Mean loss and (for classification) accuracy of the module on `data`, in evaluation mode.
  // Sums over all ranks.
  // Sums over all ranks. `others`, when given, gets the loss's other metrics (MetricSums).
  std::pair<double, std::optional<double>> Evaluate(const Examples& data, MetricList* others = nullptr,
                                                    std::optional<MetricSums>* sums = nullptr);

 private:
  torch::Tensor Forward(const torch::Tensor& inputs);
  struct StepsDone {
    double lr = 0;                 // of the last step
    double allreduce_seconds = 0;
  };
  // The `steps` steps of one epoch over the rows `batches` gives; adds this rank's loss and rows
  // to `sums`, the batches' metrics to `metrics`.
  StepsDone TrainSteps(const Examples& train, BatchOrder& batches, int epoch, int64_t steps,
                       const LrSchedule& schedule, double sums[2], MetricSums& metrics);
  // The metrics of the loss over a row's outputs (options_.outputs, else the targets' width).
  MetricSums NewMetrics(const Examples& data) const;
  // Makes every parameter a view of one flat buffer and every gradient a view of another, so
  // that one all-reduce moves all gradients. Then broadcasts rank 0's weights and buffers.
  void Flatten();
  // Gives each parameter its own storage again, for saving.
  void Unflatten();
  // With overlap_bucket_elements: the buckets, and a hook on each parameter that moves its
  // gradient into the flat buffer (weighted by the step's rows) and marks it ready.
  void StartBuckets();
  void StopBuckets();
  // Before a step's backward pass over `rows` rows (0: none on this rank).
  void BeginBuckets(int64_t rows);
  // Before a step's backward pass: every gradient undefined (AverageGradients puts them back
  // into the flat buffer).
  void ZeroGradients();
  // Sets every parameter group's lr, and its momentum (or beta1) when given.
  void SetRate(double lr, const std::optional<double>& momentum);
  void ClipGradients();
  // A copy of the parameters and buffers, and back.
  void KeepWeights(std::vector<torch::Tensor>* kept);
  void RestoreWeights(const std::vector<torch::Tensor>& kept);
  // Averages the gradients over all ranks, weighted by each rank's `rows` in this step. Returns
  // the rows of the step summed over all ranks.
  double AverageGradients(int64_t rows);

  torch::jit::Module module_;
  Loss loss_;
  torch::optim::Optimizer& optimizer_;
  Communicator& comm_;
  c10::Device device_;
  TrainOptions options_;
  std::vector<torch::Tensor> params_;
  // With more than one rank: the parameters' and gradients' storage. flat_grads_ has one more
  // element than there are parameters: the rows of the step, all-reduced with the gradients.
  torch::Tensor flat_params_;
  torch::Tensor flat_grads_;
  std::vector<torch::Tensor> grad_views_;  // each parameter's part of flat_grads_
  torch::Tensor host_grads_;  // a CPU copy, when the model is on a GPU
  std::unique_ptr<Allreduce16> allreduce16_;  // with a 16-bit allreduce_dtype
  std::unique_ptr<GradientBuckets> buckets_;  // with overlap_bucket_elements
  std::vector<std::pair<size_t, unsigned>> hooks_on_;  // (parameter, handle) of the buckets' hooks
  torch::Tensor step_weight_;                          // the step's rows, a CPU scalar
  TrainHooks* hooks_ = nullptr;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_TRAINER_H_
