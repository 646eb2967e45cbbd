#include "core/jobs/serve_job.h"

#include <cstdlib>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/data/output_file.h"
#include "core/device.h"
#include "core/world/tracker.h"
#include "core/jobs/hogwild_serve.h"
#include "core/net/errors.h"
#include "core/net/socket.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

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
Address ListenAddress(const ServeJobOptions& o, const std::string& secret, const std::string& who,
                      const std::string& peers) {
  if (o.listen_fd >= 0) {
    Address bound = ListeningAddress(o.listen_fd, "--listen-fd");
    if (secret.empty() && !IsLoopback(bound.host)) {
      throw UsageError("--listen-fd " + std::to_string(o.listen_fd) + ": the socket listens on " +
                       bound.ToString() + "; without SPARKTORCH_SECRET the " + who +
                       " listens on loopback only; set a per-job secret in SPARKTORCH_SECRET (for "
                       "the " + who + " and every one of its " + peers + ")");
    }
    return bound;
  }
  Address listen = o.listen.empty() ? Address{"0.0.0.0", 0} : ParseAddress(o.listen, "--listen");
  if (secret.empty()) {
    if (IsWildcard(listen.host)) {
      spdlog::warn("no SPARKTORCH_SECRET: listening on 127.0.0.1 only, for {} on this host; "
                   "set a secret to admit {} from other hosts", peers, peers);
      listen.host = "127.0.0.1";
    } else if (!IsLoopback(listen.host)) {
      throw UsageError("--listen " + o.listen + ": without SPARKTORCH_SECRET the " + who +
                       " listens on loopback only; set a per-job secret in SPARKTORCH_SECRET (for "
                       "the " + who + " and every one of its " + peers + ")");
    }
  }
  return listen;
}

// Tells the ranks or workers where to connect: in --port-file, else as the one line of `out` (a
// tracker's stdout). A parameter server's `out` carries records only, so without --port-file its
// address is only in the log.
void Announce(const ServeJobOptions& o, const Address& listen, int port, std::FILE* out) {
  const std::string host = IsWildcard(listen.host) ? HostName() : listen.host;
  const std::string address = host + ":" + std::to_string(port);
  spdlog::info("listening on {}", address);
  if (o.port_file.empty() && o.mode == ServeMode::kHogwild) {
    spdlog::warn("no --port-file: workers must be told {} some other way", address);
  } else if (o.port_file.empty()) {
    std::fprintf(out, "%s\n", address.c_str());
    if (std::fflush(out) != 0) throw Error("stdout: write failed");
  } else {
    WriteWhole(o.port_file, address + "\n");
  }
}

void ServeHogwild(const ServeJobOptions& o, const std::string& secret, std::FILE* out) {
  const HogwildServeOptions& h = o.hogwild;
  // Large frames come and go every step: keep them off mmap, as training does.
  ConfigureCpu(DefaultThreads());
  if (h.model.model_path.empty()) throw UsageError("--model is required with --mode hogwild");
  ParameterServerOptions server;
  server.listen = ListenAddress(o, secret, "parameter server", "workers");
  server.listen_fd = o.listen_fd;
  server.secret = secret;
  const char* job = std::getenv("SPARKTORCH_JOB_ID");
  server.job = job && *job ? job : "-";
  server.world_size = o.world_size;
  server.rendezvous_timeout = o.timeout;
  server.worker_timeout = o.heartbeat_timeout > 0 ? o.heartbeat_timeout : 300;
  server.lock = h.lock;
  server.pull_every = h.pull_every;
  server.max_staleness = o.max_staleness;
  server.early_stop_patience = h.early_stop_patience;
  const Address listen = server.listen;
  RunHogwildServe(h, std::move(server), [&](int port) { Announce(o, listen, port, out); }, out);
  if (std::fflush(out) != 0) throw Error("stdout: write failed");
}

void ServeTracker(const ServeJobOptions& o, const std::string& secret, std::FILE* out) {
  TrackerOptions options;
  options.secret = secret;
  options.listen = ListenAddress(o, secret, "tracker", "ranks");
  options.listen_fd = o.listen_fd;
  options.world_size = o.world_size;
  options.job_id = o.job_id;
  options.rendezvous_timeout = o.timeout;
  options.heartbeat_timeout = o.heartbeat_timeout > 0 ? o.heartbeat_timeout : 30;
  if (!o.checkpoint_path.empty()) {
    options.on_checkpoint = [path = o.checkpoint_path](int epoch, const std::string& model) {
      const std::string why = WriteOutputFile(path, model);
      if (!why.empty()) throw Error("--checkpoint " + path + ": cannot write this file: " + why);
      spdlog::info("checkpoint after epoch {} from rank 0 ({:.1f} MB) kept in {}", epoch,
                   model.size() / 1e6, path);
    };
  }
  if (!o.output_path.empty()) {
    options.on_model = [path = o.output_path](const std::string& model) {
      const std::string why = WriteOutputFile(path, model);
      if (!why.empty()) throw Error("--output " + path + ": cannot write this file: " + why);
      spdlog::info("the trained model from rank 0 ({:.1f} MB) written to {}", model.size() / 1e6,
                   path);
    };
  }
  Tracker tracker(options);
  spdlog::info("tracker for {} ranks of job {}", o.world_size, tracker.job_id());
  Announce(o, options.listen, tracker.port(), out);

  TrackerOutcome outcome = tracker.Run();
  if (outcome.ok) {
    spdlog::info("all {} ranks finished", o.world_size);
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

void RunServe(const ServeJobOptions& options, std::FILE* out) {
  const char* secret_env = std::getenv("SPARKTORCH_SECRET");
  const std::string secret = secret_env ? secret_env : "";
  if (options.mode == ServeMode::kHogwild) return ServeHogwild(options, secret, out);
  ServeTracker(options, secret, out);
}

}  // namespace sparktorch
