#include "core/ps/ps_client.h"

#include "core/net/errors.h"
#include "core/net/random_hex.h"
#include "formats/error.h"
#include "formats/hmac_sha256.h"

namespace sparktorch {

PsClient::PsClient(PsClientOptions options)
    : options_(std::move(options)), name_("the parameter server at " + options_.server.ToString()) {
  const SteadyTime deadline = After(options_.timeout);
  Fd fd = Connect(options_.server, deadline, "the parameter server");
  DetectDeadPeer(fd.get(), kDeadPeerMillis);
  conn_ = FrameConnection(std::move(fd));
  std::string why;
  ps::Message m;
  const SteadyTime handshake = After(std::min(options_.timeout, kPsHandshakeSeconds));
  const auto greeted = conn_.Receive(&m, kMaxHandshakeFrame, handshake, &why);
  if (greeted == FrameConnection::Status::kOk && m.has_refused()) {
    throw RefusedError(name_ + " refused the connection: " + m.refused().reason());
  }
  if (greeted != FrameConnection::Status::kOk || !m.has_challenge()) {
    throw RendezvousError(options_.server.ToString() + " is not a sparktorch parameter server (" +
                          (why.empty() ? std::string("it sent a ") + MessageKindName(m) : why) +
                          "); is it `sparktorch serve --mode hogwild`?");
  }
  if (m.challenge().protocol() != kPsProtocolVersion) {
    throw RefusedError(name_ + " speaks protocol " + std::to_string(m.challenge().protocol()) +
                       ", this worker " + std::to_string(kPsProtocolVersion) +
                       "; run the same sparktorch version on the driver and the executors");
  }
  ps::Hello* hello = request_.mutable_hello();
  hello->set_protocol(kPsProtocolVersion);
  hello->set_worker(options_.worker);
  hello->set_world_size(options_.world_size);
  hello->set_job(options_.job);
  hello->set_host(HostName());
  hello->set_nonce(RandomHex(16));
  hello->set_worker_info(options_.worker_info);
  hello->set_mac(WorkerProof(options_.secret, m.challenge().nonce(), *hello));
  const std::string server_nonce = m.challenge().nonce();
  const std::string worker_nonce = hello->nonce();
  if (conn_.Send(request_, handshake) != FrameConnection::Status::kOk) {
    Lost("connection closed during the handshake");
  }
  auto status = conn_.Receive(&reply_, kMaxWelcomeFrame, deadline, &why);
  if (status == FrameConnection::Status::kClosed) {
    throw RefusedError(name_ + " closed the connection without an answer (a wrong SPARKTORCH_SECRET?)");
  }
  if (status != FrameConnection::Status::kOk) Lost(why);
  if (reply_.has_refused()) {
    const ps::Refused& refused = reply_.refused();
    const std::string message =
        name_ + " refused " +
        (options_.worker >= 0 ? "worker " + std::to_string(options_.worker) : "a worker with no rows") +
        ": " + refused.reason();
    if (refused.lost()) throw WorkerCountedLost(message, refused.worker(), refused.lost_reason());
    throw RefusedError(message);
  }
  if (!reply_.has_welcome()) Lost(std::string("it answered hello with ") + MessageKindName(reply_));
  welcome_ = reply_.welcome();
  if (!ConstantTimeEquals(welcome_.mac(), ServerProof(options_.secret, server_nonce, worker_nonce))) {
    throw RefusedError(name_ + " does not know this job's secret (SPARKTORCH_SECRET differs)");
  }
  if (welcome_.num_parameters() < 0 ||
      static_cast<uint64_t>(welcome_.num_parameters()) * 4 > (1ull << 31) - kFrameOverhead) {
    Lost("it announced " + std::to_string(welcome_.num_parameters()) + " parameters");
  }
  max_frame_ = static_cast<uint32_t>(welcome_.num_parameters() * 4 + kFrameOverhead);
  worker_ = options_.worker >= 0 ? options_.worker : welcome_.worker();
  if (worker_ < 0 || worker_ >= options_.world_size) {
    Lost("it gave this worker the id " + std::to_string(worker_) + ", outside 0.." +
         std::to_string(options_.world_size - 1));
  }
  reply_.Clear();
}

void PsClient::Lost(const std::string& why) const {
  throw PeerError("lost " + name_ + ": " + why, false);
}

void PsClient::Exchange(ps::Message::KindCase expected, const char* what, double timeout,
                        const void* tensor, size_t tensor_bytes, int tensor_field) {
  const auto start = std::chrono::steady_clock::now();
  const SteadyTime deadline = After(timeout);
  const auto sent = tensor ? conn_.SendWithTensor(request_, tensor_field, tensor, tensor_bytes, deadline)
                           : conn_.Send(request_, deadline);
  if (sent != FrameConnection::Status::kOk) {
    Lost(std::string("cannot send a ") + what + " (connection closed)");
  }
  std::string why;
  auto status = conn_.Receive(&reply_, max_frame_, deadline, &why);
  if (status == FrameConnection::Status::kTimeout) {
    Lost("no answer to a " + std::string(what) + " in " + SecondsText(timeout));
  }
  if (status != FrameConnection::Status::kOk) Lost(why);
  if (reply_.kind_case() != expected) {
    if (reply_.has_refused()) Lost("it ended this worker: " + reply_.refused().reason());
    Lost(std::string("it answered a ") + what + " with " + MessageKindName(reply_));
  }
  if (reply_.has_weights()) CheckWeights(reply_.weights(), what);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void PsClient::CheckWeights(const ps::Weights& weights, const char* what) const {
  const size_t want = static_cast<size_t>(num_parameters()) * 4;
  if (weights.data().size() != want) {
    Lost("it answered a " + std::string(what) + " with " + std::to_string(weights.data().size()) +
         " bytes of weights, not " + std::to_string(want));
  }
}

void PsClient::ReceiveWeights(const char* what) {
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  auto status = conn_.Receive(&weights_, max_frame_, After(options_.timeout), &why);
  if (status == FrameConnection::Status::kTimeout) {
    Lost("no weights after a " + std::string(what) + " in " + SecondsText(options_.timeout));
  }
  if (status != FrameConnection::Status::kOk) Lost(why);
  if (!weights_.has_weights()) {
    Lost(std::string("it sent ") + MessageKindName(weights_) + " where the weights after a " + what +
         " belong");
  }
  CheckWeights(weights_.weights(), what);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const ps::Weights& PsClient::Pull(bool acquire_lock) {
  request_.mutable_pull()->set_acquire_lock(acquire_lock);
  // Waiting for the lock, every other worker may hold it once first.
  Exchange(ps::Message::kWeights, acquire_lock ? "pull with the lock" : "pull",
           acquire_lock ? options_.timeout * std::max(1, options_.world_size) : options_.timeout);
  ++pulls_;
  return reply_.weights();
}

const ps::PushAck& PsClient::Push(uint64_t base_version, int64_t rows, const float* gradients,
                                  double loss, bool release_lock, bool pull) {
  ps::Push* push = request_.mutable_push();
  push->set_base_version(base_version);
  push->set_rows(rows);
  push->set_loss(loss);
  push->set_release_lock(release_lock);
  push->set_pull(pull);
  Exchange(ps::Message::kPushAck, "push", options_.timeout, gradients,
           static_cast<size_t>(num_parameters()) * 4, ps::Push::kGradientsFieldNumber);
  if (pull) {
    ReceiveWeights("push");
    ++pulls_;
  }
  ++pushes_;
  if (!reply_.push_ack().applied()) ++dropped_;
  return reply_.push_ack();
}

bool PsClient::ReportEpoch(const ps::EpochReport& report) {
  *request_.mutable_epoch_report() = report;
  Exchange(ps::Message::kEpochAck, "epoch report", options_.timeout);
  return reply_.epoch_ack().stop();
}

const ps::Weights& PsClient::Finish(const std::string& summary) {
  request_.mutable_done()->set_summary(summary);
  Exchange(ps::Message::kWeights, "done", options_.timeout);
  return reply_.weights();
}

void PsClient::Fail(const std::string& message) noexcept {
  try {
    if (!conn_.open()) return;
    request_.mutable_failed()->set_message(message);
    conn_.Send(request_, After(2));
    conn_.Close();
  } catch (...) {
  }
}

}  // namespace sparktorch
