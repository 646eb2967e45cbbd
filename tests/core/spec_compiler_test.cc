#include "core/model/spec_compiler.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/layers.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;
using Shapes = std::map<std::string, std::vector<int64_t>>;

// The 784-256-256-10 MLP of examples/fashion_mnist_mlp.json.
const char* kMlpSpec = R"({
  "name": "fashion_mnist_mlp",
  "layers": [
    {"type": "linear", "in_features": 784, "out_features": 256},
    {"type": "relu"},
    {"type": "linear", "in_features": 256, "out_features": 256},
    {"type": "relu"},
    {"type": "linear", "in_features": 256, "out_features": 10}
  ],
  "loss": "cross_entropy",
  "optimizer": {"type": "adam", "lr": 0.001}
})";

// The CNN of examples/fashion_mnist_cnn.json.
const char* kCnnSpec = R"({
  "name": "fashion_mnist_cnn",
  "input_shape": [1, 28, 28],
  "layers": [
    {"type": "conv2d", "in_channels": 1, "out_channels": 16, "kernel_size": 3, "padding": 1},
    {"type": "relu"},
    {"type": "max_pool2d", "kernel_size": 2},
    {"type": "conv2d", "in_channels": 16, "out_channels": 32, "kernel_size": 3, "padding": 1},
    {"type": "relu"},
    {"type": "max_pool2d", "kernel_size": 2},
    {"type": "flatten"},
    {"type": "linear", "in_features": 1568, "out_features": 128},
    {"type": "relu"},
    {"type": "linear", "in_features": 128, "out_features": 10}
  ],
  "loss": "cross_entropy",
  "optimizer": {"type": "adam", "lr": 0.001}
})";

CompiledSpec Compile(const std::string& spec_text, std::vector<int64_t> input_shape = {},
                     int64_t num_features = 0) {
  return CompileSpec(json::parse(spec_text), std::move(input_shape), num_features);
}

// A spec of one layer over rows of `input_shape`.
CompiledSpec CompileLayer(const std::string& layer_text, std::vector<int64_t> input_shape) {
  json spec = {{"layers", json::array({json::parse(layer_text)})}};
  return CompileSpec(spec, std::move(input_shape), 0);
}

Shapes ParameterShapes(const torch::jit::Module& m) {
  Shapes shapes;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) shapes[p.name] = p.value.sizes().vec();
  return shapes;
}

Shapes BufferShapes(const torch::jit::Module& m) {
  Shapes shapes;
  for (const auto& b : m.named_buffers(/*recurse=*/true)) shapes[b.name] = b.value.sizes().vec();
  return shapes;
}

torch::Tensor Parameter(const torch::jit::Module& m, const std::string& name) {
  for (const auto& p : m.named_parameters(/*recurse=*/true)) {
    if (p.name == name) return p.value;
  }
  ADD_FAILURE() << "no parameter " << name;
  return torch::Tensor();
}

torch::Tensor Buffer(const torch::jit::Module& m, const std::string& name) {
  for (const auto& b : m.named_buffers(/*recurse=*/true)) {
    if (b.name == name) return b.value;
  }
  ADD_FAILURE() << "no buffer " << name;
  return torch::Tensor();
}

torch::Tensor Forward(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  return m.forward({x}).toTensor();
}

// What CompileSpec throws as a SpecError for `spec_text`, or "" when it does not throw.
std::string SpecErrorOf(const std::string& spec_text, std::vector<int64_t> input_shape = {},
                        int64_t num_features = 0) {
  try {
    Compile(spec_text, std::move(input_shape), num_features);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(SpecCompiler, LinearHasTorchNnParameterNamesAndShapes) {
  CompiledSpec c = CompileLayer(R"({"type": "linear", "in_features": 5, "out_features": 3})", {});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {3, 5}}, {"0.bias", {3}}}));
  EXPECT_TRUE(BufferShapes(c.module).empty());
  EXPECT_EQ(c.input_shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{3}));
}

TEST(SpecCompiler, LinearWithoutBiasHasOnlyWeight) {
  CompiledSpec c = CompileLayer(
      R"({"type": "linear", "in_features": 5, "out_features": 3, "bias": false})", {});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {3, 5}}}));
  torch::Tensor x = torch::ones({2, 5});
  torch::Tensor w = Parameter(c.module, "0.weight");
  EXPECT_TRUE(torch::allclose(Forward(c.module, x), x.matmul(w.t())));
}

