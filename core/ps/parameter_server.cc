// The parameter server's life: it takes its parameters and listens (constructor), accepts
// connections and gives each a thread (Run, Accept, Serve) until every worker has finished or
// is lost, and hands back the final weights. Admission is in parameter_server_admit.cc, a
// worker's messages in parameter_server_messages.cc, the epochs in parameter_server_epochs.cc.
#include "core/ps/parameter_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <string>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/train/optimizer.h"
#include "core/train/optimizer_state.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// Connections beyond one per worker that may be open at once (handshakes, refused peers).
constexpr size_t kMaxExtraConnections = 64;

}  // namespace

ParameterServer::ParameterServer(ParameterServerOptions options, std::vector<at::Tensor> params)
    : options_(std::move(options)),
      params_(std::move(params)),
      early_stopping_(options_.early_stop_patience, EarlyStopping::First::kIsBest) {
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
  if (!options_.optimizer_state.empty()) {
    LoadOptimizerState(*optimizer_, options_.optimizer, params_, options_.optimizer_state, "--model");
  }
  applied_lr_ = options_.optimizer.at("lr").get<double>();
  // The first epoch's rate does not depend on the number of epochs, not yet known.
  scheduled_lr_ = LrSchedule(options_.lr_schedule, applied_lr_, 1, 1).Lr(1, 0);
  listener_ = options_.listen_fd >= 0 ? Fd(options_.listen_fd) : Listen(options_.listen);
  port_ = LocalPort(listener_.get());
}

std::string ParameterServer::OptimizerState() {
  Held held(mu_);
  return SaveOptimizerState(*optimizer_, options_.optimizer, params_);
}

ParameterServer::~ParameterServer() {
  {
    Held held(mu_);
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

bool ParameterServer::Over(const Held&) const {
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
      Held held(mu_);
      if (!rendezvous_over_ && std::chrono::steady_clock::now() >= rendezvous) {
        rendezvous_over_ = true;
        AssignWaiting(held);  // the ids nobody claimed go to the workers without one first
        for (size_t id = 0; id < workers_.size(); ++id) {
          if (workers_[id].state != State::kAbsent) continue;
          Lose(held, static_cast<int>(id), "never connected within " + SecondsText(options_.rendezvous_timeout));
        }
      }
      if (Over(held)) break;
    }
    std::vector<int64_t> ended;
    {
      Held held(mu_);
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
    if (fd.valid()) Accept(std::move(fd));
  }
  listener_.reset();
  {
    // Connections still in their handshake (or garbage) end now.
    Held held(mu_);
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
  Held held(mu_);
  report_.version = version_;
  report_.mean_staleness = pushes_ > 0 ? staleness_sum_ / pushes_ : 0;
  Decide(held);
  report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report_;
}

void ParameterServer::Accept(Fd fd) {
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  DetectDeadPeer(fd.get(), kDeadPeerMillis);
  {
    // Each connection has a thread: bound them, so that a flood of connections cannot.
    Held held(mu_);
    const size_t limit = workers_.size() + kMaxExtraConnections;
    if (open_fds_.size() >= limit) {
      const std::string reason = std::to_string(open_fds_.size()) + " connections are open already";
      spdlog::warn("refused a connection from {}: {}", PeerName(fd.get()), reason);
      ++report_.refused_connections;
      ps::Message refused;
      refused.mutable_refused()->set_reason(reason);
      FrameConnection(std::move(fd)).Send(refused, After(0.1));
      return;
    }
    open_fds_.insert(fd.get());
  }
  const int64_t serial = serial_++;
  threads_[serial] = std::thread([this, serial, f = std::move(fd)]() mutable { Serve(std::move(f), serial); });
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
    Held held(mu_);
    if (id >= 0 && workers_[id].state == State::kActive) Lose(held, id, e.what());
    spdlog::error("connection from {}: {}", peer, e.what());
  }
  Held held(mu_);
  open_fds_.erase(raw);
  conn.Close();
  ended_.push_back(serial);
}

uint64_t ParameterServer::Snapshot(std::string* bytes) {
  std::shared_lock<std::shared_mutex> lock(weights_mu_);
  bytes->assign(static_cast<const char*>(flat_params_.data_ptr()), static_cast<size_t>(num_params_) * 4);
  return version_;
}

}  // namespace sparktorch
