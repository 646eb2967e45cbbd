// An admitted worker's requests: ServeWorker reads each message and hands it to the handler of
// its kind. A handler replies itself (a pull or a push may be answered with the weights, written
// to the socket straight from a snapshot) and returns false once the worker has finished or is
// counted as lost, which ends the connection.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/ps/parameter_server.h"

namespace sparktorch {
namespace {

// The most an admitted worker's epoch report may take: its metric sums (a binary classifier's are
// two 4096-bin histograms, 130 KB for training and validation; a regression's, 48 bytes an
// output) fit up to 87,000 regression outputs.
constexpr int64_t kMaxEpochReportBytes = 4 << 20;

}  // namespace

// One admitted worker's connection, and the buffers its replies reuse from one request to the
// next.
struct ParameterServer::WorkerLink {
  FrameConnection& conn;
  int id;
  std::string name;  // "worker 3", for log lines
  double timeout;    // seconds each reply may take
  // The weights being sent: copied out under the shared lock, then written to the socket
  // straight from here (FrameConnection::SendWithTensor) instead of through the message.
  std::string snapshot;
  ps::Message weights;

  bool Send(const ps::Message& message) {
    return conn.Send(message, After(timeout)) == FrameConnection::Status::kOk;
  }
  bool SendWeights() {
    return conn.SendWithTensor(weights, ps::Weights::kDataFieldNumber, snapshot.data(),
                               snapshot.size(), After(timeout)) == FrameConnection::Status::kOk;
  }
};

// What became of a push's gradient.
struct ParameterServer::AppliedPush {
  std::string error;  // why the push ends the worker's connection; empty when it does not
  uint64_t staleness = 0;
  bool applied = false;  // false: dropped as staler than max_staleness
  uint64_t version = 0;  // of the weights after it
};

void ParameterServer::ServeWorker(FrameConnection& conn, int id) {
  // A push carries every gradient; an epoch report, a binary classifier's AUC histograms.
  const uint32_t max_frame =
      static_cast<uint32_t>(std::max<int64_t>(num_params_ * 4, kMaxEpochReportBytes) + kFrameOverhead);
  WorkerLink link{conn, id, "worker " + std::to_string(id), options_.worker_timeout, {}, {}};
  ps::Message in;
  std::string why;
  for (;;) {
    const auto status = conn.Receive(&in, max_frame, After(options_.worker_timeout), &why);
    if (status != FrameConnection::Status::kOk) {
      if (status == FrameConnection::Status::kTimeout) {
        why = "silent for " + SecondsText(options_.worker_timeout);
      }
      if (status == FrameConnection::Status::kTooLarge || status == FrameConnection::Status::kMalformed) {
        spdlog::warn("{}: closing its connection: {}", link.name, why);
      }
      LoseLink(link, why);
      return;
    }
    bool serving = false;
    switch (in.kind_case()) {
      case ps::Message::kPull:
        serving = OnPull(link, in.pull());
        break;
      case ps::Message::kPush:
        serving = OnPush(link, in.push());
        break;
      case ps::Message::kEpochReport:
        serving = OnEpochReport(link, in.epoch_report());
        break;
      case ps::Message::kDone:
        serving = OnDone(link, in.done());
        break;
      case ps::Message::kFailed:
        serving = LoseLink(link, "failed: " + in.failed().message());
        break;
      default:
        serving = CloseLink(link, std::string("it sent ") + MessageKindName(in) +
                                      ", which workers do not send");
        break;
    }
    if (!serving) return;
  }
}

bool ParameterServer::LoseLink(const WorkerLink& link, const std::string& why) {
  Held held(mu_);
  Lose(held, link.id, why);
  return false;
}

bool ParameterServer::CloseLink(const WorkerLink& link, const std::string& why) {
  spdlog::warn("{}: closing its connection: {}", link.name, why);
  return LoseLink(link, why);
}

bool ParameterServer::OnPull(WorkerLink& link, const ps::Pull& pull) {
  if (options_.lock && pull.acquire_lock()) {
    Held held(mu_);
    lock_cv_.wait(held.lock(), [&] { return lock_owner_ < 0 || lock_owner_ == link.id || stop_; });
    if (!stop_) lock_owner_ = link.id;
  }
  link.weights.mutable_weights()->set_version(Snapshot(&link.snapshot));
  {
    Held held(mu_);
    link.weights.mutable_weights()->set_stop(stop_);
  }
  return link.SendWeights() || LoseLink(link, "connection closed");
}

ParameterServer::AppliedPush ParameterServer::ApplyPush(const ps::Push& push) {
  AppliedPush result;
  std::unique_lock<std::shared_mutex> lock(weights_mu_);
  if (push.base_version() > version_) {
    result.error = "a push computed on version " + std::to_string(push.base_version()) +
                   ", newer than the server's " + std::to_string(version_);
  } else {
    result.staleness = version_ - push.base_version();
    if (options_.max_staleness < 0 || result.staleness <= static_cast<uint64_t>(options_.max_staleness)) {
      std::memcpy(flat_grads_.data_ptr(), push.gradients().data(), push.gradients().size());
      const double lr = scheduled_lr_.load();
      if (lr != applied_lr_) {
        for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
        applied_lr_ = lr;
      }
      optimizer_->step();
      ++version_;
      result.applied = true;
    }
  }
  result.version = version_;
  return result;
}

bool ParameterServer::OnPush(WorkerLink& link, const ps::Push& push) {
  const size_t want = static_cast<size_t>(num_params_) * 4;
  if (push.gradients().size() != want || push.rows() <= 0) {
    return CloseLink(link, "a push of " + std::to_string(push.gradients().size()) + " bytes over " +
                               std::to_string(push.rows()) + " rows (expected " + std::to_string(want) +
                               " bytes over at least 1 row)");
  }
  const AppliedPush applied = ApplyPush(push);
  if (!applied.error.empty()) return CloseLink(link, applied.error);
  // The weights the push asked for, copied outside mu_ (under the shared weights lock).
  if (push.pull()) link.weights.mutable_weights()->set_version(Snapshot(&link.snapshot));
  ps::Message out;
  {
    Held held(mu_);
    ++pushes_;
    staleness_sum_ += static_cast<double>(applied.staleness);
    report_.max_staleness = std::max(report_.max_staleness, applied.staleness);
    if (applied.applied) {
      ++report_.updates;
    } else {
      ++report_.dropped;
    }
    if (push.release_lock()) ReleaseLock(held, link.id);
    ps::PushAck* ack = out.mutable_push_ack();
    ack->set_version(applied.version);
    ack->set_applied(applied.applied);
    ack->set_staleness(applied.staleness);
    ack->set_stop(stop_);
    if (push.pull()) link.weights.mutable_weights()->set_stop(stop_);
  }
  if (!link.Send(out) || (push.pull() && !link.SendWeights())) return LoseLink(link, "connection closed");
  return true;
}

namespace {

// Adds a report's metric sums to an epoch's: the first report that carries them fixes the loss
// and outputs; a report whose sums do not fit those is left out of the metrics. (No task has
// more outputs than sums, so a report that says so is not believed: it would size the sums.)
void AddMetricSums(const ps::EpochReport& r, const google::protobuf::RepeatedField<double>& sums,
                   std::optional<MetricSums>* total) {
  if (sums.empty() || r.metric_loss().empty() || r.metric_outputs() > sums.size()) return;
  if (!*total) total->emplace(r.metric_loss(), r.metric_outputs());
  if ((*total)->loss() != r.metric_loss() || (*total)->outputs() != std::max<int64_t>(r.metric_outputs(), 1)) return;
  (*total)->Add(std::vector<double>(sums.begin(), sums.end()));
}

}  // namespace

bool ParameterServer::OnEpochReport(WorkerLink& link, const ps::EpochReport& r) {
  ps::Message out;
  {
    Held held(mu_);
    if (r.epoch() >= next_epoch_ && r.rows() >= 0 && r.validation_rows() >= 0) {
      EpochSums& e = epochs_[r.epoch()];
      if (e.workers.insert(link.id).second) {
        e.epochs = std::max(e.epochs, r.epochs());
        e.last_report = std::chrono::steady_clock::now();
        e.rows += r.rows();
        e.loss += r.train_loss() * static_cast<double>(r.rows());
        e.classification = e.classification || r.classification();
        e.correct += r.train_correct();
        e.validation_rows += r.validation_rows();
        e.validation_loss += r.validation_loss() * static_cast<double>(r.validation_rows());
        e.validation_correct += r.validation_correct();
        AddMetricSums(r, r.train_metric_sums(), &e.train_metrics);
        AddMetricSums(r, r.validation_metric_sums(), &e.validation_metrics);
      }
      Decide(held);
    }
    out.mutable_epoch_ack()->set_stop(stop_);
  }
  return link.Send(out) || LoseLink(link, "connection closed");
}

bool ParameterServer::OnDone(WorkerLink& link, const ps::Done& done) {
  link.weights.mutable_weights()->set_version(Snapshot(&link.snapshot));
  {
    Held held(mu_);
    ReleaseLock(held, link.id);
    link.weights.mutable_weights()->set_stop(stop_);
  }
  // The worker counts as finished once it has its final weights: until then the job is not
  // over, so the server does not close this connection under the send.
  const bool sent = link.SendWeights();
  Held held(mu_);
  if (!sent) {
    Lose(held, link.id, "connection closed before it got the final weights");
    return false;
  }
  workers_[link.id].state = State::kFinished;
  report_.finished.push_back(link.id);
  nlohmann::json summary = nlohmann::json::parse(done.summary(), nullptr, false);
  if (summary.is_object()) report_.worker_summaries.push_back(summary);
  Decide(held);
  spdlog::info("{} finished", link.name);
  return false;
}

}  // namespace sparktorch
