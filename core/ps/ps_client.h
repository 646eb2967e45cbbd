#ifndef SPARKTORCH_CORE_PS_PS_CLIENT_H_
#define SPARKTORCH_CORE_PS_PS_CLIENT_H_

#include <cstdint>
#include <string>

#include "core/net/errors.h"
#include "core/net/socket.h"
#include "core/ps/ps_wire.h"
#include "formats/error.h"

namespace sparktorch {

struct PsClientOptions {
  Address server;
  std::string secret;       // SPARKTORCH_SECRET; empty: the server must have none either
  std::string job = "-";    // SPARKTORCH_JOB_ID
  int worker = 0;           // or -1: a worker without rows, which the server gives an id
  int world_size = 1;
  double timeout = 120;     // seconds to reach the server, and for each answer
  std::string worker_info;  // JSON for the server: row format, prediction, rows, their scale
};

// The parameter server refused a worker because its id was counted as lost earlier in the job
// (Refused.lost): Spark retried a task the server had given up on. The job goes on without the
// worker, which should end without an error. what() is the refusal, as for any RefusedError.
class WorkerCountedLost : public RefusedError {
 public:
  WorkerCountedLost(const std::string& message, int worker, std::string reason)
      : RefusedError(message), worker_(worker), reason_(std::move(reason)) {}
  int worker() const { return worker_; }              // the id the server counted as lost
  const std::string& reason() const { return reason_; }  // why it did

 private:
  int worker_;
  std::string reason_;
};

// A hogwild worker's connection to `sparktorch serve --mode hogwild`: requests and their answers.
// Throws RendezvousError when the server cannot be reached, RefusedError when it refuses this
// worker or does not prove it knows the secret (WorkerCountedLost when it refuses an id it counted
// as lost), and PeerError (lost) when it disappears or stops answering. Not thread-safe.
class PsClient {
 public:
  explicit PsClient(PsClientOptions options);

  const ps::Welcome& welcome() const { return welcome_; }
  int64_t num_parameters() const { return welcome_.num_parameters(); }
  // This worker's id: the one it claimed, or the one the server gave it (Welcome.worker).
  int worker() const { return worker_; }

  // The current weights; with `acquire_lock`, after waiting for the server's lock.
  const ps::Weights& Pull(bool acquire_lock);
  // Sends one step's mean gradient (num_parameters floats) computed on `base_version`; with
  // `pull`, the server also sends the weights after it (counted as a pull: see weights()).
  const ps::PushAck& Push(uint64_t base_version, int64_t rows, const float* gradients, double loss,
                          bool release_lock, bool pull = false);
  // The weights a push with `pull` brought.
  const ps::Weights& weights() const { return weights_.weights(); }
  // Sends an epoch's numbers; returns true when the server has stopped the job.
  bool ReportEpoch(const ps::EpochReport& report);
  // Says this worker is done (with its summary) and returns the weights of that moment.
  const ps::Weights& Finish(const std::string& summary);
  // Tells the server this worker failed. Best effort: never throws.
  void Fail(const std::string& message) noexcept;

  int64_t pulls() const { return pulls_; }
  int64_t pushes() const { return pushes_; }
  int64_t pushes_dropped() const { return dropped_; }
  double seconds() const { return seconds_; }  // waiting on the server

 private:
  // Sends request_ and reads the answer into reply_, which must be of kind `expected`.
  // `tensor`, when given, goes as field `tensor_field` of the request's submessage.
  void Exchange(ps::Message::KindCase expected, const char* what, double timeout,
                const void* tensor = nullptr, size_t tensor_bytes = 0, int tensor_field = 0);
  // Reads the Weights frame that follows a PushAck into weights_ and checks its size.
  void ReceiveWeights(const char* what);
  [[noreturn]] void Lost(const std::string& why) const;
  void CheckWeights(const ps::Weights& weights, const char* what) const;

  PsClientOptions options_;
  std::string name_;  // "the parameter server at HOST:PORT"
  FrameConnection conn_;
  ps::Welcome welcome_;
  ps::Message request_;
  ps::Message reply_;
  ps::Message weights_;  // a Weights frame that followed a PushAck
  uint32_t max_frame_ = kMaxHandshakeFrame;
  int worker_ = 0;
  int64_t pulls_ = 0, pushes_ = 0, dropped_ = 0;
  double seconds_ = 0;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_PS_PS_CLIENT_H_
