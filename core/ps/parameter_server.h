#ifndef SPARKTORCH_CORE_PS_PARAMETER_SERVER_H_
#define SPARKTORCH_CORE_PS_PARAMETER_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>

#include "core/net/socket.h"
#include "core/ps/ps_wire.h"
#include "core/train/early_stopping.h"
#include "core/train/lr_schedule.h"
#include "core/train/metrics.h"

namespace sparktorch {

struct ParameterServerOptions {
  Address listen;
  int listen_fd = -1;        // >= 0: a socket that already listens there, which the server owns
  std::string secret;        // empty: no secret (the caller listens on loopback only)
  std::string job = "-";     // workers must present this job id; "-": any
  int world_size = 1;
  double rendezvous_timeout = 120;  // seconds for every worker to connect
  double worker_timeout = 300;      // longest silence of a connected worker
  bool lock = false;                // serialise pull, compute and push across workers
  int pull_every = 1;               // steps between pulls
  int64_t max_staleness = -1;       // drop gradients more versions old than this; -1: never
  int early_stop_patience = 0;      // epochs without a better loss before stopping; 0: never
  // The model takes its rows' features as they are (SpecTakesFeaturesAsTheyAre): the server
  // warns, once, when a worker's Hello.worker_info says that its features are far from unit
  // scale (feature_rms, feature_max_abs; core/train/feature_scale.h).
  bool check_feature_scale = false;
  std::string model;                // the initial model's .pt bytes, sent to every worker
  nlohmann::json optimizer;         // a complete optimizer spec (CompleteOptimizerSpec)
  // A complete epoch-based learning-rate schedule (CompleteLrScheduleSpec; not one_cycle, whose
  // steps the server cannot know in advance); null: none. The rate changes when the server
  // decides an epoch, for the pushes that follow.
  nlohmann::json lr_schedule;
  // The optimizer's state to resume from (SaveOptimizerState's bytes, of the same optimizer
  // type), as a trained model file holds it; empty: the optimizer starts afresh.
  std::string optimizer_state;
};

// One epoch, over the workers that reported it.
struct ServedEpoch {
  int epoch = 0;
  int epochs = 0;  // the most any of them said it trains (EpochReport.epochs); 0: not said
  int workers = 0;
  int64_t rows = 0;
  double train_loss = 0;
  std::optional<double> train_accuracy;
  int64_t validation_rows = 0;
  std::optional<double> validation_loss;
  std::optional<double> validation_accuracy;
  MetricList train_metrics;  // the loss's others, from the sums the workers reported
  MetricList validation_metrics;
  // Times end at the epoch's last report (not at its decision, which waits for workers that have
  // not come yet): from the end of the epoch before (or the first worker's admission), and from
  // the first worker's admission.
  double seconds = 0;
  double elapsed = 0;
  double samples_per_second = 0;  // rows / seconds: every worker's
  double lr = 0;                  // the server's learning rate while the epoch was decided
};

struct ParameterServerReport {
  int64_t updates = 0;  // gradients applied
  int64_t dropped = 0;  // gradients dropped as staler than max_staleness
  uint64_t max_staleness = 0;
  double mean_staleness = 0;  // over every push
  uint64_t version = 0;       // of the final weights
  std::vector<int> finished;
  std::map<int, std::string> lost;  // worker -> what happened
  std::vector<ServedEpoch> epochs;  // every epoch all workers reported (or all that remained)
  bool stopped_early = false;
  std::string worker_info;  // the first worker's (JSON)
  std::vector<nlohmann::json> worker_summaries;
  int64_t refused_connections = 0;
  double seconds = 0;  // serving
};

// The hogwild parameter server: holds the master weights and the optimizer, admits the job's
// workers (HMAC challenge), and serves their pulls and pushes, each connection on its own thread.
// A worker that comes without an id (Hello.worker -1: a Spark task of an empty partition) waits
// on its thread until every other worker has come or the rendezvous is over, and then gets the
// lowest id that no worker claimed. A worker whose id was counted as lost is refused with
// Refused.lost set.
// Pulls share the weights; a push takes them alone for its optimizer step. Workers that fail,
// disconnect or go silent are reported and the job goes on with the others.
class ParameterServer {
 public:
  // Listens at once (throws RendezvousError when it cannot). `params` become views of one flat
  // buffer until Run returns.
  ParameterServer(ParameterServerOptions options, std::vector<at::Tensor> params);
  ~ParameterServer();

  int port() const { return port_; }

  // Serves until every worker has finished or is lost. Then the parameters hold the final
  // weights, each in its own storage again.
  ParameterServerReport Run();
  // After Run: the optimizer's state, for the model file (SaveOptimizerState).
  std::string OptimizerState();

 private:
  enum class State { kAbsent, kActive, kFinished, kLost };
  struct Worker {
    State state = State::kAbsent;
    std::string host;
    bool reported = false;
  };
  struct EpochSums {
    std::set<int> workers;
    int epochs = 0;  // the most any report said
    SteadyTime last_report;
    int64_t rows = 0;
    double loss = 0, correct = 0;
    bool classification = false;  // accuracies are reported
    int64_t validation_rows = 0;
    double validation_loss = 0, validation_correct = 0;
    // The loss's metrics, added up (MetricSums::Add) over the reports that carried sums.
    std::optional<MetricSums> train_metrics, validation_metrics;
  };

  // A worker without an id, waiting for one.
  struct Waiting {
    std::string host;
    int id = -1;        // given by AssignWaiting; -1 when none was left
    bool done = false;  // AssignWaiting has decided
  };

