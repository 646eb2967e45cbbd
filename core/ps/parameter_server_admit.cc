// Admission: the handshake of a new connection (a challenge, the worker's Hello and proof, the
// server's Welcome with the model) and the worker id it gets: the one its Hello claims, or, for
// a worker that comes without one, the lowest id nobody claimed once every worker has come
// (AssignWaiting).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/net/random_hex.h"
#include "core/ps/parameter_server.h"
#include "core/train/feature_scale.h"
#include "formats/hmac_sha256.h"

namespace sparktorch {
namespace {

// Why a Hello whose proof is good cannot join this server's job; empty when it can. It is
// checked after the proof, so that only a peer that knows the secret learns any of this.
std::string HelloMismatch(const ps::Hello& hello, const ParameterServerOptions& options) {
  if (hello.protocol() != kPsProtocolVersion) {
    return "worker speaks protocol " + std::to_string(hello.protocol()) + ", this server " +
           std::to_string(kPsProtocolVersion);
  }
  if (hello.world_size() != options.world_size) {
    return "worker " + std::to_string(hello.worker()) + " says the job has " +
           std::to_string(hello.world_size()) + " workers, this server serves " +
           std::to_string(options.world_size);
  }
  if (hello.worker() < -1 || hello.worker() >= options.world_size) {
    return "worker " + std::to_string(hello.worker()) + " is outside 0.." +
           std::to_string(options.world_size - 1);
  }
  if (options.job != "-" && hello.job() != options.job) {
    return "worker " + std::to_string(hello.worker()) + " belongs to job " + hello.job() +
           ", this server to job " + options.job;
  }
  return "";
}

}  // namespace

// Why a worker that proved the secret is refused, and the id counted as lost it is refused for
// (Refused.lost), if that is why.
struct ParameterServer::Refusal {
  std::string reason;
  int lost_id = -1;
};

int ParameterServer::Admit(FrameConnection& conn, const std::string& peer) {
  const SteadyTime deadline = After(kPsHandshakeSeconds);
  ps::Message m;
  const std::string nonce = RandomHex(16);
  m.mutable_challenge()->set_protocol(kPsProtocolVersion);
  m.mutable_challenge()->set_nonce(nonce);
  if (conn.Send(m, deadline) != FrameConnection::Status::kOk) return -1;
  std::string why;
  m.Clear();
  if (conn.Receive(&m, kMaxHandshakeFrame, deadline, &why) != FrameConnection::Status::kOk) {
    return Refuse(conn, peer, {why + " (before authenticating)"}, false);
  }
  if (!m.has_hello()) {
    return Refuse(conn, peer, {std::string("it sent ") + MessageKindName(m) + " instead of hello"}, false);
  }
  const ps::Hello& hello = m.hello();
  // The proof comes first: nothing is told to a peer that does not know the secret.
  if (!ConstantTimeEquals(hello.mac(), WorkerProof(options_.secret, nonce, hello))) {
    return Refuse(conn, peer,
                  {"authentication failed (worker " + std::to_string(hello.worker()) +
                   " does not know this job's SPARKTORCH_SECRET)"},
                  false);
  }
  const std::string mismatch = HelloMismatch(hello, options_);
  if (!mismatch.empty()) return Refuse(conn, peer, {mismatch}, true);
  Refusal refusal;
  const int id = hello.worker() == -1 ? AwaitId(hello, peer, &refusal) : ClaimId(hello, &refusal);
  if (!refusal.reason.empty()) return Refuse(conn, peer, refusal, true);
  return SendWelcome(conn, peer, id, hello, nonce) ? id : -1;
}

int ParameterServer::Refuse(FrameConnection& conn, const std::string& peer, const Refusal& refusal,
                            bool tell) {
  spdlog::warn("refused a connection from {}: {}", peer, refusal.reason);
  Held held(mu_);
  ++report_.refused_connections;
  if (tell) {
    ps::Message r;
    r.mutable_refused()->set_reason(refusal.reason);
    if (refusal.lost_id >= 0) {
      r.mutable_refused()->set_lost(true);
      r.mutable_refused()->set_worker(refusal.lost_id);
      r.mutable_refused()->set_lost_reason(report_.lost[refusal.lost_id]);
    }
    conn.Send(r, After(1));
  }
  return -1;
}

int ParameterServer::ClaimId(const ps::Hello& hello, Refusal* refusal) {
  const int id = hello.worker();
  Held held(mu_);
  Worker& w = workers_[id];
  if (w.state == State::kLost && w.host.empty()) {
    refusal->reason = "worker " + std::to_string(id) + " arrived after the server's --timeout (" +
                      SecondsText(options_.rendezvous_timeout) + ") and was counted as lost";
    refusal->lost_id = id;
  } else if (w.state == State::kLost) {
    refusal->reason = "worker " + std::to_string(id) + " was lost earlier in this job (" +
                      report_.lost[id] + "); a job does not take a worker back";
    refusal->lost_id = id;
  } else if (w.state == State::kFinished) {
    refusal->reason = "worker " + std::to_string(id) + " already finished this job";
  } else if (w.state != State::kAbsent) {
    refusal->reason = "worker " + std::to_string(id) + " already joined this job (from " + w.host + ")";
  } else {
    w.state = State::kActive;
    w.host = hello.host();
    if (report_.worker_info.empty()) report_.worker_info = hello.worker_info();
    AssignWaiting(held);  // this may have been the last worker that workers without an id wait for
  }
  return id;
}

int ParameterServer::AwaitId(const ps::Hello& hello, const std::string& peer, Refusal* refusal) {
  Held held(mu_);
  Waiting me;
  me.host = hello.host();
  waiting_.push_back(&me);
  spdlog::info("a worker with no rows arrived from {} ({}); it gets an id no worker claimed once "
               "every worker has come",
               hello.host(), peer);
  AssignWaiting(held);
  waiting_cv_.wait(held.lock(), [&] { return me.done || closing_; });
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), &me), waiting_.end());
  if (me.id >= 0) {
    if (report_.worker_info.empty()) report_.worker_info = hello.worker_info();
    return me.id;
  }
  // Every id has come; when some were counted as lost, this is a retry of one of them (a Spark
  // task of an empty partition that failed after it had an id).
  if (!report_.lost.empty()) {
    const auto& [lost, reason] = *report_.lost.begin();
    refusal->lost_id = lost;
    refusal->reason = "no worker id is left for a worker with no rows: worker " + std::to_string(lost) +
                      " was counted as lost earlier in this job (" + reason + ")";
  } else {
    refusal->reason = "no worker id is left for a worker with no rows: all " +
                      std::to_string(options_.world_size) + " workers have joined this job";
  }
  return -1;
}