TEST(SpecCompiler, Conv2dWeightIsOutByInOverGroupsByKernel) {
  CompiledSpec c = CompileLayer(R"({"type": "conv2d", "in_channels": 4, "out_channels": 6,
                                    "kernel_size": [3, 2], "groups": 2})",
                                {4, 8, 8});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {6, 2, 3, 2}}, {"0.bias", {6}}}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{6, 6, 7}));
}

TEST(SpecCompiler, Conv2dHonoursStridePaddingAndDilation) {
  CompiledSpec c = CompileLayer(R"({"type": "conv2d", "in_channels": 1, "out_channels": 2,
                                    "kernel_size": 3, "stride": 2, "padding": 1, "dilation": 1})",
                                {1, 9, 9});
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{2, 5, 5}));
  // Against LibTorch's own convolution with the same weights.
  torch::Tensor x = torch::randn({2, 1, 9, 9});
  torch::Tensor want = torch::conv2d(x, Parameter(c.module, "0.weight"),
                                     Parameter(c.module, "0.bias"), {2, 2}, {1, 1});
  EXPECT_TRUE(torch::allclose(Forward(c.module, x), want));
}

TEST(SpecCompiler, Conv1dWeightIsOutByInByKernel) {
  CompiledSpec c = CompileLayer(
      R"({"type": "conv1d", "in_channels": 2, "out_channels": 3, "kernel_size": 3})", {2, 10});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {3, 2, 3}}, {"0.bias", {3}}}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{3, 8}));
}

TEST(SpecCompiler, ConvInitialisationIsBoundedByFanIn) {
  // torch.nn.Conv2d: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in/groups * kh * kw = 4*3*3.
  torch::manual_seed(1);
  CompiledSpec c = CompileLayer(
      R"({"type": "conv2d", "in_channels": 4, "out_channels": 64, "kernel_size": 3})", {4, 5, 5});
  const double bound = 1.0 / 6.0;
  torch::Tensor w = Parameter(c.module, "0.weight");
  EXPECT_LE(w.abs().max().item<double>(), bound);
  EXPECT_GT(w.abs().max().item<double>(), 0.9 * bound);  // 2304 draws fill the range
  EXPECT_LE(Parameter(c.module, "0.bias").abs().max().item<double>(), bound);
}

TEST(SpecCompiler, BatchNorm2dHasTorchNnParametersAndBuffers) {
  CompiledSpec c = CompileLayer(R"({"type": "batch_norm2d", "num_features": 4})", {4, 3, 3});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {4}}, {"0.bias", {4}}}));
  EXPECT_EQ(BufferShapes(c.module), (Shapes{{"0.running_mean", {4}},
                                            {"0.running_var", {4}},
                                            {"0.num_batches_tracked", {}}}));
  EXPECT_EQ(Buffer(c.module, "0.num_batches_tracked").scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(Parameter(c.module, "0.weight"), torch::ones({4})));
  EXPECT_TRUE(torch::equal(Parameter(c.module, "0.bias"), torch::zeros({4})));
  EXPECT_TRUE(torch::equal(Buffer(c.module, "0.running_mean"), torch::zeros({4})));
  EXPECT_TRUE(torch::equal(Buffer(c.module, "0.running_var"), torch::ones({4})));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{4, 3, 3}));
}

TEST(SpecCompiler, BatchNorm1dWithoutAffineOrTrackingHasNoState) {
  CompiledSpec c = CompileLayer(
      R"({"type": "batch_norm1d", "num_features": 3, "affine": false,
          "track_running_stats": false})",
      {3});
  EXPECT_TRUE(ParameterShapes(c.module).empty());
  EXPECT_TRUE(BufferShapes(c.module).empty());
}

