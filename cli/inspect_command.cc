#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "core/jobs/inspect_job.h"

namespace sparktorch {
namespace {

struct InspectFlags {
  std::string model_path;
  bool json = false;
};

void Print(const nlohmann::json& info) {
  std::printf("model: %s\n", info["model"].get<std::string>().c_str());
  std::printf("%-32s %-10s %-20s %s\n", "tensor", "kind", "shape", "values");
  for (const auto& t : info["tensors"]) {
    std::printf("%-32s %-10s %-20s %lld\n", t["name"].get<std::string>().c_str(),
                t["kind"].get<std::string>().c_str(), t["shape"].dump().c_str(),
                static_cast<long long>(t["count"].get<int64_t>()));
  }
  std::printf("trainable parameters: %lld\n",
              static_cast<long long>(info["parameters"].get<int64_t>()));
  if (info["manifest"].is_null()) {
    std::printf("manifest: none (a TorchScript model that sparktorch did not train)\n");
  } else {
    std::printf("manifest:\n%s\n", info["manifest"].dump(2).c_str());
  }
}

}  // namespace

void SetupInspectCommand(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* c = app.add_subcommand("inspect", "Show a model's tensors and manifest");
  c->add_option("model", flags->model_path, "Model file (.pt)")->required();
  c->add_flag("--json", flags->json, "Print one JSON object instead of text");
  c->callback([flags] {
    nlohmann::json info = InspectModel(flags->model_path);
    if (flags->json) {
      std::printf("%s\n", info.dump(2).c_str());
    } else {
      Print(info);
    }
  });
}

}  // namespace sparktorch
