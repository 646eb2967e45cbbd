#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/failure.h"
#include "cli/model_flags.h"
#include "cli/row_format_flags.h"
#include "core/jobs/train_launch.h"

namespace sparktorch {
namespace {

struct TrainFlags {
  TrainJobOptions job;
  TrainLaunch launch;
  RowFormatFlags rows;
  ModelFlags model;
  std::string row_memory;
  CLI::Option *patience_opt, *row_memory_opt, *send_model_opt;
  bool no_shuffle = false;
};

// "512M", "2G", "1.5G", "4096": bytes, with K, M, G or T (powers of 1024, "KiB" and "KB" too).
size_t ParseByteSize(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (!unit.empty() && (unit.back() == 'i')) unit.pop_back();
  double scale = 0;
  if (unit.empty()) scale = 1;
  if (unit == "K" || unit == "k") scale = 1024.0;
  if (unit == "M" || unit == "m") scale = 1024.0 * 1024;
  if (unit == "G" || unit == "g") scale = 1024.0 * 1024 * 1024;
  if (unit == "T" || unit == "t") scale = 1024.0 * 1024 * 1024 * 1024;
  if (end == text.c_str() || scale == 0 || !(value >= 0) || value * scale > 1e18) {
    throw FlagError("--row-memory: '" + text + "' is not a size (bytes, or a number with K, M, G "
                    "or T, such as 512M or 2G)");
  }
  return static_cast<size_t>(value * scale);
}

// Ends the process when the tracker ends the job under this rank. Runs on the watcher thread
// while the main thread may be inside an MPI collective that will never return, so it cannot
// unwind: it says why and exits at once.
[[noreturn]] void AbortRank(FailureKind kind, const std::string& message) {
  std::fprintf(stderr, "sparktorch: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(ExitCode(kind));
}

// A hogwild worker takes these from the server, which decides them for every worker; a
// worker's own would be silently different.
void RefuseServerFlags(const TrainFlags& f) {
  const ModelFlags& m = f.model;
  for (CLI::Option* o : {m.model_opt, m.train_config_opt, m.loss_opt, m.optimizer_opt, m.lr_opt,
                         m.lr_schedule_opt, f.patience_opt, m.output_opt,
                         f.send_model_opt}) {
    if (o->count()) {
      throw FlagError(o->get_name() + ": a hogwild worker takes the model and its training from "
                       "the parameter server, which also writes the model; give " + o->get_name() +
                       " to `sparktorch serve`");
    }
  }
}

void Run(TrainFlags& f) {
  TrainJobOptions job = f.job;
  job.rows = ToRowOptions(f.rows);
  job.model = ToModelSource(f.model, f.rows.input_shape);
  job.seed = f.model.seed;
  job.output_path = f.model.output_path;
  job.shuffle = !f.no_shuffle;
  if (f.row_memory_opt->count()) job.row_memory = ParseByteSize(f.row_memory);
  TrainLaunch launch = f.launch;
  if (IsHogwildWorker(launch) && !launch.server.empty()) RefuseServerFlags(f);
  launch.on_abort = AbortRank;
  launch.failure_message = [] { return CurrentFailure().message; };
  RunTrain(job, launch, stdout);
}

}  // namespace

void SetupTrainCommand(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  TrainFlags& f = *flags;
  CLI::App* c = app.add_subcommand(
      "train", "Train a model on rows from stdin or files; write the model and records to stdout");
  const std::string seed_help =
      "Seed for weights, dropout and shuffling (" + DefaultIs(f.model.seed) + ")";
  AddModelFlags(c, &f.model,
                {nullptr,
                 "Model: a JSON spec (.json), a TorchScript model or a trained model (.pt); "
                 "required, except in hogwild mode",
                 seed_help.c_str(),
                 "Write the model to this file instead of model records on stdout", "Training",
                 "Output"});
  AddRowFormatFlags(c, &f.rows);

  c->add_option("--epochs,-e", f.job.epochs,
                "Passes over the rows (" + DefaultIs(f.job.epochs) + ")")
      ->check(CLI::PositiveNumber)
      ->group("Training");
  c->add_option("--batch-size,-b", f.job.batch_size,
                "Rows per step; -1 for the whole partition (" + DefaultIs(f.job.batch_size) + ")")
      ->group("Training");
  c->add_option("--steps-per-epoch", f.job.steps_per_epoch,
                "Steps an epoch, each of --batch-size rows, drawn on from shuffled passes over the "
                "rows; 0: one pass (" + DefaultIs(f.job.steps_per_epoch) + ")")
      ->group("Training");
  c->add_option("--validation-pct", f.job.validation_fraction,
                "Fraction of rows held out for validation, in [0, 1) (" +
                    DefaultIs(f.job.validation_fraction) + ")")
      ->group("Training");
  f.patience_opt = c->add_option("--early-stop-patience", f.job.early_stop_patience,
                "Stop after this many epochs without a better (validation) loss; 0: never")
      ->check(CLI::NonNegativeNumber)
      ->group("Training");
  c->add_option("--clip-grad-norm", f.job.clip_grad_norm,
                "Clip the gradient's L2 norm to this before each step "
                "(torch.nn.utils.clip_grad_norm_); 0: off")
      ->check(CLI::NonNegativeNumber)
      ->group("Training");
  c->add_option("--clip-grad-value", f.job.clip_grad_value,
                "Clip each gradient element to [-this, this] before each step "
                "(torch.nn.utils.clip_grad_value_); 0: off")
      ->check(CLI::NonNegativeNumber)
      ->group("Training");
  AddEnumOption(c, "--lr-scaling", &f.job.lr_scaling, kLrScalingNames,
                "The lr for N synchronous ranks: none (as given), linear (times N) or sqrt (times "
                "the square root of N); " + DefaultIs(NameIn(kLrScalingNames, f.job.lr_scaling)))
      ->group("Training");
  AddEnumOption(c, "--allreduce-dtype", &f.job.allreduce_dtype, kAllreduceDtypeNames,
                "How synchronous ranks send their gradients: fp32, or bf16 or fp16 (half the "
                "bytes, summed in float32); " +
                    DefaultIs(NameIn(kAllreduceDtypeNames, f.job.allreduce_dtype)))
      ->group("Training");
  c->add_flag("--allreduce-overlap", f.job.allreduce_overlap,
              "Synchronous ranks sum their gradients in buckets that start while the backward "
              "pass runs (on the CPU)")
      ->group("Training");
  c->add_option("--checkpoint-every", f.job.checkpoint_every,
                "Every N epochs, write the model with its optimizer state to --output, and under "
                "--tracker send it to the tracker (serve --checkpoint), for a restart with "
                "--resume; 0: only at the end")
      ->check(CLI::NonNegativeNumber)
      ->group("Training");
  c->add_option("--resume", f.job.resume_path,
                "Continue from this checkpoint of the same job (--checkpoint-every's file, or "
                "serve --checkpoint's) when it exists: its weights, optimizer, schedule and "
                "epochs; --epochs stays the job's total. Without the file, start from --model")
      ->group("Training");
  c->add_flag("--check-resume", f.job.check_resume,
              "Only check --resume's file against this job's model and settings: print the "
              "epoch the job would resume after (0: none yet) and exit; a checkpoint of another "
              "job or a corrupt one fails as the job would")
      ->group("Training");
  c->add_flag("--fresh-optimizer", f.job.fresh_optimizer,
              "With a trained --model: start the optimizer, the epoch count and the schedule "
              "afresh instead of resuming them")
      ->group("Training");
  c->add_flag("--no-shuffle", f.no_shuffle, "Keep the rows in input order every epoch")
      ->group("Training");
  c->add_option("--partition-shuffles", f.job.partition_shuffles,
                "Rounds of --epochs passes, each from a fresh shuffle of the rows (SparkTorch's "
                "partitionShuffles; " + DefaultIs(f.job.partition_shuffles) + ")")
      ->check(CLI::PositiveNumber)
      ->group("Training");
  c->add_option("--threads,-t", f.launch.threads, "CPU threads (default: OMP_NUM_THREADS, else 1)")
      ->check(CLI::PositiveNumber)
      ->group("Training");
  c->add_option("--device", f.job.device,
                "cpu, cuda, cuda:N or auto (cuda where there is one, else cpu; default cpu)")
      ->group("Training");
  f.row_memory_opt =
      c->add_option("--row-memory", f.row_memory,
                    "Memory a rank's rows may take before they go to a spill file, e.g. 512M or 2G; "
                    "0: all of them (default 128M, or an eighth of the cgroup's memory limit)")
          ->group("Rows");
  c->add_option("--spill-dir", f.job.spill_dir,
                "Directory of the spill file (default: the Spark executor's first local directory, "
                "else TMPDIR, else /tmp)")
      ->group("Rows");

  AddEnumOption(c, "--mode", &f.launch.mode, kLaunchModeNames,
                "local (one process), sync (ranks all-reduce gradients every step), hogwild "
                "(workers pull from and push to a parameter server), or auto (default: sync "
                "under mpirun or with --tracker, hogwild with --server, else local)")
      ->group("Distributed");
  c->add_option("--tracker", f.launch.tracker,
                "HOST:PORT of `sparktorch serve`, for ranks that mpirun did not start (Spark tasks)")
      ->group("Distributed");
  c->add_option("--server", f.launch.server,
                "HOST:PORT of `sparktorch serve --mode hogwild`, for hogwild workers")
      ->group("Distributed");
  c->add_option("--rank", f.launch.rank,
                             "This process's rank or worker id, 0..N-1 (with --tracker or --server)")
                   ->check(CLI::NonNegativeNumber)
                   ->group("Distributed");
  c->add_flag("--rank-from-stdin", f.launch.rank_from_stdin,
              "Instead of --rank: read the rank from stdin, the digits and a tab before the first "
              "row (as Spark tasks write it); with no rows at all, take a rank nobody claimed")
      ->group("Distributed");
  c->add_option("--task-gpus", f.launch.task_gpus,
                "The GPUs Spark gave this task, comma-separated (TaskContext resources): "
                "--device cuda or auto trains on the first (the Spark layer passes them)")
      ->delimiter(',')
      ->group("Distributed");
  c->add_option("--world-size", f.launch.world_size, "Number of ranks or workers N (with --tracker or --server)")
      ->check(CLI::PositiveNumber)
      ->group("Distributed");
  c->add_option("--timeout", f.launch.timeout,
                "Seconds to reach the tracker and for every rank to arrive; for a hogwild worker, to "
                "reach the server and for each of its answers (" +
                    DefaultIs(f.launch.timeout) + ")")
      ->check(CLI::PositiveNumber)
      ->group("Distributed");

  c->add_flag("--predict", f.job.predict, "Write a prediction record for every input row")
      ->group("Output");
  AddEnumOption(c, "--prediction", &f.job.prediction, kPredictionKindNames,
                "argmax, vector, probabilities or class (default: by loss)")
      ->group("Output");
  c->add_option("--metrics", f.job.metrics_path, "Write per-epoch metrics as JSON lines to this file")
      ->group("Output");
  f.send_model_opt = c->add_flag("--send-model", f.job.send_model,
              "Under --tracker: rank 0 sends the trained model to the tracker, which writes it "
              "to its --output FILE, instead of model records on stdout")
      ->excludes(f.model.output_opt)
      ->group("Output");
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