TEST(SpecCompiler, BatchNormUpdatesRunningStatsInTrainModeOnly) {
  CompiledSpec c = CompileLayer(R"({"type": "batch_norm1d", "num_features": 2})", {2});
  torch::Tensor x = torch::tensor({{1.0f, 2.0f}, {3.0f, 6.0f}});
  ASSERT_TRUE(c.module.is_training());  // a compiled module starts in training mode
  torch::Tensor y = Forward(c.module, x);
  // Batch statistics: mean {2, 4}, biased variance {1, 4}: normalised to -1, +1.
  EXPECT_TRUE(torch::allclose(y, torch::tensor({{-1.0f, -1.0f}, {1.0f, 1.0f}}), 1e-4, 1e-4));
  // momentum 0.1: running_mean = 0.1 * mean; running_var = 0.9 + 0.1 * unbiased var {2, 8}.
  EXPECT_TRUE(torch::allclose(Buffer(c.module, "0.running_mean"), torch::tensor({0.2f, 0.4f})));
  EXPECT_TRUE(torch::allclose(Buffer(c.module, "0.running_var"), torch::tensor({1.1f, 1.7f})));
  EXPECT_EQ(Buffer(c.module, "0.num_batches_tracked").item<int64_t>(), 1);

  c.module.eval();
  torch::Tensor z = Forward(c.module, x);
  EXPECT_TRUE(torch::allclose(Buffer(c.module, "0.running_mean"), torch::tensor({0.2f, 0.4f})));
  EXPECT_TRUE(torch::allclose(Buffer(c.module, "0.running_var"), torch::tensor({1.1f, 1.7f})));
  EXPECT_EQ(Buffer(c.module, "0.num_batches_tracked").item<int64_t>(), 1);
  // Evaluation normalises with the running statistics.
  torch::Tensor want = (x - torch::tensor({0.2f, 0.4f})) / torch::sqrt(torch::tensor({1.1f, 1.7f}) + 1e-5);
  EXPECT_TRUE(torch::allclose(z, want, 1e-5, 1e-5));
}

TEST(SpecCompiler, CompilingLeavesBatchNormStatsUntouched) {
  // The shape check runs a zero batch through every layer; it must not count as a batch.
  CompiledSpec c = CompileLayer(R"({"type": "batch_norm2d", "num_features": 2})", {2, 2, 2});
  EXPECT_EQ(Buffer(c.module, "0.num_batches_tracked").item<int64_t>(), 0);
  EXPECT_TRUE(torch::equal(Buffer(c.module, "0.running_var"), torch::ones({2})));
}

TEST(SpecCompiler, LayerNormHasWeightAndBiasOfNormalizedShape) {
  CompiledSpec c = CompileLayer(R"({"type": "layer_norm", "normalized_shape": [3, 4]})", {3, 4});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {3, 4}}, {"0.bias", {3, 4}}}));
  torch::Tensor x = torch::randn({2, 3, 4});
  EXPECT_TRUE(torch::allclose(Forward(c.module, x), torch::layer_norm(x, {3, 4}), 1e-5, 1e-5));
}

TEST(SpecCompiler, EmbeddingLooksUpRowsByFeatureValue) {
  CompiledSpec c = CompileLayer(
      R"({"type": "embedding", "num_embeddings": 10, "embedding_dim": 4, "padding_idx": 0})", {5});
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {10, 4}}}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{5, 4}));
  torch::Tensor w = Parameter(c.module, "0.weight");
  EXPECT_TRUE(torch::equal(w[0], torch::zeros({4})));  // padding_idx row starts at zero
  torch::Tensor y = Forward(c.module, torch::tensor({{3.0f, 9.0f, 0.0f, 3.0f, 1.0f}}));
  EXPECT_TRUE(torch::equal(y[0][0], w[3]));
  EXPECT_TRUE(torch::equal(y[0][1], w[9]));
  EXPECT_TRUE(torch::equal(y[0][3], w[3]));
}

