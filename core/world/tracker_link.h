#ifndef SPARKTORCH_CORE_WORLD_TRACKER_LINK_H_
#define SPARKTORCH_CORE_WORLD_TRACKER_LINK_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "core/world/tracker_protocol.h"
#include "core/net/socket.h"

namespace sparktorch {

struct TrackerLinkOptions {
  Address tracker;
  int rank = 0;             // or kAnyRank: the tracker gives this process a rank nobody claimed
  int world_size = 1;
  std::string job = "-";    // the job id this rank belongs to, "-" for whichever the tracker runs
  std::string secret;       // empty: none
  double timeout = 120;     // seconds to reach the tracker and for every rank to arrive
  double heartbeat_timeout = 30;
};

// Called from the watcher thread when the job must end: another rank was lost or failed, the
// rendezvous timed out, or the tracker went silent. It must end the process (MPI may hold the
// main thread in a collective that will never complete) and never returns.
using AbortHandler = std::function<void(AbortKind kind, const std::string& message)>;

// A rank's control link to the tracker: admission, the wait for every rank, and liveness in
// both directions for the rest of the job.
class TrackerLink {
 public:
  // Connects, authenticates, and waits until every rank has arrived. Throws RendezvousError
  // (tracker unreachable, or not all ranks arrived), RefusedError (the tracker said no) or
  // PeerError (the tracker ended the job or went away meanwhile).
  explicit TrackerLink(const TrackerLinkOptions& options);
  // Stops the watcher. Does not tell the tracker anything: call Done or Fail first.
  ~TrackerLink();

  // The job id the tracker assigned.
  uint32_t job_id() const { return job_id_; }
  // This process's rank: the one it claimed, or the one the tracker gave it.
  int rank() const { return rank_; }
  // The local IPv4 address of the connection to the tracker: on the interface that reaches it.
  std::string local_address() const { return LocalAddress(channel_.fd()); }

  // Starts the watcher thread, which answers pings and calls `on_abort` when the job ends
  // under this rank.
  void Watch(AbortHandler on_abort);

  // Tells the tracker this rank finished its work; after this, a lost peer no longer matters
  // to this rank. Stops the watcher.
  void Done();
  // Tells the tracker this rank failed, with the message every other rank will print. Best
  // effort: the tracker learns of the loss anyway when the process exits.
  void Fail(const std::string& message);
  // Until Connected(): when `deadline` passes, the watcher tells the tracker this rank failed
  // with `message` and calls on_abort(kTimeout, message). For the start of MPI, which has no
  // timeout of its own: ranks that cannot reach each other would wait in it forever.
  void Expect(SteadyTime deadline, const std::string& message);
  void Connected();
  // Sends one epoch's metrics (a JSON object, as `--metrics` writes it, with `epochs`) for the
  // tracker to log. Best effort; may be called from any thread.
  void ReportEpoch(const std::string& json);
  // Sends rank 0's checkpoint after `epoch` (a model file's bytes) for the tracker to keep
  // (`serve --checkpoint FILE`): its model records (formats/records.h), each on a
  // `checkpoint-record` line, then `checkpoint EPOCH`. Pings go on between the lines. Returns
  // false when a line could not be written within `line_seconds`; the job goes on.
  bool SendCheckpoint(int epoch, const std::string& model_bytes, double line_seconds = 30);
  // The same from a thread of its own, so that training goes on while the bytes travel: the
  // checkpoint replaces one still waiting to be sent. Epoch reports made meanwhile wait behind
  // it, so that the tracker logs an epoch after it has that epoch's checkpoint. Done, Fail and
  // the destructor stop the thread; what it has not sent by then is dropped (the job is over).
  void SendCheckpointLater(int epoch, std::string model_bytes);
  // Sends rank 0's trained model (a model file's bytes) for the tracker to keep (`serve --output
  // FILE`): its model records, each on a `model-record` line, then `model`. It goes after the
  // epoch reports still waiting to be sent; a checkpoint still waiting is dropped, the model
  // supersedes it. Blocks until sent; returns false when a line could not be written within
  // `line_seconds` or the link was stopped. Call it before Done.
  bool SendModel(const std::string& model_bytes, double line_seconds = 30);

 private:
  void StopWatching();
  void StopSending();
  void SendLoop();
  // The message of an Expect whose deadline `now` passed (once), if any.
  std::optional<std::string> MissedExpectation(SteadyTime now);
  bool Say(const std::string& line);
  // A model's records, each on a `VERB-record` line (no end line).
  bool SendRecords(const char* verb, const std::string& model_bytes, double line_seconds);

  TrackerLinkOptions options_;
  LineChannel channel_;
  uint32_t job_id_ = 0;
  int rank_ = 0;
  std::mutex write_mutex_;
  std::atomic<bool> stop_{false};
  std::mutex expect_mutex_;
  std::optional<SteadyTime> expect_deadline_;  // set by Expect, cleared by Connected
  std::string expect_message_;
  std::thread watcher_;
  // SendCheckpointLater's thread and what it is to send, in order: checkpoints (epoch, bytes)
  // and epoch report lines (epoch -1).
  std::mutex send_mutex_;
  std::condition_variable send_wake_;
  std::condition_variable send_idle_;  // the sender thread took what was pending and sent it
  std::deque<std::pair<int, std::string>> pending_;
  bool sending_ = false;  // the sender thread is sending an item it took (under send_mutex_)
  std::atomic<bool> stop_sending_{false};
  std::thread sender_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_TRACKER_LINK_H_
