#include "core/jobs/inspect_job.h"

#include <torch/torch.h>

#include "core/model/model_file.h"

namespace sparktorch {

nlohmann::json InspectModel(const std::string& model_path) {
  ModelFile model = ReadModelFile(model_path, torch::kCPU);
  nlohmann::json tensors = nlohmann::json::array();
  int64_t trainable = 0;
  for (const auto& p : model.module.named_parameters()) {
    tensors.push_back({{"name", p.name}, {"kind", "parameter"}, {"shape", p.value.sizes().vec()},
                       {"count", p.value.numel()}});
    trainable += p.value.numel();
  }
  for (const auto& b : model.module.named_buffers()) {
    tensors.push_back({{"name", b.name}, {"kind", "buffer"}, {"shape", b.value.sizes().vec()},
                       {"count", b.value.numel()}});
  }
  return {{"model", model_path},
          {"parameters", trainable},
          {"tensors", tensors},
          {"manifest", model.manifest ? ManifestToJson(*model.manifest) : nlohmann::json()}};
}

}  // namespace sparktorch
