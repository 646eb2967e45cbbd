#include "core/model/model_file.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "core/model/spec_compiler.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// A fresh directory for one test's files, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/model_file_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

const char* kSpec = R"({
  "layers": [
    {"type": "linear", "in_features": 6, "out_features": 4},
    {"type": "layer_norm", "normalized_shape": 4},
    {"type": "relu"},
    {"type": "linear", "in_features": 4, "out_features": 3}
  ],
  "loss": "cross_entropy"
})";

CompiledSpec CompileTestSpec() {
  torch::manual_seed(7);
  CompiledSpec compiled = CompileSpec(json::parse(kSpec), {}, 0);
  // A buffer, as batch norm's running statistics would be, must survive the round trip too.
  compiled.module.register_buffer("stats", torch::randn({3}));
  return compiled;
}

Manifest TestManifest() {
  Manifest m;
  m.sparktorch_version = "0.1.0-test";
  m.source = "spec";
  m.spec = json::parse(kSpec);
  m.input_shape = {6};
  m.output_shape = {3};
  m.row_format.kind = RowFormatKind::kCsv;
  m.row_format.num_features = 6;
  m.row_format.label_col = -1;
  m.row_format.delimiter = ';';
  m.row_format.header = true;
  m.row_format.id_col = 0;
  m.label_kind = "class";
  m.num_classes = 3;
  m.prediction = "probabilities";
  m.loss = {{"type", "cross_entropy"}, {"label_smoothing", 0.1}};
  m.optimizer = {{"type", "adam"}, {"lr", 0.001}};
  m.training = {{"epochs", 3}, {"batch_size", 32}};
  m.metrics = {{"train_loss", 0.25}, {"train_accuracy", 0.875}};
  return m;
}

