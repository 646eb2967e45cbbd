#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/jobs/inspect_job.h"

namespace sparktorch {
namespace {

struct InspectFlags {
  std::string model_path;
  bool json = false;
};

// A number of an epoch's object with `digits` after the point, or "-" when it has none.
std::string Cell(const nlohmann::json& epoch, const char* key, int digits) {
  auto it = epoch.find(key);
  if (it == epoch.end() || !it->is_number()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, it->get<double>());
  return text;
}

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
    return;
  }
  // The history, an object per epoch, reads better as a table than as JSON.
  nlohmann::json manifest = info["manifest"];
  const nlohmann::json history = manifest.value("history", nlohmann::json::array());
  manifest.erase("history");
  std::printf("manifest:\n%s\n", manifest.dump(2).c_str());
  if (!history.is_array() || history.empty()) return;
  std::printf("history:\n%-6s %-8s %-10s %-10s %-10s %-10s %-10s %s\n", "epoch", "rows", "loss",
              "accuracy", "val_loss", "val_acc", "seconds", "samples/s");
  for (const auto& e : history) {
    std::printf("%-6s %-8s %-10s %-10s %-10s %-10s %-10s %s\n", Cell(e, "epoch", 0).c_str(),
                Cell(e, "rows", 0).c_str(), Cell(e, "train_loss", 4).c_str(),
                Cell(e, "train_accuracy", 4).c_str(), Cell(e, "validation_loss", 4).c_str(),
                Cell(e, "validation_accuracy", 4).c_str(), Cell(e, "seconds", 2).c_str(),
                Cell(e, "samples_per_second", 0).c_str());
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
