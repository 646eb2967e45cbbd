#ifndef SPARKTORCH_CORE_TRAIN_METRICS_H_
#define SPARKTORCH_CORE_TRAIN_METRICS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "core/progress/epoch_progress.h"

namespace sparktorch {

// MetricList and MetricNames (the names, in order): core/progress/epoch_progress.h.

// The metrics that fit a loss, summed over batches as plain numbers so that ranks can all-reduce
// them (sums()) before Finish:
//   classification (cross_entropy, nll): accuracy, and top5_accuracy with more than 10 classes;
//   binary (bce, bce_with_logits; each output a 0/1 target, multi-label pooled): accuracy,
//     precision, recall (at probability 0.5) and auc (ROC AUC from 4096-bin histograms of the
//     predicted probability; ties within a bin count half, as equal scores do);
//   regression (mse, l1, smooth_l1): mse, mae and r2 (R², the mean over outputs of
//     1 - SSE/SST, as sklearn's r2_score with uniform_average).
class MetricSums {
 public:
  // `loss`: the loss's name. `outputs`: a row's outputs (the classes of a classifier).
  MetricSums(const std::string& loss, int64_t outputs);

  // A batch: the model's outputs [rows, outputs] and the targets as the loss takes them.
  void Add(const torch::Tensor& output, const torch::Tensor& target);

  // Every sum, to all-reduce in place (or to add up the sums of others, as a hogwild server
  // adds its workers' with Add).
  std::vector<double>& sums() { return sums_; }
  const std::vector<double>& sums() const { return sums_; }
  // Adds another's sums of the same loss and outputs; false (nothing added) when they do not fit.
  bool Add(const std::vector<double>& other);

  // What it was made with: another MetricSums(loss(), outputs()) sums alike.
  const std::string& loss() const { return loss_; }
  int64_t outputs() const { return outputs_; }

  // Accuracy (classification and binary), when there were rows.
  std::optional<double> Accuracy() const;
  // The others (MetricNames' order), when there were rows.
  MetricList Others() const;

 private:
  enum class Task { kClasses, kBinary, kRegression };
  std::string loss_;
  Task task_;
  bool logits_ = false;  // binary: sigmoid before thresholds
  int64_t outputs_;
  std::vector<double> sums_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_METRICS_H_
