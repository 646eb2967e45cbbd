#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/failure.h"
#include "core/jobs/serve_job.h"

namespace sparktorch {
namespace {

struct ServeFlags {
  ServeJobOptions job;
  ModelFlags model;
  std::string input_shape;
  std::vector<CLI::Option*> hogwild_only;
  CLI::Option* job_id_opt;
};

void Run(ServeFlags& f) {
  ServeJobOptions job = f.job;
  if (job.mode == ServeMode::kHogwild) {
    if (f.job_id_opt->count()) {
      throw FlagError("--job-id is Open MPI's id for a sync job; a hogwild server takes its job "
                       "id from SPARKTORCH_JOB_ID");
    }
    job.hogwild.model = ToModelSource(f.model, f.input_shape);
    job.hogwild.seed = f.model.seed;
    job.hogwild.output_path = f.model.output_path;
  } else {
    job.output_path = f.model.output_path;
    for (CLI::Option* o : f.hogwild_only) {
      if (o->count()) throw FlagError(o->get_name() + " is an option of --mode hogwild");
    }
  }
  RunServe(job, stdout);
}

}  // namespace

void SetupServeCommand(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  ServeFlags& f = *flags;
  CLI::App* c = app.add_subcommand(
      "serve", "Run the tracker that sync ranks started without mpirun (Spark tasks) meet at, or "
               "the parameter server of hogwild training");
  AddEnumOption(c, "--mode", &f.job.mode, kServeModeNames,
                "sync: the tracker of synchronous training (default); hogwild: the parameter server");
  c->add_option("--world-size,-n", f.job.world_size, "Number of ranks (sync) or workers (hogwild) in the job")
      ->required()
      ->check(CLI::PositiveNumber);
  CLI::Option* listen = c->add_option("--listen", f.job.listen,
                "ADDR:PORT to listen on; port 0 picks a free one (default 0.0.0.0:0, or "
                "127.0.0.1:0 without SPARKTORCH_SECRET)");
  c->add_option("--listen-fd", f.job.listen_fd,
                "Accept on this inherited socket, which the caller bound and listens on already "
                "(so it knows the address before serve starts), instead of --listen")
      ->check(CLI::NonNegativeNumber)
      ->excludes(listen);
  c->add_option("--port-file", f.job.port_file,
                "Write the HOST:PORT the ranks or workers should use to this file (sync: instead "
                "of stdout; hogwild: else it is only logged, as stdout carries records)");
  c->add_option("--timeout", f.job.timeout, "Seconds for every rank or worker to arrive (" + DefaultIs(f.job.timeout) + ")")
      ->check(CLI::PositiveNumber);
  c->add_option("--heartbeat-timeout", f.job.heartbeat_timeout,
                "Seconds of silence after which a rank or worker counts as lost (default 30 for "
                "sync ranks; 300 for hogwild workers, so also the longest a step may take)")
      ->check(CLI::PositiveNumber);
  f.job_id_opt = c->add_option("--job-id", f.job.job_id,
                "Job id (1..2147483647) for Open MPI; jobs that run at once on one host need "
                "different ids (default: random)")
      ->check(CLI::Range(1, 2147483647));
  c->add_option("--checkpoint", f.job.checkpoint_path,
                "Sync: keep the checkpoints rank 0 sends (train --checkpoint-every under "
                "--tracker) in this file, each replacing the one before; a restarted job "
                "resumes from it (train --resume FILE)");

  // Hogwild: the model, and how the server applies the workers' gradients.
  HogwildServeOptions& ps = f.job.hogwild;
  const char* g = "Hogwild";
  const std::string seed_help = "Seed for the initial weights (" + DefaultIs(f.model.seed) + ")";
  AddModelFlags(c, &f.model,
                {g, "Model: a JSON spec (.json), a TorchScript model or a trained model (.pt)",
                 seed_help.c_str(),
                 "Hogwild: write the final model to this file instead of model records on stdout; "
                 "sync: write the trained model that rank 0 sends (train --send-model) to it",
                 g, "Output"});
  f.hogwild_only = f.model.all();
  f.hogwild_only.erase(
      std::remove(f.hogwild_only.begin(), f.hogwild_only.end(), f.model.output_opt),
      f.hogwild_only.end());
  f.hogwild_only.insert(f.hogwild_only.end(), {
      c->add_option("--input-shape", f.input_shape,
                    "Shape of a row's features, e.g. 784 or 1,28,28 (needed when the model does "
                    "not say)")
          ->group(g),
      c->add_flag("--fresh-optimizer", f.job.hogwild.fresh_optimizer,
                  "With a trained --model: start the server's optimizer afresh instead of "
                  "resuming its state")
          ->group(g),
      c->add_flag("--lock", ps.lock,
                  "Serialise pull, compute and push across workers (SparkTorch's acquireLock)")
          ->group(g),
      c->add_option("--pull-every", ps.pull_every,
                    "Steps a worker takes on its own copy between pulls (" +
                        DefaultIs(ps.pull_every) + ")")
          ->check(CLI::PositiveNumber)
          ->group(g),
      c->add_option("--max-staleness", f.job.max_staleness,
                    "Drop gradients computed on weights more than this many updates old "
                    "(default: keep all)")
          ->check(CLI::NonNegativeNumber)
          ->group(g),
      c->add_option("--early-stop-patience", ps.early_stop_patience,
                    "Stop every worker after this many epochs without a better loss (validation "
                    "loss when workers hold some out); 0: never")
          ->check(CLI::NonNegativeNumber)
          ->group(g),
  });
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