TEST(SpecCompiler, ParameterFreeLayersComputeWhatTorchComputes) {
  torch::Tensor x = torch::randn({2, 6});
  struct Case {
    const char* layer;
    torch::Tensor want;
  };
  const Case cases[] = {
      {R"({"type": "relu"})", torch::relu(x)},
      {R"("relu")", torch::relu(x)},
      {R"({"type": "leaky_relu", "negative_slope": 0.2})", torch::leaky_relu(x, 0.2)},
      {R"({"type": "gelu"})", torch::gelu(x)},
      {R"({"type": "gelu", "approximate": "tanh"})", torch::gelu(x, "tanh")},
      {R"({"type": "tanh"})", torch::tanh(x)},
      {R"({"type": "sigmoid"})", torch::sigmoid(x)},
      {R"({"type": "softmax"})", torch::softmax(x, 1)},
      {R"({"type": "log_softmax", "dim": -1})", torch::log_softmax(x, -1)},
      {R"({"type": "dropout", "p": 0.3})", x},  // evaluation mode
      {R"({"type": "flatten"})", x},
      {R"({"type": "reshape", "shape": [2, 3]})", x.reshape({2, 2, 3})},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.layer);
    CompiledSpec c = CompileLayer(tc.layer, {6});
    EXPECT_TRUE(ParameterShapes(c.module).empty());
    c.module.eval();
    EXPECT_TRUE(torch::allclose(Forward(c.module, x), tc.want, 1e-6, 1e-6));
    std::vector<int64_t> row_shape(tc.want.sizes().begin() + 1, tc.want.sizes().end());
    EXPECT_EQ(c.output_shape, row_shape);
  }
}

TEST(SpecCompiler, PoolingLayersComputeWhatTorchComputes) {
  torch::Tensor x = torch::randn({2, 3, 6, 6});
  CompiledSpec max = CompileLayer(R"({"type": "max_pool2d", "kernel_size": 2})", {3, 6, 6});
  EXPECT_EQ(max.output_shape, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_TRUE(torch::equal(Forward(max.module, x), torch::max_pool2d(x, {2, 2})));
  CompiledSpec avg = CompileLayer(
      R"({"type": "avg_pool2d", "kernel_size": 3, "stride": 2, "padding": 1})", {3, 6, 6});
  EXPECT_EQ(avg.output_shape, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_TRUE(torch::allclose(Forward(avg.module, x), torch::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1})));
}

TEST(SpecCompiler, EveryKnownLayerTypeCompiles) {
  // The minimal layer of each type named in KnownLayerTypes(), with rows that fit it.
  const std::map<std::string, std::pair<std::string, std::vector<int64_t>>> minimal = {
      {"linear", {R"({"type": "linear", "in_features": 4, "out_features": 2})", {4}}},
      {"conv1d",
       {R"({"type": "conv1d", "in_channels": 1, "out_channels": 2, "kernel_size": 2})", {1, 4}}},
      {"conv2d",
       {R"({"type": "conv2d", "in_channels": 1, "out_channels": 2, "kernel_size": 2})",
        {1, 4, 4}}},
      {"max_pool2d", {R"({"type": "max_pool2d", "kernel_size": 2})", {1, 4, 4}}},
      {"avg_pool2d", {R"({"type": "avg_pool2d", "kernel_size": 2})", {1, 4, 4}}},
      {"flatten", {R"({"type": "flatten"})", {1, 4, 4}}},
      {"reshape", {R"({"type": "reshape", "shape": [2, 2]})", {4}}},
      {"dropout", {R"({"type": "dropout"})", {4}}},
      {"batch_norm1d", {R"({"type": "batch_norm1d", "num_features": 4})", {4}}},
      {"batch_norm2d", {R"({"type": "batch_norm2d", "num_features": 1})", {1, 4, 4}}},
      {"layer_norm", {R"({"type": "layer_norm", "normalized_shape": 4})", {4}}},
      {"embedding", {R"({"type": "embedding", "num_embeddings": 3, "embedding_dim": 2})", {4}}},
      {"relu", {R"({"type": "relu"})", {4}}},
      {"leaky_relu", {R"({"type": "leaky_relu"})", {4}}},
      {"gelu", {R"({"type": "gelu"})", {4}}},
      {"tanh", {R"({"type": "tanh"})", {4}}},
      {"sigmoid", {R"({"type": "sigmoid"})", {4}}},
      {"softmax", {R"({"type": "softmax"})", {4}}},
      {"log_softmax", {R"({"type": "log_softmax"})", {4}}},
  };
  std::stringstream known(KnownLayerTypes());
  std::string type;
  int count = 0;
  while (std::getline(known >> std::ws, type, ',')) {
    SCOPED_TRACE(type);
    ++count;
    auto it = minimal.find(type);
    ASSERT_NE(it, minimal.end()) << "no test layer for " << type;
    EXPECT_NO_THROW(CompileLayer(it->second.first, it->second.second));
  }
  EXPECT_EQ(count, static_cast<int>(minimal.size()));
}