  // A lock of mu_, and the proof that it is held: what mu_ guards (the members after it) is read
  // and written only under one, and the functions that need it take one (Over, AssignWaiting,
  // CheckFeatureScale, Lose, ReleaseLock, Decide, Schedule), so that a call without the lock
  // does not compile. weights_mu_ guards the weights (Snapshot, ApplyPush lock it themselves),
  // and the two are never held together: nothing that takes a Held locks weights_mu_.
  class Held {
   public:
    explicit Held(std::mutex& mu) : lock_(mu) {}
    std::unique_lock<std::mutex>& lock() { return lock_; }  // for a condition variable's wait

   private:
    std::unique_lock<std::mutex> lock_;
  };

  // Defined beside the functions that use them.
  struct Refusal;      // parameter_server_admit.cc
  struct WorkerLink;   // parameter_server_messages.cc
  struct AppliedPush;  // parameter_server_messages.cc

  // The server's life (parameter_server.cc).
  // Starts a thread serving a new connection, or refuses it when too many are open.
  void Accept(Fd fd);
  // A connection's thread: admits it, then serves the worker.
  void Serve(Fd fd, int64_t serial);
  bool Over(const Held&) const;
  // Copies the weights into `bytes` and returns their version.
  uint64_t Snapshot(std::string* bytes);

  // Admission (parameter_server_admit.cc).
  // The handshake; returns the admitted worker's id, or -1 after refusing the connection.
  int Admit(FrameConnection& conn, const std::string& peer);
  // Logs and counts a refusal and returns -1; `tell`: the peer proved the secret, so it is told.
  int Refuse(FrameConnection& conn, const std::string& peer, const Refusal& refusal, bool tell);
  // The id a Hello claims, marked active; sets `refusal` when the id cannot be had.
  int ClaimId(const ps::Hello& hello, Refusal* refusal);
  // For a Hello without an id: waits until AssignWaiting gives it one and returns it, or sets
  // `refusal` and returns -1 when none is left.
  int AwaitId(const ps::Hello& hello, const std::string& peer, Refusal* refusal);
  // Once every worker has come (or the rendezvous is over), gives each waiting worker without an
  // id, in the order they came, the lowest id not claimed yet.
  void AssignWaiting(const Held&);
  // Warns when worker `id`'s rows are far from unit scale, unless an earlier worker's were
  // (options_.check_feature_scale).
  void CheckFeatureScale(const Held&, int id, const std::string& worker_info);
  // Sends worker `id` its Welcome (the model); false when the worker was lost instead.
  bool SendWelcome(FrameConnection& conn, const std::string& peer, int id, const ps::Hello& hello,
                   const std::string& nonce);

  // An admitted worker's messages (parameter_server_messages.cc).
  // Serves an admitted worker's requests until it finishes or is lost, each through the handler
  // of its kind. A handler replies and returns whether the connection goes on: false once the
  // worker finished or was lost.
  void ServeWorker(FrameConnection& conn, int id);
  bool OnPull(WorkerLink& link, const ps::Pull& pull);
  bool OnPush(WorkerLink& link, const ps::Push& push);
  bool OnEpochReport(WorkerLink& link, const ps::EpochReport& r);
  bool OnDone(WorkerLink& link, const ps::Done& done);
  // Steps the optimizer with a push's gradient, unless it is too stale (or impossibly new).
  AppliedPush ApplyPush(const ps::Push& push);
  // Count the link's worker as lost and return false; CloseLink also logs that the server
  // closes the connection, and why.
  bool LoseLink(const WorkerLink& link, const std::string& why);
  bool CloseLink(const WorkerLink& link, const std::string& why);

  // Epoch bookkeeping (parameter_server_epochs.cc).
  void Lose(const Held&, int id, const std::string& why);
  void ReleaseLock(const Held&, int id);
  void Decide(const Held&);  // epochs every worker reported
  void Schedule(const Held&, const ServedEpoch& served);  // the rate for the epoch after `served`

  ParameterServerOptions options_;
  Fd listener_;
  int port_ = 0;
  std::vector<at::Tensor> params_;
  at::Tensor flat_params_, flat_grads_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int64_t num_params_ = 0;
  // The rate the schedule wants (Decide sets it under mu_); ApplyPush gives it to the optimizer
  // under weights_mu_, so that the two locks are never held together.
  std::atomic<double> scheduled_lr_{0};
  double applied_lr_ = 0;                 // with weights_mu_
  std::unique_ptr<LrSchedule> schedule_;  // with mu_; made at the first epoch decided

  std::shared_mutex weights_mu_;  // flat_params_, version_, the optimizer
  uint64_t version_ = 0;

  std::mutex mu_;  // everything below, under a Held
  std::condition_variable lock_cv_;
  std::condition_variable waiting_cv_;  // a Waiting was decided, or the server is closing
  std::vector<Waiting*> waiting_;       // in arrival order
  bool closing_ = false;
  int lock_owner_ = -1;
  bool stop_ = false;
  bool rendezvous_over_ = false;
  bool warned_feature_scale_ = false;
  std::vector<Worker> workers_;
  std::map<int, EpochSums> epochs_;
  int next_epoch_ = 1;
  std::optional<SteadyTime> first_admitted_;  // when training started
  SteadyTime last_epoch_end_;                 // the last report of the last epoch decided
  EarlyStopping early_stopping_;
  ParameterServerReport report_;
  double staleness_sum_ = 0;
  int64_t pushes_ = 0;
  std::set<int> open_fds_;
  // Connection threads by serial number; those that have ended wait in ended_ to be joined by
  // Run, so that a long job's refused connections do not pile up.
  std::map<int64_t, std::thread> threads_;
  std::vector<int64_t> ended_;
  int64_t serial_ = 0;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_PS_PARAMETER_SERVER_H_
