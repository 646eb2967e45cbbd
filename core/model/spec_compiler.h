#ifndef SPARKTORCH_CORE_MODEL_SPEC_COMPILER_H_
#define SPARKTORCH_CORE_MODEL_SPEC_COMPILER_H_

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/csrc/jit/api/module.h>

namespace sparktorch {

struct CompiledSpec {
  torch::jit::Module module;
  std::vector<int64_t> input_shape;   // per row
  std::vector<int64_t> output_shape;  // per row
};

// Compiles a JSON model spec, the equivalent of SparkTorch's serialize_torch_obj:
//
//   {"input_shape": [1, 28, 28],                      (optional)
//    "layers": [{"type": "conv2d", ...}, {"type": "relu"}, ...],
//    "loss": "cross_entropy" | {"type": ..., options},   (read by the trainer)
//    "optimizer": {"type": "adam", "lr": 0.001, ...}}    (read by the trainer)
//
// into a TorchScript module whose submodules are named "0", "1", ... as in torch.nn.Sequential,
// so its state_dict keys are the ones a Python user expects ("0.weight", "0.bias", ...).
//
// The per-row input shape is `input_shape` when not empty (the --input-shape flag), else the
// spec's "input_shape", else the first layer's (a linear layer's in_features), else
// {num_features}. The spec is checked by running every layer on a zero batch: a layer that does
// not fit what comes before it is a SpecError naming the layer ("layer 4 (linear): ...").
// Throws SpecError for any mistake in the spec, naming the layer index and field.
CompiledSpec CompileSpec(const nlohmann::json& spec, std::vector<int64_t> input_shape,
                         int64_t num_features);

// Checks a spec's structure and every layer's fields without knowing the input shape, so that a
// mistake is reported before any row is read. Throws SpecError as CompileSpec does. Draws from
// LibTorch's global generator (layers are built and dropped): seed after calling it.
void CheckSpec(const nlohmann::json& spec);

// Runs `module` on a zero batch of two rows of `input_shape` in evaluation mode and returns the
// per-row output shape. Throws SpecError with LibTorch's first line of complaint when the module
// does not take that shape or returns something other than one tensor.
std::vector<int64_t> ProbeOutputShape(torch::jit::Module& module,
                                      const std::vector<int64_t>& input_shape);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_MODEL_SPEC_COMPILER_H_
