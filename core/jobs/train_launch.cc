#include "core/jobs/train_launch.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/data/input_files.h"
#include "core/data/rank_prefix.h"
#include "core/device.h"
#include "core/world/world.h"
#include "core/files.h"
#include "core/jobs/row_plan.h"
#include "core/jobs/train_run.h"
#include "core/net/socket.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// The directory of this executable, or "." when /proc/self/exe cannot be read.
std::string ExecutableDir() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return ".";
  const std::string path(exe, n);
  return path.substr(0, path.rfind('/'));
}

// libsparktorch_pmi.so: beside the binary (a build tree, the bundle), else in the installed
// lib/sparktorch. Returns the first place it might be when it is in neither.
std::string PmiLibraryPath(const std::string& dir) {
  const std::string beside = dir + "/libsparktorch_pmi.so";
  const std::string installed = dir + "/../lib/sparktorch/libsparktorch_pmi.so";
  return access(beside.c_str(), R_OK) != 0 && access(installed.c_str(), R_OK) == 0 ? installed : beside;
}

// In the bundle (examples/make_bundle.sh) Open MPI's plugins and help texts are in openmpi/
// beside the binary and hwloc's plugins in lib/hwloc/, not where libmpi and libhwloc were built
// to look: OPAL_PREFIX and HWLOC_PLUGINS_PATH point them there, and OPAL_SYSCONFDIR at the
// Open MPI defaults the bundle carries (Debian's sysconfdir, /etc/openmpi, is outside the prefix:
// OPAL_PREFIX alone would leave it on the executor's). When the user set OPAL_PREFIX, all three
// stay as they are. Must run before MPI_Init.
void UseBundledOpenMpi(const std::string& dir) {
  const std::string prefix = dir + "/openmpi";
  if (std::getenv("OPAL_PREFIX") != nullptr || access(prefix.c_str(), X_OK) != 0) return;
  setenv("OPAL_PREFIX", prefix.c_str(), 1);
  setenv("OPAL_SYSCONFDIR", (prefix + "/etc").c_str(), 0);
  setenv("HWLOC_PLUGINS_PATH", (dir + "/lib/hwloc").c_str(), 0);
}

void FlushOut(std::FILE* out) {
  if (std::fflush(out) != 0) throw Error("stdout: write failed");
}

// --rank-from-stdin: checks the flags that go with it, then reads the rank before anything else
// reads stdin. Returns the rank, or nullopt when stdin has no rows at all (the process then
// takes a rank nobody claimed).
std::optional<int> ReadRankFromStdin(TrainLaunch& l, const TrainJobOptions& job) {
  if (l.rank >= 0) {
    throw UsageError("--rank-from-stdin and --rank both give this process's rank; give one of them");
  }
  if (l.tracker.empty() && l.server.empty()) {
    throw UsageError("--rank-from-stdin goes with --tracker HOST:PORT (sync) or --server HOST:PORT (hogwild)");
  }
  if (l.world_size <= 0) throw UsageError("--rank-from-stdin needs --world-size N");
  // With --input files, stdin carries the rank alone (Spark's tasks that read Parquet files
  // themselves), and the rank picks this process's share of the files' rows.
  if (std::find(job.rows.inputs.begin(), job.rows.inputs.end(), kStdinName) != job.rows.inputs.end()) {
    throw UsageError("--rank-from-stdin reads the rank before the rows on stdin; not with --input -");
  }
  return ReadRankPrefix(STDIN_FILENO, l.world_size, "stdin", &l.task_gpus);
}

