#include "core/model/layers.h"

#include <cmath>
#include <functional>
#include <map>

#include <torch/torch.h>

#include "core/model/spec_fields.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;
using torch::jit::Module;

// A TorchScript float literal that round-trips `x`.
std::string Float(double x) {
  std::string s = json(x).dump();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string List(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

Module NewModule(const std::shared_ptr<torch::jit::CompilationUnit>& unit, const char* name) {
  Module m(c10::QualifiedName(std::string("__torch__.sparktorch.") + name), unit,
           /*shouldMangle=*/true);
  m.register_attribute("training", c10::BoolType::get(), true);
  return m;
}

void Define(Module& m, const std::string& body) {
  m.define("def forward(self, x: Tensor) -> Tensor:\n" + body);
}

// torch.nn's default for Linear and ConvNd: kaiming_uniform_(a=sqrt(5)) for the weight, which
// is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias.
torch::Tensor UniformFanIn(std::vector<int64_t> shape, int64_t fan_in) {
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return torch::empty(shape).uniform_(-bound, bound);
}

Module Linear(SpecFields& f, const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  int64_t in = f.PositiveInt("in_features");
  int64_t out = f.PositiveInt("out_features");
  bool bias = f.Bool("bias", true);
  Module m = NewModule(unit, "Linear");
  m.register_parameter("weight", UniformFanIn({out, in}, in), false);
  if (bias) m.register_parameter("bias", UniformFanIn({out}, in), false);
  Define(m, std::string("  return torch.linear(x, self.weight, ") + (bias ? "self.bias" : "None") +
                ")\n");
  return m;
}

Module Conv(SpecFields& f, const std::shared_ptr<torch::jit::CompilationUnit>& unit, size_t dims) {
  int64_t in = f.PositiveInt("in_channels");
  int64_t out = f.PositiveInt("out_channels");
  std::vector<int64_t> kernel = f.IntOrList("kernel_size", dims, 1, {});
  std::vector<int64_t> stride = f.IntOrList("stride", dims, 1, std::vector<int64_t>(dims, 1));
  std::vector<int64_t> padding = f.IntOrList("padding", dims, 0, std::vector<int64_t>(dims, 0));
  std::vector<int64_t> dilation = f.IntOrList("dilation", dims, 1, std::vector<int64_t>(dims, 1));
  int64_t groups = f.Int("groups", 1, 1);
  bool bias = f.Bool("bias", true);
  if (in % groups != 0 || out % groups != 0) {
    f.Fail("groups", "must divide in_channels and out_channels");
  }
  std::vector<int64_t> shape = {out, in / groups};
  int64_t fan_in = in / groups;
  for (int64_t k : kernel) {
    shape.push_back(k);
    fan_in *= k;
  }
  Module m = NewModule(unit, dims == 1 ? "Conv1d" : "Conv2d");
  m.register_parameter("weight", UniformFanIn(shape, fan_in), false);
  if (bias) m.register_parameter("bias", UniformFanIn({out}, fan_in), false);
  Define(m, std::string("  return torch.conv") + (dims == 1 ? "1d" : "2d") + "(x, self.weight, " +
                (bias ? "self.bias" : "None") + ", " + List(stride) + ", " + List(padding) +
                ", " + List(dilation) + ", " + std::to_string(groups) + ")\n");
  return m;
}

Module Pool2d(SpecFields& f, const std::shared_ptr<torch::jit::CompilationUnit>& unit, bool max) {
  std::vector<int64_t> kernel = f.IntOrList("kernel_size", 2, 1, {});
  std::vector<int64_t> stride = f.IntOrList("stride", 2, 1, kernel);
  std::vector<int64_t> padding = f.IntOrList("padding", 2, 0, {0, 0});
  bool ceil_mode = f.Bool("ceil_mode", false);
  std::string ceil = ceil_mode ? "True" : "False";
  if (max) {
    std::vector<int64_t> dilation = f.IntOrList("dilation", 2, 1, {1, 1});
    Module m = NewModule(unit, "MaxPool2d");
    Define(m, "  return torch.max_pool2d(x, " + List(kernel) + ", " + List(stride) + ", " +
                  List(padding) + ", " + List(dilation) + ", " + ceil + ")\n");
    return m;
  }
  bool count_include_pad = f.Bool("count_include_pad", true);
  Module m = NewModule(unit, "AvgPool2d");
  Define(m, "  return torch.avg_pool2d(x, " + List(kernel) + ", " + List(stride) + ", " +
                List(padding) + ", " + ceil + ", " + (count_include_pad ? "True" : "False") +
                ", None)\n");
  return m;
}

Module BatchNorm(SpecFields& f, const std::shared_ptr<torch::jit::CompilationUnit>& unit,
                 size_t dims) {
  int64_t n = f.PositiveInt("num_features");
  double eps = f.Number("eps", 1e-5, 0, 1);
  double momentum = f.Number("momentum", 0.1, 0, 1);
  bool affine = f.Bool("affine", true);
  bool track = f.Bool("track_running_stats", true);
  Module m = NewModule(unit, dims == 1 ? "BatchNorm1d" : "BatchNorm2d");
  if (affine) {
    m.register_parameter("weight", torch::ones({n}), false);
    m.register_parameter("bias", torch::zeros({n}), false);
  }
  std::string weights = affine ? "self.weight, self.bias" : "None, None";
  // An assert: the C++ TorchScript compiler knows no exception classes to raise.
  std::string want = dims == 1 ? "x.dim() == 2 or x.dim() == 3" : "x.dim() == 4";
  std::string check = "  assert " + want + ", \"batch_norm" + std::to_string(dims) +
                      "d expects a " + (dims == 1 ? "2-D or 3-D" : "4-D") + " input\"\n";
  if (track) {
    m.register_buffer("running_mean", torch::zeros({n}));
    m.register_buffer("running_var", torch::ones({n}));
    m.register_buffer("num_batches_tracked", torch::zeros({}, torch::kLong));
    Define(m, check +
                  "  if self.training:\n"
                  "    self.num_batches_tracked.add_(1)\n"
                  "  return torch.batch_norm(x, " +
                  weights + ", self.running_mean, self.running_var, self.training, " +
                  Float(momentum) + ", " + Float(eps) + ", False)\n");
  } else {
    Define(m, check + "  return torch.batch_norm(x, " + weights + ", None, None, True, " +
                  Float(momentum) + ", " + Float(eps) + ", False)\n");
  }
  return m;
}

Module LayerNorm(SpecFields& f, const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  std::vector<int64_t> shape = f.PositiveList("normalized_shape");
  double eps = f.Number("eps", 1e-5, 0, 1);
  bool affine = f.Bool("elementwise_affine", true);
  Module m = NewModule(unit, "LayerNorm");
  if (affine) {
    m.register_parameter("weight", torch::ones(shape), false);
    m.register_parameter("bias", torch::zeros(shape), false);
  }
  Define(m, "  return torch.layer_norm(x, " + List(shape) + ", " +
                (affine ? "self.weight, self.bias" : "None, None") + ", " + Float(eps) +
                ", False)\n");
  return m;
}

Module Embedding(SpecFields& f, const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  int64_t num = f.PositiveInt("num_embeddings");
  int64_t dim = f.PositiveInt("embedding_dim");
  std::optional<int64_t> padding_idx = f.OptionalInt("padding_idx");
  if (padding_idx && (*padding_idx < -num || *padding_idx >= num)) {
    f.Fail("padding_idx", "must be within num_embeddings");
  }
  if (padding_idx && *padding_idx < 0) *padding_idx += num;
  torch::Tensor weight = torch::randn({num, dim});
  if (padding_idx) {
    torch::NoGradGuard no_grad;
    weight[*padding_idx].zero_();
  }
  Module m = NewModule(unit, "Embedding");
  m.register_parameter("weight", weight, false);
  // Features arrive as floats; the indices are their integer values.
  Define(m, "  return torch.embedding(self.weight, x.long(), " +
                std::to_string(padding_idx.value_or(-1)) + ", False, False)\n");
  return m;
}

Module Simple(const std::shared_ptr<torch::jit::CompilationUnit>& unit, const char* name,
              const std::string& body) {
  Module m = NewModule(unit, name);
  Define(m, body);
  return m;
}

using Builder = std::function<Module(SpecFields&, const std::shared_ptr<torch::jit::CompilationUnit>&)>;

const std::map<std::string, Builder>& Builders() {
  using Unit = std::shared_ptr<torch::jit::CompilationUnit>;
  static const std::map<std::string, Builder> builders = {
      {"linear", Linear},
      {"conv1d", [](SpecFields& f, const Unit& u) { return Conv(f, u, 1); }},
      {"conv2d", [](SpecFields& f, const Unit& u) { return Conv(f, u, 2); }},
      {"max_pool2d", [](SpecFields& f, const Unit& u) { return Pool2d(f, u, true); }},
      {"avg_pool2d", [](SpecFields& f, const Unit& u) { return Pool2d(f, u, false); }},
      {"batch_norm1d", [](SpecFields& f, const Unit& u) { return BatchNorm(f, u, 1); }},
      {"batch_norm2d", [](SpecFields& f, const Unit& u) { return BatchNorm(f, u, 2); }},
      {"layer_norm", LayerNorm},
      {"embedding", Embedding},
      {"flatten",
       [](SpecFields& f, const Unit& u) {
         int64_t start = f.Int("start_dim", 1, -8);
         int64_t end = f.Int("end_dim", -1, -8);
         return Simple(u, "Flatten",
                       "  return torch.flatten(x, " + std::to_string(start) + ", " +
                           std::to_string(end) + ")\n");
       }},
      {"reshape",
       [](SpecFields& f, const Unit& u) {
         // Per-row shape, as torch.nn.Unflatten(1, shape) after a flat input.
         std::vector<int64_t> shape = f.PositiveList("shape");
         std::string dims = List(shape).substr(1);
         return Simple(u, "Reshape", "  return torch.reshape(x, [x.size(0), " + dims + ")\n");
       }},
      {"dropout",
       [](SpecFields& f, const Unit& u) {
         double p = f.Number("p", 0.5, 0, 1);
         return Simple(u, "Dropout",
                       "  return torch.dropout(x, " + Float(p) + ", self.training)\n");
       }},
      {"relu", [](SpecFields&, const Unit& u) { return Simple(u, "ReLU", "  return torch.relu(x)\n"); }},
      {"leaky_relu",
       [](SpecFields& f, const Unit& u) {
         double slope = f.Number("negative_slope", 0.01, -1e9, 1e9);
         return Simple(u, "LeakyReLU",
                       "  return torch.leaky_relu(x, " + Float(slope) + ")\n");
       }},
      {"gelu",
       [](SpecFields& f, const Unit& u) {
         std::string approximate = f.String("approximate", "none", {"none", "tanh"});
         return Simple(u, "GELU",
                       "  return torch.gelu(x, approximate=\"" + approximate + "\")\n");
       }},
      {"tanh", [](SpecFields&, const Unit& u) { return Simple(u, "Tanh", "  return torch.tanh(x)\n"); }},
      {"sigmoid",
       [](SpecFields&, const Unit& u) { return Simple(u, "Sigmoid", "  return torch.sigmoid(x)\n"); }},
      {"softmax",
       [](SpecFields& f, const Unit& u) {
         int64_t dim = f.Int("dim", 1, -8);
         return Simple(u, "Softmax", "  return torch.softmax(x, " + std::to_string(dim) + ")\n");
       }},
      {"log_softmax",
       [](SpecFields& f, const Unit& u) {
         int64_t dim = f.Int("dim", 1, -8);
         return Simple(u, "LogSoftmax",
                       "  return torch.log_softmax(x, " + std::to_string(dim) + ")\n");
       }},
  };
  return builders;
}

}  // namespace

const char* KnownLayerTypes() {
  return "linear, conv1d, conv2d, max_pool2d, avg_pool2d, flatten, reshape, dropout, "
         "batch_norm1d, batch_norm2d, layer_norm, embedding, relu, leaky_relu, gelu, tanh, "
         "sigmoid, softmax, log_softmax";
}

Module BuildLayer(const json& layer, size_t index,
                  const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  std::string context = "layer " + std::to_string(index);
  std::string type = SpecType(layer, context);
  auto it = Builders().find(type);
  if (it == Builders().end()) {
    throw SpecError(context + ": unknown type \"" + type + "\"; known: " + KnownLayerTypes());
  }
  static const json kNoFields = json::object();
  SpecFields fields(layer.is_string() ? kNoFields : layer, context + " (" + type + ")");
  Module m = it->second(fields, unit);
  fields.Done();
  return m;
}

}  // namespace sparktorch
