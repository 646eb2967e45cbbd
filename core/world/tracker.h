#ifndef SPARKTORCH_CORE_WORLD_TRACKER_H_
#define SPARKTORCH_CORE_WORLD_TRACKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/world/tracker_protocol.h"
#include "core/net/socket.h"

namespace sparktorch {

struct TrackerOptions {
  Address listen;          // port 0: any free port
  int listen_fd = -1;      // >= 0: a socket that already listens there, which the tracker owns
  int world_size = 0;      // ranks expected, 0..world_size-1
  uint32_t job_id = 0;     // handed to the ranks (MPI's job id, FLUX_JOB_ID); 0: a random one
  std::string secret;      // ranks must prove they hold it; empty: no authentication
  bool serve_pmi = true;   // false for the liveness-only hub that rank 0 runs under mpirun
                           // (which also logs arrivals only at debug level)
  double rendezvous_timeout = 120;  // seconds for all ranks to arrive
  double heartbeat_timeout = 30;    // seconds of silence after which a rank counts as lost
  // Called with each checkpoint rank 0 sends (the epoch after which it was taken, the model
  // file's bytes, verified); empty: checkpoints are received and dropped.
  std::function<void(int epoch, const std::string& model_bytes)> on_checkpoint;
  // Called with the trained model rank 0 sends at the end of the job (train --send-model: the
  // model file's bytes, verified), before that rank's `done`. Empty: a model sent fails the job.
  // A throw fails the job with its message.
  std::function<void(const std::string& model_bytes)> on_model;
};

// How a job ended, as the tracker saw it.
struct TrackerOutcome {
  bool ok = false;  // every rank reported that it finished
  AbortKind kind = AbortKind::kLost;
  std::string message;  // for a failure: what ended the job, naming the rank
};

// The rendezvous point of a synchronous job (`sparktorch serve`): it admits the ranks (checking
// the secret, the job, the rank and the world size), gives the ranks that arrived without one
// (kAnyRank: Spark tasks of empty partitions) the ranks nobody claimed, in ascending order to them
// in the order they arrived, once every rank is there; serves the PMI-1 key-value store and
// barrier that Open MPI's bootstrap needs, and watches every rank's control link. When a rank's
// link drops before the rank said it finished, or a rank reports an error, or not all ranks
// arrive in time, it tells every other rank to stop (with the reason) and ends. It logs each
// epoch that rank 0 reports (`epoch JSON`), with an estimate of the time left, and passes on the
// checkpoints rank 0 sends (`checkpoint-record` lines, then `checkpoint EPOCH`) and its trained
// model (`model-record` lines, then `model`). Single-threaded:
// one poll loop serves every connection.
class Tracker {
 public:
  // Binds the listening socket. Throws RendezvousError when it cannot.
  explicit Tracker(TrackerOptions options);
  ~Tracker();

  int port() const { return LocalPort(listener_.get()); }
  uint32_t job_id() const { return options_.job_id; }

  // Serves until the job ends; returns how. The rendezvous timeout counts from this call.
  TrackerOutcome Run();

 private:
  struct Connection;
  void Accept();
  void Handle(Connection& c, const std::string& line);
  void Admit(Connection& c, const std::string& line);
  void HandleControl(Connection& c, const std::string& verb, const std::string& rest);
  void HandleCheckpoint(Connection& c, const std::string& verb, const std::string& rest);
  void HandleModel(Connection& c, const std::string& verb, const std::string& rest);
  void HandlePmi(Connection& c, const std::string& verb, const std::string& rest);
  void Refuse(Connection& c, const std::string& why);
  // Once claimed ranks and ranks without one make the world: gives the latter the ranks left
  // over, and starts the job.
  void MaybeStart();
  void EndRendezvous();
  void End(AbortKind kind, const std::string& message);
  void Send(Connection& c, const std::string& line);

  TrackerOptions options_;
  Fd listener_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> control_;  // by rank; null until the rank arrives
  std::vector<bool> finished_;
  std::vector<std::string> hosts_;    // by rank; empty until the rank arrives (or is given out)
  std::vector<Connection*> any_;      // control links without a rank yet, in arrival order
  bool started_ = false;
  int in_barrier_ = 0;
  std::unordered_map<std::string, std::string> kvs_;
  bool ended_ = false;
  TrackerOutcome outcome_;
};

// Ranks as English: "3", "2 and 3", "0, 2 and 5" (the tracker's timeout message).
std::string RankList(const std::vector<int>& ranks);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_TRACKER_H_
