#ifndef SPARKTORCH_CORE_JOBS_SERVE_JOB_H_
#define SPARKTORCH_CORE_JOBS_SERVE_JOB_H_

#include <cstdio>
#include <cstdint>
#include <string>

#include "core/jobs/model_source.h"
#include "formats/enum_names.h"

namespace sparktorch {

// Everything `sparktorch serve --mode hogwild` is told.
struct HogwildServeOptions {
  ModelSource model;        // the model the workers start from, and its loss and optimizer
  uint64_t seed = 0;        // of its initial weights
  std::string output_path;  // the final model; empty: as records on stdout
  bool fresh_optimizer = false;  // a trained model's optimizer state is not resumed
  bool lock = false;             // serialise pull, compute and push across workers
  int pull_every = 1;            // steps a worker takes on its own copy between pulls
  int early_stop_patience = 0;   // epochs without a better loss before every worker stops; 0: never
};

// --mode of serve: the tracker of synchronous training, or the parameter server of hogwild.
enum class ServeMode { kSync, kHogwild };
inline constexpr Named<ServeMode> kServeModeNames[] = {{ServeMode::kSync, "sync"},
                                                        {ServeMode::kHogwild, "hogwild"}};

// Everything `sparktorch serve` is told (the man page gives each field's meaning). The
// environment's SPARKTORCH_SECRET and SPARKTORCH_JOB_ID are read by RunServe.
struct ServeJobOptions {
  ServeMode mode = ServeMode::kSync;
  int world_size = 0;
  std::string listen;     // ADDR:PORT; empty: 0.0.0.0:0 (127.0.0.1:0 without a secret)
  int listen_fd = -1;     // >= 0: an inherited socket that listens already (instead of listen)
  std::string port_file;  // where to write HOST:PORT; empty: stdout (sync) or the log only
  double timeout = 120;
  double heartbeat_timeout = 0;  // 0: the mode's default (30 s sync, 300 s hogwild)
  uint32_t job_id = 0;           // sync: Open MPI's job id; 0: random
  std::string checkpoint_path;   // sync: where rank 0's checkpoints are kept; empty: nowhere
  std::string output_path;       // sync: where the trained model rank 0 sends is written
  int64_t max_staleness = -1;    // hogwild
  HogwildServeOptions hogwild;  // mode hogwild: the model, and how the server applies gradients
};

// Runs `sparktorch serve`: listens where `options` say (loopback only without a secret),
// announces the address (the port file, else a line on `out` for a tracker, else the log), and
// runs the tracker until every rank finished, or the parameter server (RunHogwildServe) with its
// records on `out` (core/jobs/hogwild_serve.h). Throws RendezvousError or PeerError (with the tracker's message) when the
// job did not finish, and the sparktorch::Error kinds of formats/error.h.
void RunServe(const ServeJobOptions& options, std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_SERVE_JOB_H_
