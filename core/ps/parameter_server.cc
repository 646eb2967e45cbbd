#include "core/ps/parameter_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/dist/tracker_protocol.h"
#include "core/train/epoch_progress.h"
#include "core/train/optimizer.h"
#include "formats/error.h"
#include "formats/hmac_sha256.h"

namespace sparktorch {
namespace {

// Connections beyond one per worker that may be open at once (handshakes, refused peers).
constexpr size_t kMaxExtraConnections = 64;

}  // namespace

ParameterServer::ParameterServer(ParameterServerOptions options, std::vector<at::Tensor> params)
    : options_(std::move(options)), params_(std::move(params)) {
  workers_.resize(static_cast<size_t>(options_.world_size));
  for (const at::Tensor& p : params_) {
    if (p.scalar_type() != torch::kFloat) {
      throw ModelError("hogwild training needs float32 parameters; this model has a " +
                       std::string(c10::toString(p.scalar_type())) + " parameter");
    }
    num_params_ += p.numel();
  }
  // The Welcome carries the model file (a little more than its weights) in one frame.
  if (num_params_ * 4 + static_cast<int64_t>(kFrameOverhead) > kMaxWelcomeFrame ||
      options_.model.size() + kFrameOverhead > kMaxWelcomeFrame) {
    throw ModelError("a model of " + std::to_string(num_params_) + " parameters (" +
                     std::to_string(options_.model.size()) +
                     " bytes) is too large for one frame of the hogwild protocol (1 GiB)");
  }
  // The weights and gradients as two flat buffers, so that a pull copies one block and a push
  // lands in the gradients with one copy. Gradients through from_blob, as the trainer does.
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  flat_params_ = torch::empty({num_params_}, opts);
  flat_grads_ = torch::zeros({num_params_}, opts);
  int64_t offset = 0;
  for (at::Tensor& p : params_) {
    const int64_t n = p.numel();
    torch::NoGradGuard no_grad;
    flat_params_.narrow(0, offset, n).copy_(p.detach().reshape({-1}).cpu());
    p.set_data(flat_params_.narrow(0, offset, n).view(p.sizes()));
    p.mutable_grad() = torch::from_blob(flat_grads_.data_ptr<float>() + offset, p.sizes(), opts);
    offset += n;
  }
  optimizer_ = MakeOptimizer(options_.optimizer, params_);
  listener_ = Listen(options_.listen);
  port_ = LocalPort(listener_.get());
}

ParameterServer::~ParameterServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    stop_ = true;
    closing_ = true;
  }
  lock_cv_.notify_all();
  waiting_cv_.notify_all();
  for (auto& [serial, t] : threads_) {
    if (t.joinable()) t.join();
  }
}

bool ParameterServer::Over() const {
  for (const Worker& w : workers_) {
    if (w.state == State::kActive || (w.state == State::kAbsent && !rendezvous_over_)) return false;
  }
  return true;
}

