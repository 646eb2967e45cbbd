// The parameter server's bookkeeping of its workers and epochs, apart from its connections
// (parameter_server.cc), admission (parameter_server_admit.cc) and messages
// (parameter_server_messages.cc): the hogwild lock passes on (ReleaseLock), a worker is counted
// lost (Lose), and an epoch every training worker reported becomes the job's, with its progress
// line and early stopping (Decide). Every function here takes a Held: it runs with mu_ held.
#include <algorithm>
#include <chrono>
#include <limits>

#include <spdlog/spdlog.h>

#include "core/ps/parameter_server.h"
#include "core/progress/epoch_progress.h"

namespace sparktorch {

void ParameterServer::ReleaseLock(const Held&, int id) {
  if (lock_owner_ != id) return;
  lock_owner_ = -1;
  lock_cv_.notify_all();
}

void ParameterServer::Lose(const Held& held, int id, const std::string& why) {
  Worker& w = workers_[id];
  if (w.state == State::kFinished || w.state == State::kLost) return;
  const bool was_active = w.state == State::kActive;
  w.state = State::kLost;
  report_.lost[id] = why;
  if (was_active) {
    spdlog::warn("worker {} ({}) lost: {}; the job goes on with the others", id, w.host, why);
  } else {
    spdlog::warn("worker {} {}; the job goes on without it", id, why);
  }
  ReleaseLock(held, id);
  Decide(held);
}

void ParameterServer::Schedule(const Held&, const ServedEpoch& served) {
  if (options_.lr_schedule.is_null()) return;
  if (!schedule_) {
    schedule_ = std::make_unique<LrSchedule>(options_.lr_schedule, options_.optimizer.at("lr").get<double>(),
                                             std::max(served.epochs, 1), 1);
  }
  const double watched = served.validation_loss ? *served.validation_loss : served.train_loss;
  schedule_->EndEpoch(watched);
  const double lr = schedule_->Lr(served.epoch + 1, 0);
  if (lr != scheduled_lr_.load() && served.epoch < served.epochs) {
    scheduled_lr_ = lr;
    spdlog::info("{}: lr {:g} from epoch {} on", schedule_->type(), lr, served.epoch + 1);
  }
}

void ParameterServer::Decide(const Held& held) {
  // After an early stop, the epochs workers were in the middle of are not the job's.
  while (!report_.stopped_early) {
    auto it = epochs_.find(next_epoch_);
    if (it == epochs_.end()) return;
    const EpochSums& e = it->second;
    // An epoch is complete when every worker still training reported it (workers that
    // finished or were lost without it no longer count).
    for (size_t id = 0; id < workers_.size(); ++id) {
      const State s = workers_[id].state;
      if (s == State::kAbsent && !rendezvous_over_) return;
      if (s == State::kActive && !e.workers.count(static_cast<int>(id))) return;
    }
    ServedEpoch served;
    served.epoch = next_epoch_;
    served.epochs = e.epochs;
    served.workers = static_cast<int>(e.workers.size());
    served.rows = e.rows;
    served.train_loss = e.rows > 0 ? e.loss / e.rows : std::numeric_limits<double>::quiet_NaN();
    if (e.rows > 0 && e.classification) served.train_accuracy = e.correct / e.rows;
    if (e.rows > 0 && e.train_metrics) served.train_metrics = e.train_metrics->Others();
    served.validation_rows = e.validation_rows;
    if (e.validation_rows > 0) {
      served.validation_loss = e.validation_loss / e.validation_rows;
      if (served.train_accuracy) served.validation_accuracy = e.validation_correct / e.validation_rows;
      if (e.validation_metrics) served.validation_metrics = e.validation_metrics->Others();
    }
    const SteadyTime start = first_admitted_.value_or(e.last_report);
    const SteadyTime end = std::max(e.last_report, start);
    served.seconds = std::max(0.0, std::chrono::duration<double>(end - std::max(start, last_epoch_end_)).count());
    served.elapsed = std::chrono::duration<double>(end - start).count();
    served.samples_per_second = served.seconds > 0 ? served.rows / served.seconds : 0;
    last_epoch_end_ = std::max(last_epoch_end_, end);
    served.lr = scheduled_lr_.load();
    report_.epochs.push_back(served);
    spdlog::info("{}", ProgressLine(ProgressOf(served, served.epochs, served.workers)));
    epochs_.erase(it);
    ++next_epoch_;
    Schedule(held, served);
    // Epochs are decided in order from 1 and stop_ never turns false again, so the first epoch
    // observed here is epoch 1.
    if (!stop_ && early_stopping_.Observe(served.train_loss, served.validation_loss)) {
      stop_ = true;
      report_.stopped_early = true;
      spdlog::info("stopping early after epoch {}: no improvement for {} epoch{}", served.epoch,
                   options_.early_stop_patience, options_.early_stop_patience == 1 ? "" : "s");
      lock_cv_.notify_all();
    }
  }
}

}  // namespace sparktorch