std::string ModelErrorOf(const std::string& path) {
  try {
    ReadModelFile(path, torch::kCPU);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

std::string SpecErrorOfJsonFile(const std::string& path) {
  try {
    ReadJsonFile(path);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

void ExpectSameParametersAndBuffers(const torch::jit::Module& a, const torch::jit::Module& b) {
  auto pa = a.named_parameters();
  auto pb = b.named_parameters();
  std::vector<std::string> names_a, names_b;
  for (const auto& p : pa) names_a.push_back(p.name);
  for (const auto& p : pb) names_b.push_back(p.name);
  ASSERT_EQ(names_a, names_b);
  auto ib = pb.begin();
  for (const auto& p : pa) {
    EXPECT_TRUE(torch::equal(p.value, (*ib).value)) << p.name;
    ++ib;
  }
  auto ba = a.named_buffers();
  auto bb = b.named_buffers();
  auto jb = bb.begin();
  int buffers = 0;
  for (const auto& x : ba) {
    EXPECT_EQ(x.name, (*jb).name);
    EXPECT_TRUE(torch::equal(x.value, (*jb).value)) << x.name;
    ++jb;
    ++buffers;
  }
  EXPECT_EQ(buffers, 1);
}

TEST(ModelFile, WrittenModelReadsBackWithSameWeightsOutputAndManifest) {
  TempDir dir;
  CompiledSpec compiled = CompileTestSpec();
  Manifest manifest = TestManifest();
  const std::string path = dir.File("model.pt");
  WriteModelFile(path, compiled.module, manifest);
  EXPECT_FALSE(Exists(path + ".tmp"));

  ModelFile file = ReadModelFile(path, torch::kCPU);
  ExpectSameParametersAndBuffers(compiled.module, file.module);
  ASSERT_TRUE(file.manifest.has_value());
  EXPECT_EQ(ManifestToJson(*file.manifest), ManifestToJson(manifest));

  torch::NoGradGuard no_grad;
  compiled.module.eval();
  file.module.eval();
  torch::Tensor x = torch::randn({5, 6});
  EXPECT_TRUE(torch::equal(compiled.module.forward({x}).toTensor(),
                           file.module.forward({x}).toTensor()));
}

TEST(ModelFile, SerializedBytesAreAModelFile) {
  TempDir dir;
  CompiledSpec compiled = CompileTestSpec();
  Manifest manifest = TestManifest();
  const std::string path = dir.File("bytes.pt");
  WriteText(path, SerializeModel(compiled.module, manifest));
  ModelFile file = ReadModelFile(path, torch::kCPU);
  ExpectSameParametersAndBuffers(compiled.module, file.module);
  ASSERT_TRUE(file.manifest.has_value());
  EXPECT_EQ(ManifestToJson(*file.manifest), ManifestToJson(manifest));
}

TEST(ModelFile, ModelWithoutManifestReadsWithNoManifest) {
  TempDir dir;
  CompiledSpec compiled = CompileTestSpec();
  const std::string path = dir.File("plain.pt");
  compiled.module.save(path);  // as torch.jit.save does, with no extra files
  ModelFile file = ReadModelFile(path, torch::kCPU);
  EXPECT_FALSE(file.manifest.has_value());
  ExpectSameParametersAndBuffers(compiled.module, file.module);
}

TEST(ModelFile, RefusesFileThatIsNotAModelNamingThePath) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  WriteText(path, "this is not a model\n");
  std::string message = ModelErrorOf(path);
  const std::string prefix = path + ": not a TorchScript model file (";
  const std::string suffix = "); save one with torch.jit.script(net).save(path)";
  ASSERT_GE(message.size(), prefix.size() + suffix.size()) << message;
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_EQ(message.substr(message.size() - suffix.size()), suffix) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// Copies the TorchScript file `from` to `to` with `old_text` replaced by `new_text` in its code
// (and the code's debug records, which quote it, left out), as a file saved by a PyTorch that
// has other operators would be.
void CopyWithCodeEdited(const std::string& from, const std::string& to, const std::string& old_text,
                        const std::string& new_text) {
  caffe2::serialize::PyTorchStreamReader reader(from);
  caffe2::serialize::PyTorchStreamWriter writer(to);
  bool edited = false;
  for (const std::string& name : reader.getAllRecords()) {
    if (name.size() > 10 && name.substr(name.size() - 10) == ".debug_pkl") continue;
    auto [data, size] = reader.getRecord(name);
    std::string bytes(static_cast<const char*>(data.get()), size);
    const size_t at = bytes.find(old_text);
    if (name.rfind("code/", 0) == 0 && at != std::string::npos) {
      bytes.replace(at, old_text.size(), new_text);
      edited = true;
    }
    writer.writeRecord(name, bytes.data(), bytes.size());
  }
  writer.writeEndOfFile();
  ASSERT_TRUE(edited) << from << " has no code with " << old_text;
}

TEST(ModelFile, RefusesCodeThatCallsAnOperatorThisLibTorchLacksNamingIt) {
  TempDir dir;
  torch::jit::Module module("Net");
  module.define("def forward(self, x):\n  return torch.relu(x)\n");
  module.save(dir.File("relu.pt"));
  ASSERT_NO_THROW(ReadModelFile(dir.File("relu.pt"), torch::kCPU));
  const std::string path = dir.File("newer.pt");
  CopyWithCodeEdited(dir.File("relu.pt"), path, "torch.relu(", "torch.no_such_op(");
  EXPECT_EQ(ModelErrorOf(path),
            path + ": its TorchScript code does not compile with LibTorch " TORCH_VERSION
                   " (Unknown builtin op: aten::no_such_op.); a model scripted by a newer "
                   "PyTorch may call operators it lacks");
}

TEST(ModelFile, RefusesMissingFileNamingThePath) {
  TempDir dir;
  const std::string path = dir.File("absent.pt");
  EXPECT_EQ(ModelErrorOf(path), path + ": No such file or directory");
}

TEST(ModelFile, RefusesEmbeddedManifestThatIsNotJson) {
  TempDir dir;
  CompiledSpec compiled = CompileTestSpec();
  const std::string path = dir.File("bad_manifest.pt");
  compiled.module.save(path, {{kManifestFileName, "{not json"}});
  std::string message = ModelErrorOf(path);
  const std::string prefix = path + ": the embedded sparktorch.json is not JSON: ";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

TEST(ModelFile, RefusesManifestOfAnotherFormatVersionNamingThePath) {
  TempDir dir;
  CompiledSpec compiled = CompileTestSpec();
  const std::string path = dir.File("future.pt");
  compiled.module.save(path, {{kManifestFileName, R"({"format_version": 99})"}});
  EXPECT_EQ(ModelErrorOf(path),
            path + ": manifest: format_version 99 is not one this sparktorch reads (it reads 1)");
}

TEST(ModelFile, WriteIntoMissingDirectoryNamesThePath) {
  TempDir dir;
  CompiledSpec compiled = CompileTestSpec();
  const std::string path = dir.File("no/such/dir/model.pt");
  try {
    WriteModelFile(path, compiled.module, TestManifest());
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot write the model: No such file or directory");
  }
}

TEST(ModelFile, WriteReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.File("model.pt");
  WriteText(path, "old contents");
  CompiledSpec compiled = CompileTestSpec();
  WriteModelFile(path, compiled.module, TestManifest());
  EXPECT_TRUE(ReadModelFile(path, torch::kCPU).manifest.has_value());
}

TEST(ReadJsonFile, ReadsAValidFile) {
  TempDir dir;
  const std::string path = dir.File("spec.json");
  WriteText(path, kSpec);
  EXPECT_EQ(ReadJsonFile(path), json::parse(kSpec));
}

TEST(ReadJsonFile, SyntaxErrorNamesPathLineAndColumn) {
  TempDir dir;
  const std::string path = dir.File("bad.json");
  // The second comma is on line 3, column 13.
  WriteText(path, "{\n  \"layers\": [\n    \"relu\", ,\n  ]\n}\n");
  std::string message = SpecErrorOfJsonFile(path);
  const std::string prefix = path + ":3:13: syntax error";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(ReadJsonFile, SyntaxErrorOnFirstLineCountsColumnsFromOne) {
  TempDir dir;
  const std::string path = dir.File("bad1.json");
  WriteText(path, "{\"a\": x}");
  std::string message = SpecErrorOfJsonFile(path);
  const std::string prefix = path + ":1:7: syntax error";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

TEST(ReadJsonFile, MissingFileNamesThePath) {
  TempDir dir;
  const std::string path = dir.File("absent.json");
  EXPECT_EQ(SpecErrorOfJsonFile(path), path + ": No such file or directory");
}

}  // namespace
}  // namespace sparktorch
