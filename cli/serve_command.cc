#include <cstdio>
#include <cstdlib>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "core/dist/tracker.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

struct ServeFlags {
  int world_size = 0;
  std::string listen;
  std::string port_file;
  double timeout = 120;
  double heartbeat_timeout = 30;
  uint32_t job_id = 0;
};

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

bool IsWildcard(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "*"; }

// Writes `text` to `path` whole or not at all (a reader polling for the file never sees half).
void WriteWhole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f && std::fputs(text.c_str(), f) >= 0;
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error("--port-file " + path + ": cannot write this file");
  }
}

void Run(const ServeFlags& f) {
  TrackerOptions options;
  const char* secret = std::getenv("SPARKTORCH_SECRET");
  options.secret = secret ? secret : "";
  options.listen = f.listen.empty() ? Address{"0.0.0.0", 0} : ParseAddress(f.listen, "--listen");
  if (options.secret.empty()) {
    if (IsWildcard(options.listen.host)) {
      spdlog::warn("no SPARKTORCH_SECRET: listening on 127.0.0.1 only, for ranks on this host; "
                   "set a secret to admit ranks from other hosts");
      options.listen.host = "127.0.0.1";
    } else if (!IsLoopback(options.listen.host)) {
      throw UsageError("--listen " + f.listen +
                       ": without SPARKTORCH_SECRET the tracker listens on loopback only; set a "
                       "per-job secret in SPARKTORCH_SECRET (for the tracker and every rank)");
    }
  }
  options.world_size = f.world_size;
  options.job_id = f.job_id;
  options.rendezvous_timeout = f.timeout;
  options.heartbeat_timeout = f.heartbeat_timeout;
  Tracker tracker(options);

  const std::string host = IsWildcard(options.listen.host) ? HostName() : options.listen.host;
  const std::string address = host + ":" + std::to_string(tracker.port());
  spdlog::info("tracker for {} ranks of job {} listening on {}", f.world_size, tracker.job_id(), address);
  if (f.port_file.empty()) {
    std::printf("%s\n", address.c_str());
    std::fflush(stdout);
  } else {
    WriteWhole(f.port_file, address + "\n");
  }

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
      "serve", "Run the tracker that ranks started without mpirun (Spark tasks) meet at");
  c->add_option("--world-size,-n", f.world_size, "Number of ranks in the job")
      ->required()
      ->check(CLI::PositiveNumber);
  c->add_option("--listen", f.listen,
                "ADDR:PORT to listen on; port 0 picks a free one (default 0.0.0.0:0, or "
                "127.0.0.1:0 without SPARKTORCH_SECRET)");
  c->add_option("--port-file", f.port_file,
                "Write the HOST:PORT the ranks should use to this file instead of stdout");
  c->add_option("--timeout", f.timeout, "Seconds for every rank to arrive (default 120)")
      ->check(CLI::PositiveNumber);
  c->add_option("--heartbeat-timeout", f.heartbeat_timeout,
                "Seconds of silence after which a rank counts as lost (default 30)")
      ->check(CLI::PositiveNumber);
  c->add_option("--job-id", f.job_id,
                "Job id (1..2147483647) for Open MPI; jobs that run at once on one host need "
                "different ids (default: random)")
      ->check(CLI::Range(1, 2147483647));
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
