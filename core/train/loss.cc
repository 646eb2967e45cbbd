#include "core/train/loss.h"

#include <cmath>

#include <torch/torch.h>

#include "core/model/spec_fields.h"
#include "formats/error.h"

namespace sparktorch {

namespace F = torch::nn::functional;

Loss Loss::FromSpec(const nlohmann::json& spec) {
  Loss loss;
  loss.name_ = SpecType(spec, "loss");
  static const nlohmann::json kNoFields = nlohmann::json::object();
  SpecFields fields(spec.is_object() ? spec : kNoFields, "loss (" + loss.name_ + ")");
  if (loss.name_ == "cross_entropy") {
    loss.label_smoothing_ = fields.Number("label_smoothing", 0.0, 0.0, 1.0);
    loss.weight_ = fields.Numbers("weight", 0.0);
  } else if (loss.name_ == "nll") {
    loss.weight_ = fields.Numbers("weight", 0.0);
  } else if (loss.name_ == "bce_with_logits") {
    loss.pos_weight_ = fields.Numbers("pos_weight", 0.0);
  } else if (loss.name_ == "smooth_l1") {
    loss.beta_ = fields.Number("beta", 1.0, 0.0, 1e30);
  } else if (loss.name_ != "mse" && loss.name_ != "l1" && loss.name_ != "bce") {
    throw SpecError("loss: unknown type \"" + loss.name_ +
                    "\"; known: cross_entropy, nll, mse, l1, smooth_l1, bce, bce_with_logits");
  }
  fields.Done();
  return loss;
}

nlohmann::json Loss::ToJson() const {
  nlohmann::json j = {{"type", name_}};
  if (name_ == "cross_entropy") j["label_smoothing"] = label_smoothing_;
  if (name_ == "smooth_l1") j["beta"] = beta_;
  if (!weight_.empty()) j["weight"] = weight_;
  if (!pos_weight_.empty()) j["pos_weight"] = pos_weight_;
  return j;
}

torch::Tensor Loss::Compute(const torch::Tensor& output, const torch::Tensor& target) const {
  auto as_tensor = [&](const std::vector<double>& w) {
    return torch::tensor(w, torch::TensorOptions().dtype(output.scalar_type())).to(output.device());
  };
  if (name_ == "cross_entropy") {
    auto options = F::CrossEntropyFuncOptions().label_smoothing(label_smoothing_);
    if (!weight_.empty()) options.weight(as_tensor(weight_));
    return F::cross_entropy(output, target, options);
  }
  if (name_ == "nll") {
    auto options = F::NLLLossFuncOptions();
    if (!weight_.empty()) options.weight(as_tensor(weight_));
    return F::nll_loss(output, target, options);
  }
  if (name_ == "mse") return F::mse_loss(output, target);
  if (name_ == "l1") return F::l1_loss(output, target);
  if (name_ == "smooth_l1") {
    return F::smooth_l1_loss(output, target, F::SmoothL1LossFuncOptions(), beta_);
  }
  if (name_ == "bce") return F::binary_cross_entropy(output, target);
  auto options = F::BinaryCrossEntropyWithLogitsFuncOptions();
  if (!pos_weight_.empty()) {
    // One weight per output, broadcast over the rows of a [rows, outputs...] batch.
    options.pos_weight(as_tensor(pos_weight_).reshape(output.dim() > 1 ? output.sizes().slice(1) : output.sizes()));
  }
  return F::binary_cross_entropy_with_logits(output, target, options);
}

std::string Loss::CheckWeights(const std::vector<int64_t>& output_shape) const {
  int64_t outputs = 1;
  for (int64_t d : output_shape) outputs *= d;
  const int64_t classes = output_shape.empty() ? 1 : output_shape[0];
  if (!weight_.empty() && static_cast<int64_t>(weight_.size()) != classes) {
    return "loss (" + name_ + "): \"weight\" has " + std::to_string(weight_.size()) +
           " numbers for " + std::to_string(classes) + " classes";
  }
  if (!pos_weight_.empty() && static_cast<int64_t>(pos_weight_.size()) != outputs) {
    return "loss (" + name_ + "): \"pos_weight\" has " + std::to_string(pos_weight_.size()) +
           " numbers for " + std::to_string(outputs) + " outputs";
  }
  return "";
}

std::string Loss::CheckLabel(const std::vector<float>& label,
                             const std::vector<int64_t>& output_shape) const {
  int64_t outputs = 1;
  for (int64_t d : output_shape) outputs *= d;
  if (takes_class_index()) {
    int64_t classes = output_shape.empty() ? 1 : output_shape[0];
    if (label.size() != 1) {
      return "expected one class index as the label for " + name_ + ", got " +
             std::to_string(label.size()) + " values";
    }
    float c = label[0];
    if (!(c >= 0 && c < static_cast<float>(classes)) || c != std::floor(c)) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%g", c);
      return std::string("label ") + shown + " is not a class index 0.." +
             std::to_string(classes - 1) + " (" + name_ + " over " + std::to_string(classes) +
             " outputs)";
    }
    return "";
  }
  if (static_cast<int64_t>(label.size()) != outputs) {
    return "expected a label of " + std::to_string(outputs) + " value" +
           (outputs == 1 ? "" : "s") + " (the model's outputs per row), got " +
           std::to_string(label.size());
  }
  if (name_ == "bce" || name_ == "bce_with_logits") {
    for (float v : label) {
      if (!(v >= 0 && v <= 1)) {
        char shown[32];
        std::snprintf(shown, sizeof shown, "%g", v);
        return std::string("label value ") + shown + " is outside [0, 1] (" + name_ + ")";
      }
    }
  }
  return "";
}

}  // namespace sparktorch
