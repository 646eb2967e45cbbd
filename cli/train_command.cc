#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/row_format_flags.h"
#include "core/device.h"
#include "cli/exit_codes.h"
#include "cli/failure.h"
#include "core/data/rank_prefix.h"
#include "core/dist/world.h"
#include "core/jobs/train_job.h"
#include "core/net/socket.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

struct TrainFlags {
  TrainJobOptions job;
  RowFormatFlags rows;
  ModelFlags model;
  std::string prediction;
  int threads = 0;
  CLI::Option *prediction_opt, *threads_opt, *patience_opt;
  bool no_shuffle = false;
  std::string mode = "auto";
  std::string tracker;
  std::string server;
  int rank = -1;
  int world_size = 0;
  bool rank_from_stdin = false;
  bool any_rank = false;  // --rank-from-stdin found no rows: take a rank nobody claimed
  CLI::Option* rank_opt;
  double timeout = 120;
};

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

// Ends the process when the tracker ends the job under this rank. Runs on the watcher thread
// while the main thread may be inside an MPI collective that will never return, so it cannot
// unwind: it says why and exits at once.
[[noreturn]] void AbortRank(AbortKind kind, const std::string& message) {
  std::fprintf(stderr, "sparktorch: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(ExitCodeForAbort(AbortKindName(kind)));
}

// A hogwild worker: one process of its own, training with the parameter server at --server.
void RunHogwild(TrainFlags& f, TrainJobOptions& job) {
  if (f.server.empty()) throw UsageError("--mode hogwild needs --server HOST:PORT (of `sparktorch serve --mode hogwild`)");
  if (!f.tracker.empty()) throw UsageError("--tracker is for --mode sync; hogwild workers use --server");
  // The server decides these for every worker; a worker's own would be silently different.
  const ModelFlags& m = f.model;
  for (CLI::Option* o : {m.model_opt, m.train_config_opt, m.loss_opt, m.optimizer_opt, m.lr_opt,
                         f.patience_opt, m.output_opt}) {
    if (o->count()) {
      throw UsageError(o->get_name() + ": a hogwild worker takes the model and its training from "
                       "the parameter server, which also writes the model; give " + o->get_name() +
                       " to `sparktorch serve`");
    }
  }
  if ((f.rank < 0 && !f.any_rank) || f.world_size <= 0) {
    throw UsageError("--mode hogwild needs --rank (this worker, 0..N-1) and --world-size N");
  }
  if (f.rank >= f.world_size) {
    throw UsageError("--rank " + std::to_string(f.rank) + " must be below --world-size " +
                     std::to_string(f.world_size));
  }
  PsClientOptions c;
  c.server = ParseAddress(f.server, "--server");
  c.secret = EnvOr("SPARKTORCH_SECRET", "");
  c.job = EnvOr("SPARKTORCH_JOB_ID", "-");
  c.worker = f.any_rank ? -1 : f.rank;
  c.world_size = f.world_size;
  c.timeout = f.timeout;
  job.hogwild = c;
  job.mode = "hogwild";
  job.launcher = "serve";
  auto tag_lines = [](const std::string& worker) {
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e sparktorch[worker " + worker + "] %l: %v");
  };
  // A worker without rows learns its id from the server.
  tag_lines(f.any_rank ? std::string("any") : std::to_string(f.rank));
  job.on_worker_id = [tag_lines](int worker) { tag_lines(std::to_string(worker)); };
  LocalCommunicator local;
  RunTrainJob(job, local, stdout);
  if (std::fflush(stdout) != 0) throw Error("stdout: write failed");
}

// --rank-from-stdin: checks the flags that go with it, then reads the rank before anything else
// reads stdin. Sets f.rank, or f.any_rank when stdin has no rows at all.
void ReadRankFromStdin(TrainFlags& f) {
  if (!f.rank_from_stdin) return;
  if (f.rank_opt->count()) {
    throw UsageError("--rank-from-stdin and --rank both give this process's rank; give one of them");
  }
  if (f.tracker.empty() && f.server.empty()) {
    throw UsageError("--rank-from-stdin goes with --tracker HOST:PORT (sync) or --server HOST:PORT (hogwild)");
  }
  if (f.world_size <= 0) throw UsageError("--rank-from-stdin needs --world-size N");
  if (!f.rows.inputs.empty()) {
    throw UsageError("--rank-from-stdin reads the rank before the rows on stdin; not with --input");
  }
  std::optional<int> rank = ReadRankPrefix(STDIN_FILENO, f.world_size);
  if (rank) {
    f.rank = *rank;
  } else {
    f.any_rank = true;
  }
}

void Run(TrainFlags& f) {
  ReadRankFromStdin(f);
  TrainJobOptions job = f.job;
  job.inputs = f.rows.inputs;
  job.rows.format = ApplyOverrides(RowFormat(), ToOverrides(f.rows));
  job.rows.on_bad_row = ToBadRowPolicy(f.rows);
  job.rows.max_line_bytes = f.rows.max_line_bytes;
  job.model = ToModelSource(f.model, ParseShape(f.rows.input_shape, "--input-shape"));
  job.train.seed = f.model.seed;
  job.output_path = f.model.output_path;
  if (f.prediction_opt->count()) job.prediction = ParsePredictionKind(f.prediction);
  job.train.shuffle = !f.no_shuffle;
  if (job.train.batch_size == 0 || job.train.batch_size < -1) {
    throw UsageError("--batch-size must be a positive number of rows, or -1 for the whole partition");
  }
  ConfigureCpu(f.threads_opt->count() ? f.threads : DefaultThreads());
  if (f.mode == "hogwild" || (f.mode == "auto" && !f.server.empty())) return RunHogwild(f, job);
  if (!f.server.empty()) throw UsageError("--server is for --mode hogwild");
  if (!f.model.model_opt->count()) throw UsageError("--model is required");

  WorldOptions w;
  w.mode = f.mode == "sync" ? TrainMode::kSync : f.mode == "local" ? TrainMode::kLocal : TrainMode::kAuto;
  w.under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  if (!f.tracker.empty()) w.tracker = ParseAddress(f.tracker, "--tracker");
  w.rank = f.rank;
  w.any_rank = f.any_rank;
  w.world_size = f.world_size;
  w.job = EnvOr("SPARKTORCH_JOB_ID", "-");
  w.secret = EnvOr("SPARKTORCH_SECRET", "");
  w.timeout = f.timeout;
  const std::string exe_dir = ExecutableDir();
  w.pmi_library = PmiLibraryPath(exe_dir);
  UseBundledOpenMpi(exe_dir);
  w.on_abort = AbortRank;
  std::unique_ptr<World> world = World::Join(w);
  const int rank = world->comm().rank();
  if (world->comm().world_size() > 1) {
    // Ranks share one stderr under mpirun and one log directory under Spark: say whose line it is.
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e sparktorch[rank " + std::to_string(rank) + "] %l: %v");
  }
  job.mode = world->sync() ? "sync" : "local";
  job.launcher = world->launcher();
  job.report_epoch = [&world](const std::string& json) { world->ReportEpoch(json); };
  try {
    RunTrainJob(job, world->comm(), stdout);
    if (std::fflush(stdout) != 0) throw Error("stdout: write failed");
    world->Finish();
  } catch (...) {
    // Every other rank ends with this rank's message instead of waiting for it.
    world->Fail(CurrentFailure().message);
    throw;
  }
}

}  // namespace

