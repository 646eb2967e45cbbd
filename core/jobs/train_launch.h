#ifndef SPARKTORCH_CORE_JOBS_TRAIN_LAUNCH_H_
#define SPARKTORCH_CORE_JOBS_TRAIN_LAUNCH_H_

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/jobs/failure.h"
#include "core/jobs/train_job.h"

namespace sparktorch {

// --mode: kLocal one process; kSync ranks that all-reduce every step; kHogwild a worker of a
// parameter server; kAuto sync under mpirun or with a tracker, hogwild with a server, else local.
enum class LaunchMode { kAuto, kLocal, kSync, kHogwild };
inline constexpr Named<LaunchMode> kLaunchModeNames[] = {{LaunchMode::kAuto, "auto"},
                                                          {LaunchMode::kLocal, "local"},
                                                          {LaunchMode::kSync, "sync"},
                                                          {LaunchMode::kHogwild, "hogwild"}};

// How one `sparktorch train` process takes part in a job, as its Distributed flags say (the
// man page gives each field's meaning). The environment's SPARKTORCH_SECRET and
// SPARKTORCH_JOB_ID are read here.
struct TrainLaunch {
  LaunchMode mode = LaunchMode::kAuto;
  std::string tracker;        // HOST:PORT of the tracker (sync ranks that mpirun did not start)
  std::string server;         // HOST:PORT of the parameter server (hogwild)
  int rank = -1;
  int world_size = 0;
  bool rank_from_stdin = false;  // the rank is the digits and a tab before the first row
  // The GPUs Spark gave this task (--task-gpus, or the rank prefix's "gpu=" part): "cuda" and
  // "auto" become the first (TaskDevice).
  std::vector<std::string> task_gpus;
  double timeout = 120;
  int threads = 0;  // CPU threads; 0: DefaultThreads()
  // Ends the process when the tracker ends the job under this rank, with the failure it is
  // (kPeerLost, kPeerFailed, or kRendezvous for a timeout) and the message. Runs on a watcher
  // thread while the main thread may be inside an MPI collective that never returns: it must
  // not return.
  std::function<void(FailureKind kind, const std::string& message)> on_abort;
  // Called inside a catch block when this rank fails: the one-line message the process ends
  // with, which the tracker passes to every other rank.
  std::function<std::string()> failure_message;
};

// Whether `launch` makes this process a hogwild worker (--mode hogwild, or auto with --server).
bool IsHogwildWorker(const TrainLaunch& launch);

// Runs `sparktorch train` (`job`) as `launch` says: reads the rank from stdin when asked, sets the
// CPU threads, then trains alone (local), as one rank of a synchronous world (mpirun's, or the
// tracker's: Open MPI from the bundle, libsparktorch_pmi.so found beside the binary), or as a
// hogwild worker of the parameter server; log lines say which rank or worker wrote them. The
// records go to `out`, flushed. Throws UsageError for flags that do not fit together, and the
// errors of RunTrainJob; a failing rank tells the tracker first, so the others end with its
// message.
void RunTrain(TrainJobOptions job, TrainLaunch launch, std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_TRAIN_LAUNCH_H_