TEST(SpecCompiler, SubmodulesAreNamedByPositionInOrder) {
  CompiledSpec c = Compile(kCnnSpec);
  std::vector<std::string> names;
  for (const auto& child : c.module.named_children()) names.push_back(child.name);
  EXPECT_EQ(names, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
}

TEST(SpecCompiler, FashionMnistMlpHasPytorchStateDictAndTenOutputs) {
  CompiledSpec c = Compile(kMlpSpec);
  EXPECT_EQ(c.input_shape, (std::vector<int64_t>{784}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {256, 784}},
                                               {"0.bias", {256}},
                                               {"2.weight", {256, 256}},
                                               {"2.bias", {256}},
                                               {"4.weight", {10, 256}},
                                               {"4.bias", {10}}}));
  EXPECT_EQ(Forward(c.module, torch::zeros({3, 784})).sizes().vec(), (std::vector<int64_t>{3, 10}));
}

TEST(SpecCompiler, FashionMnistCnnHasPytorchStateDictAndTenOutputs) {
  CompiledSpec c = Compile(kCnnSpec);
  EXPECT_EQ(c.input_shape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(ParameterShapes(c.module), (Shapes{{"0.weight", {16, 1, 3, 3}},
                                               {"0.bias", {16}},
                                               {"3.weight", {32, 16, 3, 3}},
                                               {"3.bias", {32}},
                                               {"7.weight", {128, 1568}},
                                               {"7.bias", {128}},
                                               {"9.weight", {10, 128}},
                                               {"9.bias", {10}}}));
  torch::jit::Module m = c.module;
  EXPECT_EQ(ProbeOutputShape(m, {1, 28, 28}), (std::vector<int64_t>{10}));
}

TEST(SpecCompiler, LinearForwardIsInputTimesWeightTransposedPlusBias) {
  CompiledSpec c = CompileLayer(R"({"type": "linear", "in_features": 3, "out_features": 2})", {});
  {
    torch::NoGradGuard no_grad;
    Parameter(c.module, "0.weight").copy_(torch::tensor({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 0.0f}}));
    Parameter(c.module, "0.bias").copy_(torch::tensor({0.25f, -2.0f}));
  }
  torch::Tensor y = Forward(c.module, torch::tensor({{1.0f, 1.0f, 1.0f}, {2.0f, 0.0f, -1.0f}}));
  // Row 1: {1+2+3+0.25, -1+0.5+0-2}; row 2: {2+0-3+0.25, -2+0+0-2}.
  EXPECT_TRUE(torch::equal(y, torch::tensor({{6.25f, -2.5f}, {-0.75f, -4.0f}})));
}

TEST(SpecCompiler, DropoutIsIdentityInEvalAndDropsInTrain) {
  CompiledSpec c = CompileLayer(R"({"type": "dropout", "p": 0.5})", {1000});
  torch::Tensor x = torch::ones({4, 1000});
  c.module.eval();
  EXPECT_TRUE(torch::equal(Forward(c.module, x), x));
  c.module.train();
  torch::manual_seed(0);
  torch::Tensor y = Forward(c.module, x);
  int64_t zeros = y.eq(0).sum().item<int64_t>();
  int64_t twos = y.eq(2).sum().item<int64_t>();  // kept values are scaled by 1/(1-p)
  EXPECT_EQ(zeros + twos, 4000);
  EXPECT_GT(zeros, 1600);
  EXPECT_LT(zeros, 2400);
}

TEST(SpecCompiler, ExplicitInputShapeWinsOverSpecInputShape) {
  const char* spec = R"({"input_shape": [2, 2], "layers": [{"type": "flatten"}]})";
  EXPECT_EQ(Compile(spec, {4}, 9).input_shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(Compile(spec, {4}, 9).output_shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(Compile(spec, {}, 9).input_shape, (std::vector<int64_t>{2, 2}));
}

TEST(SpecCompiler, SpecInputShapeWinsOverFirstLinearInFeatures) {
  CompiledSpec c = Compile(
      R"({"input_shape": [1, 4],
          "layers": [{"type": "linear", "in_features": 4, "out_features": 3}]})",
      {}, 9);
  EXPECT_EQ(c.input_shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{1, 3}));
}

