#ifndef SPARKTORCH_CORE_TRAIN_LOSS_H_
#define SPARKTORCH_CORE_TRAIN_LOSS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

namespace sparktorch {

// A loss function from a spec: "cross_entropy" or {"type": "cross_entropy", "label_smoothing":
// 0.1}. Known: cross_entropy (label_smoothing, weight), nll (weight), mse, l1, smooth_l1 (beta),
// bce, bce_with_logits (pos_weight), with torch.nn's meanings: `weight` one number per class
// (imbalanced classes), `pos_weight` one per output (the weight of a positive target).
class Loss {
 public:
  // Throws SpecError naming the field at fault.
  static Loss FromSpec(const nlohmann::json& spec);

  const std::string& name() const { return name_; }
  // The spec with every option spelled out, for the manifest.
  nlohmann::json ToJson() const;

  // cross_entropy and nll take a class index per row; the others a target shaped like the
  // output.
  bool takes_class_index() const { return name_ == "cross_entropy" || name_ == "nll"; }

  // The mean loss over the batch. `target` is a int64 class index per row (takes_class_index)
  // or a float tensor shaped like `output`.
  torch::Tensor Compute(const torch::Tensor& output, const torch::Tensor& target) const;

  // Checks one row's label against what this loss and a model with `output_shape` per row
  // accept. Returns an empty string when fine, else what is wrong ("label 10 is not a class
  // index 0..9 (cross_entropy over 10 outputs)").
  std::string CheckLabel(const std::vector<float>& label,
                         const std::vector<int64_t>& output_shape) const;

  // Checks the weights against a model with `output_shape` per row. Returns an empty string
  // when fine, else what is wrong ("loss (cross_entropy): \"weight\" has 3 numbers for 10 classes").
  std::string CheckWeights(const std::vector<int64_t>& output_shape) const;

 private:
  std::string name_;
  double label_smoothing_ = 0;  // cross_entropy
  double beta_ = 1.0;           // smooth_l1
  std::vector<double> weight_;      // cross_entropy, nll: per class; empty: none
  std::vector<double> pos_weight_;  // bce_with_logits: per output; empty: none
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_LOSS_H_
