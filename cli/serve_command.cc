#include <cstdio>
#include <cstdlib>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/row_format_flags.h"
#include "core/data/output_file.h"
#include "core/device.h"
#include "core/dist/tracker.h"
#include "core/jobs/serve_job.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

struct ServeFlags {
  std::string mode = "sync";
  int world_size = 0;
  std::string listen;
  std::string port_file;
  double timeout = 120;
  double heartbeat_timeout = 0;  // 0: the mode's default
  uint32_t job_id = 0;
  // Hogwild: the model and how the server trains it.
  HogwildServeOptions hogwild;
  ModelFlags model;
  std::string input_shape;
  int64_t max_staleness = -1;
  std::vector<CLI::Option*> hogwild_only;
  CLI::Option* job_id_opt;
};

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

bool IsWildcard(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "*"; }

// Writes `text` to `path` whole or not at all (a reader polling for the file never sees half).
void WriteWhole(const std::string& path, const std::string& text) {
  const std::string why = WriteOutputFile(path, text);
  if (!why.empty()) throw Error("--port-file " + path + ": cannot write this file: " + why);
}

// Where to listen: --listen, except that without a secret only loopback is allowed (a wildcard
// becomes 127.0.0.1, with a warning). `who` is "tracker" or "parameter server".
Address ListenAddress(const ServeFlags& f, const std::string& secret, const std::string& who,
                      const std::string& peers) {
  Address listen = f.listen.empty() ? Address{"0.0.0.0", 0} : ParseAddress(f.listen, "--listen");
  if (secret.empty()) {
    if (IsWildcard(listen.host)) {
      spdlog::warn("no SPARKTORCH_SECRET: listening on 127.0.0.1 only, for {} on this host; "
                   "set a secret to admit {} from other hosts", peers, peers);
      listen.host = "127.0.0.1";
    } else if (!IsLoopback(listen.host)) {
      throw UsageError("--listen " + f.listen + ": without SPARKTORCH_SECRET the " + who +
                       " listens on loopback only; set a per-job secret in SPARKTORCH_SECRET (for "
                       "the " + who + " and every one of its " + peers + ")");
    }
  }
  return listen;
}

// Tells the ranks or workers where to connect: in --port-file, else on stdout. A parameter server's
// stdout carries records only, so without --port-file its address is only in the log.
void Announce(const ServeFlags& f, const Address& listen, int port) {
  const std::string host = IsWildcard(listen.host) ? HostName() : listen.host;
  const std::string address = host + ":" + std::to_string(port);
  spdlog::info("listening on {}", address);
  if (f.port_file.empty() && f.mode == "hogwild") {
    spdlog::warn("no --port-file: workers must be told {} some other way", address);
  } else if (f.port_file.empty()) {
    std::printf("%s\n", address.c_str());
    std::fflush(stdout);
  } else {
    WriteWhole(f.port_file, address + "\n");
  }
}

void RunHogwild(ServeFlags& f, const std::string& secret) {
  HogwildServeOptions o = f.hogwild;
  // Large frames come and go every step: keep them off mmap, as training does.
  ConfigureCpu(DefaultThreads());
  if (f.model.source.model_path.empty()) {
    throw UsageError("--model is required with --mode hogwild");
  }
  if (f.job_id_opt->count()) {
    throw UsageError("--job-id is Open MPI's id for a sync job; a hogwild server takes its job "
                     "id from SPARKTORCH_JOB_ID");
  }
  o.model = ToModelSource(f.model, ParseShape(f.input_shape, "--input-shape"));
  o.seed = f.model.seed;
  o.output_path = f.model.output_path;
  o.server.listen = ListenAddress(f, secret, "parameter server", "workers");
  o.server.secret = secret;
  const char* job = std::getenv("SPARKTORCH_JOB_ID");
  o.server.job = job && *job ? job : "-";
  o.server.world_size = f.world_size;
  o.server.rendezvous_timeout = f.timeout;
  o.server.worker_timeout = f.heartbeat_timeout > 0 ? f.heartbeat_timeout : 300;
  o.server.max_staleness = f.max_staleness;
  RunHogwildServe(o, [&](int port) { Announce(f, o.server.listen, port); }, stdout);
  if (std::fflush(stdout) != 0) throw Error("stdout: write failed");
}