void ParameterServer::AssignWaiting(const Held&) {
  if (waiting_.empty()) return;
  const auto arrived = std::count_if(workers_.begin(), workers_.end(),
                                     [](const Worker& w) { return w.state != State::kAbsent; });
  if (static_cast<size_t>(arrived) + waiting_.size() < workers_.size() && !rendezvous_over_) return;
  size_t next = 0;
  for (Waiting* w : waiting_) {
    while (next < workers_.size() && workers_[next].state != State::kAbsent) ++next;
    if (next < workers_.size()) {
      workers_[next].state = State::kActive;
      workers_[next].host = w->host;
      w->id = static_cast<int>(next);
    }
    w->done = true;
  }
  waiting_.clear();
  waiting_cv_.notify_all();
}

bool ParameterServer::SendWelcome(FrameConnection& conn, const std::string& peer, int id,
                                  const ps::Hello& hello, const std::string& nonce) {
  ps::Message welcome;
  ps::Welcome* wm = welcome.mutable_welcome();
  wm->set_mac(ServerProof(options_.secret, nonce, hello.nonce()));
  wm->set_model(options_.model);
  wm->set_num_parameters(num_params_);
  wm->set_lock(options_.lock);
  wm->set_pull_every(options_.pull_every);
  wm->set_worker(id);
  {
    std::shared_lock<std::shared_mutex> lock(weights_mu_);
    wm->set_version(version_);
  }
  {
    Held held(mu_);
    if (!first_admitted_) first_admitted_ = last_epoch_end_ = std::chrono::steady_clock::now();
  }
  if (hello.worker() == -1) {
    spdlog::info("worker {} joined from {} ({}): the worker with no rows, given an id no worker "
                 "claimed",
                 id, hello.host(), peer);
  } else {
    spdlog::info("worker {} joined from {} ({})", id, hello.host(), peer);
  }
  {
    Held held(mu_);
    CheckFeatureScale(held, id, hello.worker_info());
  }
  if (conn.Send(welcome, After(options_.worker_timeout)) != FrameConnection::Status::kOk) {
    Held held(mu_);
    Lose(held, id, "connection closed while it was sent the model");
    return false;
  }
  return true;
}

void ParameterServer::CheckFeatureScale(const Held&, int id, const std::string& worker_info) {
  if (!options_.check_feature_scale || warned_feature_scale_) return;
  const nlohmann::json info = nlohmann::json::parse(worker_info, nullptr, false);
  auto number = [&info](const char* key) {
    return info.is_object() && info.contains(key) && info[key].is_number() ? info[key].get<double>()
                                                                           : 0.0;
  };
  // Only the root mean square and the largest value matter: one value stands for them all.
  FeatureScale scale;
  scale.values = 1;
  scale.sum_squares = std::pow(number("feature_rms"), 2);
  scale.max_abs = number("feature_max_abs");
  const std::string where = "worker " + std::to_string(id) + "'s rows";
  const std::string warning = UnscaledFeaturesWarning(scale, where);
  if (warning.empty()) return;
  spdlog::warn("{}", warning);
  warned_feature_scale_ = true;
}

}  // namespace sparktorch