TEST(SpecCompiler, FirstLinearInFeaturesWinsOverNumFeatures) {
  CompiledSpec c = Compile(
      R"({"layers": [{"type": "linear", "in_features": 4, "out_features": 3}]})", {}, 9);
  EXPECT_EQ(c.input_shape, (std::vector<int64_t>{4}));
}

TEST(SpecCompiler, NumFeaturesIsTheLastResort) {
  CompiledSpec c = Compile(R"({"layers": [{"type": "relu"}]})", {}, 7);
  EXPECT_EQ(c.input_shape, (std::vector<int64_t>{7}));
  EXPECT_EQ(c.output_shape, (std::vector<int64_t>{7}));
}

TEST(SpecCompiler, RefusesUnknownInputShape) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "relu"}]})"),
            "spec: the input shape is unknown; give \"input_shape\" in the spec or --input-shape");
}

TEST(SpecCompiler, RefusesBadSpecInputShape) {
  EXPECT_EQ(SpecErrorOf(R"({"input_shape": [1, 0], "layers": ["relu"]})"),
            "spec: \"input_shape\" must be a list of positive integers, got [1,0]");
}

TEST(SpecCompiler, RefusesUnknownLayerType) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": ["relu", {"type": "rellu"}]})", {4}),
            "layer 1: unknown type \"rellu\"; known: linear, conv1d, conv2d, max_pool2d, "
            "avg_pool2d, flatten, reshape, dropout, batch_norm1d, batch_norm2d, layer_norm, "
            "embedding, relu, leaky_relu, gelu, tanh, sigmoid, softmax, log_softmax");
}

TEST(SpecCompiler, RefusesUnknownLayerField) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": ["relu", {"type": "dropout", "P": 0.2}]})", {4}),
            "layer 1 (dropout): unknown field \"P\"");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "linear", "in_features": 4, "in_feature": 4,
                                        "out_features": 2}]})"),
            "layer 0 (linear): unknown field \"in_feature\"");
}

TEST(SpecCompiler, MisspeltRequiredFieldIsReportedAsMissing) {
  // With the number of features known, the misspelt in_features is reported by name.
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "linear", "in_feature": 4,
                                        "out_features": 2}]})",
                        {}, 4),
            "layer 0 (linear): \"in_features\" is required (a positive integer); "
            "unread fields: in_feature, out_features");
}

// With no input shape from elsewhere, a misspelt first layer field still names the layer.
TEST(SpecCompiler, MisspeltFirstLinearFieldIsNamedEvenWithoutNumFeatures) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "linear", "in_feature": 4,
                                        "out_features": 2}]})"),
            "layer 0 (linear): \"in_features\" is required (a positive integer); "
            "unread fields: in_feature, out_features");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "linear", "in_features": "4",
                                        "out_features": 2}]})"),
            "layer 0 (linear): \"in_features\" must be a positive integer, got \"4\"");
}

TEST(SpecCompiler, RefusesMissingRequiredField) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "conv2d", "in_channels": 1,
                                        "out_channels": 2}]})",
                        {1, 4, 4}),
            "layer 0 (conv2d): \"kernel_size\" is required (an integer or a list of 2)");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "layer_norm"}]})", {4}),
            "layer 0 (layer_norm): \"normalized_shape\" is required (a list of positive integers)");
}

TEST(SpecCompiler, RefusesFieldOfWrongType) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "linear", "in_features": 4,
                                        "out_features": "2"}]})"),
            "layer 0 (linear): \"out_features\" must be a positive integer, got \"2\"");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "linear", "in_features": 4, "out_features": 2,
                                        "bias": "no"}]})"),
            "layer 0 (linear): \"bias\" must be true or false, got \"no\"");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "conv2d", "in_channels": 1, "out_channels": 2,
                                        "kernel_size": -1}]})",
                        {1, 4, 4}),
            "layer 0 (conv2d): \"kernel_size\" must be an integer >= 1 or a list of 2 such "
            "integers, got -1");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "dropout", "p": 1.5}]})", {4}),
            "layer 0 (dropout): \"p\" must be a number [0.0, 1.0], got 1.5");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "gelu", "approximate": "fast"}]})", {4}),
            "layer 0 (gelu): \"approximate\" must be one of none, tanh, got \"fast\"");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"type": "conv2d", "in_channels": 3, "out_channels": 4,
                                        "kernel_size": 1, "groups": 2}]})",
                        {3, 4, 4}),
            "layer 0 (conv2d): \"groups\" must divide in_channels and out_channels");
}

