#ifndef SPARKTORCH_CORE_JOBS_INSPECT_JOB_H_
#define SPARKTORCH_CORE_JOBS_INSPECT_JOB_H_

#include <string>

#include <nlohmann/json.hpp>

namespace sparktorch {

// What `sparktorch inspect` shows of a model file:
//   {"model": PATH, "parameters": N (trainable values),
//    "tensors": [{"name": "0.weight", "kind": "parameter"|"buffer", "shape": [...], "count": N}],
//    "manifest": {...} or null for a TorchScript model sparktorch did not train}
// Throws ModelError for a file that is not a TorchScript model.
nlohmann::json InspectModel(const std::string& model_path);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_INSPECT_JOB_H_