// A hogwild worker: one process of its own, training with the parameter server at --server.
void RunHogwildWorker(const TrainJobOptions& job, TrainRun run, const TrainLaunch& l, bool any_rank,
                      std::FILE* out) {
  if (l.server.empty()) throw UsageError("--mode hogwild needs --server HOST:PORT (of `sparktorch serve --mode hogwild`)");
  if (!l.tracker.empty()) throw UsageError("--tracker is for --mode sync; hogwild workers use --server");
  if ((l.rank < 0 && !any_rank) || l.world_size <= 0) {
    throw UsageError("--mode hogwild needs --rank (this worker, 0..N-1) and --world-size N");
  }
  if (l.rank >= l.world_size) {
    throw UsageError("--rank " + std::to_string(l.rank) + " must be below --world-size " +
                     std::to_string(l.world_size));
  }
  PsClientOptions c;
  c.server = ParseAddress(l.server, "--server");
  c.secret = EnvOr("SPARKTORCH_SECRET", "");
  c.job = EnvOr("SPARKTORCH_JOB_ID", "-");
  c.worker = any_rank ? -1 : l.rank;
  c.world_size = l.world_size;
  c.timeout = l.timeout;
  run.hogwild = c;
  if (!job.rows.inputs.empty()) {  // workers given the same files take a share each
    run.reader.share_rank = l.rank;
    run.reader.share_world = l.world_size;
  }
  run.mode = "hogwild";
  run.launcher = "serve";
  auto tag_lines = [](const std::string& worker) {
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e sparktorch[worker " + worker + "] %l: %v");
  };
  // A worker without rows learns its id from the server.
  tag_lines(any_rank ? std::string("any") : std::to_string(l.rank));
  run.on_worker_id = [tag_lines](int worker) { tag_lines(std::to_string(worker)); };
  LocalCommunicator local;
  RunTrainJob(job, run, local, out);
  FlushOut(out);
}

// The world flags that do not fit together, refused before any peer is touched.
void CheckRankFlags(const TrainLaunch& l, const WorldOptions& w) {
  const bool tracker = w.tracker.has_value();
  if (!tracker && (l.rank >= 0 || w.any_rank || l.world_size > 0)) {
    throw UsageError("--rank and --world-size go with --tracker HOST:PORT (sync) or --server HOST:PORT (hogwild)");
  }
  if (tracker) {
    if ((l.rank < 0 && !w.any_rank) || l.world_size < 1) {
      throw UsageError("--tracker needs --rank R and --world-size N");
    }
    if (l.rank >= l.world_size) {
      throw UsageError("--rank " + std::to_string(l.rank) + " is out of range for --world-size " +
                       std::to_string(l.world_size));
    }
    if (l.mode == LaunchMode::kLocal) throw UsageError("--tracker trains with --mode sync, not local");
    if (w.under_mpirun) throw UsageError("--tracker is for processes that mpirun did not start");
    if (!FileExists(w.pmi_library)) {
      throw UsageError("--tracker needs libsparktorch_pmi.so beside the binary; not found at " +
                       w.pmi_library);
    }
  }
  if (l.mode == LaunchMode::kSync && !tracker && !w.under_mpirun) {
    throw UsageError("--mode sync needs ranks: run under mpirun, or give --tracker HOST:PORT "
                     "--rank R --world-size N");
  }
}

