#include "core/train/metrics.h"

#include <torch/torch.h>

namespace sparktorch {

namespace {

constexpr int64_t kBins = 4096;  // of the binary AUC's probability histograms
// Where each task's sums start (see the constructor).
constexpr size_t kRows = 0, kCorrect = 1, kTop5 = 2;                              // classes
constexpr size_t kTruePositive = 2, kFalsePositive = 3, kFalseNegative = 4, kHistograms = 5;  // binary
constexpr size_t kSquared = 1, kAbsolute = 2, kPerOutput = 3;                    // regression

// Adds a tensor's values to `sums` from `offset` on.
void AddTo(std::vector<double>& sums, size_t offset, const torch::Tensor& values) {
  torch::Tensor v = values.to(torch::kCPU, torch::kDouble).contiguous();
  const double* p = v.data_ptr<double>();
  for (int64_t i = 0; i < v.numel(); ++i) sums[offset + i] += p[i];
}

}  // namespace

MetricSums::MetricSums(const std::string& loss, int64_t outputs)
    : loss_(loss), outputs_(std::max<int64_t>(outputs, 1)) {
  if (loss == "cross_entropy" || loss == "nll") {
    task_ = Task::kClasses;
    sums_.assign(3, 0.0);
  } else if (loss == "bce" || loss == "bce_with_logits") {
    task_ = Task::kBinary;
    logits_ = loss == "bce_with_logits";
    sums_.assign(kHistograms + 2 * kBins, 0.0);
  } else {
    task_ = Task::kRegression;
    sums_.assign(kPerOutput + 3 * outputs_, 0.0);
  }
}

bool MetricSums::Add(const std::vector<double>& other) {
  if (other.size() != sums_.size()) return false;
  for (size_t i = 0; i < sums_.size(); ++i) sums_[i] += other[i];
  return true;
}

void MetricSums::Add(const torch::Tensor& output, const torch::Tensor& target) {
  torch::NoGradGuard no_grad;
  const int64_t rows = output.size(0);
  if (rows == 0) return;
  torch::Tensor out = output.detach().reshape({rows, -1});
  if (task_ == Task::kClasses) {
    sums_[kRows] += rows;
    sums_[kCorrect] += out.argmax(1).eq(target).sum().item<double>();
    if (out.size(1) > 10) {
      sums_[kTop5] += std::get<1>(out.topk(5, 1)).eq(target.unsqueeze(1)).any(1).sum().item<double>();
    }
    return;
  }
  torch::Tensor t = target.reshape({rows, -1}).to(out.dtype());
  if (task_ == Task::kBinary) {
    torch::Tensor p = (logits_ ? torch::sigmoid(out) : out).flatten();
    torch::Tensor positive = t.flatten().ge(0.5);
    torch::Tensor predicted = p.ge(0.5);
    sums_[kRows] += p.numel();
    sums_[kCorrect] += predicted.eq(positive).sum().item<double>();
    sums_[kTruePositive] += (predicted & positive).sum().item<double>();
    sums_[kFalsePositive] += (predicted & ~positive).sum().item<double>();
    sums_[kFalseNegative] += (~predicted & positive).sum().item<double>();
    torch::Tensor bins = (p * kBins).floor().clamp(0, kBins - 1).to(torch::kLong);
    AddTo(sums_, kHistograms, torch::bincount(bins.masked_select(positive), {}, kBins));
    AddTo(sums_, kHistograms + kBins, torch::bincount(bins.masked_select(~positive), {}, kBins));
    return;
  }
  torch::Tensor diff = out - t;
  sums_[kRows] += rows;
  sums_[kSquared] += diff.pow(2).sum().item<double>();
  sums_[kAbsolute] += diff.abs().sum().item<double>();
  AddTo(sums_, kPerOutput, t.sum(0));
  AddTo(sums_, kPerOutput + outputs_, t.pow(2).sum(0));
  AddTo(sums_, kPerOutput + 2 * outputs_, diff.pow(2).sum(0));
}

std::optional<double> MetricSums::Accuracy() const {
  if (task_ == Task::kRegression || sums_[kRows] == 0) return std::nullopt;
  return sums_[kCorrect] / sums_[kRows];
}

MetricList MetricSums::Others() const {
  MetricList list;
  const double n = sums_[kRows];
  if (n == 0) return list;
  if (task_ == Task::kClasses) {
    if (outputs_ > 10) list.emplace_back("top5_accuracy", sums_[kTop5] / n);
    return list;
  }
  if (task_ == Task::kBinary) {
    const double tp = sums_[kTruePositive], fp = sums_[kFalsePositive], fn = sums_[kFalseNegative];
    list.emplace_back("precision", tp + fp > 0 ? tp / (tp + fp) : 0.0);
    list.emplace_back("recall", tp + fn > 0 ? tp / (tp + fn) : 0.0);
    // ROC AUC: the chance that a positive scores above a negative, ties counting half.
    const double* pos = sums_.data() + kHistograms;
    const double* neg = pos + kBins;
    double positives = 0, negatives = 0, pairs = 0;
    for (int64_t b = 0; b < kBins; ++b) {
      pairs += pos[b] * (negatives + 0.5 * neg[b]);
      negatives += neg[b];
      positives += pos[b];
    }
    if (positives > 0 && negatives > 0) list.emplace_back("auc", pairs / (positives * negatives));
    return list;
  }
  list.emplace_back("mse", sums_[kSquared] / (n * outputs_));
  list.emplace_back("mae", sums_[kAbsolute] / (n * outputs_));
  double r2 = 0;
  for (int64_t j = 0; j < outputs_; ++j) {
    const double sum = sums_[kPerOutput + j], squares = sums_[kPerOutput + outputs_ + j];
    const double sse = sums_[kPerOutput + 2 * outputs_ + j];
    const double sst = squares - sum * sum / n;
    r2 += sst > 0 ? 1 - sse / sst : (sse == 0 ? 1.0 : 0.0);
  }
  list.emplace_back("r2", r2 / outputs_);
  return list;
}

}  // namespace sparktorch
