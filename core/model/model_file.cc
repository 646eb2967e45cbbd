#include "core/model/model_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/script.h>
#include <torch/version.h>

#include "core/data/output_file.h"
#include "formats/error.h"

namespace sparktorch {

namespace {

ModelFile ReadModel(std::istream& in, const std::string& path, c10::Device device) {
  torch::jit::ExtraFilesMap extra{{kManifestFileName, ""}, {kOptimizerStateFileName, ""}};
  ModelFile file;
  try {
    file.module = torch::jit::load(in, device, extra);
  } catch (const c10::Error& e) {
    std::string why = e.what_without_backtrace();
    throw ModelError(path + ": not a TorchScript model file (" + why.substr(0, why.find('\n')) +
                     "); save one with torch.jit.script(net).save(path)");
  } catch (const torch::jit::ErrorReport& e) {
    // The file's TorchScript code is compiled against this LibTorch's operators when it loads:
    // a model scripted by a newer PyTorch may call one this LibTorch lacks (nn.RMSNorm, new in
    // 2.4, calls aten::rms_norm). The report's first line names it; the rest quotes the code.
    std::string why = e.what();
    why.erase(0, why.find_first_not_of('\n'));
    throw ModelError(path + ": its TorchScript code does not compile with LibTorch " TORCH_VERSION
                     " (" + why.substr(0, why.find('\n')) +
                     "); a model scripted by a newer PyTorch may call operators it lacks");
  }
  file.optimizer_state = extra[kOptimizerStateFileName];
  const std::string& text = extra[kManifestFileName];
  if (!text.empty()) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw ModelError(path + ": the embedded " + std::string(kManifestFileName) +
                       " is not JSON: " + e.what());
    }
    try {
      file.manifest = ManifestFromJson(j);
    } catch (const ModelError& e) {
      throw ModelError(path + ": " + e.what());
    }
  }
  return file;
}

}  // namespace

ModelFile ReadModelFile(const std::string& path, c10::Device device) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path + ": " + std::strerror(errno));
  return ReadModel(in, path, device);
}

ModelFile ReadModelBytes(const std::string& bytes, const std::string& name, c10::Device device) {
  std::istringstream in(bytes);
  return ReadModel(in, name, device);
}

std::string SerializeModel(const torch::jit::Module& module, const Manifest& manifest,
                           const std::string& optimizer_state) {
  std::ostringstream out(std::ios::binary);
  torch::jit::ExtraFilesMap extra{{kManifestFileName, ManifestToJson(manifest).dump(2)}};
  if (!optimizer_state.empty()) extra[kOptimizerStateFileName] = optimizer_state;
  module.save(out, extra);
  return std::move(out).str();
}

void WriteModelFile(const std::string& path, const torch::jit::Module& module,
                    const Manifest& manifest, const std::string& optimizer_state) {
  const std::string why = WriteOutputFile(path, SerializeModel(module, manifest, optimizer_state));
  if (!why.empty()) throw Error(path + ": cannot write the model: " + why);
}

nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into a line and column.
    std::string s = text.str();
    size_t offset = std::min<size_t>(e.byte, s.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < offset; ++i) {
      if (s[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    auto pos = what.find("syntax error");
    throw SpecError(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                    (pos == std::string::npos ? what : what.substr(pos)));
  }
}

}  // namespace sparktorch
