#ifndef SPARKTORCH_CORE_JOBS_SERVE_JOB_H_
#define SPARKTORCH_CORE_JOBS_SERVE_JOB_H_

#include <cstdio>
#include <functional>

#include "core/jobs/train_job.h"
#include "core/ps/parameter_server.h"

namespace sparktorch {

// Everything `sparktorch serve --mode hogwild` is told.
struct HogwildServeOptions {
  // The model and its training as `train` takes them: model_path, train_config, input_shape,
  // loss, optimizer, lr, train.seed, output_path, rows.format.num_features.
  TrainJobOptions model;
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