// One rank of a synchronous world (or a world of one): joins it, trains, and finishes it; a
// failure is passed on to every other rank before it is thrown.
void RunRank(const TrainJobOptions& job, TrainRun run, const TrainLaunch& l, bool any_rank,
             std::FILE* out) {
  if (!l.server.empty()) throw UsageError("--server is for --mode hogwild");
  if (job.model.model_path.empty()) throw UsageError("--model is required");
  WorldOptions w;
  w.mode = l.mode == LaunchMode::kSync    ? WorldMode::kSync
           : l.mode == LaunchMode::kLocal ? WorldMode::kLocal
                                          : WorldMode::kAuto;
  w.under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  if (!l.tracker.empty()) w.tracker = ParseAddress(l.tracker, "--tracker");
  w.rank = l.rank;
  w.any_rank = any_rank;
  w.world_size = l.world_size;
  w.job = EnvOr("SPARKTORCH_JOB_ID", "-");
  w.secret = EnvOr("SPARKTORCH_SECRET", "");
  w.timeout = l.timeout;
  const std::string exe_dir = ExecutableDir();
  w.pmi_library = PmiLibraryPath(exe_dir);
  UseBundledOpenMpi(exe_dir);
  w.on_abort = [on_abort = l.on_abort](AbortKind kind, const std::string& message) {
    on_abort(kind == AbortKind::kFailed    ? FailureKind::kPeerFailed
             : kind == AbortKind::kTimeout ? FailureKind::kRendezvous
                                           : FailureKind::kPeerLost,
             message);
  };
  CheckRankFlags(l, w);
  std::unique_ptr<World> world = World::Join(w);
  const int rank = world->comm().rank();
  if (world->comm().world_size() > 1) {
    // Ranks share one stderr under mpirun and one log directory under Spark: say whose line it is.
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e sparktorch[rank " + std::to_string(rank) + "] %l: %v");
  }
  run.mode = world->sync() ? "sync" : "local";
  run.launcher = world->launcher();
  run.report_epoch = [&world](const std::string& json) { world->ReportEpoch(json); };
  if (!l.tracker.empty()) {
    run.send_checkpoint = [&world](int epoch, std::string model) {
      return world->SendCheckpoint(epoch, std::move(model));
    };
    if (job.send_model) {
      run.send_model = [&world](const std::string& model) { world->SendModel(model); };
    }
  }
  try {
    RunTrainJob(job, run, world->comm(), out);
    FlushOut(out);
    world->Finish();
  } catch (...) {
    // Every other rank ends with this rank's message instead of waiting for it.
    world->Fail(l.failure_message());
    throw;
  }
}

}  // namespace

bool IsHogwildWorker(const TrainLaunch& l) {
  return l.mode == LaunchMode::kHogwild || (l.mode == LaunchMode::kAuto && !l.server.empty());
}

void RunTrain(TrainJobOptions job, TrainLaunch launch, std::FILE* out) {
  if (job.check_resume) {
    if (job.resume_path.empty()) throw UsageError("--check-resume needs --resume FILE");
    TrainRun probe;
    ApplyResume(&job, &probe);
    std::fprintf(out, "%d\n", probe.resumed_after);
    FlushOut(out);
    return;
  }
  TrainRun run;
  run.reader = ReaderOptions(job.rows);
  run.input_shape = ParseShape(job.model.input_shape, "--input-shape");
  bool any_rank = false;  // --rank-from-stdin found no rows: take a rank nobody claimed
  if (launch.rank_from_stdin) {
    const std::optional<int> rank = ReadRankFromStdin(launch, job);
    if (rank) {
      launch.rank = *rank;
    } else if (!job.rows.inputs.empty()) {
      // A process that reads files takes the share its rank picks: without one it has none.
      throw InputError("stdin: expected the rank (digits and a tab) before the end of input "
                       "(--rank-from-stdin with --input files), got nothing");
    } else {
      any_rank = true;
    }
  }
  if (job.batch_size == 0 || job.batch_size < -1) {
    throw UsageError("--batch-size must be a positive number of rows, or -1 for the whole partition");
  }
  if (job.steps_per_epoch < 0) {
    throw UsageError("--steps-per-epoch must be a number of steps, or 0 for a pass over the rows");
  }
  job.device = TaskDevice(job.device, launch.task_gpus);
  ConfigureCpu(launch.threads > 0 ? launch.threads : DefaultThreads());
  if (IsHogwildWorker(launch)) {
    if (!job.resume_path.empty()) {
      throw UsageError("--resume: a hogwild worker trains the parameter server's model; the server "
                       "keeps it across a lost worker");
    }
    return RunHogwildWorker(job, std::move(run), launch, any_rank, out);
  }
  if (!job.resume_path.empty()) {
    ApplyResume(&job, &run);
  } else if (job.checkpoint_every > 0) {
    run.job_key = TrainJobKey(job);
  }
  RunRank(job, std::move(run), launch, any_rank, out);
}

}  // namespace sparktorch
