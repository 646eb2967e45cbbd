#include "core/ps/hogwild_worker.h"

#include <cmath>
#include <cstring>

#include <torch/torch.h>

#include "formats/error.h"

namespace sparktorch {

HogwildWorker::HogwildWorker(PsClient& client, std::vector<at::Tensor> params, int epochs)
    : client_(client),
      params_(std::move(params)),
      lock_(client.welcome().lock()),
      pull_every_(std::max(1, client.welcome().pull_every())),
      epochs_(epochs) {
  int64_t total = 0;
  for (const at::Tensor& p : params_) {
    if (p.scalar_type() != torch::kFloat) {
      throw ModelError("hogwild training needs float32 parameters; this model has a " +
                       std::string(c10::toString(p.scalar_type())) + " parameter");
    }
    total += p.numel();
  }
  if (total != client_.num_parameters()) {
    throw ModelError("the parameter server's model has " + std::to_string(client_.num_parameters()) +
                     " parameters, this worker's " + std::to_string(total));
  }
  gradients_.resize(static_cast<size_t>(total));
}

void HogwildWorker::Load(const std::string& data) {
  torch::NoGradGuard no_grad;
  const float* p = reinterpret_cast<const float*>(data.data());
  for (at::Tensor& param : params_) {
    // from_blob does not write; the cast only satisfies its signature.
    param.detach().copy_(torch::from_blob(const_cast<float*>(p), param.sizes(), torch::kFloat));
    p += param.numel();
  }
}

void HogwildWorker::BeforeStep() {
  if (since_pull_ > 0) return;
  if (fresh_) {  // the last push brought the weights
    fresh_ = false;
    return;
  }
  const ps::Weights& weights = client_.Pull(lock_);
  if (weights.stop()) stop_ = true;
  if (weights.data().size() == gradients_.size() * 4) Load(weights.data());
  version_ = weights.version();
}

bool HogwildWorker::AfterBackward(int64_t rows, double loss, bool last_in_epoch) {
  float* g = gradients_.data();
  for (const at::Tensor& param : params_) {
    const int64_t n = param.numel();
    if (param.grad().defined()) {
      torch::from_blob(g, param.sizes(), torch::kFloat).copy_(param.grad());
    } else {
      std::memset(g, 0, static_cast<size_t>(n) * sizeof(float));  // unused in this forward pass
    }
    g += n;
  }
  since_pull_ = (since_pull_ + 1) % pull_every_;
  if (last_in_epoch) since_pull_ = 0;  // each epoch starts from the server's weights
  // Without the lock, the weights for the next stretch come back with this push: one round trip
  // a step instead of two. With the lock, the next pull must wait for it again.
  const bool pull = !lock_ && since_pull_ == 0;
  const ps::PushAck& ack =
      client_.Push(version_, rows, gradients_.data(), loss, lock_ && since_pull_ == 0, pull);
  if (ack.stop()) stop_ = true;
  if (pull) {
    Load(client_.weights().data());
    version_ = client_.weights().version();
    if (client_.weights().stop()) stop_ = true;
    fresh_ = true;
  }
  // Before another step on this stretch's weights, improve them with this gradient locally.
  return since_pull_ != 0;
}

bool HogwildWorker::AfterEpoch(const EpochStats& stats) {
  since_pull_ = 0;
  ps::EpochReport report;
  report.set_epoch(stats.epoch);
  report.set_epochs(epochs_);
  report.set_rows(stats.rows);
  report.set_train_loss(stats.rows > 0 ? stats.train_loss : 0);
  if (stats.train_accuracy) {
    report.set_classification(true);
    report.set_train_correct(*stats.train_accuracy * stats.rows);
  }
  if (stats.validation_loss && !std::isnan(*stats.validation_loss)) {
    report.set_validation_rows(stats.validation_rows);
    report.set_validation_loss(*stats.validation_loss);
    if (stats.validation_accuracy) {
      report.set_validation_correct(*stats.validation_accuracy * stats.validation_rows);
    }
  }
  if (stats.train_sums) {
    report.set_metric_loss(stats.train_sums->loss());
    report.set_metric_outputs(stats.train_sums->outputs());
    report.mutable_train_metric_sums()->Add(stats.train_sums->sums().begin(), stats.train_sums->sums().end());
    if (stats.validation_sums && stats.validation_sums->loss() == stats.train_sums->loss() &&
        stats.validation_sums->outputs() == stats.train_sums->outputs()) {
      report.mutable_validation_metric_sums()->Add(stats.validation_sums->sums().begin(),
                                                   stats.validation_sums->sums().end());
    }
  }
  if (client_.ReportEpoch(report)) stop_ = true;
  return stop_;
}

void HogwildWorker::Finish(const std::string& summary) {
  const ps::Weights& weights = client_.Finish(summary);
  Load(weights.data());
  version_ = weights.version();
}

}  // namespace sparktorch
