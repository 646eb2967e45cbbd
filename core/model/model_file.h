#ifndef SPARKTORCH_CORE_MODEL_MODEL_FILE_H_
#define SPARKTORCH_CORE_MODEL_MODEL_FILE_H_

#include <optional>
#include <string>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/api/module.h>

#include "formats/manifest.h"

namespace sparktorch {

// The extra file of a model sparktorch trained that holds its optimizer's state, as torch.load
// reads it (core/train/optimizer_state.h): in Python, torch.jit.load(path, _extra_files={
// "optimizer.pt": ""}) fills it in, and torch.load(io.BytesIO(...)) gives the state_dict.
inline constexpr const char* kOptimizerStateFileName = "optimizer.pt";

// A TorchScript module and, when it was written by sparktorch, its manifest (and the optimizer's
// state it ended with; empty when the file has none).
struct ModelFile {
  torch::jit::Module module;
  std::optional<Manifest> manifest;
  std::string optimizer_state;
};

// Reads a TorchScript .pt (from torch.jit.save, or a model sparktorch trained) onto `device`.
// Throws ModelError naming the path when it is not a TorchScript file or its manifest is bad.
ModelFile ReadModelFile(const std::string& path, c10::Device device);

// The same from a .pt file's bytes (a model sent over the network); `name` is for messages.
ModelFile ReadModelBytes(const std::string& bytes, const std::string& name, c10::Device device);

// The model as the bytes of a .pt file with the manifest embedded (extra file sparktorch.json),
// and the optimizer's state (extra file optimizer.pt) unless it is empty.
std::string SerializeModel(const torch::jit::Module& module, const Manifest& manifest,
                           const std::string& optimizer_state = "");

// Writes SerializeModel's bytes to `path` through a temporary file and a rename, so a reader never
// sees half a model. Throws Error naming the path.
void WriteModelFile(const std::string& path, const torch::jit::Module& module,
                    const Manifest& manifest, const std::string& optimizer_state = "");

// Reads a JSON file (a model spec, a training config). Throws SpecError with the path, line and
// column of a syntax error.
nlohmann::json ReadJsonFile(const std::string& path);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_MODEL_MODEL_FILE_H_