ParameterServerReport ParameterServer::Run() {
  const auto start = std::chrono::steady_clock::now();
  const SteadyTime rendezvous = After(options_.rendezvous_timeout);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!rendezvous_over_ && std::chrono::steady_clock::now() >= rendezvous) {
        rendezvous_over_ = true;
        AssignWaiting();  // the ids nobody claimed go to the workers without one first
        for (size_t id = 0; id < workers_.size(); ++id) {
          if (workers_[id].state != State::kAbsent) continue;
          Lose(static_cast<int>(id), "never connected within " + SecondsText(options_.rendezvous_timeout));
        }
      }
      if (Over()) break;
    }
    std::vector<int64_t> ended;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended.swap(ended_);
    }
    for (int64_t serial : ended) {
      threads_[serial].join();
      threads_.erase(serial);
    }
    pollfd p{listener_.get(), POLLIN, 0};
    int rc = ::poll(&p, 1, 200);
    if (rc <= 0) continue;
    Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) continue;
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    {
      // Each connection has a thread: bound them, so that a flood of connections cannot.
      std::lock_guard<std::mutex> lock(mu_);
      const size_t limit = workers_.size() + kMaxExtraConnections;
      if (open_fds_.size() >= limit) {
        const std::string reason = std::to_string(open_fds_.size()) + " connections are open already";
        spdlog::warn("refused a connection from {}: {}", PeerName(fd.get()), reason);
        ++report_.refused_connections;
        ps::Message refused;
        refused.mutable_refused()->set_reason(reason);
        FrameConnection(std::move(fd)).Send(refused, After(0.1));
        continue;
      }
      open_fds_.insert(fd.get());
    }
    const int64_t serial = serial_++;
    threads_[serial] = std::thread([this, serial, f = std::move(fd)]() mutable { Serve(std::move(f), serial); });
  }
  listener_.reset();
  {
    // Connections still in their handshake (or garbage) end now.
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    closing_ = true;
  }
  waiting_cv_.notify_all();
  for (auto& [serial, t] : threads_) t.join();
  threads_.clear();

  // The parameters get their own storage back, for saving.
  {
    torch::NoGradGuard no_grad;
    for (at::Tensor& p : params_) {
      p.set_data(p.detach().clone());
      p.mutable_grad() = at::Tensor();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  report_.version = version_;
  report_.mean_staleness = pushes_ > 0 ? staleness_sum_ / pushes_ : 0;
  Decide();
  report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report_;
}

void ParameterServer::Serve(Fd fd, int64_t serial) {
  const int raw = fd.get();
  const std::string peer = PeerName(raw);
  FrameConnection conn(std::move(fd));
  int id = -1;
  try {
    id = Admit(conn, peer);
    if (id >= 0) ServeWorker(conn, id);
  } catch (const std::exception& e) {
    // An optimizer step that throws (a bad gradient) ends that worker, not the server.
    std::lock_guard<std::mutex> lock(mu_);
    if (id >= 0 && workers_[id].state == State::kActive) Lose(id, e.what());
    spdlog::error("connection from {}: {}", peer, e.what());
  }
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(raw);
  conn.Close();
  ended_.push_back(serial);
}

int ParameterServer::Admit(FrameConnection& conn, const std::string& peer) {
  const SteadyTime deadline = After(kPsHandshakeSeconds);
  ps::Message m;
  const std::string nonce = RandomHex(16);
  m.mutable_challenge()->set_protocol(kPsProtocolVersion);
  m.mutable_challenge()->set_nonce(nonce);
  if (conn.Send(m, deadline) != FrameConnection::Status::kOk) return -1;
  std::string why;
  // `lost_id`: the worker is refused because this id was counted as lost (Refused.lost).
  auto refuse = [&](const std::string& reason, bool tell, int lost_id = -1) {
    spdlog::warn("refused a connection from {}: {}", peer, reason);
    std::lock_guard<std::mutex> lock(mu_);
    ++report_.refused_connections;
    if (tell) {
      ps::Message r;
      r.mutable_refused()->set_reason(reason);
      if (lost_id >= 0) {
        r.mutable_refused()->set_lost(true);
        r.mutable_refused()->set_worker(lost_id);
        r.mutable_refused()->set_lost_reason(report_.lost[lost_id]);
      }
      conn.Send(r, After(1));
    }
    return -1;
  };
  m.Clear();
  if (conn.Receive(&m, kMaxHandshakeFrame, deadline, &why) != FrameConnection::Status::kOk) {
    return refuse(why + " (before authenticating)", false);
  }
  if (!m.has_hello()) return refuse(std::string("it sent ") + MessageKindName(m) + " instead of hello", false);
  const ps::Hello& hello = m.hello();
  // The proof comes first: nothing is told to a peer that does not know the secret.
  if (!ConstantTimeEquals(hello.mac(), WorkerProof(options_.secret, nonce, hello))) {
    return refuse("authentication failed (worker " + std::to_string(hello.worker()) +
                      " does not know this job's SPARKTORCH_SECRET)",
                  false);
  }
  if (hello.protocol() != kPsProtocolVersion) {
    return refuse("worker speaks protocol " + std::to_string(hello.protocol()) + ", this server " +
                      std::to_string(kPsProtocolVersion),
                  true);
  }
  if (hello.world_size() != options_.world_size) {
    return refuse("worker " + std::to_string(hello.worker()) + " says the job has " +
                      std::to_string(hello.world_size()) + " workers, this server serves " +
                      std::to_string(options_.world_size),
                  true);
  }
  const bool any = hello.worker() == -1;
  if (hello.worker() < -1 || hello.worker() >= options_.world_size) {
    return refuse("worker " + std::to_string(hello.worker()) + " is outside 0.." +
                      std::to_string(options_.world_size - 1),
                  true);
  }
  if (options_.job != "-" && hello.job() != options_.job) {
    return refuse("worker " + std::to_string(hello.worker()) + " belongs to job " + hello.job() +
                      ", this server to job " + options_.job,
                  true);
  }
  int id = hello.worker();
  std::string duplicate;
  int lost_id = -1;
  if (any) {
    std::unique_lock<std::mutex> lock(mu_);
    Waiting me;
    me.host = hello.host();
    waiting_.push_back(&me);
    spdlog::info("a worker with no rows arrived from {} ({}); it gets an id no worker claimed once "
                 "every worker has come",
                 hello.host(), peer);
    AssignWaiting();
    waiting_cv_.wait(lock, [&] { return me.done || closing_; });
    waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), &me), waiting_.end());
    id = me.id;
    if (id >= 0) {
      if (report_.worker_info.empty()) report_.worker_info = hello.worker_info();
    } else {
      // Every id has come; when some were counted as lost, this is a retry of one of them (a
      // Spark task of an empty partition that failed after it had an id).
      for (const auto& [lost, reason] : report_.lost) {
        lost_id = lost;
        duplicate = "no worker id is left for a worker with no rows: worker " + std::to_string(lost) +
                    " was counted as lost earlier in this job (" + reason + ")";
        break;
      }
      if (lost_id < 0) {
        duplicate = "no worker id is left for a worker with no rows: all " +
                    std::to_string(options_.world_size) + " workers have joined this job";
      }
    }
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    Worker& w = workers_[id];
    if (w.state == State::kLost && w.host.empty()) {
      duplicate = "worker " + std::to_string(id) + " arrived after the server's --timeout (" +
                  SecondsText(options_.rendezvous_timeout) + ") and was counted as lost";
      lost_id = id;
    } else if (w.state == State::kLost) {
      duplicate = "worker " + std::to_string(id) + " was lost earlier in this job (" +
                  report_.lost[id] + "); a job does not take a worker back";
      lost_id = id;
    } else if (w.state == State::kFinished) {
      duplicate = "worker " + std::to_string(id) + " already finished this job";
    } else if (w.state != State::kAbsent) {
      duplicate = "worker " + std::to_string(id) + " already joined this job (from " + w.host + ")";
    } else {
      w.state = State::kActive;
      w.host = hello.host();
      if (report_.worker_info.empty()) report_.worker_info = hello.worker_info();
      AssignWaiting();  // this may have been the last worker that workers without an id wait for
    }
  }
  if (!duplicate.empty()) return refuse(duplicate, true, lost_id);

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
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_admitted_) first_admitted_ = last_epoch_end_ = std::chrono::steady_clock::now();
  }
  if (any) {
    spdlog::info("worker {} joined from {} ({}): the worker with no rows, given an id no worker "
                 "claimed",
                 id, hello.host(), peer);
  } else {
    spdlog::info("worker {} joined from {} ({})", id, hello.host(), peer);
  }
  if (conn.Send(welcome, After(options_.worker_timeout)) != FrameConnection::Status::kOk) {
    std::lock_guard<std::mutex> lock(mu_);
    Lose(id, "connection closed while it was sent the model");
    return -1;
  }
  return id;
}

