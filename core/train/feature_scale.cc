#include "core/train/feature_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <torch/torch.h>

namespace sparktorch {

double FeatureScale::Rms() const { return values > 0 ? std::sqrt(sum_squares / values) : 0; }

FeatureScale MeasureFeatureScale(const at::Tensor& features) {
  FeatureScale scale;
  if (!features.defined() || features.numel() == 0) return scale;
  // One pass in double, without a temporary the size of the rows (60,000 rows of 784 features
  // would take 188 MB for their squares).
  const at::Tensor f = features.to(torch::kCPU, torch::kFloat).contiguous();
  const float* v = f.data_ptr<float>();
  const int64_t n = f.numel();
  double sum = 0, max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = v[i];
    sum += x * x;
    max_abs = std::max(max_abs, std::abs(x));
  }
  scale.values = static_cast<double>(n);
  scale.sum_squares = sum;
  scale.max_abs = max_abs;
  return scale;
}

bool SpecTakesFeaturesAsTheyAre(const nlohmann::json& spec) {
  const auto layers = spec.find("layers");
  if (layers == spec.end() || !layers->is_array()) return false;
  bool first = true;
  for (const nlohmann::json& layer : *layers) {
    // A layer is {"type": ...} or, without options, its type alone ("relu").
    const std::string type = layer.is_string() ? layer.get<std::string>()
                             : layer.is_object() ? layer.value("type", "")
                                                 : "";
    if (type == "embedding") return false;
    if (!first || type == "reshape" || type == "flatten") continue;
    if (type == "batch_norm1d" || type == "batch_norm2d" || type == "layer_norm") return false;
    first = false;
  }
  return true;
}

std::string UnscaledFeaturesWarning(const FeatureScale& scale, const std::string& where) {
  const double rms = scale.Rms();
  if (!(rms > kMaxFeatureRms)) return "";
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "root mean square %.3g, largest |value| %.3g", rms,
                scale.max_abs);
  return where + ": features far from unit scale (" + numbers +
         "): hogwild's gradients, computed on weights an update or more old, then throw the model "
         "far off, and the accuracy a run ends with varies widely from run to run; scale the "
         "features to about [-1, 1] (pixels 0-255: divide by 255; Spark ML: StandardScaler or "
         "MinMaxScaler) and predict with rows scaled alike, or train synchronously";
}

}  // namespace sparktorch