TEST(SpecCompiler, RefusesLayerWithoutType) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": [{"in_features": 4}]})", {4}),
            "layer 0: \"type\" is required (a string)");
  EXPECT_EQ(SpecErrorOf(R"({"layers": [7]})", {4}),
            "layer 0: expected a name or an object with a \"type\", got 7");
}

TEST(SpecCompiler, RefusesLayerThatDoesNotFitItsInput) {
  std::string message = SpecErrorOf(
      R"({"layers": [{"type": "linear", "in_features": 4, "out_features": 3}, {"type": "relu"},
                     {"type": "linear", "in_features": 5, "out_features": 2}]})");
  const std::string prefix = "layer 2 (linear): does not fit its input of shape [";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_NE(message.find("mat1 and mat2 shapes cannot be multiplied (2x3 and 5x2)"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line, no backtrace
}

TEST(SpecCompiler, RefusesConvOverRowsOfTheWrongRank) {
  std::string message = SpecErrorOf(
      R"({"layers": [{"type": "conv2d", "in_channels": 1, "out_channels": 2, "kernel_size": 3}]})",
      {784});
  const std::string prefix = "layer 0 (conv2d): does not fit its input of shape [";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

// The misfit message speaks of per-row shapes, as every other message does.
TEST(SpecCompiler, MisfitMessageShowsThePerRowShape) {
  std::string message = SpecErrorOf(
      R"({"layers": [{"type": "linear", "in_features": 4, "out_features": 3},
                     {"type": "linear", "in_features": 5, "out_features": 2}]})");
  const std::string prefix = "layer 1 (linear): does not fit its input of shape [3]: ";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

TEST(SpecCompiler, RefusesEmptyLayers) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": []})", {4}),
            "spec: \"layers\" must be a non-empty list of layers");
  EXPECT_EQ(SpecErrorOf(R"({"loss": "mse"})", {4}),
            "spec: \"layers\" must be a non-empty list of layers");
}

TEST(SpecCompiler, RefusesUnknownTopLevelField) {
  EXPECT_EQ(SpecErrorOf(R"({"layers": ["relu"], "optimiser": {"type": "sgd"}})", {4}),
            "spec: unknown field \"optimiser\"; known: layers, input_shape, loss, optimizer, "
            "lr_schedule, name, description");
}

TEST(SpecCompiler, RefusesSpecThatIsNotAnObject) {
  EXPECT_EQ(SpecErrorOf(R"([{"type": "relu"}])", {4}),
            "spec: expected a JSON object with \"layers\"");
}

TEST(SpecCompiler, SameSeedGivesIdenticalInitialWeights) {
  torch::manual_seed(42);
  CompiledSpec a = Compile(kCnnSpec);
  torch::manual_seed(42);
  CompiledSpec b = Compile(kCnnSpec);
  torch::manual_seed(43);
  CompiledSpec c = Compile(kCnnSpec);
  auto pa = a.module.named_parameters();
  auto pb = b.module.named_parameters();
  auto pc = c.module.named_parameters();
  auto ib = pb.begin();
  auto ic = pc.begin();
  int n = 0;
  for (const auto& p : pa) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(torch::equal(p.value, (*ib).value));
    EXPECT_FALSE(torch::equal(p.value, (*ic).value));
    ++ib;
    ++ic;
    ++n;
  }
  EXPECT_EQ(n, 8);
}

TEST(SpecCompiler, CompiledParametersRequireGradients) {
  CompiledSpec c = Compile(kMlpSpec);
  for (const auto& p : c.module.named_parameters()) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(p.value.requires_grad());
  }
}

TEST(ProbeOutputShape, RefusesRowsTheModelDoesNotTake) {
  CompiledSpec c = Compile(kMlpSpec);
  try {
    ProbeOutputShape(c.module, {5});
    FAIL() << "no SpecError";
  } catch (const SpecError& e) {
    std::string message = e.what();
    const std::string prefix = "the model does not take rows of shape 5: ";
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_TRUE(c.module.is_training());  // the probe restores the mode it found
}

}  // namespace
}  // namespace sparktorch
