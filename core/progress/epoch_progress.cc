#include "core/progress/epoch_progress.h"

#include <cstdint>
#include <cstdio>
#include <limits>

namespace sparktorch {

const std::vector<std::string>& MetricNames() {
  static const std::vector<std::string> kNames = {"top5_accuracy", "precision", "recall", "auc",
                                                  "mse", "mae", "r2"};
  return kNames;
}
namespace {

std::string Fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::optional<double> Number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::string ProgressLine(const EpochProgress& p) {
  std::string line = "epoch " + std::to_string(p.epoch);
  if (p.epochs > 0) line += "/" + std::to_string(p.epochs);
  line += ": loss " + Fixed(p.train_loss, 4);
  if (p.train_accuracy) line += " accuracy " + Fixed(*p.train_accuracy, 4);
  for (const auto& [name, value] : p.train_metrics) line += " " + name + " " + Fixed(value, 4);
  if (p.validation_loss) line += " val_loss " + Fixed(*p.validation_loss, 4);
  if (p.validation_accuracy) line += " val_accuracy " + Fixed(*p.validation_accuracy, 4);
  for (const auto& [name, value] : p.validation_metrics) line += " val_" + name + " " + Fixed(value, 4);
  line += " | ";
  if (p.workers > 0) line += std::to_string(p.workers) + (p.workers == 1 ? " worker, " : " workers, ");
  line += std::to_string(static_cast<int64_t>(p.samples_per_second)) + " samples/s, " +
          Fixed(p.elapsed, 1) + " s elapsed";
  if (p.epochs > p.epoch && p.epoch > 0) {
    line += ", ETA " + Fixed(p.elapsed / p.epoch * (p.epochs - p.epoch), 1) + " s";
  }
  return line;
}

std::optional<EpochProgress> EpochProgressFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto epoch = j.find("epoch");
  if (epoch == j.end() || !epoch->is_number_integer() || epoch->get<int64_t>() < 1 ||
      epoch->get<int64_t>() > 1000000000) {
    return std::nullopt;
  }
  // A loss over no rows is NaN, which JSON writes as null.
  auto train_loss = j.find("train_loss");
  if (train_loss == j.end() || !(train_loss->is_number() || train_loss->is_null())) return std::nullopt;
  std::optional<double> loss =
      train_loss->is_null() ? std::numeric_limits<double>::quiet_NaN() : train_loss->get<double>();
  EpochProgress p;
  p.epoch = epoch->get<int>();
  p.train_loss = *loss;
  auto epochs = j.find("epochs");
  if (epochs != j.end() && epochs->is_number_integer() && epochs->get<int64_t>() > 0 &&
      epochs->get<int64_t>() <= 1000000000) {
    p.epochs = epochs->get<int>();
  }
  p.train_accuracy = Number(j, "train_accuracy");
  p.validation_loss = Number(j, "validation_loss");
  p.validation_accuracy = Number(j, "validation_accuracy");
  for (const std::string& name : MetricNames()) {
    if (auto v = Number(j, ("train_" + name).c_str())) p.train_metrics.emplace_back(name, *v);
    if (auto v = Number(j, ("validation_" + name).c_str())) p.validation_metrics.emplace_back(name, *v);
  }
  p.samples_per_second = Number(j, "samples_per_second").value_or(0);
  p.elapsed = Number(j, "elapsed").value_or(0);
  return p;
}

}  // namespace sparktorch