void Run(ServeFlags& f) {
  const char* secret_env = std::getenv("SPARKTORCH_SECRET");
  const std::string secret = secret_env ? secret_env : "";
  if (f.mode == "hogwild") return RunHogwild(f, secret);
  for (CLI::Option* o : f.hogwild_only) {
    if (o->count()) throw UsageError(o->get_name() + " is an option of --mode hogwild");
  }
  TrackerOptions options;
  options.secret = secret;
  options.listen = ListenAddress(f, secret, "tracker", "ranks");
  options.world_size = f.world_size;
  options.job_id = f.job_id;
  options.rendezvous_timeout = f.timeout;
  options.heartbeat_timeout = f.heartbeat_timeout > 0 ? f.heartbeat_timeout : 30;
  Tracker tracker(options);
  spdlog::info("tracker for {} ranks of job {}", f.world_size, tracker.job_id());
  Announce(f, options.listen, tracker.port());

  TrackerOutcome outcome = tracker.Run();
  if (outcome.ok) {
    spdlog::info("all {} ranks finished", f.world_size);
    return;
  }
  switch (outcome.kind) {
    case AbortKind::kTimeout:
      throw RendezvousError(outcome.message);
    case AbortKind::kFailed:
      throw PeerError(outcome.message, true);
    case AbortKind::kLost:
      throw PeerError(outcome.message, false);
  }
}

}  // namespace

void SetupServeCommand(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  ServeFlags& f = *flags;
  CLI::App* c = app.add_subcommand(
      "serve", "Run the tracker that sync ranks started without mpirun (Spark tasks) meet at, or "
               "the parameter server of hogwild training");
  c->add_option("--mode", f.mode,
                "sync: the tracker of synchronous training (default); hogwild: the parameter server")
      ->check(CLI::IsMember({"sync", "hogwild"}));
  c->add_option("--world-size,-n", f.world_size, "Number of ranks (sync) or workers (hogwild) in the job")
      ->required()
      ->check(CLI::PositiveNumber);
  c->add_option("--listen", f.listen,
                "ADDR:PORT to listen on; port 0 picks a free one (default 0.0.0.0:0, or "
                "127.0.0.1:0 without SPARKTORCH_SECRET)");
  c->add_option("--port-file", f.port_file,
                "Write the HOST:PORT the ranks or workers should use to this file (sync: instead "
                "of stdout; hogwild: else it is only logged, as stdout carries records)");
  c->add_option("--timeout", f.timeout, "Seconds for every rank or worker to arrive (default 120)")
      ->check(CLI::PositiveNumber);
  c->add_option("--heartbeat-timeout", f.heartbeat_timeout,
                "Seconds of silence after which a rank or worker counts as lost (default 30 for "
                "sync ranks; 300 for hogwild workers, so also the longest a step may take)")
      ->check(CLI::PositiveNumber);
  f.job_id_opt = c->add_option("--job-id", f.job_id,
                "Job id (1..2147483647) for Open MPI; jobs that run at once on one host need "
                "different ids (default: random)")
      ->check(CLI::Range(1, 2147483647));

  // Hogwild: the model, and how the server applies the workers' gradients.
  ParameterServerOptions& ps = f.hogwild.server;
  const char* g = "Hogwild";
  AddModelFlags(c, &f.model,
                {g, "Model: a JSON spec (.json), a TorchScript model or a trained model (.pt)",
                 "Seed for the initial weights (default 0)",
                 "Write the final model to this file instead of model records on stdout", g, g});
  f.hogwild_only = f.model.all();
  f.hogwild_only.insert(f.hogwild_only.end(), {
      c->add_option("--input-shape", f.input_shape,
                    "Shape of a row's features, e.g. 784 or 1,28,28 (needed when the model does "
                    "not say)")
          ->group(g),
      c->add_flag("--lock", ps.lock,
                  "Serialise pull, compute and push across workers (SparkTorch's acquireLock)")
          ->group(g),
      c->add_option("--pull-every", ps.pull_every,
                    "Steps a worker takes on its own copy between pulls (default 1)")
          ->check(CLI::PositiveNumber)
          ->group(g),
      c->add_option("--max-staleness", f.max_staleness,
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
