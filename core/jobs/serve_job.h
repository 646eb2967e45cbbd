#ifndef SPARKTORCH_CORE_JOBS_SERVE_JOB_H_
#define SPARKTORCH_CORE_JOBS_SERVE_JOB_H_

#include <cstdio>
#include <functional>

#include "core/jobs/model_source.h"
#include "core/ps/parameter_server.h"

namespace sparktorch {

// Everything `sparktorch serve --mode hogwild` is told.
struct HogwildServeOptions {
  ModelSource model;        // the model the workers start from, and its loss and optimizer
  uint64_t seed = 0;        // of its initial weights
  std::string output_path;  // the final model; empty: as records on stdout
  // Where to listen and how to serve; its model and optimizer are filled in here.
  ParameterServerOptions server;
};

// Runs the hogwild parameter server: builds the model, listens, calls `announce` with the port,
// serves the workers until every one has finished or is lost, then writes the final model (to
// model.output_path, or as records) and a summary record to `out`. Throws PeerError when no
// worker finished, and the sparktorch::Error kinds of formats/error.h for bad options.
void RunHogwildServe(const HogwildServeOptions& options, const std::function<void(int port)>& announce,
                     std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_SERVE_JOB_H_
