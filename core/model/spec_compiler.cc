#include "core/model/spec_compiler.h"

#include <torch/torch.h>

#include "core/model/layers.h"
#include "core/model/shape.h"
#include "core/model/spec_fields.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// What LibTorch says went wrong, in one line. Its own errors (c10::Error) say it on the first
// line, before a backtrace; the TorchScript interpreter's put a traceback first and the error
// ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x10 and 100x10)") last.
std::string TorchComplaint(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    std::string message = c10_error->what_without_backtrace();
    return message.substr(0, message.find('\n'));
  }
  std::string message = e.what();
  while (!message.empty() && message.back() == '\n') message.pop_back();
  size_t start = message.rfind('\n');
  return start == std::string::npos ? message : message.substr(start + 1);
}

std::vector<int64_t> BatchShape(const std::vector<int64_t>& row_shape) {
  std::vector<int64_t> shape = {2};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  return shape;
}

std::vector<int64_t> ChooseInputShape(const json& spec, const json& layers,
                                      std::vector<int64_t> input_shape, int64_t num_features) {
  if (!input_shape.empty()) return input_shape;
  if (auto it = spec.find("input_shape"); it != spec.end() && !it->is_null()) {
    if (!it->is_array() || it->empty()) {
      throw SpecError("spec: \"input_shape\" must be a list of positive integers, got " + it->dump());
    }
    for (const json& d : *it) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1) {
        throw SpecError("spec: \"input_shape\" must be a list of positive integers, got " +
                        it->dump());
      }
      input_shape.push_back(d.get<int64_t>());
    }
    return input_shape;
  }
  const json& first = layers.at(0);
  if (first.is_object() && first.value("type", "") == "linear") {
    // Read as the layer itself will, so a typo is reported as the layer's, not as a missing shape.
    SpecFields fields(first, "layer 0 (linear)");
    return {fields.PositiveInt("in_features")};
  }
  if (num_features > 0) return {num_features};
  throw SpecError(
      "spec: the input shape is unknown; give \"input_shape\" in the spec or --input-shape");
}

}  // namespace

std::vector<int64_t> ProbeOutputShape(torch::jit::Module& module,
                                      const std::vector<int64_t>& input_shape) {
  torch::NoGradGuard no_grad;
  bool was_training = module.is_training();
  module.eval();
  // The probe goes where the module's tensors are (a model already moved to a GPU).
  c10::Device device(torch::kCPU);
  for (const torch::Tensor& t : module.parameters()) {
    device = t.device();
    break;
  }
  torch::jit::IValue out;
  try {
    out = module.forward({torch::zeros(BatchShape(input_shape), torch::TensorOptions().device(device))});
  } catch (const std::exception& e) {
    module.train(was_training);
    throw SpecError("the model does not take rows of shape " + ShapeText(input_shape) + ": " +
                    TorchComplaint(e));
  }
  module.train(was_training);
  if (!out.isTensor()) {
    throw SpecError("the model's forward returns " + out.tagKind() + ", not one tensor");
  }
  auto sizes = out.toTensor().sizes().vec();
  if (sizes.empty() || sizes[0] != 2) {
    throw SpecError("the model's forward returns a tensor of shape [" + ShapeText(sizes) +
                    "] for a batch of 2 rows; the first dimension must be the batch");
  }
  return std::vector<int64_t>(sizes.begin() + 1, sizes.end());
}

namespace {

// The spec's top level: known fields only, and a non-empty list of layers, which it returns.
const json& SpecLayers(const json& spec) {
  if (!spec.is_object()) throw SpecError("spec: expected a JSON object with \"layers\"");
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    static const char* kKnown[] = {"layers", "input_shape", "loss", "optimizer", "lr_schedule",
                                   "name", "description"};
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) == std::end(kKnown)) {
      throw SpecError("spec: unknown field \"" + it.key() +
                      "\"; known: layers, input_shape, loss, optimizer, lr_schedule, name, "
                      "description");
    }
  }
  auto layers = spec.find("layers");
  if (layers == spec.end() || !layers->is_array() || layers->empty()) {
    throw SpecError("spec: \"layers\" must be a non-empty list of layers");
  }
  return *layers;
}

}  // namespace

void CheckSpec(const json& spec) {
  const json& layers = SpecLayers(spec);
  auto unit = std::make_shared<torch::jit::CompilationUnit>();
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < layers.size(); ++i) BuildLayer(layers[i], i, unit);
}

CompiledSpec CompileSpec(const json& spec, std::vector<int64_t> input_shape,
                         int64_t num_features) {
  const json& layers = SpecLayers(spec);

  CompiledSpec compiled{torch::jit::Module(), {}, {}};
  compiled.input_shape = ChooseInputShape(spec, layers, std::move(input_shape), num_features);

  auto unit = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module root(c10::QualifiedName("__torch__.sparktorch.Sequential"), unit, true);
  root.register_attribute("training", c10::BoolType::get(), true);

  // Build and check layer by layer, so a misfit is reported at the layer that causes it.
  torch::NoGradGuard no_grad;
  torch::Tensor probe = torch::zeros(BatchShape(compiled.input_shape));
  std::string forward = "def forward(self, x: Tensor) -> Tensor:\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    torch::jit::Module layer = BuildLayer(layers[i], i, unit);
    layer.eval();
    try {
      probe = layer.forward({probe}).toTensor();
    } catch (const std::exception& e) {
      std::string type = layers[i].is_string() ? layers[i].get<std::string>()
                                               : layers[i].value("type", "");
      auto row_shape = probe.sizes().vec();
      row_shape.erase(row_shape.begin());  // the probe's batch of 2
      throw SpecError("layer " + std::to_string(i) + " (" + type + "): does not fit its input " +
                      "of shape [" + ShapeText(row_shape) + "]: " +
                      TorchComplaint(e));
    }
    layer.train();
    root.register_module(std::to_string(i), layer);
    forward += "  x = getattr(self, \"" + std::to_string(i) + "\").forward(x)\n";
  }
  forward += "  return x\n";
  root.define(forward);
  root.train();
  for (torch::Tensor p : root.parameters()) p.requires_grad_(true);
  auto out = probe.sizes().vec();
  compiled.output_shape.assign(out.begin() + 1, out.end());
  compiled.module = root;
  return compiled;
}

}  // namespace sparktorch