void SetupTrainCommand(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  TrainFlags& f = *flags;
  CLI::App* c = app.add_subcommand(
      "train", "Train a model on rows from stdin or files; write the model and records to stdout");
  AddModelFlags(c, &f.model,
                {nullptr,
                 "Model: a JSON spec (.json), a TorchScript model or a trained model (.pt); "
                 "required, except in hogwild mode",
                 "Seed for weights, dropout and shuffling (default 0)",
                 "Write the model to this file instead of model records on stdout", "Training",
                 "Output"});
  AddRowFormatFlags(c, &f.rows);

  c->add_option("--epochs,-e", f.job.train.epochs, "Passes over the rows (default 10)")
      ->check(CLI::PositiveNumber)
      ->group("Training");
  c->add_option("--batch-size,-b", f.job.train.batch_size,
                "Rows per step; -1 for the whole partition (default 64)")
      ->group("Training");
  c->add_option("--validation-pct", f.job.validation_fraction,
                "Fraction of rows held out for validation, in [0, 1) (default 0)")
      ->group("Training");
  f.patience_opt = c->add_option("--early-stop-patience", f.job.train.early_stop_patience,
                "Stop after this many epochs without a better (validation) loss; 0: never")
      ->check(CLI::NonNegativeNumber)
      ->group("Training");
  c->add_flag("--no-shuffle", f.no_shuffle, "Keep the rows in input order every epoch")
      ->group("Training");
  c->add_option("--partition-shuffles", f.job.train.partition_shuffles,
                "Rounds of --epochs passes, each from a fresh shuffle of the rows (SparkTorch's "
                "partitionShuffles; default 1)")
      ->check(CLI::PositiveNumber)
      ->group("Training");
  f.threads_opt = c->add_option("--threads,-t", f.threads,
                                "CPU threads (default: OMP_NUM_THREADS, else 1)")
                      ->check(CLI::PositiveNumber)
                      ->group("Training");
  c->add_option("--device", f.job.device, "cpu, cuda or cuda:N (default cpu)")->group("Training");

  c->add_option("--mode", f.mode,
                "local (one process), sync (ranks all-reduce gradients every step), hogwild "
                "(workers pull from and push to a parameter server), or auto (default: sync "
                "under mpirun or with --tracker, hogwild with --server, else local)")
      ->check(CLI::IsMember({"auto", "local", "sync", "hogwild"}))
      ->group("Distributed");
  c->add_option("--tracker", f.tracker,
                "HOST:PORT of `sparktorch serve`, for ranks that mpirun did not start (Spark tasks)")
      ->group("Distributed");
  c->add_option("--server", f.server,
                "HOST:PORT of `sparktorch serve --mode hogwild`, for hogwild workers")
      ->group("Distributed");
  f.rank_opt = c->add_option("--rank", f.rank,
                             "This process's rank or worker id, 0..N-1 (with --tracker or --server)")
                   ->check(CLI::NonNegativeNumber)
                   ->group("Distributed");
  c->add_flag("--rank-from-stdin", f.rank_from_stdin,
              "Instead of --rank: read the rank from stdin, the digits and a tab before the first "
              "row (as Spark tasks write it); with no rows at all, take a rank nobody claimed")
      ->group("Distributed");
  c->add_option("--world-size", f.world_size, "Number of ranks or workers N (with --tracker or --server)")
      ->check(CLI::PositiveNumber)
      ->group("Distributed");
  c->add_option("--timeout", f.timeout,
                "Seconds to reach the tracker and for every rank to arrive; for a hogwild worker, to "
                "reach the server and for each of its answers (default 120)")
      ->check(CLI::PositiveNumber)
      ->group("Distributed");

  c->add_flag("--predict", f.job.predict, "Write a prediction record for every input row")
      ->group("Output");
  f.prediction_opt = c->add_option("--prediction", f.prediction,
                                   "argmax, vector or probabilities (default: by loss)")
                         ->check(CLI::IsMember({"argmax", "vector", "probabilities"}))
                         ->group("Output");
  c->add_option("--metrics", f.job.metrics_path, "Write per-epoch metrics as JSON lines to this file")
      ->group("Output");
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
