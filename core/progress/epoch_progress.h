#ifndef SPARKTORCH_CORE_PROGRESS_EPOCH_PROGRESS_H_
#define SPARKTORCH_CORE_PROGRESS_EPOCH_PROGRESS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

// Progress: an epoch as people and programs follow a job. Torch-free, below the trainer
// (core/train), the tracker (core/world) and the parameter server (core/ps), which all report
// epochs with it.
namespace sparktorch {

// Named metrics in the order progress lines show them: {"precision", 0.91}, ...
using MetricList = std::vector<std::pair<std::string, double>>;

// The names a task's metrics can have besides accuracy, in that order (for readers of
// --metrics JSON: train_NAME, validation_NAME); core/train/metrics.h computes them.
const std::vector<std::string>& MetricNames();

// One epoch as a person following a job reads it: the line that `train` (rank 0), the tracker
// of a synchronous job and the parameter server of a hogwild job log after every epoch.
struct EpochProgress {
  int epoch = 0;   // 1-based
  int epochs = 0;  // planned in all; 0 when unknown
  double train_loss = 0;
  std::optional<double> train_accuracy;
  std::optional<double> validation_loss;
  std::optional<double> validation_accuracy;
  MetricList train_metrics;       // the loss's others (precision, mse, ...), as MetricSums gives
  MetricList validation_metrics;
  int workers = 0;                // hogwild: the workers that reported the epoch; 0: not shown
  double samples_per_second = 0;  // the world's: every rank's or worker's rows
  double elapsed = 0;             // seconds since training started
};

// The progress of an epoch from a record with the trainer's field names (the trainer's
// EpochStats, the parameter server's ServedEpoch): epoch, train_loss, train_accuracy,
// validation_loss, validation_accuracy, the other metrics, samples_per_second and elapsed; `epochs` planned (0:
// unknown) and the `workers` that reported it (0: not shown).
template <typename Epoch>
EpochProgress ProgressOf(const Epoch& e, int epochs, int workers = 0) {
  EpochProgress p;
  p.epoch = e.epoch;
  p.epochs = epochs;
  p.workers = workers;
  p.train_loss = e.train_loss;
  p.train_accuracy = e.train_accuracy;
  p.validation_loss = e.validation_loss;
  p.validation_accuracy = e.validation_accuracy;
  p.train_metrics = e.train_metrics;
  p.validation_metrics = e.validation_metrics;
  p.samples_per_second = e.samples_per_second;
  p.elapsed = e.elapsed;
  return p;
}

// An epoch's metrics as `--metrics` lines, the model's history and the job reports carry them,
// from a record with the trainer's field names: epoch, rows, train_loss, seconds, elapsed,
// samples_per_second, and train_accuracy, validation_loss, validation_accuracy and the loss's
// other metrics (train_NAME, validation_NAME) when present.
// The caller adds what only its record has (a rank's steps, the server's workers).
template <typename Epoch>
nlohmann::json EpochJson(const Epoch& e) {
  nlohmann::json j = {{"epoch", e.epoch},
                      {"rows", e.rows},
                      {"train_loss", e.train_loss},
                      {"seconds", e.seconds},
                      {"elapsed", e.elapsed},
                      {"samples_per_second", e.samples_per_second}};
  if (e.train_accuracy) j["train_accuracy"] = *e.train_accuracy;
  if (e.validation_loss) j["validation_loss"] = *e.validation_loss;
  if (e.validation_accuracy) j["validation_accuracy"] = *e.validation_accuracy;
  for (const auto& [name, value] : e.train_metrics) j["train_" + name] = value;
  for (const auto& [name, value] : e.validation_metrics) j["validation_" + name] = value;
  return j;
}

// "epoch 3/10: loss 0.3270 accuracy 0.8794 val_loss 0.3502 val_accuracy 0.8727 | 19217
// samples/s, 4.1 s elapsed, ETA 9.6 s" (on one line). The accuracies and validation numbers
// appear when present, each followed by the other metrics ("precision 0.9120 recall ...",
// "val_mse 0.0213 ..."); "/10" when the number of epochs is known; "2 workers, " before the
// samples/s when `workers` is set. The ETA, the mean epoch time so far times the epochs left,
// appears when the epochs are known and this is not the last.
std::string ProgressLine(const EpochProgress& progress);

// Reads an epoch's metrics as `--metrics` writes them (epoch, train_loss, train_accuracy,
// validation_loss, validation_accuracy, train_NAME and validation_NAME for MetricNames(),
// samples_per_second, elapsed) plus `epochs`, the number
// planned. Returns nullopt when `j` is not an object with a positive integer `epoch` and a
// `train_loss` that is a number (or null: NaN, a loss over no rows); other fields that are
// absent or of another type are left out.
std::optional<EpochProgress> EpochProgressFromJson(const nlohmann::json& j);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_PROGRESS_EPOCH_PROGRESS_H_
