#ifndef SPARKTORCH_CORE_MODEL_LAYERS_H_
#define SPARKTORCH_CORE_MODEL_LAYERS_H_

#include <memory>

#include <nlohmann/json.hpp>
#include <torch/csrc/jit/api/module.h>

namespace sparktorch {

// Builds the TorchScript module for one layer of a JSON model spec: its parameters and buffers
// (named, shaped and initialised as the torch.nn module of the same name does, so state_dict
// keys and default initialisation match PyTorch) and its forward method.
//
// `layer` is the spec's object, for example {"type": "linear", "in_features": 784,
// "out_features": 256}; `index` is its position, used in messages. Throws SpecError naming the
// layer index, its type and the field at fault ("layer 2 (conv2d): \"kernel_size\" must be a
// positive integer or a list of 2, got -1"). Draws initial weights from LibTorch's global
// generator, so torch::manual_seed before a call makes it deterministic.
torch::jit::Module BuildLayer(const nlohmann::json& layer, size_t index,
                              const std::shared_ptr<torch::jit::CompilationUnit>& unit);

// The layer types BuildLayer knows, for messages and the man page.
const char* KnownLayerTypes();

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_MODEL_LAYERS_H_
