#ifndef SPARKTORCH_CORE_WORLD_WORLD_H_
#define SPARKTORCH_CORE_WORLD_WORLD_H_

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/world/communicator.h"
#include "core/world/tracker_link.h"
#include "core/net/socket.h"

namespace sparktorch {

enum class WorldMode { kAuto, kLocal, kSync };

// How a training process finds its peers. The caller (cli/) reads the environment and the flags;
// nothing here reads configuration of its own.
struct WorldOptions {
  WorldMode mode = WorldMode::kAuto;
  bool under_mpirun = false;        // started by mpirun (OMPI_COMM_WORLD_SIZE is set)
  std::optional<Address> tracker;   // --tracker: started by Spark, bootstrapped by the tracker
  int rank = -1;                    // --rank, with --tracker
  bool any_rank = false;            // with --tracker instead of a rank: take one nobody claimed
  int world_size = 0;               // --world-size, with --tracker
  std::string job = "-";            // SPARKTORCH_JOB_ID, or "-"
  std::string secret;               // SPARKTORCH_SECRET
  double timeout = 120;             // seconds for every rank to arrive
  std::string pmi_library;          // libsparktorch_pmi.so, for --tracker
  AbortHandler on_abort;            // ends the process when the job ends under this rank
};

// The ranks one training process trains with: a world of one (local), MPI_COMM_WORLD started by
// mpirun, or MPI_COMM_WORLD bootstrapped through the tracker. In both MPI cases every rank keeps
// a control link to a tracker (under mpirun, a hub that rank 0 runs in a thread), which is how a
// lost or failed rank ends every other rank within seconds instead of leaving them waiting in a
// collective forever: Open MPI has no timeouts of its own.
class World {
 public:
  // Joins the world the options describe (options the caller checked: a tracker with a rank in
  // range, pmi_library there); returns when every rank is there. Throws the errors of
  // TrackerLink, and of MPI's start.
  static std::unique_ptr<World> Join(const WorldOptions& options);
  ~World();

  Communicator& comm() { return *comm_; }
  bool sync() const { return sync_; }
  const char* launcher() const { return launcher_; }  // "none", "mpirun" or "tracker"

  // After this rank's work succeeded: waits for every rank, finalises MPI and tells the
  // tracker. Throws PeerError when another rank fails meanwhile.
  void Finish();
  // After this rank failed: tells the tracker, which ends every other rank with `message`.
  // Never throws.
  void Fail(const std::string& message) noexcept;
  // Passes one epoch's metrics (JSON, with `epochs`) to the tracker, which logs them for the
  // person who started the job. Does nothing without a tracker. Best effort: never throws.
  void ReportEpoch(const std::string& json) noexcept;
  // Sends rank 0's checkpoint after `epoch` (a model file's bytes) to the tracker, which keeps
  // it where `serve --checkpoint` says, from a thread of the link's (TrackerLink::
  // SendCheckpointLater): training goes on meanwhile. Returns false without a tracker. Never
  // throws.
  bool SendCheckpoint(int epoch, std::string model_bytes) noexcept;
  // Sends rank 0's trained model (a model file's bytes) to the tracker, which writes it where
  // `serve --output` says (TrackerLink::SendModel). Throws UsageError without a tracker and
  // PeerError when the tracker could not be reached.
  void SendModel(const std::string& model_bytes);

 private:
  World() = default;
  void StartHub(const WorldOptions& options);

  std::unique_ptr<Communicator> comm_;
  bool sync_ = false;
  const char* launcher_ = "none";
  std::unique_ptr<TrackerLink> link_;
  std::thread hub_;
  std::future<void> hub_done_;
  bool finished_ = false;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_WORLD_H_
