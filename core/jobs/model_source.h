#ifndef SPARKTORCH_CORE_JOBS_MODEL_SOURCE_H_
#define SPARKTORCH_CORE_JOBS_MODEL_SOURCE_H_

#include <optional>
#include <string>
#include <vector>

namespace sparktorch {

// Where a model to train comes from and what overrides its files, as the model flags of
// `train` and `serve --mode hogwild` give it (cli/model_flags.h). PlanModel reads it.
struct ModelSource {
  std::string model_path;    // a JSON spec (.json) or a TorchScript / trained model (.pt)
  std::string train_config;  // loss, optimizer, lr_schedule for a TorchScript model; empty: <model>.json
                             // beside the model when there is one
  std::string input_shape;  // "1,28,28" (--input-shape); empty: from the spec, the model or the rows

  std::optional<std::string> loss;       // overrides the spec's
  std::optional<std::string> optimizer;  // overrides the spec's type (and its options)
  std::optional<double> lr;              // overrides the optimizer's lr
  // Overrides the spec's lr_schedule: a type ("cosine", "none") or a JSON object.
  std::optional<std::string> lr_schedule;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_MODEL_SOURCE_H_
