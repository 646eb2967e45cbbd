#ifndef SPARKTORCH_CORE_JOBS_HOGWILD_SERVE_H_
#define SPARKTORCH_CORE_JOBS_HOGWILD_SERVE_H_

#include <cstdio>
#include <functional>

#include "core/jobs/serve_job.h"
#include "core/ps/parameter_server.h"

namespace sparktorch {

// Runs the hogwild parameter server: builds the model, listens as `server` says (its model,
// optimizer and schedule are filled in here), calls `announce` with the port, serves the
// workers until every one has finished or is lost, then writes the final model (to
// options.output_path, or as records) and a summary record to `out`. Throws PeerError when no
// worker finished, and the sparktorch::Error kinds of formats/error.h for bad options.
void RunHogwildServe(const HogwildServeOptions& options, ParameterServerOptions server,
                     const std::function<void(int port)>& announce, std::FILE* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_HOGWILD_SERVE_H_