uint64_t ParameterServer::Snapshot(std::string* bytes) {
  std::shared_lock<std::shared_mutex> lock(weights_mu_);
  bytes->assign(static_cast<const char*>(flat_params_.data_ptr()), static_cast<size_t>(num_params_) * 4);
  return version_;
}

void ParameterServer::ServeWorker(FrameConnection& conn, int id) {
  const uint32_t max_frame = static_cast<uint32_t>(num_params_ * 4 + kFrameOverhead);
  const std::string name = "worker " + std::to_string(id);
  ps::Message in, out;
  std::string why;
  // The weights being sent: copied out under the shared lock, then written to the socket
  // straight from here (FrameConnection::SendWithTensor) instead of through the message.
  std::string snapshot;
  ps::Message weights;
  auto send_weights = [&] {
    return conn.SendWithTensor(weights, ps::Weights::kDataFieldNumber, snapshot.data(),
                               snapshot.size(), After(options_.worker_timeout));
  };
  for (;;) {
    auto status = conn.Receive(&in, max_frame, After(options_.worker_timeout), &why);
    if (status != FrameConnection::Status::kOk) {
      if (status == FrameConnection::Status::kTimeout) {
        why = "silent for " + SecondsText(options_.worker_timeout);
      }
      if (status == FrameConnection::Status::kTooLarge || status == FrameConnection::Status::kMalformed) {
        spdlog::warn("{}: closing its connection: {}", name, why);
      }
      std::lock_guard<std::mutex> lock(mu_);
      Lose(id, why);
      return;
    }
    out.Clear();
    switch (in.kind_case()) {
      case ps::Message::kPull: {
        if (options_.lock && in.pull().acquire_lock()) {
          std::unique_lock<std::mutex> lock(mu_);
          lock_cv_.wait(lock, [&] { return lock_owner_ < 0 || lock_owner_ == id || stop_; });
          if (!stop_) lock_owner_ = id;
        }
        weights.mutable_weights()->set_version(Snapshot(&snapshot));
        {
          std::lock_guard<std::mutex> lock(mu_);
          weights.mutable_weights()->set_stop(stop_);
        }
        if (send_weights() != FrameConnection::Status::kOk) {
          std::lock_guard<std::mutex> lock(mu_);
          Lose(id, "connection closed");
          return;
        }
        continue;
      }
      case ps::Message::kPush: {
        const ps::Push& push = in.push();
        const size_t want = static_cast<size_t>(num_params_) * 4;
        if (push.gradients().size() != want || push.rows() <= 0) {
          why = "a push of " + std::to_string(push.gradients().size()) + " bytes over " +
                std::to_string(push.rows()) + " rows (expected " + std::to_string(want) +
                " bytes over at least 1 row)";
          spdlog::warn("{}: closing its connection: {}", name, why);
          std::lock_guard<std::mutex> lock(mu_);
          Lose(id, why);
          return;
        }
        uint64_t staleness = 0;
        bool applied = false;
        uint64_t version = 0;
        {
          std::unique_lock<std::shared_mutex> lock(weights_mu_);
          if (push.base_version() > version_) {
            why = "a push computed on version " + std::to_string(push.base_version()) +
                  ", newer than the server's " + std::to_string(version_);
          } else {
            staleness = version_ - push.base_version();
            if (options_.max_staleness < 0 || staleness <= static_cast<uint64_t>(options_.max_staleness)) {
              std::memcpy(flat_grads_.data_ptr(), push.gradients().data(), want);
              optimizer_->step();
              ++version_;
              applied = true;
            }
          }
          version = version_;
        }
        // The weights the push asked for, copied outside mu_ (under the shared weights lock).
        if (push.pull() && why.empty()) weights.mutable_weights()->set_version(Snapshot(&snapshot));
        std::unique_lock<std::mutex> lock(mu_);
        if (!why.empty()) {
          spdlog::warn("{}: closing its connection: {}", name, why);
          Lose(id, why);
          return;
        }
        ++pushes_;
        staleness_sum_ += static_cast<double>(staleness);
        report_.max_staleness = std::max(report_.max_staleness, staleness);
        if (applied) {
          ++report_.updates;
        } else {
          ++report_.dropped;
        }
        if (push.release_lock()) ReleaseLock(id);
        ps::PushAck* ack = out.mutable_push_ack();
        ack->set_version(version);
        ack->set_applied(applied);
        ack->set_staleness(staleness);
        ack->set_stop(stop_);
        if (!push.pull()) break;
        weights.mutable_weights()->set_stop(stop_);
        lock.unlock();
        if (conn.Send(out, After(options_.worker_timeout)) != FrameConnection::Status::kOk ||
            send_weights() != FrameConnection::Status::kOk) {
          lock.lock();
          Lose(id, "connection closed");
          return;
        }
        continue;
      }
      case ps::Message::kEpochReport: {
        const ps::EpochReport& r = in.epoch_report();
        std::lock_guard<std::mutex> lock(mu_);
        if (r.epoch() >= next_epoch_ && r.rows() >= 0 && r.validation_rows() >= 0) {
          EpochSums& e = epochs_[r.epoch()];
          if (e.workers.insert(id).second) {
            e.epochs = std::max(e.epochs, r.epochs());
            e.last_report = std::chrono::steady_clock::now();
            e.rows += r.rows();
            e.loss += r.train_loss() * static_cast<double>(r.rows());
            e.classification = e.classification || r.classification();
            e.correct += r.train_correct();
            e.validation_rows += r.validation_rows();
            e.validation_loss += r.validation_loss() * static_cast<double>(r.validation_rows());
            e.validation_correct += r.validation_correct();
          }
          Decide();
        }
        out.mutable_epoch_ack()->set_stop(stop_);
        break;
      }
      case ps::Message::kDone: {
        weights.mutable_weights()->set_version(Snapshot(&snapshot));
        {
          std::lock_guard<std::mutex> lock(mu_);
          ReleaseLock(id);
          weights.mutable_weights()->set_stop(stop_);
        }
        // The worker counts as finished once it has its final weights: until then the job is
        // not over, so the server does not close this connection under the send.
        const bool sent = send_weights() == FrameConnection::Status::kOk;
        std::lock_guard<std::mutex> lock(mu_);
        if (!sent) {
          Lose(id, "connection closed before it got the final weights");
          return;
        }
        workers_[id].state = State::kFinished;
        report_.finished.push_back(id);
        nlohmann::json summary = nlohmann::json::parse(in.done().summary(), nullptr, false);
        if (summary.is_object()) report_.worker_summaries.push_back(summary);
        Decide();
        spdlog::info("{} finished", name);
        return;
      }
      case ps::Message::kFailed: {
        std::lock_guard<std::mutex> lock(mu_);
        Lose(id, "failed: " + in.failed().message());
        return;
      }
      default: {
        std::lock_guard<std::mutex> lock(mu_);
        why = std::string("it sent ") + MessageKindName(in) + ", which workers do not send";
        spdlog::warn("{}: closing its connection: {}", name, why);
        Lose(id, why);
        return;
      }
    }
    if (conn.Send(out, After(options_.worker_timeout)) != FrameConnection::Status::kOk) {
      std::lock_guard<std::mutex> lock(mu_);
      Lose(id, "connection closed");
      return;
    }
  }
}

}  // namespace sparktorch
