#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/failure.h"
#include "core/jobs/inspect_job.h"

namespace sparktorch {
namespace {

struct InspectFlags {
  std::string model_path;
  bool json = false;
  // Parquet inputs: the flags of train and predict that say which columns to read.
  std::string format;
  RowOptions rows;
  bool allow_nan = false;
};

// Files listed one per line in the text form; the rest are counted.
constexpr size_t kFilesListed = 10;

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

void PrintParquet(const nlohmann::json& info) {
  const nlohmann::json& files = info["files"];
  std::printf("parquet: %zu file%s, %lld rows\n", files.size(), files.size() == 1 ? "" : "s",
              static_cast<long long>(info["rows"].get<int64_t>()));
  for (size_t i = 0; i < files.size() && i < kFilesListed; ++i) {
    const nlohmann::json& f = files[i];
    std::string codecs;
    for (const auto& c : f["codecs"]) codecs += (codecs.empty() ? "" : ", ") + c.get<std::string>();
    const int64_t groups = f["row_groups"].get<int64_t>();
    std::printf("  %s: %lld rows, %lld row group%s, %s\n", f["path"].get<std::string>().c_str(),
                static_cast<long long>(f["rows"].get<int64_t>()), static_cast<long long>(groups),
                groups == 1 ? "" : "s", codecs.c_str());
  }
  if (files.size() > kFilesListed) std::printf("  ... and %zu more\n", files.size() - kFilesListed);
  for (const auto& c : info["columns"]) {
    std::printf("%-9s %s (%s)\n", (c["role"].get<std::string>() + ":").c_str(),
                c["name"].get<std::string>().c_str(), c["kind"].get<std::string>().c_str());
  }
  if (info["num_features"].get<int64_t>() > 0) {
    std::printf("features per row: %lld\n",
                static_cast<long long>(info["num_features"].get<int64_t>()));
  } else {
    std::printf("features per row: unknown (no good row among the first read)\n");
  }
  if (!info["first_bad_row"].is_null()) {
    std::printf("first bad row: %s\n", info["first_bad_row"].get<std::string>().c_str());
  }
  std::printf("sparktorch reads these rows (--format parquet)\n");
}

// The model's or the Parquet inputs' description, and how to print it as text.
std::pair<nlohmann::json, void (*)(const nlohmann::json&)> Inspect(const InspectFlags& f) {
  if (f.rows.inputs.empty()) {
    if (f.model_path.empty()) {
      throw FlagError("inspect needs a model file, or Parquet files with --format parquet "
                       "--input");
    }
    return {InspectModel(f.model_path), Print};
  }
  if (!f.model_path.empty()) {
    throw FlagError("inspect shows a model or Parquet files (--input), not both");
  }
  if (f.format != "parquet") {
    throw FlagError("inspect --input reads Parquet files: give --format parquet (other "
                     "formats have no footer to describe)");
  }
  RowOptions rows = f.rows;
  if (f.allow_nan) rows.allow_nan = true;
  return {InspectParquet(rows), PrintParquet};
}

void Run(const InspectFlags& f) {
  auto [info, print] = Inspect(f);
  if (f.json) {
    std::printf("%s\n", info.dump(2).c_str());
  } else {
    print(info);
  }
}

}  // namespace

void SetupInspectCommand(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* c = app.add_subcommand(
      "inspect", "Show a model's tensors and manifest, or what sparktorch reads of Parquet files");
  c->add_option("model", flags->model_path, "Model file (.pt)");
  c->add_flag("--json", flags->json, "Print one JSON object instead of text");
  RowOptions& rows = flags->rows;
  c->add_option("--input,-i", rows.inputs, "Parquet files or directories of part files")
      ->group("Parquet");
  c->add_option("--format", flags->format, "parquet (with --input)")->group("Parquet");
  c->add_option("--features-field", rows.features_field,
                "Feature column(s), comma-separated (default features)")
      ->group("Parquet");
  c->add_option("--label-field", rows.label_field, "Label column (default label)")
      ->group("Parquet");
  c->add_flag("--no-label", rows.no_label, "Read no label column")->group("Parquet");
  c->add_option("--id-field", rows.id_field, "Id column (default: none)")->group("Parquet");
  c->add_option("--num-features", rows.num_features, "Features a row must have (default: any)")
      ->check(CLI::PositiveNumber)
      ->group("Parquet");
  c->add_flag("--allow-nan", flags->allow_nan, "Accept NaN and Inf values")->group("Parquet");
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
